//! `quiver+quic://`: the QUIC side of a connection. The client opens one bidirectional
//! control stream (requests, replies; the same frames as TCP) and accepts the
//! unidirectional streams the server opens, one per subscription, each read by its own
//! task. A stream's deliveries may overtake the Subscribed reply on the control stream,
//! so its reader waits for the subscription's route to be registered before it routes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use quinn::crypto::rustls::QuicClientConfig;
use quiver_wire::limits::{QUIC_MAX_UDP_PAYLOAD_BYTES, QUIC_UDP_RECEIVE_BUFFER_BYTES};
use tokio::io::AsyncReadExt;

use crate::connection::{self, Connection};
use crate::error::ConnectError;
use crate::tls::{self, ServerTrust};
use crate::url::Target;

/// Delivery streams the server may have open at once: its per-connection subscription
/// limit (`MAX_SUBSCRIPTIONS_PER_CONNECTION`), so the two agree.
const MAX_DELIVERY_STREAMS: u32 = 1024;

/// Keep-alive of an idle connection, well within the server's 30 s idle timeout, so a
/// quiet subscription is not closed for idleness.
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// Room a delivery stream's reader asks for before a read (more when the frame being
/// read is larger).
const READ_BUFFER_BYTES: usize = 16 << 10;

/// Application close code: the client is done.
const CLOSE_CODE: u32 = 0;

/// The QUIC endpoint and connection behind a [`Connection`].
#[derive(Debug)]
pub struct QuicParts {
    /// Kept so the endpoint lives as long as the connection.
    endpoint: quinn::Endpoint,
    pub connection: quinn::Connection,
}

impl QuicParts {
    /// Closes the connection (the server ends the session).
    pub fn close(&self) {
        self.connection.close(CLOSE_CODE.into(), b"closed");
        self.endpoint.close(CLOSE_CODE.into(), b"closed");
    }
}

/// Connects to `target` and opens the control stream.
pub async fn connect(
    target: &Target,
    trust: Option<&ServerTrust>,
) -> Result<(QuicParts, quinn::SendStream, quinn::RecvStream), ConnectError> {
    let failed = |reason: String| ConnectError::Quic {
        addr: target.addr.clone(),
        reason,
    };
    let io = |source| ConnectError::Io {
        addr: target.addr.clone(),
        source,
    };
    let addr = tokio::net::lookup_host(&target.addr)
        .await
        .map_err(io)?
        .next()
        .ok_or_else(|| failed("the host name resolves to no address".to_owned()))?;
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let crypto = QuicClientConfig::try_from(tls::client_config(trust)?).map_err(|error| {
        ConnectError::Tls {
            reason: error.to_string(),
        }
    })?;
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_uni_streams(MAX_DELIVERY_STREAMS.into());
    transport.max_concurrent_bidi_streams(0u32.into());
    transport.keep_alive_interval(Some(KEEP_ALIVE_INTERVAL));
    transport.datagram_receive_buffer_size(None);
    let mut mtu = quinn::MtuDiscoveryConfig::default();
    mtu.upper_bound(QUIC_MAX_UDP_PAYLOAD_BYTES);
    transport.mtu_discovery_config(Some(mtu));
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport));
    // Datagrams as large as the server's (the transport parameter that lets the server's
    // path MTU discovery climb past Ethernet's size where the path allows).
    let mut endpoint_config = quinn::EndpointConfig::default();
    endpoint_config
        .max_udp_payload_size(QUIC_MAX_UDP_PAYLOAD_BYTES)
        .expect("the datagram ceiling is within QUIC's 1200..=65527");
    let socket = std::net::UdpSocket::bind(local).map_err(io)?;
    // Room for a burst of deliveries: what does not fit is dropped, and the server then
    // slows down. The kernel caps it at net.core.rmem_max.
    let sized = socket2::SockRef::from(&socket).set_recv_buffer_size(QUIC_UDP_RECEIVE_BUFFER_BYTES);
    if let Err(error) = sized {
        tracing::debug!(%error, "cannot size the QUIC socket's receive buffer");
    }
    let runtime = quinn::default_runtime()
        .ok_or_else(|| failed("no async runtime to drive QUIC".to_owned()))?;
    let endpoint = quinn::Endpoint::new(endpoint_config, None, socket, runtime).map_err(io)?;
    let connecting = endpoint
        .connect_with(config, addr, &target.host)
        .map_err(|error| failed(error.to_string()))?;
    let connection = connecting
        .await
        .map_err(|error| failed(error.to_string()))?;
    let (send, recv) = connection
        .open_bi()
        .await
        .map_err(|error| failed(error.to_string()))?;
    Ok((
        QuicParts {
            endpoint,
            connection,
        },
        send,
        recv,
    ))
}

/// Accepts the server's delivery streams until the connection ends.
pub async fn accept_deliveries(quic: quinn::Connection, connection: Arc<Connection>) {
    while let Ok(stream) = quic.accept_uni().await {
        tokio::spawn(read_deliveries(stream, Arc::clone(&connection)));
    }
}

/// Reads one subscription's delivery stream and routes what it carries.
async fn read_deliveries(mut stream: quinn::RecvStream, connection: Arc<Connection>) {
    let mut buf = BytesMut::with_capacity(READ_BUFFER_BYTES);
    // After the first lookup (found, or waited for in vain), a missing route means the
    // subscription is gone (unsubscribed, or its Subscribe timed out): drop, do not wait.
    let mut looked_up = false;
    loop {
        let envelope = match quiver_wire::decode_next(&mut buf) {
            Ok(Some(envelope)) => envelope,
            Ok(None) => {
                connection::make_room(&mut buf, READ_BUFFER_BYTES);
                match stream.read_buf(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => continue,
                }
            }
            Err(error) => {
                tracing::debug!(%error, "the server sent a bad frame on a delivery stream");
                return;
            }
        };
        let connection::Incoming::Delivery(id, item) = connection::delivery(envelope.frame) else {
            tracing::debug!("a frame that is not a delivery on a delivery stream; ignored");
            continue;
        };
        let target = if looked_up {
            connection.delivery_target(id, &item)
        } else {
            wait_for_route(&connection, id, &item).await
        };
        looked_up = true;
        let Some(target) = target else { continue };
        // Waiting here holds up only this subscription's stream; the server's
        // slow-subscriber policy takes over once its queue fills.
        target.deliver(item).await;
    }
}

/// The route of subscription `id`, waiting up to the request timeout for its Subscribed
/// reply to be handled.
async fn wait_for_route(
    connection: &Connection,
    id: u32,
    item: &crate::subscription::SubItem,
) -> Option<connection::Route> {
    let mut registrations = connection.registrations();
    let deadline = tokio::time::Instant::now() + connection.request_timeout();
    loop {
        if let Some(target) = connection.delivery_target(id, item) {
            return Some(target);
        }
        if connection.is_closed() {
            return None;
        }
        match tokio::time::timeout_at(deadline, registrations.changed()).await {
            Ok(Ok(())) => {}
            _ => return None,
        }
    }
}
