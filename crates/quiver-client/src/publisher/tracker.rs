//! A publisher's shared state: the buffer, the sealed batches waiting to be sent, the
//! in-flight count and the failures not yet reported. The ack callbacks hold it (never the
//! client, so a pending ack keeps no connection alive).

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use quiver_wire::Message;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::options::PublisherOptions;
use crate::error::{PublisherError, RequestError};

/// Batches that were not published, not yet reported.
#[derive(Debug)]
pub(crate) struct Failures {
    messages: u64,
    batches: u64,
    first: RequestError,
}

/// What a publisher's tasks and its ack callbacks share.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Messages not yet sealed into a batch.
    pub(crate) buffer: Vec<Message>,
    pub(crate) buffer_bytes: usize,
    /// When the buffer's first message came.
    pub(crate) first_at: Option<Instant>,
    /// Batches sealed, in order, not yet handed to the connection.
    pub(crate) sealed: VecDeque<Vec<Message>>,
    /// Sealed batches not yet acknowledged (those in `sealed` included).
    pub(crate) outstanding: usize,
    /// Set by `flush` and on close: seal the buffer without waiting for the linger.
    pub(crate) urgent: bool,
    /// Set when the publisher is dropped: the linger task sends what is left and stops.
    pub(crate) closing: bool,
    /// Whether the linger task is sleeping until a deadline or will be woken by an ack, so
    /// that a new buffer needs no wake-up: the task looks at the buffer when it wakes, and
    /// its deadline is never later than a newer buffer's.
    pub(crate) armed: bool,
    pub(crate) failures: Option<Failures>,
}

/// The state and its wake-ups; held by the ack callbacks too (never the client).
#[derive(Debug)]
pub(crate) struct Tracker {
    pub(crate) options: PublisherOptions,
    pub(crate) state: Mutex<State>,
    /// Told when an in-flight slot frees or a batch is sealed (publishers waiting for
    /// room, `flush` waiting for acks).
    pub(crate) progress: Notify,
    /// Told when the linger task has something to do.
    pub(crate) work: Notify,
}

impl Tracker {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_full(&self, state: &State) -> bool {
        state.buffer.len() >= self.options.max_batch_events
            || state.buffer_bytes >= self.options.max_batch_bytes
    }

    /// Seals the buffer if it is due (full, lingered long enough, urgent) and a slot is
    /// free; returns whether it did. `now` is read only when the linger decides; `None`
    /// leaves a non-zero linger to the linger task (so `publish` reads no clock).
    pub(crate) fn seal_due(&self, state: &mut State, now: Option<Instant>) -> bool {
        if state.buffer.is_empty() || state.outstanding >= self.options.max_in_flight_batches {
            return false;
        }
        let due = state.urgent
            || state.closing
            || self.is_full(state)
            || self.options.linger.is_zero()
            || match (now, state.first_at) {
                (Some(now), Some(first)) => now >= first + self.options.linger,
                _ => false,
            };
        if due {
            self.seal(state);
        }
        due
    }

    /// Seals the buffer into a batch (a slot must be free).
    pub(crate) fn seal(&self, state: &mut State) {
        let capacity = self.options.max_batch_events.min(64);
        let batch = std::mem::replace(&mut state.buffer, Vec::with_capacity(capacity));
        state.buffer_bytes = 0;
        state.first_at = None;
        state.outstanding += 1;
        state.sealed.push_back(batch);
    }

    /// A sent batch of `messages` is done: acked, refused, or never sent.
    pub(crate) fn complete(&self, messages: usize, result: Result<(), RequestError>) {
        let sealed = {
            let mut state = self.lock();
            state.outstanding -= 1;
            if let Err(error) = result {
                match &mut state.failures {
                    Some(failures) => {
                        failures.messages += messages as u64;
                        failures.batches += 1;
                    }
                    None => {
                        state.failures = Some(Failures {
                            messages: messages as u64,
                            batches: 1,
                            first: error,
                        });
                    }
                }
            }
            self.seal_due(&mut state, Some(Instant::now()))
        };
        self.progress.notify_waiters();
        if sealed {
            self.work.notify_one();
        }
    }

    /// The failures not yet reported, as the error to report.
    pub(crate) fn take_failures(state: &mut State) -> Option<PublisherError> {
        state
            .failures
            .take()
            .map(|failures| PublisherError::NotPublished {
                messages: failures.messages,
                batches: failures.batches,
                source: failures.first,
            })
    }
}
