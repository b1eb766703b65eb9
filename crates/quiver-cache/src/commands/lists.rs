//! List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET LINSERT LREM
//! LTRIM LPOS LMOVE RPOPLPUSH. Pushes record blocked-on keys as ready (see
//! [`crate::Keyspace::take_ready_keys`]) so a waiter layer can serve BLPOP/BRPOP/BLMOVE.

use bytes::Bytes;

use super::{KeyCtx, index_range, out};
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses};
use crate::value::list::ListValue;

/// A list end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListEnd {
    /// The head (LEFT).
    Left,
    /// The tail (RIGHT).
    Right,
}

impl ListEnd {
    fn front(self) -> bool {
        self == ListEnd::Left
    }

    /// The event of a push at this end.
    fn push_event(self) -> Event {
        list_event(if self.front() { "lpush" } else { "rpush" })
    }

    /// The event of a pop at this end.
    fn pop_event(self) -> Event {
        list_event(if self.front() { "lpop" } else { "rpop" })
    }
}

const fn list_event(name: &'static str) -> Event {
    Event::new(EventClasses::LIST, name)
}

fn list_index(len: usize, index: i64) -> Option<usize> {
    let i = if index < 0 { len as i64 + index } else { index };
    (0..len as i64).contains(&i).then_some(i as usize)
}

impl Db<'_> {
    /// LPUSH/RPUSH (`only_if_exists` = false) and LPUSHX/RPUSHX (true); returns the new
    /// length (0 when X and absent).
    pub fn push(
        &mut self,
        key: &[u8],
        values: &[&[u8]],
        end: ListEnd,
        only_if_exists: bool,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.write_key(key, now_ms, true, |k| {
            k.on_change(end.push_event());
            let len = k.modify::<ListValue, _>(!only_if_exists, |l| {
                for v in values {
                    if end.front() {
                        l.push_front(v);
                    } else {
                        l.push_back(v);
                    }
                }
                l.len()
            })?;
            if len.is_some() {
                k.signal_ready();
            }
            Ok(len.unwrap_or(0))
        })
    }

    /// LPOP/RPOP: up to `count` elements (one when `count` is `None`); `None` when the key
    /// is missing.
    pub fn pop(
        &mut self,
        key: &[u8],
        end: ListEnd,
        count: Option<usize>,
        now_ms: u64,
    ) -> Result<Option<Vec<Bytes>>, OpError> {
        self.write_key(key, now_ms, false, |k| {
            k.on_change(end.pop_event());
            k.modify_if::<ListValue, _>(false, |l| {
                let n = count.unwrap_or(1).min(l.len());
                let popped = (0..n)
                    .filter_map(|_| l.pop(end.front()))
                    .map(|v| Bytes::from(Vec::from(v)))
                    .collect();
                (popped, n > 0)
            })
        })
    }

    /// The pop BLPOP/BRPOP perform: from the first of `keys` holding a list, atomically
    /// across all of them; `None` when none does (the caller then blocks). A key holding
    /// another type fails with `WrongType`, as in Redis, when it is reached first.
    pub fn pop_first(
        &mut self,
        keys: &[&[u8]],
        end: ListEnd,
        now_ms: u64,
    ) -> Result<Option<(Vec<u8>, Bytes)>, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            for (key, &(shard, hash)) in keys.iter().zip(routes) {
                let mut k = KeyCtx::write(set.get(shard), db, hash, key, clock);
                k.on_change(end.pop_event());
                if let Some(v) = k
                    .modify::<ListValue, _>(false, |l| l.pop(end.front()))?
                    .flatten()
                {
                    return Ok(Some((key.to_vec(), Bytes::from(Vec::from(v)))));
                }
            }
            Ok(None)
        })
    }

    /// LLEN.
    pub fn llen(&mut self, key: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ListValue>()?.map_or(0, ListValue::len))
        })
    }

    /// LRANGE.
    pub fn lrange(
        &mut self,
        key: &[u8],
        start: i64,
        stop: i64,
        now_ms: u64,
    ) -> Result<Vec<Bytes>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(l) = k.view::<ListValue>()? else {
                return Ok(Vec::new());
            };
            Ok(match index_range(l.len(), start, stop) {
                None => Vec::new(),
                Some((a, b)) => l.items().iter_from(a).take(b - a + 1).map(out).collect(),
            })
        })
    }

    /// LINDEX.
    pub fn lindex(
        &mut self,
        key: &[u8],
        index: Option<i64>,
        now_ms: u64,
    ) -> Result<Option<Bytes>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(l) = k.view::<ListValue>()? else {
                return Ok(None);
            };
            let index = index.ok_or(OpError::NotAnInteger)?;
            Ok(list_index(l.len(), index).map(|i| out(&l.items()[i])))
        })
    }

    /// LSET.
    pub fn lset(
        &mut self,
        key: &[u8],
        index: Option<i64>,
        value: &[u8],
        now_ms: u64,
    ) -> Result<(), OpError> {
        self.write_key(key, now_ms, true, |k| {
            let len = k.view::<ListValue>()?.ok_or(OpError::NoSuchKey)?.len();
            let index = index.ok_or(OpError::NotAnInteger)?;
            let i = list_index(len, index).ok_or(OpError::IndexOutOfRange)?;
            k.on_change(list_event("lset"));
            k.modify::<ListValue, _>(false, |l| l.set(i, value))?;
            Ok(())
        })
    }

    /// LINSERT BEFORE/AFTER: the new length, -1 if `pivot` is absent, 0 if the key is.
    pub fn linsert(
        &mut self,
        key: &[u8],
        before: bool,
        pivot: &[u8],
        value: &[u8],
        now_ms: u64,
    ) -> Result<i64, OpError> {
        self.write_key(key, now_ms, true, |k| {
            let Some(l) = k.view::<ListValue>()? else {
                return Ok(0);
            };
            let Some(pos) = l.items().iter().position(|v| v == pivot) else {
                return Ok(-1);
            };
            let at = if before { pos } else { pos + 1 };
            k.on_change(list_event("linsert"));
            let len = k.modify::<ListValue, _>(false, |l| {
                l.insert(at, value);
                l.len()
            })?;
            Ok(len.map_or(0, |n| n as i64))
        })
    }

    /// LREM: removes up to |count| occurrences (from the head if positive, from the tail if
    /// negative, all if 0); returns how many.
    pub fn lrem(
        &mut self,
        key: &[u8],
        count: i64,
        value: &[u8],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.write_key(key, now_ms, false, |k| {
            let Some(l) = k.view::<ListValue>()? else {
                return Ok(0);
            };
            let mut hits: Vec<usize> = l
                .items()
                .iter()
                .enumerate()
                .filter(|(_, v)| *v == value)
                .map(|(i, _)| i)
                .collect();
            let limit = count.unsigned_abs() as usize;
            if count > 0 {
                hits.truncate(limit);
            } else if count < 0 && hits.len() > limit {
                hits.drain(..hits.len() - limit);
            }
            if hits.is_empty() {
                return Ok(0);
            }
            let n = hits.len();
            k.on_change(list_event("lrem"));
            k.modify::<ListValue, _>(false, |l| {
                l.retain_positions(|i, _| hits.binary_search(&i).is_err());
            })?;
            Ok(n)
        })
    }

    /// LTRIM.
    pub fn ltrim(&mut self, key: &[u8], start: i64, stop: i64, now_ms: u64) -> Result<(), OpError> {
        self.write_key(key, now_ms, false, |k| {
            let Some(l) = k.view::<ListValue>()? else {
                return Ok(());
            };
            let keep = index_range(l.len(), start, stop);
            k.on_change(list_event("ltrim"));
            k.modify::<ListValue, _>(false, |l| {
                l.retain_positions(|i, _| keep.is_some_and(|(a, b)| (a..=b).contains(&i)));
            })?;
            Ok(())
        })
    }

    /// LPOS: positions of `value`. `rank` (non-zero; negative searches from the tail) skips
    /// the first |rank|-1 matches; `count` `None` asks for one match, `Some(0)` for all;
    /// `max_len` (0 = no limit) bounds the elements compared.
    pub fn lpos(
        &mut self,
        key: &[u8],
        value: &[u8],
        rank: i64,
        count: Option<usize>,
        max_len: usize,
        now_ms: u64,
    ) -> Result<Vec<usize>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(l) = k.view::<ListValue>()? else {
                return Ok(Vec::new());
            };
            let len = l.len();
            let want = match count {
                None => 1,
                Some(0) => usize::MAX,
                Some(c) => c,
            };
            let mut skip = rank.unsigned_abs().saturating_sub(1);
            let scan = if max_len == 0 { len } else { max_len.min(len) };
            let mut found = Vec::new();
            let order: Box<dyn Iterator<Item = &[u8]>> = if rank >= 0 {
                Box::new(l.items().iter())
            } else {
                Box::new(l.items().iter().rev())
            };
            for (n, item) in order.take(scan).enumerate() {
                let i = if rank >= 0 { n } else { len - 1 - n };
                if item == value {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    found.push(i);
                    if found.len() >= want {
                        break;
                    }
                }
            }
            Ok(found)
        })
    }

    /// LMOVE (RPOPLPUSH is `Right`, `Left`): pops from `src`, pushes to `dst`, atomically.
    /// The push is announced before the pop, as Redis does.
    pub fn lmove(
        &mut self,
        src: &[u8],
        dst: &[u8],
        from: ListEnd,
        to: ListEnd,
        now_ms: u64,
    ) -> Result<Option<Bytes>, OpError> {
        self.make_room(now_ms)?;
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[src, dst], |set, routes| {
            let (ss, sh) = routes[0];
            let (ds, dh) = routes[1];
            {
                let s = KeyCtx::write(set.get(ss), db, sh, src, clock);
                if s.view::<ListValue>()?.is_none() {
                    return Ok(None);
                }
            }
            if src == dst {
                // A rotation within one list: the key is never empty, so it keeps its TTL.
                let mut s = KeyCtx::write(set.get(ss), db, sh, src, clock);
                let v = s
                    .modify::<ListValue, _>(false, |l| {
                        let v = l.pop(from.front()).expect("lists are never empty");
                        l.push(&v, to.front());
                        v
                    })?
                    .expect("the list exists");
                s.notify(to.push_event());
                s.notify(from.pop_event());
                return Ok(Some(out(&v)));
            }
            KeyCtx::write(set.get(ds), db, dh, dst, clock).check::<ListValue>()?;
            let v = {
                let s = KeyCtx::write(set.get(ss), db, sh, src, clock);
                let items = s.view::<ListValue>()?.expect("checked above").items();
                let end = if from.front() { 0 } else { items.len() - 1 };
                out(&items[end])
            };
            let mut d = KeyCtx::write(set.get(ds), db, dh, dst, clock);
            d.on_change(to.push_event());
            d.modify::<ListValue, _>(true, |l| l.push(&v, to.front()))?;
            d.signal_ready();
            let mut s = KeyCtx::write(set.get(ss), db, sh, src, clock);
            s.on_change(from.pop_event());
            s.modify::<ListValue, _>(false, |l| l.pop(from.front()))?;
            Ok(Some(v))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_rules() {
        assert_eq!(index_range(5, 0, -1), Some((0, 4)));
        assert_eq!(index_range(5, -100, 100), Some((0, 4)));
        assert_eq!(index_range(5, 3, 1), None);
        assert_eq!(index_range(5, 5, 10), None);
        assert_eq!(index_range(5, -2, -1), Some((3, 4)));
        assert_eq!(list_index(3, -1), Some(2));
        assert_eq!(list_index(3, 3), None);
        assert_eq!(list_index(3, -4), None);
    }
}
