//! MULTI/EXEC: a [`Transaction`] holds every shard lock (taken in ascending order), so the
//! queued commands run with nothing interleaved, as in Redis. WATCH is a per-key modification
//! counter kept only for watched keys: [`Keyspace::watch`] reads it, every write to the key
//! bumps it, and [`Transaction::watched_unchanged`] compares.

use std::sync::MutexGuard;

use super::{Db, HeldShards, Keyspace, Shard};
use crate::error::OpError;

/// A key being watched, with the counter value seen at WATCH time.
#[derive(Debug, Clone)]
pub struct WatchedKey {
    pub(crate) db: usize,
    pub(crate) key: Vec<u8>,
    pub(crate) shard: usize,
    pub(crate) hash: u64,
    pub(crate) version: u64,
    pub(crate) expired_at_watch: bool,
}

impl WatchedKey {
    /// The watched key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Its database.
    pub fn db(&self) -> usize {
        self.db
    }
}

/// Every shard locked; operations through [`Transaction::db`] run atomically together.
pub struct Transaction<'k> {
    ks: &'k Keyspace,
    guards: Vec<MutexGuard<'k, Shard>>,
    over_memory_ok: bool,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").finish_non_exhaustive()
    }
}

impl<'k> Transaction<'k> {
    pub(crate) fn new(ks: &'k Keyspace, guards: Vec<MutexGuard<'k, Shard>>) -> Self {
        Self {
            ks,
            guards,
            over_memory_ok: false,
        }
    }

    /// Lets every operation of the transaction write over `max_memory`, as Redis runs
    /// the commands of an EXEC (it checks memory when they are queued and at EXEC).
    pub fn allow_over_memory(&mut self) {
        self.over_memory_ok = true;
    }

    /// A handle on database `db` inside the transaction.
    pub fn db(&mut self, db: usize) -> Result<Db<'_>, OpError> {
        if db >= self.ks.databases() {
            return Err(OpError::DbOutOfRange);
        }
        let (ks, over_memory_ok) = (self.ks, self.over_memory_ok);
        let mut handle = Db::held(ks, self, db);
        if over_memory_ok {
            handle.allow_over_memory();
        }
        Ok(handle)
    }

    /// [`Keyspace::make_room`] with the shards held: evicts until used memory is within
    /// `max_memory`, or fails with OOM (never in a transaction allowed over memory).
    pub fn make_room(&mut self, now_ms: u64) -> Result<(), OpError> {
        self.db(0)?.make_room(now_ms)
    }

    /// Whether no watched key was modified (or expired) since it was watched; EXEC runs the
    /// queued commands only when this is true.
    pub fn watched_unchanged(&mut self, watched: &[WatchedKey], now_ms: u64) -> bool {
        watched.iter().all(|w| {
            let s = &self.guards[w.shard];
            if s.watch_version(w.db, &w.key) != Some(w.version) {
                return false;
            }
            let expired_now = s.dbs[w.db]
                .table
                .find(w.hash, &w.key)
                .is_some_and(|idx| s.is_expired(w.db, idx, now_ms));
            !expired_now || w.expired_at_watch
        })
    }
}

impl HeldShards for Transaction<'_> {
    fn shard(&mut self, idx: usize) -> &mut Shard {
        &mut self.guards[idx]
    }

    fn shards(&mut self, idxs: &[usize]) -> Vec<(usize, &mut Shard)> {
        self.guards
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| idxs.binary_search(i).is_ok())
            .map(|(i, g)| (i, &mut **g))
            .collect()
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        for (i, g) in self.guards.iter().enumerate() {
            self.ks.publish_mem(i, g.mem);
        }
    }
}
