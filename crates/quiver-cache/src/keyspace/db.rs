//! [`Db`], the handle every data operation goes through, and the shard-locking it does:
//! one shard per single-key operation, several in ascending order for multi-key ones, or the
//! shards a [`super::Transaction`] already holds.

use std::sync::MutexGuard;
use std::sync::atomic::Ordering;

use super::{Keyspace, Shard, lock};
use crate::error::OpError;
use crate::evict::{self, Clock};

/// Shards a transaction already holds.
pub(crate) trait HeldShards {
    fn shard(&mut self, idx: usize) -> &mut Shard;
    fn shards(&mut self, idxs: &[usize]) -> Vec<(usize, &mut Shard)>;
}

/// Several locked shards, for multi-key operations.
pub struct ShardSet<'a> {
    shards: Vec<(usize, &'a mut Shard)>,
}

impl ShardSet<'_> {
    pub(crate) fn peek(&self, idx: usize) -> &Shard {
        let pos = self
            .shards
            .iter()
            .position(|(i, _)| *i == idx)
            .expect("multi-key operations lock every shard they touch before using it");
        &*self.shards[pos].1
    }

    pub(crate) fn get(&mut self, idx: usize) -> &mut Shard {
        let pos = self
            .shards
            .iter()
            .position(|(i, _)| *i == idx)
            .expect("multi-key operations lock every shard they touch before using it");
        &mut *self.shards[pos].1
    }
}

/// A handle on one database: every data operation is a method of it.
pub struct Db<'a> {
    pub(crate) ks: &'a Keyspace,
    held: Option<&'a mut dyn HeldShards>,
    pub(crate) db: usize,
    /// Writes go ahead when eviction cannot bring memory under `max_memory` (the
    /// commands of an EXEC, a script's writes after its first).
    over_memory_ok: bool,
}

impl std::fmt::Debug for Db<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("db", &self.db).finish()
    }
}

impl<'a> Db<'a> {
    pub(crate) fn free(ks: &'a Keyspace, db: usize) -> Self {
        Self {
            ks,
            held: None,
            db,
            over_memory_ok: false,
        }
    }

    pub(crate) fn held(ks: &'a Keyspace, held: &'a mut dyn HeldShards, db: usize) -> Self {
        Self {
            ks,
            held: Some(held),
            db,
            over_memory_ok: false,
        }
    }

    /// Lets the writes through this handle go ahead over `max_memory` (after evicting
    /// what the policy allows), as Redis runs the commands of an EXEC and a script's
    /// writes after its first: a transaction or script is not stopped half-way.
    pub fn allow_over_memory(&mut self) {
        self.over_memory_ok = true;
    }

    /// The database number.
    pub fn index(&self) -> usize {
        self.db
    }

    pub(crate) fn check_db(&self, db: usize) -> Result<(), OpError> {
        if db >= self.ks.databases {
            return Err(OpError::DbOutOfRange);
        }
        Ok(())
    }

    /// Runs `f` on shard `idx`, locking it unless a transaction holds it.
    pub(crate) fn with_shard<R>(&mut self, idx: usize, f: impl FnOnce(&mut Shard) -> R) -> R {
        match &mut self.held {
            None => {
                let cell = &self.ks.shards[idx];
                let mut g = lock(&cell.lock);
                let r = f(&mut g);
                cell.mem.store(g.mem, Ordering::Relaxed);
                if !g.ready.is_empty() {
                    self.ks.note_ready();
                }
                r
            }
            Some(h) => {
                let s = h.shard(idx);
                let r = f(s);
                self.ks.shards[idx].mem.store(s.mem, Ordering::Relaxed);
                if !s.ready.is_empty() {
                    self.ks.note_ready();
                }
                r
            }
        }
    }

    /// Runs `f` with every shard in `idxs` locked, taking the locks in ascending order.
    pub(crate) fn with_shards<R>(
        &mut self,
        idxs: &[usize],
        f: impl FnOnce(&mut ShardSet<'_>) -> R,
    ) -> R {
        let mut sorted = idxs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let ks = self.ks;
        let publish = |set: &ShardSet<'_>| {
            for (i, s) in &set.shards {
                ks.shards[*i].mem.store(s.mem, Ordering::Relaxed);
                if !s.ready.is_empty() {
                    ks.note_ready();
                }
            }
        };
        match &mut self.held {
            None => {
                let mut guards: Vec<(usize, MutexGuard<'_, Shard>)> = sorted
                    .iter()
                    .map(|&i| (i, lock(&ks.shards[i].lock)))
                    .collect();
                let mut set = ShardSet {
                    shards: guards.iter_mut().map(|(i, g)| (*i, &mut **g)).collect(),
                };
                let r = f(&mut set);
                publish(&set);
                r
            }
            Some(h) => {
                let mut set = ShardSet {
                    shards: h.shards(&sorted),
                };
                let r = f(&mut set);
                publish(&set);
                r
            }
        }
    }

    /// Evicts keys if `max_memory` is exceeded, before a command that may add data.
    pub(crate) fn make_room(&mut self, now_ms: u64) -> Result<(), OpError> {
        let made = evict::make_room(self, now_ms);
        if self.over_memory_ok { Ok(()) } else { made }
    }

    pub(crate) fn route(&self, key: &[u8]) -> (usize, u64) {
        self.ks.route(key)
    }

    pub(crate) fn clock(&self, now_ms: u64) -> Clock {
        self.ks.clock(now_ms)
    }
}
