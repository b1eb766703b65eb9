//! The native transport over TCP: Quiver's binary protocol (`docs/wire-protocol.md`,
//! codec in `quiver-wire`) on its own listener. One connection multiplexes requests,
//! replies and subscription deliveries. The session logic here is transport-independent:
//! it runs over any byte stream pair, and [`deliveries::Deliveries`] says where a
//! subscription's frames go, so `crate::quic` reuses it unchanged.
//!
//! Per connection: a read loop ([`connection`]) checks and decodes frames and translates
//! them into calls on the streams broker and the cache; a writer task
//! ([`writer`]) coalesces everything queued into few vectored writes; and one task per
//! subscription ([`streams`]) turns the broker's deliveries into EventBatch, Lag and
//! SubscriptionEnded frames. An event batch body is encoded once per batch into the
//! batch's encoding slot and shared by every subscriber on every connection.
//!
//! A bad frame is answered with an Error frame and, for the closing codes, the connection
//! is closed after the Error is written; no other connection is affected.

pub(crate) mod admin;
mod cache;
pub(crate) mod connection;
pub(crate) mod deliveries;
pub(crate) mod groups;
pub(crate) mod session;
mod streams;
pub(crate) mod writer;

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use quiver_core::cache::Cache;
use quiver_core::streams::Broker;
use quiver_wire::{ErrorCode, ErrorFrame};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::serve::listener::Listener;
use crate::serve::shutdown::Shutdown;

/// What every native connection shares.
#[derive(Debug)]
pub struct NativeShared {
    /// The live-streams broker.
    pub broker: Broker,
    /// The node's cache (the one the RESP listener serves).
    pub cache: Arc<Cache>,
    /// Listener settings.
    pub settings: NativeSettings,
}

/// Settings of the native listener.
#[derive(Debug, Clone, Default)]
pub struct NativeSettings {
    /// Token a client must present in Hello; `None` lets every client in.
    pub auth_token: Option<Bytes>,
}

/// Serves native connections on `listener` until `shutdown`; connections then say
/// Goodbye and close.
pub async fn serve_native(listener: Listener, shared: Arc<NativeShared>, shutdown: Shutdown) {
    let handle = |stream, peer, guard| {
        connection::serve(stream, peer, guard, Arc::clone(&shared), shutdown.clone())
    };
    listener.run(shutdown.clone(), handle, refuse).await;
}

/// Tells a client over the connection limit why it is closed.
async fn refuse(mut stream: TcpStream, limit: u32) {
    let frame = ErrorFrame::new(
        ErrorCode::OVERLOADED,
        &format!("connection limit of {limit} reached (native.max_connections); retry later"),
    );
    let mut buf = BytesMut::new();
    if quiver_wire::encode(0, &frame, &mut buf).is_ok() {
        let _ = stream.write_all(&buf).await;
    }
    let _ = stream.shutdown().await;
}
