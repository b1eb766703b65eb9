//! The sizes past which a collection reports Redis's larger encoding (OBJECT ENCODING):
//! Redis's `hash-max-listpack-entries`/`-value`, `zset-max-listpack-entries`/`-value`
//! and `set-max-intset-entries`. They are process-wide, like the node they configure,
//! and change at run time (CONFIG SET); a collection keeps the encoding it reached.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One encoding threshold.
#[derive(Debug)]
pub struct Limit(AtomicUsize);

impl Limit {
    const fn new(value: usize) -> Limit {
        Limit(AtomicUsize::new(value))
    }

    /// The current value.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Changes the value.
    pub fn set(&self, value: usize) {
        self.0.store(value, Ordering::Relaxed);
    }
}

/// `hash-max-listpack-entries`: past this many fields a hash is a "hashtable".
pub static HASH_MAX_ENTRIES: Limit = Limit::new(512);
/// `hash-max-listpack-value`: a longer field or value makes a hash a "hashtable".
pub static HASH_MAX_VALUE: Limit = Limit::new(64);
/// `zset-max-listpack-entries`: past this many members a sorted set is a "skiplist".
pub static ZSET_MAX_ENTRIES: Limit = Limit::new(128);
/// `zset-max-listpack-value`: a longer member makes a sorted set a "skiplist".
pub static ZSET_MAX_VALUE: Limit = Limit::new(64);
/// `set-max-intset-entries`: past this many integers a set is a "hashtable".
pub static SET_MAX_INTSET_ENTRIES: Limit = Limit::new(512);
