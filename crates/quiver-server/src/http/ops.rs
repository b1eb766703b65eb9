//! Operations routes: `/health` (liveness), `/ready` (readiness with checks)
//! and `/metrics` (Prometheus text format).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde_json::json;

use super::metrics;
use crate::serve::state::ServerState;

/// The operations routes over shared server state.
pub fn router(state: Arc<ServerState>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/metrics", get(prometheus))
        .with_state(state)
}

/// 200 for as long as the process can answer at all.
async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// 200 when storage is open, every listener is bound and the server is not
/// draining; 503 otherwise, with each check's outcome in the body.
async fn ready(State(state): State<Arc<ServerState>>) -> Response {
    let checks = state.readiness.checks();
    let status = if checks.ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "status": if checks.ready() { "ready" } else { "not_ready" },
        "checks": {
            "storage_open": checks.storage_open,
            "listeners_bound": checks.listeners_bound,
            "draining": checks.draining,
        },
    });
    (status, Json(body)).into_response()
}

async fn prometheus(State(state): State<Arc<ServerState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics::render(&state),
    )
        .into_response()
}
