//! Slow-subscriber policies with a subscriber that stops reading.

use std::time::Duration;

use quiver_core::streams::{
    Ack, Delivery, EndReason, Pattern, PublishError, QueueLimits, SlowPolicy, SubscribeOptions,
};

use super::{broker, drain, messages, name, stream_config, summary};

/// Queue of 10 events, batches of 1 message (one publish call each).
async fn setup(
    policy: SlowPolicy,
) -> (
    quiver_core::streams::Broker,
    quiver_core::streams::StreamHandle,
) {
    let broker = broker();
    let handle = broker
        .create_stream(&name("t/ns/s"), stream_config(policy, 10))
        .unwrap();
    (broker, handle)
}

#[tokio::test]
async fn drop_old_keeps_the_newest_and_counts_exactly() {
    let (broker, handle) = setup(SlowPolicy::DropOld).await;
    let mut slow = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let mut fast = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let mut fast_seen = Vec::new();
    for i in 0..25 {
        handle
            .publish(messages(i, 1), Ack::None, None)
            .await
            .unwrap();
        fast_seen.extend(summary(&drain(&mut fast)).0);
    }
    assert_eq!(
        fast_seen,
        (0..25).collect::<Vec<_>>(),
        "the reading subscriber lost nothing"
    );
    let deliveries = drain(&mut slow);
    assert!(
        matches!(deliveries[0], Delivery::Lag { missed: 15 }),
        "{deliveries:?}"
    );
    let (numbers, lags) = summary(&deliveries);
    assert_eq!(
        numbers,
        (15..25).collect::<Vec<_>>(),
        "the newest ten are kept"
    );
    assert_eq!(lags, [15]);
    let stats = handle.stats();
    assert_eq!(
        (stats.dropped_old, stats.queue_high_water, stats.published),
        (15, 10, 25)
    );
    assert_eq!(stats.delivered, 35);
}

#[tokio::test]
async fn drop_new_keeps_the_oldest_and_lag_comes_at_the_gap() {
    let (broker, handle) = setup(SlowPolicy::DropNew).await;
    let mut slow = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    for i in 0..25 {
        handle
            .publish(messages(i, 1), Ack::None, None)
            .await
            .unwrap();
    }
    let first = drain(&mut slow);
    assert_eq!(summary(&first), ((0..10).collect(), vec![15]));
    assert!(
        matches!(first.last(), Some(Delivery::Lag { missed: 15 })),
        "the lag follows the kept events"
    );
    handle
        .publish(messages(25, 1), Ack::None, None)
        .await
        .unwrap();
    assert_eq!(summary(&drain(&mut slow)), (vec![25], vec![]));
    assert_eq!(handle.stats().dropped_new, 15);
}

#[tokio::test]
async fn lag_precedes_the_next_batch_after_the_loss() {
    let (broker, handle) = setup(SlowPolicy::DropNew).await;
    let mut slow = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    handle
        .publish(messages(0, 10), Ack::None, None)
        .await
        .unwrap();
    handle
        .publish(messages(10, 3), Ack::None, None)
        .await
        .unwrap(); // lost
    let Delivery::Batch(kept) = slow.recv().await else {
        panic!("expected the kept batch")
    };
    assert_eq!(kept.len(), 10);
    handle
        .publish(messages(13, 2), Ack::None, None)
        .await
        .unwrap();
    assert!(matches!(slow.recv().await, Delivery::Lag { missed: 3 }));
    let Delivery::Batch(next) = slow.recv().await else {
        panic!("expected the next batch")
    };
    assert_eq!(next.first_sequence(), 13, "sequence numbers show the gap");
}

#[tokio::test(start_paused = true)]
async fn block_slows_the_publisher_and_loses_nothing() {
    let (broker, handle) = setup(SlowPolicy::Block).await;
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let publisher = tokio::spawn({
        let handle = handle.clone();
        async move {
            for i in 0..100 {
                handle
                    .publish(messages(i * 3, 3), Ack::Accepted, None)
                    .await
                    .unwrap();
            }
        }
    });
    // the publisher fills the queue and waits
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!publisher.is_finished(), "the publisher waits for room");
    assert!(handle.stats().blocked_publishes >= 1);
    let mut numbers = Vec::new();
    while numbers.len() < 300 {
        tokio::time::sleep(Duration::from_millis(10)).await; // a slow reader
        match sub.recv().await {
            Delivery::Batch(batch) => numbers.extend(summary(&[Delivery::Batch(batch)]).0),
            other => panic!("block never loses: got {other:?}"),
        }
    }
    publisher.await.unwrap();
    assert_eq!(numbers, (0..300).collect::<Vec<_>>());
    let stats = handle.stats();
    assert_eq!((stats.dropped(), stats.block_timeouts), (0, 0));
    assert!(stats.queue_high_water <= 10, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn block_times_out_with_a_typed_error_and_takes_nothing() {
    let (broker, handle) = setup(SlowPolicy::Block).await;
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    handle
        .publish(messages(0, 10), Ack::Accepted, None)
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    let err = handle
        .publish(messages(10, 1), Ack::Accepted, None)
        .await
        .unwrap_err();
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(1),
        "the stream's block timeout"
    );
    assert!(matches!(err, PublishError::Blocked { subscription, .. } if subscription == sub.id()));
    let receipt = handle.publish(messages(10, 0), Ack::Accepted, None).await;
    assert!(receipt.is_err(), "empty publish refused");
    assert_eq!(summary(&drain(&mut sub)).0, (0..10).collect::<Vec<_>>());
    let receipt = handle
        .publish(messages(10, 1), Ack::Accepted, None)
        .await
        .unwrap();
    assert_eq!(
        receipt.first_sequence, 10,
        "the timed-out publish took no sequence number"
    );
    assert_eq!(handle.stats().block_timeouts, 1);
}

#[tokio::test]
async fn disconnect_closes_only_the_slow_subscriber() {
    let (broker, handle) = setup(SlowPolicy::Disconnect).await;
    let mut slow = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    let mut fast = broker
        .subscribe(Pattern::new("t/ns/>").unwrap(), SubscribeOptions::default())
        .unwrap();
    let mut fast_seen = Vec::new();
    for i in 0..15 {
        handle
            .publish(messages(i, 1), Ack::None, None)
            .await
            .unwrap();
        fast_seen.extend(summary(&drain(&mut fast)).0);
    }
    assert_eq!(fast_seen, (0..15).collect::<Vec<_>>());
    match slow.recv().await {
        Delivery::Ended(EndReason::SlowConsumer { stream, missed }) => {
            assert_eq!((stream.as_str(), missed), ("t/ns/s", 11));
        }
        other => panic!("expected the end, got {other:?}"),
    }
    assert!(matches!(slow.recv().await, Delivery::Ended(_)));
    let stats = handle.stats();
    assert_eq!((stats.subscribers, stats.dropped_disconnect), (1, 11));
    drop(slow);
    assert_eq!(broker.stats().subscriptions, 1);
}

#[tokio::test]
async fn an_empty_queue_takes_a_batch_larger_than_its_bound() {
    let (broker, handle) = setup(SlowPolicy::DropNew).await;
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    handle
        .publish(messages(0, 30), Ack::None, None)
        .await
        .unwrap();
    assert_eq!(summary(&drain(&mut sub)).0.len(), 30);
}

#[tokio::test]
async fn a_disconnected_wildcard_subscription_leaves_every_stream() {
    let broker = broker();
    let slow_stream = broker
        .create_stream(&name("t/ns/slow"), stream_config(SlowPolicy::Disconnect, 2))
        .unwrap();
    let mut sub = broker
        .subscribe(
            Pattern::new("t/ns/*").unwrap(),
            SubscribeOptions {
                queue: Some(QueueLimits::new(2, 1 << 20).unwrap()),
                ..SubscribeOptions::default()
            },
        )
        .unwrap();
    super::publish(&broker, "t/ns/other", 0, 1).await;
    for i in 0..3 {
        slow_stream
            .publish(messages(i, 1), Ack::None, None)
            .await
            .unwrap();
    }
    assert!(matches!(
        sub.recv().await,
        Delivery::Ended(EndReason::SlowConsumer { missed: 3, .. })
    ));
    super::publish(&broker, "t/ns/other", 1, 1).await;
    super::publish(&broker, "t/ns/new", 0, 1).await;
    assert!(
        matches!(sub.recv().await, Delivery::Ended(_)),
        "nothing after the end"
    );
    let stats = broker.stats();
    assert_eq!(
        stats.totals.subscribers, 0,
        "detached from every stream, new ones too"
    );
    assert_eq!(
        stats.subscriptions, 1,
        "counted until the transport drops the handle"
    );
    drop(sub);
    assert_eq!(
        (
            broker.stats().totals.subscribers,
            broker.stats().subscriptions
        ),
        (0, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn a_blocked_publisher_goes_on_when_the_full_subscription_is_dropped() {
    let (broker, handle) = setup(SlowPolicy::Block).await;
    let sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    handle
        .publish(messages(0, 10), Ack::None, None)
        .await
        .unwrap();
    let waiting = tokio::spawn({
        let handle = handle.clone();
        async move { handle.publish(messages(10, 1), Ack::Accepted, None).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(!waiting.is_finished());
    let before = tokio::time::Instant::now();
    drop(sub);
    assert_eq!(waiting.await.unwrap().unwrap().first_sequence, 10);
    assert_eq!(
        before.elapsed(),
        std::time::Duration::ZERO,
        "no wait for the timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_under_concurrency_loses_nothing() {
    let (broker, handle) = setup(SlowPolicy::Block).await;
    let subs: Vec<_> = (0..2)
        .map(|_| {
            broker
                .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
                .unwrap()
        })
        .collect();
    let readers: Vec<_> = subs
        .into_iter()
        .map(|mut sub| {
            tokio::spawn(async move {
                let mut count = 0;
                while count < 2 * 500 * 3 {
                    match sub.recv().await {
                        Delivery::Batch(batch) => count += batch.len(),
                        other => panic!("block loses nothing: {other:?}"),
                    }
                    tokio::task::yield_now().await;
                }
                count
            })
        })
        .collect();
    let publishers: Vec<_> = (0..2)
        .map(|p| {
            let handle = handle.clone();
            tokio::spawn(async move {
                for i in 0..500 {
                    handle
                        .publish(messages(p * 10_000 + i * 3, 3), Ack::None, None)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for publisher in publishers {
        publisher.await.unwrap();
    }
    for reader in readers {
        assert_eq!(reader.await.unwrap(), 3000);
    }
    assert_eq!(handle.stats().dropped(), 0);
}
