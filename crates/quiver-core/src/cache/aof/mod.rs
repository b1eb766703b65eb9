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

mod journal;
mod load;
mod rewrite;

use journal::{Journal, spawn_syncer};
pub use load::AofLoad;

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
    /// The keyspace's change count when `appendonly no` closed the journal (none before).
    off_at_changes: Mutex<Option<u64>>,
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
            off_at_changes: Mutex::new(None),
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
        // Asked before every write: the journal is looked at in place, not cloned.
        self.enabled()
            && self
                .journal
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .is_some_and(|j| {
                    j.failed.load(Ordering::Acquire) || j.refusing.load(Ordering::Acquire)
                })
    }
}

impl Cache {
    /// The append-only settings and state.
    pub fn append_only(&self) -> &AppendOnly {
        &self.aof
    }

    /// Whether writes are refused now because the cache cannot persist them: the
    /// append-only file failed, or a snapshot failed while save rules are set (RESP's
    /// MISCONF, which tells the two apart).
    pub fn refuses_writes(&self) -> bool {
        self.aof.write_failed() || self.persistence.writes_refused()
    }

    fn aof_dir(&self) -> PathBuf {
        self.persistence.dir().join(AOF_DIR)
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
        // Turned on at run time, over the files of an earlier period: when nothing changed
        // since `appendonly no` closed them, they stay and the journal goes on at the end
        // of their log until the base written below replaces them (a crash before that
        // finds them whole). Otherwise they no longer describe the keys (a replay would
        // bring back what changed while off) and go; so does a base without its log,
        // whose offsets a new log would reuse.
        let log_dir = dir.join(LOG_DIR);
        let base = dir.join(BASE_FILE);
        let remove_stale = || -> Result<(), AofError> {
            if log_dir.is_dir() {
                fs::remove_dir_all(&log_dir).map_err(io(&log_dir))?;
            }
            if base.exists() {
                fs::remove_file(&base).map_err(io(&base))?;
            }
            Ok(())
        };
        let off_at = self
            .aof
            .off_at_changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let unchanged = off_at == Some(self.keyspace.changes());
        if write_base && !(unchanged && log_dir.is_dir()) {
            remove_stale()?;
        }
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let recover = self.aof.recover.load(Ordering::Relaxed);
        let journal = match Journal::open(&log_dir, recover) {
            Ok(journal) => journal,
            Err(error) if write_base => {
                tracing::warn!(%error, "the append-only log of an earlier period does not open: it is replaced");
                remove_stale()?;
                Journal::open(&log_dir, recover)?
            }
            Err(error) => return Err(error),
        };
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
        // Counted before the journal closes: a change in between is journaled and still
        // counts as made while off, so the files are never kept for a state they miss.
        let changes = self.keyspace.changes();
        self.close_aof();
        *self
            .aof
            .off_at_changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(changes);
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
            // Writes stay refused after a failure until a new base covers memory.
            last_write_ok: !journal.as_ref().is_some_and(|j| {
                j.failed.load(Ordering::Acquire) || j.refusing.load(Ordering::Acquire)
            }),
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
}
