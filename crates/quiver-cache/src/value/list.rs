//! List values: elements in a deque of blocks (see [`BlockDeque`]).

use crate::table::box_size;
use crate::value::deque::BlockDeque;

/// A list value.
#[derive(Debug, Clone, Default)]
pub struct ListValue {
    items: BlockDeque,
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
        self.items.push_front(v);
    }

    /// Adds at the tail.
    pub fn push_back(&mut self, v: &[u8]) {
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
        if front {
            self.items.pop_front()
        } else {
            self.items.pop_back()
        }
    }

    /// Inserts `v` at `idx` (0..=len).
    pub fn insert(&mut self, idx: usize, v: &[u8]) {
        self.items.insert(idx, v);
    }

    /// Replaces the element at `idx`.
    pub fn set(&mut self, idx: usize, v: &[u8]) {
        self.items.set(idx, v);
    }

    /// Keeps only elements whose position satisfies `keep`, in order.
    pub fn retain_positions(&mut self, mut keep: impl FnMut(usize, &[u8]) -> bool) {
        let mut i = 0;
        self.items.retain(|v| {
            let k = keep(i, v);
            i += 1;
            k
        });
    }

    /// Heap bytes of this value, the box included.
    pub fn mem(&self) -> usize {
        box_size::<Self>() + self.items.heap_bytes()
    }

    /// The encoding Redis 7.0 reports for every list.
    pub fn encoding(&self) -> &'static str {
        "quicklist"
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
