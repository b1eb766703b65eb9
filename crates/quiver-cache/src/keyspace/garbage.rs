//! [`Garbage`]: removed keys whose memory is not yet freed.
//!
//! Freeing a value of a million elements takes tens of milliseconds. `UNLINK` and
//! `FLUSHDB`/`FLUSHALL ASYNC` take keys out of the keyspace at once (their memory stops
//! counting) and hand them back as garbage, which a server drops on another thread, as
//! Redis's lazy free does; dropping it where it is frees it there.

use super::Entry;
use crate::table::Table;

/// Elements to free above which a server should drop the garbage on another thread
/// (Redis's `LAZYFREE_THRESHOLD`).
pub const LAZY_FREE_ELEMENTS: usize = 64;

/// Keys taken out of the keyspace; dropping this frees them.
#[derive(Debug, Default)]
#[must_use = "dropping garbage frees it here; hand a heavy one to another thread"]
pub struct Garbage {
    entries: Vec<Entry>,
    tables: Vec<Table<Entry>>,
}

impl Garbage {
    pub(crate) fn entry(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    pub(crate) fn table(&mut self, table: Table<Entry>) {
        if !table.is_empty() {
            self.tables.push(table);
        }
    }

    /// Keys held.
    pub fn keys(&self) -> usize {
        self.entries.len() + self.tables.iter().map(Table::len).sum::<usize>()
    }

    /// Whether freeing this is heavy: more than [`LAZY_FREE_ELEMENTS`] keys, or a value
    /// with more elements than that.
    pub fn is_heavy(&self) -> bool {
        self.keys() > LAZY_FREE_ELEMENTS
            || self
                .entries
                .iter()
                .any(|e| e.value.elements() > LAZY_FREE_ELEMENTS)
    }
}
