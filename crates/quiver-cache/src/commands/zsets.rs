//! Sorted-set commands: ZADD (NX XX GT LT CH INCR) ZREM ZSCORE ZMSCORE ZINCRBY ZCARD ZCOUNT
//! ZLEXCOUNT ZRANGE (BYSCORE BYLEX REV LIMIT) and its older forms, ZRANK ZREVRANK ZPOPMIN
//! ZPOPMAX ZRANGESTORE ZUNIONSTORE ZINTERSTORE ZREMRANGEBYSCORE ZREMRANGEBYRANK
//! ZREMRANGEBYLEX ZSCAN.

use std::collections::HashMap;

use bytes::Bytes;

use super::zrange::{Aggregate, ZRangeBy, ZRangeSpec, pairs, select};
use super::{KeyCtx, entry_at, locate_all, out};
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses};
use crate::scan::{scan_elements, scan_whole};
use crate::value::Value;
use crate::value::zset::{LexBound, ScoreBound, ZItem, ZSetValue};

/// ZADD's NX/XX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZAddCondition {
    /// Add and update.
    #[default]
    Always,
    /// NX: only add new members.
    IfAbsent,
    /// XX: only update existing members.
    IfPresent,
}

/// ZADD's GT/LT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZAddCompare {
    /// Any new score.
    #[default]
    Any,
    /// GT: only raise scores.
    Greater,
    /// LT: only lower scores.
    Less,
}

/// ZADD's options (the caller has refused the combinations Redis refuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ZAddOptions {
    /// NX / XX.
    pub condition: ZAddCondition,
    /// GT / LT.
    pub compare: ZAddCompare,
    /// CH: count changed members too.
    pub ch: bool,
    /// INCR: add to the score (one pair only) and reply with the new score.
    pub incr: bool,
}

/// ZADD's reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZAddReply {
    /// Members added (plus changed with CH).
    Count(usize),
    /// With INCR: the new score, or `None` when a condition stopped it.
    Score(Option<f64>),
}

pub(super) const fn zset_event(name: &'static str) -> Event {
    Event::new(EventClasses::ZSET, name)
}

impl Db<'_> {
    /// ZADD.
    pub fn zadd(
        &mut self,
        key: &[u8],
        members: &[(f64, &[u8])],
        opts: ZAddOptions,
        now_ms: u64,
    ) -> Result<ZAddReply, OpError> {
        self.write_key(key, now_ms, true, |k| {
            k.check::<ZSetValue>()?;
            let create = opts.condition != ZAddCondition::IfPresent;
            k.on_change(zset_event(if opts.incr { "zincr" } else { "zadd" }));
            let r = k.modify_if::<ZSetValue, _>(create, |z| match zadd_into(z, members, opts) {
                Ok((reply, touched)) => (Ok(reply), touched),
                Err(error) => (Err(error), false),
            })?;
            if k.exists() {
                // Clients blocked in BZPOPMIN/BZPOPMAX/BZMPOP on this key try again.
                k.signal_ready();
            }
            match r {
                Some(r) => r,
                None if opts.incr => Ok(ZAddReply::Score(None)),
                None => Ok(ZAddReply::Count(0)),
            }
        })
    }

    /// ZINCRBY: the new score.
    pub fn zincrby(
        &mut self,
        key: &[u8],
        delta: f64,
        member: &[u8],
        now_ms: u64,
    ) -> Result<f64, OpError> {
        let opts = ZAddOptions {
            incr: true,
            ..ZAddOptions::default()
        };
        match self.zadd(key, &[(delta, member)], opts, now_ms)? {
            ZAddReply::Score(Some(s)) => Ok(s),
            _ => Err(OpError::ScoreNan),
        }
    }

    /// ZREM: how many members existed.
    pub fn zrem(&mut self, key: &[u8], members: &[&[u8]], now_ms: u64) -> Result<usize, OpError> {
        self.write_key(key, now_ms, false, |k| {
            k.on_change(zset_event("zrem"));
            Ok(k.modify_if::<ZSetValue, _>(false, |z| {
                let removed = members.iter().filter(|m| z.remove(m).is_some()).count();
                (removed, removed > 0)
            })?
            .unwrap_or(0))
        })
    }

    /// ZSCORE.
    pub fn zscore(
        &mut self,
        key: &[u8],
        member: &[u8],
        now_ms: u64,
    ) -> Result<Option<f64>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ZSetValue>()?.and_then(|z| z.score(member)))
        })
    }

    /// ZMSCORE.
    pub fn zmscore(
        &mut self,
        key: &[u8],
        members: &[&[u8]],
        now_ms: u64,
    ) -> Result<Vec<Option<f64>>, OpError> {
        self.read_key(key, now_ms, |k| {
            let z = k.view::<ZSetValue>()?;
            Ok(members.iter().map(|m| z.and_then(|z| z.score(m))).collect())
        })
    }

    /// ZCARD.
    pub fn zcard(&mut self, key: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ZSetValue>()?.map_or(0, ZSetValue::len))
        })
    }

    /// ZCOUNT.
    pub fn zcount(
        &mut self,
        key: &[u8],
        min: &ScoreBound,
        max: &ScoreBound,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ZSetValue>()?.map_or(0, |z| {
                let (a, b) = z.score_range(min, max);
                b - a
            }))
        })
    }

    /// ZLEXCOUNT.
    pub fn zlexcount(
        &mut self,
        key: &[u8],
        min: &LexBound,
        max: &LexBound,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ZSetValue>()?.map_or(0, |z| {
                let (a, b) = z.lex_range(min, max);
                b - a
            }))
        })
    }

    /// ZRANGE in all its forms (ZRANGEBYSCORE, ZREVRANGE... map onto it): (member, score).
    pub fn zrange(
        &mut self,
        key: &[u8],
        spec: &ZRangeSpec,
        now_ms: u64,
    ) -> Result<Vec<(Bytes, f64)>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ZSetValue>()?
                .map(|z| pairs(select(z, spec)))
                .unwrap_or_default())
        })
    }

    /// ZRANK (`rev` = false) / ZREVRANK (true).
    pub fn zrank(
        &mut self,
        key: &[u8],
        member: &[u8],
        rev: bool,
        now_ms: u64,
    ) -> Result<Option<usize>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<ZSetValue>()?.and_then(|z| {
                z.rank(member)
                    .map(|r| if rev { z.len() - 1 - r } else { r })
            }))
        })
    }

    /// ZPOPMIN (`max` = false) / ZPOPMAX (true): up to `count` items.
    pub fn zpop(
        &mut self,
        key: &[u8],
        count: usize,
        max: bool,
        now_ms: u64,
    ) -> Result<Vec<(Bytes, f64)>, OpError> {
        self.write_key(key, now_ms, false, |k| {
            Ok(pop_items(k, count, max)?.unwrap_or_default())
        })
    }

    /// The pop BZPOPMIN/BZPOPMAX and (B)ZMPOP perform: up to `count` items from the
    /// first of `keys` holding a sorted set, atomically across all of them; `None` when
    /// none does. A key holding another type fails with `WrongType` when it is reached.
    pub fn zpop_first(
        &mut self,
        keys: &[&[u8]],
        max: bool,
        count: usize,
        now_ms: u64,
    ) -> Result<Option<Popped>, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            for (key, &(shard, hash)) in keys.iter().zip(routes) {
                let mut k = KeyCtx::write(set.get(shard), db, hash, key, clock);
                if let Some(popped) = pop_items(&mut k, count, max)?.filter(|p| !p.is_empty()) {
                    return Ok(Some((out(key), popped)));
                }
            }
            Ok(None)
        })
    }

    /// ZRANDMEMBER: `None` = one member; positive = distinct; negative = with repeats.
    pub fn zrandmember(
        &mut self,
        key: &[u8],
        count: Option<i64>,
        now_ms: u64,
    ) -> Result<Vec<(Bytes, f64)>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(len) = k.view::<ZSetValue>()?.map(ZSetValue::len) else {
                return Ok(Vec::new());
            };
            let picks = super::random_indices(&mut k.s.rng, len, count.unwrap_or(1))?;
            let z = k.view::<ZSetValue>()?.expect("present above");
            Ok(picks
                .into_iter()
                .filter_map(|i| z.at_rank(i))
                .map(|item| (out(&item.member), item.score))
                .collect())
        })
    }

    /// ZREMRANGEBYRANK / BYSCORE / BYLEX: how many were removed.
    pub fn zremrange(&mut self, key: &[u8], by: &ZRangeBy, now_ms: u64) -> Result<usize, OpError> {
        self.write_key(key, now_ms, false, |k| {
            let spec = ZRangeSpec {
                by: by.clone(),
                rev: false,
                limit: None,
            };
            let victims: Vec<Box<[u8]>> = match k.view::<ZSetValue>()? {
                None => return Ok(0),
                Some(z) => select(z, &spec)
                    .into_iter()
                    .map(|x| x.member.clone())
                    .collect(),
            };
            if victims.is_empty() {
                return Ok(0);
            }
            k.on_change(zset_event(match by {
                ZRangeBy::Rank(..) => "zremrangebyrank",
                ZRangeBy::Score(..) => "zremrangebyscore",
                ZRangeBy::Lex(..) => "zremrangebylex",
            }));
            k.modify::<ZSetValue, _>(false, |z| {
                for m in &victims {
                    z.remove(m);
                }
            })?;
            Ok(victims.len())
        })
    }

    /// ZRANGESTORE: stores the selection in `dst`; returns its size.
    pub fn zrangestore(
        &mut self,
        dst: &[u8],
        src: &[u8],
        spec: &ZRangeSpec,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.make_room(now_ms)?;
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[src, dst], |set, routes| {
            let (ss, sh) = routes[0];
            let (ds, dh) = routes[1];
            let items: Vec<(Box<[u8]>, f64)> = {
                let s = KeyCtx::read(set.get(ss), db, sh, src, clock);
                match s.view::<ZSetValue>()? {
                    None => Vec::new(),
                    Some(z) => select(z, spec)
                        .into_iter()
                        .map(|x| (x.member.clone(), x.score))
                        .collect(),
                }
            };
            let mut d = KeyCtx::write(set.get(ds), db, dh, dst, clock);
            store(d.on_change(zset_event("zrangestore")), &items);
            Ok(items.len())
        })
    }

    /// ZUNIONSTORE, ZINTERSTORE (with WEIGHTS and AGGREGATE) and ZDIFFSTORE: the result
    /// of `op` over `keys` (plain sets count as members scored 1) replaces `dst`.
    /// Returns the stored size.
    pub fn zstore(
        &mut self,
        dst: &[u8],
        keys: &[&[u8]],
        op: ZSetOp,
        weights: Option<&[f64]>,
        aggregate: Aggregate,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.make_room(now_ms)?;
        let mut all: Vec<&[u8]> = keys.to_vec();
        all.push(dst);
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&all, |set, routes| {
            let items = combine(set, db, keys, routes, clock, op, weights, aggregate)?;
            let (ds, dh) = routes[keys.len()];
            let mut d = KeyCtx::write(set.get(ds), db, dh, dst, clock);
            store(d.on_change(zset_event(op.store_event())), &items);
            Ok(items.len())
        })
    }

    /// ZUNION, ZINTER (with WEIGHTS and AGGREGATE) and ZDIFF: the result of `op` over
    /// `keys`, by score then member.
    pub fn zcombine(
        &mut self,
        keys: &[&[u8]],
        op: ZSetOp,
        weights: Option<&[f64]>,
        aggregate: Aggregate,
        now_ms: u64,
    ) -> Result<Vec<(Bytes, f64)>, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            let mut items = combine(set, db, keys, routes, clock, op, weights, aggregate)?;
            items.sort_by(|(m1, s1), (m2, s2)| s1.total_cmp(s2).then_with(|| m1.cmp(m2)));
            Ok(items
                .into_iter()
                .map(|(m, s)| (Bytes::from(Vec::from(m)), s))
                .collect())
        })
    }

    /// ZINTERCARD: the size of the intersection of `keys`, counting up to `limit` (0: no
    /// limit).
    pub fn zintercard(
        &mut self,
        keys: &[&[u8]],
        limit: usize,
        now_ms: u64,
    ) -> Result<usize, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            let n = combine(
                set,
                db,
                keys,
                routes,
                clock,
                ZSetOp::Inter,
                None,
                Aggregate::Sum,
            )?
            .len();
            Ok(if limit == 0 { n } else { n.min(limit) })
        })
    }

    /// ZSCAN: (member, score) pairs.
    pub fn zscan(
        &mut self,
        key: &[u8],
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
        now_ms: u64,
    ) -> Result<(u64, Vec<(Bytes, f64)>), OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(z) = k.view::<ZSetValue>()? else {
                return Ok((0, Vec::new()));
            };
            if z.encoding() == "listpack" {
                // A listpack is in score order.
                let item = |i: &ZItem| (out(&i.member), i.score);
                return Ok(scan_whole(z.iter_from(0), pattern, |i| &i.member, item));
            }
            Ok(scan_elements(
                cursor,
                count,
                pattern,
                |c, f| z.scan_step(c, f),
                |m| (out(&m.name), m.score),
            ))
        })
    }
}

/// Adds `members` under `opts`: the reply, and whether anything was added or changed.
fn zadd_into(
    z: &mut ZSetValue,
    members: &[(f64, &[u8])],
    opts: ZAddOptions,
) -> Result<(ZAddReply, bool), OpError> {
    let mut added = 0;
    let mut changed = 0;
    let mut last = None;
    for &(score, m) in members {
        if score.is_nan() {
            return Err(OpError::NotAFloat);
        }
        match z.score(m) {
            Some(cur) => {
                if opts.condition == ZAddCondition::IfAbsent {
                    continue;
                }
                let new = if opts.incr { cur + score } else { score };
                if new.is_nan() {
                    return Err(OpError::ScoreNan);
                }
                let allowed = match opts.compare {
                    ZAddCompare::Any => true,
                    ZAddCompare::Greater => new > cur,
                    ZAddCompare::Less => new < cur,
                };
                if !allowed {
                    continue;
                }
                if new != cur {
                    z.insert(m, new);
                    changed += 1;
                }
                last = Some(new);
            }
            None => {
                if opts.condition == ZAddCondition::IfPresent {
                    continue;
                }
                z.insert(m, score);
                added += 1;
                last = Some(score);
            }
        }
    }
    let reply = if opts.incr {
        ZAddReply::Score(last)
    } else if opts.ch {
        ZAddReply::Count(added + changed)
    } else {
        ZAddReply::Count(added)
    };
    Ok((reply, added + changed > 0))
}

/// ZPOPMIN/ZPOPMAX's work on one key: up to `count` items, lowest (or highest) first;
/// `None` when the key is missing.
fn pop_items(
    k: &mut KeyCtx<'_>,
    count: usize,
    max: bool,
) -> Result<Option<Vec<(Bytes, f64)>>, OpError> {
    k.on_change(zset_event(if max { "zpopmax" } else { "zpopmin" }));
    k.modify_if::<ZSetValue, _>(false, |z| {
        let popped: Vec<_> = (0..count)
            .map_while(|_| z.pop(max))
            .map(|x| (Bytes::from(Vec::from(x.member)), x.score))
            .collect();
        let changed = !popped.is_empty();
        (popped, changed)
    })
}

/// Union, intersection or difference of sorted sets (and plain sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZSetOp {
    /// Members in any input.
    Union,
    /// Members in every input.
    Inter,
    /// Members of the first input in none of the others (scores from the first).
    Diff,
}

impl ZSetOp {
    fn store_event(self) -> &'static str {
        match self {
            ZSetOp::Union => "zunionstore",
            ZSetOp::Inter => "zinterstore",
            ZSetOp::Diff => "zdiffstore",
        }
    }
}

/// A member and its score.
type Scored = (Box<[u8]>, f64);

/// A key and the (member, score) items popped from it.
type Popped = (Bytes, Vec<(Bytes, f64)>);

/// The members `op` selects from `keys` (locked, routed by `routes`) and their scores,
/// weighted and aggregated; unordered.
#[allow(clippy::too_many_arguments)]
fn combine(
    set: &mut crate::keyspace::ShardSet<'_>,
    db: usize,
    keys: &[&[u8]],
    routes: &[(usize, u64)],
    clock: crate::evict::Clock,
    op: ZSetOp,
    weights: Option<&[f64]>,
    aggregate: Aggregate,
) -> Result<Vec<Scored>, OpError> {
    let found = locate_all(set, db, keys, &routes[..keys.len()], clock, |k| {
        match k.entry().map(|e| &e.value) {
            None | Some(Value::ZSet(_)) | Some(Value::Set(_)) => Ok(()),
            Some(_) => Err(OpError::WrongType),
        }
    })?;
    let members = |i: usize| -> Vec<(&[u8], f64)> {
        let (shard, _) = routes[i];
        match entry_at(set, db, shard, found[i]).map(|e| &e.value) {
            Some(Value::ZSet(z)) => z.members().map(|m| (&m.name[..], m.score)).collect(),
            Some(Value::Set(s)) => s.members().map(|m| (&m[..], 1.0)).collect(),
            _ => Vec::new(),
        }
    };
    if op == ZSetOp::Diff {
        let others: std::collections::HashSet<&[u8]> = (1..keys.len())
            .flat_map(|i| members(i).into_iter().map(|(m, _)| m))
            .collect();
        return Ok(members(0)
            .into_iter()
            .filter(|(m, _)| !others.contains(m))
            .map(|(m, s)| (m.into(), s))
            .collect());
    }
    let mut acc: HashMap<Box<[u8]>, (f64, usize)> = HashMap::new();
    for i in 0..keys.len() {
        let w = weights.and_then(|w| w.get(i)).copied().unwrap_or(1.0);
        for (m, score) in members(i) {
            let mut s = score * w;
            if s.is_nan() {
                s = 0.0;
            }
            match acc.get_mut(m) {
                Some((v, n)) => {
                    *v = aggregate.apply(*v, s);
                    *n += 1;
                }
                None => {
                    acc.insert(m.into(), (s, 1));
                }
            }
        }
    }
    Ok(acc
        .into_iter()
        .filter(|(_, (_, n))| op == ZSetOp::Union || *n == keys.len())
        .map(|(m, (s, _))| (m, s))
        .collect())
}

/// Replaces `k`'s value and TTL with a sorted set of `items`, announcing `k`'s pending
/// event; an empty result deletes the key instead.
pub(super) fn store(k: &mut KeyCtx<'_>, items: &[(Box<[u8]>, f64)]) {
    if items.is_empty() {
        k.delete();
        return;
    }
    let mut z = ZSetValue::default();
    for (m, s) in items {
        z.insert(m, *s);
    }
    k.put_value(Value::ZSet(Box::new(z)));
    k.set_expire(None);
    k.signal_ready();
}
