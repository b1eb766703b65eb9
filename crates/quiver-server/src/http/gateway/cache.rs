//! Cache routes: `GET|PUT|DELETE /v1/cache/{db}/{key}` on the node's keyspace, the one
//! RESP serves. The key is the rest of the path, percent-decoded to bytes (so any key can
//! be named); the value is the body, as bytes. `?ttl_ms=` on PUT sets an expiry; GET tells
//! the time left in `Quiver-TTL-Ms` (absent for a key without expiry).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use quiver_core::cache::{BUSY_TEXT, Cache, MAX_STRING_BYTES, OpError, SetExpiry, SetOptions};
use serde_json::json;

use super::streams::{no_query, parse_query, percent_decode, query_number};
use super::{ApiError, ApiResult, Gateway, Shared, json, read_body};
use crate::clock::unix_ms;

/// The response header with a key's time to live.
pub const TTL_HEADER: &str = "quiver-ttl-ms";

/// Every route under `/v1/cache/`.
pub async fn route(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let rest = parts
        .uri
        .path()
        .strip_prefix("/v1/cache/")
        .unwrap_or_default();
    let query = parts.uri.query().unwrap_or_default();
    if parts.method != Method::PUT
        && let Err(refused) = no_query(query)
    {
        return refused.into_response();
    }
    let result = match target(&shared.gateway.cache, rest) {
        Ok((db, key)) => match parts.method {
            Method::GET | Method::HEAD => get(&shared.gateway.cache, db, &key).await,
            Method::PUT => put(&shared.gateway, db, &key, query, &parts.headers, body).await,
            Method::DELETE => delete(&shared.gateway, db, &key).await,
            ref other => Err(ApiError::wrong_method(other, "GET, HEAD, PUT, DELETE")),
        },
        Err(error) => Err(error),
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

/// The database and key a path names.
fn target(cache: &Cache, rest: &str) -> Result<(usize, Vec<u8>), ApiError> {
    let (db, key) = rest.split_once('/').ok_or_else(|| {
        ApiError::not_found("no_route", "a cache route is /v1/cache/{db}/{key}").value(rest)
    })?;
    let databases = cache.databases();
    let db = Some(db)
        .filter(|db| !db.is_empty() && db.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|db| db.parse::<usize>().ok())
        .filter(|db| *db < databases)
        .ok_or_else(|| {
            ApiError::bad_request(
                "invalid_db",
                format!("the database is a number from 0 to {}", databases - 1),
            )
            .value(db)
        })?;
    let key = percent_decode(key).ok_or_else(|| {
        ApiError::bad_request("invalid_key", "the key has a malformed %-escape").value(key)
    })?;
    if key.is_empty() {
        return Err(ApiError::bad_request("invalid_key", "the key is empty"));
    }
    Ok((db, key))
}

fn op_error(error: &OpError) -> ApiError {
    match error {
        OpError::WrongType => ApiError::new(
            StatusCode::CONFLICT,
            "wrong_type",
            "the key holds a value that is not a string (a list, hash, ...); use RESP for it",
        ),
        OpError::OutOfMemory => ApiError::unavailable(
            "out_of_memory",
            "the cache is at cache.max_memory and its eviction policy frees nothing",
            1,
        ),
        other => ApiError::internal(other.to_string()),
    }
}

/// Waits, without holding this thread, until a script no longer holds the keyspace;
/// refused while a script is busy (RESP's `BUSY`).
async fn unheld(cache: &Cache) -> Result<(), ApiError> {
    if !cache.hold().enter().await {
        return Err(ApiError::unavailable("busy", BUSY_TEXT, 1));
    }
    Ok(())
}

async fn get(cache: &Cache, db: usize, key: &[u8]) -> ApiResult {
    unheld(cache).await?;
    let now = unix_ms();
    let (value, ttl) = {
        let mut handle = cache.db(db).map_err(|e| op_error(&e))?;
        let value = handle
            .get(key, now)
            .map_err(|e| op_error(&e).value(String::from_utf8_lossy(key)))?;
        (value, handle.pttl(key, now))
    };
    // A read may expire the key.
    cache.after_command();
    let Some(value) = value else {
        return Err(ApiError::not_found("key_not_found", "no such key")
            .value(String::from_utf8_lossy(key).into_owned()));
    };
    let mut response = Response::new(Body::from(value));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if ttl >= 0 {
        headers.insert(TTL_HEADER, HeaderValue::from(ttl));
    }
    Ok(response)
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PutQuery {
    ttl_ms: Option<String>,
}

/// Refuses a write while persistence fails (RESP's MISCONF).
fn check_writable(cache: &Cache) -> Result<(), ApiError> {
    if cache.refuses_writes() {
        return Err(ApiError::unavailable(
            "persistence_failed",
            "writes are refused: the cache cannot persist to disk (see the server log)",
            1,
        ));
    }
    Ok(())
}

/// Waits until a write is as durable as `appendfsync` promises.
async fn durable(cache: &Cache) -> Result<(), ApiError> {
    cache
        .wait_durable(0)
        .await
        .map_err(|error| ApiError::internal(error.to_string()))
}

async fn put(
    gateway: &Gateway,
    db: usize,
    key: &[u8],
    query: &str,
    headers: &axum::http::HeaderMap,
    body: Body,
) -> ApiResult {
    let query: PutQuery = parse_query(query)?;
    let cache = &gateway.cache;
    let now = unix_ms();
    let ttl = query_number(
        query.ttl_ms.as_deref(),
        "ttl_ms",
        1..=u64::MAX,
        "invalid_ttl",
    )?;
    let expiry = match ttl {
        None => SetExpiry::Clear,
        Some(ttl) => SetExpiry::after(now, ttl).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_ttl",
                format!(
                    "ttl_ms is too large: the expiry time must fit in 63 bits of unix milliseconds (at most {} from now)",
                    i64::MAX as u64 - now
                ),
            )
            .value(ttl.to_string())
        })?,
    };
    let value = read_body(gateway, headers, body).await?;
    if value.len() > MAX_STRING_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "value_too_large",
            format!(
                "a cache value holds at most {MAX_STRING_BYTES} bytes (512 MiB, as Redis's strings)"
            ),
        )
        .value(value.len().to_string()));
    }
    unheld(cache).await?;
    check_writable(cache)?;
    let options = SetOptions {
        expiry,
        ..SetOptions::default()
    };
    let result = cache
        .db(db)
        .and_then(|mut handle| handle.set(key, &value, options, now));
    cache.after_command();
    result.map_err(|e| op_error(&e))?;
    durable(cache).await?;
    Ok(json::ok(&json!({ "stored": true, "bytes": value.len() })))
}

async fn delete(gateway: &Gateway, db: usize, key: &[u8]) -> ApiResult {
    let cache = &gateway.cache;
    unheld(cache).await?;
    check_writable(cache)?;
    let count = {
        let mut handle = cache.db(db).map_err(|e| op_error(&e))?;
        handle.del(&[key], unix_ms())
    };
    cache.after_command();
    durable(cache).await?;
    if count == 0 {
        return Err(ApiError::not_found("key_not_found", "no such key")
            .value(String::from_utf8_lossy(key).into_owned()));
    }
    Ok(json::ok(&json!({ "deleted": count })))
}
