//! Every subscriber gets every message of a stream, in publish order, under concurrent
//! publishers; batches are shared, not copied.

use std::sync::Arc;

use quiver_core::streams::{Ack, Delivery, Pattern, SubscribeOptions};

use super::{batch, broker, drain, messages, name, payload_number, publish, summary};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_publishers_keep_per_stream_order() {
    const PUBLISHERS: u64 = 4;
    const CALLS: u64 = 200;
    const PER_CALL: u64 = 5;
    let broker = broker();
    let mut subs: Vec<_> = (0..3)
        .map(|_| {
            broker
                .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
                .unwrap()
        })
        .collect();
    let mut tasks = Vec::new();
    for publisher in 0..PUBLISHERS {
        let broker = broker.clone();
        tasks.push(tokio::spawn(async move {
            let handle = broker.stream(&name("t/ns/s")).unwrap();
            for call in 0..CALLS {
                // payload = publisher * 1_000_000 + running index
                let start = publisher * 1_000_000 + call * PER_CALL;
                handle
                    .publish(messages(start, PER_CALL), Ack::None, None)
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let total = PUBLISHERS * CALLS * PER_CALL;
    let mut reference: Option<Vec<(u64, u64)>> = None;
    for sub in &mut subs {
        let mut seen = Vec::new();
        let mut next_per_publisher = vec![0; PUBLISHERS as usize];
        for delivery in drain(sub) {
            let batch = batch(&delivery);
            for (seq, event) in batch.iter() {
                let number = payload_number(&event.payload);
                let (publisher, index) = ((number / 1_000_000) as usize, number % 1_000_000);
                assert_eq!(
                    index, next_per_publisher[publisher],
                    "publisher {publisher} out of order"
                );
                next_per_publisher[publisher] += 1;
                seen.push((seq, number));
            }
        }
        assert_eq!(seen.len() as u64, total);
        assert!(
            seen.iter()
                .enumerate()
                .all(|(i, (seq, _))| *seq == i as u64),
            "sequences are 0.. without gaps"
        );
        // every subscriber sees the same interleaving
        match &reference {
            None => reference = Some(seen),
            Some(reference) => assert_eq!(reference, &seen),
        }
    }
}

#[tokio::test]
async fn subscribers_share_one_batch() {
    let broker = broker();
    let mut a = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let mut b = broker
        .subscribe(Pattern::new("t/ns/>").unwrap(), SubscribeOptions::default())
        .unwrap();
    publish(&broker, "t/ns/s", 0, 3).await;
    let (from_a, from_b) = (a.recv().await, b.recv().await);
    assert!(
        Arc::ptr_eq(batch(&from_a), batch(&from_b)),
        "one Arc for every subscriber"
    );
    assert_eq!(batch(&from_a).stream().as_str(), "t/ns/s");
    assert_eq!(summary(&[from_b]).0, [0, 1, 2]);
}

#[tokio::test]
async fn receipts_and_timestamps() {
    let clock = Arc::new(quiver_core::streams::ManualClock::new(1_700_000_000_000));
    let broker = quiver_core::streams::Broker::with_clock(Default::default(), clock.clone());
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let first = broker
        .publish(&name("t/ns/s"), messages(0, 2), Ack::Accepted, None)
        .await
        .unwrap();
    clock.set_unix_ms(1_700_000_000_005);
    let second = broker
        .publish(&name("t/ns/s"), messages(2, 1), Ack::Accepted, None)
        .await
        .unwrap();
    assert_eq!((first.first_sequence, first.count), (0, 2));
    assert_eq!((second.first_sequence, second.count), (2, 1));
    let deliveries = drain(&mut sub);
    let stamps: Vec<_> = deliveries
        .iter()
        .flat_map(|d| batch(d).events().iter().map(|e| e.timestamp_ms))
        .collect();
    assert_eq!(
        stamps,
        [1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_005]
    );
    let stats = broker.stats();
    assert_eq!(
        (
            stats.totals.published,
            stats.totals.delivered,
            stats.subscriptions
        ),
        (3, 3, 1)
    );
}

#[tokio::test]
async fn committed_is_refused_and_bad_publishes_take_nothing() {
    let broker = broker();
    let stream = name("t/ns/s");
    let err = broker
        .publish(&stream, messages(0, 1), Ack::Committed, None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not durable"), "{err}");
    assert!(
        broker
            .publish(&stream, Vec::new(), Ack::None, None)
            .await
            .is_err()
    );
    let big = vec![quiver_core::streams::Message::new(vec![0u8; (1 << 20) + 1])];
    let err = broker
        .publish(&stream, big, Ack::None, None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("1048577 bytes"), "{err}");
    let ok = broker
        .publish(&stream, messages(0, 1), Ack::None, None)
        .await
        .unwrap();
    assert_eq!(
        ok.first_sequence, 0,
        "refused publishes took no sequence numbers"
    );
}

#[tokio::test]
async fn dropping_a_subscription_detaches_it() {
    let broker = broker();
    let sub = broker
        .subscribe(Pattern::new("t/ns/*").unwrap(), SubscribeOptions::default())
        .unwrap();
    publish(&broker, "t/ns/s", 0, 1).await;
    assert_eq!(broker.stats().totals.subscribers, 1);
    drop(sub);
    let stats = broker.stats();
    assert_eq!((stats.totals.subscribers, stats.subscriptions), (0, 0));
    assert!(broker.matching(&name("t/ns/s")).is_empty());
}

#[tokio::test]
async fn shutdown_delivers_queued_then_ends() {
    let broker = broker();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    publish(&broker, "t/ns/s", 0, 2).await;
    broker.shutdown();
    assert!(matches!(sub.recv().await, Delivery::Batch(_)));
    assert!(matches!(
        sub.recv().await,
        Delivery::Ended(quiver_core::streams::EndReason::Shutdown)
    ));
    assert!(matches!(sub.recv().await, Delivery::Ended(_)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_publishers_with_delay_batching_keep_order() {
    use std::time::Duration;

    use quiver_core::streams::{BatchConfig, StreamConfig};

    let broker = broker();
    let flusher = tokio::spawn(broker.clone().run_flusher());
    let config = StreamConfig {
        batch: BatchConfig::new(16, 1 << 20, Duration::from_micros(200)).unwrap(),
        ..StreamConfig::default()
    };
    let handle = broker.create_stream(&name("t/ns/s"), config).unwrap();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let publishers: Vec<_> = (0..2u64)
        .map(|p| {
            let handle = handle.clone();
            tokio::spawn(async move {
                for i in 0..300 {
                    handle
                        .publish(messages(p * 1_000_000 + i, 1), Ack::None, None)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for publisher in publishers {
        publisher.await.unwrap();
    }
    let (mut next, mut per_publisher) = (0, [0u64; 2]);
    while next < 600 {
        let delivery = sub.recv().await;
        for (seq, event) in batch(&delivery).iter() {
            assert_eq!(seq, next);
            next += 1;
            let number = payload_number(&event.payload);
            let publisher = (number / 1_000_000) as usize;
            assert_eq!(number % 1_000_000, per_publisher[publisher]);
            per_publisher[publisher] += 1;
        }
        assert!(batch(&delivery).len() <= 16);
    }
    flusher.abort();
}
