//! The `quiver` binary end to end: its native listener serves the SDK, shares the cache
//! with the RESP listener, and counts streams on /metrics.

use quiver_client::{Client, SubscribeOptions};

use crate::support::{Server, http_get, redis_connection};

#[tokio::test]
async fn the_binary_serves_streams_and_the_shared_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let client = Client::connect(&format!("quiver://{}", server.native))
        .await
        .expect("connect");
    let mut sub = client
        .subscribe("acme/p/s", SubscribeOptions::default())
        .await
        .expect("subscribe");
    client.publish("acme/p/s", "hello").await.expect("publish");
    assert_eq!(super::payloads(&mut sub, 1).await, ["hello"]);

    client
        .cache_set("shared", "by both", None)
        .await
        .expect("set");
    let mut redis = redis_connection(&server);
    let value: String = redis::cmd("GET")
        .arg("shared")
        .query(&mut redis)
        .expect("GET");
    assert_eq!(value, "by both");

    let (status, body) = http_get(server.http, "/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("quiver_streams_published_total 1"), "{body}");
    assert!(body.contains("quiver_streams_delivered_total 1"), "{body}");
    assert!(body.contains("listener=\"native\""), "{body}");
}

#[test]
fn quic_urls_are_refused_with_a_typed_error() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let error = runtime
        .block_on(Client::connect("quiver+quic://127.0.0.1:7071"))
        .expect_err("no QUIC yet");
    assert!(matches!(
        error,
        quiver_client::ConnectError::QuicNotSupported { .. }
    ));
}

#[tokio::test]
async fn sigterm_ends_native_subscriptions_and_the_server_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), &[]);
    let options = quiver_client::ClientOptions::default().reconnect(false);
    let client = Client::connect_with(&format!("quiver://{}", server.native), options)
        .await
        .expect("connect");
    let mut sub = client
        .subscribe("acme/p/s", SubscribeOptions::default())
        .await
        .expect("subscribe");
    server.signal("TERM");
    match super::next(&mut sub).await {
        quiver_client::SubscriptionEvent::Ended { code, message } => {
            assert!(
                code.is_none_or(|code| code == quiver_client::ErrorCode::SHUTTING_DOWN),
                "{code:?}: {message}"
            );
        }
        other => panic!("expected the end, got {other:?}"),
    }
    let status = server
        .wait_exit(std::time::Duration::from_secs(10))
        .expect("the server exits after draining");
    assert!(status.success(), "{status}");
}
