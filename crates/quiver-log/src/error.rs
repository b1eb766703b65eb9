//! Typed errors, one enum per operation family.

use std::io;

use crate::format::batch::BatchFault;

/// A configuration value outside its allowed range.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("{key} = {value} is not allowed; allowed range is {min}..={max}")]
    OutOfRange {
        key: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
}

/// Failure to open a log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(
        "log directory {dir} is locked by another writer (pid {holder}); open it read-only or stop that process"
    )]
    Locked { dir: String, holder: String },
    #[error(transparent)]
    Recovery(#[from] RecoveryError),
    #[error("I/O error opening {what}: {source}")]
    Io { what: String, source: io::Error },
}

/// Recovery found something it will not repair on its own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecoveryError {
    #[error(
        "corruption in {file} at byte {position}: {fault}; open in salvage mode to truncate there (data after it is lost)"
    )]
    Corrupt {
        file: String,
        position: u64,
        fault: String,
    },
    #[error(
        "segment {file} starts at offset {found} but the previous segment ends at {expected}; open in salvage mode to drop the segments from there"
    )]
    Gap {
        file: String,
        expected: u64,
        found: u64,
    },
    #[error(
        "committed watermark says offsets below {watermark} are durable, but the data ends at {end}: acknowledged records are missing; open in salvage mode to accept it"
    )]
    WatermarkAhead { watermark: u64, end: u64 },
    #[error(
        "the committed watermark (committed.wm) is unreadable: {fault}; open in salvage mode to go on without it (it is written again)"
    )]
    Watermark { fault: String },
    #[error("consumer group file {file} is corrupt: {fault}")]
    Group { file: String, fault: String },
    #[error("I/O error recovering {file}: {source}")]
    Io { file: String, source: io::Error },
}

/// Failure to append.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    #[error("the log is poisoned by an earlier storage failure ({cause}); reopen it to recover")]
    Poisoned { cause: String },
    #[error("the log is open read-only")]
    ReadOnly,
    #[error("the log is closed")]
    Closed,
    #[error("an append needs at least one record")]
    Empty,
    #[error(
        "batch of {records} records and {bytes} plain bytes exceeds the limit of {limit} bytes; {}",
        if *records > 1 { "split it" } else { "one record cannot be larger" }
    )]
    TooLarge {
        records: usize,
        bytes: usize,
        limit: usize,
    },
    #[error("header key of {len} bytes exceeds the limit of 65535")]
    HeaderKey { len: usize },
    #[error("storage failure writing {file}: {source}; the log is now poisoned")]
    Io { file: String, source: io::Error },
}

/// Failure to read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    #[error("offset {requested} was removed by retention; the first offset is {first}")]
    Truncated { requested: u64, first: u64 },
    #[error("offset {requested} is beyond the end of the log ({end})")]
    OutOfRange { requested: u64, end: u64 },
    #[error("corruption in {file} at byte {position}: {fault}")]
    Corrupt {
        file: String,
        position: u64,
        fault: BatchFault,
    },
    #[error("I/O error reading {file}: {source}")]
    Io { file: String, source: io::Error },
}

/// Failure of a consumer-group operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GroupError {
    #[error(
        "group name {name:?} is invalid: use 1-128 bytes of A-Z a-z 0-9 . _ - not starting with '.'"
    )]
    Name { name: String },
    #[error(
        "group {group} is at offset {current}; committing {requested} would go backwards (use reset to move back)"
    )]
    Backwards {
        group: String,
        current: u64,
        requested: u64,
    },
    #[error("offset {requested} is beyond the end of the log ({end})")]
    OutOfRange { requested: u64, end: u64 },
    #[error(
        "offset {requested} is before the start of the log ({first}): retention deleted it; reset to {first} or later"
    )]
    BeforeStart { requested: u64, first: u64 },
    #[error("the log is open read-only")]
    ReadOnly,
    #[error("storage failure writing group {group}: {source}")]
    Io { group: String, source: io::Error },
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Failure of a flush, sync, close or retention run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    #[error("the log is poisoned by an earlier storage failure ({cause}); reopen it to recover")]
    Poisoned { cause: String },
    #[error("storage failure on {file}: {source}; the log is now poisoned")]
    Io { file: String, source: io::Error },
    #[error("the log is open read-only: only its writer deletes segments")]
    ReadOnly,
}

impl From<SyncError> for AppendError {
    fn from(e: SyncError) -> AppendError {
        match e {
            SyncError::Poisoned { cause } => AppendError::Poisoned { cause },
            SyncError::Io { file, source } => AppendError::Io { file, source },
            SyncError::ReadOnly => AppendError::ReadOnly,
        }
    }
}
