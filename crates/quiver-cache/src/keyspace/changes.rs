//! The change feed: which key changed, how, in which database. Off until
//! [`Keyspace::set_change_feed`] turns it on; then every write, removal, expiry,
//! eviction and flush is recorded, under the lock of the shard it happens in, in one
//! list shared by every shard, so the order is the order in which the changes
//! happened; [`Keyspace::take_changes`] drains it. A change is recorded as it happens,
//! not per command: a pop that empties a list is a write, then a removal.
//!
//! [`Keyspace::set_change_feed`]: super::Keyspace::set_change_feed
//! [`Keyspace::take_changes`]: super::Keyspace::take_changes

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::events::{Event, EventClasses};

thread_local! {
    /// Who is running the operation on this thread (see [`ChangeOrigin`]).
    static ORIGIN: Cell<u64> = const { Cell::new(0) };
}

/// Names who makes the changes recorded on this thread until it is dropped: a client id
/// that [`Change::origin`] then carries (client-side caching's NOLOOP skips a client's own
/// writes by it). An operation runs on one thread from start to end, so the changes it
/// records are its own; nested scopes restore the outer origin.
#[derive(Debug)]
pub struct ChangeOrigin {
    previous: u64,
}

impl ChangeOrigin {
    /// Changes recorded on this thread from now on come from `origin` (0: nobody).
    pub fn enter(origin: u64) -> ChangeOrigin {
        ChangeOrigin {
            previous: ORIGIN.replace(origin),
        }
    }
}

impl Drop for ChangeOrigin {
    fn drop(&mut self) {
        ORIGIN.set(self.previous);
    }
}

/// How a key changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// Created, or its value or TTL changed.
    Written,
    /// Removed by a command (DEL, a pop that emptied it, RENAME's source...).
    Removed,
    /// Removed because its TTL passed.
    Expired,
    /// Removed to make room under `max_memory`.
    Evicted,
    /// Every key of the database was removed (FLUSHDB, FLUSHALL, SWAPDB's two); the key
    /// is empty. `first` marks the first database of one command's flush: client-side
    /// caching tells each flush once.
    Flushed { first: bool },
    /// A keyspace event of a selected class (see [`super::events`]), recorded beside the
    /// changes above, in the order the operation performs them.
    Event(Event),
}

/// One change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The database.
    pub db: usize,
    /// The key (empty for [`ChangeKind::Flushed`]).
    pub key: Box<[u8]>,
    /// How it changed.
    pub kind: ChangeKind,
    /// Who made it (a [`ChangeOrigin`]); 0 when nobody said, and for expiries and
    /// evictions, which no client makes.
    pub origin: u64,
}

/// The list changes are recorded in, shared by the shards while the feed is on.
#[derive(Debug, Default)]
pub(crate) struct ChangeLog {
    changes: Mutex<Vec<Change>>,
    pending: AtomicBool,
    /// The event classes recorded ([`EventClasses`] bits).
    events: AtomicU32,
}

impl ChangeLog {
    /// Records a change. One operation may touch a key more than once (a push creates the
    /// list, then adds to it): the same change of the same key right after itself is
    /// recorded once.
    pub(crate) fn record(&self, db: usize, key: &[u8], kind: ChangeKind) {
        let origin = match kind {
            ChangeKind::Expired | ChangeKind::Evicted => 0,
            _ => ORIGIN.get(),
        };
        let mut changes = self.lock();
        let repeated = !matches!(kind, ChangeKind::Event(_))
            && changes.last().is_some_and(|last| {
                last.db == db && *last.key == *key && last.kind == kind && last.origin == origin
            });
        if !repeated {
            changes.push(Change {
                db,
                key: key.into(),
                kind,
                origin,
            });
        }
        drop(changes);
        self.pending.store(true, Ordering::Release);
    }

    /// Records that databases `dbs` were emptied, together: whoever takes the changes
    /// takes all of them or none (client-side caching tells one flush once).
    pub(crate) fn record_flushed(&self, dbs: &[usize]) {
        let origin = ORIGIN.get();
        let flushed = dbs.iter().enumerate().map(|(i, &db)| Change {
            db,
            key: Box::default(),
            kind: ChangeKind::Flushed { first: i == 0 },
            origin,
        });
        self.lock().extend(flushed);
        self.pending.store(true, Ordering::Release);
    }

    /// Records `event` of `key` if its class is selected.
    pub(crate) fn event(&self, db: usize, key: &[u8], event: Event) {
        if self.events().intersects(event.class) {
            self.record(db, key, ChangeKind::Event(event));
        }
    }

    /// The event classes recorded.
    pub(crate) fn events(&self) -> EventClasses {
        EventClasses::from_bits(self.events.load(Ordering::Relaxed))
    }

    pub(crate) fn set_events(&self, classes: EventClasses) {
        self.events.store(classes.bits(), Ordering::Relaxed);
    }

    /// Whether changes wait to be taken.
    pub(crate) fn pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Everything recorded since the last call, oldest first. Cheap when empty.
    pub(crate) fn take(&self) -> Vec<Change> {
        if !self.pending.load(Ordering::Acquire) || !self.pending.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        std::mem::take(&mut *self.lock())
    }

    /// Whether a change of `origin` waits to be taken.
    pub(crate) fn pending_from(&self, origin: u64) -> bool {
        self.pending() && self.lock().iter().any(|c| c.origin == origin)
    }

    /// Puts back changes taken but not handed out, before any recorded since.
    pub(crate) fn put_back(&self, mut taken: Vec<Change>) {
        if taken.is_empty() {
            return;
        }
        let mut changes = self.lock();
        taken.append(&mut changes);
        *changes = taken;
        drop(changes);
        self.pending.store(true, Ordering::Release);
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Change>> {
        // A push cannot be left half done.
        self.changes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What a shard records its changes in: nothing while the feed is off.
pub(crate) type Feed = Option<Arc<ChangeLog>>;
