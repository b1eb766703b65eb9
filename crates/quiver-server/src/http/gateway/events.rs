//! Server-Sent Events: `GET /v1/streams/{pattern}/events`.
//!
//! One event per message: `id: <stream>@<offset>`, `event: message` (or `message.base64`
//! for a payload that is not UTF-8 text without carriage returns), the payload as `data:`
//! lines. `event: lag` says how many messages this client missed (its queue overflowed
//! under the stream's slow-subscriber policy); `event: resync` says that the position a
//! client asked for (or resumed from) is no longer stored, and how many messages it missed;
//! `event: end` says why the server ended the stream. Idle streams get a comment line every
//! `http.event_heartbeat`.
//!
//! `Last-Event-ID` (one or more `stream@offset`, comma-separated) resumes each named
//! durable stream just after that offset. The text of a batch's events is made once per
//! batch (its [`SSE_SLOT`] encoding) and shared by every client of the stream.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{BufMut, Bytes, BytesMut};
use quiver_core::streams::{
    Batch, Delivery, EncodingSlot, EndReason, Pattern, StartAt, StreamName, SubscribeError,
    SubscribeOptions, Subscription,
};
use serde_json::json;

use super::streams::{parse_query, start_at, stream_name};
use super::{ApiError, ApiResult, Shared};
use crate::http::admission::EventSlot;

/// The batch encoding slot of the event-stream text (native uses 0 and 1).
pub const SSE_SLOT: EncodingSlot = EncodingSlot::S3;
/// How long a client waits before it reconnects, sent as `retry:`.
const RETRY_MS: u64 = 1000;
/// Deliveries taken per wake-up.
const DELIVERIES_PER_WAKE: usize = 64;
/// Most streams one `Last-Event-ID` may name.
const MAX_RESUME_STREAMS: usize = 64;

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    from: Option<String>,
}

/// Opens an event stream.
pub fn subscribe(shared: &Shared, pattern: &str, query: &str, headers: &HeaderMap) -> ApiResult {
    let gateway = &shared.gateway;
    let pattern = Pattern::new(pattern).map_err(|error| {
        ApiError::bad_request("invalid_pattern", error.to_string()).value(pattern)
    })?;
    let query: EventsQuery = parse_query(query)?;
    let start = match &query.from {
        Some(text) => start_at("from", text)?,
        None => StartAt::Latest,
    };
    let mut resume = match headers.get("last-event-id") {
        Some(value) => parse_last_event_id(value.to_str().map_err(|_| {
            ApiError::bad_request(
                "invalid_last_event_id",
                "Last-Event-ID is stream@offset in visible ASCII, as the event ids are",
            )
            .value(super::json::truncated(&String::from_utf8_lossy(
                value.as_bytes(),
            )))
        })?)?,
        None => Vec::new(),
    };
    // A resume point past a stream's end (the stream was made again, or lost a tail it
    // had not synced): delivery goes on from the end, and a `resync` says so first.
    let mut initial = BytesMut::new();
    for (name, offset) in &mut resume {
        let end = gateway
            .broker
            .describe(name)
            .and_then(|info| info.durable)
            .map(|durable| durable.next_offset);
        if let Some(end) = end.filter(|end| *offset > *end) {
            notice(
                &mut initial,
                "resync",
                &json!({ "missed": 0, "stream": name.as_str(), "resume": *offset, "end": end }),
            );
            *offset = end;
        }
    }
    let slot = gateway.event_slots.take().ok_or_else(|| {
        ApiError::unavailable(
            "too_many_event_streams",
            format!(
                "{} event streams are open, the limit (http.max_event_streams)",
                gateway.event_slots.max()
            ),
            1,
        )
    })?;
    let resumed = start != StartAt::Latest || !resume.is_empty();
    let options = SubscribeOptions {
        start,
        resume,
        ..SubscribeOptions::default()
    };
    let subscription = gateway
        .broker
        .subscribe(pattern, options)
        .map_err(|error| subscribe_error(&error))?;
    let state = Streaming {
        subscription,
        _slot: slot,
        heartbeat: gateway.event_heartbeat,
        resumed,
        delivered: false,
        started: false,
        initial: initial.freeze(),
        done: false,
        deliveries: Vec::with_capacity(DELIVERIES_PER_WAKE),
    };
    let body = Body::from_stream(futures_util::stream::unfold(state, |mut state| async {
        let chunk = state.next().await?;
        Some((Ok::<Bytes, std::convert::Infallible>(chunk), state))
    }));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// `stream@offset[,stream@offset...]` as resume points (the offset after each).
pub fn parse_last_event_id(text: &str) -> Result<Vec<(StreamName, u64)>, ApiError> {
    let bad = |message: String| {
        ApiError::bad_request("invalid_last_event_id", message).value(super::json::truncated(text))
    };
    let mut resume = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if resume.len() == MAX_RESUME_STREAMS {
            return Err(bad(format!(
                "Last-Event-ID names at most {MAX_RESUME_STREAMS} streams"
            )));
        }
        let (name, offset) = item
            .rsplit_once('@')
            .ok_or_else(|| bad("Last-Event-ID is stream@offset, as the event ids are".into()))?;
        let offset: u64 = offset
            .parse()
            .map_err(|_| bad(format!("{offset:?} is not an offset")))?;
        resume.push((stream_name(name)?, offset.saturating_add(1)));
    }
    Ok(resume)
}

fn subscribe_error(error: &SubscribeError) -> ApiError {
    let (status, code) = match error {
        SubscribeError::TooManySubscriptions { .. } | SubscribeError::TooManyForStream { .. } => {
            (StatusCode::SERVICE_UNAVAILABLE, "too_many_subscriptions")
        }
        SubscribeError::NotDurable { .. } => (StatusCode::CONFLICT, "not_durable"),
        _ => (StatusCode::BAD_REQUEST, "invalid_subscription"),
    };
    let mut api = ApiError::new(status, code, error.to_string());
    if status == StatusCode::SERVICE_UNAVAILABLE {
        api.retry_after = Some(1);
    }
    match error {
        SubscribeError::NotDurable { pattern, .. }
        | SubscribeError::OffsetNeedsStream { pattern } => api.value(pattern.clone()),
        SubscribeError::PastEnd { offset, .. } => api.value(offset.to_string()),
        _ => api,
    }
}

struct Streaming {
    subscription: Subscription,
    _slot: EventSlot,
    heartbeat: Option<Duration>,
    /// The client asked for a position before the live point (or resumed).
    resumed: bool,
    /// A message was sent.
    delivered: bool,
    started: bool,
    /// Sent after `retry:` (resume points moved back to a stream's end).
    initial: Bytes,
    done: bool,
    deliveries: Vec<Delivery>,
}

impl Streaming {
    /// The next chunk of the body; `None` once the stream is over.
    async fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        if !self.started {
            self.started = true;
            let mut first = BytesMut::from(format!("retry: {RETRY_MS}\n\n").as_bytes());
            first.extend_from_slice(&self.initial);
            return Some(first.freeze());
        }
        let received = match self.heartbeat {
            Some(every) => {
                let recv = self
                    .subscription
                    .recv_many(&mut self.deliveries, DELIVERIES_PER_WAKE);
                tokio::time::timeout(every, recv).await.is_ok()
            }
            None => {
                self.subscription
                    .recv_many(&mut self.deliveries, DELIVERIES_PER_WAKE)
                    .await;
                true
            }
        };
        if !received {
            return Some(Bytes::from_static(b": heartbeat\n\n"));
        }
        let mut out = BytesMut::new();
        for delivery in self.deliveries.drain(..) {
            match delivery {
                Delivery::Batch(batch) => {
                    self.delivered = true;
                    out.extend_from_slice(&batch.encoded(SSE_SLOT, encode));
                }
                Delivery::Lag { missed } => {
                    let event = if self.resumed && !self.delivered {
                        "resync"
                    } else {
                        "lag"
                    };
                    notice(&mut out, event, &json!({ "missed": missed }));
                }
                Delivery::Ended(reason) => {
                    notice(
                        &mut out,
                        "end",
                        &json!({ "reason": end_code(&reason), "message": reason.to_string() }),
                    );
                    self.done = true;
                    break;
                }
            }
        }
        Some(out.freeze())
    }
}

fn end_code(reason: &EndReason) -> &'static str {
    match reason {
        EndReason::SlowConsumer { .. } => "slow_consumer",
        EndReason::Shutdown => "shutdown",
        EndReason::StreamDeleted { .. } => "stream_deleted",
        EndReason::Storage { .. } => "storage",
        _ => "ended",
    }
}

fn notice(out: &mut BytesMut, event: &str, data: &serde_json::Value) {
    out.put_slice(b"event: ");
    out.put_slice(event.as_bytes());
    out.put_slice(b"\ndata: ");
    out.put_slice(data.to_string().as_bytes());
    out.put_slice(b"\n\n");
}

/// A batch's events as event-stream text.
pub fn encode(batch: &Batch) -> Bytes {
    let stream = batch.stream().as_str();
    let mut out =
        BytesMut::with_capacity(batch.bytes() as usize + batch.len() * (stream.len() + 40));
    for (offset, event) in batch.iter() {
        out.put_slice(b"id: ");
        out.put_slice(stream.as_bytes());
        out.put_slice(format!("@{offset}\n").as_bytes());
        match std::str::from_utf8(&event.payload) {
            Ok(text) if !text.contains('\r') => {
                out.put_slice(b"event: message\n");
                for line in text.split('\n') {
                    out.put_slice(b"data: ");
                    out.put_slice(line.as_bytes());
                    out.put_u8(b'\n');
                }
            }
            _ => {
                out.put_slice(b"event: message.base64\ndata: ");
                out.put_slice(STANDARD.encode(&event.payload).as_bytes());
                out.put_u8(b'\n');
            }
        }
        out.put_u8(b'\n');
    }
    out.freeze()
}
