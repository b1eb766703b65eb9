//! JSON replies and how messages appear in them.
//!
//! A payload is `"payload": "<text>"` when it is UTF-8, `"payload_base64": "<base64>"`
//! otherwise; headers are `"headers": {"key": "value"}` likewise, with values that are not
//! UTF-8 in `"headers_base64"`.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use quiver_core::streams::Header;
use serde_json::{Map, Value};

use super::ApiError;

/// `value` as a JSON response with `status`.
pub fn response(status: StatusCode, value: &Value) -> Response {
    raw(status, value.to_string())
}

/// JSON text made by hand as a response with `status`.
pub fn raw(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// `value` as a 200 JSON response.
pub fn ok(value: &Value) -> Response {
    response(StatusCode::OK, value)
}

/// Adds a message's payload and headers to `object`.
pub fn put_message(object: &mut Map<String, Value>, payload: &[u8], headers: &[Header]) {
    match std::str::from_utf8(payload) {
        Ok(text) => object.insert("payload".into(), Value::String(text.to_owned())),
        Err(_) => object.insert("payload_base64".into(), STANDARD.encode(payload).into()),
    };
    if headers.is_empty() {
        return;
    }
    let mut text = Map::new();
    let mut binary = Map::new();
    for h in headers {
        let key = String::from_utf8_lossy(&h.key).into_owned();
        match std::str::from_utf8(&h.value) {
            Ok(value) => text.insert(key, value.to_owned().into()),
            Err(_) => binary.insert(key, STANDARD.encode(&h.value).into()),
        };
    }
    if !text.is_empty() {
        object.insert("headers".into(), Value::Object(text));
    }
    if !binary.is_empty() {
        object.insert("headers_base64".into(), Value::Object(binary));
    }
}

/// Decodes base64 `text` of field `field`.
pub fn base64(field: &str, text: &str) -> Result<Vec<u8>, ApiError> {
    STANDARD.decode(text).map_err(|error| {
        ApiError::bad_request("invalid_base64", format!("{field} is not base64: {error}"))
            .value(text.chars().take(64).collect::<String>())
    })
}

/// `body` parsed as a JSON object (an empty body is an empty object).
pub fn object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ApiError::bad_request(
            "invalid_json",
            "the request body must be a JSON object",
        )
        .value(truncated(&other.to_string()))),
        Err(error) => Err(ApiError::bad_request(
            "invalid_json",
            format!("the request body is not JSON: {error}"),
        )
        .value(truncated(&String::from_utf8_lossy(body)))),
    }
}

/// Field `name` of `object` as a whole number in `min..=max`, or `default` when absent.
pub fn number(
    object: &Map<String, Value>,
    name: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, ApiError> {
    let Some(value) = object.get(name) else {
        return Ok(default);
    };
    match value.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ApiError::bad_request(
            "invalid_field",
            format!("{name} must be a whole number from {min} to {max}"),
        )
        .value(value.to_string())),
    }
}

/// The first field of `fields` that is not one of `known`.
pub fn unknown<'a>(fields: &'a Map<String, Value>, known: &[&str]) -> Option<&'a String> {
    fields.keys().find(|k| !known.contains(&k.as_str()))
}

/// Refuses a field of `fields` that is not one of `known` (`what` names the object).
pub fn only(fields: &Map<String, Value>, known: &[&str], what: &str) -> Result<(), ApiError> {
    match unknown(fields, known) {
        None => Ok(()),
        Some(unknown) => Err(ApiError::bad_request(
            "unknown_field",
            format!(
                "{what} has no field {unknown:?}; its fields are {}",
                known.join(", ")
            ),
        )
        .value(truncated(unknown))),
    }
}

/// Field `name` of `object` as a string, if present.
pub fn string<'a>(object: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, ApiError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(ApiError::bad_request(
            "invalid_field",
            format!("{name} must be a string"),
        )
        .value(other.to_string())),
    }
}

/// At most the first 128 characters of `text`, for an error's `value`.
pub fn truncated(text: &str) -> String {
    text.chars().take(128).collect()
}
