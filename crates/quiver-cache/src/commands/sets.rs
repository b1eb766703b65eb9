//! Set commands: SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SMOVE SINTER
//! SUNION SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE SINTERCARD SSCAN.

use bytes::Bytes;

use super::{KeyCtx, Kind, distinct_indices, entry_at, locate_all, out, random_indices};
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses};
use crate::scan::{scan_elements, scan_whole};
use crate::value::Value;
use crate::value::set::SetValue;
use crate::value::string::parse_i64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetOp {
    Inter,
    Union,
    Diff,
}

const fn set_event(name: &'static str) -> Event {
    Event::new(EventClasses::SET, name)
}

impl SetOp {
    /// The event of the STORE form.
    fn store_event(self) -> Event {
        set_event(match self {
            SetOp::Inter => "sinterstore",
            SetOp::Union => "sunionstore",
            SetOp::Diff => "sdiffstore",
        })
    }
}

impl Db<'_> {
    /// SADD: returns how many members were new.
    pub fn sadd(&mut self, key: &[u8], members: &[&[u8]], now_ms: u64) -> Result<usize, OpError> {
        self.write_key(key, now_ms, true, |k| {
            k.on_change(set_event("sadd"));
            Ok(k.modify_if::<SetValue, _>(true, |s| {
                let added = members.iter().filter(|m| s.insert(m)).count();
                (added, added > 0)
            })?
            .unwrap_or(0))
        })
    }

    /// SREM: returns how many members existed.
    pub fn srem(&mut self, key: &[u8], members: &[&[u8]], now_ms: u64) -> Result<usize, OpError> {
        self.write_key(key, now_ms, false, |k| {
            k.on_change(set_event("srem"));
            Ok(k.modify_if::<SetValue, _>(false, |s| {
                let removed = members.iter().filter(|m| s.remove(m)).count();
                (removed, removed > 0)
            })?
            .unwrap_or(0))
        })
    }

    /// SMEMBERS.
    pub fn smembers(&mut self, key: &[u8], now_ms: u64) -> Result<Vec<Bytes>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<SetValue>()?
                .map(|s| s.members().map(|m| out(m)).collect())
                .unwrap_or_default())
        })
    }

    /// SISMEMBER.
    pub fn sismember(&mut self, key: &[u8], member: &[u8], now_ms: u64) -> Result<bool, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<SetValue>()?.is_some_and(|s| s.contains(member)))
        })
    }

    /// SMISMEMBER.
    pub fn smismember(
        &mut self,
        key: &[u8],
        members: &[&[u8]],
        now_ms: u64,
    ) -> Result<Vec<bool>, OpError> {
        self.read_key(key, now_ms, |k| {
            let s = k.view::<SetValue>()?;
            Ok(members
                .iter()
                .map(|m| s.is_some_and(|s| s.contains(m)))
                .collect())
        })
    }

    /// SCARD.
    pub fn scard(&mut self, key: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<SetValue>()?.map_or(0, SetValue::len))
        })
    }

    /// SPOP: removes up to `count` random members (one when `None`).
    pub fn spop(
        &mut self,
        key: &[u8],
        count: Option<usize>,
        now_ms: u64,
    ) -> Result<Vec<Bytes>, OpError> {
        self.write_key(key, now_ms, false, |k| {
            let Some(len) = k.view::<SetValue>()?.map(SetValue::len) else {
                return Ok(Vec::new());
            };
            let picks = distinct_indices(&mut k.s.rng, len, count.unwrap_or(1));
            let remaining = len - picks.len();
            // Popping most of a set leaves what remains as a set made anew, as Redis does
            // (SPOP_MOVE_STRATEGY_MUL): an intset again when it can be one.
            let made_anew = count.is_some() && remaining * 5 <= picks.len();
            k.on_change(set_event("spop"));
            Ok(k.modify_if::<SetValue, _>(false, |s| {
                let popped = if remaining == 0 {
                    // The whole set, in its order (an intset's is numeric), as in Redis.
                    let all = s.members().map(|m| out(m)).collect();
                    for at in (0..len).rev() {
                        s.remove_at(at);
                    }
                    all
                } else {
                    // Removed from the highest position down (a removal moves the last
                    // member into the hole, which never disturbs a lower position still
                    // to be removed), answered in the random order they were picked; when
                    // most of the set goes, in the set's order, as Redis answers what is
                    // left of the set it replaces (an intset's is numeric).
                    let intset = s.encoding() == "intset";
                    let mut order: Vec<usize> = (0..picks.len()).collect();
                    order.sort_unstable_by(|&a, &b| picks[b].cmp(&picks[a]));
                    let mut popped = vec![Bytes::new(); picks.len()];
                    for at in order {
                        popped[at] = Bytes::from(Vec::from(s.remove_at(picks[at])));
                    }
                    if made_anew && intset {
                        popped.sort_unstable_by_key(|m| parse_i64(m).unwrap_or_default());
                    }
                    popped
                };
                if made_anew {
                    s.encode_anew();
                }
                (popped, !picks.is_empty())
            })?
            .unwrap_or_default())
        })
    }

    /// SRANDMEMBER: `None` = one member; positive = distinct; negative = with repeats.
    pub fn srandmember(
        &mut self,
        key: &[u8],
        count: Option<i64>,
        now_ms: u64,
    ) -> Result<Vec<Bytes>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(len) = k.view::<SetValue>()?.map(SetValue::len) else {
                return Ok(Vec::new());
            };
            let picks = random_indices(&mut k.s.rng, len, count.unwrap_or(1))?;
            let s = k.view::<SetValue>()?.expect("present above");
            // At least the whole set, distinct: in its order, as Redis answers it.
            if count.is_some_and(|c| usize::try_from(c).is_ok_and(|c| c >= len)) {
                return Ok(s.members().map(|m| out(m)).collect());
            }
            Ok(picks.into_iter().map(|i| out(s.at(i))).collect())
        })
    }

    /// SMOVE: moves `member` from `src` to `dst`; returns whether it was in `src`. Not
    /// refused under `maxmemory` (it moves what is stored), as in Redis.
    pub fn smove(
        &mut self,
        src: &[u8],
        dst: &[u8],
        member: &[u8],
        now_ms: u64,
    ) -> Result<bool, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[src, dst], |set, routes| {
            let (ss, sh) = routes[0];
            let (ds, dh) = routes[1];
            // A missing source answers 0 before the destination's type is checked.
            let Some(present) = KeyCtx::write(set.get(ss), db, sh, src, clock)
                .view::<SetValue>()?
                .map(|s| s.contains(member))
            else {
                return Ok(false);
            };
            KeyCtx::write(set.get(ds), db, dh, dst, clock).check::<SetValue>()?;
            if !present {
                return Ok(false);
            }
            if src == dst {
                return Ok(true);
            }
            KeyCtx::write(set.get(ss), db, sh, src, clock)
                .on_change(set_event("srem"))
                .modify::<SetValue, _>(false, |s| s.remove(member))?;
            KeyCtx::write(set.get(ds), db, dh, dst, clock)
                .on_change(set_event("sadd"))
                .modify_if::<SetValue, _>(true, |s| {
                    let added = s.insert(member);
                    (added, added)
                })?;
            Ok(true)
        })
    }

    /// SINTER.
    pub fn sinter(&mut self, keys: &[&[u8]], now_ms: u64) -> Result<Vec<Bytes>, OpError> {
        self.set_op(SetOp::Inter, keys, None, usize::MAX, now_ms)
            .map(to_bytes)
    }

    /// SUNION.
    pub fn sunion(&mut self, keys: &[&[u8]], now_ms: u64) -> Result<Vec<Bytes>, OpError> {
        self.set_op(SetOp::Union, keys, None, usize::MAX, now_ms)
            .map(to_bytes)
    }

    /// SDIFF: members of the first set in none of the others.
    pub fn sdiff(&mut self, keys: &[&[u8]], now_ms: u64) -> Result<Vec<Bytes>, OpError> {
        self.set_op(SetOp::Diff, keys, None, usize::MAX, now_ms)
            .map(to_bytes)
    }

    /// SINTERCARD: size of the intersection, counting stops at `limit` (0 = no limit).
    pub fn sintercard(
        &mut self,
        keys: &[&[u8]],
        limit: usize,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        let limit = if limit == 0 { usize::MAX } else { limit };
        self.set_op(SetOp::Inter, keys, None, limit, now_ms)
            .map(|v| v.len())
    }

    /// SINTERSTORE: stores the intersection in `dst`; returns its size.
    pub fn sinterstore(
        &mut self,
        dst: &[u8],
        keys: &[&[u8]],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.set_op(SetOp::Inter, keys, Some(dst), usize::MAX, now_ms)
            .map(|v| v.len())
    }

    /// SUNIONSTORE.
    pub fn sunionstore(
        &mut self,
        dst: &[u8],
        keys: &[&[u8]],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.set_op(SetOp::Union, keys, Some(dst), usize::MAX, now_ms)
            .map(|v| v.len())
    }

    /// SDIFFSTORE.
    pub fn sdiffstore(
        &mut self,
        dst: &[u8],
        keys: &[&[u8]],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.set_op(SetOp::Diff, keys, Some(dst), usize::MAX, now_ms)
            .map(|v| v.len())
    }

    /// SSCAN.
    pub fn sscan(
        &mut self,
        key: &[u8],
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
        now_ms: u64,
    ) -> Result<(u64, Vec<Bytes>), OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(s) = k.view::<SetValue>()? else {
                return Ok((0, Vec::new()));
            };
            if s.encoding() == "intset" {
                return Ok(scan_whole(s.members(), pattern, |m| &m[..], |m| out(m)));
            }
            Ok(scan_elements(
                cursor,
                count,
                pattern,
                |c, f| s.scan_step(c, f),
                |m| out(m),
            ))
        })
    }

    fn set_op(
        &mut self,
        op: SetOp,
        keys: &[&[u8]],
        dst: Option<&[u8]>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<Box<[u8]>>, OpError> {
        if dst.is_some() {
            self.make_room(now_ms)?;
        }
        let mut all: Vec<&[u8]> = keys.to_vec();
        if let Some(d) = dst {
            all.push(d);
        }
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&all, |set, routes| {
            let found = locate_all(set, db, keys, &routes[..keys.len()], clock, |k| {
                k.check::<SetValue>()
            })?;
            let sets: Vec<Option<&SetValue>> = found
                .iter()
                .zip(routes)
                .map(|(idx, &(shard, _))| {
                    entry_at(set, db, shard, *idx).and_then(|e| SetValue::peek(&e.value))
                })
                .collect();
            let result = combine(op, &sets, limit);
            if let Some(d) = dst {
                let (ds, dh) = routes[keys.len()];
                let mut k = KeyCtx::write(set.get(ds), db, dh, d, clock);
                if result.is_empty() {
                    k.delete();
                } else {
                    let mut v = SetValue::default();
                    for m in &result {
                        v.insert(m);
                    }
                    k.on_change(op.store_event())
                        .put_value(Value::Set(Box::new(v)));
                    k.set_expire(None);
                }
            }
            Ok(result)
        })
    }
}

fn combine(op: SetOp, sets: &[Option<&SetValue>], limit: usize) -> Vec<Box<[u8]>> {
    match op {
        SetOp::Inter => {
            if sets.iter().any(Option::is_none) {
                return Vec::new();
            }
            let sets: Vec<&SetValue> = sets.iter().flatten().copied().collect();
            let Some(smallest) = sets.iter().min_by_key(|s| s.len()) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            for m in smallest.members() {
                if out.len() >= limit {
                    break;
                }
                if sets.iter().all(|s| s.contains(m)) {
                    out.push(m.clone());
                }
            }
            out
        }
        SetOp::Union => {
            let mut acc = SetValue::default();
            for s in sets.iter().flatten() {
                for m in s.members() {
                    acc.insert(m);
                }
            }
            acc.members().cloned().collect()
        }
        SetOp::Diff => {
            let Some(Some(first)) = sets.first() else {
                return Vec::new();
            };
            // A set made of what is left, as Redis makes one (an intset's order).
            let mut acc = SetValue::default();
            for m in first.members() {
                if !sets[1..].iter().flatten().any(|s| s.contains(m)) {
                    acc.insert(m);
                }
            }
            acc.members().cloned().collect()
        }
    }
}

fn to_bytes(v: Vec<Box<[u8]>>) -> Vec<Bytes> {
    v.into_iter().map(|m| Bytes::from(Vec::from(m))).collect()
}
