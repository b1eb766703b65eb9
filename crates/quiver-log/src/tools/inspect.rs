//! `inspect`: segments, offsets, sizes and groups of a log directory (read-only open).

use std::fmt;
use std::path::Path;

use crate::config::LogConfig;
use crate::error::OpenError;
use crate::log::Log;

/// One segment as inspected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub file: String,
    pub base_offset: u64,
    pub next_offset: u64,
    pub bytes: u64,
    pub index_entries: usize,
}

/// The state of a log directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    pub segments: Vec<SegmentInfo>,
    pub first_offset: u64,
    pub next_offset: u64,
    pub bytes: u64,
    pub groups: Vec<(String, u64)>,
    /// What a writer's recovery would cut (torn tail), if anything.
    pub recovery: String,
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "offsets {}..{} in {} segments, {} bytes",
            self.first_offset,
            self.next_offset,
            self.segments.len(),
            self.bytes
        )?;
        writeln!(
            f,
            "{:<26} {:>20} {:>20} {:>12} {:>8}",
            "segment", "base", "next", "bytes", "index"
        )?;
        for s in &self.segments {
            writeln!(
                f,
                "{:<26} {:>20} {:>20} {:>12} {:>8}",
                s.file, s.base_offset, s.next_offset, s.bytes, s.index_entries
            )?;
        }
        for (name, next) in &self.groups {
            writeln!(
                f,
                "group {name}: next offset {next}, lag {}",
                self.next_offset.saturating_sub(*next)
            )?;
        }
        write!(f, "{}", self.recovery)
    }
}

/// Inspects the log in `dir` without changing it.
pub fn inspect(dir: &Path) -> Result<Inspection, OpenError> {
    let log = Log::open_read_only(dir, LogConfig::default())?;
    let shared = &log.inner().shared;
    let segments: Vec<SegmentInfo> = shared
        .segments()
        .iter()
        .map(|s| SegmentInfo {
            file: s.name.clone(),
            base_offset: s.base,
            next_offset: s.end_offset.load(std::sync::atomic::Ordering::Acquire),
            bytes: s.committed_len(),
            index_entries: s.index_len(),
        })
        .collect();
    Ok(Inspection {
        bytes: segments.iter().map(|s| s.bytes).sum(),
        segments,
        first_offset: log.first_offset(),
        next_offset: log.committed_offset(),
        groups: log
            .groups()
            .into_iter()
            .map(|(n, s)| (n, s.next_offset))
            .collect(),
        recovery: log.recovery_report().to_string(),
    })
}
