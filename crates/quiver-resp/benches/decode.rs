//! Decoding a pipeline of 16 requests (8 `SET key:N <64 bytes>`, 8
//! `GET key:N`), as `redis-benchmark -P 16` sends them; and encoding their
//! replies.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use quiver_resp::encode::{OK, write_bulk};
use quiver_resp::{Decoder, Request};

fn pipeline() -> Vec<u8> {
    let value = [b'x'; 64];
    let mut out = Vec::new();
    for i in 0..8 {
        let key = format!("key:{i:012}");
        Request::from_args([&b"SET"[..], key.as_bytes(), &value]).encode(&mut out);
        Request::from_args([&b"GET"[..], key.as_bytes()]).encode(&mut out);
    }
    out
}

fn bench(c: &mut Criterion) {
    let input = pipeline();
    let decoder = Decoder::default();
    let mut group = c.benchmark_group("pipeline16");
    group.throughput(Throughput::Elements(16));
    group.bench_function("check", |b| {
        b.iter(|| {
            let mut rest = &input[..];
            while let Ok(len) = decoder.check(rest) {
                rest = &rest[len..];
            }
            black_box(rest.len())
        })
    });
    group.bench_function("split_only", |b| {
        b.iter(|| {
            let mut buf = BytesMut::from(&input[..]);
            let mut n = 0;
            while let Ok(len) = decoder.check(&buf) {
                n += buf.split_to(len).freeze().len();
            }
            black_box(n)
        })
    });
    group.bench_function("parse_only", |b| {
        let mut frames = Vec::new();
        let mut buf = BytesMut::from(&input[..]);
        while let Ok(len) = decoder.check(&buf) {
            frames.push(buf.split_to(len).freeze());
        }
        b.iter(|| {
            let mut n = 0;
            for frame in &frames {
                n += decoder.parse(frame.clone()).expect("valid frame").len();
            }
            black_box(n)
        })
    });
    group.bench_function("decode", |b| {
        b.iter(|| {
            let mut buf = BytesMut::from(&input[..]);
            let mut n = 0;
            while let Some(request) = decoder.decode(&mut buf).expect("valid pipeline") {
                n += request.len();
            }
            black_box(n)
        })
    });
    group.bench_function("encode_replies", |b| {
        let value = [b'x'; 64];
        let mut out = BytesMut::with_capacity(2048);
        b.iter(|| {
            out.clear();
            for _ in 0..8 {
                out.extend_from_slice(OK);
                write_bulk(&mut out, &value);
            }
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
