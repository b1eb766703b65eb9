//! The `quiver` binary end to end: its native listeners (TCP and QUIC) serve the SDK,
//! share the cache with the RESP listener, and count streams on /metrics.

use quiver_client::{Client, ClientOptions, ConnectError, SubscribeOptions};

use super::Transport;
use crate::support::{Server, Started, http_get, logged_fingerprint, redis_connection};

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

#[tokio::test]
async fn the_binary_serves_quic_with_a_self_signed_certificate_it_keeps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let fingerprint = logged_fingerprint(&server);
    let url = format!("quiver+quic://{}", server.quic);
    let pinned = ClientOptions::default().pin_server_fingerprint(fingerprint.clone());
    let client = Client::connect_with(&url, pinned).await.expect("pinned");
    let mut sub = client
        .subscribe("acme/q/s", SubscribeOptions::default())
        .await
        .expect("subscribe");
    client
        .publish("acme/q/s", "over quic")
        .await
        .expect("publish");
    assert_eq!(super::payloads(&mut sub, 1).await, ["over quic"]);

    // The generated certificate is also a CA file for its own names.
    let ca_file = dir.path().join("quic-cert.pem");
    let trusted = ClientOptions::default().trust_ca_file(&ca_file);
    let client = Client::connect_with(&url, trusted).await.expect("CA file");
    client.ping().await.expect("ping");
    let other = tempfile::tempdir().expect("tempdir");
    quiver_server::quic::Identity::load_or_generate(other.path()).expect("another identity");
    let untrusted = ClientOptions::default()
        .reconnect(false)
        .trust_ca_file(other.path().join("quic-cert.pem"));
    let error = Client::connect_with(&url, untrusted)
        .await
        .expect_err("a CA file that does not vouch for the server");
    assert!(matches!(error, ConnectError::Quic { .. }), "{error}");

    // A restart on the same data directory keeps the certificate, so pins stay valid.
    drop(server);
    let server = Server::start(dir.path(), &[]);
    assert_eq!(logged_fingerprint(&server), fingerprint);
}

#[tokio::test]
async fn configured_certificate_files_are_served_and_half_a_pair_is_refused() {
    let keys = tempfile::tempdir().expect("tempdir");
    let identity = quiver_server::quic::Identity::load_or_generate(keys.path()).expect("pair");
    let cert = keys.path().join("quic-cert.pem");
    let key = keys.path().join("quic-key.pem");
    let dir = tempfile::tempdir().expect("tempdir");
    let cert_arg = cert.to_str().expect("UTF-8 path");
    let key_arg = key.to_str().expect("UTF-8 path");
    let server = Server::start(
        dir.path(),
        &["--quic-cert", cert_arg, "--quic-key", key_arg],
    );
    assert_eq!(logged_fingerprint(&server), identity.fingerprint());
    assert!(
        !dir.path().join("quic-cert.pem").exists(),
        "nothing is generated when files are configured"
    );
    let options = ClientOptions::default().trust_ca_file(&cert);
    let client = Client::connect_with(&format!("quiver+quic://{}", server.quic), options)
        .await
        .expect("the configured certificate");
    client.ping().await.expect("ping");
    drop(server);

    let other = tempfile::tempdir().expect("tempdir");
    match Server::try_start(other.path(), &["--quic-cert", cert_arg]) {
        Started::Running(_) => panic!("a certificate without its key must stop start-up"),
        Started::Exited { status, stderr } => {
            assert!(!status.success());
            assert!(stderr.contains("quic.key"), "{stderr}");
        }
    }
}

#[tokio::test]
async fn quic_connections_over_the_limit_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--quic-max-connections", "1"]);
    let url = format!("quiver+quic://{}", server.quic);
    let options = ClientOptions::default()
        .reconnect(false)
        .pin_server_fingerprint(logged_fingerprint(&server));
    let first = Client::connect_with(&url, options.clone())
        .await
        .expect("the first connection");
    let refused = Client::connect_with(&url, options)
        .await
        .expect_err("over quic.max_connections");
    assert!(matches!(refused, ConnectError::Quic { .. }), "{refused}");
    first
        .ping()
        .await
        .expect("the first connection is unaffected");
}

async fn sigterm_ends_native_subscriptions_and_the_server_exits_zero(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), &[]);
    let options = ClientOptions::default()
        .reconnect(false)
        .pin_server_fingerprint(logged_fingerprint(&server));
    let url = match transport {
        Transport::Tcp => format!("quiver://{}", server.native),
        Transport::Quic => format!("quiver+quic://{}", server.quic),
    };
    let client = Client::connect_with(&url, options).await.expect("connect");
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

super::over_both!(sigterm_ends_native_subscriptions_and_the_server_exits_zero);
