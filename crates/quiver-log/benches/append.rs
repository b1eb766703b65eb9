//! Criterion micro-benches of the append and read paths (in-process, `buffered`).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use quiver_log::{Durability, Log, LogConfig};

fn open(dir: &std::path::Path) -> Log {
    Log::open(
        dir,
        LogConfig {
            durability: Durability::Buffered,
            segment_max_bytes: 256 << 20,
            ..LogConfig::default()
        },
    )
    .expect("open")
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = open(dir.path());
    let value = [7u8; 100];
    let mut g = c.benchmark_group("append");
    g.throughput(Throughput::Elements(1));
    g.bench_function("single_100B_buffered", |b| {
        b.iter(|| log.append(black_box(&value)).expect("append"))
    });
    let values: Vec<Vec<u8>> = (0..100).map(|_| vec![3u8; 100]).collect();
    let refs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
    g.throughput(Throughput::Elements(100));
    g.bench_function("batch_100x100B_buffered", |b| {
        b.iter(|| log.append_batch(black_box(&refs)).expect("append"))
    });
    g.finish();
}

fn read(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = open(dir.path());
    let values: Vec<Vec<u8>> = (0..1000).map(|_| vec![9u8; 1024]).collect();
    let refs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
    for _ in 0..32 {
        log.append_batch(&refs).expect("append");
    }
    log.flush().expect("flush");
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Bytes(32 * 1000 * 1024));
    g.bench_function("sequential_32MiB", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for r in log.iter(0) {
                n += r.expect("read").value.len();
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = append, read
}
criterion_main!(benches);
