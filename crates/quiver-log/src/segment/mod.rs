//! One segment: a `.log` file of batches, its sparse index, and what readers may see of it.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::format::IndexEntry;
use crate::storage::FileHandle;

mod chunks;
pub mod scan;
pub mod sealer;

pub use scan::{BatchScanner, ScanFault, ScannedBatch};

/// Digits in a segment file name: enough for any `u64`, so names sort like offsets.
const NAME_DIGITS: usize = 20;

/// `<base>.log`, zero-padded to 20 digits.
pub fn segment_name(base: u64) -> String {
    format!("{base:020}.log")
}

/// `<base>.idx`, zero-padded to 20 digits.
pub fn index_name(base: u64) -> String {
    format!("{base:020}.idx")
}

/// The base offset of a segment file name, if it is one.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".log")?;
    if digits.len() != NAME_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A segment shared by the writer and readers.
#[derive(Debug)]
pub struct Segment {
    pub base: u64,
    pub name: String,
    pub file: FileHandle,
    /// Bytes readers may read: every batch below is committed.
    pub committed_len: AtomicU64,
    /// Sparse index; the writer appends, readers binary-search.
    pub index: RwLock<Vec<IndexEntry>>,
    /// Largest record timestamp written to the segment.
    pub max_ts_ms: AtomicI64,
    /// Offset after the segment's last record (for sealed segments exact; for the active
    /// one, what the writer has appended so far).
    pub end_offset: AtomicU64,
}

impl Segment {
    pub fn new(
        base: u64,
        file: FileHandle,
        index: Vec<IndexEntry>,
        len: u64,
        end_offset: u64,
        max_ts_ms: i64,
    ) -> Segment {
        Segment {
            base,
            name: segment_name(base),
            file,
            committed_len: AtomicU64::new(len),
            index: RwLock::new(index),
            max_ts_ms: AtomicI64::new(max_ts_ms),
            end_offset: AtomicU64::new(end_offset),
        }
    }

    pub fn committed_len(&self) -> u64 {
        self.committed_len.load(Ordering::Acquire)
    }

    /// Byte position of the last index point at or before `offset` (which is in this
    /// segment), and that point's offset.
    pub fn seek(&self, offset: u64) -> (u64, u64) {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        let rel = offset.saturating_sub(self.base);
        let i = index.partition_point(|e| u64::from(e.rel_offset) <= rel);
        match i.checked_sub(1).and_then(|i| index.get(i)) {
            Some(e) => (u64::from(e.position), self.base + u64::from(e.rel_offset)),
            None => (0, self.base),
        }
    }

    /// Byte position of the last index point whose preceding records are all older than
    /// `ts_ms`, and that point's offset.
    pub fn seek_timestamp(&self, ts_ms: i64) -> (u64, u64) {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        let i = index.partition_point(|e| e.max_ts_before_ms < ts_ms);
        match i.checked_sub(1).and_then(|i| index.get(i)) {
            Some(e) => (u64::from(e.position), self.base + u64::from(e.rel_offset)),
            None => (0, self.base),
        }
    }

    pub fn index_len(&self) -> usize {
        self.index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_like_offsets_and_parse_back() {
        assert_eq!(segment_name(81920), "00000000000000081920.log");
        assert_eq!(parse_segment_name(&segment_name(u64::MAX)), Some(u64::MAX));
        assert_eq!(parse_segment_name("0000000000000081920.log"), None);
        assert_eq!(parse_segment_name("00000000000000081920.idx"), None);
        assert!(segment_name(9) < segment_name(10));
    }
}
