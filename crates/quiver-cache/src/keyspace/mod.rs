//! The keyspace: numbered databases over lock shards.
//!
//! A key's 64-bit hash picks its shard (bits 32..) and its slot in that shard's table (bits
//! ..32), so a single-key operation hashes once and takes one shard mutex. [`Db`] is the
//! handle every operation goes through; it either locks shards itself ([`Keyspace::db`]) or
//! works on shards a [`Transaction`] already holds, so each operation is written once.

mod changes;
mod db;
mod entry;
pub(crate) mod events;
mod garbage;
mod shard;
mod txn;
mod warm;

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};

use foldhash::fast::FixedState;

pub use changes::{Change, ChangeKind, ChangeOrigin};
pub(crate) use db::HeldShards;
pub use db::{Db, ShardSet};
pub(crate) use entry::Entry;
pub use events::{Event, EventClasses};
pub use garbage::{Garbage, LAZY_FREE_ELEMENTS};
pub(crate) use shard::DbTable;
pub use shard::Shard;
pub use txn::{Transaction, WatchedKey};
pub use warm::WarmTarget;

use crate::config::{CacheConfig, EvictionPolicy, MAX_SAMPLES};
use crate::error::{ConfigError, OpError};
use crate::evict::{Clock, EvictionPool};
use crate::stats::{DbStats, ShardStats, Stats, TTL_SAMPLE};
use changes::ChangeLog;

/// A shard's mutex and its published memory figure, padded to its own cache lines so two
/// cores working on neighbouring shards do not share a line.
#[repr(align(128))]
pub(crate) struct ShardCell {
    pub(crate) lock: Mutex<Shard>,
    pub(crate) mem: AtomicUsize,
}

/// Locks a shard. A panic while a shard was locked leaves it consistent at the level of
/// single operations (each keeps its own invariants before it can panic), so a poisoned lock
/// is taken over rather than turned into a panic in every later request.
///
/// A contended shard is spun on for up to [`LOCK_SPIN_TRIES`] attempts before the thread
/// sleeps: a shard is held for a single command (microseconds), so waiting that out on the
/// CPU is cheaper than a sleep and a wake-up, which on a hot key (every client pushing to
/// one list) would cost both threads a context switch per command.
pub(crate) fn lock(m: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    lock_spinning(m).unwrap_or_else(|| m.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The spin of [`lock`] without the sleep after it: `None` when the shard stays held
/// longer than a command holds one (a script or a transaction holds the keyspace), for
/// work that must never wait on such a hold.
pub(crate) fn lock_spinning(m: &Mutex<Shard>) -> Option<MutexGuard<'_, Shard>> {
    (0..LOCK_SPIN_TRIES).find_map(|_| match m.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => {
            std::hint::spin_loop();
            None
        }
    })
}

/// Attempts to take a contended shard before sleeping on it: with a pause between tries,
/// about 10-30 µs, longer than any single-key command holds a shard.
const LOCK_SPIN_TRIES: u32 = 256;

// The server shares one keyspace between threads and keeps WATCH state per connection.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Keyspace>();
    assert_send_sync::<WatchedKey>();
};

/// The whole keyspace; share it between threads by reference (it is `Sync`).
pub struct Keyspace {
    pub(crate) shards: Box<[ShardCell]>,
    shard_mask: usize,
    state: FixedState,
    pub(crate) databases: usize,
    max_memory_bytes: AtomicU64,
    policy: AtomicU8,
    samples: AtomicUsize,
    /// `hll-sparse-max-bytes`.
    hll_sparse_max: AtomicUsize,
    lfu_log_factor: AtomicU32,
    lfu_decay_time_min: AtomicU32,
    peak_bytes: AtomicUsize,
    ready_pending: AtomicBool,
    changes: Arc<ChangeLog>,
    expire_cursor: AtomicUsize,
    pub(crate) pool: Mutex<EvictionPool>,
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyspace")
            .field("shards", &self.shards.len())
            .field("databases", &self.databases)
            .field("used_memory", &self.used_memory())
            .finish()
    }
}

impl Keyspace {
    /// An empty keyspace.
    pub fn new(config: CacheConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        let state = FixedState::with_seed(config.seed);
        let shards = (0..config.shards)
            .map(|i| ShardCell {
                lock: Mutex::new(Shard::new(
                    config.databases,
                    config.seed ^ (i as u64).wrapping_mul(0x9E37_79B9),
                    state.clone(),
                )),
                mem: AtomicUsize::new(0),
            })
            .collect();
        Ok(Self {
            shards,
            shard_mask: config.shards - 1,
            state,
            databases: config.databases,
            max_memory_bytes: AtomicU64::new(config.max_memory_bytes),
            policy: AtomicU8::new(config.policy.code()),
            samples: AtomicUsize::new(config.max_memory_samples),
            hll_sparse_max: AtomicUsize::new(crate::hll::DEFAULT_SPARSE_MAX_BYTES),
            lfu_log_factor: AtomicU32::new(config.lfu_log_factor),
            lfu_decay_time_min: AtomicU32::new(config.lfu_decay_time_min),
            peak_bytes: AtomicUsize::new(0),
            ready_pending: AtomicBool::new(false),
            changes: Arc::default(),
            expire_cursor: AtomicUsize::new(0),
            pool: Mutex::new(EvictionPool::default()),
        })
    }

    /// A handle on database `db` that locks shards per operation.
    pub fn db(&self, db: usize) -> Result<Db<'_>, OpError> {
        if db >= self.databases {
            return Err(OpError::DbOutOfRange);
        }
        Ok(Db::free(self, db))
    }

    /// Number of databases.
    pub fn databases(&self) -> usize {
        self.databases
    }

    /// Evicts until used memory is within `max_memory`, as before a write; fails with
    /// OOM when the policy is `noeviction` or nothing more may be evicted (Redis checks
    /// this before a command that may grow memory, and before queueing in MULTI).
    pub fn make_room(&self, now_ms: u64) -> Result<(), OpError> {
        crate::evict::make_room(&mut Db::free(self, 0), now_ms)
    }

    /// Locks every shard (in ascending order) for a MULTI/EXEC block. While the returned
    /// transaction lives, the same thread must go through [`Transaction::db`] only: the
    /// keyspace's own locking methods (`db`, `stats`, `watch`...) would wait on it forever.
    pub fn transaction(&self) -> Transaction<'_> {
        Transaction::new(self, self.shards.iter().map(|c| lock(&c.lock)).collect())
    }

    /// Bytes held by keys, values and the tables that index them, modelled on the real
    /// allocator (see [`crate::memory`]).
    pub fn used_memory(&self) -> usize {
        let used = self
            .shards
            .iter()
            .map(|c| c.mem.load(Ordering::Relaxed))
            .sum();
        // Read before writing so the common case (no new peak) writes no shared line.
        if used > self.peak_bytes.load(Ordering::Relaxed) {
            self.peak_bytes.fetch_max(used, Ordering::Relaxed);
        }
        used
    }

    /// The `max_memory` bound in bytes (0 = none).
    pub fn max_memory_bytes(&self) -> u64 {
        self.max_memory_bytes.load(Ordering::Relaxed)
    }

    /// Changes the `max_memory` bound (CONFIG SET maxmemory).
    pub fn set_max_memory_bytes(&self, bytes: u64) {
        self.max_memory_bytes.store(bytes, Ordering::Relaxed);
    }

    /// The eviction policy.
    pub fn policy(&self) -> EvictionPolicy {
        EvictionPolicy::from_code(self.policy.load(Ordering::Relaxed))
    }

    /// Changes the eviction policy (CONFIG SET maxmemory-policy).
    pub fn set_policy(&self, policy: EvictionPolicy) {
        self.policy.store(policy.code(), Ordering::Relaxed);
    }

    /// Keys sampled per eviction round.
    pub fn max_memory_samples(&self) -> usize {
        self.samples.load(Ordering::Relaxed)
    }

    /// Changes the keys sampled per eviction round (CONFIG SET maxmemory-samples).
    pub fn set_max_memory_samples(&self, samples: usize) -> Result<(), ConfigError> {
        if samples == 0 || samples > MAX_SAMPLES {
            return Err(ConfigError::Samples {
                value: samples,
                max: MAX_SAMPLES,
            });
        }
        self.samples.store(samples, Ordering::Relaxed);
        Ok(())
    }

    /// Redis's `lfu-log-factor` and `lfu-decay-time` (minutes).
    pub fn lfu_settings(&self) -> (u32, u32) {
        (
            self.lfu_log_factor.load(Ordering::Relaxed),
            self.lfu_decay_time_min.load(Ordering::Relaxed),
        )
    }

    /// Changes `lfu-log-factor` and `lfu-decay-time`.
    pub fn set_lfu_settings(&self, log_factor: u32, decay_time_min: u32) {
        self.lfu_log_factor.store(log_factor, Ordering::Relaxed);
        self.lfu_decay_time_min
            .store(decay_time_min, Ordering::Relaxed);
    }

    /// The size past which a sparse HyperLogLog turns dense (`hll-sparse-max-bytes`).
    pub fn hll_sparse_max_bytes(&self) -> usize {
        self.hll_sparse_max.load(Ordering::Relaxed)
    }

    /// Changes `hll-sparse-max-bytes`.
    pub fn set_hll_sparse_max_bytes(&self, bytes: usize) {
        self.hll_sparse_max.store(bytes, Ordering::Relaxed);
    }

    fn check_db(&self, db: usize) -> Result<(), OpError> {
        if db >= self.databases {
            return Err(OpError::DbOutOfRange);
        }
        Ok(())
    }

    /// Registers interest in `key` from a client about to block on it (BLPOP and friends).
    pub fn block_on(&self, db: usize, key: &[u8]) -> Result<(), OpError> {
        self.check_db(db)?;
        let (shard, _) = self.route(key);
        lock(&self.shards[shard].lock).block(db, key);
        Ok(())
    }

    /// Withdraws one [`Keyspace::block_on`] registration.
    pub fn unblock(&self, db: usize, key: &[u8]) -> Result<(), OpError> {
        self.check_db(db)?;
        let (shard, _) = self.route(key);
        lock(&self.shards[shard].lock).unblock(db, key);
        Ok(())
    }

    /// Keys that blocked clients wait on and that received data (or were deleted, given
    /// another type, or lost a stream group) since the last call, as (database, key); the
    /// waiter layer retries its commands for these. Cheap when empty.
    pub fn take_ready_keys(&self) -> Vec<(usize, Vec<u8>)> {
        // A plain load first: the common "nothing ready" case then never
        // writes the shared cache line that both cores read.
        if !self.ready_pending.load(Ordering::Acquire)
            || !self.ready_pending.swap(false, Ordering::AcqRel)
        {
            return Vec::new();
        }
        let mut out = Vec::new();
        for c in self.shards.iter() {
            out.append(&mut lock(&c.lock).ready);
        }
        out
    }

    /// Turns the change feed on or off. While it is on, every change to a key is recorded
    /// for [`Keyspace::take_changes`]; turning it off drops what was not taken.
    pub fn set_change_feed(&self, on: bool) {
        for cell in self.shards.iter() {
            lock(&cell.lock).feed = on.then(|| Arc::clone(&self.changes));
        }
        if !on {
            drop(self.changes.take());
        }
    }

    /// Selects the keyspace events the change feed records beside the changes
    /// (`notify-keyspace-events`); none by default.
    pub fn set_notify_events(&self, classes: EventClasses) {
        self.changes.set_events(classes);
    }

    /// The keyspace events selected.
    pub fn notify_events(&self) -> EventClasses {
        self.changes.events()
    }

    /// The changes recorded since the last call, in the order they happened. Cheap when
    /// there are none.
    pub fn take_changes(&self) -> Vec<Change> {
        self.changes.take()
    }

    /// Puts back changes [`Keyspace::take_changes`] gave that could not be handed out
    /// yet; the next call gives them first.
    pub fn put_back_changes(&self, changes: Vec<Change>) {
        self.changes.put_back(changes);
    }

    /// Whether a change made by `origin` (a [`ChangeOrigin`]) waits to be taken.
    pub fn has_changes_from(&self, origin: u64) -> bool {
        self.changes.pending_from(origin)
    }

    /// Whether changes wait for [`Keyspace::take_changes`] (one atomic load).
    pub fn has_changes(&self) -> bool {
        self.changes.pending()
    }

    /// Starts watching `key` for a later [`Transaction::watched_unchanged`]; pair with
    /// [`Keyspace::unwatch`].
    pub fn watch(&self, db: usize, key: &[u8], now_ms: u64) -> Result<WatchedKey, OpError> {
        self.check_db(db)?;
        let (shard, hash) = self.route(key);
        let mut s = lock(&self.shards[shard].lock);
        let version = s.watch(db, key);
        let expired = s.dbs[db]
            .table
            .find(hash, key)
            .is_some_and(|idx| s.is_expired(db, idx, now_ms));
        Ok(WatchedKey {
            db,
            key: key.to_vec(),
            shard,
            hash,
            version,
            expired_at_watch: expired,
        })
    }

    /// Stops watching a key.
    pub fn unwatch(&self, w: &WatchedKey) {
        lock(&self.shards[w.shard].lock).unwatch(w.db, &w.key);
    }

    /// A snapshot of the counters (locks each shard briefly in turn).
    pub fn stats(&self) -> Stats {
        let mut total = ShardStats::default();
        let mut dbs = vec![DbStats::default(); self.databases];
        // Per database, the sum and count of the sampled expiry times.
        let mut sampled = vec![(0u128, 0u128); self.databases];
        for c in self.shards.iter() {
            let s = lock(&c.lock);
            total.add(&s.stats);
            for (d, t) in s.dbs.iter().enumerate() {
                dbs[d].keys += t.table.len();
                dbs[d].expires += t.volatile.len();
                let step = t.volatile.len().div_ceil(TTL_SAMPLE).max(1);
                for v in t.volatile.iter().step_by(step) {
                    sampled[d].0 += u128::from(v.expire_at_ms);
                    sampled[d].1 += 1;
                }
                // (Keys already due but not yet removed are in the sample too: INFO's
                // average is an estimate, and they are few.)
            }
        }
        for (db, (sum, count)) in dbs.iter_mut().zip(sampled) {
            db.mean_expire_at_ms = sum.checked_div(count).map_or(0, |mean| mean as u64);
        }
        let used = self.used_memory();
        Stats {
            dbs,
            keyspace_hits: total.keyspace_hits,
            keyspace_misses: total.keyspace_misses,
            expired_keys: total.expired_keys,
            evicted_keys: total.evicted_keys,
            changes: total.changes,
            used_memory: used,
            used_memory_peak: self.peak_bytes.load(Ordering::Relaxed).max(used),
        }
    }

    /// Zeroes hits, misses, expired and evicted counters and the peak (CONFIG RESETSTAT).
    pub fn reset_stats(&self) {
        for c in self.shards.iter() {
            let mut s = lock(&c.lock);
            // The change count is not a statistic: snapshot rules go by it.
            s.stats = ShardStats {
                changes: s.stats.changes,
                ..ShardStats::default()
            };
        }
        self.peak_bytes.store(0, Ordering::Relaxed);
    }

    /// The number of key changes since start, or `None` when a shard stays held past a
    /// short spin (a script or transaction holding it): for periodic checks that must
    /// never wait on a lock.
    pub fn changes_now(&self) -> Option<u64> {
        let mut total = 0;
        for c in self.shards.iter() {
            total += lock_spinning(&c.lock)?.stats.changes;
        }
        Some(total)
    }

    /// Keys changed since the start (what the `save` rules count).
    pub fn changes(&self) -> u64 {
        self.shards
            .iter()
            .map(|c| lock(&c.lock).stats.changes)
            .sum()
    }

    /// Removes every key of every database (FLUSHALL).
    pub fn flush_all(&self) {
        drop(Db::free(self, 0).flushall());
    }

    pub(crate) fn route(&self, key: &[u8]) -> (usize, u64) {
        let hash = self.state.hash_one(key);
        (((hash >> 32) as usize) & self.shard_mask, hash)
    }

    pub(crate) fn shard_count(&self) -> usize {
        self.shards.len()
    }

    pub(crate) fn clock(&self, now_ms: u64) -> Clock {
        Clock {
            now_ms,
            lfu: self.policy().is_lfu(),
            log_factor: self.lfu_log_factor.load(Ordering::Relaxed),
            decay_time_min: self.lfu_decay_time_min.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn note_ready(&self) {
        self.ready_pending.store(true, Ordering::Release);
    }

    pub(crate) fn next_shard_hint(&self) -> usize {
        self.expire_cursor.fetch_add(1, Ordering::Relaxed) & self.shard_mask
    }

    /// The shard, unless another thread holds it.
    pub(crate) fn try_lock_shard(&self, idx: usize) -> Option<MutexGuard<'_, Shard>> {
        match self.shards[idx].lock.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    pub(crate) fn publish_mem(&self, idx: usize, mem: usize) {
        self.shards[idx].mem.store(mem, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{ListEnd, SetExpiry, SetOptions, ZAddOptions};
    use crate::rng::Rng;

    /// Random mixed operations never let the incremental memory figure drift from a recount.
    #[test]
    fn memory_accounting_never_drifts() {
        let ks = Keyspace::new(CacheConfig {
            shards: 4,
            ..CacheConfig::default()
        })
        .unwrap();
        let mut rng = Rng::new(9);
        let now = 1_700_000_000_000u64;
        for step in 0..20_000u64 {
            let mut db = ks.db(rng.below(2)).unwrap();
            let k = format!("k{}", rng.below(50));
            let k2 = format!("k{}", rng.below(50));
            let v = vec![b'x'; rng.below(100)];
            let t = now + step;
            let _ = match rng.below(16) {
                0 => db
                    .set(k.as_bytes(), &v, SetOptions::default(), t)
                    .map(|_| ()),
                1 => {
                    let o = SetOptions {
                        expiry: SetExpiry::AtMs(t + rng.below(50) as u64),
                        ..Default::default()
                    };
                    db.set(k.as_bytes(), &v, o, t).map(|_| ())
                }
                2 => db.append(k.as_bytes(), &v, t).map(|_| ()),
                3 => db.incr_by(k.as_bytes(), 3, t).map(|_| ()),
                4 => db.hset(k.as_bytes(), &[(k2.as_bytes(), &v)], t).map(|_| ()),
                5 => db.hdel(k.as_bytes(), &[k2.as_bytes()], t).map(|_| ()),
                6 => db
                    .push(k.as_bytes(), &[&v], ListEnd::Left, false, t)
                    .map(|_| ()),
                7 => db.pop(k.as_bytes(), ListEnd::Right, Some(2), t).map(|_| ()),
                8 => db.sadd(k.as_bytes(), &[k2.as_bytes()], t).map(|_| ()),
                9 => db.spop(k.as_bytes(), Some(1), t).map(|_| ()),
                10 => db
                    .zadd(
                        k.as_bytes(),
                        &[(step as f64, k2.as_bytes())],
                        ZAddOptions::default(),
                        t,
                    )
                    .map(|_| ()),
                11 => db.zpop(k.as_bytes(), 1, false, t).map(|_| ()),
                12 => db.rename(k.as_bytes(), k2.as_bytes(), false, t).map(|_| ()),
                13 => db
                    .copy(k.as_bytes(), k2.as_bytes(), Some(1), true, t)
                    .map(|_| ()),
                14 => {
                    db.del(&[k.as_bytes()], t);
                    Ok(())
                }
                _ => {
                    ks.active_expire(t, 50);
                    Ok(())
                }
            };
        }
        for (i, c) in ks.shards.iter().enumerate() {
            let s = lock(&c.lock);
            assert_eq!(s.mem, s.recount_mem(), "shard {i} drifted");
            assert_eq!(c.mem.load(Ordering::Relaxed), s.mem);
        }
        ks.flush_all();
        assert_eq!(ks.used_memory(), 0);
    }
}
