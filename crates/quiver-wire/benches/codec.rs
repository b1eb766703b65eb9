//! Codec micro-benchmarks: the broker's and client's hot paths.
//!
//! `cargo bench -p quiver-wire --bench codec`

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use quiver_wire::{
    AckMode, Event, EventBatch, EventBatchBody, Headers, Publish, StreamName, check, decode, encode,
};

const EVENTS: usize = 64;
const PAYLOAD_LEN: usize = 256;

fn events() -> Vec<Event> {
    (0..EVENTS as u64)
        .map(|i| Event {
            sequence: 1_000 + i,
            timestamp_ms: 1_700_000_000_000 + i,
            headers: Headers::new(),
            payload: Bytes::from(vec![i as u8; PAYLOAD_LEN]),
        })
        .collect()
}

fn event_batch(c: &mut Criterion) {
    let stream = StreamName::new("acme/orders/created").expect("valid name");
    let events = events();
    let mut group = c.benchmark_group("event_batch_64x256B");
    group.throughput(Throughput::Elements(EVENTS as u64));

    // The broker's path: encode the shared body once into a reused buffer.
    let mut scratch = BytesMut::with_capacity(64 * 1024);
    group.bench_function("encode_body", |b| {
        b.iter(|| {
            let body = EventBatchBody::encode(&stream, black_box(&events), &mut scratch)
                .expect("within limits");
            black_box(body.as_bytes().len());
            drop(body);
            scratch.clear();
        })
    });

    // Then per subscriber: 20 bytes of prefix, the body untouched.
    let body =
        EventBatchBody::encode(&stream, &events, &mut BytesMut::new()).expect("within limits");
    group.bench_function("prefix_per_subscriber", |b| {
        b.iter(|| black_box(body.prefix(black_box(7))))
    });

    // A whole frame into a reused write buffer (a copy of the body): allocation-free.
    let batch = EventBatch {
        subscription_id: 7,
        body: body.clone(),
    };
    let mut out = BytesMut::with_capacity(64 * 1024);
    group.bench_function("encode_frame_reused_buffer", |b| {
        b.iter(|| {
            out.clear();
            encode(0, black_box(&batch), &mut out).expect("within limits");
            black_box(out.len());
        })
    });

    // The floor: copying the 64 payloads alone into a reused buffer.
    let mut floor = BytesMut::with_capacity(64 * 1024);
    group.bench_function("memcpy_floor", |b| {
        b.iter(|| {
            floor.clear();
            for event in black_box(&events) {
                floor.extend_from_slice(&event.payload);
            }
            black_box(floor.len());
        })
    });

    // The client's path: check, decode, iterate the events.
    let mut wire = BytesMut::new();
    encode(0, &batch, &mut wire).expect("within limits");
    let wire = wire.freeze();
    group.bench_function("check_decode_iterate", |b| {
        b.iter(|| {
            let info = check(black_box(&wire)).expect("whole frame");
            let frame = decode(&info, &wire).expect("valid frame");
            let quiver_wire::Frame::EventBatch(batch) = frame else {
                unreachable!("encoded an event batch")
            };
            let total: usize = batch.body.events().map(|e| e.payload.len()).sum();
            black_box(total)
        })
    });
    group.bench_function("check_decode_iterate_borrowed", |b| {
        b.iter(|| {
            let info = check(black_box(&wire)).expect("whole frame");
            let frame = decode(&info, &wire).expect("valid frame");
            let quiver_wire::Frame::EventBatch(batch) = frame else {
                unreachable!("encoded an event batch")
            };
            let total: usize = batch.body.event_refs().map(|e| e.payload.len()).sum();
            black_box(total)
        })
    });
    group.finish();
}

fn publish(c: &mut Criterion) {
    let publish = Publish {
        stream: StreamName::new("acme/orders/created").expect("valid name"),
        ack: AckMode::Accepted,
        headers: Headers::new(),
        payload: Bytes::from(vec![7u8; PAYLOAD_LEN]),
    };
    let mut group = c.benchmark_group("publish_256B");
    group.throughput(Throughput::Elements(1));
    let mut out = BytesMut::with_capacity(4096);
    group.bench_function("encode_reused_buffer", |b| {
        b.iter(|| {
            out.clear();
            encode(black_box(42), black_box(&publish), &mut out).expect("within limits");
            black_box(out.len());
        })
    });
    let mut wire = BytesMut::new();
    encode(42, &publish, &mut wire).expect("within limits");
    let wire = wire.freeze();
    group.bench_function("check_decode", |b| {
        b.iter(|| {
            let info = check(black_box(&wire)).expect("whole frame");
            black_box(decode(&info, &wire).expect("valid frame"))
        })
    });
    group.finish();
}

criterion_group!(benches, event_batch, publish);
criterion_main!(benches);
