//! Key commands: DEL UNLINK EXISTS TOUCH EXPIRE PEXPIRE EXPIREAT PEXPIREAT (NX XX GT LT) TTL
//! PTTL EXPIRETIME PEXPIRETIME PERSIST TYPE KEYS RENAME RENAMENX COPY RANDOMKEY DBSIZE
//! FLUSHDB OBJECT MEMORY USAGE.

use super::KeyCtx;
use crate::error::OpError;
use crate::evict::{idle_ms, lfu_counter};
use crate::glob::glob_match;
use crate::keyspace::{Db, Entry, Event, Garbage, events};
use crate::table::Keyed;
use crate::value::ValueType;

/// EXPIRE's NX/XX/GT/LT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExpireCondition {
    /// No condition.
    #[default]
    Always,
    /// NX: only if the key has no TTL.
    IfNoTtl,
    /// XX: only if the key has a TTL.
    IfTtl,
    /// GT: only if the new time is later (a key without TTL counts as never expiring).
    IfGreater,
    /// LT: only if the new time is earlier (a key without TTL counts as never expiring).
    IfLess,
    /// XX and LT: only if the key has a TTL and the new time is earlier.
    IfTtlAndLess,
}

/// Converts an EX/PX/EXAT/PXAT or EXPIRE-family argument to absolute unix milliseconds:
/// `amount` in seconds (`seconds` = true) or milliseconds, relative to `now_ms` unless
/// `absolute`. Overflow gives Redis's "invalid expire time in '`command`' command" error.
/// (Whether zero or negative values are allowed is the command's rule: SET refuses them,
/// EXPIRE accepts them and deletes the key.)
pub fn to_expire_at_ms(
    now_ms: u64,
    amount: i64,
    seconds: bool,
    absolute: bool,
    command: &'static str,
) -> Result<i64, OpError> {
    let invalid = OpError::InvalidExpireTime { command };
    let ms = if seconds {
        amount.checked_mul(1000).ok_or(invalid.clone())?
    } else {
        amount
    };
    if absolute {
        return Ok(ms);
    }
    i64::try_from(now_ms)
        .ok()
        .and_then(|now| now.checked_add(ms))
        .ok_or(invalid)
}

/// Bytes an entry costs beyond its own allocations: the entry itself and its share of the
/// table index at the usual load (for MEMORY USAGE and MEMORY STATS).
pub const ENTRY_OVERHEAD_BYTES: usize = std::mem::size_of::<Entry>() + 12;

impl Db<'_> {
    /// DEL / UNLINK: removes the keys; returns how many existed.
    pub fn del(&mut self, keys: &[&[u8]], now_ms: u64) -> usize {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            keys.iter()
                .zip(routes)
                .filter(|&(key, &(shard, hash))| {
                    KeyCtx::write(set.get(shard), db, hash, key, clock).delete()
                })
                .count()
        })
    }

    /// UNLINK: removes the keys like DEL, but hands them back instead of freeing them, so the
    /// caller can free them elsewhere; returns how many existed.
    pub fn unlink(&mut self, keys: &[&[u8]], now_ms: u64) -> (usize, Garbage) {
        let (db, clock) = (self.db, self.clock(now_ms));
        let mut garbage = Garbage::default();
        let removed = self.multi(keys, |set, routes| {
            keys.iter()
                .zip(routes)
                .filter_map(|(key, &(shard, hash))| {
                    let mut k = KeyCtx::write(set.get(shard), db, hash, key, clock);
                    let entry = k.take()?;
                    k.notify(events::DEL);
                    Some(entry)
                })
                .map(|entry| garbage.entry(entry))
                .count()
        });
        (removed, garbage)
    }

    /// EXISTS: how many of the keys exist, repeats counted.
    pub fn exists(&mut self, keys: &[&[u8]], now_ms: u64) -> usize {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            keys.iter()
                .zip(routes)
                .filter(|&(key, &(shard, hash))| {
                    let s = set.get(shard);
                    let found = s.find(db, hash, key, &clock).is_some();
                    if !found {
                        s.event(db, key, events::KEY_MISS);
                    }
                    found
                })
                .count()
        })
    }

    /// TOUCH: updates access times; returns how many keys exist.
    pub fn touch(&mut self, keys: &[&[u8]], now_ms: u64) -> usize {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            keys.iter()
                .zip(routes)
                .filter(|&(key, &(shard, hash))| {
                    KeyCtx::read(set.get(shard), db, hash, key, clock).exists()
                })
                .count()
        })
    }

    /// EXPIRE family with an absolute time in unix milliseconds (the caller converts
    /// seconds and relative times, checking overflow). A time not after `now_ms` deletes the
    /// key. Returns whether the TTL was set (or the key deleted).
    pub fn expire_at(
        &mut self,
        key: &[u8],
        at_ms: i64,
        cond: ExpireCondition,
        now_ms: u64,
    ) -> Result<bool, OpError> {
        self.write_key(key, now_ms, false, |k| {
            if !k.exists() {
                return Ok(false);
            }
            let current = k.expire_at().map(|c| c as i64);
            let ok = match cond {
                ExpireCondition::Always => true,
                ExpireCondition::IfNoTtl => current.is_none(),
                ExpireCondition::IfTtl => current.is_some(),
                ExpireCondition::IfGreater => current.is_some_and(|c| at_ms > c),
                ExpireCondition::IfLess => current.is_none_or(|c| at_ms < c),
                ExpireCondition::IfTtlAndLess => current.is_some_and(|c| at_ms < c),
            };
            if !ok {
                return Ok(false);
            }
            if at_ms <= now_ms as i64 {
                k.delete();
            } else {
                k.set_expire(Some(at_ms as u64));
                k.on_change(events::EXPIRE).mark_modified();
            }
            Ok(true)
        })
    }

    /// PTTL: remaining milliseconds, -1 without TTL, -2 for a missing key.
    pub fn pttl(&mut self, key: &[u8], now_ms: u64) -> i64 {
        match self.ttl_lookup(key, now_ms) {
            None => -2,
            Some(None) => -1,
            Some(Some(at)) => at.saturating_sub(now_ms) as i64,
        }
    }

    /// TTL: remaining seconds (rounded as Redis does), -1 without TTL, -2 for a missing key.
    pub fn ttl(&mut self, key: &[u8], now_ms: u64) -> i64 {
        match self.pttl(key, now_ms) {
            t if t < 0 => t,
            t => (t + 500) / 1000,
        }
    }

    /// PEXPIRETIME: absolute expiry in unix milliseconds, -1 without TTL, -2 if missing
    /// (EXPIRETIME is this divided by 1000, rounded as Redis does: `(ms + 500) / 1000`).
    pub fn expire_time_ms(&mut self, key: &[u8], now_ms: u64) -> i64 {
        match self.ttl_lookup(key, now_ms) {
            None => -2,
            Some(None) => -1,
            Some(Some(at)) => at as i64,
        }
    }

    /// `None` for a missing key, else its expiry time (without touching its access time).
    fn ttl_lookup(&mut self, key: &[u8], now_ms: u64) -> Option<Option<u64>> {
        let (shard, hash) = self.route(key);
        let (db, clock) = (self.db, self.clock(now_ms));
        self.with_shard(shard, |s| {
            let idx = s.lookup_read_notouch(db, hash, key, &clock)?;
            Some(s.expire_at(db, idx))
        })
    }

    /// PERSIST: removes the TTL; returns whether there was one.
    pub fn persist(&mut self, key: &[u8], now_ms: u64) -> bool {
        self.write_key(key, now_ms, false, |k| {
            if k.expire_at().is_none() {
                return Ok(false);
            }
            k.set_expire(None);
            k.on_change(events::PERSIST).mark_modified();
            Ok(true)
        })
        .unwrap_or(false)
    }

    /// TYPE: [`Db::key_type`], and a missing key is a key miss (a keyspace event).
    pub fn type_of(&mut self, key: &[u8], now_ms: u64) -> Option<ValueType> {
        let found = self.key_type(key, now_ms);
        if found.is_none() {
            self.key_missed(key);
        }
        found
    }

    /// Records a read that found no `key` (the `keymiss` keyspace event).
    pub(crate) fn key_missed(&mut self, key: &[u8]) {
        let (shard, _) = self.route(key);
        let db = self.db;
        self.with_shard(shard, |s| s.event(db, key, events::KEY_MISS));
    }

    /// The key's type (does not count as an access).
    pub fn key_type(&mut self, key: &[u8], now_ms: u64) -> Option<ValueType> {
        let (shard, hash) = self.route(key);
        let (db, clock) = (self.db, self.clock(now_ms));
        self.with_shard(shard, |s| {
            let idx = s.find(db, hash, key, &clock)?;
            Some(s.entry(db, idx).value.kind())
        })
    }

    /// KEYS: every live key matching the glob `pattern` (all shards locked, so the answer is
    /// one consistent snapshot).
    pub fn keys(&mut self, pattern: &[u8], now_ms: u64) -> Vec<Vec<u8>> {
        let db = self.db;
        let all: Vec<usize> = (0..self.ks.shard_count()).collect();
        let match_all = pattern == b"*";
        self.with_shards(&all, |set| {
            let mut out = Vec::new();
            for &i in &all {
                let s = set.get(i);
                for (idx, e) in s.dbs[db].table.items().enumerate() {
                    if (match_all || glob_match(pattern, e.key())) && !s.is_expired(db, idx, now_ms)
                    {
                        out.push(e.key().to_vec());
                    }
                }
            }
            out
        })
    }

    /// RENAME (`nx` = false) or RENAMENX (`nx` = true): moves the value and its TTL.
    /// Returns false only for RENAMENX onto an existing key.
    pub fn rename(
        &mut self,
        src: &[u8],
        dst: &[u8],
        nx: bool,
        now_ms: u64,
    ) -> Result<bool, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[src, dst], |set, routes| {
            let (ss, sh) = routes[0];
            let (ds, dh) = routes[1];
            let s = KeyCtx::write(set.get(ss), db, sh, src, clock);
            if !s.exists() {
                return Err(OpError::NoSuchKey);
            }
            if src == dst {
                return Ok(!nx);
            }
            if nx && set.get(ds).find(db, dh, dst, &clock).is_some() {
                return Ok(false);
            }
            let s = set.get(ss);
            let idx = s
                .find(db, sh, src, &clock)
                .expect("checked above under the same lock");
            let ttl = s.expire_at(db, idx);
            let moved = s.remove(db, idx, sh).rekeyed(dst);
            let mut d = KeyCtx::write(set.get(ds), db, dh, dst, clock);
            d.take();
            let i = d.s.insert(db, dh, moved);
            d.s.set_expire(db, i, ttl);
            // Clients blocked on the new name look at it (they pass over another type).
            d.s.signal_ready(db, dst);
            set.get(ss).event(db, src, Event::generic("rename_from"));
            set.get(ds).event(db, dst, Event::generic("rename_to"));
            Ok(true)
        })
    }

    /// COPY to `dst` in database `dst_db` (default this one); with `replace` an existing
    /// destination is overwritten. Returns whether it copied.
    pub fn copy(
        &mut self,
        src: &[u8],
        dst: &[u8],
        dst_db: Option<usize>,
        replace: bool,
        now_ms: u64,
    ) -> Result<bool, OpError> {
        let dst_db = dst_db.unwrap_or(self.db);
        self.check_db(dst_db)?;
        if src == dst && dst_db == self.db {
            return Err(OpError::SameObject);
        }
        self.make_room(now_ms)?;
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[src, dst], |set, routes| {
            let (ss, sh) = routes[0];
            let (ds, dh) = routes[1];
            let s = KeyCtx::write(set.get(ss), db, sh, src, clock);
            let Some(e) = s.entry() else {
                s.notify(events::KEY_MISS);
                return Ok(false);
            };
            let copied = e.rekeyed(dst);
            let ttl = s.expire_at();
            let mut d = KeyCtx::write(set.get(ds), dst_db, dh, dst, clock);
            if d.exists() {
                if !replace {
                    return Ok(false);
                }
                d.take();
            }
            let i = d.s.insert(dst_db, dh, copied);
            d.s.set_expire(dst_db, i, ttl);
            d.s.signal_ready(dst_db, dst);
            d.s.event(dst_db, dst, Event::generic("copy_to"));
            Ok(true)
        })
    }

    /// MOVE: the key, with its TTL, to database `dst_db`; false when it is missing here or
    /// present there. The entry moves as it is (same shard: same hash).
    pub fn move_key(&mut self, key: &[u8], dst_db: usize, now_ms: u64) -> Result<bool, OpError> {
        self.check_db(dst_db)?;
        if dst_db == self.db {
            return Err(OpError::SameObject);
        }
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[key], |set, routes| {
            let (shard, hash) = routes[0];
            if !KeyCtx::write(set.get(shard), db, hash, key, clock).exists()
                || KeyCtx::write(set.get(shard), dst_db, hash, key, clock).exists()
            {
                return Ok(false);
            }
            let mut src = KeyCtx::write(set.get(shard), db, hash, key, clock);
            let ttl = src.expire_at();
            let entry = src.take().expect("the key exists");
            let shard = set.get(shard);
            let at = shard.insert(dst_db, hash, entry);
            shard.set_expire(dst_db, at, ttl);
            shard.signal_ready(dst_db, key);
            shard.event(db, key, Event::generic("move_from"));
            shard.event(dst_db, key, Event::generic("move_to"));
            Ok(true)
        })
    }

    /// RANDOMKEY: a random live key.
    pub fn random_key(&mut self, now_ms: u64) -> Option<Vec<u8>> {
        let db = self.db;
        let shards = self.ks.shard_count();
        let start = self.ks.next_shard_hint();
        for off in 0..shards {
            let idx = (start + off) % shards;
            let found = self.with_shard(idx, |s| {
                // A few tries per shard so a mostly-expired shard does not stall us.
                for _ in 0..8 {
                    let n = s.dbs[db].table.len();
                    if n == 0 {
                        return None;
                    }
                    let i = s.rng.below(n);
                    if s.is_expired(db, i, now_ms) {
                        let key = s.dbs[db].table.at(i).key().to_vec();
                        let hash = s.hash(&key);
                        s.remove_expired(db, i, hash);
                        continue;
                    }
                    return Some(s.dbs[db].table.at(i).key().to_vec());
                }
                None
            });
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// DBSIZE: keys in this database (keys expired but not yet reclaimed included, as Redis).
    pub fn dbsize(&mut self) -> usize {
        let db = self.db;
        (0..self.ks.shard_count())
            .map(|i| self.with_shard(i, |s| s.dbs[db].table.len()))
            .sum()
    }

    /// FLUSHDB: removes every key of this database (ASYNC is the same here: freeing is
    /// done under each shard's lock in turn).
    pub fn flushdb(&mut self) -> Garbage {
        self.flush(&[self.db])
    }

    /// FLUSHALL: removes every key of every database. Works inside a transaction too.
    pub fn flushall(&mut self) -> Garbage {
        let dbs: Vec<usize> = (0..self.ks.databases()).collect();
        self.flush(&dbs)
    }

    /// Removes every key of `dbs` with every shard locked, so nothing is written in
    /// between, as in Redis; the change feed hears one `Flushed` per emptied database, and
    /// one for the first of `dbs` when none had keys (Redis tells tracking clients of
    /// every flush).
    fn flush(&mut self, dbs: &[usize]) -> Garbage {
        let all: Vec<usize> = (0..self.ks.shard_count()).collect();
        self.with_shards(&all, |set| {
            let mut garbage = Garbage::default();
            let mut emptied = Vec::new();
            for &db in dbs {
                let removed: usize = all
                    .iter()
                    .map(|&i| set.get(i).flush(db, &mut garbage))
                    .sum();
                if removed > 0 {
                    emptied.push(db);
                }
            }
            if emptied.is_empty() {
                emptied.extend(dbs.first());
            }
            set.get(0).note_flushed(&emptied);
            garbage
        })
    }

    /// SWAPDB: databases `a` and `b` trade their keys, with every shard locked (clients
    /// connected to one see the other's data at once). The change feed hears both
    /// flushed, so client-side caches of either drop what they hold.
    pub fn swapdb(&mut self, a: usize, b: usize) -> Result<(), OpError> {
        self.check_db(a)?;
        self.check_db(b)?;
        if a == b {
            return Ok(());
        }
        let all: Vec<usize> = (0..self.ks.shard_count()).collect();
        self.with_shards(&all, |set| {
            for &i in &all {
                set.get(i).swap_dbs(a, b);
            }
            set.get(0).note_flushed(&[a, b]);
        });
        Ok(())
    }

    /// OBJECT ENCODING: the encoding name Redis would report.
    pub fn object_encoding(&mut self, key: &[u8], now_ms: u64) -> Option<&'static str> {
        self.peek_entry(key, now_ms, |e| e.value.encoding(e.inline_len()))
    }

    /// OBJECT REFCOUNT as Redis reports it (1, or `i32::MAX` for a shared integer).
    pub fn object_refcount(&mut self, key: &[u8], now_ms: u64) -> Option<i64> {
        let shared = self.shares_integers();
        self.peek_entry(key, now_ms, |e| e.value.refcount(shared))
    }

    /// Whether Redis would share small integers now: unless an LRU or LFU policy evicts
    /// (each key then needs its own access time).
    pub(crate) fn shares_integers(&self) -> bool {
        let policy = self.ks.policy();
        self.ks.max_memory_bytes() == 0 || !(policy.is_lru() || policy.is_lfu())
    }

    /// OBJECT FREQ: the LFU counter (only under an LFU policy).
    pub fn object_freq(&mut self, key: &[u8], now_ms: u64) -> Result<Option<u32>, OpError> {
        let clock = self.clock(now_ms);
        if !clock.lfu {
            return Err(OpError::LfuNotSelected);
        }
        Ok(self.peek_entry(key, now_ms, |e| lfu_counter(e.access, &clock)))
    }

    /// OBJECT IDLETIME: seconds since last access (not under an LFU policy).
    pub fn object_idletime(&mut self, key: &[u8], now_ms: u64) -> Result<Option<u64>, OpError> {
        if self.clock(now_ms).lfu {
            return Err(OpError::LfuSelected);
        }
        Ok(self.peek_entry(key, now_ms, |e| idle_ms(e.access, now_ms) / 1000))
    }

    /// MEMORY USAGE: bytes the key and its value take.
    pub fn memory_usage(&mut self, key: &[u8], now_ms: u64) -> Option<usize> {
        self.peek_entry(key, now_ms, |e| e.mem() + ENTRY_OVERHEAD_BYTES)
    }

    fn peek_entry<R>(&mut self, key: &[u8], now_ms: u64, f: impl FnOnce(&Entry) -> R) -> Option<R> {
        let (shard, hash) = self.route(key);
        let (db, clock) = (self.db, self.clock(now_ms));
        self.with_shard(shard, |s| {
            let idx = s.find(db, hash, key, &clock)?;
            Some(f(s.entry(db, idx)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expire_time_conversion() {
        assert_eq!(to_expire_at_ms(1000, 2, true, false, "set"), Ok(3000));
        assert_eq!(to_expire_at_ms(1000, 2, false, false, "set"), Ok(1002));
        assert_eq!(to_expire_at_ms(1000, 7, true, true, "expireat"), Ok(7000));
        assert_eq!(to_expire_at_ms(1000, -5, false, false, "pexpire"), Ok(995));
        let err = to_expire_at_ms(1000, i64::MAX, true, false, "expire").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ERR invalid expire time in 'expire' command"
        );
        assert!(to_expire_at_ms(1000, i64::MAX, false, false, "pexpire").is_err());
    }
}
