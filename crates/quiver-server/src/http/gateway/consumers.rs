//! Consumer groups over REST: pull consumers.
//!
//! A consumer is a named member of a stream's group that the gateway keeps between
//! requests. It is a *pull* member: the group leases it messages only while a fetch asks
//! for them, so a message's ack wait starts when a fetch is about to return it. A fetch
//! returns what is ready at once, or waits up to `wait_ms` for the first message. Acks and
//! nacks name the consumer and the offsets. A consumer that makes no request for
//! `http.consumer_idle` leaves its group, and what it held goes to the others.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode};
use quiver_core::streams::groups::MAX_IN_FLIGHT;
use quiver_core::streams::{
    EndReason, GroupAcker, GroupDelivery, GroupError, GroupEvent, GroupMember, JoinOptions,
    Pattern, StartAt, StreamName,
};
use serde_json::{Map, Value, json};

use super::streams::{GroupAction, start_at, stream_name};
use super::{ApiError, ApiResult, Gateway, json, json_body};
use crate::serve::state::{Readiness, ServerState};

/// Most consumers the gateway keeps at once.
pub const MAX_CONSUMERS: usize = 10_000;
/// The consumer a request that names none uses.
const DEFAULT_CONSUMER: &str = "http";
/// How long a fetch may wait at most (`wait_ms`).
const MAX_WAIT: Duration = Duration::from_secs(60);
/// How long a fetch waits for messages the group has waiting, whatever its `wait_ms`.
const DISPATCH_GRACE: Duration = Duration::from_millis(500);
/// Most characters of a consumer name.
const MAX_CONSUMER_NAME: usize = 128;

type Key = (StreamName, String, String);

/// One consumer: its membership (behind an async lock, held by a fetch while it waits) and
/// its acker (usable meanwhile).
struct Entry {
    pull: Arc<tokio::sync::Mutex<Pull>>,
    acker: GroupAcker,
    /// Ms since the gateway started, at its last request.
    used: AtomicU64,
}

impl Entry {
    /// Marks the consumer used now (requests stamp it when they start and end).
    fn touch(&self, consumers: &Consumers) {
        self.used.store(consumers.now_ms(), Ordering::Relaxed);
    }
}

struct Pull {
    member: GroupMember,
    /// Messages received beyond what a fetch could return, for the next one.
    kept: VecDeque<GroupEvent>,
    ended: Option<EndReason>,
}

/// The gateway's consumers.
pub struct Consumers {
    idle: Option<Duration>,
    started: Instant,
    entries: Mutex<HashMap<Key, Arc<Entry>>>,
}

impl std::fmt::Debug for Consumers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumers")
            .field("count", &self.count())
            .finish_non_exhaustive()
    }
}

impl Consumers {
    pub fn new(idle: Option<Duration>) -> Self {
        Self {
            idle,
            started: Instant::now(),
            entries: Mutex::default(),
        }
    }

    pub fn count(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn find(&self, key: &Key) -> Option<Arc<Entry>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = entries.get(key).cloned()?;
        entry.used.store(self.now_ms(), Ordering::Relaxed);
        Some(entry)
    }

    /// Drops consumers idle longer than `idle` (not one a fetch holds).
    fn sweep(&self) {
        let Some(idle) = self.idle else {
            return;
        };
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let now = self.now_ms();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // An entry a request holds (another reference) is in use, whatever its stamp.
        entries.retain(|_, entry| {
            now.saturating_sub(entry.used.load(Ordering::Relaxed)) < idle_ms
                || Arc::strong_count(entry) > 1
        });
    }

    fn remove(&self, key: &Key) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// The consumer `key`, joining the group (creating it at `start` if needed) when it is
    /// new.
    async fn get_or_join(
        &self,
        gateway: &Gateway,
        key: &Key,
        start: StartAt,
    ) -> Result<Arc<Entry>, ApiError> {
        self.sweep();
        if let Some(entry) = self.find(key) {
            return Ok(entry);
        }
        if self.count() >= MAX_CONSUMERS {
            return Err(ApiError::unavailable(
                "too_many_consumers",
                format!(
                    "the gateway keeps at most {MAX_CONSUMERS} consumers; delete idle ones or wait for http.consumer_idle"
                ),
                1,
            ));
        }
        let (stream, group, consumer) = key.clone();
        let broker = gateway.broker.clone();
        let options = JoinOptions {
            member: consumer,
            max_in_flight: None,
            create: None,
            start,
            pull: true,
            limit: None,
        };
        let pattern = Pattern::new(stream.as_str())
            .map_err(|e| ApiError::bad_request("invalid_stream_name", e.to_string()))?;
        // Creating a group writes the catalog: on the blocking pool.
        let member =
            tokio::task::spawn_blocking(move || broker.join_group(pattern, &group, options))
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?
                .map_err(|e| group_error(&e))?;
        let entry = Arc::new(Entry {
            acker: member.acker(),
            pull: Arc::new(tokio::sync::Mutex::new(Pull {
                member,
                kept: VecDeque::new(),
                ended: None,
            })),
            used: AtomicU64::new(self.now_ms()),
        });
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // Another request may have joined the same consumer meanwhile: keep the first.
        Ok(Arc::clone(entries.entry(key.clone()).or_insert(entry)))
    }
}

pub fn group_error(error: &GroupError) -> ApiError {
    let (status, code) = match error {
        GroupError::InvalidName { .. } => (StatusCode::BAD_REQUEST, "invalid_group_name"),
        GroupError::NoStream { .. } => (StatusCode::NOT_FOUND, "stream_not_found"),
        GroupError::NoGroup { .. } => (StatusCode::NOT_FOUND, "group_not_found"),
        GroupError::NotMember { .. } => (StatusCode::NOT_FOUND, "consumer_not_found"),
        GroupError::NotDurable { .. } => (StatusCode::CONFLICT, "not_durable"),
        GroupError::NotHeld { .. } => (StatusCode::CONFLICT, "not_held"),
        GroupError::Storage { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "storage"),
        _ => (StatusCode::BAD_REQUEST, "invalid_request"),
    };
    let value = match error {
        GroupError::InvalidName { name } => Some(name.clone()),
        GroupError::NoStream { stream } | GroupError::NotDurable { stream } => {
            Some(stream.to_string())
        }
        GroupError::NoGroup { group, .. } | GroupError::NotMember { group, .. } => {
            Some(group.clone())
        }
        GroupError::NotHeld { offset, .. } | GroupError::PastEnd { offset, .. } => {
            Some(offset.to_string())
        }
        GroupError::MemberInFlight { max_in_flight } => Some(max_in_flight.to_string()),
        _ => None,
    };
    let refused = ApiError::new(status, code, error.to_string());
    match value {
        Some(value) => refused.value(value),
        None => refused,
    }
}

/// Every route under `/v1/streams/{stream}/groups/{group}`.
pub async fn route(
    shared: &ServerState,
    stream: &str,
    group: &str,
    action: GroupAction,
    method: &Method,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult {
    let gateway = &shared.gateway;
    let name = stream_name(stream)?;
    let expected = if action == GroupAction::Describe {
        Method::GET
    } else {
        Method::POST
    };
    if method != expected && !(action == GroupAction::Describe && method == Method::HEAD) {
        let allow = if action == GroupAction::Describe {
            "GET, HEAD"
        } else {
            "POST"
        };
        return Err(ApiError::wrong_method(method, allow));
    }
    if action == GroupAction::Describe {
        let info = gateway
            .broker
            .group_info(&name, group)
            .map_err(|e| group_error(&e))?;
        let summary = crate::native::groups::summary(info);
        return Ok(json::ok(&crate::client_cmd::groups::to_json(
            stream, &summary,
        )));
    }
    let fields = json_body(gateway, headers, body).await?;
    match action {
        GroupAction::Fetch => {
            json::only(&fields, &["consumer", "max", "wait_ms", "start"], "a fetch")?
        }
        GroupAction::Ack => json::only(&fields, &["consumer", "offsets"], "an ack")?,
        GroupAction::Nack => json::only(&fields, &["consumer", "offsets", "delay_ms"], "a nack")?,
        GroupAction::Describe => {}
    }
    let consumer = match json::string(&fields, "consumer")? {
        None => DEFAULT_CONSUMER.to_owned(),
        Some(text)
            if !text.is_empty()
                && text.chars().count() <= MAX_CONSUMER_NAME
                && !text.chars().any(char::is_control) =>
        {
            text.to_owned()
        }
        Some(text) => {
            return Err(ApiError::bad_request(
                "invalid_consumer",
                format!(
                    "a consumer name has 1 to {MAX_CONSUMER_NAME} characters, none of them a control character"
                ),
            )
            .value(json::truncated(text)));
        }
    };
    let key = (name.clone(), group.to_owned(), consumer);
    match action {
        GroupAction::Fetch => fetch(gateway, &shared.readiness, &key, &fields).await,
        GroupAction::Ack | GroupAction::Nack => settle(gateway, &key, action, &fields),
        GroupAction::Describe => unreachable!("answered above"),
    }
}

async fn fetch(
    gateway: &Gateway,
    readiness: &Readiness,
    key: &Key,
    fields: &Map<String, Value>,
) -> ApiResult {
    let max = json::number(fields, "max", 10, 1, u64::from(MAX_IN_FLIGHT))? as usize;
    let max_wait = u64::try_from(MAX_WAIT.as_millis()).unwrap_or(u64::MAX);
    let wait = Duration::from_millis(json::number(fields, "wait_ms", 0, 0, max_wait)?);
    let start = match json::string(fields, "start")? {
        Some(text) => start_at("start", text)?,
        None => StartAt::Earliest,
    };
    let consumers = &gateway.consumers;
    let entry = consumers.get_or_join(gateway, key, start).await?;
    let (stream, group, consumer) = key;
    let wait_until = tokio::time::Instant::now() + wait;
    // Another fetch of this consumer may hold it: wait no longer than this fetch's own wait.
    let Ok(held) = tokio::time::timeout_at(wait_until, entry.pull.lock()).await else {
        entry.touch(consumers);
        return Ok(json::ok(&json!({
            "stream": stream.as_str(), "group": group, "consumer": consumer, "messages": [],
        })));
    };
    let mut pull = Asking(held);
    let mut events: Vec<GroupEvent> = Vec::new();
    take_kept(&mut pull, &mut events, max);
    if events.len() < max && pull.ended.is_none() {
        pull.member
            .request(u32::try_from(max - events.len()).unwrap_or(u32::MAX));
        // Messages are waiting: give the group's dispatcher the time to lease them.
        let wait_until = if pull.member.has_waiting() {
            wait_until.max(tokio::time::Instant::now() + DISPATCH_GRACE)
        } else {
            wait_until
        };
        loop {
            // Whatever is ready now, then wait only while nothing is in hand.
            while events.len() < max
                && let Some(delivery) = pull.member.try_recv()
            {
                receive(&mut pull, delivery, &mut events, max);
            }
            if !events.is_empty() || pull.ended.is_some() {
                break;
            }
            // A drain ends the wait: the fetch answers with what it has (nothing).
            tokio::select! {
                received = tokio::time::timeout_at(wait_until, pull.member.recv()) => match received {
                    Ok(delivery) => receive(&mut pull, delivery, &mut events, max),
                    Err(_) => break,
                },
                () = readiness.wait_draining() => break,
            }
        }
    }
    // Leased to an earlier fetch that returned first: kept for this one, unless the lease
    // ran out meanwhile (then someone else may have it), and once per offset.
    events.retain(|event| pull.member.holds(stream, event.offset));
    let mut seen = std::collections::HashSet::new();
    events.reverse();
    events.retain(|event| seen.insert(event.offset));
    events.reverse();
    let ended = pull.ended.clone();
    drop(pull);
    entry.touch(consumers);
    if let Some(reason) = &ended {
        consumers.remove(key);
        // At shutdown a waiting fetch is answered with what it has, maybe nothing (the
        // drain's next requests are refused `draining`).
        if events.is_empty() && !matches!(reason, EndReason::Shutdown) {
            return Err(ended_error(reason));
        }
    }
    let messages: Vec<Value> = events
        .iter()
        .map(|event| {
            let mut object = Map::new();
            object.insert("offset".into(), json!(event.offset));
            object.insert("timestamp_ms".into(), json!(event.timestamp_ms));
            object.insert("deliveries".into(), json!(event.deliveries));
            json::put_message(&mut object, &event.payload, &event.headers);
            Value::Object(object)
        })
        .collect();
    Ok(json::ok(&json!({
        "stream": stream.as_str(),
        "group": group,
        "consumer": consumer,
        "messages": messages,
    })))
}

/// A consumer held by a fetch; however the fetch ends (a client that hangs up cancels
/// it), its credit goes back to zero, so nothing more is leased to it meanwhile.
struct Asking<'a>(tokio::sync::MutexGuard<'a, Pull>);

impl std::ops::Deref for Asking<'_> {
    type Target = Pull;

    fn deref(&self) -> &Pull {
        &self.0
    }
}

impl std::ops::DerefMut for Asking<'_> {
    fn deref_mut(&mut self) -> &mut Pull {
        &mut self.0
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.0.member.request(0);
    }
}

fn take_kept(pull: &mut Pull, events: &mut Vec<GroupEvent>, max: usize) {
    while events.len() < max {
        let Some(event) = pull.kept.pop_front() else {
            break;
        };
        events.push(event);
    }
}

fn receive(pull: &mut Pull, delivery: GroupDelivery, events: &mut Vec<GroupEvent>, max: usize) {
    match delivery {
        GroupDelivery::Batch(batch) => {
            pull.kept.extend(batch.events);
            take_kept(pull, events, max);
        }
        GroupDelivery::Ended(reason) => pull.ended = Some(reason),
    }
}

fn ended_error(reason: &EndReason) -> ApiError {
    match reason {
        EndReason::Shutdown => ApiError::unavailable("draining", reason.to_string(), 1),
        EndReason::StreamDeleted { stream } => {
            ApiError::not_found("stream_not_found", reason.to_string()).value(stream.to_string())
        }
        EndReason::GroupDeleted { group, .. } => {
            ApiError::not_found("group_not_found", reason.to_string()).value(group.clone())
        }
        _ => ApiError::internal(reason.to_string()),
    }
}

fn settle(
    gateway: &Gateway,
    key: &Key,
    action: GroupAction,
    fields: &Map<String, Value>,
) -> ApiResult {
    let offsets: Vec<u64> = match fields.get("offsets") {
        Some(Value::Array(items)) if items.len() <= MAX_IN_FLIGHT as usize => items
            .iter()
            .map(Value::as_u64)
            .collect::<Option<_>>()
            .ok_or_else(|| {
                ApiError::bad_request("invalid_offsets", "offsets must be whole numbers")
                    .value(json::truncated(&Value::Array(items.clone()).to_string()))
            })?,
        Some(other) => {
            return Err(ApiError::bad_request(
                "invalid_offsets",
                format!("offsets must be an array of at most {MAX_IN_FLIGHT} offsets"),
            )
            .value(json::truncated(&other.to_string())));
        }
        None => {
            return Err(ApiError::bad_request(
                "invalid_offsets",
                "give the offsets to settle: {\"offsets\": [..]}",
            ));
        }
    };
    let (stream, group, consumer) = key;
    let entry = gateway.consumers.find(key).ok_or_else(|| {
        ApiError::not_found(
            "consumer_not_found",
            format!("group {group} of {stream} has no consumer {consumer} (fetch first; an idle one leaves after http.consumer_idle)"),
        )
        .value(consumer.clone())
    })?;
    let settled = match action {
        GroupAction::Ack => entry.acker.ack(stream, &offsets),
        _ => {
            let max_delay = u64::try_from(quiver_core::streams::groups::MAX_NACK_DELAY.as_millis())
                .unwrap_or(u64::MAX);
            let delay = json::number(fields, "delay_ms", 0, 0, max_delay)?;
            entry
                .acker
                .nack(stream, &offsets, Duration::from_millis(delay))
        }
    };
    let count = settled.map_err(|e| group_error(&e))?;
    let field = if action == GroupAction::Ack {
        "acked"
    } else {
        "released"
    };
    Ok(json::ok(&json!({ field: count })))
}
