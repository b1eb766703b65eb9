//! One contract per policy: fill past `max_memory`, check memory stays bounded, which keys
//! go, and that noeviction (or nothing evictable) answers OOM.

use quiver_cache::{CacheConfig, EvictionPolicy, Keyspace, OpError, SetExpiry, SetOptions};

use crate::T0;

const MAX_MEMORY_BYTES: u64 = 400_000;
const VALUE: &[u8] = &[b'x'; 64];

fn keyspace(policy: EvictionPolicy) -> Keyspace {
    Keyspace::new(CacheConfig {
        shards: 8,
        max_memory_bytes: MAX_MEMORY_BYTES,
        policy,
        ..CacheConfig::default()
    })
    .unwrap()
}

fn set(ks: &Keyspace, key: &str, ttl_ms: Option<u64>, now: u64) -> Result<(), OpError> {
    let opts = SetOptions {
        expiry: ttl_ms.map_or(SetExpiry::Clear, |t| SetExpiry::AtMs(now + t)),
        ..Default::default()
    };
    ks.db(0)
        .unwrap()
        .set(key.as_bytes(), VALUE, opts, now)
        .map(|_| ())
}

fn live(ks: &Keyspace, prefix: &str, n: usize, now: u64) -> usize {
    let mut db = ks.db(0).unwrap();
    (0..n)
        .filter(|i| db.exists(&[format!("{prefix}{i}").as_bytes()], now) == 1)
        .count()
}

#[test]
fn noeviction_answers_oom_and_reads_still_work() {
    let ks = keyspace(EvictionPolicy::NoEviction);
    let mut i = 0;
    let err = loop {
        if let Err(e) = set(&ks, &format!("k{i}"), None, T0) {
            break e;
        }
        i += 1;
        assert!(i < 100_000, "the bound must stop writes");
    };
    assert_eq!(err, OpError::OutOfMemory);
    assert_eq!(
        err.to_string(),
        "OOM command not allowed when used memory > 'maxmemory'."
    );
    let mut db = ks.db(0).unwrap();
    assert!(db.get(b"k0", T0).unwrap().is_some());
    assert_eq!(
        db.del(&[b"k0", b"k1"], T0),
        2,
        "deletes are allowed at the bound"
    );
    assert_eq!(ks.stats().evicted_keys, 0);
}

fn fill_with_hot_set(policy: EvictionPolicy, ttl: Option<u64>) -> Keyspace {
    let ks = keyspace(policy);
    // Cold keys written first, then a hot set read often and later.
    for i in 0..1500 {
        set(&ks, &format!("cold{i}"), ttl, T0).unwrap();
    }
    for i in 0..100 {
        set(&ks, &format!("hot{i}"), ttl, T0).unwrap();
    }
    assert_eq!(ks.stats().evicted_keys, 0, "the first keys fit");
    let mut db = ks.db(0).unwrap();
    for round in 0..50 {
        for i in 0..100 {
            db.get(format!("hot{i}").as_bytes(), T0 + 100_000 + round)
                .unwrap();
        }
    }
    // Fewer new keys than cold ones, so a good policy never needs to touch the hot set.
    for i in 0..1000 {
        set(&ks, &format!("new{i}"), ttl, T0 + 200_000).unwrap();
    }
    ks
}

fn assert_bounded(ks: &Keyspace) {
    let used = ks.used_memory() as u64;
    assert!(
        used <= MAX_MEMORY_BYTES + 4096,
        "used {used} over the bound"
    );
    assert!(ks.stats().evicted_keys > 0);
}

#[test]
fn allkeys_lru_keeps_recently_used_keys() {
    let ks = fill_with_hot_set(EvictionPolicy::AllKeysLru, None);
    assert_bounded(&ks);
    let hot = live(&ks, "hot", 100, T0 + 200_000);
    let cold = live(&ks, "cold", 1500, T0 + 200_000);
    assert!(hot >= 90, "hot keys kept: {hot}/100");
    assert!(cold < 1500, "cold keys kept: {cold}/1500");
    let new = live(&ks, "new", 1000, T0 + 200_000);
    assert!(new >= 950, "new keys kept: {new}/1000");
}

#[test]
fn allkeys_lfu_keeps_frequently_used_keys() {
    let ks = fill_with_hot_set(EvictionPolicy::AllKeysLfu, None);
    assert_bounded(&ks);
    let hot = live(&ks, "hot", 100, T0 + 200_000);
    assert!(hot >= 90, "hot keys kept: {hot}/100");
}

#[test]
fn allkeys_random_stays_bounded() {
    let ks = fill_with_hot_set(EvictionPolicy::AllKeysRandom, None);
    assert_bounded(&ks);
    let cold = live(&ks, "cold", 1500, T0 + 200_000);
    assert!(cold < 1500);
}

#[test]
fn volatile_policies_only_evict_keys_with_ttl() {
    for policy in [
        EvictionPolicy::VolatileLru,
        EvictionPolicy::VolatileLfu,
        EvictionPolicy::VolatileRandom,
        EvictionPolicy::VolatileTtl,
    ] {
        let ks = keyspace(policy);
        for i in 0..500 {
            set(&ks, &format!("perm{i}"), None, T0).unwrap();
        }
        for i in 0..3000 {
            set(&ks, &format!("vol{i}"), Some(1_000_000 + i as u64), T0).unwrap();
        }
        assert_bounded(&ks);
        assert_eq!(
            live(&ks, "perm", 500, T0),
            500,
            "{policy}: a key without TTL was evicted"
        );
        // With nothing evictable left, writes fail with OOM.
        let mut db = ks.db(0).unwrap();
        let vol: Vec<Vec<u8>> = (0..3000).map(|i| format!("vol{i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = vol.iter().map(|v| &v[..]).collect();
        db.del(&refs, T0);
        let mut result = Ok(());
        for i in 0..10_000 {
            result = set(&ks, &format!("more{i}"), None, T0);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(OpError::OutOfMemory), "{policy}");
    }
}

#[test]
fn volatile_ttl_evicts_soonest_expiring_first() {
    let ks = keyspace(EvictionPolicy::VolatileTtl);
    // Long-lived keys first, then short-lived ones, then pressure.
    for i in 0..800 {
        set(&ks, &format!("long{i}"), Some(10_000_000), T0).unwrap();
    }
    for i in 0..800 {
        set(&ks, &format!("short{i}"), Some(1_000), T0).unwrap();
    }
    for i in 0..1500 {
        set(&ks, &format!("new{i}"), Some(50_000_000), T0).unwrap();
    }
    assert_bounded(&ks);
    let long = live(&ks, "long", 800, T0);
    let short = live(&ks, "short", 800, T0);
    assert!(
        short < long,
        "short-lived kept {short}, long-lived kept {long}"
    );
}

#[test]
fn lowering_max_memory_at_run_time_evicts_on_next_write() {
    let ks = keyspace(EvictionPolicy::AllKeysLru);
    ks.set_max_memory_bytes(0);
    for i in 0..5000 {
        set(&ks, &format!("k{i}"), None, T0).unwrap();
    }
    assert!(ks.used_memory() as u64 > MAX_MEMORY_BYTES);
    ks.set_max_memory_bytes(MAX_MEMORY_BYTES);
    // Each write evicts a bounded number of keys, so a large overshoot takes a few writes.
    for i in 0..10 {
        set(&ks, &format!("trigger{i}"), None, T0).unwrap();
    }
    assert!(ks.used_memory() as u64 <= MAX_MEMORY_BYTES + 4096);
    assert!(ks.stats().used_memory_peak as u64 > MAX_MEMORY_BYTES);
}
