//! Freeing removed keys off the connection threads, as Redis's lazy free does: `UNLINK` and
//! `FLUSHDB`/`FLUSHALL ASYNC` take keys out of the keyspace at once and hand the heavy ones
//! (a value of more than 64 elements, or more than 64 keys) to one background thread,
//! started on first use, so a connection thread does not stop for the tens of milliseconds
//! that freeing a million elements takes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, OnceLock};

use quiver_cache::keyspace::Garbage;

/// The background freeing thread and its counters.
#[derive(Debug, Default)]
pub(crate) struct LazyFree {
    /// The thread's queue (`None` if it could not be started).
    queue: OnceLock<Option<Sender<Garbage>>>,
    counts: Arc<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    /// Keys handed to the thread and not yet freed (`lazyfree_pending_objects`).
    pending: AtomicUsize,
    /// Keys the thread has freed (`lazyfreed_objects`).
    freed: AtomicU64,
}

impl Counts {
    fn freed(&self, keys: usize) {
        self.pending.fetch_sub(keys, Ordering::Relaxed);
        self.freed.fetch_add(keys as u64, Ordering::Relaxed);
    }
}

impl LazyFree {
    /// Frees `garbage`: here if it is light, on the background thread if it is heavy.
    pub(crate) fn free(&self, garbage: Garbage) {
        if !garbage.is_heavy() {
            return;
        }
        let keys = garbage.keys();
        self.counts.pending.fetch_add(keys, Ordering::Relaxed);
        let unsent = match self.queue() {
            Some(queue) => queue.send(garbage).err().map(|unsent| unsent.0),
            None => Some(garbage),
        };
        // Without the thread, it is freed here after all.
        if let Some(garbage) = unsent {
            drop(garbage);
            self.counts.freed(keys);
        }
    }

    /// Keys waiting to be freed in the background.
    pub(crate) fn pending_objects(&self) -> usize {
        self.counts.pending.load(Ordering::Relaxed)
    }

    /// Keys freed in the background since the start.
    pub(crate) fn freed_objects(&self) -> u64 {
        self.counts.freed.load(Ordering::Relaxed)
    }

    fn queue(&self) -> Option<&Sender<Garbage>> {
        self.queue
            .get_or_init(|| {
                let (queue, garbage) = mpsc::channel::<Garbage>();
                let counts = Arc::clone(&self.counts);
                let started = std::thread::Builder::new()
                    .name("quiver-lazyfree".into())
                    .spawn(move || {
                        // Ends when the cache, and with it the queue, is dropped.
                        for heap in garbage {
                            let keys = heap.keys();
                            drop(heap);
                            counts.freed(keys);
                        }
                    });
                match started {
                    Ok(_) => Some(queue),
                    Err(error) => {
                        tracing::warn!(%error, "could not start the lazy-free thread; removed keys are freed in place");
                        None
                    }
                }
            })
            .as_ref()
    }
}
