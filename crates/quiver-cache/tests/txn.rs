use std::sync::Arc;
use std::thread;

use quiver_cache::{ListEnd, SetExpiry, SetOptions};

use crate::{T0, ks};

#[test]
fn watch_detects_writes_to_watched_keys_only() {
    let ks = ks();
    ks.db(0)
        .unwrap()
        .set(b"w", b"1", SetOptions::default(), T0)
        .unwrap();
    let w = ks.watch(0, b"w", T0).unwrap();
    ks.db(0)
        .unwrap()
        .set(b"other", b"x", SetOptions::default(), T0)
        .unwrap();
    assert!(
        ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0)
    );
    ks.db(0).unwrap().incr_by(b"w", 1, T0).unwrap();
    assert!(
        !ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0)
    );
    ks.unwatch(&w);

    // A key created after WATCH, deleted, or given a TTL counts as modified.
    let w = ks.watch(0, b"fresh", T0).unwrap();
    ks.db(0)
        .unwrap()
        .push(b"fresh", &[b"a"], ListEnd::Left, false, T0)
        .unwrap();
    assert!(
        !ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0)
    );
    ks.unwatch(&w);
    let w = ks.watch(0, b"fresh", T0).unwrap();
    ks.db(0).unwrap().del(&[b"fresh"], T0);
    assert!(
        !ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0)
    );
    ks.unwatch(&w);
    // The same key in another database is a different key.
    let w = ks.watch(1, b"w", T0).unwrap();
    ks.db(0).unwrap().incr_by(b"w", 1, T0).unwrap();
    assert!(
        ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0)
    );
    ks.unwatch(&w);
}

#[test]
fn watched_key_expiring_aborts() {
    let ks = ks();
    let opts = SetOptions {
        expiry: SetExpiry::AtMs(T0 + 100),
        ..Default::default()
    };
    ks.db(0).unwrap().set(b"k", b"v", opts, T0).unwrap();
    let w = ks.watch(0, b"k", T0).unwrap();
    assert!(
        ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0 + 50)
    );
    assert!(
        !ks.transaction()
            .watched_unchanged(std::slice::from_ref(&w), T0 + 100)
    );
}

#[test]
fn transaction_is_atomic_against_other_threads() {
    let ks = Arc::new(ks());
    ks.db(0)
        .unwrap()
        .set(b"a", b"0", SetOptions::default(), T0)
        .unwrap();
    ks.db(0)
        .unwrap()
        .set(b"b", b"0", SetOptions::default(), T0)
        .unwrap();
    let writer = {
        let ks = Arc::clone(&ks);
        thread::spawn(move || {
            for _ in 0..2000 {
                let mut txn = ks.transaction();
                let mut db = txn.db(0).unwrap();
                db.incr_by(b"a", 1, T0).unwrap();
                db.incr_by(b"b", 1, T0).unwrap();
            }
        })
    };
    for _ in 0..2000 {
        let got = ks.db(0).unwrap().mget(&[b"a", b"b"], T0);
        assert_eq!(got[0], got[1], "MGET saw half a transaction");
    }
    writer.join().unwrap();
    assert_eq!(
        ks.db(0).unwrap().get(b"a", T0).unwrap().as_deref(),
        Some(&b"2000"[..])
    );
}

#[test]
fn concurrent_single_key_writers_lose_nothing() {
    let ks = Arc::new(ks());
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let ks = Arc::clone(&ks);
            thread::spawn(move || {
                let mut db = ks.db(0).unwrap();
                for i in 0..5000 {
                    db.incr_by(b"counter", 1, T0).unwrap();
                    db.set(
                        format!("t{t}:{i}").as_bytes(),
                        b"v",
                        SetOptions::default(),
                        T0,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut db = ks.db(0).unwrap();
    assert_eq!(
        db.get(b"counter", T0).unwrap().as_deref(),
        Some(&b"10000"[..])
    );
    assert_eq!(db.dbsize(), 10_001);
}
