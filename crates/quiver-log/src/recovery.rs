//! Recovery on open: find the segments, trust sealed ones through their index end entry,
//! validate the tail of the last one from its last index point, cut a torn tail, and refuse
//! (or, in salvage mode, cut at) interior corruption. Never skips data silently.

use std::fmt;
use std::sync::Arc;

use crate::config::{LogConfig, RecoveryMode};
use crate::error::RecoveryError;
use crate::format::batch::{BatchFault, plain_payload};
use crate::format::record::RecordIter;
use crate::format::{BatchHeader, HEADER_BYTES, INDEX_ENTRY_BYTES, INDEX_HEADER_BYTES, IndexEntry};
use crate::log::Shared;
use crate::segment::scan::find_valid_batch_after;
use crate::segment::{
    BatchScanner, ScanFault, Segment, index_name, parse_segment_name, segment_name,
};
use crate::storage::{FileHandle, Storage, StorageFile};
use crate::watermark;
use crate::writer::Writer;

/// Why bytes were cut on open.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TruncationReason {
    /// An incomplete or CRC-failing batch at the end of the log.
    TornTail,
    /// Interior corruption cut in salvage mode.
    Salvaged,
    /// A whole segment after a salvaged corruption or gap.
    DroppedSegment,
}

/// One cut made (or, read-only, that would be made) by recovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    pub file: String,
    pub position: u64,
    pub bytes_cut: u64,
    pub reason: TruncationReason,
    pub detail: String,
}

/// What recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    pub segments: usize,
    pub first_offset: u64,
    pub next_offset: u64,
    pub truncations: Vec<Truncation>,
    pub indexes_rebuilt: Vec<String>,
    pub temp_files_removed: Vec<String>,
    /// Set when the committed watermark was ahead of the data (salvage mode only).
    pub watermark_lost: Option<(u64, u64)>,
}

impl RecoveryReport {
    /// Total bytes cut.
    pub fn bytes_cut(&self) -> u64 {
        self.truncations.iter().map(|t| t.bytes_cut).sum()
    }

    /// Whether recovery changed nothing that holds data.
    pub fn is_clean(&self) -> bool {
        self.truncations.is_empty() && self.watermark_lost.is_none()
    }
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recovered {} segments, offsets {}..{}",
            self.segments, self.first_offset, self.next_offset
        )?;
        for t in &self.truncations {
            write!(
                f,
                "; cut {} bytes of {} at byte {} ({:?}: {})",
                t.bytes_cut, t.file, t.position, t.reason, t.detail
            )?;
        }
        if !self.indexes_rebuilt.is_empty() {
            write!(f, "; rebuilt index {}", self.indexes_rebuilt.join(", "))?;
        }
        if let Some((wm, end)) = self.watermark_lost {
            write!(f, "; watermark {wm} was ahead of the data end {end}")?;
        }
        Ok(())
    }
}

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

/// Result of scanning part of one segment.
struct Scan {
    end_pos: u64,
    next_offset: u64,
    max_ts_ms: i64,
    entries: Vec<IndexEntry>,
    fault: Option<ScanFault>,
}

fn io_err(file: &str) -> impl FnOnce(std::io::Error) -> RecoveryError + '_ {
    move |source| RecoveryError::Io {
        file: file.to_string(),
        source,
    }
}

/// Scans batches of `file` from the index point `start` (whose offset is `offset`),
/// extending `entries` by the interval rule.
fn scan(
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

/// Recovers the log in `storage`.
pub fn recover(
    storage: Arc<dyn Storage>,
    config: &LogConfig,
    read_only: bool,
) -> Result<Recovered, RecoveryError> {
    let mut report = RecoveryReport::default();
    let names = storage.list().map_err(io_err("directory"))?;
    if !read_only {
        for name in names.iter().filter(|n| n.ends_with(".tmp")) {
            storage.remove(name).map_err(io_err(name))?;
            report.temp_files_removed.push(name.clone());
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
        watermark: watermark::read(&*storage)
            .ok()
            .flatten()
            .map(|w| w.committed_next),
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
    check_watermark(&*storage, config, read_only, next_offset, &mut report)?;
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
    end: u64,
    report: &mut RecoveryReport,
) -> Result<(), RecoveryError> {
    let wm = match watermark::read(storage) {
        Ok(Some(w)) => w,
        Ok(None) => return Ok(()),
        Err(fault) => {
            return Err(RecoveryError::Corrupt {
                file: watermark::WATERMARK_FILE.to_string(),
                position: 0,
                fault,
            });
        }
    };
    if wm.committed_next <= end {
        return Ok(());
    }
    if config.recovery == RecoveryMode::Strict {
        return Err(RecoveryError::WatermarkAhead {
            watermark: wm.committed_next,
            end,
        });
    }
    report.watermark_lost = Some((wm.committed_next, end));
    if !read_only {
        watermark::write(storage, end, config.epoch).map_err(io_err(watermark::WATERMARK_FILE))?;
    }
    Ok(())
}

struct Recovery<'a> {
    storage: &'a dyn Storage,
    config: &'a LogConfig,
    read_only: bool,
    report: RecoveryReport,
    segments: Vec<Arc<Segment>>,
    active: Option<ActiveState>,
    /// Whether the last segment processed was trusted through a durable end entry.
    last_sealed: bool,
    /// Offsets below this were promised durable by a `sync()`; strict mode refuses to cut
    /// below it (before cutting anything).
    watermark: Option<u64>,
}

impl Recovery<'_> {
    fn run(&mut self, bases: &[u64]) -> Result<(), RecoveryError> {
        let mut expected: Option<u64> = None;
        for (i, &base) in bases.iter().enumerate() {
            let name = segment_name(base);
            if let Some(exp) = expected.filter(|e| *e != base) {
                // After a segment with no durable end entry, a gap is power loss before
                // the sealer finished: the rest starts after a hole.
                if self.config.recovery == RecoveryMode::Strict && self.last_sealed {
                    return Err(RecoveryError::Gap {
                        file: name,
                        expected: exp,
                        found: base,
                    });
                }
                return self.drop_from(
                    &bases[i..],
                    &format!("segment starts at {base}, expected {exp}"),
                );
            }
            let is_last = i + 1 == bases.len();
            let cut = self.segment(base, is_last)?;
            expected = self
                .segments
                .last()
                .map(|s| s.end_offset.load(std::sync::atomic::Ordering::Acquire));
            if cut {
                return self.drop_from(&bases[i + 1..], "after a cut in an earlier segment");
            }
        }
        Ok(())
    }

    /// Deletes whole segments (salvage mode), reporting each.
    fn drop_from(&mut self, bases: &[u64], detail: &str) -> Result<(), RecoveryError> {
        if !bases.is_empty() {
            let end = self.segments.last().map_or(0, |s| {
                s.end_offset.load(std::sync::atomic::Ordering::Acquire)
            });
            self.guard_watermark(end)?;
        }
        for &base in bases {
            let name = segment_name(base);
            let file = self.storage.open(&name, false).map_err(io_err(&name))?;
            let len = file.len().map_err(io_err(&name))?;
            drop(file);
            if !self.read_only {
                self.storage.remove(&name).map_err(io_err(&name))?;
                let _ = self.storage.remove(&index_name(base));
            }
            self.report.truncations.push(Truncation {
                file: name,
                position: 0,
                bytes_cut: len,
                reason: TruncationReason::DroppedSegment,
                detail: detail.to_string(),
            });
        }
        if !self.read_only && !bases.is_empty() {
            self.storage.sync_dir().map_err(io_err("directory"))?;
        }
        // The last kept segment becomes the active one.
        if let Some(seg) = self.segments.last().cloned()
            && self.active.is_none()
        {
            self.active = Some(self.activate(&seg)?);
        }
        Ok(())
    }

    /// In strict mode, refuses a cut that would leave the log ending at `end` below the
    /// committed watermark.
    fn guard_watermark(&self, end: u64) -> Result<(), RecoveryError> {
        match self.watermark {
            Some(wm) if wm > end && self.config.recovery == RecoveryMode::Strict => {
                Err(RecoveryError::WatermarkAhead { watermark: wm, end })
            }
            _ => Ok(()),
        }
    }

    fn activate(&self, seg: &Arc<Segment>) -> Result<ActiveState, RecoveryError> {
        let idx = index_name(seg.base);
        let index_file = if self.read_only {
            seg.file.clone()
        } else {
            // After a process crash the tail may sit in the page cache only: make it
            // durable, since the writer counts everything recovered as synced.
            seg.file.sync().map_err(io_err(&seg.name))?;
            // A sealed segment reopened as the active one loses its end mark, durably:
            // appends will follow, and a stale mark would make a later power-loss hole
            // look like a sealed segment.
            let had_end = {
                let mut index = seg
                    .index
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let had = index.iter().any(|e| e.end);
                index.iter_mut().for_each(|e| e.end = false);
                had
            };
            let f = self.storage.open(&idx, true).map_err(io_err(&idx))?;
            write_index(&*f, seg).map_err(io_err(&idx))?;
            if had_end {
                f.sync().map_err(io_err(&idx))?;
            }
            f
        };
        let len = seg.committed_len();
        let mut created_ms = self.config.clock.now_ms();
        if len >= HEADER_BYTES as u64 {
            let mut h = [0u8; HEADER_BYTES];
            if seg.file.read_at(0, &mut h).is_ok()
                && let Ok(hdr) = BatchHeader::decode(&h)
            {
                created_ms = hdr.first_ts_ms;
            }
        }
        // A sealed segment's end entry is a valid entry for the next batch; keep it.
        Ok(ActiveState {
            segment: seg.clone(),
            index_file,
            index_persisted: seg.index_len(),
            len,
            next_offset: seg.end_offset.load(std::sync::atomic::Ordering::Acquire),
            max_ts_ms: seg.max_ts_ms.load(std::sync::atomic::Ordering::Acquire),
            created_ms,
        })
    }

    /// Recovers one segment; returns true if it was cut in salvage mode.
    fn segment(&mut self, base: u64, is_last: bool) -> Result<bool, RecoveryError> {
        let name = segment_name(base);
        let idx = index_name(base);
        let file = self.storage.open(&name, false).map_err(io_err(&name))?;
        let len = file.len().map_err(io_err(&name))?;
        let loaded = match self.storage.open(&idx, false) {
            Ok(f) => crate::storage::read_all(&*f)
                .ok()
                .map(|b| (b.len(), crate::format::index::decode(&b, base))),
            Err(_) => None,
        };
        let (idx_bytes, entries) = match loaded {
            Some((n, Some(e))) if !e.is_empty() => (n, e),
            _ => (0, vec![IndexEntry::START]),
        };
        let end_entry = entries
            .last()
            .copied()
            .filter(|e| e.end && u64::from(e.position) == len && len > 0);
        if let (false, Some(end)) = (is_last, end_entry) {
            let seg = Segment::new(
                base,
                file,
                entries,
                len,
                base + u64::from(end.rel_offset),
                end.max_ts_before_ms,
            );
            self.segments.push(Arc::new(seg));
            self.last_sealed = true;
            return Ok(false);
        }
        self.last_sealed = false;
        let interval = u64::from(self.config.index_interval_bytes);
        // Scan from the last index point inside the data; if that point is not a batch
        // boundary with the right offset, rebuild the whole index from the start.
        let k = if is_last {
            entries
                .iter()
                .rposition(|e| u64::from(e.position) < len)
                .unwrap_or(0)
        } else {
            0
        };
        let mut s = scan(
            &*file,
            base,
            entries[k],
            len,
            entries[..=k].to_vec(),
            interval,
        );
        if k > 0 && s.end_pos == u64::from(entries[k].position) && s.fault.is_some() {
            s = scan(
                &*file,
                base,
                IndexEntry::START,
                len,
                vec![IndexEntry::START],
                interval,
            );
        }
        let mut cut = false;
        let mut data_len = len;
        if let Some(fault) = s.fault.take() {
            let p = fault.position();
            let valid_after = find_valid_batch_after(&*file, p, len).map_err(io_err(&name))?;
            // Nothing valid after the fault: a torn tail. In a sealed segment that has no
            // durable end entry this is power loss before the sealer finished (possible
            // outside `Sync` mode): the later segments start after a hole and go too.
            // Data a `sync()` promised is still guarded by the watermark check.
            let torn = valid_after.is_none();
            if !torn && self.config.recovery == RecoveryMode::Strict {
                return Err(RecoveryError::Corrupt {
                    file: name,
                    position: p,
                    fault: fault.describe(),
                });
            }
            let reason = if torn {
                TruncationReason::TornTail
            } else {
                TruncationReason::Salvaged
            };
            cut = !is_last;
            self.guard_watermark(s.next_offset)?;
            if !self.read_only {
                file.truncate(p)
                    .and_then(|()| file.sync())
                    .map_err(io_err(&name))?;
            }
            self.report.truncations.push(Truncation {
                file: name.clone(),
                position: p,
                bytes_cut: len - p,
                reason,
                detail: fault.describe(),
            });
            data_len = p;
        }
        let mut entries = s.entries;
        if !is_last && !cut && data_len > 0 {
            entries.push(IndexEntry {
                end: true,
                ..IndexEntry::point((s.next_offset - base) as u32, data_len as u32, s.max_ts_ms)
            });
        }
        let seg = Arc::new(Segment::new(
            base,
            file,
            entries,
            data_len,
            s.next_offset,
            s.max_ts_ms,
        ));
        let expected_idx = INDEX_HEADER_BYTES + seg.index_len() * INDEX_ENTRY_BYTES;
        if !is_last && !cut && !self.read_only {
            // A sealed segment without a durable end entry may hold data that only the
            // page cache has (the sealer had not finished): make it durable before its
            // end entry says so.
            seg.file.sync().map_err(io_err(&seg.name))?;
        }
        if idx_bytes != expected_idx && !self.read_only {
            let f = self.storage.open(&idx, true).map_err(io_err(&idx))?;
            write_index(&*f, &seg).map_err(io_err(&idx))?;
            if !is_last {
                f.sync().map_err(io_err(&idx))?;
            }
            self.report.indexes_rebuilt.push(idx);
        }
        self.segments.push(seg.clone());
        if is_last || cut {
            self.active = Some(self.activate(&seg)?);
        }
        Ok(cut)
    }
}

/// Rewrites a segment's whole index file from memory.
fn write_index(f: &dyn StorageFile, seg: &Segment) -> std::io::Result<()> {
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
