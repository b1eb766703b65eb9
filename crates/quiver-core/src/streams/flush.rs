//! Deadlines of pending batches: the one piece of shared state that batching by delay
//! needs. A stream registers once per pending batch (not per message); a driver
//! ([`Broker::run_flusher`](crate::streams::Broker::run_flusher), or a test calling
//! [`Broker::flush_due`](crate::streams::Broker::flush_due) with its own `now`) seals what is
//! due.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::streams::lock;
use crate::streams::stream::Stream;

struct Due {
    at: Instant,
    stream: Weak<Stream>,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    /// Reversed, so that the max-heap yields the earliest deadline first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at)
    }
}

/// Pending-batch deadlines, earliest first.
#[derive(Default)]
pub(crate) struct FlushQueue {
    heap: Mutex<BinaryHeap<Due>>,
    /// Told when a deadline earlier than all others arrives, so the driver re-arms.
    pub(crate) earlier: Notify,
}

impl FlushQueue {
    pub(crate) fn schedule(&self, at: Instant, stream: &Arc<Stream>) {
        let mut heap = lock(&self.heap);
        let earliest = heap.peek().is_none_or(|due| at < due.at);
        heap.push(Due {
            at,
            stream: Arc::downgrade(stream),
        });
        drop(heap);
        if earliest {
            self.earlier.notify_one();
        }
    }

    /// Removes and returns the streams due at `now`, and the next deadline after them.
    pub(crate) fn take_due(&self, now: Instant) -> (Vec<Arc<Stream>>, Option<Instant>) {
        let mut heap = lock(&self.heap);
        let mut due = Vec::new();
        while heap.peek().is_some_and(|d| d.at <= now) {
            let entry = heap.pop().expect("peeked");
            if let Some(stream) = entry.stream.upgrade() {
                due.push(stream);
            }
        }
        (due, heap.peek().map(|d| d.at))
    }
}
