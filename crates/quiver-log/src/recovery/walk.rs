//! Walking the segments in offset order: trust, scan, cut, drop, and pick the active one.

use std::sync::Arc;

use crate::config::{LogConfig, RecoveryMode};
use crate::error::RecoveryError;
use crate::format::{BatchHeader, HEADER_BYTES, INDEX_ENTRY_BYTES, INDEX_HEADER_BYTES, IndexEntry};
use crate::segment::scan::{find_valid_batch_after, zeros_to_end};
use crate::segment::{ScanFault, Segment, index_name, segment_name};
use crate::storage::Storage;

use super::scan::{io_err, scan, write_index};
use super::{ActiveState, RecoveryReport, Truncation, TruncationReason};

pub(super) struct Recovery<'a> {
    pub(super) storage: &'a dyn Storage,
    pub(super) config: &'a LogConfig,
    pub(super) read_only: bool,
    pub(super) report: RecoveryReport,
    pub(super) segments: Vec<Arc<Segment>>,
    pub(super) active: Option<ActiveState>,
    /// Whether the last segment processed was trusted through a durable end entry.
    pub(super) last_sealed: bool,
    /// Offsets below this were promised durable by a `sync()`; strict mode refuses to cut
    /// below it (before cutting anything).
    pub(super) watermark: Option<u64>,
}

impl Recovery<'_> {
    pub(super) fn run(&mut self, bases: &[u64]) -> Result<(), RecoveryError> {
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
        let zeros_at = s.fault.as_ref().map(ScanFault::position);
        if let Some(p) = zeros_at
            && zeros_to_end(&*file, p, len).map_err(io_err(&name))?
        {
            // Zeros written ahead of the data: the data ends here. Cut them, so that the
            // file's length is the end of its data again.
            s.fault = None;
            data_len = p;
            if !self.read_only {
                file.truncate(p)
                    .and_then(|()| file.sync())
                    .map_err(io_err(&name))?;
            }
        }
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
