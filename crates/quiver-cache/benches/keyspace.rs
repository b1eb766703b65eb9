//! Hot-path micro-benchmarks: GET (copying and zero-copy), SET, INCR, LPUSH+RPOP, SADD,
//! HSET, ZADD on a keyspace of 100 k keys with 64-byte values (redis-benchmark's shape).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use quiver_cache::{CacheConfig, Keyspace, ListEnd, SetOptions, ZAddOptions};

const NOW_MS: u64 = 1_700_000_000_000;
const KEYS: usize = 100_000;
const VALUE: [u8; 64] = [b'x'; 64];

fn key(i: usize) -> [u8; 16] {
    let mut k = *b"key:000000000000";
    let mut n = i;
    for b in k[4..].iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
    k
}

fn filled() -> Keyspace {
    let ks = Keyspace::new(CacheConfig::default()).expect("default config is valid");
    let mut db = ks.db(0).expect("db 0 exists");
    for i in 0..KEYS {
        db.set(&key(i), &VALUE, SetOptions::default(), NOW_MS)
            .expect("no memory bound");
    }
    ks
}

fn strings(c: &mut Criterion) {
    let ks = filled();
    let mut i = 0usize;
    let mut next = || {
        i = (i + 7919) % KEYS;
        key(i)
    };
    c.bench_function("get (copy)", |b| {
        b.iter(|| black_box(ks.db(0).unwrap().get(&next(), NOW_MS).unwrap()))
    });
    c.bench_function("get_with (zero-copy)", |b| {
        b.iter(|| {
            black_box(
                ks.db(0)
                    .unwrap()
                    .get_with(&next(), NOW_MS, |v| v.map_or(0, <[u8]>::len))
                    .unwrap(),
            )
        })
    });
    c.bench_function("set", |b| {
        b.iter(|| {
            ks.db(0)
                .unwrap()
                .set(&next(), &VALUE, SetOptions::default(), NOW_MS)
                .unwrap()
        })
    });
    c.bench_function("incr", |b| {
        b.iter(|| ks.db(0).unwrap().incr_by(b"counter", 1, NOW_MS).unwrap())
    });
}

fn collections(c: &mut Criterion) {
    let ks = Keyspace::new(CacheConfig::default()).expect("default config is valid");
    let mut i = 0usize;
    c.bench_function("lpush+rpop", |b| {
        b.iter(|| {
            let mut db = ks.db(0).unwrap();
            db.push(b"list", &[&VALUE], ListEnd::Left, false, NOW_MS)
                .unwrap();
            black_box(db.pop(b"list", ListEnd::Right, None, NOW_MS).unwrap())
        })
    });
    c.bench_function("sadd", |b| {
        b.iter(|| {
            i = (i + 1) % KEYS;
            ks.db(0).unwrap().sadd(b"set", &[&key(i)], NOW_MS).unwrap()
        })
    });
    c.bench_function("hset", |b| {
        b.iter(|| {
            i = (i + 1) % KEYS;
            ks.db(0)
                .unwrap()
                .hset(b"hash", &[(&key(i), &VALUE)], NOW_MS)
                .unwrap()
        })
    });
    c.bench_function("zadd", |b| {
        b.iter(|| {
            i = (i + 1) % KEYS;
            ks.db(0)
                .unwrap()
                .zadd(
                    b"zset",
                    &[(i as f64, &key(i))],
                    ZAddOptions::default(),
                    NOW_MS,
                )
                .unwrap()
        })
    });
}

criterion_group!(benches, strings, collections);
criterion_main!(benches);
