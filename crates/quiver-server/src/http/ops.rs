//! Operations routes: `/health` (liveness), `/ready` (readiness with checks and the
//! gateway's utilization), `/metrics` (Prometheus text format) and `/api/metrics` (the
//! same figures people look at, as JSON).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde_json::json;

use super::{metrics, process};
use crate::serve::state::ServerState;

/// The operations routes over shared server state.
pub fn router(state: Arc<ServerState>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/metrics", get(prometheus))
        .route("/api/metrics", get(api_metrics))
        .route("/", get(status_page))
        .route("/api/events", get(status_events))
        .with_state(state)
}

/// 200 for as long as the process can answer at all. A `GET` is answered by the
/// connection's service before routing (see `serve_connection`); the route answers the
/// other methods.
async fn health() -> Response {
    health_response()
}

/// The answer to `GET /health`.
pub(super) fn health_response() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"status":"ok"}"#,
    )
        .into_response()
}

/// 200 when storage is open, every listener is bound, the server is not draining and the
/// gateway's admission is below `http.ready_utilization`; 503 otherwise, with each check's
/// outcome and the utilization in the body.
async fn ready(State(state): State<Arc<ServerState>>) -> Response {
    let checks = state.readiness.checks();
    let saturated = state.gateway.saturated();
    let ready = checks.ready() && !saturated;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "status": if ready { "ready" } else { "not_ready" },
        "checks": {
            "storage_open": checks.storage_open,
            "listeners_bound": checks.listeners_bound,
            "draining": checks.draining,
            "saturated": saturated,
        },
        "admission": admission(&state),
    });
    (status, Json(body)).into_response()
}

fn admission(state: &ServerState) -> serde_json::Value {
    let g = &state.gateway;
    let a = &g.admission;
    json!({
        "ccu": a.inside(),
        "queue": a.waiting(),
        "max_ccu": a.max(),
        "normal_capacity": a.normal(),
        "utilization_percent": (a.utilization_percent() * 10.0).round() / 10.0,
        "ready_utilization_percent": g.ready_utilization,
        "event_streams": g.event_slots.open(),
        "max_event_streams": g.event_slots.max(),
        "admitted": a.admitted.load(Ordering::Relaxed),
        "refused_full": a.refused_full.load(Ordering::Relaxed),
        "refused_queue_timeout": a.refused_timeout.load(Ordering::Relaxed),
        "rate_limited": g.rate.as_ref().map_or(0, |r| r.refused.load(Ordering::Relaxed)),
    })
}

/// The figures of the status page, as JSON: admission, connections per listener, streams,
/// durable streams with their groups, the cache and the process.
pub fn figures(state: &ServerState) -> serde_json::Value {
    let listeners: Vec<_> = state
        .listeners
        .iter()
        .map(|l| {
            json!({
                "name": l.name,
                "addr": l.addr.to_string(),
                "open": l.open(),
                "max": l.max_connections,
                "accepted": l.accepted_total.load(Ordering::Relaxed),
                "refused": l.refused_total.load(Ordering::Relaxed),
            })
        })
        .collect();
    let broker = &state.broker;
    let streams: Vec<_> = broker
        .list_streams()
        .into_iter()
        .map(|info| {
            let groups: Vec<_> = if info.durable.is_some() {
                broker
                    .groups(&info.name)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|g| json!({ "name": g.name, "lag": g.lag, "pending": g.pending, "acked": g.acked }))
                    .collect()
            } else {
                Vec::new()
            };
            json!({
                "name": info.name.as_str(),
                "durable": info.durable.is_some(),
                "published": info.live.published,
                "delivered": info.live.delivered,
                "dropped": info.live.dropped(),
                "subscribers": info.live.subscribers,
                "stored_messages": info.durable.as_ref().map(|d| d.stored_messages),
                "stored_bytes": info.durable.as_ref().map(|d| d.stored_bytes),
                "groups": groups,
            })
        })
        .collect();
    let cache = state.cache.stats();
    let lookups = cache.keyspace_hits + cache.keyspace_misses;
    let memory = process::memory();
    let http: serde_json::Map<String, serde_json::Value> = state
        .gateway
        .stats
        .snapshot()
        .into_iter()
        .map(|(route, figures)| {
            (
                route.to_owned(),
                json!({ "count": figures.count, "statuses": figures.statuses }),
            )
        })
        .collect();
    json!({
        "uptime_seconds": state.started.elapsed().as_secs_f64(),
        "time_ms": crate::clock::unix_ms(),
        "admission": admission(state),
        "listeners": listeners,
        "streams": streams,
        "cache": {
            "keys": (0..state.cache.databases())
                .filter_map(|db| state.cache.db(db).ok().map(|mut d| d.dbsize()))
                .sum::<usize>(),
            "used_memory_bytes": state.cache.used_memory(),
            "hits": cache.keyspace_hits,
            "misses": cache.keyspace_misses,
            "hit_rate": if lookups == 0 { serde_json::Value::Null } else { json!(cache.keyspace_hits as f64 / lookups as f64) },
        },
        "process": {
            "resident_bytes": memory.resident_bytes,
        },
        "http": http,
    })
}

/// Runs `render` on the blocking pool: reading the cache's figures waits for a shard a
/// script holds, and this connection's thread serves other connections (`/health`) in the
/// meantime.
async fn off_thread<T: Send + 'static>(
    state: &Arc<ServerState>,
    render: fn(&ServerState) -> T,
) -> T {
    let state = Arc::clone(state);
    match tokio::task::spawn_blocking(move || render(&state)).await {
        Ok(rendered) => rendered,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}

async fn api_metrics(State(state): State<Arc<ServerState>>) -> Json<serde_json::Value> {
    Json(off_thread(&state, figures).await)
}

async fn prometheus(State(state): State<Arc<ServerState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        off_thread(&state, metrics::render).await,
    )
        .into_response()
}

/// The status page: one HTML file with its script, no external assets.
const STATUS_PAGE: &str = include_str!("status.html");

/// How often the status page's event stream sends the figures.
const STATUS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

async fn status_page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        STATUS_PAGE,
    )
        .into_response()
}

/// The figures every second as Server-Sent Events (`event: figures`), for the status page.
/// It holds a place of `http.max_event_streams` and ends when the server starts draining.
async fn status_events(State(state): State<Arc<ServerState>>) -> Response {
    use crate::http::gateway::ApiError;
    let Some(slot) = state.gateway.event_slots.take() else {
        return ApiError::unavailable(
            "too_many_event_streams",
            "every event stream place is taken (http.max_event_streams)",
            1,
        )
        .into_response();
    };
    let ticks =
        futures_util::stream::unfold((state, slot, true), |(state, slot, first)| async move {
            if !first {
                tokio::time::sleep(STATUS_EVERY).await;
            }
            if state.readiness.checks().draining {
                return None;
            }
            let event = format!(
                "event: figures\ndata: {}\n\n",
                off_thread(&state, figures).await
            );
            Some((
                Ok::<_, std::convert::Infallible>(bytes::Bytes::from(event)),
                (state, slot, false),
            ))
        });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        axum::body::Body::from_stream(ticks),
    )
        .into_response()
}
