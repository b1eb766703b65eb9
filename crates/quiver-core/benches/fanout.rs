//! Fan-out: publish 256 B messages in batches of 64 to 1 and 10 subscribers, in process.
//! Throughput is messages delivered (64 x subscribers per iteration).
//!
//! `cargo bench -p quiver-core --bench fanout`
//!
//! - `inline`: one thread publishes a batch, then every subscription takes it (the cost of
//!   the broker's own path: sequencing, sealing, fan-out, queueing, receiving).
//! - `tasks`: subscribers are tokio tasks on a 2-worker runtime reading while the publisher
//!   publishes, as a transport's writer tasks do; the publisher is bounded by `block`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quiver_core::streams::{
    Ack, BatchConfig, BlockTimeout, Broker, BrokerConfig, Delivery, Message, Pattern, QueueLimits,
    SlowPolicy, StreamConfig, StreamName, SubscribeOptions,
};

const BATCH: usize = 64;
const PAYLOAD_LEN: usize = 256;

fn setup(
    subscribers: usize,
    policy: SlowPolicy,
) -> (
    Broker,
    quiver_core::streams::StreamHandle,
    Vec<quiver_core::streams::Subscription>,
) {
    let broker = Broker::new(BrokerConfig::default());
    let config = StreamConfig {
        batch: BatchConfig::new(BATCH as u32, 1 << 20, Duration::ZERO).expect("valid batch config"),
        queue: QueueLimits::new(8192, 64 << 20).expect("valid queue limits"),
        policy,
        block_timeout: BlockTimeout::new(Duration::from_secs(10)).expect("valid timeout"),
        durable: None,
    };
    let name = StreamName::new("bench/fanout/s").expect("valid name");
    let handle = broker.create_stream(&name, config).expect("new stream");
    let subs = (0..subscribers)
        .map(|_| {
            broker
                .subscribe(Pattern::from(name.clone()), SubscribeOptions::default())
                .expect("subscribe")
        })
        .collect();
    (broker, handle, subs)
}

fn batch() -> Vec<Message> {
    let payload = Bytes::from(vec![7u8; PAYLOAD_LEN]);
    (0..BATCH).map(|_| Message::new(payload.clone())).collect()
}

fn inline(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("fanout_inline_64x256B");
    for subscribers in [1usize, 10] {
        group.throughput(Throughput::Elements((BATCH * subscribers) as u64));
        let (_broker, handle, mut subs) = setup(subscribers, SlowPolicy::DropNew);
        group.bench_function(BenchmarkId::from_parameter(subscribers), |b| {
            b.iter(|| {
                runtime
                    .block_on(handle.publish(batch(), Ack::None, None))
                    .expect("publish");
                for sub in &mut subs {
                    black_box(sub.try_recv());
                }
            });
        });
    }
    group.finish();
}

fn tasks(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("fanout_tasks_64x256B");
    for subscribers in [1usize, 10] {
        group.throughput(Throughput::Elements((BATCH * subscribers) as u64));
        group.bench_function(BenchmarkId::from_parameter(subscribers), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let (_broker, handle, subs) = setup(subscribers, SlowPolicy::Block);
                    let want = iters * BATCH as u64;
                    let readers: Vec<_> = subs
                        .into_iter()
                        .map(|sub| tokio::spawn(read(sub, want)))
                        .collect();
                    let start = Instant::now();
                    for _ in 0..iters {
                        handle
                            .publish(batch(), Ack::None, None)
                            .await
                            .expect("publish");
                    }
                    for reader in readers {
                        reader.await.expect("reader");
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
}

async fn read(mut sub: quiver_core::streams::Subscription, want: u64) {
    let mut got = 0;
    let mut out = Vec::with_capacity(64);
    while got < want {
        sub.recv_many(&mut out, 64).await;
        for delivery in out.drain(..) {
            match delivery {
                Delivery::Batch(batch) => got += batch.len() as u64,
                other => panic!("the bench loses nothing: {other:?}"),
            }
        }
    }
}

criterion_group!(benches, inline, tasks);
criterion_main!(benches);
