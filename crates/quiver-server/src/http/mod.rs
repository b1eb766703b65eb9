//! The HTTP transport: HTTP/1.1 and HTTP/2 on one listener (hyper), serving
//! the operations endpoint today and the gateway's REST routes later.

mod metrics;
mod ops;
pub(crate) mod process;

use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::serve::listener::{ConnectionGuard, Listener};
use crate::serve::shutdown::Shutdown;
use crate::serve::state::ServerState;

/// Serves the operations routes on `listener` until `shutdown` fires, then
/// lets each connection finish its in-flight request.
pub async fn serve_ops(listener: Listener, state: Arc<ServerState>, shutdown: Shutdown) {
    let router = ops::router(state);
    let handle =
        |stream, _peer, guard| serve_connection(stream, router.clone(), shutdown.clone(), guard);
    listener.run(shutdown.clone(), handle, refuse).await;
}

async fn serve_connection(
    stream: TcpStream,
    router: axum::Router,
    shutdown: Shutdown,
    guard: ConnectionGuard,
) {
    let builder = auto::Builder::new(TokioExecutor::new());
    let connection = builder
        .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(router));
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "http connection ended with an error");
            }
        }
        () = shutdown.wait() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
    drop(guard);
}

/// Tells a client over the connection limit why it is turned away.
async fn refuse(mut stream: TcpStream, limit: u32) {
    let body = format!(
        "{{\"error\":\"too_many_connections\",\"message\":\"this listener serves at most {limit} connections (http.max_connections); retry later\"}}"
    );
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    // Read what the client sent until it hangs up: closing with unread input
    // would reset the connection and could destroy the refusal in flight. The
    // caller bounds this with a timeout.
    let mut sink = [0u8; 1024];
    while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
}
