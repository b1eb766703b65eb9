//! The SDK's batching [`Publisher`](quiver_client::Publisher) against a real listener:
//! order across many batches in flight, linger, flush, failures, dropping; and what a
//! client queued with ack `none` before it was dropped still reaching the server.

use std::time::Duration;

use bytes::BytesMut;
use quiver_client::{
    AckMode, Client, ClientOptions, ErrorCode, PublisherError, PublisherOptions, SubscribeOptions,
    Subscription, SubscriptionEvent,
};
use quiver_core::streams::{BatchConfig, BrokerConfig, QueueLimits, SlowPolicy};
use quiver_wire::{Capabilities, Envelope, Frame, HelloOk, VERSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{NativeServer, Transport, WAIT, next};

/// The sequence and payload of the next `count` events.
async fn events(subscription: &mut Subscription, count: usize) -> Vec<(u64, String)> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        match next(subscription).await {
            SubscriptionEvent::Event(event) => {
                let payload = String::from_utf8(event.payload.to_vec()).expect("utf-8");
                out.push((event.sequence, payload));
            }
            other => panic!("expected an event, got {other:?}"),
        }
    }
    out
}

async fn order_is_kept_across_many_batches_in_flight(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let subscriber = server.client().await;
    let mut sub = subscriber
        .subscribe(
            "acme/p/order",
            SubscribeOptions::default().queue_capacity(1 << 16),
        )
        .await
        .expect("subscribe");
    let client = server.client().await;
    let options = PublisherOptions::default()
        .max_batch_events(7)
        .max_in_flight_batches(16);
    let (first, second) = (
        client
            .publisher("acme/p/order", options)
            .expect("publisher"),
        client
            .publisher("acme/p/order", options)
            .expect("publisher"),
    );
    let count = 3000;
    let publish_all = |publisher: quiver_client::Publisher, tag: &'static str| async move {
        for i in 0..count {
            publisher
                .publish(format!("{tag}{i}"))
                .await
                .expect("publish");
        }
        publisher.close().await.expect("every batch acked");
    };
    tokio::join!(publish_all(first, "a"), publish_all(second, "b"));
    let got = events(&mut sub, 2 * count).await;
    let sequences: Vec<u64> = got.iter().map(|(sequence, _)| *sequence).collect();
    assert_eq!(sequences, (0..2 * count as u64).collect::<Vec<_>>());
    for tag in ["a", "b"] {
        let mine: Vec<&str> = got
            .iter()
            .filter_map(|(_, payload)| payload.strip_prefix(tag))
            .collect();
        let expected: Vec<String> = (0..count).map(|i| i.to_string()).collect();
        assert_eq!(mine, expected, "publisher {tag} in order, nothing lost");
    }
    let stats = server.broker.stats().totals;
    assert_eq!(stats.published, 2 * count as u64);
    assert_eq!(stats.dropped(), 0);
}

async fn linger_sends_a_partial_batch(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let subscriber = server.client().await;
    let mut sub = subscriber
        .subscribe("acme/p/linger", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let client = server.client().await;
    let options = PublisherOptions::default()
        .linger(Duration::from_millis(50))
        .max_batch_events(100);
    let publisher = client
        .publisher("acme/p/linger", options)
        .expect("publisher");
    for i in 0..2 {
        publisher.publish(format!("m{i}")).await.expect("publish");
    }
    publisher
        .publish_with_headers(&[("trace", b"t2")], "m2")
        .await
        .expect("publish with headers");
    // No flush: the linger sends the three as one batch.
    let mut got = Vec::new();
    for _ in 0..3 {
        match next(&mut sub).await {
            SubscriptionEvent::Event(event) => got.push(event),
            other => panic!("expected an event, got {other:?}"),
        }
    }
    let payloads: Vec<&[u8]> = got.iter().map(|event| &event.payload[..]).collect();
    assert_eq!(payloads, [&b"m0"[..], b"m1", b"m2"]);
    assert!(got[0].headers.is_empty());
    assert_eq!(
        got[2].headers,
        [("trace".to_owned(), bytes::Bytes::from_static(b"t2"))]
    );
    assert_eq!(
        server.broker.stats().totals.batches,
        1,
        "one batch of three"
    );
}

async fn flush_returns_once_every_batch_is_acked(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let options = PublisherOptions::default()
        .linger(Duration::from_secs(1))
        .max_batch_events(10)
        .max_in_flight_batches(4);
    let publisher = client
        .publisher("acme/p/flush", options)
        .expect("publisher");
    for i in 0..995 {
        publisher.publish(format!("m{i}")).await.expect("publish");
    }
    publisher.flush().await.expect("flush");
    // Acked means taken: the broker has every message, the lingering last five included.
    assert_eq!(server.broker.stats().totals.published, 995);
    publisher
        .publish("after")
        .await
        .expect("publish after flush");
    publisher.flush().await.expect("flush again");
    assert_eq!(server.broker.stats().totals.published, 996);
}

async fn refused_batches_are_reported_with_their_message_count(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    // `committed` needs a durable stream, which this server refuses.
    let options = PublisherOptions::default()
        .max_batch_events(4)
        .ack(AckMode::Committed);
    let refused = client
        .publisher("acme/p/refused", options)
        .expect("publisher");
    for i in 0..10 {
        if let Err(error) = refused.publish(format!("m{i}")).await {
            // A batch's refusal may come back while the rest are still published.
            assert!(
                matches!(error, PublisherError::NotPublished { .. }),
                "{error}"
            );
        }
    }
    let mut messages = 0;
    let mut reported = refused.flush().await;
    while let Err(error) = reported {
        let PublisherError::NotPublished {
            messages: failed,
            source,
            ..
        } = &error
        else {
            panic!("expected NotPublished, got {error}");
        };
        assert_eq!(source.code(), Some(ErrorCode::UNSUPPORTED), "{error}");
        assert!(error.to_string().contains("messages"), "{error}");
        messages += failed;
        reported = refused.flush().await;
    }
    assert!(messages > 0 && messages <= 10, "{messages} reported");
    // Reported once; the client and its other publishers carry on.
    let fine = client
        .publisher("acme/p/fine", PublisherOptions::default())
        .expect("publisher");
    fine.publish("ok").await.expect("publish");
    fine.close().await.expect("close");
    assert_eq!(server.broker.stats().totals.published, 1);
}

async fn a_dropped_publisher_sends_what_it_buffered(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let subscriber = server.client().await;
    let mut sub = subscriber
        .subscribe("acme/p/drop", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let client = server.client().await;
    let options = PublisherOptions::default()
        .linger(Duration::from_secs(1))
        .max_batch_events(1000);
    let publisher = client.publisher("acme/p/drop", options).expect("publisher");
    for i in 0..5 {
        publisher.publish(format!("m{i}")).await.expect("publish");
    }
    drop(publisher);
    drop(client);
    let got = events(&mut sub, 5).await;
    let payloads: Vec<&str> = got.iter().map(|(_, payload)| payload.as_str()).collect();
    assert_eq!(payloads, ["m0", "m1", "m2", "m3", "m4"]);
}

/// Under `block` nothing may be lost, including what a fire-and-forget client queued just
/// before it was dropped: the connection writes its queue before it closes.
async fn a_dropped_client_still_sends_its_fire_and_forget_publishes(transport: Transport) {
    let mut config = BrokerConfig::default();
    config.default_stream.policy = SlowPolicy::Block;
    config.default_stream.batch =
        BatchConfig::new(256, 1 << 20, Duration::ZERO).expect("batch config");
    config.default_stream.queue = QueueLimits::new(1 << 20, 1 << 30).expect("queue limits");
    let server = NativeServer::over(transport, config).await;
    let subscriber = server.client().await;
    let mut sub = subscriber
        .subscribe("acme/p/none", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let client = server.client().await;
    let (batches, per_batch) = (400u64, 64u64);
    let payload = vec![7u8; 256];
    for _ in 0..batches {
        client
            .publish_batch_with(
                "acme/p/none",
                (0..per_batch).map(|_| payload.clone()),
                AckMode::None,
            )
            .await
            .expect("queued");
    }
    drop(client);
    let total = batches * per_batch;
    let mut received = 0u64;
    while received < total {
        match next(&mut sub).await {
            SubscriptionEvent::Event(event) => {
                assert_eq!(event.sequence, received, "in order, nothing skipped");
                received += 1;
            }
            other => panic!("block loses nothing, got {other:?} after {received}"),
        }
    }
}

/// A client of the server at `addr` that does not reconnect, with a request timeout of
/// `timeout_ms`.
async fn quiet_client(addr: std::net::SocketAddr, timeout_ms: u64) -> Client {
    let options = ClientOptions::default()
        .reconnect(false)
        .request_timeout(Duration::from_millis(timeout_ms));
    Client::connect_with(&format!("quiver://{addr}"), options)
        .await
        .expect("connect")
}

/// A server that answers Hello and then never answers anything (and, unless `reads`,
/// reads nothing more either).
async fn silent_server() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    quiet_server(true).await
}

async fn quiet_server(reads: bool) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut buf = BytesMut::new();
        loop {
            if let Ok(Some(Envelope { request_id, frame })) = quiver_wire::decode_next(&mut buf) {
                assert!(matches!(frame, Frame::Hello(_)), "Hello first");
                let ok = HelloOk {
                    version: VERSION,
                    capabilities: Capabilities(0),
                    max_frame_len: quiver_wire::limits::MAX_FRAME_LEN as u32,
                    server_name: "silent".to_owned(),
                };
                let mut out = BytesMut::new();
                quiver_wire::encode(request_id, &ok, &mut out).expect("encode");
                socket.write_all(&out).await.expect("write");
                break;
            }
            assert!(socket.read_buf(&mut buf).await.expect("read") > 0);
        }
        let mut sink = vec![0u8; 64 << 10];
        while reads && socket.read(&mut sink).await.is_ok_and(|n| n > 0) {}
        std::future::pending::<()>().await;
    });
    (addr, task)
}

/// A queued batch's ack ends at the request timeout, awaited or waited for; a batch with
/// ack none, which has no ack, is refused.
#[tokio::test]
async fn a_queued_batch_ack_ends_at_the_request_timeout() {
    let (addr, server) = silent_server().await;
    let client = quiet_client(addr, 300).await;
    let pending = client
        .publish_batch_queued("acme/q/b", ["m"], quiver_client::AckMode::Accepted)
        .await
        .expect("queued");
    let result = tokio::time::timeout(WAIT, pending).await.expect("ended");
    assert!(
        matches!(result, Err(quiver_client::RequestError::Timeout { .. })),
        "{result:?}"
    );
    let refused = client
        .publish_batch_queued("acme/q/b", ["m"], quiver_client::AckMode::None)
        .await
        .expect_err("no ack to wait for");
    assert!(matches!(
        refused,
        quiver_client::RequestError::Unsupported(_)
    ));
    server.abort();
}

/// A server that stops reading fills the socket, then the client's write queue: requests
/// waiting for room there end at the request timeout too.
#[tokio::test]
async fn requests_that_cannot_be_queued_time_out() {
    let (addr, server) = quiet_server(false).await;
    let client = quiet_client(addr, 500).await;
    let value = vec![7u8; 16 << 10];
    let requests: Vec<_> = (0..2500)
        .map(|i| {
            let (client, value) = (client.clone(), value.clone());
            tokio::spawn(async move { client.cache_set(format!("k{i}"), value, None).await })
        })
        .collect();
    for request in requests {
        let result = tokio::time::timeout(WAIT, request)
            .await
            .expect("every request ends within the wait")
            .expect("task");
        assert!(
            matches!(result, Err(quiver_client::RequestError::Timeout { .. })),
            "{result:?}"
        );
    }
    server.abort();
}

#[tokio::test]
async fn publish_waits_when_every_slot_is_taken_and_the_buffer_is_full() {
    let (addr, server) = silent_server().await;
    let client = quiet_client(addr, 300).await;
    let options = PublisherOptions::default()
        .max_batch_events(1)
        .max_in_flight_batches(2);
    let publisher = client.publisher("acme/p/wait", options).expect("publisher");
    // Two batches in flight, one message buffered: none of these waits.
    for i in 0..3 {
        tokio::time::timeout(WAIT, publisher.publish(format!("m{i}")))
            .await
            .expect("buffered without waiting")
            .expect("publish");
    }
    let error = publisher.publish("m3").await.expect_err("no room");
    assert_eq!(
        error,
        PublisherError::Timeout {
            after: Duration::from_millis(300),
            in_flight: 2
        }
    );
    server.abort();
}

#[tokio::test]
async fn options_out_of_range_are_refused_by_name() {
    let server = NativeServer::over(Transport::Tcp, BrokerConfig::default()).await;
    let client = server.client().await;
    let error = client
        .publisher(
            "acme/p/x",
            PublisherOptions::default().max_in_flight_batches(0),
        )
        .expect_err("zero in flight");
    assert!(
        error.to_string().contains("max_in_flight_batches = 0"),
        "{error}"
    );
    let error = client
        .publisher(
            "acme/p/x",
            PublisherOptions::default().max_batch_events(5000),
        )
        .expect_err("over the wire's batch count");
    assert!(matches!(
        error,
        PublisherError::InvalidOption {
            option: "max_batch_events",
            value: 5000,
            ..
        }
    ));
    let error = client
        .publisher("acme/*/x", PublisherOptions::default())
        .expect_err("a pattern is not a stream");
    assert!(matches!(error, PublisherError::InvalidName(_)));
    let publisher = client
        .publisher("acme/p/x", PublisherOptions::default())
        .expect("publisher");
    let error = publisher
        .publish_with_headers(&[("", b"v")], "p")
        .await
        .expect_err("an empty header key");
    assert!(
        matches!(error, PublisherError::InvalidHeaders(_)),
        "{error}"
    );
    let error = publisher
        .publish(vec![0u8; quiver_wire::limits::MAX_MESSAGE_LEN + 1])
        .await
        .expect_err("too large");
    assert!(
        matches!(error, PublisherError::MessageTooLarge { .. }),
        "{error}"
    );
}

super::over_both!(
    order_is_kept_across_many_batches_in_flight,
    linger_sends_a_partial_batch,
    flush_returns_once_every_batch_is_acked,
    refused_batches_are_reported_with_their_message_count,
    a_dropped_publisher_sends_what_it_buffered,
    a_dropped_client_still_sends_its_fire_and_forget_publishes,
);
