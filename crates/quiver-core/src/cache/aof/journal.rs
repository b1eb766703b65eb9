//! The journal: the log of key states, the queue of records waiting for it, and the
//! thread that fsyncs it.

use super::*;

/// An open journal: the log and its fsync thread.
pub(super) struct Journal {
    pub(super) log: Log,
    pub(super) path: PathBuf,
    /// Records journaled, not yet appended to the log: they go in one batch when a
    /// connection is about to reply (or the fsync thread wakes), not one per command.
    pub(super) pending: Mutex<Vec<Vec<u8>>>,
    /// Offset after the last record appended.
    pub(super) appended: AtomicU64,
    /// Offset below which records are written to the file.
    pub(super) written: AtomicU64,
    /// Offset below which records are fsynced; `always` waiters watch it.
    pub(super) synced: tokio::sync::watch::Sender<u64>,
    pub(super) failed: AtomicBool,
    pub(super) fsyncs: AtomicU64,
    /// The fsync thread is to sync once more and end.
    pub(super) stopping: AtomicBool,
    /// Reopened after a failure: writes are refused until a base covers memory.
    pub(super) refusing: AtomicBool,
    pub(super) wake: (Mutex<bool>, Condvar),
    pub(super) syncer: Mutex<Option<JoinHandle<()>>>,
}

impl Journal {
    pub(super) fn open(path: &Path, recover: bool) -> Result<Arc<Journal>, AofError> {
        let config = LogConfig {
            durability: Durability::Buffered,
            segment_max_bytes: SEGMENT_BYTES,
            recovery: if recover {
                RecoveryMode::Salvage
            } else {
                RecoveryMode::Strict
            },
            ..LogConfig::default()
        };
        let log = Log::open(path, config).map_err(|e| AofError::Log {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let end = log.next_offset();
        Ok(Arc::new(Journal {
            log,
            path: path.to_owned(),
            pending: Mutex::new(Vec::new()),
            appended: AtomicU64::new(end),
            written: AtomicU64::new(end),
            synced: tokio::sync::watch::Sender::new(end),
            failed: AtomicBool::new(false),
            fsyncs: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            refusing: AtomicBool::new(false),
            wake: (Mutex::new(false), Condvar::new()),
            syncer: Mutex::new(None),
        }))
    }

    pub(super) fn fail(&self, what: &str, error: impl std::fmt::Display) {
        if !self.failed.swap(true, Ordering::AcqRel) {
            tracing::error!(%error, path = %self.path.display(), "append-only log {what} failed: writes are refused until a rewrite succeeds");
        }
        // Wakes the waiters so they see the failure.
        self.synced.send_modify(|_| {});
    }

    /// Queues records for the next batch (called under the delivery lock, in order).
    pub(super) fn queue(&self, records: Vec<Vec<u8>>) {
        if !records.is_empty() {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(records);
        }
    }

    /// Appends the pending records to the log as one batch; the offset after them.
    pub(super) fn drain(&self) -> u64 {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !pending.is_empty() && !self.failed.load(Ordering::Acquire) {
            let values: Vec<&[u8]> = pending.iter().map(Vec::as_slice).collect();
            match self.log.append_batch(&values) {
                Ok(range) => self.appended.store(range.end, Ordering::Release),
                Err(e) => self.fail("append", e),
            }
        }
        pending.clear();
        self.appended.load(Ordering::Acquire)
    }

    /// Makes everything appended durable (fsync); the fsync thread's work.
    pub(super) fn sync(&self) {
        if self.failed.load(Ordering::Acquire) {
            return;
        }
        match self.log.sync_appended() {
            Ok(end) => {
                self.fsyncs.fetch_add(1, Ordering::Relaxed);
                self.written.fetch_max(end, Ordering::AcqRel);
                self.synced.send_if_modified(|d| {
                    let moved = end > *d;
                    *d = (*d).max(end);
                    moved
                });
            }
            Err(e) => self.fail("fsync", e),
        }
    }

    /// Writes what is buffered to the file (no fsync).
    pub(super) fn write_out(&self, target: u64) {
        if self.failed.load(Ordering::Acquire) {
            return;
        }
        match self.log.flush() {
            Ok(()) => {
                self.written.fetch_max(target, Ordering::AcqRel);
            }
            Err(e) => self.fail("write", e),
        }
    }

    pub(super) fn poke(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        cv.notify_one();
    }

    pub(super) fn stop(&self) {
        let handle = self
            .syncer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            self.stopping.store(true, Ordering::Release);
            self.poke();
            let _ = handle.join();
        }
    }
}

/// Starts the journal's fsync thread: on demand under `always`, once a second under
/// `everysec`; under `no` it only writes out, once a second, what no client flushed.
pub(super) fn spawn_syncer(journal: &Arc<Journal>, fsync: Arc<AtomicU8>) {
    let weak = Arc::downgrade(journal);
    let handle = std::thread::Builder::new()
        .name("quiver-aof-fsync".into())
        .spawn(move || {
            let mut last = Instant::now();
            loop {
                let Some(journal) = weak.upgrade() else {
                    return;
                };
                let mode = AppendFsync::from_u8(fsync.load(Ordering::Relaxed));
                {
                    let (lock, cv) = &journal.wake;
                    let mut woken = lock.lock().unwrap_or_else(PoisonError::into_inner);
                    if !*woken {
                        let wait = match mode {
                            AppendFsync::Always => Duration::from_millis(100),
                            _ => Duration::from_secs(1).saturating_sub(last.elapsed()),
                        };
                        let wait = wait.max(Duration::from_millis(1));
                        woken = cv
                            .wait_timeout(woken, wait)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                    *woken = false;
                }
                if journal.stopping.load(Ordering::Acquire) {
                    journal.drain();
                    journal.sync();
                    return;
                }
                let mode = AppendFsync::from_u8(fsync.load(Ordering::Relaxed));
                let due = mode == AppendFsync::Always || last.elapsed() >= Duration::from_secs(1);
                if !due {
                    continue;
                }
                last = Instant::now();
                // Records no client waits for (active expiry's) reach the file too.
                let end = journal.drain();
                match mode {
                    AppendFsync::No if end > journal.written.load(Ordering::Acquire) => {
                        journal.write_out(end);
                    }
                    AppendFsync::No => {}
                    _ if end > *journal.synced.borrow() => journal.sync(),
                    _ => {}
                }
            }
        })
        .ok();
    *journal
        .syncer
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = handle;
}
