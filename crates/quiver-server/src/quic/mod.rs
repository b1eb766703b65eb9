//! The native protocol over QUIC (quinn, rustls with the `ring` provider, TLS 1.3, ALPN
//! [`ALPN`]). The frames are those of `docs/wire-protocol.md`; the session logic is the
//! TCP transport's (`crate::native::connection::run`), run over the connection's one
//! bidirectional control stream. What differs is where deliveries go: each subscription's
//! EventBatch, Lag and SubscriptionEnded frames are written on their own unidirectional
//! stream (opened by the server), so a subscription whose reader stalls fills only its
//! own stream's flow-control window, and the others go on.
//!
//! It never parses frames itself and never touches the broker except through the shared
//! session.

mod connection;
pub mod identity;

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::QuicServerConfig;
use quiver_wire::limits::{QUIC_MAX_UDP_PAYLOAD_BYTES, QUIC_UDP_RECEIVE_BUFFER_BYTES};
use tokio::sync::Semaphore;

use crate::config::{ListenerConfig, QuicConfig};
use crate::native::NativeShared;
use crate::serve::listener::ListenerStats;
use crate::serve::shutdown::Shutdown;
pub use identity::Identity;

/// The ALPN protocol both sides must offer: the native protocol, version 1.
pub const ALPN: &[u8] = b"quiver/1";

/// A connection that sent nothing (not even a keep-alive) for this long is closed.
/// Clients keep idle connections alive well within it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the QUIC listener could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QuicError {
    #[error("cannot generate the self-signed QUIC certificate: {0}")]
    Generate(String),
    #[error("cannot read PEM file {path}: {reason} ({origin})")]
    Pem {
        path: PathBuf,
        reason: String,
        origin: &'static str,
    },
    #[error("QUIC identity {cert} / {key}: {reason}")]
    HalfIdentity {
        cert: PathBuf,
        key: PathBuf,
        reason: &'static str,
    },
    #[error("cannot write {path}: {error}")]
    Write { path: PathBuf, error: io::Error },
    #[error("the QUIC TLS setup was refused: {reason} ({origin})")]
    Tls {
        reason: String,
        origin: &'static str,
    },
    #[error(
        "cannot bind the quic listener on UDP {addr}: {error} (set quic.addr to a free address)"
    )]
    Bind { addr: SocketAddr, error: io::Error },
}

/// The TLS identity `config` asks for: the configured files, or the self-signed one kept
/// in `data_dir`.
pub fn identity(config: &QuicConfig, data_dir: &Path) -> Result<Identity, QuicError> {
    match &config.identity {
        None => Identity::load_or_generate(data_dir),
        Some(files) if files.cert.as_os_str().is_empty() || files.key.as_os_str().is_empty() => {
            Err(QuicError::HalfIdentity {
                cert: files.cert.clone(),
                key: files.key.clone(),
                reason: "set both quic.cert and quic.key, or neither for a self-signed certificate",
            })
        }
        Some(files) => Identity::load(&files.cert, &files.key),
    }
}

/// The `ring` provider with AES-128-GCM as the first TLS 1.3 cipher suite: every packet
/// is sealed with the negotiated cipher, and AES-128 takes 10 rounds a block where
/// AES-256, rustls's first choice, takes 14. TLS 1.3 requires every implementation to
/// offer AES-128-GCM, so any client gets it.
fn crypto_provider() -> rustls::crypto::CryptoProvider {
    let mut provider = rustls::crypto::ring::default_provider();
    provider
        .cipher_suites
        .sort_by_key(|suite| suite.suite() != rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    provider
}

/// Path MTU discovery up to [`QUIC_MAX_UDP_PAYLOAD_BYTES`].
fn mtu_discovery() -> quinn::MtuDiscoveryConfig {
    let mut mtu = quinn::MtuDiscoveryConfig::default();
    mtu.upper_bound(QUIC_MAX_UDP_PAYLOAD_BYTES);
    mtu
}

/// Accepts datagrams of up to [`QUIC_MAX_UDP_PAYLOAD_BYTES`] (the transport parameter that
/// lets a client's discovery climb as high as the server's).
fn endpoint_config() -> quinn::EndpointConfig {
    let mut config = quinn::EndpointConfig::default();
    config
        .max_udp_payload_size(QUIC_MAX_UDP_PAYLOAD_BYTES)
        .expect("the datagram ceiling is within QUIC's 1200..=65527");
    config
}

/// Asks for a [`QUIC_UDP_RECEIVE_BUFFER_BYTES`] receive buffer, and says so when the kernel
/// grants less (it caps the request at `net.core.rmem_max`).
fn grow_receive_buffer(socket: &std::net::UdpSocket) {
    let socket = socket2::SockRef::from(socket);
    let granted = socket
        .set_recv_buffer_size(QUIC_UDP_RECEIVE_BUFFER_BYTES)
        .and_then(|()| socket.recv_buffer_size());
    match granted {
        Ok(bytes) if bytes >= QUIC_UDP_RECEIVE_BUFFER_BYTES => {}
        Ok(bytes) => tracing::warn!(
            granted_bytes = bytes,
            wanted_bytes = QUIC_UDP_RECEIVE_BUFFER_BYTES,
            "the QUIC socket's receive buffer is smaller than wanted: bursts of datagrams \
             beyond it are dropped and slow senders down; raise net.core.rmem_max \
             (sysctl -w net.core.rmem_max=8388608)"
        ),
        Err(error) => tracing::warn!(%error, "cannot size the QUIC socket's receive buffer"),
    }
}

/// A bound QUIC endpoint that has not started accepting yet.
#[derive(Debug)]
pub struct QuicListener {
    endpoint: quinn::Endpoint,
    slots: Arc<Semaphore>,
    stats: Arc<ListenerStats>,
    fingerprint: String,
}

impl QuicListener {
    /// Binds UDP `config.addr` with `identity`.
    pub fn bind(config: &ListenerConfig, identity: Identity) -> Result<QuicListener, QuicError> {
        let fingerprint = identity.fingerprint();
        let origin = identity.origin;
        let tls_error = |error: &dyn std::fmt::Display| QuicError::Tls {
            reason: error.to_string(),
            origin,
        };
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(crypto_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|error| tls_error(&error))?
            .with_no_client_auth()
            .with_single_cert(identity.chain, identity.key)
            .map_err(|error| tls_error(&error))?;
        tls.alpn_protocols = vec![ALPN.to_vec()];
        // The server's order of cipher suites (AES-128-GCM first) decides, whatever a
        // client prefers.
        tls.ignore_client_order = true;
        let crypto = QuicServerConfig::try_from(tls).map_err(|error| tls_error(&error))?;
        let mut transport = quinn::TransportConfig::default();
        // One control stream per connection; the client opens no unidirectional stream.
        transport.max_concurrent_bidi_streams(1u32.into());
        transport.max_concurrent_uni_streams(0u32.into());
        transport.mtu_discovery_config(Some(mtu_discovery()));
        // Unreliable datagrams are not part of the protocol: none is buffered.
        transport.datagram_receive_buffer_size(None);
        transport.max_idle_timeout(Some(
            IDLE_TIMEOUT
                .try_into()
                .expect("30 s is within QUIC's idle timeout range"),
        ));
        let mut server = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        server.transport_config(Arc::new(transport));
        let bind_error = |error| QuicError::Bind {
            addr: config.addr,
            error,
        };
        let socket = std::net::UdpSocket::bind(config.addr).map_err(bind_error)?;
        grow_receive_buffer(&socket);
        let runtime = quinn::default_runtime()
            .ok_or_else(|| bind_error(io::Error::other("no async runtime")))?;
        let endpoint = quinn::Endpoint::new(endpoint_config(), Some(server), socket, runtime)
            .map_err(bind_error)?;
        let addr = endpoint.local_addr().map_err(|error| QuicError::Bind {
            addr: config.addr,
            error,
        })?;
        let max_connections = config.max_connections.get();
        Ok(QuicListener {
            endpoint,
            slots: Arc::new(Semaphore::new(max_connections as usize)),
            stats: ListenerStats::new("quic", addr, max_connections),
            fingerprint,
        })
    }

    /// The listener's counters.
    pub fn stats(&self) -> Arc<ListenerStats> {
        Arc::clone(&self.stats)
    }

    /// SHA-256 of the server certificate (lowercase hex), what clients pin.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

/// Serves QUIC connections until `shutdown`; connections then say Goodbye and close.
pub async fn serve_quic(listener: QuicListener, shared: Arc<NativeShared>, shutdown: Shutdown) {
    let QuicListener {
        endpoint,
        slots,
        stats,
        ..
    } = listener;
    loop {
        let incoming = tokio::select! {
            incoming = endpoint.accept() => incoming,
            () = shutdown.wait() => break,
        };
        let Some(incoming) = incoming else { break };
        // Once half the slots are taken, a peer proves its address (a Retry round trip)
        // before it gets one: spoofed Initial packets cannot hold the rest.
        if !incoming.remote_address_validated()
            && incoming.may_retry()
            && stats.open() >= u64::from(stats.max_connections) / 2
        {
            let _ = incoming.retry();
            continue;
        }
        match stats.admit(&slots) {
            Some(guard) => {
                let serve =
                    connection::serve(incoming, guard, Arc::clone(&shared), shutdown.clone());
                tokio::spawn(serve);
            }
            None => {
                tracing::warn!(
                    listener = stats.name,
                    peer = %incoming.remote_address(),
                    limit = stats.max_connections,
                    "QUIC connection refused: connection limit reached (quic.max_connections)"
                );
                incoming.refuse();
            }
        }
    }
    // New connection attempts are refused from now on; open connections finish their
    // sessions (they saw `shutdown` too) and `serve::run` drains them.
    endpoint.set_server_config(None);
}
