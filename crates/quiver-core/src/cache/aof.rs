//! The append-only file: every change of the keyspace journaled on a `quiver-log` log,
//! replayed after the snapshot it starts from.
//!
//! Layout, in the snapshot directory: `appendonlydir/base.rdb` (an RDB snapshot whose aux
//! field `quiver-aof-offset` names the first log offset it does not cover) and
//! `appendonlydir/log/` (a `quiver-log` log of journal records, see
//! `quiver_cache::rdb::journal`). A record holds the state of one key after a change, read
//! when the change is handed out, so replaying the records at and after the base's
//! offset over the base gives back every key as it was last journaled.
//!
//! Acknowledgements: a transport calls [`Cache::wait_durable`] before it sends the replies
//! of the commands it ran. With `appendfsync always` that returns after the fsync covering
//! every record journaled so far (one fsync, on the journal's own thread, serves every
//! connection waiting meanwhile: group commit); with `everysec` and `no` after the
//! records are written to the file (`write(2)`), so a crash of the process loses nothing;
//! `everysec` fsyncs once a second (a crash of the machine loses at most about two
//! seconds), `no` leaves it to the OS.
//!
//! A rewrite (BGREWRITEAOF, or automatic by size) notes the log's end, writes a new base
//! while serving and journaling go on, renames it into place and deletes the log segments
//! the base covers.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use quiver_cache::rdb::{LoadReport, Replayed, SnapshotStats};
use quiver_log::{Durability, Log, LogConfig, RecoveryMode};

use super::persist::{LoadSnapshotError, SaveError};
use super::{Cache, Change};

/// The directory of the append-only file inside the snapshot directory (Redis's
/// `appenddirname` default).
pub const AOF_DIR: &str = "appendonlydir";
/// The base snapshot inside [`AOF_DIR`].
pub const BASE_FILE: &str = "base.rdb";
/// The log inside [`AOF_DIR`].
const LOG_DIR: &str = "log";
/// The aux field of the base naming the first log offset it does not cover.
pub const OFFSET_AUX: &str = "quiver-aof-offset";
/// Log segments: small enough that a rewrite frees space soon after.
const SEGMENT_BYTES: u64 = 8 << 20;

/// `appendfsync`: when journaled writes are fsynced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendFsync {
    /// Before the reply (group commit across connections).
    Always,
    /// Once a second.
    EverySec,
    /// When the OS decides.
    No,
}

impl AppendFsync {
    /// Parses Redis's word for it.
    pub fn parse(word: &str) -> Option<Self> {
        match word.to_ascii_lowercase().as_str() {
            "always" => Some(Self::Always),
            "everysec" => Some(Self::EverySec),
            "no" => Some(Self::No),
            _ => None,
        }
    }

    /// Redis's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::EverySec => "everysec",
            Self::No => "no",
        }
    }

    fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Always,
            1 => Self::EverySec,
            _ => Self::No,
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            Self::Always => 0,
            Self::EverySec => 1,
            Self::No => 2,
        }
    }
}

/// Why the append-only file could not be turned on, loaded or rewritten.
#[derive(Debug, thiserror::Error)]
pub enum AofError {
    /// A rewrite runs already.
    #[error("Background append only file rewriting already in progress")]
    InProgress,
    /// The append-only file is off.
    #[error("the append-only file is off (appendonly no)")]
    Off,
    /// The log could not be opened, written or synced.
    #[error("the append-only log {path}: {message}")]
    Log {
        /// Its directory.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The base snapshot could not be written.
    #[error(transparent)]
    Save(#[from] SaveError),
    /// The base snapshot could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadSnapshotError),
    /// A record of the log does not apply.
    #[error("record {offset} of the append-only log {path} is not valid: {reason}")]
    Record {
        /// The log's directory.
        path: PathBuf,
        /// The record's offset.
        offset: u64,
        /// What is wrong with it.
        reason: String,
    },
}

/// What INFO persistence reports about the append-only file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AofInfo {
    /// `appendonly yes`.
    pub enabled: bool,
    /// A rewrite runs.
    pub rewrite_in_progress: bool,
    /// A rewrite waits for the running one.
    pub rewrite_scheduled: bool,
    /// Seconds the last rewrite took (-1 before the first).
    pub last_rewrite_time_s: i64,
    /// Seconds the running rewrite has taken (-1 when none runs).
    pub current_rewrite_time_s: i64,
    /// Whether the last rewrite succeeded.
    pub last_rewrite_ok: bool,
    /// Whether the last write or fsync of the log succeeded.
    pub last_write_ok: bool,
    /// Bytes of the base and the log now.
    pub current_size: u64,
    /// Bytes of the base and the log after the last rewrite (or the load).
    pub base_size: u64,
    /// Rewrites since start-up.
    pub rewrites: u64,
    /// Records journaled and not yet known durable.
    pub pending_records: u64,
    /// Fsyncs the journal's thread made.
    pub fsyncs: u64,
    /// Records replayed at start-up.
    pub loaded_records: u64,
}

/// What loading at start-up did.
#[derive(Debug, Clone, Default)]
pub struct AofLoad {
    /// The snapshot loaded first (the base, or the plain snapshot when there is no base).
    pub snapshot: Option<LoadReport>,
    /// Log records replayed.
    pub records: u64,
    /// The function libraries in force at the end (the snapshot's, or the last
    /// journaled set).
    pub libraries: Vec<Vec<u8>>,
    /// What the log's recovery cut or repaired, if anything.
    pub recovery: Option<String>,
    /// A base was loaded and the log still holds everything after it: no new base is
    /// needed to go on journaling.
    pub base_current: bool,
}

/// An open journal: the log and its fsync thread.
struct Journal {
    log: Log,
    path: PathBuf,
    /// Records journaled, not yet appended to the log: they go in one batch when a
    /// connection is about to reply (or the fsync thread wakes), not one per command.
    pending: Mutex<Vec<Vec<u8>>>,
    /// Offset after the last record appended.
    appended: AtomicU64,
    /// Offset below which records are written to the file.
    written: AtomicU64,
    /// Offset below which records are fsynced; `always` waiters watch it.
    synced: tokio::sync::watch::Sender<u64>,
    failed: AtomicBool,
    fsyncs: AtomicU64,
    /// The fsync thread is to sync once more and end.
    stopping: AtomicBool,
    /// Reopened after a failure: writes are refused until a base covers memory.
    refusing: AtomicBool,
    wake: (Mutex<bool>, Condvar),
    syncer: Mutex<Option<JoinHandle<()>>>,
}

impl Journal {
    fn open(path: &Path, recover: bool) -> Result<Arc<Journal>, AofError> {
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

    fn fail(&self, what: &str, error: impl std::fmt::Display) {
        if !self.failed.swap(true, Ordering::AcqRel) {
            tracing::error!(%error, path = %self.path.display(), "append-only log {what} failed: writes are refused until a rewrite succeeds");
        }
        // Wakes the waiters so they see the failure.
        self.synced.send_modify(|_| {});
    }

    /// Queues records for the next batch (called under the delivery lock, in order).
    fn queue(&self, records: Vec<Vec<u8>>) {
        if !records.is_empty() {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(records);
        }
    }

    /// Appends the pending records to the log as one batch; the offset after them.
    fn drain(&self) -> u64 {
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
    fn sync(&self) {
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
    fn write_out(&self, target: u64) {
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

    fn poke(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        cv.notify_one();
    }

    fn stop(&self) {
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

/// The append-only settings and state of a cache.
pub struct AppendOnly {
    /// The journal while `appendonly yes`.
    journal: RwLock<Option<Arc<Journal>>>,
    on: AtomicBool,
    fsync: Arc<AtomicU8>,
    rewrite_percentage: AtomicU64,
    rewrite_min_size: AtomicU64,
    /// Open the log keeping what is before damage instead of refusing it.
    recover: AtomicBool,
    state: Mutex<AofState>,
}

#[derive(Debug)]
struct AofState {
    started: Option<Instant>,
    scheduled: bool,
    last_rewrite_time_s: i64,
    last_rewrite_ok: bool,
    /// Bytes of the base file.
    base_file_bytes: u64,
    /// Bytes of the base and the log after the last rewrite (or the load).
    base_size: u64,
    rewrites: u64,
    loaded_records: u64,
    /// When the last failed rewrite ended, to space out automatic retries.
    failed_at: Option<Instant>,
}

impl std::fmt::Debug for AppendOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppendOnly")
            .field("on", &self.on)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl AppendOnly {
    pub(super) fn new() -> Self {
        Self {
            journal: RwLock::new(None),
            on: AtomicBool::new(false),
            fsync: Arc::new(AtomicU8::new(AppendFsync::EverySec.to_u8())),
            rewrite_percentage: AtomicU64::new(100),
            rewrite_min_size: AtomicU64::new(64 << 20),
            recover: AtomicBool::new(false),
            state: Mutex::new(AofState {
                started: None,
                scheduled: false,
                last_rewrite_time_s: -1,
                last_rewrite_ok: true,
                base_file_bytes: 0,
                base_size: 0,
                rewrites: 0,
                loaded_records: 0,
                failed_at: None,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, AofState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn journal(&self) -> Option<Arc<Journal>> {
        self.journal
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `appendonly`.
    pub fn enabled(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    /// `appendfsync`.
    pub fn fsync(&self) -> AppendFsync {
        AppendFsync::from_u8(self.fsync.load(Ordering::Relaxed))
    }

    /// Changes `appendfsync`; takes effect at once.
    pub fn set_fsync(&self, fsync: AppendFsync) {
        self.fsync.store(fsync.to_u8(), Ordering::Relaxed);
        if let Some(journal) = self.journal() {
            journal.poke();
        }
    }

    /// `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size` (bytes).
    pub fn auto_rewrite(&self) -> (u64, u64) {
        (
            self.rewrite_percentage.load(Ordering::Relaxed),
            self.rewrite_min_size.load(Ordering::Relaxed),
        )
    }

    /// Changes the automatic rewrite's growth percentage (0: never) and minimum size.
    pub fn set_auto_rewrite(&self, percentage: u64, min_size: u64) {
        self.rewrite_percentage.store(percentage, Ordering::Relaxed);
        self.rewrite_min_size.store(min_size, Ordering::Relaxed);
    }

    /// Whether the log is opened keeping what is before damage (and dropping the rest)
    /// instead of refusing to start.
    pub fn set_recover(&self, recover: bool) {
        self.recover.store(recover, Ordering::Relaxed);
    }

    /// Whether writes are refused because the journal failed, or its reopened log has
    /// no base yet (Redis's MISCONF).
    pub fn write_failed(&self) -> bool {
        self.enabled()
            && self.journal().is_some_and(|j| {
                j.failed.load(Ordering::Acquire) || j.refusing.load(Ordering::Acquire)
            })
    }
}

impl Cache {
    /// The append-only settings and state.
    pub fn append_only(&self) -> &AppendOnly {
        &self.aof
    }

    fn aof_dir(&self) -> PathBuf {
        self.persistence.dir().join(AOF_DIR)
    }

    /// Loads what is on disk at start-up: with `appendonly yes`, the base snapshot (or,
    /// without one, the plain snapshot) and then the log after it; otherwise the plain
    /// snapshot. Call [`Cache::start_aof`] afterwards to journal from then on.
    pub fn load_persisted(&self, aof: bool, now_ms: u64) -> Result<AofLoad, AofError> {
        let mut load = AofLoad::default();
        let dir = self.aof_dir();
        let base = match aof {
            true => self.load_rdb(&dir.join(BASE_FILE), now_ms)?,
            false => None,
        };
        let from = base
            .as_ref()
            .map(|report| {
                base_offset(report).ok_or_else(|| AofError::Log {
                    path: dir.join(BASE_FILE),
                    message: format!("the base has no valid {OFFSET_AUX} field"),
                })
            })
            .transpose()?;
        load.snapshot = match base {
            Some(base) => Some(base),
            None => self.load_rdb(&self.persistence.path(), now_ms)?,
        };
        load.libraries = load
            .snapshot
            .as_ref()
            .map(|r| r.functions.clone())
            .unwrap_or_default();
        let log_dir = dir.join(LOG_DIR);
        if !aof || !log_dir.is_dir() {
            return Ok(load);
        }
        let journal = Journal::open(&log_dir, self.aof.recover.load(Ordering::Relaxed))?;
        let report = journal.log.recovery_report();
        if !report.is_clean() {
            tracing::warn!(%report, path = %log_dir.display(), "append-only log repaired");
            load.recovery = Some(report.to_string());
        }
        let recover = self.aof.recover.load(Ordering::Relaxed);
        let (first, end) = (journal.log.first_offset(), journal.log.next_offset());
        load.base_current = from.is_some_and(|from| from <= end) && load.recovery.is_none();
        let mut from = from.unwrap_or(first);
        // Damage that recovery may skip: records the base needs are gone.
        let damaged = |load: &mut AofLoad, offset: u64, reason: String| {
            if !recover {
                return Err(AofError::Record {
                    path: log_dir.clone(),
                    offset,
                    reason,
                });
            }
            tracing::warn!(offset, %reason, records = load.records, "append-only log damaged: replay stops before the damage");
            load.recovery = Some(format!("replay stopped at record {offset}: {reason}"));
            load.base_current = false;
            Ok(())
        };
        if from < first {
            damaged(
                &mut load,
                from,
                format!("the base needs records from {from}, the log starts at {first}"),
            )?;
            from = end;
        }
        // A log that ends before the base's offset lost nothing the base needs; a new
        // base is written before anything is appended.
        for record in journal.log.iter(from.min(end)) {
            let record = match record {
                Ok(record) => record,
                Err(e @ quiver_log::ReadError::Corrupt { .. }) => {
                    let at = from + load.records;
                    damaged(&mut load, at, e.to_string())?;
                    break;
                }
                Err(e) => {
                    return Err(AofError::Log {
                        path: log_dir,
                        message: e.to_string(),
                    });
                }
            };
            match self.keyspace.replay_journal(&record.value, now_ms) {
                Ok(Replayed::Keys) => {}
                Ok(Replayed::Libraries(libraries)) => load.libraries = libraries,
                Err(e) => {
                    damaged(&mut load, record.offset, e.to_string())?;
                    break;
                }
            }
            load.records += 1;
        }
        let mut s = self.aof.state();
        s.loaded_records = load.records;
        s.base_file_bytes = fs::metadata(dir.join(BASE_FILE)).map_or(0, |m| m.len());
        s.base_size = s.base_file_bytes + journal.log.size_bytes();
        Ok(load)
    }

    /// Turns the append-only file on (`appendonly yes`): opens the log and journals every
    /// later change. With `write_base` it starts writing a base covering what the
    /// keyspace holds now, in the background (at start-up, call [`Cache::rewrite_now`]
    /// instead when [`AofLoad::base_current`] is false).
    pub fn start_aof(
        self: &Arc<Self>,
        write_base: bool,
        now_ms: impl Fn() -> u64 + Copy + Send + 'static,
    ) -> Result<(), AofError> {
        if self.aof.enabled() {
            return Ok(());
        }
        let dir = self.aof_dir();
        let io = |path: &Path| {
            let path = path.to_owned();
            move |e: std::io::Error| AofError::Log {
                path,
                message: e.to_string(),
            }
        };
        if write_base {
            // Turned on at run time: what an earlier period left is stale.
            let log_dir = dir.join(LOG_DIR);
            if log_dir.is_dir() {
                fs::remove_dir_all(&log_dir).map_err(io(&log_dir))?;
            }
            let base = dir.join(BASE_FILE);
            if base.exists() {
                fs::remove_file(&base).map_err(io(&base))?;
            }
        }
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let journal = Journal::open(&dir.join(LOG_DIR), self.aof.recover.load(Ordering::Relaxed))?;
        spawn_syncer(&journal, Arc::clone(&self.aof.fsync));
        {
            let _order = self.lock_delivery();
            *self
                .aof
                .journal
                .write()
                .unwrap_or_else(PoisonError::into_inner) = Some(journal);
            self.aof.on.store(true, Ordering::Release);
            self.feed_on.store(true, Ordering::Release);
            self.keyspace.set_change_feed(true);
        }
        if !write_base {
            return Ok(());
        }
        match self.bgrewriteaof(now_ms) {
            Err(AofError::InProgress) => {
                self.aof.state().scheduled = true;
                Ok(())
            }
            started => started,
        }
    }

    /// Turns the append-only file off (`appendonly no`): what was journaled is synced,
    /// the log closed, and the change feed off unless someone else subscribes.
    pub fn stop_aof(&self) {
        if !self.aof.enabled() {
            return;
        }
        self.close_aof();
        let _order = self.lock_delivery();
        if self.write_subscribers().is_empty() && !self.aof.enabled() {
            self.feed_on.store(false, Ordering::Release);
            self.keyspace.set_change_feed(false);
        }
    }

    /// Closes the journal as the server stops: what was journaled is synced and the log
    /// closed. Leaves the change feed alone, so a script that never ends (holding every
    /// shard) does not hold the stop.
    pub fn close_aof(&self) {
        let journal = {
            let _order = self.lock_delivery();
            self.aof.on.store(false, Ordering::Release);
            self.aof
                .journal
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        };
        if let Some(journal) = journal {
            journal.stop();
            if let Err(error) = journal.log.close() {
                tracing::error!(%error, "closing the append-only log failed");
            }
        }
    }

    /// Journals the changes of a command; called under the delivery lock, in order.
    /// `Some(n)` when a shard stayed held: only the first `n` changes are queued.
    pub(super) fn journal_changes(&self, changes: &[Change]) -> Option<usize> {
        let journal = self.aof.journal()?;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut records = Vec::new();
        let journaled = self.keyspace.journal_changes(changes, now_ms, &mut records);
        journal.queue(records);
        journaled.err().map(|(_, n)| n)
    }

    /// Journals the function libraries now in force (after FUNCTION LOAD, DELETE, FLUSH
    /// or RESTORE). The caller orders these calls (the script engine's lock); the
    /// delivery lock is not taken, since the caller may hold every shard.
    pub fn journal_libraries<'a>(&self, libraries: impl IntoIterator<Item = &'a [u8]>) {
        if let Some(journal) = self.aof.journal() {
            let record = quiver_cache::rdb::journal_libraries(libraries);
            journal.queue(vec![record]);
        }
    }

    /// Returns once the changes of `origin` (a client, as [`super::ChangeOrigin`] names
    /// it) and what was journaled before them are as durable as `appendfsync` promises;
    /// `Err` when the journal failed (the replies must not be sent). Immediate when the
    /// append-only file is off or nothing is pending.
    pub async fn wait_durable(&self, origin: u64) -> Result<(), AofError> {
        if !self.aof.enabled() {
            return Ok(());
        }
        // The changes of `origin` (this client) may still be in the feed, put back
        // because a shard was held: they are journaled first, waiting without blocking
        // the thread. Taking the delivery lock also waits for a delivery under way to
        // queue its records.
        while !self.deliver_changes() && self.keyspace.has_changes_from(origin) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let Some(journal) = self.aof.journal() else {
            return Ok(());
        };
        let target = journal.drain();
        let failed = |j: &Journal| AofError::Log {
            path: j.path.clone(),
            message: "a write or fsync failed".into(),
        };
        match self.aof.fsync() {
            AppendFsync::Always => {
                if *journal.synced.borrow() < target {
                    let mut synced = journal.synced.subscribe();
                    journal.poke();
                    let _ = synced
                        .wait_for(|&d| d >= target || journal.failed.load(Ordering::Acquire))
                        .await;
                }
            }
            AppendFsync::EverySec | AppendFsync::No => {
                if journal.written.load(Ordering::Acquire) < target {
                    // The thread's other connections queue their records meanwhile: one
                    // write then serves them all.
                    tokio::task::yield_now().await;
                    if journal.written.load(Ordering::Acquire) < target {
                        journal.write_out(journal.drain());
                    }
                }
            }
        }
        if journal.failed.load(Ordering::Acquire) {
            return Err(failed(&journal));
        }
        Ok(())
    }

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
        let stats = super::persist::write_file(
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
    pub(super) fn rewrite_if_due(
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

    /// INFO persistence's append-only figures.
    pub fn aof_info(&self) -> AofInfo {
        let journal = self.aof.journal();
        let s = self.aof.state();
        AofInfo {
            enabled: self.aof.enabled(),
            rewrite_in_progress: s.started.is_some(),
            rewrite_scheduled: s.scheduled,
            last_rewrite_time_s: s.last_rewrite_time_s,
            current_rewrite_time_s: s.started.map_or(-1, |t| t.elapsed().as_secs() as i64),
            last_rewrite_ok: s.last_rewrite_ok,
            last_write_ok: !journal
                .as_ref()
                .is_some_and(|j| j.failed.load(Ordering::Acquire)),
            current_size: s.base_file_bytes + journal.as_ref().map_or(0, |j| j.log.size_bytes()),
            base_size: s.base_size,
            rewrites: s.rewrites,
            pending_records: journal.as_ref().map_or(0, |j| {
                let queued = j
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .len();
                j.appended
                    .load(Ordering::Acquire)
                    .saturating_sub(*j.synced.borrow())
                    + queued as u64
            }),
            fsyncs: journal
                .as_ref()
                .map_or(0, |j| j.fsyncs.load(Ordering::Relaxed)),
            loaded_records: s.loaded_records,
        }
    }

    fn load_rdb(&self, path: &Path, now_ms: u64) -> Result<Option<LoadReport>, AofError> {
        Ok(super::persist::load_file(self, path, now_ms, false)?)
    }
}

/// The first log offset a base does not cover.
fn base_offset(report: &LoadReport) -> Option<u64> {
    report
        .aux
        .iter()
        .find(|(name, _)| name == OFFSET_AUX.as_bytes())
        .and_then(|(_, value)| std::str::from_utf8(value).ok()?.parse().ok())
}

/// Starts the journal's fsync thread: on demand under `always`, once a second under
/// `everysec`; under `no` it only writes out, once a second, what no client flushed.
fn spawn_syncer(journal: &Arc<Journal>, fsync: Arc<AtomicU8>) {
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
