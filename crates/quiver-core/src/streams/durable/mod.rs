//! Durable streams: a stream backed by one `quiver-log` in the data directory.
//!
//! What changes for a durable stream, and what does not:
//!
//! - **Offsets.** A message's sequence number is its log offset, assigned when the publish
//!   is taken and kept across restarts.
//! - **Acks.** `committed` returns once the message is in the log with the stream's
//!   durability (`sync`: after the fsync that covers it, shared by every publisher queued
//!   meanwhile); `accepted` and `none` return once it is taken (see [`appender`]).
//! - **Live delivery** is the same as on a live stream (batching, encode-once, queues,
//!   slow-subscriber policies, lag notices), fed with what was appended: subscribers never
//!   see a message the log does not hold.
//! - **History.** A subscription may start at `earliest`, an offset or a time; it reads
//!   the log and joins live delivery with no gap and no duplicate (see [`history`]).
//! - **Retention** deletes old segments by age, size and count, keeping what a consumer
//!   group still needs when asked to.
//! - **De-duplication** of retried publishes by message id (see [`dedupe`]).

mod appender;
mod config;
mod dedupe;
pub(crate) mod history;
mod store;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quiver_log::{Log, Stats};
use tokio::sync::watch;

use crate::streams::groups::group::Group;

pub(crate) use appender::{DurableState, lead, stop, take};
pub use config::{
    DurabilityName, DurableConfig, DurableConfigError, DurableRule, MAX_DEDUPE_IDS,
    MAX_DEDUPE_WINDOW, MAX_INTERVAL_MS, MAX_MSG_ID_BYTES, MAX_SEGMENT_BYTES, MIN_SEGMENT_BYTES,
    MSG_ID_HEADER, Retention, StorageConfig, durability_name, parse_durability,
};
pub use dedupe::message_id;
pub use history::{HistoryError, Page};
pub use quiver_log::{Durability, RecoveryMode};
pub(crate) use store::Store;
pub use store::StoreError;

/// How far a durable stream's appends have got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Every offset below this is stored with the stream's durability and handed to
    /// fan-out.
    pub(crate) end: u64,
    /// Why appends stopped, if they did.
    pub(crate) failed: Option<Arc<str>>,
}

/// Counters of a durable stream's appends (the log keeps its own: fsyncs, bytes on disk).
#[derive(Debug, Default)]
pub(crate) struct DurableCounters {
    appended: AtomicU64,
    appended_bytes: AtomicU64,
    rounds: AtomicU64,
    round_us: AtomicU64,
    duplicates: AtomicU64,
}

/// The durable part of one stream.
pub(crate) struct Durable {
    pub(crate) log: Arc<Log>,
    pub(crate) config: DurableConfig,
    /// The stream's consumer groups by name.
    pub(crate) groups: Mutex<BTreeMap<String, Arc<Group>>>,
    progress: watch::Sender<Progress>,
    counters: DurableCounters,
}

impl Durable {
    pub(crate) fn new(log: Log, config: DurableConfig) -> Self {
        let end = log.committed_offset();
        Self {
            log: Arc::new(log),
            config,
            groups: Mutex::default(),
            progress: watch::Sender::new(Progress { end, failed: None }),
            counters: DurableCounters::default(),
        }
    }

    /// The offset the next append gets.
    pub(crate) fn next_offset(&self) -> u64 {
        self.log.next_offset()
    }

    /// The first offset a reader may start at: the log's first, or the start of the newest
    /// `max_messages` when that is later (but never past what a group has not
    /// acknowledged, when the stream keeps that).
    pub(crate) fn first_offset(&self) -> u64 {
        let first = self.log.first_offset();
        let retention = &self.config.retention;
        let Some(max) = retention.max_messages else {
            return first;
        };
        let mut start = self.log.committed_offset().saturating_sub(max);
        if retention.keep_unacked
            && let Some(floor) = self.group_floor()
        {
            start = start.min(floor);
        }
        first.max(start)
    }

    /// The lowest offset a group of the stream has not acknowledged, if it has groups.
    pub(crate) fn group_floor(&self) -> Option<u64> {
        crate::streams::lock(&self.groups)
            .values()
            .map(|group| group.state().floor())
            .min()
    }

    /// The offset after the last stored message, as group dispatchers see it.
    pub(crate) fn stored_end(&self) -> u64 {
        self.progress.borrow().end
    }

    /// Told whenever the stored end moves or appends fail.
    pub(crate) fn progress(&self) -> watch::Receiver<Progress> {
        self.progress.subscribe()
    }

    /// An append round stored everything below `end`.
    pub(crate) fn stored(&self, end: u64, messages: u64, bytes: u64, took: Duration) {
        let c = &self.counters;
        c.appended.fetch_add(messages, Ordering::Relaxed);
        c.appended_bytes.fetch_add(bytes, Ordering::Relaxed);
        c.rounds.fetch_add(1, Ordering::Relaxed);
        c.round_us.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.progress.send_modify(|p| p.end = p.end.max(end));
    }

    /// Appends failed for good (the log is poisoned until the server restarts).
    pub(crate) fn fail(&self, message: Arc<str>) {
        self.progress.send_modify(|p| p.failed = Some(message));
    }

    pub(crate) fn count_duplicates(&self, n: u64) {
        if n > 0 {
            self.counters.duplicates.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// A point-in-time view.
    pub(crate) fn stats(&self) -> DurableStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let c = &self.counters;
        let first = self.first_offset();
        // Appended, with what a `buffered` log still holds in memory.
        let end = self.log.next_offset();
        DurableStats {
            durability: self.config.durability,
            first_offset: first,
            next_offset: end,
            stored_messages: end.saturating_sub(first),
            stored_bytes: self.log.size_bytes(),
            appended: load(&c.appended),
            appended_bytes: load(&c.appended_bytes),
            append_rounds: load(&c.rounds),
            append_round_us: load(&c.round_us),
            duplicates: load(&c.duplicates),
            failed: self.progress.borrow().failed.as_deref().map(str::to_owned),
            log: self.log.stats(),
        }
    }
}

/// What a durable stream holds and has done.
#[derive(Debug, Clone, PartialEq)]
pub struct DurableStats {
    /// The stream's durability mode.
    pub durability: Durability,
    /// The first offset a reader may start at.
    pub first_offset: u64,
    /// The offset after the last stored message.
    pub next_offset: u64,
    /// Messages stored (readable): `next_offset - first_offset`.
    pub stored_messages: u64,
    /// Bytes of the log's segments on disk.
    pub stored_bytes: u64,
    /// Messages appended since start-up.
    pub appended: u64,
    /// Payload and header bytes appended since start-up.
    pub appended_bytes: u64,
    /// Append rounds (each one write and, under `sync`, one fsync).
    pub append_rounds: u64,
    /// Time spent in append rounds, in µs.
    pub append_round_us: u64,
    /// Publishes dropped as duplicates of a stored message id.
    pub duplicates: u64,
    /// Why appends stopped, if they did.
    pub failed: Option<String>,
    /// The log's own statistics (fsync latency histogram, segments, retention).
    pub log: Stats,
}
