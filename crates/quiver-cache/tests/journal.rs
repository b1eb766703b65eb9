//! Journal records against a model: random writes to one keyspace (FLUSHDB, FLUSHALL and
//! SWAPDB among them), the records of their changes replayed into another, and the two
//! hold the same keys, values (byte for byte in DUMP form) and expiry times after every
//! step.

use proptest::prelude::*;
use quiver_cache::rdb::{Replayed, journal_libraries};
use quiver_cache::{ExpireCondition, Keyspace, ListEnd, SetOptions, ZAddOptions};

use crate::{T0, ks};

#[derive(Debug, Clone)]
enum Op {
    Set(usize, u8, Vec<u8>),
    Del(usize, u8),
    Push(usize, u8, u8),
    HSet(usize, u8, u8, u16),
    SAdd(usize, u8, u16),
    ZAdd(usize, u8, u8, i32),
    ExpireAt(usize, u8, u64),
    FlushDb(usize),
    FlushAll,
    SwapDb,
}

fn op() -> impl Strategy<Value = Op> {
    let db = 0..2usize;
    let key = 0..6u8;
    prop_oneof![
        (
            db.clone(),
            key.clone(),
            proptest::collection::vec(any::<u8>(), 0..40)
        )
            .prop_map(|(d, k, v)| Op::Set(d, k, v)),
        (db.clone(), key.clone()).prop_map(|(d, k)| Op::Del(d, k)),
        (db.clone(), key.clone(), any::<u8>()).prop_map(|(d, k, v)| Op::Push(d, k, v)),
        (db.clone(), key.clone(), 0..20u8, any::<u16>())
            .prop_map(|(d, k, f, v)| Op::HSet(d, k, f, v)),
        (db.clone(), key.clone(), any::<u16>()).prop_map(|(d, k, m)| Op::SAdd(d, k, m)),
        (db.clone(), key.clone(), 0..20u8, any::<i32>())
            .prop_map(|(d, k, m, s)| Op::ZAdd(d, k, m, s)),
        (db.clone(), key.clone(), 0..200u64).prop_map(|(d, k, ms)| Op::ExpireAt(d, k, ms)),
        db.prop_map(Op::FlushDb),
        Just(Op::FlushAll),
        Just(Op::SwapDb),
    ]
}

fn key(k: u8) -> Vec<u8> {
    format!("key:{k}").into_bytes()
}

fn apply(ks: &Keyspace, op: &Op, now: u64) {
    let db = |d: usize| ks.db(d).unwrap();
    // Wrong-type errors are part of the game: they change nothing.
    match op {
        Op::Set(d, k, v) => drop(db(*d).set(&key(*k), v, SetOptions::default(), now)),
        Op::Del(d, k) => drop(db(*d).del(&[&key(*k)], now)),
        Op::Push(d, k, v) => drop(db(*d).push(&key(*k), &[&[*v]], ListEnd::Right, false, now)),
        Op::HSet(d, k, f, v) => {
            let (f, v) = ([*f], v.to_string());
            drop(db(*d).hset(&key(*k), &[(&f, v.as_bytes())], now));
        }
        Op::SAdd(d, k, m) => drop(db(*d).sadd(&key(*k), &[m.to_string().as_bytes()], now)),
        Op::ZAdd(d, k, m, s) => drop(db(*d).zadd(
            &key(*k),
            &[(f64::from(*s) / 8.0, &[*m])],
            ZAddOptions::default(),
            now,
        )),
        Op::ExpireAt(d, k, ms) => drop(db(*d).expire_at(
            &key(*k),
            (T0 + 50 + ms) as i64,
            ExpireCondition::Always,
            now,
        )),
        Op::FlushDb(d) => drop(db(*d).flushdb()),
        Op::FlushAll => drop(db(0).flushall()),
        Op::SwapDb => db(0).swapdb(0, 1).unwrap(),
    }
}

/// Every key of both databases: its DUMP payload and expiry time.
fn contents(ks: &Keyspace, now: u64) -> Vec<(usize, Vec<u8>, Vec<u8>, i64)> {
    let mut out = Vec::new();
    for d in 0..2 {
        let mut db = ks.db(d).unwrap();
        let mut keys = db.keys(b"*", now);
        keys.sort();
        for k in keys {
            let dump = db.dump(&k, now).expect("listed");
            let at = db.expire_time_ms(&k, now);
            out.push((d, k, dump, at));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn replaying_the_journal_rebuilds_the_keyspace(ops in proptest::collection::vec(op(), 1..60)) {
        let (source, replica) = (ks(), ks());
        source.set_change_feed(true);
        for (step, op) in ops.iter().enumerate() {
            let now = T0 + step as u64 * 5;
            apply(&source, op, now);
            let mut records = Vec::new();
            source
                .journal_changes(&source.take_changes(), now, &mut records)
                .unwrap();
            for record in &records {
                prop_assert_eq!(replica.replay_journal(record, now), Ok(Replayed::Keys));
            }
            prop_assert_eq!(contents(&replica, now), contents(&source, now), "after {:?}", op);
        }
    }
}

#[test]
fn libraries_and_damaged_records() {
    let ks = ks();
    let record = journal_libraries([&b"code one"[..], b"code two"]);
    assert_eq!(
        ks.replay_journal(&record, T0),
        Ok(Replayed::Libraries(vec![
            b"code one".to_vec(),
            b"code two".to_vec()
        ]))
    );
    for bad in [
        &b""[..],
        b"Z",
        b"W\x00",
        b"D\x3f\x01k",
        b"W\x00\x00\x00\x00\x00\x00\x00\x00\x00\x63\x01k",
    ] {
        assert!(ks.replay_journal(bad, T0).is_err(), "{bad:?}");
    }
    // A trailing byte is refused, not ignored.
    let source = crate::ks();
    source.set_change_feed(true);
    source
        .db(0)
        .unwrap()
        .set(b"k", b"v", SetOptions::default(), T0)
        .unwrap();
    let mut records = Vec::new();
    source
        .journal_changes(&source.take_changes(), T0, &mut records)
        .unwrap();
    let mut long = records[0].clone();
    long.push(0);
    assert!(ks.replay_journal(&long, T0).is_err());
    assert_eq!(ks.replay_journal(&records[0], T0), Ok(Replayed::Keys));
}
