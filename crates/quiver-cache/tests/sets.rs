use std::collections::HashSet;

use quiver_cache::{OpError, SetOptions};

use crate::{T0, ks};

fn set_of(v: Vec<bytes::Bytes>) -> HashSet<Vec<u8>> {
    v.into_iter().map(|b| b.to_vec()).collect()
}

fn hs(items: &[&str]) -> HashSet<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn set_basics() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.sadd(b"s", &[b"a", b"b", b"a"], T0), Ok(2));
    assert_eq!(db.scard(b"s", T0), Ok(2));
    assert_eq!(db.sismember(b"s", b"a", T0), Ok(true));
    assert_eq!(
        db.smismember(b"s", &[b"a", b"z"], T0),
        Ok(vec![true, false])
    );
    assert_eq!(set_of(db.smembers(b"s", T0).unwrap()), hs(&["a", "b"]));
    assert_eq!(db.srem(b"s", &[b"a", b"z"], T0), Ok(1));
    assert_eq!(db.smove(b"s", b"t", b"b", T0), Ok(true));
    assert_eq!(db.exists(&[b"s"], T0), 0);
    assert_eq!(db.smove(b"s", b"t", b"b", T0), Ok(false));
    db.set(b"str", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(db.smove(b"t", b"str", b"b", T0), Err(OpError::WrongType));
    assert_eq!(db.sadd(b"str", &[b"x"], T0), Err(OpError::WrongType));
}

#[test]
fn pop_and_random_counts() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    let members: Vec<Vec<u8>> = (0..20).map(|i| format!("m{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = members.iter().map(|m| &m[..]).collect();
    db.sadd(b"s", &refs, T0).unwrap();
    assert_eq!(set_of(db.srandmember(b"s", Some(5), T0).unwrap()).len(), 5);
    assert_eq!(db.srandmember(b"s", Some(100), T0).unwrap().len(), 20);
    assert_eq!(db.srandmember(b"s", Some(-100), T0).unwrap().len(), 100);
    assert_eq!(db.srandmember(b"s", None, T0).unwrap().len(), 1);
    let popped = set_of(db.spop(b"s", Some(15), T0).unwrap());
    assert_eq!(popped.len(), 15);
    assert_eq!(db.scard(b"s", T0), Ok(5));
    let rest = set_of(db.smembers(b"s", T0).unwrap());
    assert!(popped.is_disjoint(&rest));
    assert_eq!(db.spop(b"s", Some(10), T0).unwrap().len(), 5);
    assert_eq!(db.exists(&[b"s"], T0), 0);
    assert!(db.spop(b"s", None, T0).unwrap().is_empty());
}

#[test]
fn algebra_and_store() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.sadd(b"a", &[b"1", b"2", b"3", b"4"], T0).unwrap();
    db.sadd(b"b", &[b"3", b"4", b"5"], T0).unwrap();
    db.sadd(b"c", &[b"4", b"6"], T0).unwrap();
    assert_eq!(
        set_of(db.sinter(&[b"a", b"b", b"c"], T0).unwrap()),
        hs(&["4"])
    );
    assert_eq!(set_of(db.sunion(&[b"a", b"b", b"c"], T0).unwrap()).len(), 6);
    assert_eq!(
        set_of(db.sdiff(&[b"a", b"b", b"c"], T0).unwrap()),
        hs(&["1", "2"])
    );
    assert!(db.sinter(&[b"a", b"missing"], T0).unwrap().is_empty());
    assert_eq!(db.sintercard(&[b"a", b"b"], 0, T0), Ok(2));
    assert_eq!(db.sintercard(&[b"a", b"b"], 1, T0), Ok(1));
    assert_eq!(db.sinterstore(b"d", &[b"a", b"b"], T0), Ok(2));
    assert_eq!(set_of(db.smembers(b"d", T0).unwrap()), hs(&["3", "4"]));
    assert_eq!(
        db.sdiffstore(b"a", &[b"a", b"b"], T0),
        Ok(2),
        "destination may be a source"
    );
    assert_eq!(set_of(db.smembers(b"a", T0).unwrap()), hs(&["1", "2"]));
    assert_eq!(db.sinterstore(b"d", &[b"a", b"c"], T0), Ok(0));
    assert_eq!(
        db.exists(&[b"d"], T0),
        0,
        "an empty result deletes the destination"
    );
    assert_eq!(db.sunionstore(b"u", &[b"a", b"c"], T0), Ok(4));
    db.set(b"str", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(db.sunion(&[b"a", b"str"], T0), Err(OpError::WrongType));
}

/// SPOP of most of an intset answers in the set's (numeric) order, as Redis answers what
/// it takes from a set it replaces, and what is left is an intset again.
#[test]
fn spop_of_most_of_an_intset() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    let members: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
    let refs: Vec<&[u8]> = members.iter().map(|m| m.as_bytes()).collect();
    db.sadd(b"s", &refs, T0).unwrap();
    let popped: Vec<i64> = db
        .spop(b"s", Some(18), T0)
        .unwrap()
        .iter()
        .map(|m| std::str::from_utf8(m).unwrap().parse().unwrap())
        .collect();
    assert_eq!(popped.len(), 18);
    assert!(popped.windows(2).all(|w| w[0] < w[1]), "{popped:?}");
    assert_eq!(db.object_encoding(b"s", T0), Some("intset"));
}
