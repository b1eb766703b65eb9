//! Typed configuration of one log, with documented defaults, and the clock it reads.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::ConfigError;
use crate::format::MAX_BATCH_PLAIN_BYTES;

/// Smallest segment size: keeps tests able to rotate often without degenerate files.
pub const MIN_SEGMENT_BYTES: u64 = 4 << 10;
/// Largest segment size: index positions are `u32`, and it bounds one file's recovery scan.
pub const MAX_SEGMENT_BYTES: u64 = 1 << 30;
/// Largest in-process write buffer; beyond this there is no throughput gain, only memory.
pub const MAX_WRITE_BUFFER_BYTES: usize = 64 << 20;

// A segment may overshoot its size by one batch; index positions are `u32`.
const _: () = assert!(MAX_SEGMENT_BYTES + MAX_BATCH_PLAIN_BYTES as u64 + 64 <= u32::MAX as u64);
/// Most records in one segment: the index's `rel_offset` keeps bit 31 for the END flag. A
/// segment rotates before it would hold more (compressed records can take well under the
/// 16 bytes a plain one costs, so its size alone does not bound them).
pub const MAX_SEGMENT_RECORDS: u64 = (1 << 31) - 1;
const _: () = assert!(MIN_SEGMENT_BYTES < MAX_SEGMENT_BYTES);

/// When an append returns, and what a crash may lose (see docs/ARCHITECTURE.md, "Durability").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Returns after the copy into the in-process buffer; the buffer is written at
    /// `flush()`, when full, and on rotation. Readers see records once written.
    Buffered,
    /// Returns after `write(2)`; the OS decides when to persist.
    Os,
    /// Returns after `write(2)`; a background thread fsyncs every `interval_ms`.
    Interval { interval_ms: u64 },
    /// Returns after the fsync covering the record; concurrent appenders share one fsync.
    Sync,
}

/// Per-batch payload compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Never compress.
    None,
    /// lz4 for batches whose plain payload is at least `min_bytes`, when it saves space.
    Lz4 { min_bytes: usize },
}

/// What open does with corruption that is not a torn tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryMode {
    /// Refuse to open, naming the file and byte position.
    Strict,
    /// Truncate at the first corruption, delete later segments, and report it.
    Salvage,
}

/// Source of wall-clock milliseconds (record timestamps, segment age, retention).
pub trait Clock: Send + Sync + Debug {
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

/// A clock tests move by hand.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(now_ms: i64) -> ManualClock {
        ManualClock(AtomicI64::new(now_ms))
    }
    pub fn set(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Configuration of one log.
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// Default `Os`: nothing is lost when the process dies, at no fsync cost.
    pub durability: Durability,
    /// Rotate when the active segment would exceed this. Default 64 MiB: a sealed segment
    /// is the unit of retention; recovery only scans the tail of the last one.
    pub segment_max_bytes: u64,
    /// Rotate when the active segment's first record is this old. Default none.
    pub segment_max_age_ms: Option<u64>,
    /// Reserve `segment_max_bytes` of disk when a segment is created. Default true.
    pub preallocate: bool,
    /// Bytes of data between sparse index entries. Default 4 KiB: a seek scans at most
    /// this much after a binary search.
    pub index_interval_bytes: u32,
    /// In-process buffer for `Buffered` (and the group-commit buffer of `Sync`). Default
    /// 1 MiB: large writes, small memory.
    pub write_buffer_bytes: usize,
    /// Default `None`: compression costs CPU on the append path; enable it per log.
    pub compression: Compression,
    /// Default `Strict`.
    pub recovery: RecoveryMode,
    /// Epoch stamped on written batches. Default 0 (single node).
    pub epoch: u64,
    /// Default the system clock.
    pub clock: Arc<dyn Clock>,
}

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig {
            durability: Durability::Os,
            segment_max_bytes: 64 << 20,
            segment_max_age_ms: None,
            preallocate: true,
            index_interval_bytes: 4 << 10,
            write_buffer_bytes: 1 << 20,
            compression: Compression::None,
            recovery: RecoveryMode::Strict,
            epoch: 0,
            clock: Arc::new(SystemClock),
        }
    }
}

impl LogConfig {
    /// Checks every value against its allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(MIN_SEGMENT_BYTES..=MAX_SEGMENT_BYTES).contains(&self.segment_max_bytes) {
            return Err(ConfigError::OutOfRange {
                key: "segment_max_bytes",
                value: self.segment_max_bytes,
                min: MIN_SEGMENT_BYTES,
                max: MAX_SEGMENT_BYTES,
            });
        }
        if self.index_interval_bytes == 0 {
            return Err(ConfigError::OutOfRange {
                key: "index_interval_bytes",
                value: 0,
                min: 1,
                max: u64::from(u32::MAX),
            });
        }
        if self.write_buffer_bytes > MAX_WRITE_BUFFER_BYTES {
            return Err(ConfigError::OutOfRange {
                key: "write_buffer_bytes",
                value: self.write_buffer_bytes as u64,
                min: 0,
                max: MAX_WRITE_BUFFER_BYTES as u64,
            });
        }
        if let Durability::Interval { interval_ms: 0 } = self.durability {
            return Err(ConfigError::OutOfRange {
                key: "durability.interval_ms",
                value: 0,
                min: 1,
                max: u64::MAX,
            });
        }
        if let Some(age) = self.segment_max_age_ms
            && !(1..=i64::MAX as u64).contains(&age)
        {
            return Err(ConfigError::OutOfRange {
                key: "segment_max_age_ms",
                value: age,
                min: 1,
                max: i64::MAX as u64,
            });
        }
        if let Compression::Lz4 { min_bytes } = self.compression
            && min_bytes > MAX_BATCH_PLAIN_BYTES
        {
            return Err(ConfigError::OutOfRange {
                key: "compression.min_bytes",
                value: min_bytes as u64,
                min: 0,
                max: MAX_BATCH_PLAIN_BYTES as u64,
            });
        }
        Ok(())
    }
}
