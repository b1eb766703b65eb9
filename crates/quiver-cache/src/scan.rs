//! SCAN over the keyspace. The cursor's low bits name a shard and the rest is that shard's
//! table cursor (see [`crate::table`]): shards are walked in order, each with Redis's
//! reverse-binary cursor, so every key present for the whole scan is returned at least once
//! however the tables grow or shrink in between, and the cursor stays a plain `u64` the
//! client holds.

use crate::glob::glob_match;
use crate::keyspace::Db;
use crate::table::Keyed;
use crate::value::ValueType;

/// Runs SCAN steps from `cursor` until `count` elements were visited, the scan completed,
/// or `10 * count` steps were taken (Redis's bound on empty buckets per call). `step` does
/// one step and returns the next cursor and the total visited so far.
pub(crate) fn scan_loop(
    mut cursor: u64,
    count: usize,
    mut step: impl FnMut(u64) -> (u64, usize),
) -> u64 {
    let count = count.max(1);
    let mut budget = count.saturating_mul(10);
    loop {
        let (next, visited) = step(cursor);
        cursor = next;
        budget -= 1;
        if cursor == 0 || budget == 0 || visited >= count {
            return cursor;
        }
    }
}

/// HSCAN, SSCAN, ZSCAN: walks a value's table with `step` from `cursor` (COUNT `count`) and
/// returns the next cursor and, made by `item`, the elements whose key matches `pattern`.
pub(crate) fn scan_elements<T: Keyed, R>(
    cursor: u64,
    count: usize,
    pattern: Option<&[u8]>,
    mut step: impl FnMut(u64, &mut dyn FnMut(&T)) -> u64,
    item: impl Fn(&T) -> R,
) -> (u64, Vec<R>) {
    let mut items = Vec::new();
    let mut visited = 0;
    let next = scan_loop(cursor, count, |c| {
        let next = step(c, &mut |element: &T| {
            visited += 1;
            if pattern.is_none_or(|p| glob_match(p, element.key())) {
                items.push(item(element));
            }
        });
        (next, visited)
    });
    (next, items)
}

/// A whole small value at once, as Redis answers HSCAN, SSCAN and ZSCAN of a listpack or
/// an intset whatever the cursor: every element `pattern` matches, in the order given,
/// and cursor 0.
pub(crate) fn scan_whole<'v, T: 'v, R>(
    elements: impl Iterator<Item = &'v T>,
    pattern: Option<&[u8]>,
    key: impl Fn(&T) -> &[u8],
    item: impl Fn(&T) -> R,
) -> (u64, Vec<R>) {
    let matching = elements.filter(|e| pattern.is_none_or(|p| glob_match(p, key(e))));
    (0, matching.map(item).collect())
}

impl Db<'_> {
    /// SCAN: the next cursor (0 when done) and a batch of live keys, filtered by the glob
    /// `pattern` and value type when given. `count` is a hint, as in Redis.
    pub fn scan(
        &mut self,
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
        kind: Option<ValueType>,
        now_ms: u64,
    ) -> (u64, Vec<Vec<u8>>) {
        let shards = self.ks.shard_count() as u64;
        let shard_bits = shards.trailing_zeros();
        let db = self.db;
        let mut shard = cursor & (shards - 1);
        let mut table_cursor = cursor >> shard_bits;
        let mut keys = Vec::new();
        let mut visited = 0;
        let mut budget = count.max(1).saturating_mul(10);
        loop {
            let next = self.with_shard(shard as usize, |s| {
                let mut expired = Vec::new();
                let t = &s.dbs[db];
                let next = t.table.scan_step(table_cursor, |e| {
                    visited += 1;
                    if pattern.is_some_and(|p| !glob_match(p, e.key())) {
                        return;
                    }
                    if kind.is_some_and(|k| e.value.kind() != k) {
                        return;
                    }
                    let pos = e.volatile_pos;
                    if pos != u32::MAX && t.volatile[pos as usize].expire_at_ms <= now_ms {
                        expired.push(e.key().to_vec());
                        return;
                    }
                    keys.push(e.key().to_vec());
                });
                for key in expired {
                    let hash = s.hash(&key);
                    if let Some(idx) = s.dbs[db].table.find(hash, &key) {
                        s.remove_expired(db, idx, hash);
                    }
                }
                next
            });
            budget -= 1;
            if next == 0 {
                shard += 1;
                table_cursor = 0;
                if shard == shards {
                    return (0, keys);
                }
            } else {
                table_cursor = next;
            }
            if visited >= count.max(1) || budget == 0 {
                return ((table_cursor << shard_bits) | shard, keys);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_loop_stops_at_count_or_end() {
        let mut calls = 0;
        let c = scan_loop(0, 3, |c| {
            calls += 1;
            (c + 1, calls)
        });
        assert_eq!((c, calls), (3, 3));
        let c = scan_loop(5, 100, |_| (0, 0));
        assert_eq!(c, 0);
    }
}
