//! The HTTP gateway: REST routes under `/v1` and Server-Sent Events, each translated to
//! the node's calls (streams, groups, cache) like every other transport's requests, behind
//! authentication, rate limits and admission control.
//!
//! A stream's routes share one path prefix, `/v1/streams/{tenant/namespace/stream}`, since
//! a stream name holds slashes; [`streams::route`] reads the route's last words
//! (`messages`, `events`, `groups/{group}/fetch`, ...) off the end of the path.

mod cache;
mod consumers;
mod events;
mod guard;
pub(crate) mod json;
pub mod stats;
mod streams;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use bytes::Bytes;
use quiver_core::cache::Cache;
use quiver_core::streams::Broker;

pub use self::consumers::Consumers;
use super::admission::{Admission, EventSlots, RateLimiter};
use crate::config::HttpConfig;
use crate::serve::state::ServerState;

/// The gateway's parsers of request input (paths, NDJSON batches, `Last-Event-ID`), for
/// the `http_input` fuzz target.
pub mod inputs {
    pub use super::events::parse_last_event_id;
    pub use super::stats::classify;
    pub use super::streams::{StreamRoute, parse_batch, parse_route, percent_decode};
}

/// What the gateway's routes share.
#[derive(Debug)]
pub struct Gateway {
    pub broker: Broker,
    pub cache: Arc<Cache>,
    pub admission: Arc<Admission>,
    pub event_slots: Arc<EventSlots>,
    pub rate: Option<RateLimiter>,
    pub consumers: Consumers,
    pub stats: stats::RouteStats,
    /// `native.auth_token`: required as `Authorization: Bearer` when set.
    pub auth_token: Option<Arc<str>>,
    pub max_body_bytes: u64,
    /// `None`: no limit.
    pub body_timeout: Option<Duration>,
    /// `None`: no heartbeat.
    pub event_heartbeat: Option<Duration>,
    pub ready_utilization: u32,
}

impl Gateway {
    pub fn new(
        config: &HttpConfig,
        broker: Broker,
        cache: Arc<Cache>,
        auth_token: Option<&str>,
    ) -> Arc<Gateway> {
        let nonzero = |d: Duration| (!d.is_zero()).then_some(d);
        Arc::new(Gateway {
            broker,
            cache,
            admission: Admission::new(config.max_ccu, config.utilization, config.queue_timeout),
            event_slots: EventSlots::new(config.max_event_streams),
            rate: RateLimiter::new(config.rate_limit, config.rate_burst),
            consumers: Consumers::new(nonzero(config.consumer_idle)),
            stats: stats::RouteStats::default(),
            auth_token: auth_token.map(Arc::from),
            max_body_bytes: config.max_body_bytes,
            body_timeout: nonzero(config.body_timeout),
            event_heartbeat: nonzero(config.event_heartbeat),
            ready_utilization: config.ready_utilization,
        })
    }

    /// Whether admission is so full that `/ready` should turn traffic away.
    pub fn saturated(&self) -> bool {
        self.admission.utilization_percent() >= f64::from(self.ready_utilization)
    }
}

/// The state the gateway's handlers take: the server's (its `gateway`, its readiness).
pub type Shared = Arc<ServerState>;

/// The `/v1` routes, guarded.
pub fn router(shared: Shared) -> Router {
    Router::new()
        .route("/v1/streams", get(streams::list))
        .route("/v1/streams/{*rest}", any(streams::route))
        .route("/v1/cache/{*rest}", any(cache::route))
        .route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            guard::guard,
        ))
        .route("/v1/openapi.json", get(openapi))
        .with_state(shared)
}

/// The OpenAPI document of the routes, as served.
pub const OPENAPI: &str = include_str!("openapi.json");

async fn openapi() -> Response {
    let mut response = Response::new(Body::from(OPENAPI));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Marks a response that refuses its request because admission is full (paced per
/// connection by `http.refusal_pause`).
#[derive(Debug, Clone, Copy)]
pub struct Overloaded;

/// An error as every route answers it: a status and a JSON body with a stable code, a
/// message and the offending value.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub value: Option<String>,
    /// Seconds for `Retry-After` (503 and 429).
    pub retry_after: Option<u64>,
    /// The methods a route answers, for `Allow` (405).
    pub allow: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            value: None,
            retry_after: None,
            allow: None,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn unavailable(code: &'static str, message: impl Into<String>, retry: u64) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, code, message).retry_after(retry)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    pub fn value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// 405 for `method` on a route that answers `allow` (an `Allow` header value).
    pub fn wrong_method(method: &axum::http::Method, allow: &'static str) -> Self {
        let mut error = Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("this route answers {allow}"),
        )
        .value(method.as_str());
        error.allow = Some(allow);
        error
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = serde_json::json!({ "error": self.code, "message": self.message });
        if let Some(value) = self.value {
            body["value"] = serde_json::Value::String(value);
        }
        let mut response = json::response(self.status, &body);
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(allow) = self.allow {
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult = Result<Response, ApiError>;

/// Reads a request body whole: at most `max_body_bytes` (413 otherwise, before reading
/// when `Content-Length` says so) within `body_timeout` (408 otherwise).
pub async fn read_body(
    gateway: &Gateway,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    let limit = usize::try_from(gateway.max_body_bytes).unwrap_or(usize::MAX);
    let too_large = |len: String| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!(
                "the request body is larger than http.max_body ({} bytes)",
                gateway.max_body_bytes
            ),
        )
        .value(len)
    };
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && len > gateway.max_body_bytes
    {
        return Err(too_large(len.to_string()));
    }
    let read = axum::body::to_bytes(body, limit);
    let read = match gateway.body_timeout {
        Some(timeout) => tokio::time::timeout(timeout, read).await.map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                format!(
                    "the request body did not arrive within http.body_timeout ({} ms)",
                    timeout.as_millis()
                ),
            )
        })?,
        None => read.await,
    };
    read.map_err(|error| {
        let mut source: Option<&dyn std::error::Error> = Some(&error);
        while let Some(e) = source {
            if e.is::<http_body_util::LengthLimitError>() {
                return too_large(format!("more than {limit} bytes"));
            }
            source = e.source();
        }
        ApiError::bad_request(
            "body_unreadable",
            format!("the request body could not be read: {error}"),
        )
    })
}

/// A JSON object body (an empty body is an empty object): `415` for another declared
/// media type, `400` for what is not a JSON object.
pub async fn json_body(
    gateway: &Gateway,
    headers: &HeaderMap,
    body: Body,
) -> Result<serde_json::Map<String, serde_json::Value>, ApiError> {
    let media = media_type(headers);
    if !media.is_empty() && media != "application/json" {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "this route takes a JSON body (Content-Type: application/json)",
        )
        .value(media));
    }
    json::object(&read_body(gateway, headers, body).await?)
}

/// The media type of a request, lower case, without parameters; empty when absent.
pub fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}
