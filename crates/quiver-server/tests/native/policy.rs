//! Slow-subscriber policies `disconnect` and `block` over the wire, and per-subscription
//! batch sizes.

use std::time::Duration;

use quiver_client::{ErrorCode, SubscribeOptions, SubscriptionEvent};
use quiver_core::streams::{BatchConfig, BrokerConfig, QueueLimits, SlowPolicy};

use super::{NativeServer, Transport, next, payloads};

fn config(policy: SlowPolicy) -> BrokerConfig {
    let mut config = BrokerConfig::default();
    config.default_stream.policy = policy;
    config.default_stream.batch =
        BatchConfig::new(1, 1 << 20, Duration::ZERO).expect("batch config");
    config.default_stream.queue = QueueLimits::new(4, 64 << 20).expect("queue limits");
    config
}

async fn disconnect_ends_only_the_slow_subscription(transport: Transport) {
    let server = NativeServer::over(transport, config(SlowPolicy::Disconnect)).await;
    let subscriber = server.client().await;
    let mut slow = subscriber
        .subscribe("acme/x/slow", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let publisher = server.client().await;
    let payload = vec![1u8; 16 << 10];
    for _ in 0..40 {
        publisher
            .publish_batch("acme/x/slow", (0..50).map(|_| payload.clone()))
            .await
            .expect("publish");
    }
    let mut received = 0;
    let (code, message) = loop {
        match next(&mut slow).await {
            SubscriptionEvent::Event(_) => received += 1,
            SubscriptionEvent::Ended { code, message } => break (code, message),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(code, Some(ErrorCode::SLOW_CONSUMER), "{message}");
    assert!(
        received < 2000,
        "the subscription ended before taking everything"
    );
    assert_eq!(slow.next().await, None, "nothing follows the end");
    // The connection and its other subscriptions carry on.
    let mut fresh = subscriber
        .subscribe("acme/x/other", SubscribeOptions::default())
        .await
        .expect("subscribe again");
    publisher
        .publish("acme/x/other", "still here")
        .await
        .expect("publish");
    assert_eq!(payloads(&mut fresh, 1).await, ["still here"]);
    assert!(server.broker.stats().totals.dropped_disconnect > 0);
}

async fn block_slows_the_publisher_and_loses_nothing(transport: Transport) {
    let server = NativeServer::over(transport, config(SlowPolicy::Block)).await;
    let subscriber = server.client().await;
    let mut sub = subscriber
        .subscribe("acme/x/block", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let reader = tokio::spawn(async move {
        let mut got = Vec::new();
        while got.len() < 200 {
            match next(&mut sub).await {
                SubscriptionEvent::Event(event) => got.push(event.sequence),
                other => panic!("block never drops: {other:?}"),
            }
            if got.len() % 50 == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        got
    });
    let publisher = server.client().await;
    let payload = vec![2u8; 64 << 10];
    for _ in 0..20 {
        publisher
            .publish_batch("acme/x/block", (0..10).map(|_| payload.clone()))
            .await
            .expect("block waits, it does not fail");
    }
    let got = reader.await.expect("reader");
    assert_eq!(got, (0..200).collect::<Vec<_>>());
    let stats = server.broker.stats().totals;
    assert_eq!(stats.dropped(), 0);
}

async fn a_smaller_batch_per_subscription_still_delivers_everything(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let mut shared = client
        .subscribe("acme/x/b", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let mut small = client
        .subscribe("acme/x/b", SubscribeOptions::default().max_batch_events(3))
        .await
        .expect("subscribe");
    let expected: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    client
        .publish_batch("acme/x/b", expected.clone())
        .await
        .expect("publish");
    assert_eq!(payloads(&mut shared, 10).await, expected);
    assert_eq!(payloads(&mut small, 10).await, expected);
}

super::over_both!(
    disconnect_ends_only_the_slow_subscription,
    block_slows_the_publisher_and_loses_nothing,
    a_smaller_batch_per_subscription_still_delivers_everything,
);
