//! Counters for INFO: per-shard plain integers (no atomics on the hot path), summed on
//! demand into a [`Stats`] snapshot.

/// Counters one shard keeps under its lock.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ShardStats {
    pub(crate) keyspace_hits: u64,
    pub(crate) keyspace_misses: u64,
    pub(crate) expired_keys: u64,
    pub(crate) evicted_keys: u64,
    /// Keys written, created, removed or given a TTL (Redis's `dirty` counter).
    pub(crate) changes: u64,
}

impl ShardStats {
    pub(crate) fn add(&mut self, o: &ShardStats) {
        self.keyspace_hits += o.keyspace_hits;
        self.keyspace_misses += o.keyspace_misses;
        self.expired_keys += o.expired_keys;
        self.evicted_keys += o.evicted_keys;
        self.changes += o.changes;
    }
}

/// Keys in one database, for INFO keyspace (`db0:keys=..,expires=..`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DbStats {
    /// Keys stored (expired-but-unreclaimed keys included, as Redis counts them).
    pub keys: usize,
    /// Keys with a TTL.
    pub expires: usize,
    /// The mean expiry time (Unix ms) of a sample of the keys with a TTL (up to
    /// [`TTL_SAMPLE`] per shard, spread over each shard's keys); 0 without any.
    pub mean_expire_at_ms: u64,
}

/// Keys with a TTL sampled per shard for [`DbStats::mean_expire_at_ms`].
pub const TTL_SAMPLE: usize = 16;

impl DbStats {
    /// The mean time to live of the keys with one (INFO's `avg_ttl`), estimated from the
    /// sample; 0 without any, as Redis reports it.
    pub fn avg_ttl_ms(&self, now_ms: u64) -> u64 {
        self.mean_expire_at_ms.saturating_sub(now_ms)
    }
}

/// A snapshot of the keyspace's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Per database, indexed by database number.
    pub dbs: Vec<DbStats>,
    /// Lookups by read commands that found their key.
    pub keyspace_hits: u64,
    /// Lookups by read commands that did not.
    pub keyspace_misses: u64,
    /// Keys deleted because their TTL passed (lazily or actively).
    pub expired_keys: u64,
    /// Keys deleted to stay under `max_memory`.
    pub evicted_keys: u64,
    /// Changes to keys since start (writes, new keys, removals, TTL changes), what
    /// snapshot rules count.
    pub changes: u64,
    /// Bytes held now (see [`crate::Keyspace::used_memory`]).
    pub used_memory: usize,
    /// The highest `used_memory` observed.
    pub used_memory_peak: usize,
}
