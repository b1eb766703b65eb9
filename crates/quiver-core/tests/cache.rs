//! The cache facade: database selection, the change feed, blocking waits, lazy free.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use quiver_core::cache::{Cache, CacheConfig, Change, ChangeKind, ListEnd, OpError, SetOptions};
use tokio::sync::Notify;

const NOW: u64 = 1_700_000_000_000;

fn cache() -> Arc<Cache> {
    Arc::new(Cache::new(CacheConfig::default()).expect("default config"))
}

#[test]
fn select_takes_only_existing_databases() {
    let cache = cache();
    assert_eq!(cache.select(0), Ok(0));
    assert_eq!(cache.select(15), Ok(15));
    assert_eq!(cache.select(16), Err(OpError::DbOutOfRange));
    assert_eq!(cache.select(-1), Err(OpError::DbOutOfRange));
}

type Seen = Arc<Mutex<Vec<(usize, Vec<u8>, ChangeKind)>>>;

fn record(seen: &Seen) -> impl Fn(&[Change]) + Send + Sync + 'static {
    let seen = Arc::clone(seen);
    move |changes: &[Change]| {
        let mut seen = seen.lock().unwrap();
        seen.extend(changes.iter().map(|c| (c.db, c.key.to_vec(), c.kind)));
    }
}

#[test]
fn subscribers_see_each_commands_changes_in_order_until_they_leave() {
    let cache = cache();
    let (first, second): (Seen, Seen) = Default::default();
    let mut db = cache.db(0).unwrap();
    db.set(b"early", b"v", SetOptions::default(), NOW).unwrap();
    cache.after_command();

    let one = cache.subscribe(record(&first));
    let two = cache.subscribe(record(&second));
    db.set(b"a", b"1", SetOptions::default(), NOW).unwrap();
    cache.after_command();
    db.del(&[b"a"], NOW);
    cache.after_command();
    let expected = vec![
        (0, b"a".to_vec(), ChangeKind::Written),
        (0, b"a".to_vec(), ChangeKind::Removed),
    ];
    assert_eq!(
        *first.lock().unwrap(),
        expected,
        "nothing from before it subscribed"
    );
    assert_eq!(*second.lock().unwrap(), expected);

    drop(one);
    db.set(b"b", b"1", SetOptions::default(), NOW).unwrap();
    cache.after_command();
    assert_eq!(
        first.lock().unwrap().len(),
        2,
        "a dropped subscription hears nothing"
    );
    assert_eq!(second.lock().unwrap().len(), 3);

    drop(two);
    db.set(b"c", b"1", SetOptions::default(), NOW).unwrap();
    cache.after_command();
    let third: Seen = Seen::default();
    let _three = cache.subscribe(record(&third));
    cache.after_command();
    assert!(
        third.lock().unwrap().is_empty(),
        "with nobody subscribed the feed is off and keeps nothing"
    );
}

#[tokio::test]
async fn a_push_wakes_a_client_blocked_on_its_key() {
    let cache = cache();
    let notify = Arc::new(Notify::new());
    let keys = [Bytes::from_static(b"jobs")];
    cache.block(0, &keys, &notify);
    assert_eq!(cache.blocked_clients(), 1);
    let woken = notify.notified();
    cache
        .db(0)
        .unwrap()
        .push(b"jobs", &[b"x"], ListEnd::Right, false, NOW)
        .unwrap();
    cache.after_command();
    tokio::time::timeout(Duration::from_secs(5), woken)
        .await
        .expect("the push wakes the waiter");
    cache.unblock(0, &keys, &notify);
    assert_eq!(cache.blocked_clients(), 0);
}

#[test]
fn heavy_values_are_freed_in_the_background() {
    let cache = cache();
    let mut db = cache.db(0).unwrap();
    let items: Vec<Vec<u8>> = (0..1_000).map(|i| format!("{i}").into_bytes()).collect();
    let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
    db.push(b"big", &items, ListEnd::Right, false, NOW).unwrap();
    let (removed, garbage) = db.unlink(&[b"big"], NOW);
    assert_eq!(removed, 1);
    cache.free_later(garbage);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while cache.lazy_freed() < 1 {
        assert!(std::time::Instant::now() < deadline, "never freed");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(cache.lazy_free_pending(), 0);
}

#[test]
fn a_panicking_subscriber_harms_neither_the_command_nor_the_others() {
    let cache = cache();
    let seen: Seen = Seen::default();
    let _bad = cache.subscribe(|_: &[Change]| panic!("a broken subscriber"));
    let _good = cache.subscribe(record(&seen));
    cache
        .db(0)
        .unwrap()
        .set(b"k", b"v", SetOptions::default(), NOW)
        .unwrap();
    cache.after_command();
    assert_eq!(
        *seen.lock().unwrap(),
        [(0, b"k".to_vec(), ChangeKind::Written)]
    );
}
