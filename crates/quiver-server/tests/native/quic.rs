//! What only QUIC does: a subscription whose reader stalls does not hold up another
//! subscription on the same connection, and the client refuses a server whose certificate
//! does not match the pinned fingerprint (the CA file is tested against the binary, in
//! `process.rs`).

use std::sync::Arc;
use std::time::Duration;

use quiver_client::{Client, ClientOptions, ConnectError, SubscribeOptions};
use quiver_core::streams::{BatchConfig, BrokerConfig, QueueLimits, SlowPolicy};
use quiver_server::quic::ALPN;
use rustls::pki_types::CertificateDer;

use super::{NativeServer, Transport, payloads};

/// A raw quinn connection to `server`'s QUIC listener, trusting its certificate as a
/// root (the name `localhost` is in the generated certificate).
pub async fn raw_connect(server: &NativeServer) -> (quinn::Endpoint, quinn::Connection) {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(server.cert_der.clone()))
        .expect("the server certificate is a usable root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls).expect("QUIC TLS");
    let config = quinn::ClientConfig::new(Arc::new(crypto));
    let endpoint =
        quinn::Endpoint::client("127.0.0.1:0".parse().expect("address")).expect("endpoint");
    let connection = endpoint
        .connect_with(config, server.quic_addr, "localhost")
        .expect("connect")
        .await
        .expect("handshake");
    (endpoint, connection)
}

#[tokio::test]
async fn a_stalled_subscription_does_not_hold_up_another_on_the_same_connection() {
    let mut config = BrokerConfig::default();
    config.default_stream.policy = SlowPolicy::DropOld;
    config.default_stream.queue = QueueLimits::new(64, 1 << 20).expect("queue");
    config.default_stream.batch = BatchConfig::new(16, 1 << 20, Duration::ZERO).expect("batch");
    let server = NativeServer::over(Transport::Quic, config).await;
    let client = server.client().await;
    // Never read: its stream's flow-control window, its writer queue and its broker queue
    // fill, and drop_old takes over for it alone.
    let _stalled = client
        .subscribe("acme/slow/s", SubscribeOptions::default())
        .await
        .expect("stalled");
    let mut live = client
        .subscribe("acme/live/s", SubscribeOptions::default())
        .await
        .expect("live");
    let publisher = server.client().await;
    let payload = "x".repeat(4096);
    let total = 2000;
    for i in 0..total {
        publisher
            .publish_batch("acme/slow/s", vec![payload.clone(); 16])
            .await
            .expect("publish to the stalled stream");
        publisher
            .publish("acme/live/s", format!("m{i}"))
            .await
            .expect("publish to the live stream");
    }
    let expected: Vec<String> = (0..total).map(|i| format!("m{i}")).collect();
    assert_eq!(payloads(&mut live, total).await, expected);
    let dropped = server.broker.stats().totals.dropped_old;
    assert!(
        dropped > 0,
        "the stalled subscription lost messages to drop_old, not the live one"
    );
}

#[tokio::test]
async fn a_wrong_pinned_fingerprint_is_refused_and_the_right_one_accepted() {
    let server = NativeServer::over(Transport::Quic, BrokerConfig::default()).await;
    let wrong = ClientOptions::default()
        .reconnect(false)
        .pin_server_fingerprint("00".repeat(32));
    let error = Client::connect_with(&server.url(), wrong)
        .await
        .expect_err("a wrong fingerprint");
    assert!(matches!(error, ConnectError::Quic { .. }), "{error}");
    let missing = Client::connect_with(&server.url(), ClientOptions::default())
        .await
        .expect_err("no trust configured");
    assert!(matches!(missing, ConnectError::Tls { .. }), "{missing}");
    let right = Client::connect_with(&server.url(), server.options())
        .await
        .expect("the right fingerprint");
    right.ping().await.expect("ping");
    let in_url = format!("{}?fingerprint={}", server.url(), server.fingerprint);
    let client = Client::connect(&in_url)
        .await
        .expect("the fingerprint in the URL");
    client.ping().await.expect("ping");
    let wrong_in_url = format!("{}?fingerprint={}", server.url(), "11".repeat(32));
    let error = Client::connect_with(&wrong_in_url, ClientOptions::default().reconnect(false))
        .await
        .expect_err("a wrong fingerprint in the URL");
    assert!(matches!(error, ConnectError::Quic { .. }), "{error}");
}
