//! Subscriptions: what a subscriber receives, and the options it subscribes with.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use quiver_wire::limits::MAX_RESUME_STREAMS;
use quiver_wire::{ErrorCode, EventBatchBody, GroupEventBatch, StartPosition, StreamName};
use tokio::sync::mpsc;

use crate::error::RequestError;
use crate::reconnect::Shared;

/// Batches buffered per subscription between the connection's reader and the subscriber;
/// when full, the reader waits (backpressure), and the server's slow-subscriber policy
/// applies once its queue fills.
pub(crate) const SUBSCRIPTION_BUFFER_BATCHES: usize = 64;

/// What the reader hands a subscription.
#[derive(Debug)]
pub(crate) enum SubItem {
    Batch(EventBatchBody),
    GroupBatch(GroupEventBatch),
    Lag(u64),
    Ended(ErrorCode, String),
    Disconnected(String),
    /// The connection was lost and made again; the subscription was made again on it.
    Resubscribed,
}

/// The offset after the last event received from each stream of a subscription: what a
/// reconnect resumes durable streams at (at most [`MAX_RESUME_STREAMS`] streams are kept).
#[derive(Debug, Default)]
pub(crate) struct Resume(Mutex<HashMap<StreamName, u64>>);

impl Resume {
    /// Notes the last event of `body`.
    pub(crate) fn note(&self, body: &EventBatchBody) {
        let Some(last) = body.event_refs().last() else {
            return;
        };
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() < MAX_RESUME_STREAMS || map.contains_key(body.stream()) {
            map.insert(body.stream().clone(), last.sequence + 1);
        }
    }

    /// Every stream with the offset to resume it at.
    pub(crate) fn entries(&self) -> Vec<(StreamName, u64)> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut entries: Vec<_> = map.iter().map(|(s, o)| (s.clone(), *o)).collect();
        entries.sort();
        entries
    }
}

/// How to subscribe.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscribeOptions {
    /// Events the server may queue for this subscription before its slow-subscriber policy
    /// applies; 0: the stream's default.
    pub queue_capacity: u32,
    /// At most this many events per delivered batch; 0: the stream's batches as they are
    /// (shared with every other subscriber, the cheapest).
    pub max_batch_events: u16,
    /// Where to start: [`StartPosition::Latest`] (the default), or in the history of the
    /// durable streams the pattern matches (`Earliest`, an `Offset` of one stream, a
    /// `TimestampMs`), joining live delivery with no gap and no duplicate.
    pub start: StartPosition,
    /// A queue group on live delivery: the subscriptions with the same pattern and group
    /// share the batches, one member each (starts at `Latest` only). For acknowledged,
    /// stored sharing use [`Client::join_group`](crate::Client::join_group).
    pub queue_group: Option<String>,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        Self {
            queue_capacity: 0,
            max_batch_events: 0,
            start: StartPosition::Latest,
            queue_group: None,
        }
    }
}

impl SubscribeOptions {
    /// Sets [`Self::start`].
    pub fn start(mut self, start: StartPosition) -> Self {
        self.start = start;
        self
    }

    /// Sets [`Self::queue_group`].
    pub fn queue_group(mut self, group: impl Into<String>) -> Self {
        self.queue_group = Some(group.into());
        self
    }

    /// Sets [`Self::queue_capacity`].
    pub fn queue_capacity(mut self, events: u32) -> Self {
        self.queue_capacity = events;
        self
    }

    /// Sets [`Self::max_batch_events`].
    pub fn max_batch_events(mut self, events: u16) -> Self {
        self.max_batch_events = events;
        self
    }
}

/// One event of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The stream it was published to (a wildcard subscription sees many); shared by the
    /// events of one delivered batch.
    pub stream: Arc<str>,
    /// The stream's sequence number: increasing, with gaps where events were missed.
    pub sequence: u64,
    /// When the broker accepted it, in ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// Its headers, in publish order.
    pub headers: Vec<(String, Bytes)>,
    /// Its payload.
    pub payload: Bytes,
}

/// What [`Subscription::next`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// The next event.
    Event(Event),
    /// This many events were not delivered to this subscription (it was too slow for the
    /// stream's policy); the next event follows the gap.
    Lag {
        /// Events missed since the previous notice.
        missed: u64,
    },
    /// The server ended the subscription (slow-subscriber policy `disconnect`, shutdown),
    /// or the connection closed. Nothing follows.
    Ended {
        /// The server's reason code (`SLOW_CONSUMER`, `SHUTTING_DOWN`); `None` when the
        /// connection closed.
        code: Option<ErrorCode>,
        /// Why.
        message: String,
    },
    /// The connection was lost, the client reconnected and subscribed again. Durable
    /// streams go on from the event after the last one received (no gap, no duplicate);
    /// on live streams, events published while disconnected were not delivered, and how
    /// many is not known.
    Resubscribed,
}

/// A live subscription. Read it with [`Subscription::next`]; dropping it unsubscribes.
///
/// Deliveries are buffered for a while; a subscription that is not read eventually stops
/// its connection's reads (replies to other requests included), which is what lets the
/// server's slow-subscriber policy (including `block`, which slows publishers) take over.
/// Read each subscription from its own task, or give slow readers their own [`Client`](crate::Client).
pub struct Subscription {
    local: u64,
    pattern: String,
    deliveries: mpsc::Receiver<SubItem>,
    ready: VecDeque<Event>,
    shared: Arc<Shared>,
    ended: bool,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("local", &self.local)
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    pub(crate) fn new(
        local: u64,
        pattern: String,
        deliveries: mpsc::Receiver<SubItem>,
        shared: Arc<Shared>,
    ) -> Subscription {
        Subscription {
            local,
            pattern,
            deliveries,
            ready: VecDeque::new(),
            shared,
            ended: false,
        }
    }

    /// The client's id of this subscription (stable across reconnects).
    pub fn id(&self) -> u64 {
        self.local
    }

    /// The pattern subscribed to.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The next event or notice, in order; `None` after [`SubscriptionEvent::Ended`].
    pub async fn next(&mut self) -> Option<SubscriptionEvent> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(SubscriptionEvent::Event(event));
            }
            if self.ended {
                return None;
            }
            let item = self
                .deliveries
                .recv()
                .await
                .unwrap_or_else(|| SubItem::Disconnected("the connection ended".to_owned()));
            match item {
                SubItem::Batch(body) => self.unpack(&body),
                SubItem::GroupBatch(_) => {}
                SubItem::Lag(missed) => return Some(SubscriptionEvent::Lag { missed }),
                SubItem::Resubscribed => return Some(SubscriptionEvent::Resubscribed),
                SubItem::Ended(code, message) => {
                    self.shared.forget(self.local);
                    self.ended = true;
                    return Some(SubscriptionEvent::Ended {
                        code: Some(code),
                        message,
                    });
                }
                SubItem::Disconnected(message) => {
                    self.shared.forget(self.local);
                    self.ended = true;
                    return Some(SubscriptionEvent::Ended {
                        code: None,
                        message,
                    });
                }
            }
        }
    }

    fn unpack(&mut self, body: &EventBatchBody) {
        let stream: Arc<str> = Arc::from(body.stream().as_str());
        for event in body.events() {
            self.ready.push_back(Event {
                stream: Arc::clone(&stream),
                sequence: event.sequence,
                timestamp_ms: event.timestamp_ms,
                headers: event
                    .headers
                    .iter()
                    .map(|(key, value)| (key.to_owned(), Bytes::copy_from_slice(value)))
                    .collect(),
                payload: event.payload,
            });
        }
    }

    /// Ends the subscription and waits for the server to confirm.
    pub async fn unsubscribe(mut self) -> Result<(), RequestError> {
        self.ended = true;
        self.shared.unsubscribe(self.local).await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.shared.unsubscribe_dropped(self.local);
    }
}
