//! Streams over the native protocol: Publish and PublishBatch become broker publishes,
//! Subscribe starts a delivery task that turns the broker's deliveries into EventBatch,
//! Lag and SubscriptionEnded frames, Unsubscribe stops it.
//!
//! Event batch bodies are encoded once per broker batch into the batch's encoding slots
//! ([`WITH_HEADERS`] for subscribers granted headers when the batch has any,
//! [`WITHOUT_HEADERS`] otherwise) and shared by every subscription of every connection.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::{Bytes, BytesMut};
use quiver_core::streams::{
    self as core, Ack, Batch, Budget, Delivery, EncodingSlot, EndReason, Pattern, PublishError,
    QueueLimits, StartAt, StreamHandle, SubscribeError, SubscribeOptions, Subscription,
};
use quiver_wire::limits::HEADER_LEN;
use quiver_wire::{
    AckMode, EVENT_BATCH_PREFIX_LEN, ErrorCode, ErrorFrame, EventBatchEncoder, FLAG_HEADERS,
    FrameHeader, FrameType, Headers, Lag, PublishAck, StartPosition, StreamName, Subscribe,
    Subscribed, SubscriptionEnded, Unsubscribed, VERSION,
};
use tokio::task::JoinSet;

use super::NativeShared;
use super::deliveries::Deliveries;
use super::session::Session;
use super::writer::{Outgoing, WriteQueue};

/// Slot of the body encoded with headers (when any event has one).
const WITH_HEADERS: EncodingSlot = EncodingSlot::S0;
/// Slot of the body encoded without headers (clients that did not ask for HEADERS).
const WITHOUT_HEADERS: EncodingSlot = EncodingSlot::S1;

/// Deliveries taken from a subscription's queue per wake-up.
const DELIVERIES_PER_WAKE: usize = 64;

/// Stream handles one connection keeps so that its publishes skip the registry lookup;
/// beyond this many distinct streams the cache starts over.
const MAX_CACHED_STREAMS: usize = 1024;

/// `committed` publishes of one connection waiting for their log at once; the next one
/// waits (and the connection's reading with it) until one is acknowledged.
pub const MAX_PENDING_COMMITS: usize = 4096;

/// Per-connection publishing state.
#[derive(Debug)]
pub struct Publisher {
    budget: Budget,
    streams: HashMap<Bytes, StreamHandle>,
    /// The tasks that acknowledge `committed` publishes once stored.
    commits: JoinSet<()>,
    /// Their request ids, each removed before its ack is queued: a reused one is refused.
    pending_ids: Arc<Mutex<HashSet<u32>>>,
}

impl Publisher {
    pub fn new(shared: &NativeShared) -> Publisher {
        Publisher {
            budget: shared.broker.connection_budget(),
            streams: HashMap::new(),
            commits: JoinSet::new(),
            pending_ids: Arc::default(),
        }
    }

    /// Whether `request_id` names a `committed` publish not yet acknowledged.
    pub fn pending(&self, request_id: u32) -> bool {
        !self.commits.is_empty() && lock(&self.pending_ids).contains(&request_id)
    }

    /// Resolves once every `committed` publish has been acknowledged.
    pub async fn settle(&mut self) {
        while self.commits.join_next().await.is_some() {}
    }

    /// Publishes `messages` to `stream`; the reply to send now, if any. The publish is
    /// taken (sequenced) before this returns, so a connection's publishes keep their
    /// order; a `committed` one is acknowledged on `out` once its log has it.
    pub async fn publish(
        &mut self,
        shared: &NativeShared,
        out: &WriteQueue,
        request_id: u32,
        stream: &StreamName,
        ack: AckMode,
        messages: Vec<core::Message>,
    ) -> Option<Outgoing> {
        let handle = match self.handle(shared, stream) {
            Ok(handle) => handle,
            Err(error) => return Some(Outgoing::encode(request_id, &error)),
        };
        let ack_mode = match ack {
            AckMode::None => Ack::None,
            AckMode::Accepted => Ack::Accepted,
            AckMode::Committed => Ack::Committed,
        };
        let submitted = match handle.submit(messages, ack_mode, Some(&self.budget)).await {
            Ok(submitted) => submitted,
            Err(error) => return Some(Outgoing::encode(request_id, &publish_error(&error))),
        };
        match ack {
            AckMode::None => None,
            AckMode::Accepted => Some(publish_ack(request_id, submitted.receipt())),
            AckMode::Committed => {
                // Stored already when this publish led the append round itself.
                if let Some(outcome) = submitted.try_committed() {
                    return Some(match outcome {
                        Ok(receipt) => publish_ack(request_id, receipt),
                        Err(error) => Outgoing::encode(request_id, &publish_error(&error)),
                    });
                }
                while self.commits.try_join_next().is_some() {}
                if self.commits.len() >= MAX_PENDING_COMMITS {
                    self.commits.join_next().await;
                }
                let out = out.clone();
                let pending_ids = Arc::clone(&self.pending_ids);
                lock(&pending_ids).insert(request_id);
                self.commits.spawn(async move {
                    let reply = match submitted.committed().await {
                        Ok(receipt) => publish_ack(request_id, receipt),
                        Err(error) => Outgoing::encode(request_id, &publish_error(&error)),
                    };
                    lock(&pending_ids).remove(&request_id);
                    let _ = out.send(reply).await;
                });
                None
            }
        }
    }

    fn handle(
        &mut self,
        shared: &NativeShared,
        stream: &StreamName,
    ) -> Result<StreamHandle, ErrorFrame> {
        if let Some(handle) = self.streams.get(stream.as_bytes())
            && !handle.is_deleted()
        {
            return Ok(handle.clone());
        }
        let name = core::StreamName::new(stream.as_str())
            .map_err(|error| ErrorFrame::new(ErrorCode::INVALID_NAME, &error.to_string()))?;
        let handle = shared
            .broker
            .stream(&name)
            .map_err(|error| publish_error(&error))?;
        if self.streams.len() >= MAX_CACHED_STREAMS {
            self.streams.clear();
        }
        self.streams
            .insert(stream.as_bytes().clone(), handle.clone());
        Ok(handle)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A wire message as a broker message (header keys and values copied, payload shared).
pub fn message(headers: &Headers, payload: Bytes) -> core::Message {
    core::Message {
        payload,
        headers: headers
            .iter()
            .map(|(key, value)| core::Header {
                key: Bytes::copy_from_slice(key.as_bytes()),
                value: Bytes::copy_from_slice(value),
            })
            .collect(),
    }
}

fn publish_ack(request_id: u32, receipt: core::Receipt) -> Outgoing {
    Outgoing::encode(
        request_id,
        &PublishAck {
            first_sequence: receipt.first_sequence,
            count: u32::try_from(receipt.count).unwrap_or(u32::MAX),
        },
    )
}

fn publish_error(error: &PublishError) -> ErrorFrame {
    let code = match error {
        PublishError::Empty { .. }
        | PublishError::TooManyMessages { .. }
        | PublishError::MessageTooLarge { .. }
        | PublishError::TooManyStreams { .. } => ErrorCode::LIMIT_EXCEEDED,
        PublishError::NotDurable { .. } => ErrorCode::UNSUPPORTED,
        PublishError::MsgIdTooLong { .. } => ErrorCode::INVALID_ARGUMENT,
        PublishError::Budget { .. } | PublishError::Blocked { .. } => ErrorCode::OVERLOADED,
        PublishError::Storage { .. } => ErrorCode::STORAGE,
        PublishError::Deleted { .. } => ErrorCode::NOT_FOUND,
        _ => ErrorCode::INTERNAL,
    };
    ErrorFrame::new(code, &error.to_string())
}

/// Handles Subscribe: the reply is queued (Subscribed first, so that no delivery precedes
/// it), then the delivery task starts.
pub async fn subscribe(
    shared: &NativeShared,
    session: &mut Session,
    out: &WriteQueue,
    deliveries: &impl Deliveries,
    request_id: u32,
    request: Subscribe,
) {
    let (pattern, options) = match options(shared, session, &request) {
        Ok(options) => options,
        Err(error) => {
            let _ = out.send(Outgoing::encode(request_id, &error)).await;
            return;
        }
    };
    // The delivery queue is there before the subscription: a subscription with no reader
    // would fill up (and hold publishers under `block`) while a QUIC stream opens.
    let Some(id) = session.next_subscription_id() else {
        let error = ErrorFrame::new(
            ErrorCode::LIMIT_EXCEEDED,
            &format!(
                "this connection already has {} subscriptions, the limit",
                super::session::MAX_SUBSCRIPTIONS_PER_CONNECTION
            ),
        );
        let _ = out.send(Outgoing::encode(request_id, &error)).await;
        return;
    };
    let delivery_queue = match deliveries.open(id, out).await {
        Ok(queue) => queue,
        Err(reason) => {
            let error = ErrorFrame::new(
                ErrorCode::LIMIT_EXCEEDED,
                &format!("no delivery stream for the subscription: {reason}"),
            );
            let _ = out.send(Outgoing::encode(request_id, &error)).await;
            return;
        }
    };
    let subscription = match shared.broker.subscribe(pattern, options) {
        Ok(subscription) => subscription,
        Err(error) => {
            let error = subscribe_error(&error);
            let _ = out.send(Outgoing::encode(request_id, &error)).await;
            return;
        }
    };
    let reply = Outgoing::encode(
        request_id,
        &Subscribed {
            subscription_id: id,
        },
    );
    if out.send(reply).await.is_err() {
        return;
    }
    let delivery = Delivering {
        subscription_id: id,
        with_headers: session.granted(quiver_wire::Capabilities::HEADERS),
        max_batch_events: usize::from(request.max_batch_events),
        out: delivery_queue,
    };
    session.insert(id, tokio::spawn(delivery.run(subscription)));
}

/// What a Subscribe asks for, checked.
fn options(
    shared: &NativeShared,
    session: &Session,
    request: &Subscribe,
) -> Result<(Pattern, SubscribeOptions), ErrorFrame> {
    let durable = session.granted(quiver_wire::Capabilities::DURABLE);
    let start = match request.start {
        StartPosition::Latest => StartAt::Latest,
        _ if !durable => {
            return Err(ErrorFrame::new(
                ErrorCode::UNSUPPORTED,
                "starting before the live point needs the DURABLE capability; ask for it in Hello",
            ));
        }
        StartPosition::Earliest => StartAt::Earliest,
        StartPosition::Offset(offset) => StartAt::Offset(offset),
        StartPosition::TimestampMs(ms) => StartAt::TimestampMs(ms),
    };
    if !request.resume.is_empty() && !durable {
        return Err(ErrorFrame::new(
            ErrorCode::UNSUPPORTED,
            "RESUME needs the DURABLE capability; ask for it in Hello",
        ));
    }
    let pattern = Pattern::new(request.pattern.as_str())
        .map_err(|error| ErrorFrame::new(ErrorCode::INVALID_NAME, &error.to_string()))?;
    let queue = match request.queue_capacity {
        0 => None,
        events => Some(
            QueueLimits::new(
                events,
                shared.broker.config().default_stream.queue.max_bytes(),
            )
            .map_err(|error| {
                ErrorFrame::new(
                    ErrorCode::LIMIT_EXCEEDED,
                    &format!("queue capacity: {error}"),
                )
            })?,
        ),
    };
    let resume = request
        .resume
        .iter()
        .filter_map(|(name, offset)| Some((core::StreamName::new(name.as_str()).ok()?, *offset)))
        .collect();
    let options = SubscribeOptions {
        queue,
        start,
        group: request.group.clone(),
        resume,
    };
    Ok((pattern, options))
}

fn subscribe_error(error: &SubscribeError) -> ErrorFrame {
    let code = match error {
        SubscribeError::TooManySubscriptions { .. } | SubscribeError::TooManyForStream { .. } => {
            ErrorCode::LIMIT_EXCEEDED
        }
        SubscribeError::NotDurable { .. } => ErrorCode::UNSUPPORTED,
        _ => ErrorCode::INVALID_ARGUMENT,
    };
    ErrorFrame::new(code, &error.to_string())
}

/// The code a SubscriptionEnded carries for why the broker ended a subscription.
pub fn end_code(reason: &EndReason) -> ErrorCode {
    match reason {
        EndReason::SlowConsumer { .. } => ErrorCode::SLOW_CONSUMER,
        EndReason::Shutdown => ErrorCode::SHUTTING_DOWN,
        EndReason::StreamDeleted { .. } | EndReason::GroupDeleted { .. } => ErrorCode::NOT_FOUND,
        EndReason::Storage { .. } => ErrorCode::STORAGE,
        _ => ErrorCode::INTERNAL,
    }
}

/// Handles Unsubscribe: stops the delivery task (frames it queued are written first),
/// then answers.
pub async fn unsubscribe(session: &mut Session, out: &WriteQueue, request_id: u32, id: u32) {
    let reply = match session.remove(id) {
        Some(task) => {
            task.abort();
            let _ = task.await;
            Outgoing::encode(
                request_id,
                &Unsubscribed {
                    subscription_id: id,
                },
            )
        }
        None => Outgoing::encode(
            request_id,
            &ErrorFrame::new(
                ErrorCode::NOT_FOUND,
                &format!("no subscription {id} on this connection"),
            ),
        ),
    };
    let _ = out.send(reply).await;
}

/// One subscription's delivery task.
struct Delivering {
    subscription_id: u32,
    with_headers: bool,
    /// 0: the broker's batches as they are.
    max_batch_events: usize,
    out: WriteQueue,
}

impl Delivering {
    async fn run(self, mut subscription: Subscription) {
        let mut deliveries = Vec::with_capacity(DELIVERIES_PER_WAKE);
        loop {
            subscription
                .recv_many(&mut deliveries, DELIVERIES_PER_WAKE)
                .await;
            for delivery in deliveries.drain(..) {
                let sent = match delivery {
                    Delivery::Batch(batch) => self.batch(&batch).await,
                    Delivery::Lag { missed } => {
                        let lag = Lag {
                            subscription_id: self.subscription_id,
                            missed,
                        };
                        self.out.send(Outgoing::encode(0, &lag)).await.is_ok()
                    }
                    Delivery::Ended(reason) => {
                        self.end(&reason).await;
                        return;
                    }
                };
                if !sent {
                    return;
                }
            }
        }
    }

    async fn batch(&self, batch: &Arc<Batch>) -> bool {
        let whole = self.max_batch_events == 0 || batch.len() <= self.max_batch_events;
        if whole {
            let headers = self.with_headers && has_headers(batch, 0, batch.len());
            let slot = if headers {
                WITH_HEADERS
            } else {
                WITHOUT_HEADERS
            };
            let body = batch.encoded(slot, |batch| encode_body(batch, 0, batch.len(), headers));
            return self.send_body(body, headers).await;
        }
        let mut start = 0;
        while start < batch.len() {
            let end = (start + self.max_batch_events).min(batch.len());
            let headers = self.with_headers && has_headers(batch, start, end);
            let body = encode_body(batch, start, end, headers);
            if !self.send_body(body, headers).await {
                return false;
            }
            start = end;
        }
        true
    }

    /// Sends a body behind this subscription's prefix.
    async fn send_body(&self, body: Bytes, headers: bool) -> bool {
        if body.is_empty() {
            self.send_end(ErrorCode::INTERNAL, "an event batch could not be encoded")
                .await;
            return false;
        }
        let header = FrameHeader {
            version: VERSION,
            frame_type: FrameType::EventBatch,
            flags: if headers { FLAG_HEADERS } else { 0 },
            request_id: 0,
            payload_len: u32::try_from(body.len() + 4).unwrap_or(u32::MAX),
        };
        let mut prefix = [0u8; EVENT_BATCH_PREFIX_LEN];
        prefix[..HEADER_LEN].copy_from_slice(&header.to_bytes());
        prefix[HEADER_LEN..].copy_from_slice(&self.subscription_id.to_le_bytes());
        self.out
            .send(Outgoing::Batch { prefix, body })
            .await
            .is_ok()
    }

    async fn end(&self, reason: &EndReason) {
        self.send_end(end_code(reason), &reason.to_string()).await;
    }

    async fn send_end(&self, code: ErrorCode, message: &str) {
        let ended = SubscriptionEnded {
            subscription_id: self.subscription_id,
            code,
            message: ErrorFrame::new(code, message).message,
        };
        let _ = self.out.send(Outgoing::encode(0, &ended)).await;
    }
}

/// Whether any of events `start..end` carries a header the wire can carry.
fn has_headers(batch: &Batch, start: usize, end: usize) -> bool {
    batch.events()[start..end]
        .iter()
        .any(|event| event.headers.iter().any(fits_wire))
}

/// Whether a header fits the wire's grammar (a UTF-8 key of 1 to 255 bytes, a value of
/// at most 4096 bytes). Other transports' messages (HTTP, dead letters) may carry others.
fn fits_wire(header: &core::Header) -> bool {
    use quiver_wire::limits::{MAX_HEADER_KEY_LEN, MAX_HEADER_VALUE_LEN};
    !header.key.is_empty()
        && header.key.len() <= MAX_HEADER_KEY_LEN
        && header.value.len() <= MAX_HEADER_VALUE_LEN
        && std::str::from_utf8(&header.key).is_ok()
}

/// Encodes events `start..end` of `batch` as an event batch body, with headers when
/// `headers` (then at least one event has one the wire can carry). Empty when the batch
/// cannot be encoded: its stream name is outside the wire's grammar (the broker's size
/// limits are within the wire's).
fn encode_body(batch: &Batch, start: usize, end: usize, headers: bool) -> Bytes {
    let Ok(stream) = StreamName::new(batch.stream().as_str()) else {
        return Bytes::new();
    };
    let mut buf = BytesMut::new();
    let mut encoder = EventBatchEncoder::new(&mut buf, &stream, headers);
    let none = Headers::new();
    for (sequence, event) in batch.iter().skip(start).take(end - start) {
        let event_headers = if headers {
            wire_headers(&event.headers)
        } else {
            none.clone()
        };
        if encoder
            .push(sequence, event.timestamp_ms, &event_headers, &event.payload)
            .is_err()
        {
            return Bytes::new();
        }
    }
    match encoder.finish() {
        Ok(body) => body.as_bytes().clone(),
        Err(_) => Bytes::new(),
    }
}

/// A broker event's headers in wire form: each header the wire cannot carry (see
/// [`fits_wire`]) is left out, and so is every one past the wire's 32; the event is
/// delivered with the rest.
pub(crate) fn wire_headers(headers: &[core::Header]) -> Headers {
    if headers.is_empty() {
        return Headers::new();
    }
    let pairs: Vec<(&str, &[u8])> = headers
        .iter()
        .filter(|h| fits_wire(h))
        .take(quiver_wire::limits::MAX_HEADER_COUNT)
        .filter_map(|h| Some((std::str::from_utf8(&h.key).ok()?, &h.value[..])))
        .collect();
    if pairs.len() < headers.len() {
        tracing::warn!(
            headers = headers.len(),
            delivered = pairs.len(),
            "event headers outside the wire's limits were left out of a delivery"
        );
    }
    Headers::from_pairs(pairs).unwrap_or_default()
}
