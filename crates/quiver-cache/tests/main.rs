//! Integration tests for quiver-cache: one binary, a module per concern.

mod changes;
mod evict;
mod hashes;
mod journal;
mod keys;
mod lists;
mod memory;
mod model;
mod scan;
mod sets;
mod strings;
mod ttl;
mod txn;
mod zsets;

use quiver_cache::{CacheConfig, Keyspace};

/// A fixed "now" (unix ms) so tests never read the clock.
pub const T0: u64 = 1_700_000_000_000;

/// A keyspace with a few shards, so multi-shard paths are exercised.
pub fn ks() -> Keyspace {
    Keyspace::new(CacheConfig {
        shards: 8,
        ..CacheConfig::default()
    })
    .expect("default config is valid")
}

/// Byte-string helper.
pub fn b(s: &str) -> &[u8] {
    s.as_bytes()
}
