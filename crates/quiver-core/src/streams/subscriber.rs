//! A subscription's bounded queue of delivery batches, the slow-subscriber policy applied
//! to it, and the [`Subscription`] handle a transport reads deliveries from.
//!
//! The queue holds `Arc<Batch>` entries. A loss is recorded at the place it happened (on the
//! entry after the gap, or at the tail), so a [`Delivery::Lag`] comes exactly before the first
//! batch after the lost events and says exactly how many were lost. The consumer is woken
//! only when its queue goes from empty to non-empty: at most once per batch.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::streams::batch::Batch;
use crate::streams::config::QueueLimits;
use crate::streams::durable::history::CatchUp;
use crate::streams::lock;
use crate::streams::metrics::StreamMetrics;
use crate::streams::name::StreamName;
use crate::streams::pattern::Pattern;
use crate::streams::policy::SlowPolicy;
use crate::streams::registry::Registry;

/// A subscription's id, unique in the process for its lifetime, never 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriptionId(pub u64);

impl fmt::Display for SubscriptionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "subscription {}", self.0)
    }
}

/// Why the broker ended a subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// The `disconnect` policy: its queue was full when a batch of `stream` arrived. `missed`
    /// counts every event the subscription did not receive since its last lag notice: the
    /// new batch, everything queued, and losses not yet announced.
    SlowConsumer { stream: StreamName, missed: u64 },
    /// The broker is shutting down; everything queued before was delivered.
    Shutdown,
    /// The stream this subscription named was deleted.
    StreamDeleted { stream: StreamName },
    /// The consumer group was deleted.
    GroupDeleted { stream: StreamName, group: String },
    /// A durable stream's log could not be read.
    Storage {
        stream: Option<StreamName>,
        message: String,
    },
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SlowConsumer { stream, missed } => {
                write!(
                    f,
                    "too slow for stream {stream}: queue full, {missed} events discarded"
                )
            }
            Self::Shutdown => f.write_str("the broker is shutting down"),
            Self::StreamDeleted { stream } => write!(f, "stream {stream} was deleted"),
            Self::GroupDeleted { stream, group } => {
                write!(f, "group {group} of stream {stream} was deleted")
            }
            Self::Storage {
                stream: Some(stream),
                message,
            } => write!(f, "stream {stream} could not be read: {message}"),
            Self::Storage {
                stream: None,
                message,
            } => f.write_str(message),
        }
    }
}

/// What a subscription receives.
#[derive(Debug, Clone)]
pub enum Delivery {
    /// The next batch of one of the matched streams.
    Batch(Arc<Batch>),
    /// `missed` events were lost here, after the previous delivery and before the next.
    Lag { missed: u64 },
    /// The subscription is over; every later receive returns this again.
    Ended(EndReason),
}

/// Where a subscription starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartAt {
    /// Only messages published from now on.
    #[default]
    Latest,
    /// From the oldest message each durable stream still holds.
    Earliest,
    /// From this offset (one durable stream).
    Offset(u64),
    /// From the first message at or after this time, ms since the Unix epoch.
    TimestampMs(u64),
}

impl std::fmt::Display for StartAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartAt::Latest => f.write_str("latest"),
            StartAt::Earliest => f.write_str("earliest"),
            StartAt::Offset(offset) => write!(f, "offset {offset}"),
            StartAt::TimestampMs(ms) => write!(f, "the time {ms} (ms since the Unix epoch)"),
        }
    }
}

/// Options of one subscription.
#[derive(Debug, Clone, Default)]
pub struct SubscribeOptions {
    /// Queue bounds; `None` takes the broker's default stream config.
    pub queue: Option<QueueLimits>,
    /// Where to start. Anything but `Latest` reads the history of the durable streams the
    /// pattern matches (an offset needs an exact stream name), then joins live delivery
    /// with no gap and no duplicate; live streams are joined live.
    pub start: StartAt,
    /// A queue group on live delivery: the subscriptions with the same pattern and group
    /// share each stream's batches, one member per batch. Starts at `Latest` only.
    pub group: Option<String>,
    /// Durable streams that start at an offset of their own whatever `start` says (a
    /// client resuming after a reconnect); entries for streams that are not durable or not
    /// matched are ignored.
    pub resume: Vec<(StreamName, u64)>,
}

/// The result of offering a batch to a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    Queued,
    Dropped,
    Ended,
}

struct Entry {
    missed_before: u64,
    batch: Arc<Batch>,
}

#[derive(Default)]
struct QueueState {
    entries: VecDeque<Entry>,
    events: u64,
    bytes: u64,
    tail_missed: u64,
    ended: Option<EndReason>,
    blocked_publishers: usize,
}

impl QueueState {
    fn fits(&self, limits: &QueueLimits, events: u64, bytes: u64) -> bool {
        self.entries.is_empty()
            || (self.events + events <= u64::from(limits.max_events())
                && self.bytes + bytes <= limits.max_bytes())
    }

    fn remove_front(&mut self) -> Option<Entry> {
        let entry = self.entries.pop_front()?;
        self.events -= entry.batch.len() as u64;
        self.bytes -= entry.batch.bytes();
        Some(entry)
    }

    /// Removes the front batch, moving the loss recorded before it to the next entry.
    fn pop_front(&mut self) -> Option<Arc<Batch>> {
        let entry = self.remove_front()?;
        if let Some(next) = self.entries.front_mut() {
            next.missed_before += entry.missed_before;
        } else {
            self.tail_missed += entry.missed_before;
        }
        Some(entry.batch)
    }
}

/// The state a subscription shares between its streams (producers) and its handle.
pub(crate) struct SubShared {
    pub(crate) id: SubscriptionId,
    pub(crate) pattern: Pattern,
    /// The queue group, if any.
    pub(crate) group: Option<Arc<str>>,
    limits: QueueLimits,
    state: Mutex<QueueState>,
    ready: Notify,
    space: Notify,
    closed: AtomicBool,
}

impl SubShared {
    pub(crate) fn new(id: SubscriptionId, pattern: Pattern, limits: QueueLimits) -> Self {
        let (ready, space) = (Notify::new(), Notify::new());
        Self {
            id,
            pattern,
            group: None,
            limits,
            state: Mutex::default(),
            ready,
            space,
            closed: AtomicBool::new(false),
        }
    }

    /// Whether the subscription has ended (its streams drop it lazily).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Offers `batch` under `policy`. Called with the stream's lock held, in sequence order.
    pub(crate) fn push(
        &self,
        batch: &Arc<Batch>,
        policy: SlowPolicy,
        metrics: &StreamMetrics,
    ) -> Pushed {
        let (events, bytes) = (batch.len() as u64, batch.bytes());
        let mut state = lock(&self.state);
        if state.ended.is_some() {
            return Pushed::Ended;
        }
        let mut missed_before = std::mem::take(&mut state.tail_missed);
        if !state.fits(&self.limits, events, bytes) {
            match policy {
                // The stream admitted this batch when there was room; another stream of a
                // wildcard subscription filled the queue since. Overshoot by this one batch
                // rather than lose a message of a `block` stream.
                SlowPolicy::Block => {}
                SlowPolicy::DropNew => {
                    state.tail_missed = missed_before + events;
                    metrics.dropped(SlowPolicy::DropNew, events);
                    return Pushed::Dropped;
                }
                SlowPolicy::DropOld => {
                    let mut evicted = 0;
                    while !state.fits(&self.limits, events, bytes) {
                        let old = state
                            .remove_front()
                            .expect("a queue that does not fit is not empty");
                        old.batch
                            .metrics
                            .dropped(SlowPolicy::DropOld, old.batch.len() as u64);
                        evicted += old.missed_before + old.batch.len() as u64;
                    }
                    match state.entries.front_mut() {
                        Some(front) => front.missed_before += evicted,
                        None => missed_before += evicted,
                    }
                }
                SlowPolicy::Disconnect => {
                    self.disconnect(&mut state, batch, missed_before);
                    return Pushed::Ended;
                }
            }
        }
        let was_idle = state.entries.is_empty();
        state.entries.push_back(Entry {
            missed_before,
            batch: Arc::clone(batch),
        });
        state.events += events;
        state.bytes += bytes;
        metrics.queue_depth(state.events);
        drop(state);
        if was_idle {
            self.ready.notify_one();
        }
        Pushed::Queued
    }

    /// Ends the subscription: `batch`, everything queued and every loss not yet announced
    /// (`missed_before`, and those recorded on queued entries) count as missed.
    fn disconnect(&self, state: &mut QueueState, batch: &Arc<Batch>, missed_before: u64) {
        let mut missed = batch.len() as u64 + missed_before;
        batch
            .metrics
            .dropped(SlowPolicy::Disconnect, batch.len() as u64);
        while let Some(old) = state.pop_front() {
            old.metrics
                .dropped(SlowPolicy::Disconnect, old.len() as u64);
            missed += old.len() as u64;
        }
        missed += std::mem::take(&mut state.tail_missed);
        state.ended = Some(EndReason::SlowConsumer {
            stream: batch.stream().clone(),
            missed,
        });
        self.closed.store(true, Ordering::Release);
        self.ready.notify_one();
        if state.blocked_publishers > 0 {
            self.space.notify_waiters();
        }
    }

    /// Whether `events`/`bytes` more (on top of a stream's `pending` ones) fit now.
    pub(crate) fn has_room(
        &self,
        events: u64,
        bytes: u64,
        pending_events: u64,
        pending_bytes: u64,
    ) -> bool {
        let state = lock(&self.state);
        let empty = state.entries.is_empty() && pending_events == 0;
        if state.ended.is_some() || self.is_closed() || empty {
            return true;
        }
        let events = events + pending_events;
        let bytes = bytes + pending_bytes;
        state.events + events <= u64::from(self.limits.max_events())
            && state.bytes + bytes <= self.limits.max_bytes()
    }

    /// Waits until the consumer takes a batch (or the subscription ends), at most until
    /// `deadline`. Returns false on timeout.
    pub(crate) async fn wait_for_room(&self, events: u64, bytes: u64, deadline: Instant) -> bool {
        let taken = self.space.notified();
        tokio::pin!(taken);
        taken.as_mut().enable();
        {
            let mut state = lock(&self.state);
            if state.ended.is_some() || self.is_closed() || state.fits(&self.limits, events, bytes)
            {
                return true;
            }
            state.blocked_publishers += 1;
        }
        let woke = tokio::time::timeout_at(deadline, taken).await.is_ok();
        lock(&self.state).blocked_publishers -= 1;
        woke
    }

    /// Marks the subscription gone (its handle was dropped): streams skip it, and publishers
    /// waiting for it to make room stop waiting.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let _state = lock(&self.state);
        self.space.notify_waiters();
    }

    /// Ends the subscription after what is queued (shutdown).
    pub(crate) fn end(&self, reason: EndReason) {
        let mut state = lock(&self.state);
        if state.ended.is_none() {
            state.ended = Some(reason);
            self.closed.store(true, Ordering::Release);
        }
        drop(state);
        self.ready.notify_one();
    }

    /// Appends up to `max` ready deliveries to `out` under one lock; returns how many.
    fn pop_into(&self, out: &mut Vec<Delivery>, max: usize) -> usize {
        let mut state = lock(&self.state);
        let mut taken = 0;
        while taken < max {
            let Some(delivery) = state.next(taken == 0) else {
                break;
            };
            let ended = matches!(delivery, Delivery::Ended(_));
            out.push(delivery);
            taken += 1;
            if ended {
                break;
            }
        }
        self.after_pop(state, taken > 0);
        taken
    }

    /// The next ready delivery, if any.
    fn pop(&self) -> Option<Delivery> {
        let mut state = lock(&self.state);
        let delivery = state.next(true);
        self.after_pop(state, delivery.is_some());
        delivery
    }

    /// Tells publishers waiting under `block` that room was made.
    fn after_pop(&self, state: MutexGuard<'_, QueueState>, taken: bool) {
        let blocked = state.blocked_publishers > 0;
        drop(state);
        if blocked && taken {
            self.space.notify_waiters();
        }
    }
}

impl QueueState {
    /// The next delivery: a lag notice recorded before the front batch, the front batch, a
    /// lag notice at the tail, or (when `may_end` and nothing else is left) the end.
    fn next(&mut self, may_end: bool) -> Option<Delivery> {
        let delivery = match self.entries.front_mut() {
            Some(front) if front.missed_before > 0 => Delivery::Lag {
                missed: std::mem::take(&mut front.missed_before),
            },
            Some(_) => {
                let batch = self.pop_front().expect("the front entry exists");
                StreamMetrics::add(&batch.metrics.delivered, batch.len() as u64);
                Delivery::Batch(batch)
            }
            None if self.tail_missed > 0 => Delivery::Lag {
                missed: std::mem::take(&mut self.tail_missed),
            },
            None => Delivery::Ended(self.ended.clone().filter(|_| may_end)?),
        };
        Some(delivery)
    }
}

/// A live subscription. Read it with [`recv`](Self::recv); dropping it unsubscribes. After
/// [`Delivery::Ended`] the subscription receives nothing more, but it still counts against
/// the subscription limits until the handle is dropped.
pub struct Subscription {
    shared: Arc<SubShared>,
    registry: Arc<Registry>,
    /// History still to read before the durable streams it covers are joined live.
    catchup: Option<CatchUp>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.shared.id)
            .field("pattern", &self.shared.pattern)
            .finish()
    }
}

impl Subscription {
    pub(crate) fn new(
        shared: Arc<SubShared>,
        registry: Arc<Registry>,
        catchup: Option<CatchUp>,
    ) -> Self {
        let catchup = catchup.filter(|c| !c.is_done());
        Self {
            shared,
            registry,
            catchup,
        }
    }

    /// The next history delivery, while history is left to read.
    async fn history(&mut self) -> Option<Delivery> {
        let catchup = self.catchup.as_mut()?;
        let delivery = catchup.next(&self.shared).await;
        if delivery.is_none() {
            self.catchup = None;
        }
        delivery
    }

    /// The id.
    pub fn id(&self) -> SubscriptionId {
        self.shared.id
    }

    /// The pattern.
    pub fn pattern(&self) -> &Pattern {
        &self.shared.pattern
    }

    /// The next delivery, waiting for one.
    pub async fn recv(&mut self) -> Delivery {
        loop {
            if self.catchup.is_some() {
                if let Some(delivery) = self.shared.pop() {
                    return delivery;
                }
                if let Some(delivery) = self.history().await {
                    return delivery;
                }
                continue;
            }
            let ready = self.shared.ready.notified();
            if let Some(delivery) = self.shared.pop() {
                return delivery;
            }
            ready.await;
        }
    }

    /// The next live delivery if one is ready. History (of a subscription that started
    /// before the live point) is read from disk, so only [`recv`](Self::recv) and
    /// [`recv_many`](Self::recv_many) return it.
    pub fn try_recv(&mut self) -> Option<Delivery> {
        self.shared.pop()
    }

    /// Waits for at least one delivery, then appends up to `max` (at least 1) ready ones to
    /// `out` under one lock: a transport's writer drains a queue this way. Returns how many.
    ///
    /// Cancel-safe: a history read in progress when the future is dropped is kept for the
    /// next call.
    pub async fn recv_many(&mut self, out: &mut Vec<Delivery>, max: usize) -> usize {
        let max = max.max(1);
        loop {
            if self.catchup.is_some() {
                let taken = self.shared.pop_into(out, max);
                if taken > 0 {
                    return taken;
                }
                if let Some(delivery) = self.history().await {
                    out.push(delivery);
                    return 1;
                }
                continue;
            }
            let ready = self.shared.ready.notified();
            let taken = self.shared.pop_into(out, max);
            if taken > 0 {
                return taken;
            }
            ready.await;
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.shared.close();
        self.registry.unsubscribe(&self.shared);
    }
}
