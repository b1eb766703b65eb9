//! Reading committed records: a cursor over segments and batches, the iterator, the tailing
//! reader, and timestamp lookup.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::error::ReadError;
use crate::format::Header;
use crate::format::batch::plain_payload;
use crate::format::record::{RecordIter, split_headers};
use crate::log::Shared;
use crate::segment::{BatchScanner, ScanFault, ScannedBatch, Segment};

/// Records fetched per refill by the iterator and the tailing reader.
const REFILL_RECORDS: usize = 1024;
/// Value bytes fetched per refill by the iterator and the tailing reader.
const REFILL_BYTES: usize = 4 << 20;

/// A committed record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub offset: u64,
    pub timestamp_ms: i64,
    pub headers: Vec<Header>,
    pub value: Bytes,
}

/// Where a reader is: the next offset and, when known, its segment and batch position.
#[derive(Debug)]
pub struct Cursor {
    next: u64,
    at: Option<(Arc<Segment>, u64)>,
}

fn read_fault(segment: &Segment, f: ScanFault) -> ReadError {
    match f {
        ScanFault::Io { source, .. } => ReadError::Io {
            file: segment.name.clone(),
            source,
        },
        ScanFault::Bad { position, fault } => ReadError::Corrupt {
            file: segment.name.clone(),
            position,
            fault,
        },
        ScanFault::Incomplete { position } => ReadError::Corrupt {
            file: segment.name.clone(),
            position,
            fault: crate::format::batch::BatchFault::Records,
        },
    }
}

impl Cursor {
    pub fn new(from: u64) -> Cursor {
        Cursor {
            next: from,
            at: None,
        }
    }

    pub fn next_offset(&self) -> u64 {
        self.next
    }

    /// Finds the segment holding `self.next` and the index point to scan from.
    fn locate(&mut self, shared: &Shared) -> Result<(), ReadError> {
        let segs = shared
            .segments
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = segs.first().map_or(0, |s| s.base);
        if self.next < first {
            return Err(ReadError::Truncated {
                requested: self.next,
                first,
            });
        }
        let i = segs
            .partition_point(|s| s.base <= self.next)
            .saturating_sub(1);
        let seg = segs[i].clone();
        drop(segs);
        let (pos, _) = seg.seek(self.next);
        self.at = Some((seg, pos));
        Ok(())
    }

    /// Appends committed records from `next` to `out` within the limits.
    pub fn fill(
        &mut self,
        shared: &Shared,
        max_records: usize,
        max_bytes: usize,
        out: &mut Vec<Record>,
    ) -> Result<(), ReadError> {
        let end = shared.committed_next();
        if self.next > end {
            return Err(ReadError::OutOfRange {
                requested: self.next,
                end,
            });
        }
        let first = shared.first_offset();
        if self.next < first {
            return Err(ReadError::Truncated {
                requested: self.next,
                first,
            });
        }
        let (mut taken, mut bytes) = (0usize, 0usize);
        let want_more = |taken: usize, bytes: usize, next: u64| {
            next < end && taken < max_records && (bytes < max_bytes || taken == 0)
        };
        let mut relocated = false;
        while want_more(taken, bytes, self.next) {
            if self.at.is_none() {
                self.locate(shared)?;
            }
            let Some((seg, mut pos)) = self.at.clone() else {
                break;
            };
            let seg_end = seg.committed_len();
            if pos >= seg_end {
                // This segment holds nothing more: move on, once, to the one holding `next`.
                if relocated {
                    break;
                }
                relocated = true;
                self.at = None;
                continue;
            }
            relocated = false;
            let mut scanner = BatchScanner::new(&*seg.file, pos, seg_end);
            while want_more(taken, bytes, self.next) {
                let Some(batch) = scanner.next_batch().map_err(|f| read_fault(&seg, f))? else {
                    break;
                };
                if batch.header.next_offset() > self.next {
                    // A batch whose records turn out damaged gives none of them, so that
                    // what was handed out and `next` agree.
                    let before = out.len();
                    let pushed = push_records(
                        &batch,
                        self.next,
                        end,
                        max_records - taken,
                        max_bytes.saturating_sub(bytes),
                        out,
                        &seg,
                    )
                    .inspect_err(|_| out.truncate(before))?;
                    taken += pushed.taken;
                    bytes += pushed.bytes;
                    self.next = pushed.next;
                }
                if self.next < batch.header.next_offset() {
                    break;
                }
                pos = scanner.position();
            }
            self.at = Some((seg, pos));
        }
        Ok(())
    }
}

struct Pushed {
    taken: usize,
    bytes: usize,
    next: u64,
}

fn push_records(
    batch: &ScannedBatch,
    from: u64,
    end: u64,
    max_records: usize,
    max_bytes: usize,
    out: &mut Vec<Record>,
    seg: &Segment,
) -> Result<Pushed, ReadError> {
    let h = &batch.header;
    let corrupt = |fault| ReadError::Corrupt {
        file: seg.name.clone(),
        position: batch.position,
        fault,
    };
    let plain = plain_payload(h, batch.stored.clone()).map_err(corrupt)?;
    let mut p = Pushed {
        taken: 0,
        bytes: 0,
        next: from,
    };
    let mut offset = h.base_offset;
    let mut iter = RecordIter::new(plain, h.count);
    while offset < h.next_offset() {
        let rec = iter
            .next()
            .ok_or_else(|| corrupt(crate::format::batch::BatchFault::Records))?;
        if offset >= from {
            if offset >= end || p.taken >= max_records || (p.bytes >= max_bytes && p.taken > 0) {
                break;
            }
            p.bytes += rec.value.len();
            p.taken += 1;
            out.push(Record {
                offset,
                timestamp_ms: h.first_ts_ms.wrapping_add(rec.ts_delta_ms),
                headers: if rec.headers.is_empty() {
                    Vec::new()
                } else {
                    split_headers(&rec.headers)
                },
                value: rec.value,
            });
            p.next = offset + 1;
        }
        offset += 1;
    }
    Ok(p)
}

/// Iterates committed records without blocking; ends at the committed end. A read error
/// comes after every record read before it, and ends the iteration.
#[derive(Debug)]
pub struct LogIter {
    shared: Arc<Shared>,
    cursor: Cursor,
    pending: VecDeque<Record>,
    /// The error to return once `pending` is empty; then nothing more.
    error: Option<ReadError>,
    failed: bool,
}

impl LogIter {
    pub(crate) fn new(shared: Arc<Shared>, from: u64) -> LogIter {
        LogIter {
            shared,
            cursor: Cursor::new(from),
            pending: VecDeque::new(),
            error: None,
            failed: false,
        }
    }
}

impl Iterator for LogIter {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.pending.pop_front() {
            return Some(Ok(r));
        }
        if self.failed {
            return self.error.take().map(Err);
        }
        let mut out = Vec::new();
        if let Err(e) = self
            .cursor
            .fill(&self.shared, REFILL_RECORDS, REFILL_BYTES, &mut out)
        {
            self.failed = true;
            self.error = Some(e);
        }
        self.pending.extend(out);
        match self.pending.pop_front() {
            Some(r) => Some(Ok(r)),
            None => self.error.take().map(Err),
        }
    }
}

/// A reader that waits for new committed records (woken by the commit, no polling).
#[derive(Debug)]
pub struct Tail {
    shared: Arc<Shared>,
    cursor: Cursor,
    pending: VecDeque<Record>,
    /// Set for read-only logs: another process writes, so the tail follows the files.
    follow: Option<Arc<crate::log::Inner>>,
}

impl Tail {
    pub(crate) fn new(
        shared: Arc<Shared>,
        from: u64,
        follow: Option<Arc<crate::log::Inner>>,
    ) -> Tail {
        Tail {
            shared,
            cursor: Cursor::new(from),
            pending: VecDeque::new(),
            follow,
        }
    }

    /// Waits for a record beyond `next`: woken by the commit in-process, or by re-reading
    /// the files every `FOLLOW_POLL_MS` when another process writes.
    fn wait(&self, next: u64, timeout: Duration) -> Result<bool, ReadError> {
        let Some(inner) = &self.follow else {
            return Ok(self.shared.wait_beyond(next, timeout));
        };
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let end = crate::follow::refresh(inner).map_err(|e| ReadError::Io {
                file: "log directory".to_string(),
                source: std::io::Error::other(e.to_string()),
            })?;
            if end > next {
                return Ok(true);
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            std::thread::sleep(
                (deadline - now).min(Duration::from_millis(crate::follow::FOLLOW_POLL_MS)),
            );
        }
    }

    /// Offset of the next record this reader returns.
    pub fn position(&self) -> u64 {
        self.pending
            .front()
            .map_or(self.cursor.next_offset(), |r| r.offset)
    }

    /// The next record, waiting up to `timeout` for it; `Ok(None)` on timeout.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Record>, ReadError> {
        if let Some(r) = self.pending.pop_front() {
            return Ok(Some(r));
        }
        let next = self.cursor.next_offset();
        if self.shared.committed_next() <= next && !self.wait(next, timeout)? {
            return Ok(None);
        }
        let mut out = Vec::new();
        let filled = self
            .cursor
            .fill(&self.shared, REFILL_RECORDS, REFILL_BYTES, &mut out);
        self.pending.extend(out);
        // The records before an error first; the error comes again at the next refill.
        match (self.pending.pop_front(), filled) {
            (Some(r), _) => Ok(Some(r)),
            (None, filled) => filled.map(|()| None),
        }
    }
}

/// First committed offset whose timestamp is `>= ts_ms`.
pub(crate) fn offset_for_timestamp(shared: &Shared, ts_ms: i64) -> Result<Option<u64>, ReadError> {
    let end = shared.committed_next();
    for seg in shared.segments() {
        if seg.max_ts_ms.load(std::sync::atomic::Ordering::Acquire) < ts_ms || seg.base >= end {
            continue;
        }
        let (pos, _) = seg.seek_timestamp(ts_ms);
        let mut scanner = BatchScanner::new(&*seg.file, pos, seg.committed_len());
        while let Some(batch) = scanner.next_batch().map_err(|f| read_fault(&seg, f))? {
            let h = batch.header;
            let plain =
                plain_payload(&h, batch.stored.clone()).map_err(|fault| ReadError::Corrupt {
                    file: seg.name.clone(),
                    position: batch.position,
                    fault,
                })?;
            for (i, rec) in RecordIter::new(plain, h.count).enumerate() {
                let offset = h.base_offset + i as u64;
                if offset >= end {
                    return Ok(None);
                }
                if h.first_ts_ms.wrapping_add(rec.ts_delta_ms) >= ts_ms {
                    return Ok(Some(offset));
                }
            }
        }
    }
    Ok(None)
}
