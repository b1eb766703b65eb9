//! Freeing removed keys off the connection threads, as Redis's lazy free does: `UNLINK` and
//! `FLUSHDB`/`FLUSHALL ASYNC` take keys out of the keyspace at once and hand the heavy ones
//! (a value of more than 64 elements, or more than 64 keys) to one background thread,
//! started on first use, so a connection thread does not stop for the tens of milliseconds
//! that freeing a million elements takes.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};

use quiver_cache::keyspace::Garbage;

/// The background thread's queue (`None` if it could not be started).
static FREER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();
/// Keys handed to the thread and not yet freed (`lazyfree_pending_objects`).
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// Keys the thread has freed (`lazyfreed_objects`).
static FREED: AtomicU64 = AtomicU64::new(0);

/// Frees `garbage`: here if it is light, on the background thread if it is heavy.
pub fn free(garbage: Garbage) {
    if !garbage.is_heavy() {
        return;
    }
    let keys = garbage.keys();
    PENDING.fetch_add(keys, Ordering::Relaxed);
    let unsent = match freer() {
        Some(queue) => queue.send(garbage).err().map(|unsent| unsent.0),
        None => Some(garbage),
    };
    // Without the thread, it is freed here after all.
    if let Some(garbage) = unsent {
        drop(garbage);
        freed(keys);
    }
}

/// Keys waiting to be freed in the background.
pub fn pending_objects() -> usize {
    PENDING.load(Ordering::Relaxed)
}

/// Keys freed in the background since the start.
pub fn freed_objects() -> u64 {
    FREED.load(Ordering::Relaxed)
}

fn freer() -> Option<&'static Sender<Garbage>> {
    FREER
        .get_or_init(|| {
            let (queue, garbage) = mpsc::channel::<Garbage>();
            let started = std::thread::Builder::new()
                .name("quiver-lazyfree".into())
                .spawn(move || {
                    for heap in garbage {
                        let keys = heap.keys();
                        drop(heap);
                        freed(keys);
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

fn freed(keys: usize) {
    PENDING.fetch_sub(keys, Ordering::Relaxed);
    FREED.fetch_add(keys as u64, Ordering::Relaxed);
}
