//! `quiver-log`: Quiver's storage engine, a segmented append-only log with consumer-group
//! offsets, usable as an embedded library.
//!
//! It owns segments of CRC32C-framed record batches, the sparse index, recovery, the
//! durability modes, retention, per-batch compression, consumer-group offsets and shard
//! picking. It never uses tokio or sockets, and never acknowledges more than its
//! durability mode promises: see `docs/log-format.md` for every byte and crash case.
//!
//! Key design decision: one writer encodes batches into a reused in-process buffer (no
//! allocation per record, no syscall in `Buffered`), and publishes a *committed* end that
//! readers never pass; in `Sync` mode concurrent appenders share one fsync (group commit).
//! All I/O goes through the [`storage::Storage`] trait so the same code runs on files, in
//! memory, and on a fault-injecting backend that simulates crashes.
//!
//! # Example
//!
//! ```no_run
//! use quiver_log::{Durability, Log, LogConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let log = Log::open("/var/lib/app/events".as_ref(), LogConfig {
//!     durability: Durability::Sync,
//!     ..LogConfig::default()
//! })?;
//! let offset = log.append(b"order 42 shipped")?; // returns after the fsync covering it
//! for record in log.read(offset, 100, 1 << 20)? {
//!     println!("{} {:?}", record.offset, record.value);
//! }
//! log.commit_group("billing", offset + 1)?;
//! # Ok(())
//! # }
//! ```
//!
//! Lock order (outermost first): group-commit state is never held while taking the writer
//! lock; writer lock -> segment index lock / segment list lock; groups lock -> segment
//! list lock (retention only).
#![forbid(unsafe_code)]

pub mod config;
pub mod durability;
pub mod error;
pub mod follow;
pub mod format;
pub mod groups;
pub mod lock;
pub mod log;
pub mod read;
pub mod recovery;
pub mod retention;
pub mod segment;
pub mod set;
pub mod shard;
pub mod stats;
pub mod storage;
pub mod tools;
pub mod watermark;
pub mod writer;

pub use config::{
    Clock, Compression, Durability, LogConfig, ManualClock, RecoveryMode, SystemClock,
};
pub use error::{
    AppendError, ConfigError, GroupError, OpenError, ReadError, RecoveryError, SyncError,
};
pub use format::Header;
pub use groups::{GroupState, ResetTo};
pub use log::Log;
pub use read::{LogIter, Record, Tail};
pub use recovery::{RecoveryReport, Truncation, TruncationReason};
pub use retention::{RetentionPolicy, RetentionReport, RetentionThread};
pub use set::{LogSet, SetRetention};
pub use shard::pick_shard;
pub use stats::Stats;
pub use writer::NewRecord;
