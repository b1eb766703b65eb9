//! Reading ahead for a batch of lookups.
//!
//! With a million keys, a lookup misses the CPU cache three times in a row: the table slot,
//! the entry it points to, and the entry's key bytes; a field or member of a big hash, set
//! or sorted set costs as many again in the value's own table, and a string kept apart
//! from its entry (a bitmap, an appended string) two more: its header, then its bytes. One after another, those
//! misses are most of the cost of a `GET` or an `SADD`. A pipelined batch knows its keys in
//! advance, so [`Keyspace::warm`] loads that memory for all of them level by level: the
//! misses of one level overlap (the loads are independent), and the commands then find it
//! cached.

use std::hint::black_box;
use std::sync::{MutexGuard, TryLockError};

use super::{Entry, Keyspace, Shard};
use crate::table::Keyed;

/// Keys read ahead together: enough to overlap their misses, few enough that one level's
/// loads fit in the CPU's out-of-order window.
const WARM_KEYS: usize = 16;

/// A key to read ahead, and the field or member of its value a command will look up.
pub type WarmTarget<'k> = (&'k [u8], Option<&'k [u8]>);

impl Keyspace {
    /// Brings into the CPU cache what looking up `targets` in database `db` will read.
    /// Changes nothing: a hint. A shard another thread holds is skipped rather than waited
    /// for.
    pub fn warm<'k>(&self, db: usize, targets: impl IntoIterator<Item = WarmTarget<'k>>) {
        if db >= self.databases {
            return;
        }
        let mut targets = targets.into_iter().peekable();
        while targets.peek().is_some() {
            self.warm_group(db, targets.by_ref().take(WARM_KEYS));
        }
    }

    /// [`Keyspace::warm`] for at most [`WARM_KEYS`] targets.
    fn warm_group<'k>(&self, db: usize, targets: impl Iterator<Item = WarmTarget<'k>>) {
        let mut hashes = [0u64; WARM_KEYS];
        let mut members: [Option<&[u8]>; WARM_KEYS] = [None; WARM_KEYS];
        // Per target, its shard's position in `guards`.
        let mut held = [usize::MAX; WARM_KEYS];
        let mut shards = [usize::MAX; WARM_KEYS];
        let mut guards: [Option<MutexGuard<'_, Shard>>; WARM_KEYS] = std::array::from_fn(|_| None);
        let mut locked = 0;
        for (n, (key, member)) in targets.take(WARM_KEYS).enumerate() {
            let (shard, hash) = self.route(key);
            hashes[n] = hash;
            members[n] = member;
            held[n] = match shards[..locked].iter().position(|&s| s == shard) {
                Some(g) => g,
                None => match self.shards[shard].lock.try_lock() {
                    Ok(guard) => {
                        shards[locked] = shard;
                        guards[locked] = Some(guard);
                        locked += 1;
                        locked - 1
                    }
                    Err(TryLockError::WouldBlock | TryLockError::Poisoned(_)) => usize::MAX,
                },
            };
        }
        // Level by level, each level's loads independent of one another: the table slot,
        // the entry, its key bytes and the value's slot, the member (or a grown string's
        // header), the member's bytes (or the string's). Of bytes, the first and the last:
        // a key and its inline value often span two cache lines.
        let entries: [Option<&Entry>; WARM_KEYS] = std::array::from_fn(|i| {
            let shard = guards.get(held[i])?.as_deref()?;
            shard.dbs[db].table.first_candidate(hashes[i])
        });
        let keys: [&[u8]; WARM_KEYS] =
            std::array::from_fn(|i| entries[i].map_or(&[][..], Entry::bytes));
        let candidates: [Option<&dyn Keyed>; WARM_KEYS] =
            std::array::from_fn(|i| entries[i]?.value.member_candidate(members[i]?));
        let grown: [&[u8]; WARM_KEYS] =
            std::array::from_fn(|i| entries[i].map_or(&[][..], |e| e.value.grown_bytes()));
        let names: [&[u8]; WARM_KEYS] =
            std::array::from_fn(|i| candidates[i].map_or(&[][..], |c| c.key()));
        let firsts = keys.iter().chain(&names).chain(&grown).fold(0u8, |acc, b| {
            acc ^ b.first().copied().unwrap_or(0) ^ b.last().copied().unwrap_or(0)
        });
        black_box(firsts);
    }
}

#[cfg(test)]
mod tests {
    use crate::commands::{SetOptions, ZAddOptions};
    use crate::{CacheConfig, Keyspace};

    #[test]
    fn warming_changes_nothing_and_never_waits() {
        let ks = Keyspace::new(CacheConfig {
            shards: 4,
            ..CacheConfig::default()
        })
        .unwrap();
        let now = 1_700_000_000_000;
        let keys: Vec<Vec<u8>> = (0..40).map(|i| format!("key:{i}").into_bytes()).collect();
        let mut db = ks.db(0).unwrap();
        for key in &keys[..27] {
            db.set(key, b"v", SetOptions::default(), now).unwrap();
        }
        // Values with tables of their own, big enough to leave the compact encodings.
        let members: Vec<Vec<u8>> = (0..300).map(|i| format!("m{i}").into_bytes()).collect();
        let members: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
        let pairs: Vec<(&[u8], &[u8])> = members.iter().map(|m| (*m, *m)).collect();
        let scored: Vec<(f64, &[u8])> = members.iter().map(|m| (1.0, *m)).collect();
        db.sadd(&keys[27], &members, now).unwrap();
        db.hset(&keys[28], &pairs, now).unwrap();
        db.zadd(&keys[29], &scored, ZAddOptions::default(), now)
            .unwrap();
        let before = ks.stats();
        // More keys than one group, some missing, some repeated, in a database that
        // exists and one that does not.
        let ask = keys
            .iter()
            .chain(&keys[..5])
            .zip(members.iter().cycle())
            .map(|(key, member)| (key.as_slice(), Some(*member)));
        ks.warm(0, ask.clone());
        ks.warm(1, ask.clone());
        ks.warm(99, ask.clone());
        // Every shard held (as by a transaction on this very thread): skipped, not awaited.
        let held = ks.transaction();
        ks.warm(0, ask);
        drop(held);
        let after = ks.stats();
        assert_eq!(after.keyspace_hits, before.keyspace_hits);
        assert_eq!(after.keyspace_misses, before.keyspace_misses);
        assert_eq!(after.used_memory, before.used_memory);
        assert_eq!(ks.db(0).unwrap().dbsize(), 30);
    }
}
