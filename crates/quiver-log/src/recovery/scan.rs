//! Scanning a segment during recovery, and writing index files.

use crate::config::LogConfig;
use crate::error::RecoveryError;
use crate::format::IndexEntry;
use crate::format::batch::{BatchFault, plain_payload};
use crate::format::record::RecordIter;
use crate::segment::scan::ScanFault;
use crate::segment::{BatchScanner, Segment, index_name, segment_name};
use crate::storage::{FileHandle, Storage, StorageFile};

/// Result of scanning part of one segment.
pub(crate) struct Scan {
    pub(crate) end_pos: u64,
    pub(crate) next_offset: u64,
    pub(crate) max_ts_ms: i64,
    pub(crate) entries: Vec<IndexEntry>,
    pub(crate) fault: Option<ScanFault>,
}

pub(super) fn io_err(file: &str) -> impl FnOnce(std::io::Error) -> RecoveryError + '_ {
    move |source| RecoveryError::Io {
        file: file.to_string(),
        source,
    }
}

/// Scans batches of `file` from the index point `start` (whose offset is `offset`),
/// extending `entries` by the interval rule.
pub(crate) fn scan(
    file: &dyn StorageFile,
    base: u64,
    start: IndexEntry,
    len: u64,
    mut entries: Vec<IndexEntry>,
    interval: u64,
) -> Scan {
    let mut scanner = BatchScanner::new(file, u64::from(start.position), len).checking_records();
    let mut next = base + u64::from(start.rel_offset);
    let mut max_ts = start.max_ts_before_ms;
    let mut last_entry_pos = entries.last().map_or(0, |e| u64::from(e.position));
    loop {
        let pos = scanner.position();
        let batch = match scanner.next_batch() {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Scan {
                    end_pos: pos,
                    next_offset: next,
                    max_ts_ms: max_ts,
                    entries,
                    fault: None,
                };
            }
            Err(fault) => {
                return Scan {
                    end_pos: pos,
                    next_offset: next,
                    max_ts_ms: max_ts,
                    entries,
                    fault: Some(fault),
                };
            }
        };
        let h = batch.header;
        if h.base_offset != next {
            let fault = BatchFault::Sequence {
                expected: next,
                found: h.base_offset,
            };
            return Scan {
                end_pos: pos,
                next_offset: next,
                max_ts_ms: max_ts,
                entries,
                fault: Some(ScanFault::Bad {
                    position: pos,
                    fault,
                }),
            };
        }
        if pos - last_entry_pos >= interval {
            entries.push(IndexEntry::point((next - base) as u32, pos as u32, max_ts));
            last_entry_pos = pos;
        }
        if let Ok(plain) = plain_payload(&h, batch.stored) {
            for r in RecordIter::new(plain, h.count) {
                max_ts = max_ts.max(h.first_ts_ms.wrapping_add(r.ts_delta_ms));
            }
        }
        next = h.next_offset();
    }
}

/// Creates the files of segment `base`: the `.log` (preallocated) and its `.idx` with the
/// start entry, then fsyncs the directory.
pub(crate) fn create_files(
    storage: &dyn Storage,
    config: &LogConfig,
    base: u64,
) -> std::io::Result<(FileHandle, FileHandle)> {
    let file = storage.open(&segment_name(base), true)?;
    if config.preallocate {
        file.preallocate(config.segment_max_bytes)?;
    }
    let index_file = storage.open(&index_name(base), true)?;
    let mut idx = crate::format::index::encode_header(base);
    IndexEntry::START.encode(&mut idx);
    index_file.truncate(0)?;
    index_file.write_at(0, &idx)?;
    storage.sync_dir()?;
    Ok((file, index_file))
}

/// Rewrites a segment's whole index file from memory.
pub(super) fn write_index(f: &dyn StorageFile, seg: &Segment) -> std::io::Result<()> {
    let mut bytes = crate::format::index::encode_header(seg.base);
    for e in seg
        .index
        .read()
        .map_err(|_| std::io::Error::other("index lock poisoned"))?
        .iter()
    {
        e.encode(&mut bytes);
    }
    f.truncate(0)?;
    f.write_at(0, &bytes)
}
