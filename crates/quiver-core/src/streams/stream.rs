//! One stream: its sequence counter, the batch it is filling, and its subscriptions.
//!
//! Everything a publish does to a stream happens under the stream's one mutex, taken once
//! per publish call (not per message): sequence numbers are assigned, events appended to the
//! pending batch, and sealed batches handed to every subscription's queue, in order. Holding
//! the lock through fan-out is what makes every subscription see the stream in sequence
//! order under concurrent publishers. Lock order: stream, then a subscription's queue.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::time::Instant;

use crate::streams::batch::{Event, Message, Pending};
use crate::streams::budget::Charge;
use crate::streams::config::StreamConfig;
use crate::streams::flush::FlushQueue;
use crate::streams::lock;
use crate::streams::metrics::StreamMetrics;
use crate::streams::name::StreamName;
use crate::streams::policy::SlowPolicy;
use crate::streams::publish::Receipt;
use crate::streams::subscriber::{Pushed, SubShared};

/// A stream and its mutable state.
pub(crate) struct Stream {
    pub(crate) name: StreamName,
    pub(crate) config: StreamConfig,
    pub(crate) metrics: Arc<StreamMetrics>,
    state: Mutex<StreamState>,
    flush: Arc<FlushQueue>,
}

pub(crate) struct StreamState {
    next_sequence: u64,
    pending: Pending,
    subscribers: Vec<Arc<SubShared>>,
}

impl Stream {
    pub(crate) fn new(name: StreamName, config: StreamConfig, flush: Arc<FlushQueue>) -> Arc<Self> {
        let state = StreamState {
            next_sequence: 0,
            pending: Pending::default(),
            subscribers: Vec::new(),
        };
        let metrics = Arc::new(StreamMetrics::default());
        Arc::new(Self {
            name,
            config,
            metrics,
            state: Mutex::new(state),
            flush,
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, StreamState> {
        lock(&self.state)
    }

    /// Adds a subscription (it receives batches sealed from now on).
    pub(crate) fn attach(&self, sub: &Arc<SubShared>) {
        let mut state = self.lock();
        if sub.is_closed() || state.subscribers.iter().any(|s| Arc::ptr_eq(s, sub)) {
            return;
        }
        state.subscribers.push(Arc::clone(sub));
        StreamMetrics::add(&self.metrics.subscribers, 1);
    }

    /// Removes a subscription if attached.
    pub(crate) fn detach(&self, sub: &Arc<SubShared>) {
        let mut state = self.lock();
        let before = state.subscribers.len();
        state.subscribers.retain(|s| !Arc::ptr_eq(s, sub));
        let removed = (before - state.subscribers.len()) as u64;
        self.metrics
            .subscribers
            .fetch_sub(removed, std::sync::atomic::Ordering::Relaxed);
    }

    /// Under `block`, the first subscription without room for `events`/`bytes` more, after
    /// delivering the pending batch if that is what is in the way. `None` when the publish
    /// may go ahead (always, for the other policies).
    pub(crate) fn blocker(
        &self,
        state: &mut StreamState,
        events: u64,
        bytes: u64,
    ) -> Option<Arc<SubShared>> {
        if self.config.policy != SlowPolicy::Block {
            return None;
        }
        let (pending_events, pending_bytes) =
            (state.pending.events.len() as u64, state.pending.bytes);
        let full = state
            .subscribers
            .iter()
            .find(|s| !s.has_room(events, bytes, pending_events, pending_bytes))?;
        if pending_events == 0 {
            return Some(Arc::clone(full));
        }
        self.seal(state);
        state
            .subscribers
            .iter()
            .find(|s| !s.has_room(events, bytes, 0, 0))
            .cloned()
    }

    /// Sequences `messages` (already checked and paid for by `charge`) into pending batches,
    /// sealing and delivering those that are full, or all of them when there is no delay.
    pub(crate) fn take(
        self: &Arc<Self>,
        state: &mut StreamState,
        messages: Vec<Message>,
        mut charge: Charge,
        now: Instant,
        unix_ms: u64,
    ) -> Receipt {
        let batch = self.config.batch;
        let count = messages.len() as u64;
        let first_sequence = state.next_sequence;
        state.next_sequence += count;
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
        Receipt {
            first_sequence,
            count,
        }
    }

    /// Seals the pending batch (if any) and hands it to every subscription.
    fn seal(&self, state: &mut StreamState) {
        if state.pending.is_empty() {
            return;
        }
        let batch = state.pending.seal(&self.name, &self.metrics);
        StreamMetrics::add(&self.metrics.batches, 1);
        let mut ended = false;
        for sub in &state.subscribers {
            ended |= sub.push(&batch, self.config.policy, &self.metrics) == Pushed::Ended;
        }
        if ended {
            self.drop_closed(state);
        }
    }

    fn drop_closed(&self, state: &mut StreamState) {
        let before = state.subscribers.len();
        state.subscribers.retain(|s| !s.is_closed());
        let removed = (before - state.subscribers.len()) as u64;
        self.metrics
            .subscribers
            .fetch_sub(removed, std::sync::atomic::Ordering::Relaxed);
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
}
