//! A set of logs in one directory, one subdirectory per name (shards or streams), with
//! retention over the whole set.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::config::LogConfig;
use crate::error::{OpenError, SyncError};
use crate::groups::valid_name;
use crate::log::Log;
use crate::retention::{RetentionPolicy, RetentionReport};
use crate::shard::pick_shard;

/// Retention for a set: the per-log policy, then a bound on the set's total bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetRetention {
    pub per_log: RetentionPolicy,
    /// Delete the globally oldest sealed segments while the set is larger than this.
    pub max_total_bytes: Option<u64>,
}

/// Logs by name under one directory.
#[derive(Debug)]
pub struct LogSet {
    dir: PathBuf,
    config: LogConfig,
    logs: Mutex<BTreeMap<String, Arc<Log>>>,
}

impl LogSet {
    /// Opens the set in `dir` (created if missing) and every log already in it.
    pub fn open(dir: &Path, config: LogConfig) -> Result<LogSet, OpenError> {
        std::fs::create_dir_all(dir).map_err(|source| OpenError::Io {
            what: dir.display().to_string(),
            source,
        })?;
        let set = LogSet {
            dir: dir.to_path_buf(),
            config,
            logs: Mutex::new(BTreeMap::new()),
        };
        let entries = std::fs::read_dir(dir).map_err(|source| OpenError::Io {
            what: dir.display().to_string(),
            source,
        })?;
        for entry in entries.flatten() {
            if let Some(name) = entry
                .file_name()
                .to_str()
                .filter(|n| valid_name(n) && entry.path().is_dir())
            {
                set.log(name)?;
            }
        }
        Ok(set)
    }

    /// The log `name`, opened or created on first use. Names follow the group-name rules.
    pub fn log(&self, name: &str) -> Result<Arc<Log>, OpenError> {
        if !valid_name(name) {
            return Err(OpenError::Io {
                what: name.to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "log names are 1-128 bytes of A-Z a-z 0-9 . _ - not starting with '.'",
                ),
            });
        }
        let mut logs = self.logs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = logs.get(name) {
            return Ok(l.clone());
        }
        let log = Arc::new(Log::open(&self.dir.join(name), self.config.clone())?);
        logs.insert(name.to_string(), log.clone());
        Ok(log)
    }

    /// Names of the open logs.
    pub fn names(&self) -> Vec<String> {
        self.logs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// The shard log `<prefix>-<pick_shard(key, n)>`.
    pub fn shard(&self, prefix: &str, key: &[u8], n: NonZeroU32) -> Result<Arc<Log>, OpenError> {
        self.log(&format!("{prefix}-{}", pick_shard(key, n)))
    }

    /// Applies the per-log policy to every log, then the total bound to the set.
    pub fn apply_retention(&self, policy: &SetRetention) -> Result<RetentionReport, SyncError> {
        let logs: Vec<Arc<Log>> = self
            .logs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let mut report = RetentionReport::default();
        for log in &logs {
            let r = log.apply_retention(&policy.per_log)?;
            report.deleted_segments.extend(r.deleted_segments);
            report.deleted_bytes += r.deleted_bytes;
            report.forced += r.forced;
        }
        let Some(max_total) = policy.max_total_bytes else {
            return Ok(report);
        };
        loop {
            let total: u64 = logs.iter().map(|l| l.size_bytes()).sum();
            if total <= max_total {
                break;
            }
            let oldest = logs
                .iter()
                .filter_map(|l| l.oldest_sealed().map(|(ts, _)| (ts, l)))
                .min_by_key(|(ts, _)| *ts);
            let Some((_, log)) = oldest else { break };
            let forced_ok = policy.per_log.hard_max_bytes.is_some_and(|m| total > m);
            if !log.delete_oldest(
                crate::retention::Protect {
                    groups: policy.per_log.protect_unacked,
                    from: policy.per_log.protect_offset,
                },
                forced_ok,
                &mut report,
            )? {
                break;
            }
        }
        Ok(report)
    }
}
