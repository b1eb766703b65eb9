//! One stream: its sequence counter, the batch it is filling, its subscriptions and queue
//! groups, and (for a durable stream) its log.
//!
//! Everything a publish does to a stream happens under the stream's one mutex, taken once
//! per publish call (not per message): sequence numbers are assigned, events appended to the
//! pending batch, and sealed batches handed to every subscription's queue, in order. Holding
//! the lock through fan-out is what makes every subscription see the stream in sequence
//! order under concurrent publishers. Lock order: stream, then a subscription's queue.
//!
//! A durable stream assigns offsets under the same lock when a publish is taken, but hands
//! the messages to fan-out only once they are appended to its log (see
//! [`crate::streams::durable`]), so subscribers see only what the log holds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::time::Instant;

use crate::streams::batch::{Event, Message, Pending};
use crate::streams::budget::Charge;
use crate::streams::config::StreamConfig;
use crate::streams::durable::{Durable, DurableState};
use crate::streams::flush::FlushQueue;
use crate::streams::lock;
use crate::streams::metrics::StreamMetrics;
use crate::streams::name::StreamName;
use crate::streams::policy::SlowPolicy;
use crate::streams::queue_group::QueueGroup;
use crate::streams::subscriber::{EndReason, Pushed, SubShared};
use crate::streams::tap::TapSlot;

/// A stream and its mutable state.
pub(crate) struct Stream {
    pub(crate) name: StreamName,
    pub(crate) config: StreamConfig,
    pub(crate) metrics: Arc<StreamMetrics>,
    /// When the stream was created, ms since the Unix epoch.
    pub(crate) created_ms: u64,
    /// The log and its bookkeeping, for a durable stream.
    pub(crate) durable: Option<Durable>,
    state: Mutex<StreamState>,
    flush: Arc<FlushQueue>,
    tap: Arc<TapSlot>,
    deleted: AtomicBool,
}

pub(crate) struct StreamState {
    /// The sequence number (offset) the next message taken gets.
    pub(crate) next_sequence: u64,
    /// The sequence number of the next message handed to fan-out (for a live stream,
    /// always `next_sequence`; for a durable one, behind it by what is being appended).
    fanout_next: u64,
    pending: Pending,
    subscribers: Vec<Arc<SubShared>>,
    queue_groups: Vec<QueueGroup>,
    /// The append queue and de-duplication window of a durable stream.
    pub(crate) durable: Option<DurableState>,
}

impl StreamState {
    /// The sequence number of the first message no subscription has been handed yet: a
    /// subscription attached now receives every message from here on, and nothing before.
    pub(crate) fn delivered_next(&self) -> u64 {
        if self.pending.is_empty() {
            self.fanout_next
        } else {
            self.pending.first_sequence
        }
    }

    /// The sequence number of the next message handed to fan-out: every message before it
    /// is sequenced (for a durable stream: stored) and in a batch.
    pub(crate) fn fanout_next(&self) -> u64 {
        self.fanout_next
    }

    /// Every subscription, plain or queue-group member.
    fn all_subscribers(&self) -> impl Iterator<Item = &Arc<SubShared>> {
        self.subscribers
            .iter()
            .chain(self.queue_groups.iter().flat_map(QueueGroup::members))
    }
}

impl Stream {
    pub(crate) fn new(
        name: StreamName,
        config: StreamConfig,
        created_ms: u64,
        flush: Arc<FlushQueue>,
        tap: Arc<TapSlot>,
        durable: Option<(Durable, DurableState)>,
    ) -> Arc<Self> {
        let (durable, durable_state) = durable.unzip();
        let next = durable.as_ref().map_or(0, Durable::next_offset);
        let state = StreamState {
            next_sequence: next,
            fanout_next: next,
            pending: Pending::default(),
            subscribers: Vec::new(),
            queue_groups: Vec::new(),
            durable: durable_state,
        };
        let metrics = Arc::new(StreamMetrics::default());
        Arc::new(Self {
            name,
            config,
            metrics,
            created_ms,
            durable,
            state: Mutex::new(state),
            flush,
            tap,
            deleted: AtomicBool::new(false),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, StreamState> {
        lock(&self.state)
    }

    /// Whether the stream was deleted (handles on it refuse publishes).
    pub(crate) fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::Acquire)
    }

    /// Adds a subscription (it receives batches sealed from now on).
    pub(crate) fn attach(&self, sub: &Arc<SubShared>) {
        self.attach_locked(&mut self.lock(), sub);
    }

    /// [`attach`](Self::attach) with the stream's lock held.
    pub(crate) fn attach_locked(&self, state: &mut StreamState, sub: &Arc<SubShared>) {
        if sub.is_closed() || state.all_subscribers().any(|s| Arc::ptr_eq(s, sub)) {
            return;
        }
        match &sub.group {
            None => state.subscribers.push(Arc::clone(sub)),
            Some(group) => {
                let pattern = sub.pattern.as_str();
                match state.queue_groups.iter_mut().find(|g| g.is(pattern, group)) {
                    Some(existing) => existing.add(sub),
                    None => state.queue_groups.push(QueueGroup::new(sub)),
                }
            }
        }
        StreamMetrics::add(&self.metrics.subscribers, 1);
    }

    /// Removes a subscription if attached.
    pub(crate) fn detach(&self, sub: &Arc<SubShared>) {
        let mut state = self.lock();
        let before = state.all_subscribers().count();
        state.subscribers.retain(|s| !Arc::ptr_eq(s, sub));
        for group in &mut state.queue_groups {
            group.remove(sub);
        }
        state.queue_groups.retain(|g| !g.is_empty());
        let removed = (before - state.all_subscribers().count()) as u64;
        self.metrics
            .subscribers
            .fetch_sub(removed, Ordering::Relaxed);
    }

    /// Under `block`, the first subscription without room for `events`/`bytes` more (for a
    /// queue group: the next member, when no member has room), after delivering the
    /// pending batch if that is what is in the way. `None` when the publish may go ahead
    /// (always, for the other policies).
    pub(crate) fn blocker(
        &self,
        state: &mut StreamState,
        events: u64,
        bytes: u64,
    ) -> Option<Arc<SubShared>> {
        if self.config.policy != SlowPolicy::Block {
            return None;
        }
        let pending = (state.pending.events.len() as u64, state.pending.bytes);
        let full = first_full(state, events, bytes, pending)?;
        if pending.0 == 0 {
            return Some(full);
        }
        self.seal(state);
        first_full(state, events, bytes, (0, 0))
    }

    /// Takes `messages` (already checked and paid for by `charge`) as sequence numbers
    /// `first..`, into pending batches, sealing and delivering those that are full, or all
    /// of them when there is no delay. The caller assigned the sequence numbers.
    pub(crate) fn take(
        self: &Arc<Self>,
        state: &mut StreamState,
        first_sequence: u64,
        messages: Vec<Message>,
        mut charge: Charge,
        now: Instant,
        unix_ms: u64,
    ) {
        let batch = self.config.batch;
        let count = messages.len() as u64;
        debug_assert_eq!(
            first_sequence, state.fanout_next,
            "a stream's messages reach fan-out in sequence order"
        );
        state.fanout_next = first_sequence + count;
        StreamMetrics::add(&self.metrics.published, count);
        let mut left = messages.len();
        let mut chunk_bytes = 0;
        for (i, message) in messages.into_iter().enumerate() {
            let size = message.size_bytes();
            let pending = &state.pending;
            let full = pending.events.len() as u32 >= batch.max_events()
                || pending.bytes + size > batch.max_bytes();
            if !pending.is_empty() && full {
                state.pending.charge.absorb(charge.split(chunk_bytes));
                chunk_bytes = 0;
                self.seal(state);
            }
            let pending = &mut state.pending;
            if pending.is_empty() {
                pending.first_sequence = first_sequence + i as u64;
                pending
                    .events
                    .reserve(left.min(batch.max_events() as usize));
            }
            pending.events.push(Event {
                timestamp_ms: unix_ms,
                payload: message.payload,
                headers: message.headers,
            });
            pending.bytes += size;
            chunk_bytes += size;
            left -= 1;
        }
        state.pending.charge.absorb(charge);
        let pending = &mut state.pending;
        let full =
            pending.events.len() as u32 >= batch.max_events() || pending.bytes >= batch.max_bytes();
        if full || batch.max_delay().is_zero() {
            self.seal(state);
        } else if pending.deadline.is_none() {
            let deadline = now + batch.max_delay();
            pending.deadline = Some(deadline);
            self.flush.schedule(deadline, self);
        }
    }

    /// Seals the pending batch (if any) and hands it to every subscription, to one member
    /// of every queue group, and to the broker's tap.
    fn seal(&self, state: &mut StreamState) {
        if state.pending.is_empty() {
            return;
        }
        let batch = state.pending.seal(&self.name, &self.metrics);
        StreamMetrics::add(&self.metrics.batches, 1);
        let policy = self.config.policy;
        let mut ended = false;
        for sub in &state.subscribers {
            ended |= sub.push(&batch, policy, &self.metrics) == Pushed::Ended;
        }
        for group in &mut state.queue_groups {
            let member = group.pick(batch.len() as u64, batch.bytes());
            ended |= member.push(&batch, policy, &self.metrics) == Pushed::Ended;
        }
        self.tap.offer(&batch);
        if ended {
            self.drop_closed(state);
        }
    }

    fn drop_closed(&self, state: &mut StreamState) {
        let before = state.all_subscribers().count();
        state.subscribers.retain(|s| !s.is_closed());
        for group in &mut state.queue_groups {
            group.drop_closed();
        }
        state.queue_groups.retain(|g| !g.is_empty());
        let removed = (before - state.all_subscribers().count()) as u64;
        self.metrics
            .subscribers
            .fetch_sub(removed, Ordering::Relaxed);
    }

    /// Delivers the pending batch if its deadline has come.
    pub(crate) fn flush_if_due(&self, now: Instant) {
        let mut state = self.lock();
        if state
            .pending
            .deadline
            .is_some_and(|deadline| deadline <= now)
        {
            self.seal(&mut state);
        }
    }

    /// Delivers the pending batch now.
    pub(crate) fn flush(&self) {
        self.seal(&mut self.lock());
    }

    /// Marks the stream deleted: what is pending is delivered, subscriptions to exactly
    /// this stream end, wildcard ones are detached (they stay subscribed to their pattern).
    pub(crate) fn delete(&self) {
        self.deleted.store(true, Ordering::Release);
        let mut state = self.lock();
        self.seal(&mut state);
        for sub in state.all_subscribers() {
            if !sub.pattern.is_wildcard() {
                sub.end(EndReason::StreamDeleted {
                    stream: self.name.clone(),
                });
            }
        }
        let count = state.all_subscribers().count() as u64;
        state.subscribers.clear();
        state.queue_groups.clear();
        self.metrics.subscribers.fetch_sub(count, Ordering::Relaxed);
    }
}

/// The first subscription (or queue group, by its next member) without room.
fn first_full(
    state: &StreamState,
    events: u64,
    bytes: u64,
    (pending_events, pending_bytes): (u64, u64),
) -> Option<Arc<SubShared>> {
    let room = |s: &Arc<SubShared>| s.has_room(events, bytes, pending_events, pending_bytes);
    if let Some(full) = state.subscribers.iter().find(|s| !room(s)) {
        return Some(Arc::clone(full));
    }
    state
        .queue_groups
        .iter()
        .find(|group| !group.members().any(room))
        .and_then(|group| group.members().next().cloned())
}
