//! The native transport through real sockets: the SDK against an in-process listener
//! (so each test picks its broker settings), raw bytes for bad frames, and the `quiver`
//! binary end to end. The contract tests run over TCP and over QUIC ([`over_both!`]).

mod cache;
mod durable;
mod frames;
mod policy;
mod process;
mod publisher;
mod quic;
mod reconnect;
mod streams;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use quiver_client::{Client, ClientOptions, Subscription, SubscriptionEvent};
use quiver_core::cache::{Cache, CacheConfig};
use quiver_core::streams::{Broker, BrokerConfig};
use quiver_server::config::{ListenerConfig, NetConfig};
use quiver_server::native::{NativeSettings, NativeShared, serve_native};
use quiver_server::quic::{Identity, QuicListener, serve_quic};
use quiver_server::serve::listener::Listener;
use quiver_server::serve::shutdown::Shutdown;
use tokio::io::{AsyncRead, AsyncWrite};

/// Longest any single wait in these tests may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// Which transport a contract test runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Quic,
}

/// Runs each named contract test (an `async fn(Transport)`) as two tests, one over TCP
/// and one over QUIC.
macro_rules! over_both {
    ($($name:ident),+ $(,)?) => {
        mod tcp {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(crate::native::Transport::Tcp).await;
                }
            )+
        }
        mod quic {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(crate::native::Transport::Quic).await;
                }
            )+
        }
    };
}
pub(crate) use over_both;

/// In-process native listeners (TCP and QUIC) on 127.0.0.1 port 0 sharing one broker;
/// stop when dropped. [`NativeServer::client`] connects over `transport`.
pub struct NativeServer {
    /// The TCP listener.
    pub addr: SocketAddr,
    /// The QUIC listener (UDP).
    pub quic_addr: SocketAddr,
    /// SHA-256 of the QUIC certificate.
    pub fingerprint: String,
    /// The QUIC certificate (DER), for raw QUIC clients.
    pub cert_der: Vec<u8>,
    identity: Identity,
    pub transport: Transport,
    pub broker: Broker,
    shutdown: Shutdown,
}

/// A raw connection to the server over its transport: bytes in, bytes out.
pub struct Raw {
    pub reader: Box<dyn AsyncRead + Unpin + Send>,
    pub writer: Box<dyn AsyncWrite + Unpin + Send>,
    /// Keeps a QUIC connection open while the test uses it.
    _quic: Option<(quinn::Endpoint, quinn::Connection)>,
}

impl NativeServer {
    pub async fn over(transport: Transport, config: BrokerConfig) -> NativeServer {
        Self::over_with(transport, config, NativeSettings::default()).await
    }

    pub async fn over_with(
        transport: Transport,
        config: BrokerConfig,
        settings: NativeSettings,
    ) -> NativeServer {
        let any = "127.0.0.1:0".parse().expect("address");
        let identity = Identity::generate().expect("self-signed certificate");
        Self::start_at(transport, (any, any), identity, config, settings).await
    }

    /// Where this server listens (TCP, QUIC) and its QUIC identity, to start another
    /// server in its place.
    pub fn place(&self) -> ((SocketAddr, SocketAddr), Identity) {
        ((self.addr, self.quic_addr), self.identity.clone())
    }

    /// Starts on `addrs` (TCP, QUIC) with `identity`, retrying while a previous server
    /// there still holds a port.
    pub async fn start_at(
        transport: Transport,
        addrs: (SocketAddr, SocketAddr),
        identity: Identity,
        config: BrokerConfig,
        settings: NativeSettings,
    ) -> NativeServer {
        Self::start_with(transport, addrs, identity, Broker::new(config), settings).await
    }

    /// A server whose broker keeps durable streams in `dir`.
    pub async fn durable(transport: Transport, dir: &std::path::Path) -> NativeServer {
        let any = "127.0.0.1:0".parse().expect("address");
        let identity = Identity::generate().expect("self-signed certificate");
        Self::durable_at(transport, (any, any), identity, dir).await
    }

    /// [`Self::durable`] on given addresses and identity (to restart in place).
    pub async fn durable_at(
        transport: Transport,
        addrs: (SocketAddr, SocketAddr),
        identity: Identity,
        dir: &std::path::Path,
    ) -> NativeServer {
        let storage = quiver_core::streams::durable::StorageConfig::new(dir);
        let (broker, _) = Broker::open(BrokerConfig::default(), storage).expect("open storage");
        Self::start_with(
            transport,
            addrs,
            identity,
            broker,
            NativeSettings::default(),
        )
        .await
    }

    /// Stops serving and closes the broker's durable streams (as a server's shutdown
    /// does), so that another server may open the same data directory.
    pub fn stop(&self) {
        self.shutdown.trigger();
        self.broker.shutdown();
        self.broker.close();
    }

    async fn start_with(
        transport: Transport,
        (addr, quic_addr): (SocketAddr, SocketAddr),
        identity: Identity,
        broker: Broker,
        settings: NativeSettings,
    ) -> NativeServer {
        let listener_config = ListenerConfig {
            addr,
            max_connections: NonZeroU32::new(64).expect("non-zero"),
        };
        let net = NetConfig {
            backlog: 128,
            nodelay: true,
            send_buffer_bytes: None,
            recv_buffer_bytes: None,
            keepalive: None,
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        let listener = loop {
            match Listener::bind("native", &listener_config, &net) {
                Ok(listener) => break listener,
                Err(error) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!(%error, "port still taken; retrying");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(error) => panic!("bind {addr}: {error}"),
            }
        };
        let addr = listener.stats().addr;
        tokio::spawn(broker.clone().run_flusher());
        let shared = Arc::new(NativeShared {
            broker: broker.clone(),
            cache: Arc::new(Cache::new(CacheConfig::default()).expect("cache config")),
            settings,
        });
        let shutdown = Shutdown::new();
        let cert_der = identity.leaf().to_vec();
        let kept = identity;
        let quic_config = ListenerConfig {
            addr: quic_addr,
            ..listener_config
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        let quic = loop {
            match QuicListener::bind(&quic_config, kept.clone()) {
                Ok(listener) => break listener,
                Err(error) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!(%error, "UDP port still taken; retrying");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(error) => panic!("bind QUIC {quic_addr}: {error}"),
            }
        };
        let quic_addr = quic.stats().addr;
        let fingerprint = quic.fingerprint().to_owned();
        tokio::spawn(serve_quic(quic, Arc::clone(&shared), shutdown.clone()));
        tokio::spawn(serve_native(listener, shared, shutdown.clone()));
        NativeServer {
            addr,
            quic_addr,
            fingerprint,
            cert_der,
            identity: kept,
            transport,
            broker,
            shutdown,
        }
    }

    pub fn url(&self) -> String {
        match self.transport {
            Transport::Tcp => format!("quiver://{}", self.addr),
            Transport::Quic => format!("quiver+quic://{}", self.quic_addr),
        }
    }

    /// Default options for this server's transport (QUIC: the certificate pinned).
    pub fn options(&self) -> ClientOptions {
        ClientOptions::default().pin_server_fingerprint(self.fingerprint.clone())
    }

    pub async fn client(&self) -> Client {
        Client::connect_with(&self.url(), self.options())
            .await
            .expect("connect")
    }

    /// A raw byte connection over this server's transport (QUIC: its control stream).
    pub async fn raw(&self) -> Raw {
        match self.transport {
            Transport::Tcp => {
                let stream = tokio::net::TcpStream::connect(self.addr)
                    .await
                    .expect("connect");
                let (reader, writer) = stream.into_split();
                Raw {
                    reader: Box::new(reader),
                    writer: Box::new(writer),
                    _quic: None,
                }
            }
            Transport::Quic => {
                let (endpoint, connection) = quic::raw_connect(self).await;
                let (send, recv) = connection.open_bi().await.expect("open control stream");
                Raw {
                    reader: Box::new(recv),
                    writer: Box::new(send),
                    _quic: Some((endpoint, connection)),
                }
            }
        }
    }
}

impl Drop for NativeServer {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

/// The next item of `subscription`, failing the test after [`WAIT`].
pub async fn next(subscription: &mut Subscription) -> SubscriptionEvent {
    tokio::time::timeout(WAIT, subscription.next())
        .await
        .expect("a delivery within the wait")
        .expect("the subscription is live")
}

/// Waits (at most [`WAIT`]) until `client` has noticed its server went away.
pub async fn wait_closed(client: &quiver_client::Client) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !client.is_closed() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the client notices the server left"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The payloads of the next `count` events, failing on anything else.
pub async fn payloads(subscription: &mut Subscription, count: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        match next(subscription).await {
            SubscriptionEvent::Event(event) => {
                out.push(String::from_utf8(event.payload.to_vec()).expect("utf-8"));
            }
            other => panic!("expected an event, got {other:?}"),
        }
    }
    out
}
