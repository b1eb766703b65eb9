//! Rewrites: a new base written while serving and journaling go on, then the log
//! segments it covers deleted.

use super::*;

impl Cache {
    /// BGREWRITEAOF: writes a new base on a thread of its own while serving goes on.
    pub fn bgrewriteaof(
        self: &Arc<Self>,
        now_ms: impl Fn() -> u64 + Copy + Send + 'static,
    ) -> Result<(), AofError> {
        if !self.aof.enabled() {
            return Err(AofError::Off);
        }
        self.begin_rewrite()?;
        let cache = Arc::clone(self);
        std::thread::Builder::new()
            .name("quiver-aof-rewrite".into())
            .spawn(move || {
                if let Err(error) = cache.rewrite(now_ms) {
                    tracing::error!(%error, "append-only file rewrite failed");
                }
            })
            .map(drop)
            .map_err(|e| {
                self.aof.state().started = None;
                AofError::Log {
                    path: self.aof_dir(),
                    message: format!("cannot start the rewrite thread: {e}"),
                }
            })
    }

    /// Writes a new base now, returning once it is on disk.
    pub fn rewrite_now(self: &Arc<Self>, now_ms: impl Fn() -> u64) -> Result<(), AofError> {
        self.begin_rewrite()?;
        self.rewrite(now_ms)
    }

    fn begin_rewrite(&self) -> Result<(), AofError> {
        let mut s = self.aof.state();
        if s.started.is_some() {
            return Err(AofError::InProgress);
        }
        s.started = Some(Instant::now());
        Ok(())
    }

    /// Writes a base covering the log up to its end now, then deletes the segments it
    /// covers. A journal that failed is replaced by a fresh one first: the new base covers
    /// everything in memory, so writes may resume.
    fn rewrite(self: &Arc<Self>, now_ms: impl Fn() -> u64) -> Result<(), AofError> {
        let started = Instant::now();
        let result = self.rewrite_inner(now_ms);
        let log_size = self.aof.journal().map_or(0, |j| j.log.size_bytes());
        let mut s = self.aof.state();
        s.started = None;
        s.last_rewrite_time_s = started.elapsed().as_secs() as i64;
        s.last_rewrite_ok = result.is_ok();
        match &result {
            Ok(stats) => {
                s.rewrites += 1;
                s.base_file_bytes = stats.bytes;
                s.base_size = stats.bytes + log_size;
                s.failed_at = None;
            }
            Err(_) => s.failed_at = Some(Instant::now()),
        }
        result.map(drop)
    }

    fn rewrite_inner(
        self: &Arc<Self>,
        now_ms: impl Fn() -> u64,
    ) -> Result<SnapshotStats, AofError> {
        let (journal, offset, reopened) = {
            let _order = self.lock_delivery();
            let mut slot = self
                .aof
                .journal
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let Some(current) = slot.clone() else {
                return Err(AofError::Off);
            };
            let failed = current.failed.load(Ordering::Acquire);
            let reopened = failed || current.refusing.load(Ordering::Acquire);
            if failed {
                // Reopened: recovery keeps what reached the file. Clients' writes are
                // refused until the base written next, which covers everything in
                // memory, is in place; what changes meanwhile (a script, an eviction)
                // is journaled after the base's offset as usual.
                current.stop();
                let _ = current.log.close();
                let fresh = Journal::open(&current.path, true)?;
                fresh.refusing.store(true, Ordering::Release);
                spawn_syncer(&fresh, Arc::clone(&self.aof.fsync));
                *slot = Some(Arc::clone(&fresh));
            }
            let journal = slot.clone().expect("set above");
            let offset = journal.drain();
            (journal, offset, reopened)
        };
        // Every record below the base's offset is on disk before the base says so.
        journal.log.sync_appended().map_err(|e| {
            journal.fail("fsync", &e);
            AofError::Log {
                path: journal.path.clone(),
                message: e.to_string(),
            }
        })?;
        // Beside the log, even if `dir` changed since it was opened.
        let base = journal
            .path
            .parent()
            .unwrap_or(Path::new("."))
            .join(BASE_FILE);
        let stats = crate::cache::persist::write_file(
            self,
            &base,
            now_ms(),
            quiver_cache::rdb::Consistency::PerShard,
            Some(offset),
        )?;
        journal
            .log
            .delete_before(offset)
            .map_err(|e| AofError::Log {
                path: journal.path.clone(),
                message: e.to_string(),
            })?;
        if reopened {
            journal.refusing.store(false, Ordering::Release);
        }
        Ok(stats)
    }

    /// Starts a rewrite when the log grew past `auto-aof-rewrite-percentage` of its size
    /// after the last one (and past the minimum size), or one was scheduled; called
    /// periodically.
    pub(in crate::cache) fn rewrite_if_due(
        self: &Arc<Self>,
        now_ms: impl Fn() -> u64 + Copy + Send + 'static,
    ) {
        let Some(journal) = self.aof.journal() else {
            return;
        };
        let due = {
            let mut s = self.aof.state();
            if s.started.is_some() {
                return;
            }
            let (percentage, min_size) = self.aof.auto_rewrite();
            let size = s.base_file_bytes + journal.log.size_bytes();
            let base = s.base_size.max(1);
            let grown = percentage > 0
                && size >= min_size
                && (size.saturating_mul(100) / base).saturating_sub(100) >= percentage;
            let may_retry = s
                .failed_at
                .is_none_or(|at| at.elapsed() >= Duration::from_secs(5));
            let failed =
                journal.failed.load(Ordering::Acquire) || journal.refusing.load(Ordering::Acquire);
            std::mem::take(&mut s.scheduled) || (may_retry && (grown || failed))
        };
        if due {
            let _ = self.bgrewriteaof(now_ms);
        }
    }
}
