//! What every `/v1` request passes before its handler: the drain check, the bearer token,
//! the client's rate limit and admission control. Refusals cost no body read.

use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::streams::{StreamRoute, parse_route};
use super::{ApiError, Shared};
use crate::http::admission::{RateState, Refusal};

pub async fn guard(State(shared): State<Shared>, request: Request, next: Next) -> Response {
    let gateway = &shared.gateway;
    if shared.readiness.checks().draining {
        return ApiError::unavailable(
            "draining",
            "the server is shutting down; retry against another node",
            1,
        )
        .into_response();
    }
    if let Err(error) = check_token(gateway.auth_token.as_deref(), request.headers()) {
        return error.into_response();
    }
    let mut rate = None;
    if let Some(limiter) = &gateway.rate {
        // By address: a bearer token is not a client's identity (there is one token for
        // every client, or none at all, and an unchecked one costs nothing to change).
        let client = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or([0, 0, 0, 0].into(), |info| info.0.ip());
        let state = limiter.check(client, Instant::now());
        if !state.allowed {
            let mut response = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "this client made more than {} requests a second (http.rate_limit)",
                    state.limit
                ),
            )
            .retry_after(state.reset_secs)
            .into_response();
            rate_headers(response.headers_mut(), state);
            return response;
        }
        rate = Some(state);
    }
    let mut response = if is_event_stream(&request) {
        // Event streams take a place of their own (see `events`).
        next.run(request).await
    } else {
        let admission = &gateway.admission;
        match admission.enter().await {
            Ok(_admitted) => next.run(request).await,
            Err(refusal) => {
                let message = match refusal {
                    Refusal::Full => format!(
                        "the gateway has {} requests in progress or waiting, its limit (http.max_ccu)",
                        admission.max()
                    ),
                    Refusal::QueueTimeout => {
                        "no place freed up within http.queue_timeout".to_owned()
                    }
                };
                let mut response =
                    ApiError::unavailable("overloaded", message, admission.retry_after_secs())
                        .into_response();
                response.extensions_mut().insert(super::Overloaded);
                response
            }
        }
    };
    if let Some(state) = rate {
        rate_headers(response.headers_mut(), state);
    }
    response
}

/// Checks the bearer token a request carries against `expected`, when one is set.
fn check_token(expected: Option<&str>, headers: &HeaderMap) -> Result<(), ApiError> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    // The scheme is matched without regard to case (RFC 9110).
    let given = authorization
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let Some(expected) = expected else {
        return Ok(());
    };
    match given {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "invalid_token",
            "the bearer token is not the one this server takes (native.auth_token)",
        )),
        None => {
            let mut error = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this server needs `Authorization: Bearer <token>` (native.auth_token)",
            );
            // The scheme given, never a credential (a value of one word may be one).
            error.value = headers.get(header::AUTHORIZATION).map(|v| {
                let text = String::from_utf8_lossy(v.as_bytes());
                match text.trim().split_once(' ') {
                    Some((scheme, _)) => scheme.chars().take(16).collect(),
                    None => "(no scheme)".to_owned(),
                }
            });
            Err(error)
        }
    }
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request opens an event stream, as the route handler will read its path
/// (decoded only when it could be one: most requests are not).
fn is_event_stream(request: &Request) -> bool {
    let path = request.uri().path();
    let maybe = path.trim_end_matches('/').ends_with("/events") || path.contains('%');
    request.method() == Method::GET
        && maybe
        && path
            .strip_prefix("/v1/streams/")
            .and_then(parse_route)
            .is_some_and(|route| matches!(route, StreamRoute::Events(_)))
}

fn rate_headers(headers: &mut HeaderMap, state: RateState) {
    headers.insert("ratelimit-limit", HeaderValue::from(state.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(state.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(state.reset_secs));
}
