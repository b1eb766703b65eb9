use quiver_cache::{ExpireCondition, SetExpiry, SetOptions};

use crate::{T0, ks};

fn with_ttl(ms: u64) -> SetOptions {
    SetOptions {
        expiry: SetExpiry::AtMs(T0 + ms),
        ..Default::default()
    }
}

#[test]
fn lazy_expiry_on_access() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"k", b"v", with_ttl(1000), T0).unwrap();
    assert!(db.get(b"k", T0 + 999).unwrap().is_some());
    assert_eq!(db.pttl(b"k", T0 + 999), 1);
    assert!(db.get(b"k", T0 + 1000).unwrap().is_none());
    assert_eq!(db.pttl(b"k", T0 + 1000), -2);
    let stats = ks.stats();
    assert_eq!(stats.expired_keys, 1);
    assert_eq!(stats.dbs[0].keys, 0);
    // GET and PTTL both count, as in Redis: two hits, then two misses.
    assert_eq!(stats.keyspace_hits, 2);
    assert_eq!(stats.keyspace_misses, 2);
}

#[test]
fn expired_keys_are_invisible_everywhere() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"gone", b"v", with_ttl(10), T0).unwrap();
    db.set(b"kept", b"v", SetOptions::default(), T0).unwrap();
    let later = T0 + 10;
    assert_eq!(db.exists(&[b"gone", b"kept"], later), 1);
    assert_eq!(db.keys(b"*", later), vec![b"kept".to_vec()]);
    assert_eq!(db.scan(0, None, 100, None, later).1, vec![b"kept".to_vec()]);
    assert_eq!(db.random_key(later), Some(b"kept".to_vec()));
    assert_eq!(db.key_type(b"gone", later), None);
}

#[test]
fn active_expiry_reclaims_unread_keys_with_bounded_work() {
    active_expiry_with(100_000);
}

#[test]
#[ignore = "two million keys take several seconds; run with --ignored"]
fn active_expiry_reclaims_unread_keys_among_millions() {
    active_expiry_with(2_000_000);
}

fn active_expiry_with(n: usize) {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    for i in 0..n {
        let ttl = if i % 2 == 0 { 100 } else { 1_000_000 };
        db.set(format!("key:{i}").as_bytes(), b"v", with_ttl(ttl), T0)
            .unwrap();
    }
    for i in 0..10_000 {
        db.set(
            format!("plain:{i}").as_bytes(),
            b"v",
            SetOptions::default(),
            T0,
        )
        .unwrap();
    }
    let now = T0 + 200;
    let budget = 2_000;
    // Reclaiming two thirds of the expired keys at about one per two sampled must not take
    // much more than (n / 3) / (budget / 2) calls.
    let max_calls = n / 1000 + 10;
    let mut calls = 0;
    loop {
        let r = ks.active_expire(now, budget);
        assert!(
            r.sampled <= budget + 20 * 16,
            "bounded work per call: {r:?}"
        );
        calls += 1;
        let stale = n / 2 - ks.stats().expired_keys as usize;
        let volatile = ks.stats().dbs[0].expires;
        if stale * 4 <= volatile || calls > max_calls {
            break;
        }
    }
    let stats = ks.stats();
    let stale = n / 2 - stats.expired_keys as usize;
    assert!(
        stale * 100 <= stats.dbs[0].expires * 25,
        "expired-but-unread keys left: {stale} of {} after {calls} calls",
        stats.dbs[0].expires
    );
    // Keys without TTL and with a future TTL are untouched.
    assert_eq!(db.exists(&[b"plain:1", b"key:1"], now), 2);
}

#[test]
fn active_expiry_without_volatile_keys_returns_quickly() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"k", b"v", SetOptions::default(), T0).unwrap();
    let r = ks.active_expire(T0, 1000);
    assert_eq!((r.sampled, r.expired), (0, 0));
}

#[test]
fn ttl_survives_in_place_updates_but_not_set() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"n", b"1", with_ttl(5000), T0).unwrap();
    db.incr_by(b"n", 1, T0).unwrap();
    db.append(b"n", b"0", T0).unwrap();
    assert_eq!(db.pttl(b"n", T0), 5000);
    db.expire_at(b"n", (T0 + 7000) as i64, ExpireCondition::Always, T0)
        .unwrap();
    assert_eq!(db.pttl(b"n", T0 + 1000), 6000);
}

/// INFO's `avg_ttl`: the mean time to live of the keys with one, from a sample; 0 when
/// no key has one.
#[test]
fn average_ttl_of_the_keys_that_have_one() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"plain", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(ks.stats().dbs[0].avg_ttl_ms(T0), 0);
    for i in 0..2000u64 {
        // TTLs of 10 to 30 seconds, 20 seconds on average.
        let key = format!("k{i}");
        db.set(key.as_bytes(), b"v", with_ttl(10_000 + i * 10), T0)
            .unwrap();
    }
    let avg = ks.stats().dbs[0].avg_ttl_ms(T0 + 1_000);
    assert!((16_000..=22_000).contains(&avg), "{avg}");
    assert_eq!(ks.stats().dbs[1].avg_ttl_ms(T0), 0);
}
