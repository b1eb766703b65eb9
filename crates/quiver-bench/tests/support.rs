//! An in-process Quiver server (native TCP and QUIC listeners sharing one broker and one
//! keyspace) and a way to run the `quiver-bench` binary against it.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::process::Command;
use std::sync::Arc;

use quiver_core::cache::{Cache, CacheConfig};
use quiver_core::streams::{Broker, BrokerConfig};
use quiver_server::config::{ListenerConfig, NetConfig};
use quiver_server::native::{NativeSettings, NativeShared, serve_native};
use quiver_server::quic::{Identity, QuicListener, serve_quic};
use quiver_server::serve::listener::Listener;
use quiver_server::serve::shutdown::Shutdown;

/// Native listeners on 127.0.0.1 port 0; they stop when this is dropped.
pub struct Server {
    pub tcp: SocketAddr,
    pub quic: SocketAddr,
    /// SHA-256 of the QUIC certificate, for `?fingerprint=`.
    pub fingerprint: String,
    shutdown: Shutdown,
}

impl Server {
    /// Starts the listeners on the current tokio runtime.
    pub fn start() -> Server {
        let listener_config = ListenerConfig {
            addr: "127.0.0.1:0".parse().expect("address"),
            max_connections: NonZeroU32::new(64).expect("non-zero"),
        };
        let net = NetConfig {
            backlog: 128,
            nodelay: true,
            send_buffer_bytes: None,
            recv_buffer_bytes: None,
            keepalive: None,
        };
        let listener = Listener::bind("native", &listener_config, &net).expect("bind TCP");
        let quic = QuicListener::bind(
            &listener_config,
            Identity::generate().expect("self-signed certificate"),
        )
        .expect("bind QUIC");
        let broker = Broker::new(BrokerConfig::default());
        tokio::spawn(broker.clone().run_flusher());
        let shared = Arc::new(NativeShared {
            broker,
            cache: Arc::new(Cache::new(CacheConfig::default()).expect("cache config")),
            settings: NativeSettings::default(),
        });
        let shutdown = Shutdown::new();
        let server = Server {
            tcp: listener.stats().addr,
            quic: quic.stats().addr,
            fingerprint: quic.fingerprint().to_owned(),
            shutdown: shutdown.clone(),
        };
        tokio::spawn(serve_quic(quic, Arc::clone(&shared), shutdown.clone()));
        tokio::spawn(serve_native(listener, shared, shutdown));
        server
    }

    pub fn tcp_url(&self) -> String {
        format!("quiver://{}", self.tcp)
    }

    pub fn quic_url(&self) -> String {
        format!(
            "quiver+quic://{}?fingerprint={}",
            self.quic, self.fingerprint
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

/// Runs `quiver-bench` with `args` off the runtime's threads; returns (success, stdout,
/// stderr).
pub async fn bench(args: Vec<String>) -> (bool, String, String) {
    tokio::task::spawn_blocking(move || {
        let output = Command::new(env!("CARGO_BIN_EXE_quiver-bench"))
            .args(&args)
            .output()
            .expect("run quiver-bench");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .expect("the bench runner thread")
}

/// Runs `quiver-bench` with `args` plus `--json`, expecting success; its JSON object.
pub async fn bench_json(args: &[&str]) -> serde_json::Value {
    let mut args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
    args.push("--json".to_owned());
    let (ok, stdout, stderr) = bench(args).await;
    assert!(ok, "quiver-bench failed: {stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}
