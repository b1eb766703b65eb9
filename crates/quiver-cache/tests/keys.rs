use quiver_cache::{ExpireCondition, ListEnd, OpError, SetOptions, ValueType};

use crate::{T0, ks};

#[test]
fn del_exists_touch_type() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    for k in [&b"a"[..], b"b", b"c"] {
        db.set(k, b"v", SetOptions::default(), T0).unwrap();
    }
    assert_eq!(db.exists(&[b"a", b"a", b"x"], T0), 2);
    assert_eq!(db.touch(&[b"a", b"x"], T0), 1);
    assert_eq!(db.del(&[b"a", b"b", b"x"], T0), 2);
    assert_eq!(db.dbsize(), 1);
    assert_eq!(db.key_type(b"c", T0), Some(ValueType::String));
    assert_eq!(db.key_type(b"a", T0), None);
    db.sadd(b"s", &[b"m"], T0).unwrap();
    assert_eq!(db.key_type(b"s", T0), Some(ValueType::Set));
}

#[test]
fn expire_conditions() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"k", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(
        db.expire_at(b"missing", (T0 + 1) as i64, ExpireCondition::Always, T0),
        Ok(false)
    );
    assert_eq!(
        db.expire_at(b"k", (T0 + 100_000) as i64, ExpireCondition::IfTtl, T0),
        Ok(false)
    );
    assert_eq!(
        db.expire_at(b"k", (T0 + 100_000) as i64, ExpireCondition::IfGreater, T0),
        Ok(false)
    );
    assert_eq!(
        db.expire_at(b"k", (T0 + 100_000) as i64, ExpireCondition::IfNoTtl, T0),
        Ok(true)
    );
    assert_eq!(
        db.expire_at(b"k", (T0 + 50_000) as i64, ExpireCondition::IfNoTtl, T0),
        Ok(false)
    );
    assert_eq!(
        db.expire_at(b"k", (T0 + 50_000) as i64, ExpireCondition::IfGreater, T0),
        Ok(false)
    );
    assert_eq!(
        db.expire_at(b"k", (T0 + 50_000) as i64, ExpireCondition::IfLess, T0),
        Ok(true)
    );
    assert_eq!(db.ttl(b"k", T0), 50);
    assert_eq!(db.expire_time_ms(b"k", T0), (T0 + 50_000) as i64);
    assert!(db.persist(b"k", T0));
    assert!(!db.persist(b"k", T0));
    assert_eq!(db.ttl(b"k", T0), -1);
    assert_eq!(db.ttl(b"nope", T0), -2);
    // A time in the past deletes the key and counts as done.
    assert_eq!(
        db.expire_at(b"k", -5, ExpireCondition::Always, T0),
        Ok(true)
    );
    assert_eq!(db.exists(&[b"k"], T0), 0);
}

#[test]
fn keys_with_patterns() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    for k in ["hello", "hallo", "hxllo", "hllo", "heeeello", "a*b"] {
        db.set(k.as_bytes(), b"v", SetOptions::default(), T0)
            .unwrap();
    }
    let mut got = db.keys(b"h?llo", T0);
    got.sort();
    assert_eq!(
        got,
        vec![b"hallo".to_vec(), b"hello".to_vec(), b"hxllo".to_vec()]
    );
    let mut got = db.keys(b"h[^e]llo", T0);
    got.sort();
    assert_eq!(got, vec![b"hallo".to_vec(), b"hxllo".to_vec()]);
    assert_eq!(db.keys(b"h[a-b]llo", T0), vec![b"hallo".to_vec()]);
    assert_eq!(db.keys(b"a\\*b", T0), vec![b"a*b".to_vec()]);
    assert_eq!(db.keys(b"*", T0).len(), 6);
}

#[test]
fn rename_and_copy() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.rename(b"a", b"b", false, T0), Err(OpError::NoSuchKey));
    db.set(b"a", b"1", SetOptions::default(), T0).unwrap();
    db.expire_at(b"a", (T0 + 9000) as i64, ExpireCondition::Always, T0)
        .unwrap();
    assert_eq!(db.rename(b"a", b"b", false, T0), Ok(true));
    assert_eq!(db.exists(&[b"a"], T0), 0);
    assert_eq!(db.pttl(b"b", T0), 9000);
    db.set(b"c", b"3", SetOptions::default(), T0).unwrap();
    assert_eq!(db.rename(b"b", b"c", true, T0), Ok(false));
    assert_eq!(db.get(b"b", T0).unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.rename(b"b", b"b", false, T0), Ok(true));
    assert_eq!(db.rename(b"b", b"c", false, T0), Ok(true));
    assert_eq!(db.get(b"c", T0).unwrap().as_deref(), Some(&b"1"[..]));

    db.push(b"l", &[b"x", b"y"], ListEnd::Right, false, T0)
        .unwrap();
    assert_eq!(db.copy(b"l", b"l2", None, false, T0), Ok(true));
    assert_eq!(db.copy(b"l", b"l2", None, false, T0), Ok(false));
    assert_eq!(
        db.copy(b"l", b"l", None, false, T0),
        Err(OpError::SameObject)
    );
    db.push(b"l", &[b"z"], ListEnd::Right, false, T0).unwrap();
    assert_eq!(db.llen(b"l2", T0), Ok(2), "copies are deep");
    assert_eq!(db.copy(b"l", b"c", Some(3), false, T0), Ok(true));
    assert_eq!(
        db.copy(b"l", b"c", Some(99), false, T0),
        Err(OpError::DbOutOfRange)
    );
    assert_eq!(ks.db(3).unwrap().llen(b"c", T0), Ok(3));
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.copy(b"l", b"c", None, true, T0), Ok(true));
    assert_eq!(db.llen(b"c", T0), Ok(3));
}

#[test]
fn unlink_and_flush_hand_back_what_they_removed() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"small", b"v", SetOptions::default(), T0).unwrap();
    let members: Vec<Vec<u8>> = (0..100).map(|i| format!("m{i}").into_bytes()).collect();
    let members: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    db.sadd(b"big", &members, T0).unwrap();
    let (removed, garbage) = db.unlink(&[b"small", b"nokey"], T0);
    assert_eq!((removed, garbage.keys(), garbage.is_heavy()), (1, 1, false));
    drop(garbage);
    let before = ks.used_memory();
    let (removed, garbage) = db.unlink(&[b"big"], T0);
    assert_eq!((removed, garbage.keys(), garbage.is_heavy()), (1, 1, true));
    // Out of the keyspace and its memory count before the garbage is dropped.
    assert_eq!(db.exists(&[b"big"], T0), 0);
    assert!(ks.used_memory() < before);
    assert_eq!(ks.used_memory(), 0);
    drop(garbage);
    for i in 0..100 {
        db.set(format!("k{i}").as_bytes(), b"v", SetOptions::default(), T0)
            .unwrap();
    }
    let garbage = db.flushall();
    assert_eq!((garbage.keys(), garbage.is_heavy()), (100, true));
    assert_eq!(db.dbsize(), 0);
    assert_eq!(ks.used_memory(), 0);
}

#[test]
fn randomkey_dbsize_flush() {
    let ks = ks();
    let mut db = ks.db(1).unwrap();
    assert_eq!(db.random_key(T0), None);
    for i in 0..100 {
        db.set(format!("k{i}").as_bytes(), b"v", SetOptions::default(), T0)
            .unwrap();
    }
    assert!(db.random_key(T0).unwrap().starts_with(b"k"));
    assert_eq!(db.dbsize(), 100);
    assert_eq!(ks.db(0).unwrap().dbsize(), 0);
    let stats = ks.stats();
    assert_eq!(stats.dbs[1].keys, 100);
    drop(db.flushdb());
    assert_eq!(db.dbsize(), 0);
    assert_eq!(ks.used_memory(), 0, "an empty keyspace accounts nothing");
}

#[test]
fn object_and_memory_usage() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"s", b"short", SetOptions::default(), T0).unwrap();
    db.set(b"r", &[b'x'; 100], SetOptions::default(), T0)
        .unwrap();
    assert_eq!(db.object_encoding(b"s", T0), Some("embstr"));
    assert_eq!(db.object_encoding(b"r", T0), Some("raw"));
    assert_eq!(db.object_encoding(b"x", T0), None);
    assert_eq!(db.object_idletime(b"s", T0 + 5000), Ok(Some(5)));
    assert_eq!(db.object_freq(b"s", T0), Err(OpError::LfuNotSelected));
    assert!(db.memory_usage(b"r", T0).unwrap() > db.memory_usage(b"s", T0).unwrap());
    ks.set_policy(quiver_cache::EvictionPolicy::AllKeysLfu);
    let mut db = ks.db(0).unwrap();
    db.set(b"f", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(db.object_freq(b"f", T0), Ok(Some(5)));
    assert_eq!(db.object_idletime(b"f", T0), Err(OpError::LfuSelected));
}

#[test]
fn swapdb_trades_keys_ttls_and_touches_watched_keys() {
    let ks = ks();
    ks.db(0)
        .unwrap()
        .set(b"a", b"zero", Default::default(), T0)
        .unwrap();
    let mut one = ks.db(1).unwrap();
    one.set(b"a", b"one", Default::default(), T0).unwrap();
    one.set(b"t", b"x", Default::default(), T0).unwrap();
    one.expire_at(b"t", (T0 + 5_000) as i64, Default::default(), T0)
        .unwrap();
    let watched = ks.watch(0, b"t", T0).unwrap();
    let untouched = ks.watch(0, b"nowhere", T0).unwrap();
    ks.db(0).unwrap().swapdb(0, 1).unwrap();
    let mut zero = ks.db(0).unwrap();
    assert_eq!(zero.get(b"a", T0).unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(zero.pttl(b"t", T0), 5_000);
    assert_eq!(
        ks.db(1).unwrap().get(b"a", T0).unwrap().as_deref(),
        Some(&b"zero"[..])
    );
    let mut txn = ks.transaction();
    assert!(!txn.watched_unchanged(std::slice::from_ref(&watched), T0));
    assert!(txn.watched_unchanged(std::slice::from_ref(&untouched), T0));
    drop(txn);
    ks.unwatch(&watched);
    ks.unwatch(&untouched);
    assert_eq!(ks.db(0).unwrap().swapdb(0, 16), Err(OpError::DbOutOfRange));
}
