//! What only QUIC does: a subscription whose reader stalls does not hold up another
//! subscription on the same connection, and the client refuses a server whose certificate
//! does not match the pinned fingerprint (the CA file is tested against the binary, in
//! `process.rs`).

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use quiver_client::{Client, ClientOptions, ConnectError, SubscribeOptions};
use quiver_core::streams::{BatchConfig, BrokerConfig, QueueLimits, SlowPolicy};
use quiver_server::quic::ALPN;
use quiver_wire::limits::{QUIC_MAX_UDP_PAYLOAD_BYTES, QUIC_UDP_RECEIVE_BUFFER_BYTES};
use quiver_wire::{
    AckMode, Capabilities, Frame, Headers, Hello, Message as WireMessage, Ping, PublishBatch,
    StreamName,
};
use rustls::pki_types::CertificateDer;
use tokio::io::AsyncReadExt;

use super::{NativeServer, Transport, WAIT, payloads};

/// A raw quinn connection to `server`'s QUIC listener, trusting its certificate as a
/// root (the name `localhost` is in the generated certificate).
pub async fn raw_connect(server: &NativeServer) -> (quinn::Endpoint, quinn::Connection) {
    raw_connect_with(
        server,
        quinn::EndpointConfig::default(),
        quinn::TransportConfig::default(),
    )
    .await
}

/// [`raw_connect`] with the client's endpoint and transport settings.
async fn raw_connect_with(
    server: &NativeServer,
    endpoint_config: quinn::EndpointConfig,
    transport: quinn::TransportConfig,
) -> (quinn::Endpoint, quinn::Connection) {
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
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport));
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP port");
    let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(QUIC_UDP_RECEIVE_BUFFER_BYTES);
    let runtime = quinn::default_runtime().expect("tokio");
    let endpoint = quinn::Endpoint::new(endpoint_config, None, socket, runtime).expect("endpoint");
    let connection = endpoint
        .connect_with(config, server.quic_addr, "localhost")
        .expect("connect")
        .await
        .expect("handshake");
    (endpoint, connection)
}

/// On a path that carries them (loopback), QUIC packets grow past Ethernet's 1452 bytes to
/// the datagram ceiling the server accepts, and the kernel takes the segmentation-offload
/// batches of such packets: 8 MiB of publishes arrive and not one packet is lost.
#[tokio::test]
async fn packets_grow_to_the_datagram_ceiling_where_the_path_allows_and_none_is_lost() {
    let server = NativeServer::over(Transport::Quic, BrokerConfig::default()).await;
    let mut endpoint_config = quinn::EndpointConfig::default();
    endpoint_config
        .max_udp_payload_size(QUIC_MAX_UDP_PAYLOAD_BYTES)
        .expect("a valid size");
    let mut mtu = quinn::MtuDiscoveryConfig::default();
    mtu.upper_bound(QUIC_MAX_UDP_PAYLOAD_BYTES);
    let mut transport = quinn::TransportConfig::default();
    transport.mtu_discovery_config(Some(mtu));
    let (_endpoint, connection) = raw_connect_with(&server, endpoint_config, transport).await;
    let (mut send, mut recv) = connection.open_bi().await.expect("control stream");
    let mut out = BytesMut::new();
    let hello = Hello {
        min_version: 1,
        max_version: 1,
        capabilities: Capabilities::ALL_V1,
        client_name: "raw".to_owned(),
        auth_token: Bytes::new(),
    };
    quiver_wire::encode(1, &hello, &mut out).expect("hello");
    let batch = PublishBatch {
        stream: StreamName::new("acme/bulk/s").expect("name"),
        ack: AckMode::None,
        messages: vec![
            WireMessage {
                headers: Headers::new(),
                payload: Bytes::from(vec![7u8; 4096]),
            };
            64
        ],
    };
    for _ in 0..32 {
        quiver_wire::encode(0, &batch, &mut out).expect("batch");
    }
    quiver_wire::encode(2, &Ping, &mut out).expect("ping");
    send.write_all(&out).await.expect("send");
    // HelloOk, then the Pong that follows every batch.
    let mut received = BytesMut::new();
    let mut replies = Vec::new();
    while replies.len() < 2 {
        if let Some(envelope) = quiver_wire::decode_next(&mut received).expect("valid frames") {
            replies.push(envelope.frame);
            continue;
        }
        let read = tokio::time::timeout(WAIT, recv.read_buf(&mut received))
            .await
            .expect("the server answers");
        assert!(read.expect("read") > 0, "the server closed the stream");
    }
    assert!(matches!(replies[0], Frame::HelloOk(_)), "{replies:?}");
    assert!(matches!(replies[1], Frame::Pong(_)), "{replies:?}");
    let path = connection.stats().path;
    assert!(
        path.current_mtu > 1452 && path.current_mtu <= QUIC_MAX_UDP_PAYLOAD_BYTES,
        "path MTU {} after discovery",
        path.current_mtu
    );
    // A kernel that caps receive buffers lower (net.core.rmem_max) drops bursts; the
    // server then loses datagrams the test cannot blame on the datagram size.
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP port");
    let sized = socket2::SockRef::from(&socket)
        .set_recv_buffer_size(QUIC_UDP_RECEIVE_BUFFER_BYTES)
        .and_then(|()| socket2::SockRef::from(&socket).recv_buffer_size());
    if sized.is_ok_and(|bytes| bytes >= QUIC_UDP_RECEIVE_BUFFER_BYTES) {
        assert_eq!(path.lost_packets, 0, "{path:?}");
    }
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
