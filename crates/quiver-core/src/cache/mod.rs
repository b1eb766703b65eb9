//! The cache facade: the one place where transports reach the keyspace.
//!
//! [`Cache`] owns the `quiver-cache` keyspace and what a Redis-like server builds around
//! it: database selection, handles for one command ([`Cache::db`]) or for a whole
//! MULTI/EXEC ([`Cache::transaction`]) with WATCH, clients blocked on list keys and their
//! wake-ups, lazy freeing of big values, active expiry, and a change feed (which key
//! changed, how, in which database) that notifications, client tracking and persistence
//! subscribe to ([`Cache::subscribe`]).
//!
//! Transports decode requests, run them through a [`Db`] handle, encode replies, and call
//! [`Cache::after_command`] after each command that may have written: it wakes the
//! clients blocked on keys that received data and hands the changes to the subscribers.
//! Errors are [`OpError`]s, one taxonomy that each transport maps to its own form (RESP
//! sends their text, the native protocol an error code).
//!
//! The keyspace operations themselves (`Db::set`, `Db::lpush`...) are `quiver-cache`'s,
//! re-exported here with the types they take and return.

pub mod aof;
mod blocking;
mod hold;
mod lazy_free;
pub mod persist;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use bytes::Bytes;
use quiver_cache::Keyspace;
use tokio::sync::Notify;

pub use quiver_cache::config::MAX_SAMPLES;
pub use quiver_cache::geo;
pub use quiver_cache::hll;
pub use quiver_cache::hll::self_test as hll_self_test;
pub use quiver_cache::keyspace::{Garbage, WarmTarget};
pub use quiver_cache::rdb::{self, RestoreOptions};
pub use quiver_cache::value::limits;
pub use quiver_cache::{
    Aggregate, BitField, BitOp, BitPosRange, BitRange, CacheConfig, Change, ChangeKind,
    ChangeOrigin, ClaimOptions, ConfigError, Db, Delivered, ENTRY_OVERHEAD_BYTES, Event,
    EventClasses, EvictionPolicy, ExpireCondition, FieldAction, GeoFound, GeoQuery, GeoSort,
    GeoStore, GeoView, GetExExpiry, GroupRead, GroupStart, HllDebug, HllDebugReply, Lcs, LcsMatch,
    LexBound, ListEnd, MAX_STRING_BYTES, OpError, Overflow, ScoreBound, SetCondition, SetExpiry,
    SetOptions, SortOptions, SortOutput, Stats, StreamAddId, StreamFields, StreamId, StreamTrim,
    StreamTrimTo, Transaction, ValueType, WatchedKey, ZAddCompare, ZAddCondition, ZAddOptions,
    ZAddReply, ZRangeBy, ZRangeSpec, ZSetOp, glob_match, lcs,
};

use blocking::Waiters;
pub use hold::{BUSY_TEXT, Hold};
use lazy_free::LazyFree;

/// How often expired keys are reclaimed in the background (Redis's `hz 10`).
const ACTIVE_EXPIRE_INTERVAL: Duration = Duration::from_millis(100);

/// Keys examined per active-expiry step: bounds the CPU of one step.
const ACTIVE_EXPIRE_BUDGET: usize = 2_000;

/// Receives the changes of each command, in the order they happened.
type Subscriber = Arc<dyn Fn(&[Change]) + Send + Sync>;

/// The cache of the node. Share it in an `Arc`.
pub struct Cache {
    keyspace: Keyspace,
    waiters: Waiters,
    lazy_free: LazyFree,
    subscribers: RwLock<Vec<(u64, Subscriber)>>,
    /// Whether anyone subscribes: the feed is on.
    feed_on: AtomicBool,
    /// Whether expired keys are reclaimed in the background (`DEBUG SET-ACTIVE-EXPIRE`).
    active_expire_on: AtomicBool,
    /// Taking and handing out changes happens under this lock, so subscribers see them in
    /// order even when two connections finish commands at once; it holds the id the next
    /// subscription gets.
    delivery: Mutex<u64>,
    persistence: persist::Persistence,
    aof: aof::AppendOnly,
    hold: Arc<Hold>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("keyspace", &self.keyspace)
            .field("feed_on", &self.feed_on.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Cache {
    /// An empty cache.
    pub fn new(config: CacheConfig) -> Result<Cache, ConfigError> {
        Ok(Cache {
            keyspace: Keyspace::new(config)?,
            waiters: Waiters::default(),
            lazy_free: LazyFree::default(),
            subscribers: RwLock::new(Vec::new()),
            feed_on: AtomicBool::new(false),
            active_expire_on: AtomicBool::new(true),
            delivery: Mutex::new(0),
            persistence: persist::Persistence::new(),
            aof: aof::AppendOnly::new(),
            hold: Arc::default(),
        })
    }

    /// Number of databases.
    pub fn databases(&self) -> usize {
        self.keyspace.databases()
    }

    /// The database `index` names, if it exists (`SELECT`).
    pub fn select(&self, index: i64) -> Result<usize, OpError> {
        usize::try_from(index)
            .ok()
            .filter(|&db| db < self.databases())
            .ok_or(OpError::DbOutOfRange)
    }

    /// A handle on database `db` for one command; it locks the shards each operation
    /// needs. `db` comes from [`Cache::select`].
    pub fn db(&self, db: usize) -> Result<Db<'_>, OpError> {
        self.keyspace.db(db)
    }

    /// Whether one holder (the script thread) has the keyspace for a while: check it before
    /// a command and wait on it rather than on a shard.
    pub fn hold(&self) -> &Arc<Hold> {
        &self.hold
    }

    /// Every shard locked, for a MULTI/EXEC: nothing interleaves with the operations run
    /// through [`Transaction::db`] until it is dropped.
    pub fn transaction(&self) -> Transaction<'_> {
        self.keyspace.transaction()
    }

    /// Starts watching `key` (WATCH); EXEC checks it with
    /// [`Transaction::watched_unchanged`]. Pair with [`Cache::unwatch`].
    pub fn watch(&self, db: usize, key: &[u8], now_ms: u64) -> Result<WatchedKey, OpError> {
        self.keyspace.watch(db, key, now_ms)
    }

    /// Stops watching a key.
    pub fn unwatch(&self, watched: &WatchedKey) {
        self.keyspace.unwatch(watched);
    }

    /// Loads the memory the lookups of a batch of requests will touch, so their cache
    /// misses overlap (see `quiver_cache::Keyspace::warm`).
    pub fn warm<'k>(&self, db: usize, targets: impl IntoIterator<Item = WarmTarget<'k>>) {
        self.keyspace.warm(db, targets);
    }

    /// Parks a client on `keys` of `db` (BLPOP and friends): `notify` is woken when one
    /// of them receives list data. Pair with [`Cache::unblock`].
    pub fn block(&self, db: usize, keys: &[Bytes], notify: &Arc<Notify>) {
        self.waiters.block(&self.keyspace, db, keys, notify);
    }

    /// Withdraws a [`Cache::block`].
    pub fn unblock(&self, db: usize, keys: &[Bytes], notify: &Arc<Notify>) {
        self.waiters.unblock(&self.keyspace, db, keys, notify);
    }

    /// Clients blocked now (`blocked_clients`).
    pub fn blocked_clients(&self) -> usize {
        self.waiters.blocked_clients()
    }

    /// After a command (or a MULTI/EXEC) that may have written: wakes the clients
    /// blocked on keys that received data, and hands what changed to the subscribers.
    /// Costs two atomic loads when there is nothing to do (three while someone
    /// subscribes).
    pub fn after_command(&self) {
        self.waiters.wake_ready(&self.keyspace);
        if self.feed_on.load(Ordering::Acquire) && self.keyspace.has_changes() {
            // Not delivered now (a held shard): the next call, or the reply's wait for
            // durability, delivers them.
            let _ = self.deliver_changes();
        }
    }

    /// Frees what `UNLINK` or `FLUSHDB`/`FLUSHALL ASYNC` removed: a heavy value on a
    /// background thread, a light one here.
    pub fn free_later(&self, garbage: Garbage) {
        self.lazy_free.free(garbage);
    }

    /// Keys waiting to be freed in the background (`lazyfree_pending_objects`).
    pub fn lazy_free_pending(&self) -> usize {
        self.lazy_free.pending_objects()
    }

    /// Keys freed in the background since the start (`lazyfreed_objects`).
    pub fn lazy_freed(&self) -> u64 {
        self.lazy_free.freed_objects()
    }

    /// Turns the background reclaiming of expired keys on or off (`DEBUG
    /// SET-ACTIVE-EXPIRE`); expired keys are still never served.
    pub fn set_active_expire(&self, on: bool) {
        self.active_expire_on.store(on, Ordering::Relaxed);
    }

    /// Reclaims expired keys in the background until the task is dropped, as Redis does
    /// ten times a second. Starts the background saves the `save` rules call for, and
    /// the rewrites of the append-only file its growth calls for, on the same beat.
    pub async fn run_active_expiry(
        self: Arc<Self>,
        now_ms: impl Fn() -> u64 + Copy + Send + 'static,
    ) {
        let mut ticker = tokio::time::interval(ACTIVE_EXPIRE_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            self.save_if_due(now_ms(), now_ms);
            self.rewrite_if_due(now_ms);
            if !self.active_expire_on.load(Ordering::Relaxed) {
                continue;
            }
            self.keyspace.active_expire(now_ms(), ACTIVE_EXPIRE_BUDGET);
            self.after_command();
        }
    }

    /// Calls `subscriber` with the changes of every later command, in order, on the
    /// thread that ran the command (or a later command's, when the append-only file had
    /// to wait for a held shard), until the returned subscription is dropped. Keep it
    /// short (the command's reply waits for it), and do not call the cache, subscribe or
    /// drop a subscription from it (the delivery lock is held). A subscriber that panics
    /// misses that batch; the command and the other subscribers go on.
    pub fn subscribe(
        self: &Arc<Self>,
        subscriber: impl Fn(&[Change]) + Send + Sync + 'static,
    ) -> ChangeSubscription {
        let mut next_id = self.lock_delivery();
        let id = *next_id;
        *next_id += 1;
        let mut subscribers = self.write_subscribers();
        if subscribers.is_empty() {
            // Delivery first, recording second: no change is recorded that the command
            // recording it would not hand over.
            self.feed_on.store(true, Ordering::Release);
            self.keyspace.set_change_feed(true);
        }
        subscribers.push((id, Arc::new(subscriber)));
        ChangeSubscription {
            cache: Arc::clone(self),
            id,
        }
    }

    /// Hands the changes recorded so far to the journal and the subscribers; `false`
    /// when the journal could not read a key's state (a script or transaction holds its
    /// shard): the changes from that one on are put back for a later call.
    fn deliver_changes(&self) -> bool {
        let _order = self.lock_delivery();
        let mut changes = self.keyspace.take_changes();
        if changes.is_empty() {
            return true;
        }
        let mut complete = true;
        if self.aof.enabled()
            && let Some(journaled) = self.journal_changes(&changes)
        {
            self.keyspace.put_back_changes(changes.split_off(journaled));
            complete = false;
        }
        let subscribers: Vec<Subscriber> = self
            .subscribers
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(_, subscriber)| Arc::clone(subscriber))
            .collect();
        for subscriber in subscribers {
            // A subscriber that panics loses this batch; the others and the command do not.
            let delivered =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| subscriber(&changes)));
            if delivered.is_err() {
                tracing::error!(changes = changes.len(), "a change-feed subscriber panicked");
            }
        }
        complete
    }

    fn lock_delivery(&self) -> std::sync::MutexGuard<'_, u64> {
        self.delivery
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write_subscribers(&self) -> std::sync::RwLockWriteGuard<'_, Vec<(u64, Subscriber)>> {
        self.subscribers
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The counters (`INFO stats`, `INFO keyspace`).
    pub fn stats(&self) -> Stats {
        self.keyspace.stats()
    }

    /// Zeroes the counters (`CONFIG RESETSTAT`).
    pub fn reset_stats(&self) {
        self.keyspace.reset_stats();
    }

    /// Bytes the keyspace holds.
    pub fn used_memory(&self) -> usize {
        self.keyspace.used_memory()
    }

    /// Evicts until used memory is within `maxmemory`; `Err(OutOfMemory)` when it
    /// cannot (the check Redis makes before a command that may grow memory).
    pub fn make_room(&self, now_ms: u64) -> Result<(), OpError> {
        self.keyspace.make_room(now_ms)
    }

    /// `maxmemory`; 0 means no limit.
    pub fn max_memory_bytes(&self) -> u64 {
        self.keyspace.max_memory_bytes()
    }

    /// Changes `maxmemory`; the next write evicts down to it.
    pub fn set_max_memory_bytes(&self, bytes: u64) {
        self.keyspace.set_max_memory_bytes(bytes);
    }

    /// `maxmemory-policy`.
    pub fn policy(&self) -> EvictionPolicy {
        self.keyspace.policy()
    }

    /// Changes `maxmemory-policy`.
    pub fn set_policy(&self, policy: EvictionPolicy) {
        self.keyspace.set_policy(policy);
    }

    /// Selects the keyspace events the change feed carries (`notify-keyspace-events`);
    /// [`crate::pubsub::PubSub::set_notify_events`] publishes them.
    pub fn set_notify_events(&self, classes: EventClasses) {
        self.keyspace.set_notify_events(classes);
    }

    /// The keyspace events selected.
    pub fn notify_events(&self) -> EventClasses {
        self.keyspace.notify_events()
    }

    /// `maxmemory-samples`.
    pub fn max_memory_samples(&self) -> usize {
        self.keyspace.max_memory_samples()
    }

    /// `lfu-log-factor` and `lfu-decay-time` (minutes).
    pub fn lfu_settings(&self) -> (u32, u32) {
        self.keyspace.lfu_settings()
    }

    /// Changes `lfu-log-factor` and `lfu-decay-time`.
    pub fn set_lfu_settings(&self, log_factor: u32, decay_time_min: u32) {
        self.keyspace.set_lfu_settings(log_factor, decay_time_min);
    }

    /// Changes `maxmemory-samples` (1 to 64).
    pub fn set_max_memory_samples(&self, samples: usize) -> Result<(), ConfigError> {
        self.keyspace.set_max_memory_samples(samples)
    }

    /// `hll-sparse-max-bytes`: the size past which a sparse HyperLogLog turns dense.
    pub fn hll_sparse_max_bytes(&self) -> usize {
        self.keyspace.hll_sparse_max_bytes()
    }

    /// Changes `hll-sparse-max-bytes`.
    pub fn set_hll_sparse_max_bytes(&self, bytes: usize) {
        self.keyspace.set_hll_sparse_max_bytes(bytes);
    }
}

/// A subscription to the change feed; dropping it unsubscribes, and the last one turns
/// the feed off.
pub struct ChangeSubscription {
    cache: Arc<Cache>,
    id: u64,
}

impl std::fmt::Debug for ChangeSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeSubscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for ChangeSubscription {
    fn drop(&mut self) {
        let cache = &self.cache;
        let _order = cache.lock_delivery();
        let mut subscribers = cache.write_subscribers();
        subscribers.retain(|(id, _)| *id != self.id);
        if subscribers.is_empty() && !cache.aof.enabled() {
            cache.feed_on.store(false, Ordering::Release);
            cache.keyspace.set_change_feed(false);
        }
    }
}
