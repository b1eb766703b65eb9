//! `quiver-cache`: Quiver's in-memory keyspace behind the Redis-compatible cache.
//!
//! It owns typed values (strings with an integer fast path, hashes, lists, sets, sorted
//! sets), 16 (configurable) numbered databases, TTLs in milliseconds with lazy and active
//! expiry, `max_memory` with Redis's eight eviction policies, memory accounting modelled on
//! the real allocator, SCAN cursors, and the counters INFO reports. Every operation is a
//! typed method on [`Db`] with Redis 7's semantics and typed [`OpError`]s whose text is
//! Redis's reply.
//!
//! It never does I/O, never speaks RESP, never spawns threads and never reads the clock: the
//! caller passes `now_ms` (unix milliseconds) to every operation, which makes TTL and
//! eviction deterministic in tests. Randomness comes from seeded per-shard generators.
//!
//! # Design
//!
//! The key design decision is sharding with one `std::sync::Mutex` per shard: a key's hash
//! picks its shard, so GET/SET hash once and lock once, and two cores serve requests without
//! a global lock. Each shard holds one table per database (see [`table`]): items stored
//! densely (uniform random sampling for eviction and expiry) with an open-addressing index
//! whose layout keeps Redis's reverse-binary SCAN guarantee across resizes. A string key
//! and its value share one allocation; an entry is 40 bytes (about 155 bytes per key in all
//! for 16-byte keys with 64-byte values, measured against RSS).
//!
//! # Example
//!
//! ```
//! use quiver_cache::{CacheConfig, Keyspace, SetOptions};
//!
//! let ks = Keyspace::new(CacheConfig::default()).expect("defaults are valid");
//! let now_ms = 1_700_000_000_000;
//! let mut db = ks.db(0).expect("database 0 exists");
//! db.set(b"greeting", b"hello", SetOptions::default(), now_ms).unwrap();
//! // Zero-copy read: the closure runs under the shard lock.
//! let len = db.get_with(b"greeting", now_ms, |v| v.map(<[u8]>::len)).unwrap();
//! assert_eq!(len, Some(5));
//! assert_eq!(db.incr_by(b"hits", 1, now_ms), Ok(1));
//!
//! // WATCH hits / MULTI / INCR hits / EXEC
//! let watched = ks.watch(0, b"hits", now_ms).unwrap();
//! let mut txn = ks.transaction();
//! if txn.watched_unchanged(std::slice::from_ref(&watched), now_ms) {
//!     txn.db(0).unwrap().incr_by(b"hits", 1, now_ms).unwrap();
//! }
//! drop(txn);
//! ks.unwatch(&watched);
//! assert_eq!(ks.db(0).unwrap().get(b"hits", now_ms).unwrap().as_deref(), Some(&b"2"[..]));
//! ```
//!
//! # What the server drives
//!
//! * [`Keyspace::active_expire`] periodically (Redis runs its cycle 10 times a second) with a
//!   budget of keys to examine; lazy expiry on access does the rest.
//! * Blocking pops: register waiters with [`Keyspace::block_on`]; pushes (LPUSH, LMOVE,
//!   RENAME onto the key...) record registered keys as ready, [`Keyspace::take_ready_keys`]
//!   hands them out, and the waiter layer retries with [`Db::pop_first`] or [`Db::lmove`].
//! * MULTI/EXEC/WATCH: [`Keyspace::watch`], then [`Keyspace::transaction`] and
//!   [`Transaction::watched_unchanged`] before running the queued commands through
//!   [`Transaction::db`].
//! * INFO: [`Keyspace::stats`]; CONFIG SET: [`Keyspace::set_max_memory_bytes`],
//!   [`Keyspace::set_policy`], [`Keyspace::set_max_memory_samples`].
//!
//! # Lock order
//!
//! 1. Shard mutexes are always taken in ascending shard index. Single-key operations take
//!    one; multi-key operations (MSET, RENAME, SINTERSTORE, LMOVE...) compute every shard they
//!    touch and lock them all in ascending order before reading anything, which makes them
//!    atomic; [`Keyspace::transaction`] locks all shards in order for MULTI/EXEC.
//! 2. The eviction-pool mutex is a leaf: it is taken with or without shard locks held, but
//!    no other lock is ever acquired while it is held.
//!
//! Eviction runs before a write takes its own shard locks (or, inside a transaction, on the
//! shards the transaction already holds), so it never waits on a lock its caller holds.

pub mod chunks;
pub mod config;
pub mod error;
pub mod evict;
pub mod expire;
pub mod geo;
pub mod glob;
pub mod hashed_table;
pub mod hll;
pub mod keyspace;
pub mod memory;
pub mod rdb;
pub mod rng;
pub mod scan;
pub mod stats;
pub mod table;
pub mod value;

mod commands;

pub use commands::*;
pub use config::{CacheConfig, EvictionPolicy};
pub use error::{ConfigError, OpError};
pub use expire::ExpireReport;
pub use glob::glob_match;
pub use keyspace::{
    Change, ChangeKind, ChangeOrigin, Db, Event, EventClasses, Keyspace, Transaction, WatchedKey,
};
pub use stats::{DbStats, Stats};
pub use value::ValueType;
pub use value::stream::{Fields as StreamFields, StreamId, TrimTo as StreamTrimTo};
pub use value::zset::{LexBound, ScoreBound};

/// Largest string value or key, as Redis's default `proto-max-bulk-len` (512 MiB).
pub const MAX_STRING_BYTES: usize = 512 * 1024 * 1024;
