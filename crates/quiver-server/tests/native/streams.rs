//! Publish and subscribe through the SDK.

use std::time::Duration;

use quiver_client::{AckMode, ErrorCode, SubscribeOptions, SubscriptionEvent};
use quiver_core::streams::{BatchConfig, BrokerConfig, QueueLimits, SlowPolicy};

use super::{NativeServer, Transport, next, payloads};

async fn a_subscriber_receives_what_is_published_in_order(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let subscriber = server.client().await;
    let publisher = server.client().await;
    let mut sub = subscriber
        .subscribe("acme/orders/created", SubscribeOptions::default())
        .await
        .expect("subscribe");
    for i in 0..50 {
        let ack = publisher
            .publish("acme/orders/created", format!("m{i}"))
            .await
            .expect("publish");
        assert_eq!((ack.first_sequence, ack.count), (i, 1));
    }
    let batch: Vec<String> = (50..100).map(|i| format!("m{i}")).collect();
    let ack = publisher
        .publish_batch("acme/orders/created", batch)
        .await
        .expect("publish batch");
    assert_eq!((ack.first_sequence, ack.count), (50, 50));
    let mut sequences = Vec::new();
    for i in 0..100u64 {
        match next(&mut sub).await {
            SubscriptionEvent::Event(event) => {
                assert_eq!(&*event.stream, "acme/orders/created");
                assert_eq!(event.payload, format!("m{i}"));
                sequences.push(event.sequence);
            }
            other => panic!("expected event {i}, got {other:?}"),
        }
    }
    assert_eq!(sequences, (0..100).collect::<Vec<_>>());
}

async fn two_subscribers_on_two_connections_each_receive_everything(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let (a, b) = (server.client().await, server.client().await);
    let mut sub_a = a
        .subscribe("acme/t/s", SubscribeOptions::default())
        .await
        .expect("a");
    let mut sub_b = b
        .subscribe("acme/t/s", SubscribeOptions::default())
        .await
        .expect("b");
    // The second subscription on one connection gets its own id and its own copy.
    let mut sub_a2 = a
        .subscribe("acme/t/>", SubscribeOptions::default())
        .await
        .expect("a2");
    assert_ne!(sub_a.id(), sub_a2.id());
    let publisher = server.client().await;
    let expected: Vec<String> = (0..300).map(|i| format!("e{i}")).collect();
    for chunk in expected.chunks(64) {
        publisher
            .publish_batch("acme/t/s", chunk.to_vec())
            .await
            .expect("publish");
    }
    assert_eq!(payloads(&mut sub_a, 300).await, expected);
    assert_eq!(payloads(&mut sub_b, 300).await, expected);
    assert_eq!(payloads(&mut sub_a2, 300).await, expected);
    let stats = server.broker.stats();
    assert_eq!(stats.totals.published, 300);
    assert_eq!(stats.totals.delivered, 900);
}

async fn wildcards_select_one_level_a_subtree_or_a_whole_tenant(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let options = SubscribeOptions::default();
    let mut one = client
        .subscribe("acme/orders/*", options.clone())
        .await
        .expect("*");
    let mut tree = client
        .subscribe("acme/orders/>", options.clone())
        .await
        .expect(">");
    let mut tenant = client
        .subscribe("acme/>", options.clone())
        .await
        .expect("tenant");
    for stream in [
        "acme/orders/created",
        "acme/orders/eu/created",
        "acme/billing/x",
        "other/orders/created",
    ] {
        client.publish(stream, stream).await.expect("publish");
    }
    assert_eq!(payloads(&mut one, 1).await, ["acme/orders/created"]);
    assert_eq!(
        payloads(&mut tree, 2).await,
        ["acme/orders/created", "acme/orders/eu/created"]
    );
    assert_eq!(
        payloads(&mut tenant, 3).await,
        [
            "acme/orders/created",
            "acme/orders/eu/created",
            "acme/billing/x"
        ]
    );
    // Nothing else arrives: a marker published last is the next event everywhere.
    client
        .publish("acme/orders/zz", "marker")
        .await
        .expect("marker");
    assert_eq!(payloads(&mut one, 1).await, ["marker"]);
    assert_eq!(payloads(&mut tree, 1).await, ["marker"]);
    let bad = client
        .subscribe("acme/*/x", options)
        .await
        .expect_err("bad pattern");
    assert!(bad.to_string().contains("acme/*/x"), "{bad}");
}

async fn a_slow_subscriber_under_drop_old_is_told_exactly_what_it_missed(transport: Transport) {
    let mut config = BrokerConfig::default();
    config.default_stream.policy = SlowPolicy::DropOld;
    config.default_stream.batch =
        BatchConfig::new(1, 1 << 20, Duration::ZERO).expect("batch config");
    config.default_stream.queue = QueueLimits::new(4, 64 << 20).expect("queue limits");
    let server = NativeServer::over(transport, config).await;
    let subscriber = server.client().await;
    let mut sub = subscriber
        .subscribe("acme/slow/s", SubscribeOptions::default())
        .await
        .expect("subscribe");
    // The subscriber does not read while 2000 events of 16 KiB (32 MiB) are published:
    // its buffers and the socket fill, then its queue of 4 events drops the oldest.
    let publisher = server.client().await;
    let total = 2000u64;
    let payload = vec![7u8; 16 << 10];
    for _ in 0..total / 50 {
        publisher
            .publish_batch("acme/slow/s", (0..50).map(|_| payload.clone()))
            .await
            .expect("publish");
    }
    let (mut received, mut missed, mut lags, mut last) = (0u64, 0u64, 0, None);
    while received + missed < total {
        match next(&mut sub).await {
            SubscriptionEvent::Event(event) => {
                assert!(last < Some(event.sequence), "sequences increase");
                if let Some(previous) = last {
                    // A gap is exactly what a lag notice before it announced.
                    assert!(event.sequence - previous - 1 <= missed);
                }
                last = Some(event.sequence);
                received += 1;
            }
            SubscriptionEvent::Lag { missed: n } => {
                assert!(n > 0);
                missed += n;
                lags += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(received + missed, total);
    assert!(
        lags > 0 && missed > 0,
        "the slow subscriber lost events: {missed}"
    );
    assert_eq!(last, Some(total - 1), "drop_old keeps the newest");
    assert_eq!(server.broker.stats().totals.dropped_old, missed);
}

async fn committed_acks_are_refused_until_durable_streams_exist(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let error = client
        .publish_with("acme/d/s", &[], "x", AckMode::Committed)
        .await
        .expect_err("committed is refused");
    assert_eq!(error.code(), Some(ErrorCode::UNSUPPORTED));
    assert!(error.to_string().contains("accepted"), "{error}");
    // The connection stays usable, and ack none publishes without a reply.
    let none = client
        .publish_with("acme/d/s", &[("k", b"v")], "y", AckMode::None)
        .await
        .expect("ack none");
    assert_eq!(none, None);
    client.ping().await.expect("ping");
}

async fn headers_are_delivered_and_unsubscribe_stops_deliveries(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let mut sub = client
        .subscribe("acme/h/s", SubscribeOptions::default())
        .await
        .expect("subscribe");
    client
        .publish_with("acme/h/s", &[("trace", b"abc")], "p", AckMode::Accepted)
        .await
        .expect("publish");
    match next(&mut sub).await {
        SubscriptionEvent::Event(event) => {
            assert_eq!(event.headers, vec![("trace".to_owned(), "abc".into())]);
        }
        other => panic!("unexpected {other:?}"),
    }
    // Headers another transport allowed and the wire cannot carry (a key over 255 bytes,
    // more than 32) are left out; the message still arrives, with the others.
    let mut headers = vec![quiver_core::streams::Header {
        key: vec![b'k'; 300].into(),
        value: "long key".into(),
    }];
    headers.extend((0..40).map(|i| quiver_core::streams::Header {
        key: format!("h{i}").into(),
        value: "v".into(),
    }));
    let message = quiver_core::streams::Message {
        payload: "many".into(),
        headers,
    };
    let name = quiver_core::streams::StreamName::new("acme/h/s").unwrap();
    server
        .broker
        .publish(
            &name,
            vec![message],
            quiver_core::streams::Ack::Accepted,
            None,
        )
        .await
        .expect("publish with many headers");
    match next(&mut sub).await {
        SubscriptionEvent::Event(event) => {
            assert_eq!(&event.payload[..], b"many");
            assert_eq!(event.headers.len(), 32);
            assert_eq!(event.headers[0].0, "h0");
        }
        other => panic!("unexpected {other:?}"),
    }
    sub.unsubscribe().await.expect("unsubscribe");
    client.publish("acme/h/s", "after").await.expect("publish");
    client.ping().await.expect("ping");
    assert_eq!(server.broker.stats().subscriptions, 0);
}

async fn many_requests_are_in_flight_on_one_connection(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .cache_set(format!("k{i}"), format!("v{i}"), None)
                    .await
                    .expect("set");
                client.cache_get(format!("k{i}")).await.expect("get")
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let value = task.await.expect("task");
        assert_eq!(value.as_deref(), Some(format!("v{i}").as_bytes()));
    }
}

super::over_both!(
    a_subscriber_receives_what_is_published_in_order,
    two_subscribers_on_two_connections_each_receive_everything,
    wildcards_select_one_level_a_subtree_or_a_whole_tenant,
    a_slow_subscriber_under_drop_old_is_told_exactly_what_it_missed,
    committed_acks_are_refused_until_durable_streams_exist,
    headers_are_delivered_and_unsubscribe_stops_deliveries,
    many_requests_are_in_flight_on_one_connection,
);
