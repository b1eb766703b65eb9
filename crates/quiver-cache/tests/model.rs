//! Model-based property tests: random operation sequences against a simple model per type.

use std::collections::{BTreeMap, HashSet, VecDeque};

use proptest::prelude::*;
use quiver_cache::{ListEnd, OpError, ScoreBound, SetOptions, ZAddOptions, ZRangeBy, ZRangeSpec};

use crate::{T0, ks};

const CASES: u32 = 64;

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()])
}

fn small() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            b"x".to_vec(),
            b"y".to_vec(),
            b"1".to_vec(),
            b"-5".to_vec(),
            b"07".to_vec()
        ]),
        prop::collection::vec(any::<u8>(), 0..8),
    ]
}

#[derive(Debug, Clone)]
enum StrOp {
    Set(Vec<u8>, Vec<u8>),
    Get(Vec<u8>),
    Append(Vec<u8>, Vec<u8>),
    Incr(Vec<u8>, i64),
    Del(Vec<u8>),
    Range(Vec<u8>, i64, i64),
}

fn str_op() -> impl Strategy<Value = StrOp> {
    prop_oneof![
        (key(), small()).prop_map(|(k, v)| StrOp::Set(k, v)),
        key().prop_map(StrOp::Get),
        (key(), small()).prop_map(|(k, v)| StrOp::Append(k, v)),
        (key(), -3i64..3).prop_map(|(k, d)| StrOp::Incr(k, d)),
        key().prop_map(StrOp::Del),
        (key(), -5i64..5, -5i64..5).prop_map(|(k, a, b)| StrOp::Range(k, a, b)),
    ]
}

fn model_int(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?;
    let n: i64 = s.parse().ok()?;
    (n.to_string() == s).then_some(n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn strings_match_model(ops in prop::collection::vec(str_op(), 1..60)) {
        let ks = ks();
        let mut db = ks.db(0).unwrap();
        let mut m: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for op in ops {
            match op {
                StrOp::Set(k, v) => {
                    db.set(&k, &v, SetOptions::default(), T0).unwrap();
                    m.insert(k, v);
                }
                StrOp::Get(k) => {
                    prop_assert_eq!(db.get(&k, T0).unwrap().map(|b| b.to_vec()), m.get(&k).cloned());
                }
                StrOp::Append(k, v) => {
                    let e = m.entry(k.clone()).or_default();
                    e.extend_from_slice(&v);
                    prop_assert_eq!(db.append(&k, &v, T0).unwrap(), e.len());
                }
                StrOp::Incr(k, d) => {
                    let cur = m.get(&k).map_or(Some(0), |v| model_int(v));
                    match cur {
                        None => prop_assert_eq!(db.incr_by(&k, d, T0), Err(OpError::NotAnInteger)),
                        Some(c) => {
                            prop_assert_eq!(db.incr_by(&k, d, T0), Ok(c + d));
                            m.insert(k, (c + d).to_string().into_bytes());
                        }
                    }
                }
                StrOp::Del(k) => {
                    prop_assert_eq!(db.del(&[&k], T0), usize::from(m.remove(&k).is_some()));
                }
                StrOp::Range(k, a, b) => {
                    let v = m.get(&k).cloned().unwrap_or_default();
                    let len = v.len() as i64;
                    let expect = if len == 0 || (a < 0 && b < 0 && a > b) {
                        Vec::new()
                    } else {
                        let s = if a < 0 { (len + a).max(0) } else { a };
                        let e = if b < 0 { (len + b).max(0) } else { b }.min(len - 1);
                        if s > e { Vec::new() } else { v[s as usize..=e as usize].to_vec() }
                    };
                    prop_assert_eq!(db.getrange(&k, a, b, T0).unwrap().to_vec(), expect);
                }
            }
        }
        prop_assert_eq!(db.dbsize(), m.len());
    }

    #[test]
    fn hashes_match_model(ops in prop::collection::vec((0u8..4, small(), small()), 1..80)) {
        let ks = ks();
        let mut db = ks.db(0).unwrap();
        let mut m: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for (op, f, v) in ops {
            match op {
                0 => {
                    let new = !m.contains_key(&f);
                    prop_assert_eq!(db.hset(b"h", &[(&f, &v)], T0).unwrap(), usize::from(new));
                    m.insert(f, v);
                }
                1 => prop_assert_eq!(db.hdel(b"h", &[&f], T0).unwrap(), usize::from(m.remove(&f).is_some())),
                2 => prop_assert_eq!(db.hget(b"h", &f, T0).unwrap().map(|b| b.to_vec()), m.get(&f).cloned()),
                _ => {
                    let mut all: Vec<(Vec<u8>, Vec<u8>)> = db.hgetall(b"h", T0).unwrap().into_iter().map(|(a, b)| (a.to_vec(), b.to_vec())).collect();
                    all.sort();
                    prop_assert_eq!(all, m.clone().into_iter().collect::<Vec<_>>());
                }
            }
        }
        prop_assert_eq!(db.hlen(b"h", T0).unwrap(), m.len());
        prop_assert_eq!(db.exists(&[b"h"], T0), usize::from(!m.is_empty()));
    }

    #[test]
    fn lists_match_model(ops in prop::collection::vec((0u8..8, small(), -4i64..4, -4i64..4), 1..80)) {
        let ks = ks();
        let mut db = ks.db(0).unwrap();
        let mut m: VecDeque<Vec<u8>> = VecDeque::new();
        for (op, v, a, b) in ops {
            match op {
                0 => { m.push_front(v.clone()); db.push(b"l", &[&v], ListEnd::Left, false, T0).unwrap(); }
                1 => { m.push_back(v.clone()); db.push(b"l", &[&v], ListEnd::Right, false, T0).unwrap(); }
                2 => {
                    let got = db.pop(b"l", ListEnd::Left, None, T0).unwrap().map(|v| v[0].to_vec());
                    prop_assert_eq!(got, m.pop_front());
                }
                3 => {
                    let got = db.pop(b"l", ListEnd::Right, None, T0).unwrap().map(|v| v[0].to_vec());
                    prop_assert_eq!(got, m.pop_back());
                }
                4 => {
                    let len = m.len() as i64;
                    let s = if a < 0 { (len + a).max(0) } else { a };
                    let e = if b < 0 { len + b } else { b };
                    let expect: Vec<Vec<u8>> = if s > e || s >= len { Vec::new() } else { m.range(s as usize..=e.min(len - 1) as usize).cloned().collect() };
                    let got: Vec<Vec<u8>> = db.lrange(b"l", a, b, T0).unwrap().into_iter().map(|b| b.to_vec()).collect();
                    prop_assert_eq!(got, expect);
                }
                5 => {
                    // LREM with the sign rules.
                    let mut removed = 0;
                    let limit = a.unsigned_abs() as usize;
                    let positions: Vec<usize> = m.iter().enumerate().filter(|(_, x)| **x == v).map(|(i, _)| i).collect();
                    let chosen: Vec<usize> = if a > 0 { positions.iter().take(limit).copied().collect() } else if a < 0 { positions.iter().rev().take(limit).copied().collect() } else { positions.clone() };
                    let mut i = 0;
                    m.retain(|_| { let keep = !chosen.contains(&i); i += 1; if !keep { removed += 1; } keep });
                    prop_assert_eq!(db.lrem(b"l", a, &v, T0).unwrap(), removed);
                }
                6 => {
                    let len = m.len() as i64;
                    let idx = if a < 0 { len + a } else { a };
                    let res = db.lset(b"l", Some(a), &v, T0);
                    if m.is_empty() { prop_assert_eq!(res, Err(OpError::NoSuchKey)); }
                    else if idx < 0 || idx >= len { prop_assert_eq!(res, Err(OpError::IndexOutOfRange)); }
                    else { prop_assert_eq!(res, Ok(())); m[idx as usize] = v; }
                }
                _ => {
                    let len = m.len() as i64;
                    let s = if a < 0 { (len + a).max(0) } else { a };
                    let e = if b < 0 { len + b } else { b };
                    if s > e || s >= len { m.clear(); } else {
                        let kept: VecDeque<Vec<u8>> = m.range(s as usize..=e.min(len - 1) as usize).cloned().collect();
                        m = kept;
                    }
                    db.ltrim(b"l", a, b, T0).unwrap();
                }
            }
            prop_assert_eq!(db.llen(b"l", T0).unwrap(), m.len());
        }
    }

    #[test]
    fn sets_match_model(ops in prop::collection::vec((0u8..4, small()), 1..80)) {
        let ks = ks();
        let mut db = ks.db(0).unwrap();
        let mut m: HashSet<Vec<u8>> = HashSet::new();
        for (op, v) in ops {
            match op {
                0 => prop_assert_eq!(db.sadd(b"s", &[&v], T0).unwrap(), usize::from(m.insert(v))),
                1 => prop_assert_eq!(db.srem(b"s", &[&v], T0).unwrap(), usize::from(m.remove(&v))),
                2 => prop_assert_eq!(db.sismember(b"s", &v, T0).unwrap(), m.contains(&v)),
                _ => {
                    let popped = db.spop(b"s", Some(2), T0).unwrap();
                    prop_assert_eq!(popped.len(), m.len().min(2));
                    for p in popped {
                        prop_assert!(m.remove(&p[..]));
                    }
                }
            }
            prop_assert_eq!(db.scard(b"s", T0).unwrap(), m.len());
        }
        let got: HashSet<Vec<u8>> = db.smembers(b"s", T0).unwrap().into_iter().map(|b| b.to_vec()).collect();
        prop_assert_eq!(got, m);
    }

    #[test]
    fn zsets_match_model(ops in prop::collection::vec((0u8..5, 0u8..40, -20i32..20, -20i32..20), 1..120)) {
        let ks = ks();
        let mut db = ks.db(0).unwrap();
        let mut m: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
        let sorted = |m: &BTreeMap<Vec<u8>, f64>| {
            let mut v: Vec<(Vec<u8>, f64)> = m.iter().map(|(k, s)| (k.clone(), *s)).collect();
            v.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap().then_with(|| a.0.cmp(&b.0)));
            v
        };
        for (op, member, x, y) in ops {
            let member = format!("m{member}").into_bytes();
            match op {
                0 => {
                    db.zadd(b"z", &[(f64::from(x), &member)], ZAddOptions::default(), T0).unwrap();
                    m.insert(member, f64::from(x));
                }
                1 => prop_assert_eq!(db.zrem(b"z", &[&member], T0).unwrap(), usize::from(m.remove(&member).is_some())),
                2 => {
                    let rank = sorted(&m).iter().position(|(k, _)| *k == member);
                    prop_assert_eq!(db.zrank(b"z", &member, false, T0).unwrap(), rank);
                }
                3 => {
                    let (lo, hi) = (f64::from(x.min(y)), f64::from(x.max(y)));
                    let expect: Vec<Vec<u8>> = sorted(&m).into_iter().filter(|(_, s)| *s > lo && *s <= hi).map(|(k, _)| k).collect();
                    let spec = ZRangeSpec {
                        by: ZRangeBy::Score(ScoreBound { value: lo, exclusive: true }, ScoreBound { value: hi, exclusive: false }),
                        rev: false,
                        limit: None,
                    };
                    let got: Vec<Vec<u8>> = db.zrange(b"z", &spec, T0).unwrap().into_iter().map(|p| p.0.to_vec()).collect();
                    prop_assert_eq!(got, expect);
                }
                _ => {
                    let all = sorted(&m);
                    let len = all.len() as i64;
                    let (a, b) = (i64::from(x) / 4, i64::from(y) / 4);
                    let s = if a < 0 { (len + a).max(0) } else { a };
                    let e = if b < 0 { len + b } else { b };
                    let expect: Vec<Vec<u8>> = if s > e || s >= len { Vec::new() } else {
                        all[s as usize..=e.min(len - 1) as usize].iter().rev().map(|p| p.0.clone()).collect()
                    };
                    let spec = ZRangeSpec { by: ZRangeBy::Rank(a, b), rev: false, limit: None };
                    let mut got: Vec<Vec<u8>> = db.zrange(b"z", &spec, T0).unwrap().into_iter().map(|p| p.0.to_vec()).collect();
                    got.reverse();
                    prop_assert_eq!(got, expect);
                }
            }
            prop_assert_eq!(db.zcard(b"z", T0).unwrap(), m.len());
        }
    }
}
