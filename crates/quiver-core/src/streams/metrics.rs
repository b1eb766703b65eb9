//! Broker metrics: plain structs of atomic counters, updated once per publish call or per
//! batch (never per message per subscriber), read by the server's `/metrics` renderer.
//!
//! Totals are not kept in shared counters (that would put one contended cache line on
//! every publish of every stream); they are summed over the streams when read. A deleted
//! stream's counters are added to a retired total, so the sums never go backwards.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::streams::name::StreamName;
use crate::streams::policy::SlowPolicy;

/// Counters of one stream.
#[derive(Debug, Default)]
pub struct StreamMetrics {
    /// Messages taken by publishes (sequenced).
    pub published: AtomicU64,
    /// Delivery batches sealed.
    pub batches: AtomicU64,
    /// Events handed to subscriptions' consumers (counted once per subscription).
    pub delivered: AtomicU64,
    /// Events read from a durable stream's log for subscriptions catching up.
    pub history_delivered: AtomicU64,
    /// Events a subscription lost, per policy that lost them (indexed by [`SlowPolicy`]
    /// order: `drop_new`, `drop_old`, `block` (always 0), `disconnect`).
    pub dropped: [AtomicU64; 4],
    /// Subscriptions currently attached.
    pub subscribers: AtomicU64,
    /// The most events ever queued in one subscription's queue of this stream.
    pub queue_high_water: AtomicU64,
    /// Publishes that had to wait for room under `block`.
    pub blocked_publishes: AtomicU64,
    /// Publishes that gave up waiting under `block`.
    pub block_timeouts: AtomicU64,
}

impl StreamMetrics {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn dropped(&self, policy: SlowPolicy, events: u64) {
        Self::add(&self.dropped[policy.index()], events);
    }

    pub(crate) fn queue_depth(&self, events: u64) {
        self.queue_high_water.fetch_max(events, Ordering::Relaxed);
    }

    /// A point-in-time copy.
    pub fn snapshot(&self) -> StreamStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        StreamStats {
            published: load(&self.published),
            batches: load(&self.batches),
            delivered: load(&self.delivered),
            history_delivered: load(&self.history_delivered),
            dropped_new: load(&self.dropped[SlowPolicy::DropNew.index()]),
            dropped_old: load(&self.dropped[SlowPolicy::DropOld.index()]),
            dropped_disconnect: load(&self.dropped[SlowPolicy::Disconnect.index()]),
            subscribers: load(&self.subscribers),
            queue_high_water: load(&self.queue_high_water),
            blocked_publishes: load(&self.blocked_publishes),
            block_timeouts: load(&self.block_timeouts),
        }
    }
}

/// A copy of [`StreamMetrics`] at one moment, or the sum over streams.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Messages sequenced.
    pub published: u64,
    /// Delivery batches sealed.
    pub batches: u64,
    /// Events handed to consumers, once per subscription.
    pub delivered: u64,
    /// Events read from the log for subscriptions catching up.
    pub history_delivered: u64,
    /// Events lost under `drop_new`.
    pub dropped_new: u64,
    /// Events lost under `drop_old`.
    pub dropped_old: u64,
    /// Events discarded when `disconnect` ended a subscription.
    pub dropped_disconnect: u64,
    /// Subscriptions attached.
    pub subscribers: u64,
    /// Deepest queue seen, in events (for totals: the deepest of any stream).
    pub queue_high_water: u64,
    /// Publishes that waited under `block`.
    pub blocked_publishes: u64,
    /// Publishes that timed out under `block`.
    pub block_timeouts: u64,
}

impl StreamStats {
    /// Every event lost, whatever the policy.
    pub fn dropped(&self) -> u64 {
        self.dropped_new + self.dropped_old + self.dropped_disconnect
    }

    pub(crate) fn accumulate(&mut self, other: &StreamStats) {
        self.published += other.published;
        self.batches += other.batches;
        self.delivered += other.delivered;
        self.history_delivered += other.history_delivered;
        self.dropped_new += other.dropped_new;
        self.dropped_old += other.dropped_old;
        self.dropped_disconnect += other.dropped_disconnect;
        self.subscribers += other.subscribers;
        self.queue_high_water = self.queue_high_water.max(other.queue_high_water);
        self.blocked_publishes += other.blocked_publishes;
        self.block_timeouts += other.block_timeouts;
    }
}

/// Every stream's stats and the totals.
#[derive(Debug, Clone, Default)]
pub struct BrokerStats {
    /// Per stream, in name order.
    pub streams: Vec<(StreamName, StreamStats)>,
    /// Sums over all streams (`subscribers` counts attachments: a wildcard subscription
    /// counts once per stream it matches).
    pub totals: StreamStats,
    /// Subscriptions in the process.
    pub subscriptions: u64,
}
