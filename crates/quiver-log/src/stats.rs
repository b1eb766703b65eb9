//! Counters the log keeps, and a snapshot of them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Number of fsync latency buckets: bucket `i` counts fsyncs of `[2^i, 2^(i+1))` µs, the
/// last bucket everything slower (about 1 s and up).
pub const FSYNC_BUCKETS: usize = 21;

/// Live counters, updated with relaxed atomics (they are statistics, not synchronization).
#[derive(Debug, Default)]
pub struct Counters {
    pub appends: AtomicU64,
    pub records: AtomicU64,
    pub bytes: AtomicU64,
    pub batches: AtomicU64,
    pub plain_bytes: AtomicU64,
    pub stored_bytes: AtomicU64,
    pub fsyncs: AtomicU64,
    pub fsync_us: AtomicU64,
    pub fsync_buckets: [AtomicU64; FSYNC_BUCKETS],
    pub segments_created: AtomicU64,
    pub recovery_truncations: AtomicU64,
    pub recovery_truncated_bytes: AtomicU64,
    pub retention_deleted_segments: AtomicU64,
    pub retention_deleted_bytes: AtomicU64,
    pub retention_forced_deletions: AtomicU64,
}

impl Counters {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Records one fsync that took `us` microseconds.
    pub fn fsync_done(&self, us: u64) {
        Counters::add(&self.fsyncs, 1);
        Counters::add(&self.fsync_us, us);
        let bucket = (63 - us.max(1).leading_zeros() as usize).min(FSYNC_BUCKETS - 1);
        Counters::add(&self.fsync_buckets[bucket], 1);
    }
}

/// A snapshot of a log's statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub appends: u64,
    pub records: u64,
    /// Record value bytes appended.
    pub bytes: u64,
    pub batches: u64,
    pub fsyncs: u64,
    /// Time spent in fsyncs, µs.
    pub fsync_us: u64,
    /// `fsync_histogram_us[i]` counts fsyncs of `[2^i, 2^(i+1))` µs; the last bucket
    /// counts every longer one too.
    pub fsync_histogram_us: [u64; FSYNC_BUCKETS],
    pub segments: u64,
    pub segments_created: u64,
    /// Plain batch payload bytes / stored batch payload bytes (1.0 without compression).
    pub compression_ratio: f64,
    pub recovery_truncations: u64,
    pub recovery_truncated_bytes: u64,
    pub retention_deleted_segments: u64,
    pub retention_deleted_bytes: u64,
    /// Segments deleted by the hard cap although a group had not acknowledged them.
    pub retention_forced_deletions: u64,
}

impl Stats {
    pub(crate) fn from_counters(c: &Counters, segments: u64) -> Stats {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let plain = l(&c.plain_bytes);
        let stored = l(&c.stored_bytes);
        Stats {
            appends: l(&c.appends),
            records: l(&c.records),
            bytes: l(&c.bytes),
            batches: l(&c.batches),
            fsyncs: l(&c.fsyncs),
            fsync_us: l(&c.fsync_us),
            fsync_histogram_us: std::array::from_fn(|i| l(&c.fsync_buckets[i])),
            segments,
            segments_created: l(&c.segments_created),
            compression_ratio: if stored == 0 {
                1.0
            } else {
                plain as f64 / stored as f64
            },
            recovery_truncations: l(&c.recovery_truncations),
            recovery_truncated_bytes: l(&c.recovery_truncated_bytes),
            retention_deleted_segments: l(&c.retention_deleted_segments),
            retention_deleted_bytes: l(&c.retention_deleted_bytes),
            retention_forced_deletions: l(&c.retention_forced_deletions),
        }
    }

    /// Approximate fsync latency percentile (upper bound of its bucket), in µs.
    pub fn fsync_percentile_us(&self, p: f64) -> Option<u64> {
        let total: u64 = self.fsync_histogram_us.iter().sum();
        if total == 0 {
            return None;
        }
        let want = ((total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.fsync_histogram_us.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Some(1u64 << (i + 1));
            }
        }
        None
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "appends {} records {} bytes {} batches {}",
            self.appends, self.records, self.bytes, self.batches
        )?;
        writeln!(
            f,
            "fsyncs {} p50 <= {:?} us p99 <= {:?} us",
            self.fsyncs,
            self.fsync_percentile_us(0.5),
            self.fsync_percentile_us(0.99)
        )?;
        writeln!(
            f,
            "segments {} (created {}) compression ratio {:.2}",
            self.segments, self.segments_created, self.compression_ratio
        )?;
        writeln!(
            f,
            "recovery truncations {} ({} bytes)",
            self.recovery_truncations, self.recovery_truncated_bytes
        )?;
        write!(
            f,
            "retention deleted {} segments ({} bytes), {} forced by the hard cap",
            self.retention_deleted_segments,
            self.retention_deleted_bytes,
            self.retention_forced_deletions
        )
    }
}
