//! The change feed: off by default; when on, every change in the order it happened.

use quiver_cache::{
    CacheConfig, Change, ChangeKind, EvictionPolicy, GetExExpiry, Keyspace, ListEnd, SetExpiry,
    SetOptions,
};

use crate::{T0, ks};

fn kinds(changes: &[Change]) -> Vec<(usize, String, ChangeKind)> {
    changes
        .iter()
        .map(|c| (c.db, String::from_utf8_lossy(&c.key).into_owned(), c.kind))
        .collect()
}

fn change(db: usize, key: &str, kind: ChangeKind) -> (usize, String, ChangeKind) {
    (db, key.to_owned(), kind)
}

#[test]
fn writes_removals_and_flushes_in_order() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"before", b"v", SetOptions::default(), T0).unwrap();
    assert!(ks.take_changes().is_empty(), "the feed starts off");

    ks.set_change_feed(true);
    use ChangeKind::*;
    let after = |op: &mut dyn FnMut()| {
        op();
        kinds(&ks.take_changes())
    };
    assert_eq!(
        after(&mut || drop(db.set(b"a", b"1", SetOptions::default(), T0))),
        [change(0, "a", Written)]
    );
    // Created, then added to: one change.
    assert_eq!(
        after(&mut || drop(db.push(b"l", &[b"x"], ListEnd::Left, false, T0))),
        [change(0, "l", Written)]
    );
    assert_eq!(after(&mut || drop(db.get(b"a", T0))), []);
    // Changed, then removed once empty.
    assert_eq!(
        after(&mut || drop(db.pop(b"l", ListEnd::Left, None, T0))),
        [change(0, "l", Written), change(0, "l", Removed)]
    );
    assert_eq!(
        after(&mut || drop(db.rename(b"a", b"b", false, T0))),
        [change(0, "a", Removed), change(0, "b", Written)]
    );
    let mut one = ks.db(1).unwrap();
    one.set(b"c", b"1", SetOptions::default(), T0).unwrap();
    one.set(b"d", b"1", SetOptions::default(), T0).unwrap();
    drop(one.flushdb());
    drop(one.flushdb());
    assert_eq!(
        kinds(&ks.take_changes()),
        [
            change(1, "c", Written),
            change(1, "d", Written),
            change(1, "", Flushed { first: true }),
            change(1, "", Flushed { first: true })
        ],
        "one Flushed per flush of a database, also of an empty one"
    );
    // FLUSHALL: one per emptied database, the first marked; none emptied, one still.
    let mut two = ks.db(2).unwrap();
    two.set(b"e", b"1", SetOptions::default(), T0).unwrap();
    one.set(b"c", b"1", SetOptions::default(), T0).unwrap();
    ks.take_changes();
    drop(one.flushall());
    drop(one.flushall());
    assert_eq!(
        kinds(&ks.take_changes()),
        [
            change(0, "", Flushed { first: true }),
            change(1, "", Flushed { first: false }),
            change(2, "", Flushed { first: false }),
            change(0, "", Flushed { first: true })
        ],
        "one Flushed per emptied database, one for a flush of nothing"
    );
    // A TTL change is a write; GETEX PERSIST of a key without one is not.
    db.set(b"t", b"v", SetOptions::default(), T0).unwrap();
    ks.take_changes();
    db.getex(b"t", GetExExpiry::Persist, T0).unwrap();
    assert_eq!(ks.take_changes(), []);
    db.getex(b"t", GetExExpiry::AtMs(T0 + 1_000), T0).unwrap();
    assert_eq!(kinds(&ks.take_changes()), [change(0, "t", Written)]);
    db.getex(b"t", GetExExpiry::Persist, T0).unwrap();
    assert_eq!(kinds(&ks.take_changes()), [change(0, "t", Written)]);
    assert!(ks.take_changes().is_empty(), "taken once");

    ks.set_change_feed(false);
    db.set(b"after", b"v", SetOptions::default(), T0).unwrap();
    assert!(ks.take_changes().is_empty(), "off again");
}

#[test]
fn expiry_and_eviction_say_so() {
    let ks = ks();
    ks.set_change_feed(true);
    let mut db = ks.db(0).unwrap();
    let ttl = SetOptions {
        expiry: SetExpiry::AtMs(T0 + 10),
        ..SetOptions::default()
    };
    db.set(b"lazy", b"v", ttl, T0).unwrap();
    db.set(b"active", b"v", ttl, T0).unwrap();
    db.get(b"lazy", T0 + 20).unwrap();
    ks.active_expire(T0 + 20, 1_000);
    let changes = kinds(&ks.take_changes());
    assert!(
        changes.contains(&change(0, "lazy", ChangeKind::Expired)),
        "{changes:?}"
    );
    assert!(
        changes.contains(&change(0, "active", ChangeKind::Expired)),
        "{changes:?}"
    );

    let small = Keyspace::new(CacheConfig {
        shards: 8,
        max_memory_bytes: 200_000,
        policy: EvictionPolicy::AllKeysRandom,
        ..CacheConfig::default()
    })
    .unwrap();
    small.set_change_feed(true);
    let mut db = small.db(0).unwrap();
    for i in 0..10_000 {
        db.set(
            format!("k{i}").as_bytes(),
            &[b'x'; 64],
            SetOptions::default(),
            T0,
        )
        .unwrap();
    }
    let evicted = small
        .take_changes()
        .iter()
        .filter(|c| c.kind == ChangeKind::Evicted)
        .count();
    assert!(evicted > 0, "writing past max_memory evicts, and says so");
}
