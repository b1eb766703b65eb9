//! List values: elements in a deque of blocks (see [`BlockDeque`]).

use crate::table::box_size;
use crate::value::deque::BlockDeque;

/// A list that stays below this many elements and [`LIST_LISTPACK_MAX_BYTES`] reports
/// "listpack" (Redis 7.2's single-node list); past it, "quicklist".
pub const LIST_LISTPACK_MAX_ENTRIES: usize = 128;
/// Redis's default `list-max-listpack-size -2` (8 KiB per node).
pub const LIST_LISTPACK_MAX_BYTES: usize = 8192;

/// A list value.
#[derive(Debug, Clone, Default)]
pub struct ListValue {
    items: BlockDeque,
    payload_bytes: usize,
    big: bool,
}

impl ListValue {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The elements, head first.
    pub fn items(&self) -> &BlockDeque {
        &self.items
    }

    /// Adds at the head.
    pub fn push_front(&mut self, v: &[u8]) {
        self.account_add(v.len());
        self.items.push_front(v);
    }

    /// Adds at the tail.
    pub fn push_back(&mut self, v: &[u8]) {
        self.account_add(v.len());
        self.items.push_back(v);
    }

    /// Adds at the head or tail.
    pub fn push(&mut self, v: &[u8], front: bool) {
        if front {
            self.push_front(v);
        } else {
            self.push_back(v);
        }
    }

    /// Removes from the head or tail.
    pub fn pop(&mut self, front: bool) -> Option<Box<[u8]>> {
        let v = if front {
            self.items.pop_front()
        } else {
            self.items.pop_back()
        }?;
        self.payload_bytes -= v.len();
        Some(v)
    }

    /// Inserts `v` at `idx` (0..=len).
    pub fn insert(&mut self, idx: usize, v: &[u8]) {
        self.account_add(v.len());
        self.items.insert(idx, v);
    }

    /// Replaces the element at `idx`.
    pub fn set(&mut self, idx: usize, v: &[u8]) {
        let old = self
            .items
            .get(idx)
            .expect("LSET checks the index first")
            .len();
        self.payload_bytes -= old;
        self.account_add(v.len());
        self.items.set(idx, v);
    }

    /// Keeps only elements whose position satisfies `keep`, in order.
    pub fn retain_positions(&mut self, mut keep: impl FnMut(usize, &[u8]) -> bool) {
        let mut i = 0;
        let mut removed = 0;
        self.items.retain(|v| {
            let k = keep(i, v);
            i += 1;
            if !k {
                removed += v.len();
            }
            k
        });
        self.payload_bytes -= removed;
    }

    /// Heap bytes of this value, the box included.
    pub fn mem(&self) -> usize {
        box_size::<Self>() + self.items.heap_bytes()
    }

    /// The encoding Redis would report for this list.
    pub fn encoding(&self) -> &'static str {
        if self.big { "quicklist" } else { "listpack" }
    }

    fn account_add(&mut self, n: usize) {
        self.payload_bytes += n;
        self.big |= self.items.len() + 1 > LIST_LISTPACK_MAX_ENTRIES
            || self.payload_bytes > LIST_LISTPACK_MAX_BYTES;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_pop_and_memory_return() {
        let mut l = ListValue::default();
        let empty = l.mem();
        for i in 0..100 {
            l.push_back(format!("{i}").as_bytes());
        }
        l.push_front(b"head");
        assert_eq!(&l.items()[0], b"head");
        assert_eq!(l.pop(false).as_deref(), Some(&b"99"[..]));
        while l.pop(true).is_some() {}
        assert!(l.mem() <= empty + 512);
        l.push_back(b"a");
        l.push_back(b"b");
        l.retain_positions(|i, _| i == 1);
        assert_eq!(&l.items()[0], b"b");
    }
}
