//! Durable streams on disk: one log directory per stream under the data directory's
//! `streams/`, the catalog beside it, and what start-up does with what it finds.
//!
//! Layout: `streams/<tenant>/<namespace>/<stream>/` holds the log of `tenant/namespace/stream`;
//! a stream part of several levels is one directory with its levels joined by `~`
//! (`acme/orders/eu/created` lives in `streams/acme/orders/eu~created/`), so no stream's
//! directory is inside another's. A deleted stream's directory is first renamed into
//! `streams/.deleted/` and then removed; a directory no catalog entry claims (a crash
//! between the two steps of a delete, or a copy by hand) is moved to `streams/.orphaned/`
//! at start-up, untouched, for a person to look at.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quiver_log::{Log, LogConfig};
use thiserror::Error;

use super::config::{DurableConfig, MAX_SEGMENT_BYTES, MIN_SEGMENT_BYTES, StorageConfig};
use super::dedupe::{Dedupe, message_id};
use super::{Durable, DurableState};
use crate::catalog::{Catalog, CatalogError, StreamDef};
use crate::streams::batch::Header;
use crate::streams::clock::Clock;
use crate::streams::name::StreamName;

const DELETED_DIR: &str = ".deleted";
const ORPHANED_DIR: &str = ".orphaned";

/// Durable storage could not be opened or changed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A catalog file.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A stream's log would not open (corruption inside it, a lock held by another
    /// process, an I/O error).
    #[error("durable stream {stream}: its log in {dir} would not open: {message}")]
    Log {
        stream: StreamName,
        dir: PathBuf,
        message: String,
    },
    /// A directory of the data directory.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// The broker's durable storage.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) config: StorageConfig,
    streams_dir: PathBuf,
    pub(crate) catalog: Catalog,
}

/// The broker's wall clock as the log's clock (retention by age, segment age).
#[derive(Debug)]
struct LogClock(Arc<dyn Clock>);

impl quiver_log::Clock for LogClock {
    fn now_ms(&self) -> i64 {
        i64::try_from(self.0.unix_ms()).unwrap_or(i64::MAX)
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

impl Store {
    /// Opens the storage directories and reads the catalog.
    pub(crate) fn open(config: StorageConfig) -> Result<(Store, Vec<StreamDef>), StoreError> {
        let streams_dir = config.dir.join("streams");
        fs::create_dir_all(&streams_dir).map_err(io_error(&streams_dir))?;
        let catalog = Catalog::open(&config.dir)?;
        let defs = catalog.streams()?;
        let trash = streams_dir.join(DELETED_DIR);
        if trash.exists() {
            fs::remove_dir_all(&trash).map_err(io_error(&trash))?;
        }
        let store = Store {
            config,
            streams_dir,
            catalog,
        };
        Ok((store, defs))
    }

    /// Where the log of `name` lives.
    pub(crate) fn log_dir(&self, name: &StreamName) -> PathBuf {
        let mut levels = name.levels();
        let tenant = levels.next().expect("a name has a tenant");
        let namespace = levels.next().expect("a name has a namespace");
        let rest: Vec<&str> = levels.collect();
        self.streams_dir
            .join(tenant)
            .join(namespace)
            .join(rest.join("~"))
    }

    /// The log settings of a stream stored with `config`.
    fn log_config(&self, config: &DurableConfig, clock: &Arc<dyn Clock>) -> LogConfig {
        let retention = &config.retention;
        let segment_max_bytes = retention
            .max_bytes
            .map_or(self.config.segment_bytes, |max| {
                (max / 8).min(self.config.segment_bytes)
            })
            .clamp(MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES);
        let segment_max_age_ms = retention.max_age.map(|age| {
            let eighth = u64::try_from(age.as_millis() / 8).unwrap_or(u64::MAX);
            eighth.clamp(1000, 3_600_000)
        });
        LogConfig {
            durability: config.durability,
            segment_max_bytes,
            segment_max_age_ms,
            recovery: self.config.recovery,
            clock: Arc::new(LogClock(Arc::clone(clock))),
            ..LogConfig::default()
        }
    }

    /// Opens (creating) the log of `name`, and rebuilds its de-duplication window.
    pub(crate) fn open_log(
        &self,
        name: &StreamName,
        config: &DurableConfig,
        clock: &Arc<dyn Clock>,
    ) -> Result<(Durable, DurableState), StoreError> {
        let dir = self.log_dir(name);
        let failed = |message: String| StoreError::Log {
            stream: name.clone(),
            dir: dir.clone(),
            message,
        };
        let log = Log::open(&dir, self.log_config(config, clock))
            .map_err(|error| failed(error.to_string()))?;
        let window_ms = u64::try_from(config.dedupe_window.as_millis()).unwrap_or(u64::MAX);
        let mut dedupe = Dedupe::new(window_ms);
        if dedupe.enabled() {
            rebuild(&log, &mut dedupe, clock.unix_ms().saturating_sub(window_ms))
                .map_err(|error| failed(format!("reading message ids back: {error}")))?;
        }
        Ok((Durable::new(log, *config), DurableState::new(dedupe)))
    }

    /// Forgets stream `name`: its catalog entry, then its directory (renamed away first,
    /// so a crash in between leaves no directory a new stream of the name would open).
    pub(crate) fn remove(&self, name: &StreamName) -> Result<(), StoreError> {
        self.catalog.remove_stream(name)?;
        let dir = self.log_dir(name);
        if !dir.exists() {
            return Ok(());
        }
        let trash = self.streams_dir.join(DELETED_DIR);
        fs::create_dir_all(&trash).map_err(io_error(&trash))?;
        let moved = trash.join(unique_name(name));
        fs::rename(&dir, &moved).map_err(io_error(&dir))?;
        fs::remove_dir_all(&moved).map_err(io_error(&moved))
    }

    /// Moves every stream directory the catalog does not claim to `streams/.orphaned/`;
    /// returns where each went.
    pub(crate) fn sweep_orphans(
        &self,
        known: &HashSet<PathBuf>,
    ) -> Result<Vec<(PathBuf, PathBuf)>, StoreError> {
        let mut moved = Vec::new();
        for tenant in subdirs(&self.streams_dir)? {
            for namespace in subdirs(&tenant)? {
                for dir in subdirs(&namespace)? {
                    if known.contains(&dir) {
                        continue;
                    }
                    let aside = self.streams_dir.join(ORPHANED_DIR);
                    fs::create_dir_all(&aside).map_err(io_error(&aside))?;
                    let label = dir
                        .strip_prefix(&self.streams_dir)
                        .unwrap_or(&dir)
                        .to_string_lossy()
                        .replace('/', "~");
                    let to = aside.join(format!("{label}-{}", std::process::id()));
                    fs::rename(&dir, &to).map_err(io_error(&dir))?;
                    moved.push((dir, to));
                }
            }
        }
        Ok(moved)
    }
}

/// The directories in `dir` whose names do not start with a dot.
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let mut out = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(error) => return Err(io_error(dir)(error)),
    };
    for entry in entries {
        let entry = entry.map_err(io_error(dir))?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && entry.file_type().map_err(io_error(dir))?.is_dir() {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

fn unique_name(name: &StreamName) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{}-{}-{n}",
        crate::catalog::file_stem(name),
        std::process::id()
    )
}

/// Reads the ids of the messages stored since `since_ms` back into `dedupe`.
fn rebuild(log: &Log, dedupe: &mut Dedupe, since_ms: u64) -> Result<(), quiver_log::ReadError> {
    let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
    let Some(start) = log.offset_for_timestamp(since)? else {
        return Ok(());
    };
    for record in log.iter(start) {
        let record = record?;
        let headers: Vec<Header> = record
            .headers
            .into_iter()
            .map(|h| Header {
                key: h.key,
                value: h.value,
            })
            .collect();
        let at_ms = u64::try_from(record.timestamp_ms).unwrap_or(0);
        dedupe.remember(message_id(&headers), record.offset, at_ms);
    }
    Ok(())
}
