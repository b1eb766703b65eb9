//! Registry bounds: streams, subscriptions per stream or pattern, subscriptions per process.

use quiver_core::streams::{
    Ack, Broker, BrokerConfig, CreateStreamError, Limits, Pattern, PublishError, StreamConfig,
    SubscribeError, SubscribeOptions,
};

use super::{messages, name};

fn broker(max_streams: usize, per_stream: usize, total: usize) -> Broker {
    let limits = Limits {
        max_streams,
        max_subscriptions_per_stream: per_stream,
        max_subscriptions: total,
    };
    Broker::new(BrokerConfig {
        limits,
        ..BrokerConfig::default()
    })
}

#[tokio::test]
async fn stream_count_is_bounded() {
    let broker = broker(2, 10, 10);
    broker
        .publish(&name("t/ns/a"), messages(0, 1), Ack::None, None)
        .await
        .unwrap();
    broker
        .create_stream(&name("t/ns/b"), StreamConfig::default())
        .unwrap();
    let err = broker
        .publish(&name("t/ns/c"), messages(0, 1), Ack::None, None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        PublishError::TooManyStreams {
            stream: name("t/ns/c"),
            limit: 2
        }
    );
    assert!(err.to_string().contains("t/ns/c"));
    let exists = broker
        .create_stream(&name("t/ns/a"), StreamConfig::default())
        .unwrap_err();
    assert!(matches!(exists, CreateStreamError::Exists { .. }));
    broker
        .publish(&name("t/ns/a"), messages(1, 1), Ack::None, None)
        .await
        .unwrap();
}

#[test]
fn subscriptions_are_bounded_per_stream_and_per_process() {
    let broker = broker(10, 2, 3);
    let subscribe =
        |p: &str| broker.subscribe(Pattern::new(p).unwrap(), SubscribeOptions::default());
    let a = subscribe("t/ns/s").unwrap();
    let _b = subscribe("t/ns/s").unwrap();
    let err = subscribe("t/ns/s").unwrap_err();
    assert!(
        matches!(err, SubscribeError::TooManyForStream { limit: 2, .. }),
        "{err}"
    );
    let _c = subscribe("t/ns/*").unwrap();
    let err = subscribe("t/ns/>").unwrap_err();
    assert!(
        matches!(err, SubscribeError::TooManySubscriptions { limit: 3, .. }),
        "{err}"
    );
    drop(a);
    subscribe("t/ns/>").unwrap();
}
