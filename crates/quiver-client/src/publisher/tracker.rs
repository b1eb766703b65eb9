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
    /// Whether the linger task waits, with no timer, for a slot to free (its buffer is
    /// past its linger): an ack then wakes it.
    pub(crate) waiting_for_slot: bool,
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
        let wake = {
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
            let sealed = self.seal_due(&mut state, Some(Instant::now()));
            if sealed || !state.waiting_for_slot {
                sealed
            } else {
                // The linger task waits without a timer for a slot, which is now free; its
                // buffer was sealed since. A newer buffer, not yet due, needs the task to
                // set its timer; with none, the next publish must wake the task.
                state.waiting_for_slot = false;
                state.armed = !state.buffer.is_empty();
                state.armed
            }
        };
        self.progress.notify_waiters();
        if wake {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use quiver_wire::{ErrorCode, Headers};

    use super::*;

    fn tracker(linger: Duration, events: usize, in_flight: usize) -> Tracker {
        Tracker {
            options: PublisherOptions::default()
                .linger(linger)
                .max_batch_events(events)
                .max_in_flight_batches(in_flight),
            state: Mutex::default(),
            progress: Notify::new(),
            work: Notify::new(),
        }
    }

    fn push(state: &mut State, now: Instant) {
        if state.buffer.is_empty() {
            state.first_at = Some(now);
        }
        state.buffer_bytes += 1;
        state.buffer.push(Message {
            headers: Headers::new(),
            payload: Bytes::from_static(b"x"),
        });
    }

    #[test]
    fn a_full_buffer_is_sealed_only_while_a_slot_is_free() {
        let tracker = tracker(Duration::from_secs(1), 2, 1);
        let now = Instant::now();
        let mut state = tracker.lock();
        push(&mut state, now);
        assert!(
            !tracker.seal_due(&mut state, Some(now)),
            "neither full nor lingered"
        );
        push(&mut state, now);
        assert!(tracker.seal_due(&mut state, None), "full");
        assert_eq!((state.outstanding, state.sealed.len()), (1, 1));
        push(&mut state, now);
        push(&mut state, now);
        assert!(!tracker.seal_due(&mut state, None), "full, but no slot");
        drop(state);
        tracker.complete(2, Ok(()));
        let state = tracker.lock();
        assert_eq!(
            state.outstanding, 1,
            "the ack sealed the full buffer into the slot"
        );
        assert!(state.buffer.is_empty());
        assert_eq!(state.sealed.len(), 2);
    }

    #[test]
    fn the_linger_decides_only_when_asked_with_a_time() {
        let tracker = tracker(Duration::from_millis(5), 100, 4);
        let start = Instant::now();
        let mut state = tracker.lock();
        push(&mut state, start);
        assert!(
            !tracker.seal_due(&mut state, None),
            "publish leaves it to the task"
        );
        assert!(
            !tracker.seal_due(&mut state, Some(start)),
            "not lingered yet"
        );
        let later = start + Duration::from_millis(5);
        assert!(tracker.seal_due(&mut state, Some(later)), "lingered");
        push(&mut state, later);
        state.urgent = true;
        assert!(tracker.seal_due(&mut state, None), "flush does not wait");
    }

    #[test]
    fn failures_are_counted_and_reported_once() {
        let tracker = tracker(Duration::ZERO, 10, 4);
        tracker.lock().outstanding = 3;
        let refused = RequestError::Server {
            code: ErrorCode::UNSUPPORTED,
            message: "no".to_owned(),
        };
        tracker.complete(7, Err(refused.clone()));
        tracker.complete(5, Ok(()));
        tracker.complete(
            3,
            Err(RequestError::Timeout {
                after: Duration::from_secs(1),
            }),
        );
        let mut state = tracker.lock();
        assert_eq!(state.outstanding, 0);
        let reported = Tracker::take_failures(&mut state).expect("failures");
        assert_eq!(
            reported,
            PublisherError::NotPublished {
                messages: 10,
                batches: 2,
                source: refused,
            }
        );
        assert_eq!(Tracker::take_failures(&mut state), None);
    }
}
