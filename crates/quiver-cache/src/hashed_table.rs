//! [`HashedTable`]: a [`Table`] that carries its own hash function, for the values that are
//! tables themselves (hashes, sets, sorted-set member maps).

use std::hash::BuildHasher;

use crate::table::{Keyed, Table};

/// A table whose hash function is stored with it (for values: hashes, sets, sorted sets).
#[derive(Debug, Clone)]
pub struct HashedTable<T> {
    table: Table<T>,
    state: foldhash::fast::RandomState,
}

impl<T> Default for HashedTable<T> {
    fn default() -> Self {
        Self {
            table: Table::default(),
            state: foldhash::fast::RandomState::default(),
        }
    }
}

impl<T: Keyed> HashedTable<T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// All items in storage order.
    pub fn items(&self) -> impl Iterator<Item = &T> {
        self.table.items()
    }

    /// The item at `idx`.
    pub fn at(&self, idx: usize) -> &T {
        self.table.at(idx)
    }

    /// The item at `idx`, mutably (its key must not change).
    pub fn at_mut(&mut self, idx: usize) -> &mut T {
        self.table.at_mut(idx)
    }

    /// Hash of `key` under this table's hash function.
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.state.hash_one(key)
    }

    /// Position of `key`.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        self.table.find(self.hash(key), key)
    }

    /// The item a lookup of `key` compares first, if any (see [`Table::first_candidate`]).
    pub fn first_candidate(&self, key: &[u8]) -> Option<&T> {
        self.table.first_candidate(self.hash(key))
    }

    /// Adds an item whose key is absent; returns its position.
    pub fn insert_new(&mut self, item: T) -> usize {
        let h = self.hash(item.key());
        self.table.insert_new(h, item)
    }

    /// Removes the item at `idx`; the last item moves into `idx`.
    pub fn remove_at(&mut self, idx: usize) -> T {
        let h = self.hash(self.table.at(idx).key());
        let state = &self.state;
        self.table.remove_at(idx, h, |t| state.hash_one(t.key()))
    }

    /// Removes the item with `key`, if any.
    pub fn remove(&mut self, key: &[u8]) -> Option<T> {
        self.find(key).map(|idx| self.remove_at(idx))
    }

    /// Bytes of the table's own buffers.
    pub fn struct_bytes(&self) -> usize {
        self.table.struct_bytes()
    }

    /// One SCAN step; see [`Table::scan_step`].
    pub fn scan_step(&self, cursor: u64, f: impl FnMut(&T)) -> u64 {
        self.table.scan_step(cursor, f)
    }
}
