//! Recovery on open: find the segments, trust sealed ones through their index end entry,
//! validate the tail of the last one from its last index point, cut a torn tail, and refuse
//! (or, in salvage mode, cut at) interior corruption. Never skips data silently.

mod report;
pub(crate) mod scan;
mod walk;

use std::sync::Arc;

use crate::config::{LogConfig, RecoveryMode};
use crate::error::RecoveryError;
use crate::format::IndexEntry;
use crate::log::Shared;
use crate::segment::{Segment, parse_segment_name, segment_name};
use crate::storage::{FileHandle, Storage};
use crate::watermark;
use crate::writer::Writer;

pub use report::{RecoveryReport, Truncation, TruncationReason};
pub(crate) use scan::create_files;
use scan::io_err;
use walk::Recovery;

/// The active segment's state, handed to the writer.
#[derive(Debug)]
pub struct ActiveState {
    segment: Arc<Segment>,
    index_file: FileHandle,
    index_persisted: usize,
    len: u64,
    next_offset: u64,
    max_ts_ms: i64,
    created_ms: i64,
}

impl ActiveState {
    pub(crate) fn into_writer(self, shared: Arc<Shared>, config: LogConfig) -> Writer {
        let last_index_pos = self
            .segment
            .index
            .read()
            .map_or(0, |i| i.last().map_or(0, |e| u64::from(e.position)));
        Writer {
            shared,
            active: self.segment,
            index_file: self.index_file,
            index_persisted: self.index_persisted,
            created_ms: self.created_ms,
            buf: Vec::with_capacity(config.write_buffer_bytes + (64 << 10)),
            written_len: self.len,
            file_len: self.len,
            next_offset: self.next_offset,
            last_index_pos,
            max_ts_ms: self.max_ts_ms,
            scratch: Vec::new(),
            sealer: None,
            config,
        }
    }
}

/// Result of recovery.
#[derive(Debug)]
pub struct Recovered {
    pub segments: Vec<Arc<Segment>>,
    pub next_offset: u64,
    pub active: Option<ActiveState>,
    pub report: RecoveryReport,
}

/// Recovers the log in `storage`.
pub fn recover(
    storage: Arc<dyn Storage>,
    config: &LogConfig,
    read_only: bool,
) -> Result<Recovered, RecoveryError> {
    let mut report = RecoveryReport {
        read_only,
        ..RecoveryReport::default()
    };
    // Read before anything is cut: it guards the cuts below. A damaged one stops a strict
    // open before it changes anything; salvage goes on without it and rewrites it.
    let watermark = match watermark::read(&*storage) {
        Ok(watermark) => watermark.map(|w| w.committed_next),
        Err(fault) if config.recovery == RecoveryMode::Strict => {
            return Err(RecoveryError::Watermark { fault });
        }
        Err(fault) => {
            report.watermark_damaged = Some(fault);
            None
        }
    };
    let names = storage.list().map_err(io_err("directory"))?;
    if !read_only {
        for name in names.iter().filter(|n| n.ends_with(".tmp")) {
            storage.remove(name).map_err(io_err(name))?;
            report.temp_files_removed.push(name.to_string());
        }
    }
    let mut bases: Vec<u64> = names.iter().filter_map(|n| parse_segment_name(n)).collect();
    bases.sort_unstable();
    let mut rec = Recovery {
        storage: &*storage,
        config,
        read_only,
        report,
        segments: Vec::new(),
        active: None,
        last_sealed: false,
        watermark,
    };
    rec.run(&bases)?;
    let mut report = rec.report;
    let mut segments = rec.segments;
    let mut active = rec.active;
    if segments.is_empty() && !read_only {
        let (file, index_file) =
            create_files(&*storage, config, 0).map_err(io_err(&segment_name(0)))?;
        let seg = Arc::new(Segment::new(
            0,
            file,
            vec![IndexEntry::START],
            0,
            0,
            i64::MIN,
        ));
        segments.push(seg.clone());
        let now = config.clock.now_ms();
        active = Some(ActiveState {
            segment: seg,
            index_file,
            index_persisted: 1,
            len: 0,
            next_offset: 0,
            max_ts_ms: i64::MIN,
            created_ms: now,
        });
    }
    let next_offset = segments.last().map_or(0, |s| {
        s.end_offset.load(std::sync::atomic::Ordering::Acquire)
    });
    report.segments = segments.len();
    report.first_offset = segments.first().map_or(0, |s| s.base);
    report.next_offset = next_offset;
    check_watermark(
        &*storage,
        config,
        read_only,
        watermark,
        next_offset,
        &mut report,
    )?;
    Ok(Recovered {
        segments,
        next_offset,
        active,
        report,
    })
}

fn check_watermark(
    storage: &dyn Storage,
    config: &LogConfig,
    read_only: bool,
    watermark: Option<u64>,
    end: u64,
    report: &mut RecoveryReport,
) -> Result<(), RecoveryError> {
    match watermark {
        // A damaged one (salvage) is written again.
        None if report.watermark_damaged.is_some() => {}
        None => return Ok(()),
        Some(committed_next) if committed_next <= end => return Ok(()),
        Some(committed_next) if config.recovery == RecoveryMode::Strict => {
            return Err(RecoveryError::WatermarkAhead {
                watermark: committed_next,
                end,
            });
        }
        Some(committed_next) => report.watermark_lost = Some((committed_next, end)),
    }
    if !read_only {
        watermark::write(storage, end, config.epoch).map_err(io_err(watermark::WATERMARK_FILE))?;
    }
    Ok(())
}
