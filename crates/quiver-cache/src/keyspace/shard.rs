//! One lock shard: a table per database, the TTL lists, per-shard counters, the watch
//! registry and the blocked-key registry. Everything here runs under the shard's mutex.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::Garbage;
use super::changes::{ChangeKind, Feed};
use super::entry::{Entry, NOT_VOLATILE};
use super::events::{self, Event};
use crate::evict::{self, Clock};
use crate::memory::vec_size;
use crate::rdb::Capture;
use crate::rng::Rng;
use crate::stats::ShardStats;
use crate::table::{Keyed, Table};

/// A key with a TTL: its position in the table and when it expires.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Volatile {
    pub(crate) idx: u32,
    pub(crate) expire_at_ms: u64,
}

/// One database's part of a shard.
#[derive(Debug, Default)]
pub(crate) struct DbTable {
    pub(crate) table: Table<Entry>,
    pub(crate) volatile: Vec<Volatile>,
}

/// The background snapshots part-way through database `db`.
fn captures_of(captures: &mut [Capture], db: usize) -> impl Iterator<Item = &mut Capture> {
    captures.iter_mut().filter(move |c| c.db == db)
}

impl DbTable {
    /// The absolute expiry time of the key at `idx`, if it has one.
    pub(crate) fn expire_at(&self, idx: usize) -> Option<u64> {
        let pos = self.table.at(idx).volatile_pos;
        (pos != NOT_VOLATILE).then(|| self.volatile[pos as usize].expire_at_ms)
    }

    fn struct_bytes(&self) -> usize {
        self.table.struct_bytes() + vec_size::<Volatile>(self.volatile.capacity())
    }
}

/// A key named by database and bytes, for the watch and blocked registries.
type DbKey = (u8, Box<[u8]>);

/// The shard itself (public only so the sealed access types can name it).
#[derive(Debug)]
pub struct Shard {
    pub(crate) dbs: Box<[DbTable]>,
    /// Bytes this shard holds, as [`crate::memory`] models them.
    pub(crate) mem: usize,
    pub(crate) rng: Rng,
    pub(crate) stats: ShardStats,
    state: FixedState,
    /// Watched keys -> modification counter (only keys some client watches).
    watched: HashMap<DbKey, WatchSlot>,
    /// Keys some client is blocked on -> number of blocked clients.
    blocked: HashMap<DbKey, u32>,
    /// Blocked-on keys that changed since the last drain in a way their waiters look
    /// at (see [`Shard::signal_ready`]).
    pub(crate) ready: Vec<(usize, Vec<u8>)>,
    /// Where changes are recorded while the change feed is on.
    pub(crate) feed: Feed,
    /// Background snapshots part-way through this shard: each keeps a key as it was when
    /// the snapshot reached the shard, so writers tell them before they change a key.
    pub(crate) captures: Vec<Capture>,
}

#[derive(Debug, Clone, Copy)]
struct WatchSlot {
    version: u64,
    watchers: u32,
}

impl Shard {
    pub(crate) fn new(databases: usize, seed: u64, state: FixedState) -> Self {
        Self {
            dbs: (0..databases).map(|_| DbTable::default()).collect(),
            mem: 0,
            rng: Rng::new(seed),
            stats: ShardStats::default(),
            state,
            watched: HashMap::new(),
            blocked: HashMap::new(),
            ready: Vec::new(),
            feed: None,
            captures: Vec::new(),
        }
    }

    pub(crate) fn hash(&self, key: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        self.state.hash_one(key)
    }

    /// Finds `key` without counting a hit or miss or touching its access time; expired keys
    /// are deleted on the way.
    pub(crate) fn find(
        &mut self,
        db: usize,
        hash: u64,
        key: &[u8],
        clock: &Clock,
    ) -> Option<usize> {
        let idx = self.dbs[db].table.find(hash, key)?;
        if self.is_expired(db, idx, clock.now_ms) {
            self.remove_expired(db, idx, hash);
            return None;
        }
        Some(idx)
    }

    /// Finds `key` for a write: touches its access time.
    pub(crate) fn lookup_write(
        &mut self,
        db: usize,
        hash: u64,
        key: &[u8],
        clock: &Clock,
    ) -> Option<usize> {
        let idx = self.find(db, hash, key, clock)?;
        self.touch(db, idx, clock);
        Some(idx)
    }

    /// Finds `key` for a read that leaves access times alone (TTL, OBJECT: Redis's
    /// LOOKUP_NOTOUCH); still counts a hit or miss.
    pub(crate) fn lookup_read_notouch(
        &mut self,
        db: usize,
        hash: u64,
        key: &[u8],
        clock: &Clock,
    ) -> Option<usize> {
        let found = self.find(db, hash, key, clock);
        if found.is_some() {
            self.stats.keyspace_hits += 1;
        } else {
            self.stats.keyspace_misses += 1;
            self.event(db, key, events::KEY_MISS);
        }
        found
    }

    /// Finds `key` for a read: counts a keyspace hit or miss and touches its access time.
    pub(crate) fn lookup_read(
        &mut self,
        db: usize,
        hash: u64,
        key: &[u8],
        clock: &Clock,
    ) -> Option<usize> {
        match self.find(db, hash, key, clock) {
            Some(idx) => {
                self.stats.keyspace_hits += 1;
                self.touch(db, idx, clock);
                Some(idx)
            }
            None => {
                self.stats.keyspace_misses += 1;
                self.event(db, key, events::KEY_MISS);
                None
            }
        }
    }

    /// Tells the snapshots part-way through `db` that the key at `idx` is about to change
    /// (its value, its TTL, or its removal).
    fn before_change(&mut self, db: usize, idx: usize) {
        for c in captures_of(&mut self.captures, db) {
            c.before_change(&self.dbs[db], idx);
        }
    }

    fn touch(&mut self, db: usize, idx: usize, clock: &Clock) {
        let e = self.dbs[db].table.at_mut(idx);
        evict::touch(&mut e.access, clock, &mut self.rng);
    }

    pub(crate) fn entry(&self, db: usize, idx: usize) -> &Entry {
        self.dbs[db].table.at(idx)
    }

    /// Changes the entry at `idx` through `f`, keeping the memory count right.
    pub(crate) fn update<R>(
        &mut self,
        db: usize,
        idx: usize,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> R {
        self.update_if(db, idx, |e| (f(e), true))
    }

    /// Like [`Shard::update`], but the key counts as modified (for WATCH and the change
    /// feed) only when `f` says it changed something.
    pub(crate) fn update_if<R>(
        &mut self,
        db: usize,
        idx: usize,
        f: impl FnOnce(&mut Entry) -> (R, bool),
    ) -> R {
        self.before_change(db, idx);
        let e = self.dbs[db].table.at_mut(idx);
        let before = e.mem();
        // Read only while some client is blocked in this shard (writes stay as cheap).
        let kind = (!self.blocked.is_empty()).then(|| e.value.kind());
        let (r, changed) = f(e);
        let after = e.mem();
        // A key overwritten with another type: clients blocked on it look again (a
        // group read on a stream that is gone ends).
        let retyped = changed && kind.is_some_and(|kind| e.value.kind() != kind);
        self.mem = self.mem + after - before;
        self.stats.changes += u64::from(changed);
        if changed && self.notes_changes() || retyped {
            let key = self.dbs[db].table.at(idx).key().to_vec();
            self.signal_modified(db, &key);
            if retyped {
                self.signal_ready(db, &key);
            }
        }
        r
    }

    /// Adds a new key (absent, checked by the caller); returns its position.
    pub(crate) fn insert(&mut self, db: usize, hash: u64, entry: Entry) -> usize {
        let t = &mut self.dbs[db];
        let before = t.struct_bytes();
        self.mem += entry.mem();
        let idx = t.table.insert_new(hash, entry);
        self.mem = self.mem + t.struct_bytes() - before;
        for c in captures_of(&mut self.captures, db) {
            c.inserted(idx);
        }
        self.stats.changes += 1;
        if self.notes_changes() {
            let key = self.dbs[db].table.at(idx).key().to_vec();
            self.event(db, &key, events::NEW);
            self.signal_modified(db, &key);
        }
        idx
    }

    /// Removes the key at `idx`, whose TTL has passed.
    pub(crate) fn remove_expired(&mut self, db: usize, idx: usize, hash: u64) {
        self.remove_as(db, idx, hash, ChangeKind::Expired);
        self.stats.expired_keys += 1;
    }

    /// Removes the key at `idx` to make room.
    pub(crate) fn remove_evicted(&mut self, db: usize, idx: usize, hash: u64) {
        self.remove_as(db, idx, hash, ChangeKind::Evicted);
        self.stats.evicted_keys += 1;
    }

    /// Removes the key at `idx` and returns it.
    pub(crate) fn remove(&mut self, db: usize, idx: usize, hash: u64) -> Entry {
        self.remove_as(db, idx, hash, ChangeKind::Removed)
    }

    fn remove_as(&mut self, db: usize, idx: usize, hash: u64, kind: ChangeKind) -> Entry {
        self.before_change(db, idx);
        self.set_expire(db, idx, None);
        let state = self.state.clone();
        let t = &mut self.dbs[db];
        let before = t.struct_bytes();
        let last = t.table.len() - 1;
        let entry = t.table.remove_at(idx, hash, |e| {
            use std::hash::BuildHasher;
            state.hash_one(e.key())
        });
        if idx != last {
            let pos = t.table.at(idx).volatile_pos;
            if pos != NOT_VOLATILE {
                t.volatile[pos as usize].idx = idx as u32;
            }
        }
        for c in captures_of(&mut self.captures, db) {
            c.removed(t, idx, last);
        }
        self.mem = self.mem + t.struct_bytes() - before - entry.mem();
        self.stats.changes += 1;
        self.note_change(db, entry.key(), kind);
        // Clients blocked on a key that is gone look again (a group read ends).
        self.signal_ready(db, entry.key());
        entry
    }

    /// The key's absolute expiry time, if it has one.
    pub(crate) fn expire_at(&self, db: usize, idx: usize) -> Option<u64> {
        self.dbs[db].expire_at(idx)
    }

    pub(crate) fn is_expired(&self, db: usize, idx: usize, now_ms: u64) -> bool {
        self.expire_at(db, idx).is_some_and(|at| at <= now_ms)
    }

    /// Sets or clears the key's expiry time.
    pub(crate) fn set_expire(&mut self, db: usize, idx: usize, at_ms: Option<u64>) {
        self.before_change(db, idx);
        let t = &mut self.dbs[db];
        let before = vec_size::<Volatile>(t.volatile.capacity());
        let pos = t.table.at(idx).volatile_pos;
        match (pos != NOT_VOLATILE, at_ms) {
            (true, Some(at)) => t.volatile[pos as usize].expire_at_ms = at,
            (false, Some(at)) => {
                t.table.at_mut(idx).volatile_pos = t.volatile.len() as u32;
                t.volatile.push(Volatile {
                    idx: idx as u32,
                    expire_at_ms: at,
                });
            }
            (true, None) => {
                t.volatile.swap_remove(pos as usize);
                if let Some(moved) = t.volatile.get(pos as usize) {
                    t.table.at_mut(moved.idx as usize).volatile_pos = pos;
                }
                t.table.at_mut(idx).volatile_pos = NOT_VOLATILE;
                if t.volatile.capacity() > 16 && t.volatile.len() * 4 < t.volatile.capacity() {
                    t.volatile.shrink_to(t.volatile.len() * 2);
                }
            }
            (false, None) => {}
        }
        self.mem = self.mem + vec_size::<Volatile>(t.volatile.capacity()) - before;
    }

    /// Removes every key of `db` into `garbage`; returns how many there were.
    pub(crate) fn flush(&mut self, db: usize, garbage: &mut Garbage) -> usize {
        for c in captures_of(&mut self.captures, db) {
            c.flushing(&self.dbs[db]);
        }
        let t = &mut self.dbs[db];
        let n = t.table.len();
        let freed: usize = t.table.items().map(Entry::mem).sum::<usize>() + t.struct_bytes();
        let keys: Vec<Box<[u8]>> = if self.watched.is_empty() {
            Vec::new()
        } else {
            t.table.items().map(|e| e.key().into()).collect()
        };
        garbage.table(std::mem::take(&mut t.table));
        t.volatile = Vec::new();
        self.mem -= freed;
        self.stats.changes += n as u64;
        for k in keys {
            self.bump_watched(db, &k);
        }
        // Clients blocked on keys of the database look again (a group read ends).
        let waiting: Vec<DbKey> = self
            .blocked
            .keys()
            .filter(|(blocked_db, _)| usize::from(*blocked_db) == db)
            .cloned()
            .collect();
        for (db, key) in waiting {
            self.signal_ready(usize::from(db), &key);
        }
        n
    }

    /// Swaps databases `a` and `b` (SWAPDB), as Redis does: a watched key of either that
    /// is present in either counts as modified, and keys clients are blocked on in
    /// either are tried again.
    pub(crate) fn swap_dbs(&mut self, a: usize, b: usize) {
        let present =
            |s: &Shard, db: usize, key: &[u8]| s.dbs[db].table.find(s.hash(key), key).is_some();
        let touched: Vec<DbKey> = self
            .watched
            .keys()
            .filter(|(db, key)| {
                let db = usize::from(*db);
                (db == a || db == b) && (present(self, a, key) || present(self, b, key))
            })
            .cloned()
            .collect();
        for (db, key) in touched {
            self.bump_watched(usize::from(db), &key);
        }
        self.dbs.swap(a, b);
        // A snapshot part-way through a database's keys goes on with the same keys.
        for c in &mut self.captures {
            if c.db == a {
                c.db = b;
            } else if c.db == b {
                c.db = a;
            }
        }
        let waiting: Vec<DbKey> = self
            .blocked
            .keys()
            .filter(|(db, _)| usize::from(*db) == a || usize::from(*db) == b)
            .cloned()
            .collect();
        for (db, key) in waiting {
            self.signal_ready(usize::from(db), &key);
        }
    }

    /// Records in the change feed that databases `dbs` were emptied (by one command).
    pub(crate) fn note_flushed(&self, dbs: &[usize]) {
        if let Some(feed) = &self.feed {
            feed.record_flushed(dbs);
        }
    }

    /// Records keyspace event `event` of `key` (when the feed is on and its class chosen).
    pub(crate) fn event(&self, db: usize, key: &[u8], event: Event) {
        if let Some(feed) = &self.feed {
            feed.event(db, key, event);
        }
    }

    /// Whether a write must be noted: some key is watched, or the change feed is on.
    fn notes_changes(&self) -> bool {
        !self.watched.is_empty() || self.feed.is_some()
    }

    /// Records a modification of `key` for WATCH and the change feed (only costs a check
    /// when nothing is watched and the feed is off).
    pub(crate) fn signal_modified(&mut self, db: usize, key: &[u8]) {
        self.note_change(db, key, ChangeKind::Written);
    }

    fn note_change(&mut self, db: usize, key: &[u8], kind: ChangeKind) {
        self.bump_watched(db, key);
        if let Some(feed) = &self.feed {
            feed.record(db, key, kind);
        }
    }

    fn bump_watched(&mut self, db: usize, key: &[u8]) {
        if self.watched.is_empty() {
            return;
        }
        if let Some(w) = self.watched.get_mut(&(db as u8, key.into())) {
            w.version += 1;
        }
    }

    /// Records that `key` changed in a way clients blocked on it must look at (data
    /// pushed or added, the key deleted or given another type, a stream's group
    /// destroyed).
    pub(crate) fn signal_ready(&mut self, db: usize, key: &[u8]) -> bool {
        if self.blocked.is_empty() || !self.blocked.contains_key(&(db as u8, key.into())) {
            return false;
        }
        if !self.ready.iter().any(|(d, k)| *d == db && k == key) {
            self.ready.push((db, key.to_vec()));
        }
        true
    }

    pub(crate) fn watch(&mut self, db: usize, key: &[u8]) -> u64 {
        let w = self
            .watched
            .entry((db as u8, key.into()))
            .or_insert(WatchSlot {
                version: 0,
                watchers: 0,
            });
        w.watchers += 1;
        w.version
    }

    pub(crate) fn unwatch(&mut self, db: usize, key: &[u8]) {
        let k = (db as u8, Box::<[u8]>::from(key));
        if let Some(w) = self.watched.get_mut(&k) {
            w.watchers -= 1;
            if w.watchers == 0 {
                self.watched.remove(&k);
            }
        }
    }

    pub(crate) fn watch_version(&self, db: usize, key: &[u8]) -> Option<u64> {
        self.watched.get(&(db as u8, key.into())).map(|w| w.version)
    }

    pub(crate) fn block(&mut self, db: usize, key: &[u8]) {
        *self.blocked.entry((db as u8, key.into())).or_insert(0) += 1;
    }

    pub(crate) fn unblock(&mut self, db: usize, key: &[u8]) {
        let k = (db as u8, Box::<[u8]>::from(key));
        if let Some(n) = self.blocked.get_mut(&k) {
            *n -= 1;
            if *n == 0 {
                self.blocked.remove(&k);
            }
        }
    }
}

#[cfg(test)]
impl Shard {
    /// Memory recounted from scratch, to check the incremental figure.
    pub(crate) fn recount_mem(&self) -> usize {
        self.dbs
            .iter()
            .map(|t| t.struct_bytes() + t.table.items().map(Entry::mem).sum::<usize>())
            .sum()
    }
}
