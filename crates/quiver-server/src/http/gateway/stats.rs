//! Per-route figures of the HTTP listener: requests by route and status, and a latency
//! histogram per route. The connection's service times every response and names its route
//! from the request's method and path ([`classify`]).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Mutex, PoisonError};

use axum::http::Method;

/// Upper bounds of the latency buckets, in seconds.
pub const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Debug, Default, Clone)]
pub struct RouteFigures {
    /// Responses by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Responses per latency bucket (the last one: above every bound).
    pub buckets: [u64; BUCKETS.len() + 1],
    pub seconds: f64,
    pub count: u64,
}

#[derive(Debug, Default)]
pub struct RouteStats {
    routes: Mutex<BTreeMap<&'static str, RouteFigures>>,
}

impl RouteStats {
    pub fn observe(&self, route: &'static str, status: u16, seconds: f64) {
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        let figures = routes.entry(route).or_default();
        *figures.statuses.entry(status).or_default() += 1;
        let bucket = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        figures.buckets[bucket] += 1;
        figures.seconds += seconds;
        figures.count += 1;
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, RouteFigures> {
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The Prometheus families of these figures.
    pub fn render(&self, out: &mut String) {
        let routes = self.snapshot();
        out.push_str("# HELP quiver_http_requests_total HTTP responses by route and status.\n");
        out.push_str("# TYPE quiver_http_requests_total counter\n");
        for (route, figures) in &routes {
            for (status, count) in &figures.statuses {
                let _ = writeln!(
                    out,
                    "quiver_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {count}"
                );
            }
        }
        out.push_str(
            "# HELP quiver_http_request_duration_seconds Time from a request's head to its response's head.\n",
        );
        out.push_str("# TYPE quiver_http_request_duration_seconds histogram\n");
        for (route, figures) in &routes {
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(figures.buckets) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "quiver_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "quiver_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                figures.count
            );
            let _ = writeln!(
                out,
                "quiver_http_request_duration_seconds_sum{{route=\"{route}\"}} {:.6}",
                figures.seconds
            );
            let _ = writeln!(
                out,
                "quiver_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                figures.count
            );
        }
    }
}

/// The route a request is for, as the figures name it: read off the raw path without
/// decoding or allocating (every response passes here).
pub fn classify(method: &Method, path: &str) -> &'static str {
    let by_method = |get, put, delete| match *method {
        Method::GET | Method::HEAD => get,
        Method::PUT => put,
        Method::DELETE => delete,
        _ => "other",
    };
    match path {
        "/" => return "status_page",
        "/health" => return "health",
        "/ready" => return "ready",
        "/metrics" => return "metrics",
        "/api/metrics" => return "api_metrics",
        "/api/events" => return "status_events",
        "/v1/openapi.json" => return "openapi",
        "/v1/streams" => return "streams_list",
        _ => {}
    }
    if path.starts_with("/v1/cache/") {
        return by_method("cache_get", "cache_put", "cache_delete");
    }
    let Some(rest) = path.strip_prefix("/v1/streams/") else {
        return "other";
    };
    let rest = rest.trim_end_matches('/');
    let mut words = rest.rsplit('/');
    let (last, second, third) = (words.next(), words.next(), words.next());
    // Levels before the route's words: a suffix counts when a whole name is before it.
    let levels = rest.split('/').count();
    // In parse_route's order: group routes first.
    match (last, second, third) {
        (Some("fetch" | "ack" | "nack"), _, Some("groups")) if levels > 5 => match last {
            Some("fetch") => "group_fetch",
            Some("ack") => "group_ack",
            _ => "group_nack",
        },
        (_, Some("groups"), _) if levels > 4 => "group_describe",
        (Some("messages"), _, _) if levels > 3 => {
            if method == Method::POST {
                "publish"
            } else {
                "read"
            }
        }
        (Some("events"), _, _) if levels >= 3 => "events",
        _ => by_method("stream_describe", "stream_create", "stream_delete"),
    }
}
