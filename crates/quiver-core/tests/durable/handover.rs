//! Property test of the hand-over from history to live delivery: a subscriber starting in
//! a durable stream's history while publishers keep writing receives every message from
//! its start on exactly once, in offset order, each publisher's messages in the order they
//! were published.

use std::collections::HashMap;

use proptest::prelude::*;
use quiver_core::streams::durable::Durability;
use quiver_core::streams::{
    Ack, Delivery, Pattern, QueueLimits, SlowPolicy, StartAt, SubscribeOptions,
};

use super::{durable, name, number, numbered, open};

#[derive(Debug, Clone)]
struct Case {
    stored: u64,
    publishers: u64,
    per_publisher: u64,
    batch: u64,
    start: u64,
    durability: Durability,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0u64..3000,
        1u64..4,
        0u64..400,
        1u64..50,
        0u64..100,
        prop_oneof![
            Just(Durability::Os),
            Just(Durability::Buffered),
            Just(Durability::Interval { interval_ms: 2 }),
        ],
    )
        .prop_map(
            |(stored, publishers, per_publisher, batch, start_pct, durability)| Case {
                stored,
                publishers,
                per_publisher,
                batch,
                start: stored * start_pct / 100,
                durability,
            },
        )
}

async fn run(case: Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/handover/s");
    let mut config = durable(case.durability);
    config.policy = SlowPolicy::Block;
    let handle = broker.create_stream(&stream, config).unwrap();
    let mut published = 0;
    while published < case.stored {
        let n = (case.stored - published).min(500);
        handle
            .publish(numbered(published, n), Ack::Accepted, None)
            .await
            .unwrap();
        published += n;
    }
    let total = case.stored + case.publishers * case.per_publisher;
    let mut publishers = Vec::new();
    for p in 0..case.publishers {
        let handle = handle.clone();
        let case = case.clone();
        publishers.push(tokio::spawn(async move {
            let base = 1_000_000 * (p + 1);
            let mut sent = 0;
            while sent < case.per_publisher {
                let n = (case.per_publisher - sent).min(case.batch);
                handle
                    .publish(numbered(base + sent, n), Ack::Accepted, None)
                    .await
                    .unwrap();
                sent += n;
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut sub = broker
        .subscribe(
            Pattern::new(stream.as_str()).unwrap(),
            SubscribeOptions {
                start: StartAt::Offset(case.start),
                queue: Some(QueueLimits::new(1 << 20, 1 << 30).unwrap()),
                ..SubscribeOptions::default()
            },
        )
        .unwrap();
    let mut next = case.start;
    let mut last_of: HashMap<u64, u64> = HashMap::new();
    while next < total {
        let delivery = tokio::time::timeout(std::time::Duration::from_secs(20), sub.recv())
            .await
            .map_err(|_| TestCaseError::fail(format!("stalled at offset {next} of {total}")))?;
        let Delivery::Batch(batch) = delivery else {
            return Err(TestCaseError::fail(format!("unexpected {delivery:?}")));
        };
        for (offset, event) in batch.iter() {
            prop_assert_eq!(offset, next, "no gap, no duplicate");
            next += 1;
            let n = number(&event.payload);
            let publisher = n / 1_000_000;
            if let Some(previous) = last_of.insert(publisher, n) {
                prop_assert!(previous < n, "publisher {} out of order", publisher);
            }
        }
    }
    for publisher in publishers {
        publisher.await.unwrap();
    }
    prop_assert!(sub.try_recv().is_none(), "nothing past the end");
    broker.close();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn history_joins_live_with_no_gap_and_no_duplicate(case in case()) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(run(case))?;
    }
}
