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

    /// Appends the pending records to the log, in as few batches as the log's batch limit
    /// allows, a record larger than [`PART_BYTES`] as parts (see [`split`]); the offset
    /// after them.
    pub(super) fn drain(&self) -> u64 {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !pending.is_empty() && !self.failed.load(Ordering::Acquire) {
            let parts = split(&pending);
            for batch in batches(&parts) {
                match self.log.append_batch(&batch) {
                    Ok(range) => self.appended.store(range.end, Ordering::Release),
                    Err(e) => {
                        self.fail("append", e);
                        break;
                    }
                }
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

/// The largest record appended whole; a larger one is appended as parts of at most this
/// many bytes each (and its tag), so every batch stays within the log's limit.
pub(super) const PART_BYTES: usize = 4 << 20;
/// The first part of a record too large for one log record: the record is the bytes of
/// the parts from here up to and including the next [`TAG_LAST_PART`].
pub(super) const TAG_FIRST_PART: u8 = b'S';
/// A part between the first and the last.
pub(super) const TAG_PART: u8 = b'P';
/// The last part of a record appended as parts.
pub(super) const TAG_LAST_PART: u8 = b'E';

/// The log records of `records`: each record as it is, or as parts when it is larger than
/// [`PART_BYTES`].
fn split(records: &[Vec<u8>]) -> Vec<std::borrow::Cow<'_, [u8]>> {
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        if record.len() <= PART_BYTES {
            out.push(std::borrow::Cow::Borrowed(record.as_slice()));
            continue;
        }
        let mut chunks = record.chunks(PART_BYTES).enumerate().peekable();
        while let Some((i, chunk)) = chunks.next() {
            let tag = match (i, chunks.peek()) {
                (_, None) => TAG_LAST_PART,
                (0, Some(_)) => TAG_FIRST_PART,
                _ => TAG_PART,
            };
            let mut part = Vec::with_capacity(chunk.len() + 1);
            part.push(tag);
            part.extend_from_slice(chunk);
            out.push(std::borrow::Cow::Owned(part));
        }
    }
    out
}

/// `records` cut into consecutive batches within the log's batch limit.
fn batches<'a>(records: &'a [std::borrow::Cow<'a, [u8]>]) -> Vec<Vec<&'a [u8]>> {
    let limit = quiver_log::format::MAX_BATCH_PLAIN_BYTES;
    let mut out: Vec<Vec<&[u8]>> = Vec::new();
    let mut bytes = limit;
    for record in records {
        let len = quiver_log::format::record::encoded_len(record, &[]);
        if bytes + len > limit {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += len;
        out.last_mut().expect("pushed above").push(record);
    }
    out
}

/// Joins records appended as parts back together while a log is read.
#[derive(Debug, Default)]
pub(super) struct Parts {
    record: Vec<u8>,
    open: bool,
}

impl Parts {
    /// The record `value` completes, if any: `value` itself, or with [`TAG_LAST_PART`]
    /// the parts joined; none for a first or middle part. Parts that another record (or
    /// another first part) follows are those of an append a crash or an error cut short
    /// (never acknowledged) and are dropped; a middle or last part without a first is
    /// damage.
    pub(super) fn join<'a>(
        &mut self,
        value: &'a [u8],
    ) -> Result<Option<std::borrow::Cow<'a, [u8]>>, String> {
        let tag = value.first().copied();
        if matches!(tag, Some(TAG_FIRST_PART)) || !matches!(tag, Some(TAG_PART | TAG_LAST_PART)) {
            self.drop_open();
        }
        match tag {
            Some(TAG_FIRST_PART) => {
                self.open = true;
                self.record.extend_from_slice(&value[1..]);
                Ok(None)
            }
            Some(TAG_PART | TAG_LAST_PART) if !self.open => {
                Err("a part of a record without its first part".into())
            }
            Some(TAG_PART) => {
                self.record.extend_from_slice(&value[1..]);
                Ok(None)
            }
            Some(TAG_LAST_PART) => {
                self.open = false;
                self.record.extend_from_slice(&value[1..]);
                Ok(Some(std::borrow::Cow::Owned(std::mem::take(
                    &mut self.record,
                ))))
            }
            _ => Ok(Some(std::borrow::Cow::Borrowed(value))),
        }
    }

    /// Whether parts without their last are open (the log ended inside a record).
    pub(super) fn is_open(&self) -> bool {
        self.open
    }

    fn drop_open(&mut self) {
        if std::mem::take(&mut self.open) {
            tracing::warn!(
                bytes = self.record.len(),
                "append-only log: the parts of a record whose append was cut short are skipped"
            );
            self.record.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_records_go_as_parts_in_batches_within_the_limit_and_join_back() {
        let records = vec![
            vec![b'W'; 10],
            (0..PART_BYTES * 4 + 5)
                .map(|i| i as u8)
                .collect::<Vec<u8>>(),
            vec![b'D'; PART_BYTES],
        ];
        let logged = split(&records);
        assert_eq!(logged.len(), 1 + 5 + 1);
        let cut = batches(&logged);
        assert!(cut.len() > 1);
        for batch in &cut {
            let plain: usize = batch
                .iter()
                .map(|r| quiver_log::format::record::encoded_len(r, &[]))
                .sum();
            assert!(plain <= quiver_log::format::MAX_BATCH_PLAIN_BYTES);
        }
        let mut parts = Parts::default();
        let joined: Vec<Vec<u8>> = cut
            .iter()
            .flatten()
            .filter_map(|r| parts.join(r).unwrap().map(|r| r.into_owned()))
            .collect();
        assert_eq!(joined, records);
    }

    #[test]
    fn parts_of_a_cut_short_append_are_skipped_and_a_part_without_a_first_is_damage() {
        let mut parts = Parts::default();
        assert_eq!(parts.join(b"Sabc").unwrap(), None);
        assert_eq!(parts.join(b"Wkey").unwrap().as_deref(), Some(&b"Wkey"[..]));
        // Left open by a crash, then a new record's parts: only the new one is joined.
        assert_eq!(parts.join(b"Sold").unwrap(), None);
        assert!(parts.is_open());
        assert_eq!(parts.join(b"Sx").unwrap(), None);
        assert_eq!(parts.join(b"Py").unwrap(), None);
        assert_eq!(parts.join(b"Ez").unwrap().as_deref(), Some(&b"xyz"[..]));
        assert!(!parts.is_open());
        assert!(parts.join(b"Ez").is_err());
        assert!(parts.join(b"Pz").is_err());
    }
}
