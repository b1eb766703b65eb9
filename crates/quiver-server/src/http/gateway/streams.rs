//! Stream routes: list, describe, create and delete; publish (one message or an NDJSON
//! batch, all or nothing) and read by position.

use std::fmt::Write;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use quiver_core::streams::durable::HistoryError;
use quiver_core::streams::{
    self as core, Ack, CreateStreamError, DeleteStreamError, MAX_PUBLISH_EVENTS, PublishError,
    StartAt, StreamName,
};
use quiver_wire::StreamSettings;
use serde_json::{Map, Value, json};

use super::{
    ApiError, ApiResult, Gateway, Shared, consumers, events, json, json_body, media_type, read_body,
};
use crate::client_cmd::args::{parse_policy, parse_storage};
use crate::client_cmd::time::{POSITION_HELP, now_ms, parse_position};
use crate::native::admin;

/// Most messages one read returns.
pub const MAX_READ_LIMIT: u64 = 1000;
/// Most payload bytes one read returns (at least one message, whatever its size).
const MAX_READ_BYTES: usize = 4 << 20;
/// Request headers that become message headers: `Quiver-Header-<key>: <value>`.
const HEADER_PREFIX: &str = "quiver-header-";

/// What a path under `/v1/streams/` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamRoute {
    Stream(String),
    Messages(String),
    Events(String),
    Group {
        stream: String,
        group: String,
        action: GroupAction,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupAction {
    Describe,
    Fetch,
    Ack,
    Nack,
}

/// Reads the route off the end of `rest` (the path after `/v1/streams/`, still
/// percent-encoded). A suffix counts only when what is before it is a whole name (three
/// levels or more), so `a/b/messages` is the stream of that name. Route words are whole
/// path segments, read before their escapes are decoded: `%2F` joins two levels into one
/// segment, so `a/b/c%2Fgroups/messages` reads the stream `a/b/c/groups`, where
/// `a/b/c/groups/messages` describes group `messages` (group routes come first).
pub fn parse_route(rest: &str) -> Option<StreamRoute> {
    let segments: Vec<String> = rest
        .trim_end_matches('/')
        .split('/')
        .map(|s| percent_decode(s).and_then(|bytes| String::from_utf8(bytes).ok()))
        .collect::<Option<_>>()?;
    let n = segments.len();
    let name = |k: usize| {
        let joined = segments[..k].join("/");
        (joined.split('/').count() >= core::MIN_NAME_LEVELS).then_some(joined)
    };
    let word = |i: usize| segments[i].as_str();
    if n >= 3
        && word(n - 2) == "groups"
        && let Some(stream) = name(n - 2)
    {
        return Some(StreamRoute::Group {
            stream,
            group: segments[n - 1].clone(),
            action: GroupAction::Describe,
        });
    }
    if n >= 4 && word(n - 3) == "groups" {
        let action = match word(n - 1) {
            "fetch" => Some(GroupAction::Fetch),
            "ack" => Some(GroupAction::Ack),
            "nack" => Some(GroupAction::Nack),
            _ => None,
        };
        if let (Some(action), Some(stream)) = (action, name(n - 3)) {
            return Some(StreamRoute::Group {
                stream,
                group: segments[n - 2].clone(),
                action,
            });
        }
    }
    if n >= 2 {
        match (word(n - 1), name(n - 1)) {
            ("messages", Some(stream)) => return Some(StreamRoute::Messages(stream)),
            ("events", Some(pattern)) => return Some(StreamRoute::Events(pattern)),
            // `tenant/>`: a pattern may be shorter than a name.
            ("events", None) if n >= 3 && word(n - 2) == ">" => {
                return Some(StreamRoute::Events(segments[..n - 1].join("/")));
            }
            _ => {}
        }
    }
    Some(StreamRoute::Stream(segments.join("/")))
}

/// Decodes `%XX` escapes; `None` when one is malformed.
pub fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// `text` as a stream name, or 400 naming it.
pub fn stream_name(text: &str) -> Result<StreamName, ApiError> {
    StreamName::new(text).map_err(|error| {
        ApiError::bad_request("invalid_stream_name", error.to_string()).value(text)
    })
}

fn not_found(name: &str) -> ApiError {
    ApiError::not_found("stream_not_found", format!("stream {name} does not exist")).value(name)
}

/// Every route under `/v1/streams/`.
pub async fn route(State(shared): State<Shared>, request: Request) -> Response {
    let gateway = &shared.gateway;
    let rest = request
        .uri()
        .path()
        .strip_prefix("/v1/streams/")
        .unwrap_or_default()
        .to_owned();
    let Some(route) = parse_route(&rest) else {
        return ApiError::bad_request("invalid_path", "the path has a malformed %-escape")
            .value(rest)
            .into_response();
    };
    let (parts, body) = request.into_parts();
    let method = parts.method;
    let query = parts.uri.query().unwrap_or_default();
    let takes_query = matches!(route, StreamRoute::Messages(_) | StreamRoute::Events(_));
    if !takes_query && let Err(refused) = no_query(query) {
        return refused.into_response();
    }
    let result = match (route, &method) {
        (StreamRoute::Stream(name), &Method::GET | &Method::HEAD) => describe(gateway, &name),
        (StreamRoute::Stream(name), &Method::PUT) => {
            create(gateway, &name, &parts.headers, body).await
        }
        (StreamRoute::Stream(name), &Method::DELETE) => delete(gateway, &name).await,
        (StreamRoute::Stream(_), method) => {
            Err(ApiError::wrong_method(method, "GET, HEAD, PUT, DELETE"))
        }
        (StreamRoute::Messages(name), &Method::POST) => {
            publish(gateway, &name, query, &parts.headers, body).await
        }
        (StreamRoute::Messages(name), &Method::GET | &Method::HEAD) => {
            read(gateway, &name, query).await
        }
        (StreamRoute::Messages(_), method) => {
            Err(ApiError::wrong_method(method, "GET, HEAD, POST"))
        }
        (StreamRoute::Events(pattern), &Method::GET) => {
            events::subscribe(&shared, &pattern, query, &parts.headers)
        }
        (StreamRoute::Events(_), method) => Err(ApiError::wrong_method(method, "GET")),
        (
            StreamRoute::Group {
                stream,
                group,
                action,
            },
            method,
        ) => {
            consumers::route(
                &shared,
                &stream,
                &group,
                action,
                method,
                &parts.headers,
                body,
            )
            .await
        }
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    prefix: Option<String>,
    after: Option<String>,
    limit: Option<String>,
}

/// `GET /v1/streams`: streams in name order, a page at a time.
pub async fn list(State(shared): State<Shared>, uri: Uri) -> Response {
    list_page(&shared.gateway.broker, uri.query().unwrap_or_default())
        .unwrap_or_else(IntoResponse::into_response)
}

fn list_page(broker: &core::Broker, query: &str) -> ApiResult {
    let query: ListQuery = parse_query(query)?;
    let (prefix, after) = (query.prefix.as_deref(), query.after.as_deref());
    let limit = query_number(query.limit.as_deref(), "limit", 1..=10_000, "invalid_limit")?
        .map_or(1000, |n| n as usize);
    let mut streams = Vec::new();
    let mut more = false;
    for info in broker.list_streams() {
        let name = info.name.as_str();
        if prefix.is_some_and(|p| !name.starts_with(p)) || after.is_some_and(|a| name <= a) {
            continue;
        }
        if streams.len() == limit {
            more = true;
            break;
        }
        streams.push(describe_json(broker, &info));
    }
    Ok(json::ok(&json!({ "streams": streams, "more": more })))
}

fn describe_json(broker: &core::Broker, info: &core::StreamInfo) -> Value {
    crate::client_cmd::streams::to_json(&admin::stream_info(broker, info))
}

fn describe(gateway: &Gateway, name: &str) -> ApiResult {
    let stream = stream_name(name)?;
    let info = gateway
        .broker
        .describe(&stream)
        .ok_or_else(|| not_found(name))?;
    Ok(json::ok(&describe_json(&gateway.broker, &info)))
}

/// `PUT /v1/streams/{stream}`: creates it with the settings of the JSON body (the fields
/// of a stream's description: durability, retention, de-duplication, policy).
async fn create(gateway: &Gateway, name: &str, headers: &HeaderMap, body: Body) -> ApiResult {
    let stream = stream_name(name)?;
    let fields = json_body(gateway, headers, body).await?;
    let settings = settings(&fields)?;
    let defaults = gateway.broker.config().default_stream;
    let config = admin::stream_config(&settings, defaults)
        .map_err(|message| ApiError::bad_request("invalid_settings", message))?;
    let broker = gateway.broker.clone();
    let created = tokio::task::spawn_blocking(move || {
        broker
            .create_stream(&stream, config)
            .map(|handle| handle.info())
    })
    .await
    .map_err(|error| ApiError::internal(error.to_string()))?;
    match created {
        Ok(info) => Ok(json::response(
            StatusCode::CREATED,
            &describe_json(&gateway.broker, &info),
        )),
        Err(failure) => {
            let (status, code) = match &failure {
                CreateStreamError::Exists { .. } => (StatusCode::CONFLICT, "stream_exists"),
                CreateStreamError::TooManyStreams { .. }
                | CreateStreamError::TooManyDurable { .. } => {
                    (StatusCode::CONFLICT, "limit_exceeded")
                }
                CreateStreamError::NoStorage { .. } => (StatusCode::CONFLICT, "no_storage"),
                CreateStreamError::Config { .. } => (StatusCode::BAD_REQUEST, "invalid_settings"),
                _ => (StatusCode::INTERNAL_SERVER_ERROR, "storage"),
            };
            Err(ApiError::new(status, code, failure.to_string()).value(name))
        }
    }
}

/// The stream settings a create body asks for; unknown fields are refused.
fn settings(fields: &Map<String, Value>) -> Result<StreamSettings, ApiError> {
    const KNOWN: [&str; 7] = [
        "durability",
        "max_age_ms",
        "max_bytes",
        "max_messages",
        "keep_unacked",
        "dedupe_window_ms",
        "policy",
    ];
    json::only(fields, &KNOWN, "a stream's settings")?;
    let invalid = |field: &str, message: String, value: &str| {
        ApiError::bad_request("invalid_settings", format!("{field}: {message}")).value(value)
    };
    let storage = match json::string(fields, "durability")? {
        Some(text) => parse_storage(text).map_err(|m| invalid("durability", m, text))?,
        None => quiver_wire::Storage::Live,
    };
    let policy = match json::string(fields, "policy")? {
        Some(text) => parse_policy(text).map_err(|m| invalid("policy", m, text))?,
        None => quiver_wire::Policy::Default,
    };
    let keep_unacked = match fields.get("keep_unacked") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(invalid(
                "keep_unacked",
                "must be true or false".into(),
                &other.to_string(),
            ));
        }
    };
    // A retention bound of 0 would keep nothing: absent is no bound (the wire's 0).
    let bound = |name| json::number(fields, name, 0, 1, u64::MAX);
    Ok(StreamSettings {
        storage,
        max_age_ms: bound("max_age_ms")?,
        max_bytes: bound("max_bytes")?,
        max_messages: bound("max_messages")?,
        keep_unacked,
        dedupe_window_ms: json::number(fields, "dedupe_window_ms", 0, 0, u64::MAX)?,
        policy,
    })
}

async fn delete(gateway: &Gateway, name: &str) -> ApiResult {
    let stream = stream_name(name)?;
    let broker = gateway.broker.clone();
    let deleted = tokio::task::spawn_blocking(move || broker.delete_stream(&stream))
        .await
        .map_err(|error| ApiError::internal(error.to_string()))?;
    match deleted {
        Ok(()) => Ok(json::ok(&json!({ "stream": name, "deleted": true }))),
        Err(DeleteStreamError::NotFound { .. }) => Err(not_found(name)),
        Err(failure) => Err(ApiError::internal(failure.to_string()).value(name)),
    }
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PublishQuery {
    ack: Option<String>,
}

/// `POST /v1/streams/{stream}/messages`.
async fn publish(
    gateway: &Gateway,
    name: &str,
    query: &str,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult {
    let stream = stream_name(name)?;
    let query: PublishQuery = parse_query(query)?;
    let ack = match query.ack.as_deref() {
        None | Some("accepted") => Ack::Accepted,
        Some("none") => Ack::None,
        Some("committed") => Ack::Committed,
        Some(other) => {
            return Err(ApiError::bad_request(
                "invalid_ack",
                "ack must be none, accepted or committed",
            )
            .value(other));
        }
    };
    let common = message_headers(headers)?;
    let media = media_type(headers);
    let body = read_body(gateway, headers, body).await?;
    let messages = match media.as_str() {
        "application/x-ndjson" => parse_batch(&body, &common)?,
        "application/json" => {
            if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(&body) {
                return Err(ApiError::bad_request(
                    "invalid_json",
                    format!("the body is declared JSON but is not: {error}"),
                )
                .value(json::truncated(&String::from_utf8_lossy(&body))));
            }
            vec![core::Message {
                payload: body,
                headers: common,
            }]
        }
        _ => vec![core::Message {
            payload: body,
            headers: common,
        }],
    };
    let handle = gateway
        .broker
        .stream(&stream)
        .map_err(|e| publish_error(&e))?;
    let receipt = handle
        .publish(messages, ack, None)
        .await
        .map_err(|e| publish_error(&e))?;
    // Built by hand: this is the gateway's hottest reply (a name needs no JSON escaping).
    let ack_name = match ack {
        Ack::None => "none",
        Ack::Accepted => "accepted",
        _ => "committed",
    };
    let mut reply = format!(
        "{{\"stream\":\"{name}\",\"ack\":\"{ack_name}\",\"first_offset\":{},\"count\":{},\"duplicates\":{}",
        receipt.first_sequence, receipt.count, receipt.duplicates
    );
    if receipt.count > 0 {
        let _ = write!(
            reply,
            ",\"last_offset\":{}",
            receipt.first_sequence + receipt.count - 1
        );
    }
    reply.push('}');
    let status = if ack == Ack::None {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok(json::raw(status, reply))
}

/// `Quiver-Header-<key>` request headers as message headers, and `Quiver-Msg-Id` as the
/// de-duplication id.
fn message_headers(headers: &HeaderMap) -> Result<Vec<core::Header>, ApiError> {
    let mut out = Vec::new();
    for (name, value) in headers {
        let name = name.as_str();
        let key = if let Some(key) = name.strip_prefix(HEADER_PREFIX) {
            key
        } else if name.eq_ignore_ascii_case(core::durable::MSG_ID_HEADER) {
            core::durable::MSG_ID_HEADER
        } else {
            continue;
        };
        if key.is_empty() {
            return Err(ApiError::bad_request(
                "invalid_header",
                "a Quiver-Header- header needs a key after the prefix",
            )
            .value(name));
        }
        out.push(core::Header {
            key: Bytes::copy_from_slice(key.as_bytes()),
            value: Bytes::copy_from_slice(value.as_bytes()),
        });
    }
    Ok(out)
}

/// An NDJSON batch: one message per non-empty line, each
/// `{"payload": <string or JSON>, "payload_base64": "...", "headers": {"k": "v"}}`. The
/// whole batch is checked before anything is published.
pub fn parse_batch(body: &[u8], common: &[core::Header]) -> Result<Vec<core::Message>, ApiError> {
    if let Some(id) = core::durable::message_id(common) {
        return Err(ApiError::bad_request(
            "invalid_header",
            "Quiver-Msg-Id names one message: give each line of a batch its own, in its headers",
        )
        .value(String::from_utf8_lossy(id)));
    }
    let mut messages = Vec::new();
    for (index, line) in body.split(|b| *b == b'\n').enumerate() {
        let line_no = index + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = |message: String| {
            ApiError::bad_request("invalid_ndjson", format!("line {line_no}: {message}"))
                .value(json::truncated(&String::from_utf8_lossy(line)))
        };
        let fields = match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(fields)) => fields,
            Ok(_) => return Err(bad("a line must be a JSON object with a payload".into())),
            Err(error) => return Err(bad(format!("not JSON: {error}"))),
        };
        if messages.len() == MAX_PUBLISH_EVENTS {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_many_messages",
                format!("a batch holds at most {MAX_PUBLISH_EVENTS} messages"),
            )
            .value(format!("line {line_no}")));
        }
        const LINE_FIELDS: [&str; 3] = ["payload", "payload_base64", "headers"];
        if let Some(unknown) = json::unknown(&fields, &LINE_FIELDS) {
            return Err(bad(format!(
                "a line has no field {unknown:?}; its fields are {}",
                LINE_FIELDS.join(", ")
            )));
        }
        let payload = match (fields.get("payload"), fields.get("payload_base64")) {
            (Some(Value::String(text)), None) => Bytes::copy_from_slice(text.as_bytes()),
            (Some(value), None) => Bytes::from(value.to_string()),
            (None, Some(Value::String(text))) => {
                Bytes::from(json::base64("payload_base64", text).map_err(|e| bad(e.message))?)
            }
            _ => {
                return Err(bad(
                    "give exactly one of payload and payload_base64 (a string)".into(),
                ));
            }
        };
        let mut headers = common.to_vec();
        match fields.get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (key, value) in map {
                    let Value::String(value) = value else {
                        return Err(bad(format!("header {key:?} must be a string")));
                    };
                    // A line's header replaces the request's of the same name (so a
                    // line's own Quiver-Msg-Id is its id).
                    headers.retain(|h| !h.key.eq_ignore_ascii_case(key.as_bytes()));
                    headers.push(core::Header {
                        key: Bytes::copy_from_slice(key.as_bytes()),
                        value: Bytes::copy_from_slice(value.as_bytes()),
                    });
                }
            }
            Some(_) => return Err(bad("headers must be an object of strings".into())),
        }
        messages.push(core::Message { payload, headers });
    }
    if messages.is_empty() {
        return Err(ApiError::bad_request(
            "empty_batch",
            "the NDJSON body holds no message",
        ));
    }
    Ok(messages)
}

pub fn publish_error(error: &PublishError) -> ApiError {
    let (status, code, retry) = match error {
        PublishError::Empty { .. } => (StatusCode::BAD_REQUEST, "empty", None),
        PublishError::MsgIdTooLong { .. } => (StatusCode::BAD_REQUEST, "invalid_header", None),
        PublishError::TooManyMessages { .. } | PublishError::MessageTooLarge { .. } => {
            (StatusCode::PAYLOAD_TOO_LARGE, "too_large", None)
        }
        PublishError::TooManyStreams { .. } => (StatusCode::CONFLICT, "limit_exceeded", None),
        PublishError::NotDurable { .. } => (StatusCode::CONFLICT, "not_durable", None),
        PublishError::Budget { .. } | PublishError::Blocked { .. } => {
            (StatusCode::SERVICE_UNAVAILABLE, "overloaded", Some(1))
        }
        PublishError::Deleted { .. } => (StatusCode::NOT_FOUND, "stream_not_found", None),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "storage", None),
    };
    let mut api = ApiError::new(status, code, error.to_string());
    api.retry_after = retry;
    api
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadQuery {
    from: Option<String>,
    limit: Option<String>,
}

/// `GET /v1/streams/{stream}/messages?from=&limit=`.
async fn read(gateway: &Gateway, name: &str, query: &str) -> ApiResult {
    let stream = stream_name(name)?;
    let query: ReadQuery = parse_query(query)?;
    let start = match &query.from {
        None => StartAt::Earliest,
        Some(text) => start_at("from", text)?,
    };
    let limit = query_number(
        query.limit.as_deref(),
        "limit",
        1..=MAX_READ_LIMIT,
        "invalid_limit",
    )?
    .unwrap_or(100);
    let handle = gateway
        .broker
        .existing(&stream)
        .ok_or_else(|| not_found(name))?;
    let page =
        tokio::task::spawn_blocking(move || handle.read(start, limit as usize, MAX_READ_BYTES))
            .await
            .map_err(|error| ApiError::internal(error.to_string()))?
            .map_err(|error| match error {
                HistoryError::NotDurable { .. } => {
                    ApiError::new(StatusCode::CONFLICT, "not_durable", error.to_string())
                        .value(name)
                }
                other => ApiError::internal(other.to_string()).value(name),
            })?;
    let messages: Vec<Value> = page
        .events
        .iter()
        .map(|(offset, event)| {
            let mut object = Map::new();
            object.insert("offset".into(), json!(offset));
            object.insert("timestamp_ms".into(), json!(event.timestamp_ms));
            json::put_message(&mut object, &event.payload, &event.headers);
            Value::Object(object)
        })
        .collect();
    let body = json!({
        "stream": name,
        "first_offset": page.first_offset,
        "end_offset": page.end_offset,
        "start": page.start,
        "skipped": page.skipped,
        "next": page.next,
        "messages": messages,
    });
    let mut response = json::ok(&body);
    let link = format!(
        "</v1/streams/{name}/messages?from={}&limit={limit}>; rel=\"next\"",
        page.next
    );
    if let Ok(value) = HeaderValue::from_str(&link) {
        response.headers_mut().insert(header::LINK, value);
    }
    Ok(response)
}

/// A start position as the API takes it: `earliest`, `latest`, an offset, an RFC 3339
/// time or how long ago.
pub fn start_at(field: &str, text: &str) -> Result<StartAt, ApiError> {
    use quiver_client::StartPosition;
    match parse_position(text, now_ms()) {
        Ok(StartPosition::Earliest) => Ok(StartAt::Earliest),
        Ok(StartPosition::Latest) => Ok(StartAt::Latest),
        Ok(StartPosition::Offset(offset)) => Ok(StartAt::Offset(offset)),
        Ok(StartPosition::TimestampMs(ms)) => Ok(StartAt::TimestampMs(ms)),
        Err(_) => Err(ApiError::bad_request(
            "invalid_position",
            format!("{field} must be {POSITION_HELP}"),
        )
        .value(text)),
    }
}

/// A whole number of query parameter `name` within `range`; anything else is `code`,
/// naming the range. `None` when the parameter is absent.
pub fn query_number(
    text: Option<&str>,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
    code: &'static str,
) -> Result<Option<u64>, ApiError> {
    let Some(text) = text else {
        return Ok(None);
    };
    Some(text)
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|n| range.contains(n))
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(
                code,
                format!(
                    "{name} must be a whole number from {} to {}",
                    range.start(),
                    range.end()
                ),
            )
            .value(text)
        })
}

/// Refuses any query string on a route that takes no parameters.
pub fn no_query(query: &str) -> Result<(), ApiError> {
    if query.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request("invalid_query", "this route takes no query parameters").value(query))
}

/// The query string as `T`, or 400 naming what is wrong.
pub fn parse_query<T: serde::de::DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    serde_urlencoded::from_str(query).map_err(|error| {
        ApiError::bad_request("invalid_query", format!("the query string: {error}")).value(query)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escape_is_two_hex_digits() {
        assert_eq!(percent_decode("a%2Fb%ff").as_deref(), Some(&b"a/b\xff"[..]));
        for bad in ["%+1x", "%-1", "%1", "%g0", "% 1"] {
            assert_eq!(percent_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn routes_are_read_off_the_end_of_the_path() {
        let stream = |s: &str| Some(StreamRoute::Stream(s.to_owned()));
        assert_eq!(parse_route("a/b/c"), stream("a/b/c"));
        assert_eq!(
            parse_route("a/b/c/messages"),
            Some(StreamRoute::Messages("a/b/c".into()))
        );
        assert_eq!(
            parse_route("a/b/messages"),
            stream("a/b/messages"),
            "a/b is no name"
        );
        assert_eq!(
            parse_route("acme/%3E/events"),
            Some(StreamRoute::Events("acme/>".into()))
        );
        assert_eq!(
            parse_route("a/b/c/groups/g/fetch"),
            Some(StreamRoute::Group {
                stream: "a/b/c".into(),
                group: "g".into(),
                action: GroupAction::Fetch
            })
        );
        assert_eq!(
            parse_route("a/b/c/groups/g"),
            Some(StreamRoute::Group {
                stream: "a/b/c".into(),
                group: "g".into(),
                action: GroupAction::Describe
            })
        );
        assert_eq!(parse_route("a/b/%zz"), None, "a malformed escape");
        // A group may be called `messages`; an escaped `/` reaches the stream instead.
        assert_eq!(
            parse_route("a/b/c/groups/messages"),
            Some(StreamRoute::Group {
                stream: "a/b/c".into(),
                group: "messages".into(),
                action: GroupAction::Describe
            })
        );
        assert_eq!(
            parse_route("a/b/c%2Fgroups/messages"),
            Some(StreamRoute::Messages("a/b/c/groups".into()))
        );
        assert_eq!(
            parse_route("a/b/groups/events"),
            Some(StreamRoute::Events("a/b/groups".into()))
        );
    }

    #[test]
    fn route_labels_match_the_routes() {
        use super::super::stats::classify;
        let cases = [
            (Method::POST, "/v1/streams/a/b/c/messages", "publish"),
            (Method::GET, "/v1/streams/a/b/c/messages", "read"),
            (Method::GET, "/v1/streams/a/b/messages", "stream_describe"),
            (Method::GET, "/v1/streams/acme/%3E/events", "events"),
            (Method::POST, "/v1/streams/a/b/c/groups/g/ack", "group_ack"),
            (Method::GET, "/v1/streams/a/b/c/groups/g", "group_describe"),
            (Method::PUT, "/v1/streams/a/b/c", "stream_create"),
            (Method::DELETE, "/v1/cache/0/k", "cache_delete"),
            (Method::GET, "/health", "health"),
            (Method::GET, "/elsewhere", "other"),
        ];
        for (method, path, label) in cases {
            assert_eq!(classify(&method, path), label, "{method} {path}");
        }
    }
}
