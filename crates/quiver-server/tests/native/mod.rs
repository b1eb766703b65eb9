//! The native transport through real sockets: the SDK against an in-process listener
//! (so each test picks its broker settings), raw bytes for bad frames, and the `quiver`
//! binary end to end.

mod cache;
mod frames;
mod policy;
mod process;
mod reconnect;
mod streams;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use quiver_cache::{CacheConfig, Keyspace};
use quiver_client::{Client, Subscription, SubscriptionEvent};
use quiver_core::streams::{Broker, BrokerConfig};
use quiver_server::config::{ListenerConfig, NetConfig};
use quiver_server::native::{NativeSettings, NativeShared, serve_native};
use quiver_server::serve::listener::Listener;
use quiver_server::serve::shutdown::Shutdown;

/// Longest any single wait in these tests may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// An in-process native listener on 127.0.0.1 port 0; stops when dropped.
pub struct NativeServer {
    pub addr: SocketAddr,
    pub broker: Broker,
    shutdown: Shutdown,
}

impl NativeServer {
    pub async fn start(config: BrokerConfig) -> NativeServer {
        Self::start_with(config, NativeSettings::default()).await
    }

    pub async fn start_with(config: BrokerConfig, settings: NativeSettings) -> NativeServer {
        let addr = "127.0.0.1:0".parse().expect("address");
        Self::start_at(addr, config, settings).await
    }

    /// Starts on `addr`, retrying while a previous server there still holds the port.
    pub async fn start_at(
        addr: SocketAddr,
        config: BrokerConfig,
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
        let broker = Broker::new(config);
        tokio::spawn(broker.clone().run_flusher());
        let shared = Arc::new(NativeShared {
            broker: broker.clone(),
            keyspace: Arc::new(Keyspace::new(CacheConfig::default()).expect("cache config")),
            settings,
        });
        let shutdown = Shutdown::new();
        tokio::spawn(serve_native(listener, shared, shutdown.clone()));
        NativeServer {
            addr,
            broker,
            shutdown,
        }
    }

    pub fn url(&self) -> String {
        format!("quiver://{}", self.addr)
    }

    pub async fn client(&self) -> Client {
        Client::connect(&self.url()).await.expect("connect")
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
