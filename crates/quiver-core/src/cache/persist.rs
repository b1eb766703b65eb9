//! Snapshots of the cache in Redis's RDB format: SAVE, BGSAVE, the `save` rules, and
//! loading the file at start-up.
//!
//! A snapshot is written to a temporary file in the snapshot directory, fsynced, renamed
//! over the previous one and the directory fsynced, so a crash at any point leaves either
//! the previous snapshot or the new one, never a damaged file. SAVE holds every shard for
//! the whole write (one instant, nothing served meanwhile, as Redis's SAVE); BGSAVE runs on
//! its own thread and holds one shard at a time, so serving goes on and memory does not
//! double, and each shard is captured at its own instant.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use quiver_cache::rdb::{Consistency, LoadError, LoadReport, SnapshotLoader, SnapshotStats};

use super::Cache;

/// One `save` rule: snapshot when at least `changes` keys changed within `seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaveRule {
    /// Seconds since the last snapshot.
    pub seconds: u64,
    /// Changes since the last snapshot.
    pub changes: u64,
}

/// Parses Redis's `save` value: pairs of seconds and changes (`"3600 1 300 100"`), or the
/// empty string for none.
pub fn parse_save_rules(text: &str) -> Result<Vec<SaveRule>, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if !words.len().is_multiple_of(2) {
        return Err(format!(
            "{text:?} is not pairs of seconds and changes (for example \"3600 1 300 100\")"
        ));
    }
    words
        .chunks_exact(2)
        .map(|pair| {
            let number = |w: &str| {
                w.parse::<u64>()
                    .map_err(|_| format!("{w:?} in {text:?} is not a non-negative integer"))
            };
            Ok(SaveRule {
                seconds: number(pair[0])?,
                changes: number(pair[1])?,
            })
        })
        .collect()
}

/// Renders rules as Redis's `save` value.
pub fn render_save_rules(rules: &[SaveRule]) -> String {
    rules
        .iter()
        .map(|r| format!("{} {}", r.seconds, r.changes))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a snapshot was not taken.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// A background save is running.
    #[error("a background save is already in progress")]
    InProgress,
    /// Writing, syncing or renaming the file failed.
    #[error("cannot write the snapshot {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// What INFO persistence reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PersistInfo {
    /// Changes since the last successful snapshot.
    pub changes_since_save: u64,
    /// Whether a background save runs.
    pub bgsave_in_progress: bool,
    /// Unix seconds of the last successful snapshot (or of start-up).
    pub last_save_s: u64,
    /// Whether the last background save succeeded.
    pub last_bgsave_ok: bool,
    /// Seconds the last background save took (-1 before the first).
    pub last_bgsave_time_s: i64,
    /// Seconds the running background save has taken (-1 when none runs).
    pub current_bgsave_time_s: i64,
    /// Keys and bytes of the last snapshot written.
    pub last_stats: SnapshotStats,
    /// Snapshots written since start-up.
    pub saves: u64,
    /// A BGSAVE SCHEDULE waits for the running save to end.
    pub scheduled: bool,
    /// Keys the snapshot loaded at start-up held.
    pub loaded_keys: u64,
}

#[derive(Debug)]
struct State {
    dir: PathBuf,
    file_name: String,
    rules: Vec<SaveRule>,
    changes_at_save: u64,
    info: PersistInfo,
    started: Option<Instant>,
    /// When the last failed background save ended (unix ms), to space out retries.
    failed_at_ms: Option<u64>,
}

/// Gives the RDB records a snapshot carries before the keys (function libraries as
/// `FUNCTION2` records); called before any shard is locked.
pub type Records = Arc<dyn Fn() -> Vec<u8> + Send + Sync>;

/// Seconds between automatic retries of a failed background save (Redis's 5 s).
const RETRY_AFTER_MS: u64 = 5_000;

/// The snapshot settings and state of a cache.
pub struct Persistence {
    state: Mutex<State>,
    /// `stop-writes-on-bgsave-error`.
    stop_writes_on_error: AtomicBool,
    /// What writes the records that go before the keys (the function libraries).
    records: Mutex<Option<Records>>,
    /// A SHUTDOWN command already decided about the last snapshot (SAVE or NOSAVE).
    shutdown_decided: AtomicBool,
    /// Writes are refused: the last snapshot failed, rules are set and
    /// `stop-writes-on-bgsave-error` is on. Read by every write command.
    refuse_writes: AtomicBool,
}

impl std::fmt::Debug for Persistence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Persistence")
            .field("state", &self.state)
            .field("refuse_writes", &self.refuse_writes)
            .finish_non_exhaustive()
    }
}

impl Persistence {
    /// Snapshots in `./dump.rdb`, taken only when asked (no rules) until configured.
    pub(super) fn new() -> Self {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Self {
            state: Mutex::new(State {
                dir: PathBuf::from("."),
                file_name: "dump.rdb".into(),
                rules: Vec::new(),
                changes_at_save: 0,
                info: PersistInfo {
                    last_save_s: now_ms / 1000,
                    last_bgsave_ok: true,
                    last_bgsave_time_s: -1,
                    current_bgsave_time_s: -1,
                    ..PersistInfo::default()
                },
                started: None,
                failed_at_ms: None,
            }),
            stop_writes_on_error: AtomicBool::new(true),
            records: Mutex::new(None),
            shutdown_decided: AtomicBool::new(false),
            refuse_writes: AtomicBool::new(false),
        }
    }

    /// Records that SHUTDOWN already wrote the last snapshot or was told not to, so the
    /// server's stop does not write one.
    pub fn decide_shutdown_save(&self) {
        self.shutdown_decided.store(true, Ordering::Relaxed);
    }

    /// Whether the stop of the server writes a last snapshot: rules are set and no
    /// SHUTDOWN decided otherwise.
    pub fn saves_at_stop(&self) -> bool {
        !self.shutdown_decided.load(Ordering::Relaxed) && !self.rules().is_empty()
    }

    /// Sets what gives the records written before the keys.
    pub fn set_records(&self, records: Records) {
        *self.records.lock().unwrap_or_else(PoisonError::into_inner) = Some(records);
    }

    fn records(&self) -> Vec<u8> {
        let records = self
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        records.map(|f| f()).unwrap_or_default()
    }

    /// Whether write commands are refused (Redis's MISCONF): the last snapshot failed
    /// while `save` rules are set and `stop-writes-on-bgsave-error` is on.
    pub fn writes_refused(&self) -> bool {
        self.refuse_writes.load(Ordering::Relaxed)
    }

    /// `stop-writes-on-bgsave-error`.
    pub fn stop_writes_on_error(&self) -> bool {
        self.stop_writes_on_error.load(Ordering::Relaxed)
    }

    /// Changes `stop-writes-on-bgsave-error`.
    pub fn set_stop_writes_on_error(&self, on: bool) {
        self.stop_writes_on_error.store(on, Ordering::Relaxed);
        self.update_refusal(&self.state());
    }

    fn update_refusal(&self, s: &State) {
        let refuse = !s.info.last_bgsave_ok && !s.rules.is_empty() && self.stop_writes_on_error();
        self.refuse_writes.store(refuse, Ordering::Relaxed);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The snapshot file's path.
    pub fn path(&self) -> PathBuf {
        let s = self.state();
        s.dir.join(&s.file_name)
    }

    /// The directory snapshots go to (`dir`).
    pub fn dir(&self) -> PathBuf {
        self.state().dir.clone()
    }

    /// The snapshot's file name (`dbfilename`).
    pub fn file_name(&self) -> String {
        self.state().file_name.clone()
    }

    /// The `save` rules.
    pub fn rules(&self) -> Vec<SaveRule> {
        self.state().rules.clone()
    }

    /// Changes the `save` rules.
    pub fn set_rules(&self, rules: Vec<SaveRule>) {
        let mut s = self.state();
        s.rules = rules;
        self.update_refusal(&s);
    }

    /// Changes the snapshot's file name; a name with a path in it is refused.
    pub fn set_file_name(&self, name: &str) -> Result<(), String> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(format!(
                "dbfilename {name:?} must be a plain file name (the directory is `dir`)"
            ));
        }
        self.state().file_name = name.to_owned();
        Ok(())
    }

    /// Changes the snapshot directory; it must exist.
    pub fn set_dir(&self, dir: &Path) -> Result<(), String> {
        if !dir.is_dir() {
            return Err(format!(
                "dir {:?} is not an existing directory",
                dir.display()
            ));
        }
        self.state().dir = dir.to_owned();
        Ok(())
    }
}

impl Cache {
    /// The snapshot settings and state.
    pub fn persistence(&self) -> &Persistence {
        &self.persistence
    }

    /// INFO persistence's figures.
    pub fn persist_info(&self) -> PersistInfo {
        let changes = self.keyspace.changes();
        let s = self.persistence.state();
        let mut info = s.info.clone();
        info.changes_since_save = changes.saturating_sub(s.changes_at_save);
        info.current_bgsave_time_s = s.started.map_or(-1, |t| t.elapsed().as_secs() as i64);
        info
    }

    /// LASTSAVE: when the last snapshot was written (seconds since the epoch). Reads no
    /// shard, so a script holding the keyspace may ask.
    pub fn last_save_s(&self) -> u64 {
        self.persistence.state().info.last_save_s
    }

    /// SAVE: writes the snapshot now, holding every shard until it is on disk.
    pub fn save(&self, now_ms: u64) -> Result<SnapshotStats, SaveError> {
        let changes = self.keyspace.changes();
        let path = {
            let s = self.persistence.state();
            if s.started.is_some() {
                return Err(SaveError::InProgress);
            }
            s.dir.join(&s.file_name)
        };
        let result = write_file(self, &path, now_ms, Consistency::PointInTime, None);
        self.saved(&result, changes, now_ms, None);
        result
    }

    /// BGSAVE: writes the snapshot on a thread of its own while serving goes on.
    pub fn bgsave(
        self: &Arc<Self>,
        now_ms: impl Fn() -> u64 + Send + 'static,
    ) -> Result<(), SaveError> {
        let path = {
            let mut s = self.persistence.state();
            if s.started.is_some() {
                return Err(SaveError::InProgress);
            }
            s.started = Some(Instant::now());
            s.info.bgsave_in_progress = true;
            s.dir.join(&s.file_name)
        };
        let cache = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("quiver-bgsave".into())
            .spawn(move || {
                let changes = cache.keyspace.changes();
                let started = Instant::now();
                let result = write_file(&cache, &path, now_ms(), Consistency::PerShard, None);
                cache.saved(&result, changes, now_ms(), Some(started));
                if let Err(error) = &result {
                    tracing::error!(%error, "background save failed");
                }
            });
        if let Err(source) = spawned {
            let mut s = self.persistence.state();
            s.started = None;
            s.info.bgsave_in_progress = false;
            return Err(SaveError::Io {
                path: self.persistence.path(),
                source,
            });
        }
        Ok(())
    }

    /// BGSAVE SCHEDULE while a save runs: another one starts when it ends.
    pub fn schedule_bgsave(&self) {
        self.persistence.state().info.scheduled = true;
    }

    fn saved(
        &self,
        result: &Result<SnapshotStats, SaveError>,
        changes: u64,
        now_ms: u64,
        background: Option<Instant>,
    ) {
        let mut s = self.persistence.state();
        if let Some(started) = background {
            s.started = None;
            s.info.bgsave_in_progress = false;
            s.info.last_bgsave_time_s = started.elapsed().as_secs() as i64;
        }
        // A failed SAVE counts as a failed background save does: writes are refused
        // (with rules set) until a snapshot succeeds.
        s.info.last_bgsave_ok = result.is_ok();
        self.persistence.update_refusal(&s);
        match result {
            Ok(stats) => {
                s.changes_at_save = changes;
                s.info.last_save_s = now_ms / 1000;
                s.info.last_stats = *stats;
                s.info.saves += 1;
                s.failed_at_ms = None;
            }
            Err(_) => s.failed_at_ms = Some(now_ms),
        }
    }

    /// Starts a background save when a `save` rule or a scheduled BGSAVE asks for one;
    /// called periodically.
    pub fn save_if_due(self: &Arc<Self>, now_ms: u64, clock: impl Fn() -> u64 + Send + 'static) {
        let due = {
            let mut s = self.persistence.state();
            if s.started.is_some() {
                return;
            }
            // Never waits on a shard: a script that never ends holds its keys.
            let Some(changes) = self.keyspace.changes_now() else {
                return;
            };
            let changed = changes.saturating_sub(s.changes_at_save);
            let since_s = (now_ms / 1000).saturating_sub(s.info.last_save_s);
            let may_retry = s
                .failed_at_ms
                .is_none_or(|at| now_ms.saturating_sub(at) >= RETRY_AFTER_MS);
            let by_rule = may_retry
                && s.rules
                    .iter()
                    .any(|r| changed >= r.changes && since_s >= r.seconds && changed > 0);
            let scheduled = std::mem::take(&mut s.info.scheduled);
            by_rule || scheduled
        };
        if due {
            let _ = self.bgsave(clock);
        }
    }

    /// Loads the snapshot file if there is one; `None` when there is no file.
    pub fn load_snapshot(&self, now_ms: u64) -> Result<Option<LoadReport>, LoadSnapshotError> {
        load_file(self, &self.persistence.path(), now_ms, false)
    }

    /// Loads the snapshot file into the keys there are (DEBUG RELOAD); with `merge` its
    /// keys replace existing ones, else an existing key fails the load. A missing file
    /// is an error.
    pub fn reload_snapshot(
        &self,
        merge: bool,
        now_ms: u64,
    ) -> Result<LoadReport, LoadSnapshotError> {
        let path = self.persistence.path();
        load_file(self, &path, now_ms, merge)?.ok_or_else(|| LoadSnapshotError::Io {
            path,
            source: io::Error::from(io::ErrorKind::NotFound),
        })
    }
}

/// Loads the snapshot at `path` if there is one; `None` when there is no file.
pub(super) fn load_file(
    cache: &Cache,
    path: &Path,
    now_ms: u64,
    merge: bool,
) -> Result<Option<LoadReport>, LoadSnapshotError> {
    let path = path.to_owned();
    let mut file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(LoadSnapshotError::Io { path, source }),
    };
    let mut loader = SnapshotLoader::new();
    if merge {
        loader = loader.merging();
    }
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => return Err(LoadSnapshotError::Io { path, source }),
        };
        loader
            .feed(&cache.keyspace, &buf[..n], now_ms)
            .map_err(|source| LoadSnapshotError::Format {
                path: path.clone(),
                source,
            })?;
    }
    let report =
        loader
            .finish(&cache.keyspace, now_ms)
            .map_err(|source| LoadSnapshotError::Format {
                path: path.clone(),
                source,
            })?;
    let mut s = cache.persistence.state();
    s.changes_at_save = cache.keyspace.changes();
    s.info.loaded_keys = report.keys;
    Ok(Some(report))
}

/// Why the snapshot could not be loaded at start-up.
#[derive(Debug, thiserror::Error)]
pub enum LoadSnapshotError {
    /// Reading the file failed.
    #[error("cannot read the snapshot {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file is damaged or not an RDB file.
    #[error("the snapshot {path} cannot be loaded: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        source: LoadError,
    },
}

/// Writes the snapshot to a temporary file beside `path`, syncs it, renames it over `path`
/// and syncs the directory. A base of the append-only file says so, and names the first
/// log offset it does not cover.
pub(super) fn write_file(
    cache: &Cache,
    path: &Path,
    now_ms: u64,
    consistency: Consistency,
    aof_offset: Option<u64>,
) -> Result<SnapshotStats, SaveError> {
    let io_error = |source| SaveError::Io {
        path: path.to_owned(),
        source,
    };
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    // Unique even for two saves of one millisecond.
    let save = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = dir.join(format!("temp-{}-{now_ms}-{save}.rdb", std::process::id()));
    let result = (|| {
        let mut file = io::BufWriter::with_capacity(1 << 20, File::create(&temp)?);
        let version = env!("CARGO_PKG_VERSION");
        let ctime = (now_ms / 1000).to_string();
        let used = cache.used_memory().to_string();
        let offset = aof_offset.map(|o| o.to_string());
        let mut aux: Vec<(&str, &[u8])> = vec![
            ("quiver-ver", version.as_bytes()),
            ("redis-bits", b"64"),
            ("ctime", ctime.as_bytes()),
            ("used-mem", used.as_bytes()),
            ("aof-base", if offset.is_some() { b"1" } else { b"0" }),
        ];
        if let Some(offset) = &offset {
            aux.push((super::aof::OFFSET_AUX, offset.as_bytes()));
        }
        let records = cache.persistence.records();
        let stats = cache.keyspace.write_snapshot(
            now_ms,
            (&aux, &records),
            consistency,
            &mut |chunk: &[u8]| file.write_all(chunk),
        )?;
        let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)?;
        File::open(dir)?.sync_all()?;
        Ok(stats)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map_err(io_error)
}

/// Removes the temporary files of saves that a stop or a crash cut short from `dir`, at
/// start-up, before any save of this process: `temp-<pid>-….rdb` files of any process
/// that is not running (another process sharing the directory keeps its own).
pub(super) fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("temp-")?.strip_suffix(".rdb"))
            .and_then(|rest| rest.split('-').next()?.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != own && Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        match fs::remove_file(entry.path()) {
            Ok(()) => {
                tracing::info!(path = %entry.path().display(), "removed the temporary file of a save cut short")
            }
            Err(error) => {
                tracing::warn!(path = %entry.path().display(), %error, "could not remove the temporary file of a save cut short")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_rules_parse_and_render() {
        let rules = parse_save_rules("3600 1 300 100 60 10000").unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(
            rules[1],
            SaveRule {
                seconds: 300,
                changes: 100
            }
        );
        assert_eq!(render_save_rules(&rules), "3600 1 300 100 60 10000");
        assert_eq!(parse_save_rules("").unwrap(), vec![]);
        assert!(parse_save_rules("3600").unwrap_err().contains("pairs"));
        assert!(parse_save_rules("x 1").unwrap_err().contains("\"x\""));
    }
}
