//! `Log`: the public handle. One writer (behind a mutex), many readers, all sharing
//! `Shared` (segment list, committed watermark, counters, poison flag, tail wakeups).

use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use crate::config::{Durability, LogConfig, RecoveryMode};
use crate::durability::{GroupCommit, IntervalSyncer};
use crate::error::{AppendError, OpenError, ReadError, SyncError};
use crate::groups::Groups;
use crate::lock::DirLock;
use crate::read::{Cursor, LogIter, Record, Tail};
use crate::recovery::{self, RecoveryReport};
use crate::segment::Segment;
use crate::segment::sealer::Sealer;
use crate::stats::{Counters, Stats};
use crate::storage::{FileStorage, Storage};
use crate::watermark;
use crate::writer::{NewRecord, RecordSource, Writer, Written};

/// State shared by the writer, readers and background threads.
#[derive(Debug)]
pub struct Shared {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) segments: RwLock<Vec<Arc<Segment>>>,
    /// Offset after the last committed record; readers never go past it.
    pub(crate) committed: AtomicU64,
    pub(crate) counters: Counters,
    pub(crate) group_commit: GroupCommit,
    pub(crate) poisoned: AtomicBool,
    poison_cause: Mutex<Option<String>>,
    tail_lock: Mutex<()>,
    tail_cv: Condvar,
    tail_waiters: AtomicUsize,
}

impl Shared {
    pub(crate) fn new(
        storage: Arc<dyn Storage>,
        segments: Vec<Arc<Segment>>,
        committed: u64,
    ) -> Shared {
        Shared {
            storage,
            segments: RwLock::new(segments),
            committed: AtomicU64::new(committed),
            counters: Counters::default(),
            group_commit: GroupCommit::new(committed),
            poisoned: AtomicBool::new(false),
            poison_cause: Mutex::new(None),
            tail_lock: Mutex::new(()),
            tail_cv: Condvar::new(),
            tail_waiters: AtomicUsize::new(0),
        }
    }

    pub(crate) fn committed_next(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// Makes written data visible to readers and wakes tailing readers.
    pub(crate) fn publish(&self, w: &Written) {
        w.segment.committed_len.fetch_max(w.len, Ordering::AcqRel);
        // SeqCst here and in `wait_beyond`: each side writes one variable, then reads the
        // other's, and only a single total order makes sure one of them sees the other.
        let before = self.committed.fetch_max(w.next_offset, Ordering::SeqCst);
        if before < w.next_offset && self.tail_waiters.load(Ordering::SeqCst) > 0 {
            let _guard = self
                .tail_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.tail_cv.notify_all();
        }
    }

    pub(crate) fn mark_synced(&self, next: u64) {
        self.group_commit.mark_synced(next);
    }

    /// Waits until the committed end passes `offset` or `timeout` passes; true if it did.
    pub(crate) fn wait_beyond(&self, offset: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        self.tail_waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = self
            .tail_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let passed = loop {
            if self.committed.load(Ordering::SeqCst) > offset {
                break true;
            }
            let now = Instant::now();
            if now >= deadline || self.poisoned.load(Ordering::Acquire) {
                break false;
            }
            guard = self
                .tail_cv
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        drop(guard);
        self.tail_waiters.fetch_sub(1, Ordering::AcqRel);
        passed
    }

    /// Poisons the log after a failed write or fsync; returns the error to report.
    pub(crate) fn poison(&self, file: &str, source: io::Error) -> SyncError {
        let cause = format!("{file}: {source}");
        *self
            .poison_cause
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(cause);
        self.poisoned.store(true, Ordering::Release);
        let _guard = self
            .tail_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.tail_cv.notify_all();
        SyncError::Io {
            file: file.to_string(),
            source,
        }
    }

    fn cause(&self) -> String {
        self.poison_cause
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default()
    }

    pub(crate) fn check_poison(&self) -> Result<(), AppendError> {
        self.check_poison_sync().map_err(AppendError::from)
    }

    pub(crate) fn check_poison_sync(&self) -> Result<(), SyncError> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(SyncError::Poisoned {
                cause: self.cause(),
            });
        }
        Ok(())
    }

    pub(crate) fn segments(&self) -> Vec<Arc<Segment>> {
        self.segments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// First offset still stored.
    pub(crate) fn first_offset(&self) -> u64 {
        let segs = self.segments.read().unwrap_or_else(PoisonError::into_inner);
        segs.first().map_or(0, |s| s.base)
    }
}

/// Everything a log handle and its background threads share.
#[derive(Debug)]
pub struct Inner {
    pub(crate) shared: Arc<Shared>,
    pub(crate) writer: Option<Mutex<Writer>>,
    pub(crate) config: LogConfig,
    pub(crate) groups: Mutex<Groups>,
    pub(crate) sealer: Option<Arc<Sealer>>,
    /// Serializes `refresh` of a read-only log (two tails would add a segment twice).
    pub(crate) refreshing: Mutex<()>,
    closed: AtomicBool,
}

impl Inner {
    /// Returns once every record below `target` is durable: sealed segments by the sealer,
    /// the active one by a (shared) fsync.
    pub(crate) fn make_durable(&self, target: u64) -> Result<(), SyncError> {
        self.shared.check_poison_sync()?;
        self.sync_through(target)?;
        // Records below `target` may sit in a segment rotated out before the round that
        // covered them (this caller's or another's) fsynced only the active one: its seal,
        // queued before that round wrote out, is done once the sealer is idle.
        if let Some(sealer) = &self.sealer {
            sealer.wait_idle();
        }
        self.shared.check_poison_sync()
    }
}

/// A segmented append-only log. Share it with `Arc<Log>`: every method takes `&self`;
/// appends from several threads serialize on the writer (and share fsyncs in `Sync`).
pub struct Log {
    inner: Arc<Inner>,
    recovery: RecoveryReport,
    sealer: Option<Arc<Sealer>>,
    _interval: Option<IntervalSyncer>,
    /// The directory lock, released by `close`.
    lock: Mutex<Option<DirLock>>,
}

impl Log {
    /// Opens (or creates) the log in `dir` as its single writer, recovering it first.
    pub fn open(dir: &Path, config: LogConfig) -> Result<Log, OpenError> {
        config.validate()?;
        let io_err = |source| OpenError::Io {
            what: dir.display().to_string(),
            source,
        };
        let storage = FileStorage::new(dir, true).map_err(io_err)?;
        let lock = DirLock::acquire(dir)?;
        let mut log = Log::open_with(Arc::new(storage), config)?;
        log.lock = Mutex::new(Some(lock));
        Ok(log)
    }

    /// Opens the log in `dir` read-only: no lock, no repair, no writes. A torn tail is
    /// treated as the end; a writer in another process may be appending.
    pub fn open_read_only(dir: &Path, config: LogConfig) -> Result<Log, OpenError> {
        config.validate()?;
        let storage = FileStorage::new(dir, false).map_err(|source| OpenError::Io {
            what: dir.display().to_string(),
            source,
        })?;
        Log::open_storage(Arc::new(storage), config, true)
    }

    /// Opens a log on any storage backend as its writer (no cross-process lock).
    pub fn open_with(storage: Arc<dyn Storage>, config: LogConfig) -> Result<Log, OpenError> {
        config.validate()?;
        Log::open_storage(storage, config, false)
    }

    fn open_storage(
        storage: Arc<dyn Storage>,
        config: LogConfig,
        read_only: bool,
    ) -> Result<Log, OpenError> {
        let recovered = recovery::recover(storage.clone(), &config, read_only)?;
        let shared = Arc::new(Shared::new(
            storage.clone(),
            recovered.segments,
            recovered.next_offset,
        ));
        Counters::add(
            &shared.counters.recovery_truncations,
            recovered.report.truncations.len() as u64,
        );
        Counters::add(
            &shared.counters.recovery_truncated_bytes,
            recovered.report.bytes_cut(),
        );
        let sealer = match config.durability {
            Durability::Sync => None,
            _ if read_only => None,
            _ => Some(Arc::new(Sealer::spawn(shared.clone()).map_err(
                |source| OpenError::Io {
                    what: "sealer thread".to_string(),
                    source,
                },
            )?)),
        };
        let writer = match recovered.active {
            Some(active) if !read_only => {
                let mut w = active.into_writer(shared.clone(), config.clone());
                w.sealer = sealer.clone();
                Some(Mutex::new(w))
            }
            _ => None,
        };
        let mut groups = Groups::load(&*storage).map_err(OpenError::Recovery)?;
        let mut report = recovered.report;
        // A read-only open may look at a log its writer is appending to: a group may then
        // be past the end this open recovered, and nothing is wrong.
        if !read_only {
            report.groups_moved_back = groups
                .check_end(
                    &*storage,
                    recovered.next_offset,
                    config.recovery == RecoveryMode::Salvage,
                )
                .map_err(OpenError::Recovery)?;
        }
        let inner = Arc::new(Inner {
            shared,
            writer,
            config: config.clone(),
            groups: Mutex::new(groups),
            sealer: sealer.clone(),
            refreshing: Mutex::new(()),
            closed: AtomicBool::new(false),
        });
        let interval = match config.durability {
            Durability::Interval { interval_ms } if !read_only => {
                Some(IntervalSyncer::spawn(inner.clone(), interval_ms))
            }
            _ => None,
        };
        Ok(Log {
            inner,
            recovery: report,
            sealer,
            _interval: interval,
            lock: Mutex::new(None),
        })
    }

    /// What recovery found and did when this log was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// Appends one record (timestamp from the clock); returns its offset.
    pub fn append(&self, value: &[u8]) -> Result<u64, AppendError> {
        let records: [&[u8]; 1] = [value];
        Ok(self.append_source(&records[..])?.start)
    }

    /// Appends records as one batch; returns their offsets.
    pub fn append_batch(&self, values: &[&[u8]]) -> Result<Range<u64>, AppendError> {
        self.append_source(values)
    }

    /// Appends records with explicit timestamps and headers as one batch.
    pub fn append_records(&self, records: &[NewRecord<'_>]) -> Result<Range<u64>, AppendError> {
        self.append_source(records)
    }

    /// Appends several batches of records, each its own batch with consecutive offsets,
    /// in one go: one writer lock, one write out (`Os`, `Interval`) and, in `Sync` mode,
    /// one fsync covering them all. Returns once all are as durable as the mode promises.
    /// Every batch is checked first: a batch the log refuses appends none of them.
    pub fn append_record_batches(
        &self,
        batches: &[&[NewRecord<'_>]],
    ) -> Result<Vec<Range<u64>>, AppendError> {
        let writer = self.inner.writer.as_ref().ok_or(AppendError::ReadOnly)?;
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(AppendError::Closed);
        }
        if batches.is_empty() {
            return Ok(Vec::new());
        }
        let ranges = writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append_all(batches)?;
        if self.inner.config.durability == Durability::Sync
            && let Some(last) = ranges.last()
        {
            self.inner.sync_through(last.end)?;
        }
        Ok(ranges)
    }

    fn append_source<S: RecordSource + ?Sized>(
        &self,
        records: &S,
    ) -> Result<Range<u64>, AppendError> {
        let writer = self.inner.writer.as_ref().ok_or(AppendError::ReadOnly)?;
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(AppendError::Closed);
        }
        let range = writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append(records)?;
        if self.inner.config.durability == Durability::Sync {
            self.inner.sync_through(range.end)?;
        }
        Ok(range)
    }

    /// Writes the in-process buffer to the OS, making buffered records visible to readers.
    pub fn flush(&self) -> Result<(), SyncError> {
        let Some(writer) = &self.inner.writer else {
            return Ok(());
        };
        if self.inner.config.durability == Durability::Sync {
            return self.sync();
        }
        let w = writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write_out()?;
        self.inner.shared.publish(&w);
        Ok(())
    }

    /// Makes every appended record durable (fsync) and records the committed watermark.
    pub fn sync(&self) -> Result<(), SyncError> {
        let Some(writer) = &self.inner.writer else {
            return Ok(());
        };
        let target = writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next_offset;
        self.inner.make_durable(target)?;
        // What this call made durable: records appended meanwhile may not be.
        watermark::write(&*self.inner.shared.storage, target, self.inner.config.epoch)
            .map_err(|e| self.inner.shared.poison(watermark::WATERMARK_FILE, e))
    }

    /// Makes every record appended so far durable, sharing the fsync with concurrent
    /// callers (group commit), without rewriting the watermark file (which only ever
    /// trails the data): for callers that sync after every few appends. Returns the
    /// offset below which everything is durable.
    pub fn sync_appended(&self) -> Result<u64, SyncError> {
        let Some(writer) = &self.inner.writer else {
            return Ok(self.committed_offset());
        };
        let target = writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next_offset;
        self.inner.make_durable(target)?;
        Ok(target)
    }

    /// Syncs and stops accepting appends, then releases the directory lock (another writer
    /// may open the directory; readers of this handle go on). Dropping a log closes it too
    /// (ignoring errors).
    pub fn close(&self) -> Result<(), SyncError> {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if let Some(writer) = &self.inner.writer {
            writer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .cut_zeros()?;
        }
        let synced = self.sync();
        if let Some(sealer) = &self.sealer {
            sealer.wait_idle();
        }
        self.lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        synced
    }

    /// Offset of the first stored record (0 for an empty log).
    pub fn first_offset(&self) -> u64 {
        self.inner.shared.first_offset()
    }

    /// Offset the next append gets (committed or not).
    pub fn next_offset(&self) -> u64 {
        match &self.inner.writer {
            Some(w) => w.lock().unwrap_or_else(PoisonError::into_inner).next_offset,
            None => self.committed_offset(),
        }
    }

    /// Offset of the last committed record, `None` when nothing is committed.
    pub fn last_offset(&self) -> Option<u64> {
        let c = self.committed_offset();
        (c > self.first_offset()).then(|| c - 1)
    }

    /// The committed watermark: offsets below it are committed and readable.
    pub fn committed_offset(&self) -> u64 {
        self.inner.shared.committed_next()
    }

    /// Reads committed records from `from`: at most `max_records`, and stops once
    /// `max_bytes` of values are reached (at least one record is returned if any exists).
    /// A read error is returned when no record before it was read; otherwise those records
    /// are, and the error comes with the next read from where they end.
    pub fn read(
        &self,
        from: u64,
        max_records: usize,
        max_bytes: usize,
    ) -> Result<Vec<Record>, ReadError> {
        let mut out = Vec::new();
        let filled = Cursor::new(from).fill(&self.inner.shared, max_records, max_bytes, &mut out);
        match filled {
            Err(e) if out.is_empty() => Err(e),
            _ => Ok(out),
        }
    }

    /// Iterates committed records from `from` to the committed end at the time of each
    /// refill (never blocks).
    pub fn iter(&self, from: u64) -> LogIter {
        LogIter::new(self.inner.shared.clone(), from)
    }

    /// A reader that blocks (with a timeout) for records not yet committed.
    pub fn tail(&self, from: u64) -> Tail {
        let follow = self.inner.writer.is_none().then(|| self.inner.clone());
        Tail::new(self.inner.shared.clone(), from, follow)
    }

    /// First offset whose record's timestamp is `>= ts_ms`, `None` if there is none.
    pub fn offset_for_timestamp(&self, ts_ms: i64) -> Result<Option<u64>, ReadError> {
        crate::read::offset_for_timestamp(&self.inner.shared, ts_ms)
    }

    /// A snapshot of the statistics.
    pub fn stats(&self) -> Stats {
        let segments = self
            .inner
            .shared
            .segments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len() as u64;
        Stats::from_counters(&self.inner.shared.counters, segments)
    }

    /// Whether a storage failure has poisoned the log.
    pub fn is_poisoned(&self) -> bool {
        self.inner.shared.poisoned.load(Ordering::Acquire)
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Log {{ storage: {}, first: {}, committed: {} }}",
            self.inner.shared.storage.describe(),
            self.first_offset(),
            self.committed_offset()
        )
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        if self.inner.writer.is_some() && !self.is_poisoned() {
            let _ = self.close();
        }
        if let Some(sealer) = &self.sealer {
            sealer.shutdown();
        }
    }
}
