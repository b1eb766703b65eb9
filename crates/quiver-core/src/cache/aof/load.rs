//! Loading at start-up: the base (or the plain snapshot), then the log after it.

use super::*;

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

impl Cache {
    /// Loads what is on disk at start-up: with `appendonly yes`, the base snapshot (or,
    /// without one, the plain snapshot) and then the log after it; otherwise the plain
    /// snapshot. Call [`Cache::start_aof`] afterwards to journal from then on.
    pub fn load_persisted(&self, aof: bool, now_ms: u64) -> Result<AofLoad, AofError> {
        let mut load = AofLoad::default();
        let dir = self.aof_dir();
        crate::cache::persist::remove_stale_temp_files(&self.persistence.dir());
        crate::cache::persist::remove_stale_temp_files(&dir);
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
        let mut parts = journal::Parts::default();
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
            let whole = match parts.join(&record.value) {
                Ok(Some(whole)) => whole,
                Ok(None) => {
                    load.records += 1;
                    continue;
                }
                Err(reason) => {
                    damaged(&mut load, record.offset, reason)?;
                    break;
                }
            };
            match self.keyspace.replay_journal(&whole, now_ms) {
                Ok(Replayed::Keys) => {}
                Ok(Replayed::Libraries(libraries)) => load.libraries = libraries,
                Err(e) => {
                    damaged(&mut load, record.offset, e.to_string())?;
                    break;
                }
            }
            load.records += 1;
        }
        if parts.is_open() {
            // The log ends inside a record a crash cut short: a new base goes past it, so
            // that nothing is journaled after those parts.
            load.base_current = false;
        }
        let mut s = self.aof.state();
        s.loaded_records = load.records;
        s.base_file_bytes = fs::metadata(dir.join(BASE_FILE)).map_or(0, |m| m.len());
        s.base_size = s.base_file_bytes + journal.log.size_bytes();
        Ok(load)
    }

    fn load_rdb(&self, path: &Path, now_ms: u64) -> Result<Option<LoadReport>, AofError> {
        Ok(crate::cache::persist::load_file(self, path, now_ms, false)?)
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
