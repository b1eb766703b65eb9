//! The HTTP transport: HTTP/1.1 and HTTP/2 (cleartext, with prior knowledge) on one
//! listener (hyper), serving the gateway's REST and event routes under `/v1`, the status
//! page and the operations routes.

pub mod admission;
pub mod gateway;
mod metrics;
mod ops;
pub(crate) mod process;
pub mod threads;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use futures_util::future::Either;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower::ServiceExt;

use crate::serve::listener::{ConnectionGuard, Listener};
use crate::serve::shutdown::Shutdown;
use crate::serve::state::ServerState;

/// How the listener's connections are served.
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// `None`: no limit on reading a request's head.
    pub header_timeout: Option<std::time::Duration>,
    /// The shortest time between two admission refusals sent on one connection.
    pub refusal_pause: std::time::Duration,
}

/// Every route of the listener (the per-route figures are kept by the connection's
/// service around it, see `serve_connection`).
pub fn router(state: Arc<ServerState>) -> Router {
    ops::router(Arc::clone(&state))
        .merge(gateway::router(state))
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
}

/// A method a route does not answer, as JSON (axum adds the `Allow` header).
async fn wrong_method(method: axum::http::Method) -> axum::response::Response {
    gateway::ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not answer this method; the Allow header lists those it does",
    )
    .value(method.as_str())
    .into_response()
}

async fn unknown_route(uri: axum::http::Uri) -> axum::response::Response {
    gateway::ApiError::not_found("no_route", "no route has this path; see /v1/openapi.json")
        .value(gateway::json::truncated(uri.path()))
        .into_response()
}

/// Serves every route on `listener` until `shutdown` fires, then lets each connection
/// finish its in-flight request. Returns the connection threads, which serve the
/// connections still open: the caller drops them when the drain is over.
pub async fn serve_http(
    listener: Listener,
    state: Arc<ServerState>,
    limits: HttpLimits,
    shutdown: Shutdown,
) -> Option<threads::HttpThreads> {
    let router = router(Arc::clone(&state));
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let threads = match threads::HttpThreads::start(cores) {
        Ok(threads) => threads,
        Err(error) => {
            tracing::error!(%error, "the HTTP connection threads could not start");
            return None;
        }
    };
    let handle = |stream: TcpStream, peer, guard| {
        let (state, router, shutdown) = (Arc::clone(&state), router.clone(), shutdown.clone());
        let serve =
            move |stream| serve_connection(stream, peer, state, router, limits, shutdown, guard);
        if let Err(error) = threads.adopt(stream, serve) {
            tracing::warn!(%peer, %error, "HTTP connection dropped: not movable to a connection thread");
        }
        std::future::ready(())
    };
    listener.run(shutdown.clone(), handle, refuse).await;
    Some(threads)
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    state: Arc<ServerState>,
    router: Router,
    limits: HttpLimits,
    shutdown: Shutdown,
    guard: ConnectionGuard,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(256)
        .max_header_list_size(64 << 10);
    // The client's address is for the rate limit alone: without one, no request pays for
    // carrying it.
    let rate_limited = state.gateway.rate.is_some();
    let pause = RefusalPause::new(limits.refusal_pause);
    // Times every response and counts it under its route and status.
    let service = tower::service_fn(
        move |mut request: axum::extract::Request<hyper::body::Incoming>| {
            if rate_limited {
                request.extensions_mut().insert(ConnectInfo(peer));
            }
            let started = std::time::Instant::now();
            let route = gateway::stats::classify(request.method(), request.uri().path());
            let state = Arc::clone(&state);
            // The liveness answer is fixed: made here, it costs no routing.
            let response = if route == "health" && request.method() == axum::http::Method::GET {
                Either::Left(std::future::ready(Ok(ops::health_response())))
            } else {
                Either::Right(router.clone().oneshot(request))
            };
            let pause = pause.clone();
            async move {
                let result = response.await;
                if let Ok(response) = &result {
                    let (hold, status) = (pause.hold(response), response.status().as_u16());
                    if let Some(until) = hold {
                        tokio::time::sleep_until(until).await;
                    }
                    let seconds = started.elapsed().as_secs_f64();
                    state.gateway.stats.observe(route, status, seconds);
                }
                result
            }
        },
    );
    let connection = builder
        .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service));
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

/// A connection's pace of admission refusals: a refusal is sent at once and opens a
/// pause; refusals on the same connection during the pause are sent when it ends. A client
/// that honours `Retry-After` never notices; one that retries at once is held to two
/// refusals per pause per connection, instead of taking the server's time for refusals
/// that the admitted requests would have used. Admitted requests never wait.
#[derive(Clone)]
struct RefusalPause {
    length: std::time::Duration,
    /// When the current pause started.
    started: Arc<std::sync::Mutex<Option<tokio::time::Instant>>>,
}

impl RefusalPause {
    fn new(length: std::time::Duration) -> Self {
        Self {
            length,
            started: Arc::default(),
        }
    }

    /// Until when `response` is held back: `None` unless it refuses for want of admission
    /// during this connection's pause.
    fn hold(&self, response: &axum::response::Response) -> Option<tokio::time::Instant> {
        if self.length.is_zero() || response.extensions().get::<gateway::Overloaded>().is_none() {
            return None;
        }
        let now = tokio::time::Instant::now();
        let mut started = self
            .started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match *started {
            Some(start) if now < start + self.length => Some(start + self.length),
            _ => {
                *started = Some(now);
                None
            }
        }
    }
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
