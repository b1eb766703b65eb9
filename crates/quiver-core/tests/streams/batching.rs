//! Delivery batching by count, bytes and delay.

use std::time::Duration;

use bytes::Bytes;
use quiver_core::streams::{
    Ack, BatchConfig, Broker, Delivery, Message, Pattern, QueueLimits, SlowPolicy, StreamConfig,
    SubscribeOptions,
};

use super::{batch, broker, drain, messages, name, summary};

fn config(max_events: u32, max_bytes: u64, max_delay_ms: u64) -> StreamConfig {
    StreamConfig {
        batch: BatchConfig::new(max_events, max_bytes, Duration::from_millis(max_delay_ms))
            .unwrap(),
        queue: QueueLimits::new(100_000, 1 << 30).unwrap(),
        policy: SlowPolicy::DropNew,
        ..StreamConfig::default()
    }
}

fn sizes(deliveries: &[Delivery]) -> Vec<usize> {
    deliveries.iter().map(|d| batch(d).len()).collect()
}

#[tokio::test]
async fn a_publish_call_is_one_batch_split_by_count() {
    let broker = broker();
    let handle = broker
        .create_stream(&name("t/ns/s"), config(4, 1 << 20, 0))
        .unwrap();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    handle
        .publish(messages(0, 3), Ack::None, None)
        .await
        .unwrap();
    handle
        .publish(messages(3, 10), Ack::None, None)
        .await
        .unwrap();
    let deliveries = drain(&mut sub);
    assert_eq!(sizes(&deliveries), [3, 4, 4, 2]);
    assert_eq!(summary(&deliveries).0, (0..13).collect::<Vec<_>>());
    assert_eq!(handle.stats().batches, 4);
}

#[tokio::test]
async fn batches_split_by_bytes() {
    let broker = broker();
    let handle = broker
        .create_stream(&name("t/ns/s"), config(100, 1000, 0))
        .unwrap();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let payload = Bytes::from(vec![7u8; 300]);
    let batch_of = |n| {
        (0..n)
            .map(|_| Message::new(payload.clone()))
            .collect::<Vec<_>>()
    };
    handle.publish(batch_of(7), Ack::None, None).await.unwrap();
    handle
        .publish(vec![Message::new(vec![1u8; 2500])], Ack::None, None)
        .await
        .unwrap();
    let deliveries = drain(&mut sub);
    assert_eq!(
        sizes(&deliveries),
        [3, 3, 1, 1],
        "3 x 300 B fit in 1000 B; a larger message is a batch alone"
    );
    assert_eq!(batch(&deliveries[0]).bytes(), 900);
    assert_eq!(batch(&deliveries[3]).bytes(), 2500);
}

#[tokio::test(start_paused = true)]
async fn messages_within_the_delay_are_one_batch() {
    let broker = broker();
    let flusher = tokio::spawn(broker.clone().run_flusher());
    let handle = broker
        .create_stream(&name("t/ns/s"), config(100, 1 << 20, 5))
        .unwrap();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let start = tokio::time::Instant::now();
    for i in 0..4 {
        handle
            .publish(messages(i, 1), Ack::None, None)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(sub.try_recv().is_none(), "nothing before the delay");
    let first = sub.recv().await;
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(5),
        "sealed at the first message's deadline"
    );
    assert_eq!(batch(&first).len(), 4);
    handle
        .publish(messages(4, 1), Ack::None, None)
        .await
        .unwrap();
    let second = sub.recv().await;
    assert_eq!(
        (batch(&second).len(), batch(&second).first_sequence()),
        (1, 4)
    );
    assert_eq!(start.elapsed(), Duration::from_millis(10));
    flusher.abort();
}

#[tokio::test(start_paused = true)]
async fn a_full_batch_does_not_wait_for_the_delay() {
    let broker = broker();
    let handle = broker
        .create_stream(&name("t/ns/s"), config(4, 1 << 20, 500))
        .unwrap();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    for i in 0..6 {
        handle
            .publish(messages(i, 1), Ack::None, None)
            .await
            .unwrap();
    }
    assert_eq!(sizes(&drain(&mut sub)), [4]);
    // the rest waits for its deadline, driven by hand (sans-IO)
    let now = tokio::time::Instant::now();
    assert!(broker.flush_due(now).is_some(), "a deadline is pending");
    assert!(sub.try_recv().is_none());
    assert_eq!(broker.flush_due(now + Duration::from_millis(500)), None);
    assert_eq!(sizes(&drain(&mut sub)), [2]);
}

#[tokio::test]
async fn flush_and_delay_zero_deliver_at_once() {
    let broker = Broker::new(Default::default());
    let handle = broker
        .create_stream(&name("t/ns/s"), config(100, 1 << 20, 1000))
        .unwrap();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    handle
        .publish(messages(0, 2), Ack::None, None)
        .await
        .unwrap();
    assert!(sub.try_recv().is_none());
    handle.flush();
    let got = sub.recv().await;
    assert_eq!(batch(&got).len(), 2);
}
