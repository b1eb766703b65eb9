//! Clients blocked in a blocking command (BLPOP and the other blocking pops,
//! XREAD and XREADGROUP BLOCK), by (database, key). A push or an XADD to a key
//! that has waiters, or its deletion, a change of its type or a destroyed
//! stream group, makes the keyspace report it ready; the connection that wrote
//! then wakes those waiters, oldest first, and each retries its command.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use quiver_cache::Keyspace;
use tokio::sync::Notify;

/// Waiters of each blocked (database, key), oldest first.
type WaiterMap = HashMap<(usize, Bytes), Vec<Arc<Notify>>>;

/// Waiters per blocked key.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    map: Mutex<WaiterMap>,
    /// Clients blocked now (`blocked_clients` in INFO).
    blocked: AtomicUsize,
}

impl Waiters {
    /// Registers `notify` on every key and tells the keyspace to report pushes to them.
    pub(crate) fn block(
        &self,
        keyspace: &Keyspace,
        db: usize,
        keys: &[Bytes],
        notify: &Arc<Notify>,
    ) {
        let mut map = self.lock();
        self.blocked.fetch_add(1, Ordering::Relaxed);
        for key in keys {
            keyspace
                .block_on(db, key)
                .expect("SELECT only accepts existing databases");
            map.entry((db, key.clone()))
                .or_default()
                .push(Arc::clone(notify));
        }
    }

    /// Removes `notify` from every key; the keyspace stops tracking keys nobody waits on.
    pub(crate) fn unblock(
        &self,
        keyspace: &Keyspace,
        db: usize,
        keys: &[Bytes],
        notify: &Arc<Notify>,
    ) {
        let mut map = self.lock();
        self.blocked.fetch_sub(1, Ordering::Relaxed);
        for key in keys {
            let entry = (db, key.clone());
            if let Some(list) = map.get_mut(&entry) {
                list.retain(|waiter| !Arc::ptr_eq(waiter, notify));
                if list.is_empty() {
                    map.remove(&entry);
                }
            }
            keyspace
                .unblock(db, key)
                .expect("SELECT only accepts existing databases");
        }
    }

    /// Number of clients blocked now.
    pub(crate) fn blocked_clients(&self) -> usize {
        self.blocked.load(Ordering::Relaxed)
    }

    /// Wakes the waiters of every key the keyspace reports ready.
    pub(crate) fn wake_ready(&self, keyspace: &Keyspace) {
        let ready = keyspace.take_ready_keys();
        if ready.is_empty() {
            return;
        }
        let map = self.lock();
        for (db, key) in ready {
            if let Some(list) = map.get(&(db, Bytes::from(key))) {
                for waiter in list {
                    waiter.notify_one();
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, WaiterMap> {
        // Each operation is a handful of map edits that cannot be left half done.
        self.map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
