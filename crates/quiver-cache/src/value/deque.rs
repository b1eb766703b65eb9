//! [`BlockDeque`]: a double-ended queue in blocks of at most [`BLOCK_ITEMS`] items, for list
//! values.
//!
//! One ring buffer for a whole list would grow by doubling, and moving a list of ten million
//! elements to a buffer twice the size copies hundreds of megabytes with the shard locked: a
//! stall of a tenth of a second for every client on that shard. In blocks, a push or a pop
//! at either end touches one block of 8 KiB at most, as Redis's quicklist nodes do. Positions
//! are found by walking block lengths from the nearer end, as Redis walks its nodes.

use std::collections::VecDeque;

use crate::memory::vec_size;

/// Most items in one block (8 KiB of 16-byte items).
pub const BLOCK_ITEMS: usize = 512;

/// A double-ended queue in blocks; see the module docs. No block is empty.
#[derive(Debug, Clone)]
pub struct BlockDeque<T> {
    blocks: VecDeque<VecDeque<T>>,
    len: usize,
    /// Heap bytes of all blocks' buffers, kept up to date so memory is O(1) to report.
    block_bytes: usize,
}

impl<T> Default for BlockDeque<T> {
    fn default() -> Self {
        Self {
            blocks: VecDeque::new(),
            len: 0,
            block_bytes: 0,
        }
    }
}

impl<T> BlockDeque<T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes of the blocks and the block index.
    pub fn heap_bytes(&self) -> usize {
        vec_size::<VecDeque<T>>(self.blocks.capacity()) + self.block_bytes
    }

    /// Adds at the head.
    pub fn push_front(&mut self, item: T) {
        if self.blocks.front().is_none_or(|b| b.len() >= BLOCK_ITEMS) {
            self.blocks.push_front(VecDeque::new());
        }
        self.with_block(0, |b| b.push_front(item));
        self.len += 1;
    }

    /// Adds at the tail.
    pub fn push_back(&mut self, item: T) {
        if self.blocks.back().is_none_or(|b| b.len() >= BLOCK_ITEMS) {
            self.blocks.push_back(VecDeque::new());
        }
        self.with_block(self.blocks.len() - 1, |b| b.push_back(item));
        self.len += 1;
    }

    /// Removes from the head.
    pub fn pop_front(&mut self) -> Option<T> {
        if self.blocks.is_empty() {
            return None;
        }
        let item = self.with_block(0, VecDeque::pop_front)?;
        self.after_removal(0);
        Some(item)
    }

    /// Removes from the tail.
    pub fn pop_back(&mut self) -> Option<T> {
        let last = self.blocks.len().checked_sub(1)?;
        let item = self.with_block(last, VecDeque::pop_back)?;
        self.after_removal(last);
        Some(item)
    }

    /// The item at `idx`.
    pub fn get(&self, idx: usize) -> Option<&T> {
        let (block, offset) = self.locate(idx)?;
        self.blocks[block].get(offset)
    }

    /// The item at `idx`, mutably.
    pub fn get_mut(&mut self, idx: usize) -> Option<&mut T> {
        let (block, offset) = self.locate(idx)?;
        self.blocks[block].get_mut(offset)
    }

    /// Inserts `item` at `idx` (0..=len); a full block is split in two first.
    pub fn insert(&mut self, idx: usize, item: T) {
        assert!(
            idx <= self.len,
            "insert position {idx} past the end ({})",
            self.len
        );
        if idx == self.len {
            return self.push_back(item);
        }
        let (mut block, mut offset) = self.locate(idx).expect("idx < len");
        if self.blocks[block].len() >= BLOCK_ITEMS {
            let half = BLOCK_ITEMS / 2;
            let tail = self.with_block(block, |b| {
                let tail = b.split_off(half);
                b.shrink_to_fit();
                tail
            });
            self.block_bytes += vec_size::<T>(tail.capacity());
            self.blocks.insert(block + 1, tail);
            if offset >= half {
                block += 1;
                offset -= half;
            }
        }
        self.with_block(block, |b| b.insert(offset, item));
        self.len += 1;
    }

    /// All items, head first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.blocks.iter().flatten()
    }

    /// The items from `idx` on, head first.
    pub fn iter_from(&self, idx: usize) -> impl Iterator<Item = &T> {
        let (block, offset) = self.locate(idx).unwrap_or((self.blocks.len(), 0));
        self.blocks
            .range(block..)
            .enumerate()
            .flat_map(move |(i, b)| b.range(if i == 0 { offset } else { 0 }..))
    }

    /// Keeps only the items for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let mut kept = Self::default();
        for block in std::mem::take(&mut self.blocks) {
            for item in block {
                if keep(&item) {
                    kept.push_back(item);
                }
            }
        }
        *self = kept;
    }

    /// Block and offset of position `idx`, walking from the nearer end.
    fn locate(&self, idx: usize) -> Option<(usize, usize)> {
        if idx >= self.len {
            return None;
        }
        if idx < self.len / 2 {
            let mut left = idx;
            for (block, b) in self.blocks.iter().enumerate() {
                if left < b.len() {
                    return Some((block, left));
                }
                left -= b.len();
            }
        } else {
            let mut right = self.len - 1 - idx;
            for (block, b) in self.blocks.iter().enumerate().rev() {
                if right < b.len() {
                    return Some((block, b.len() - 1 - right));
                }
                right -= b.len();
            }
        }
        unreachable!("block lengths add up to len")
    }

    /// Runs `f` on block `block`, keeping the memory count right.
    fn with_block<R>(&mut self, block: usize, f: impl FnOnce(&mut VecDeque<T>) -> R) -> R {
        let b = &mut self.blocks[block];
        let before = vec_size::<T>(b.capacity());
        let r = f(b);
        self.block_bytes = self.block_bytes + vec_size::<T>(b.capacity()) - before;
        r
    }

    /// After an item left block `block`: drops the block if empty, gives back memory of a
    /// block or an index that is mostly unused, as popping a long list empty should not keep
    /// its peak memory.
    fn after_removal(&mut self, block: usize) {
        self.len -= 1;
        let b = &self.blocks[block];
        if b.is_empty() {
            self.block_bytes -= vec_size::<T>(b.capacity());
            self.blocks.remove(block);
            if self.blocks.capacity() > 16 && self.blocks.len() * 4 < self.blocks.capacity() {
                self.blocks.shrink_to(self.blocks.len() * 2);
            }
        } else if b.capacity() > 16 && b.len() * 4 < b.capacity() {
            let keep = b.len() * 2;
            self.with_block(block, |b| b.shrink_to(keep));
        }
    }
}

impl<T> std::ops::Index<usize> for BlockDeque<T> {
    type Output = T;

    fn index(&self, idx: usize) -> &T {
        let len = self.len;
        self.get(idx)
            .unwrap_or_else(|| panic!("index {idx} out of range for a list of {len}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Random operations agree with a plain `VecDeque`, across block splits and removals.
    #[test]
    fn matches_a_vecdeque() {
        let mut rng = Rng::new(7);
        let mut deque = BlockDeque::default();
        let mut model = VecDeque::new();
        for step in 0..60_000u32 {
            match rng.below(10) {
                0..=2 => {
                    deque.push_back(step);
                    model.push_back(step);
                }
                3..=4 => {
                    deque.push_front(step);
                    model.push_front(step);
                }
                5 => assert_eq!(deque.pop_front(), model.pop_front()),
                6 => assert_eq!(deque.pop_back(), model.pop_back()),
                7 => {
                    let at = rng.below(model.len() + 1);
                    deque.insert(at, step);
                    model.insert(at, step);
                }
                8 if !model.is_empty() => {
                    let at = rng.below(model.len());
                    *deque.get_mut(at).unwrap() = step;
                    model[at] = step;
                }
                _ if step % 5_000 == 0 => {
                    deque.retain(|v| v % 3 != 0);
                    model.retain(|v| v % 3 != 0);
                }
                _ => {}
            }
            assert_eq!(deque.len(), model.len());
            if step % 1_000 == 0 {
                assert!(deque.iter().eq(model.iter()));
                assert!(deque.iter().rev().eq(model.iter().rev()));
                let from = rng.below(model.len() + 1);
                assert!(deque.iter_from(from).eq(model.range(from..)));
                for _ in 0..20 {
                    let at = rng.below(model.len() + 1);
                    assert_eq!(deque.get(at), model.get(at));
                }
            }
        }
    }

    #[test]
    fn memory_count_matches_a_recount() {
        let mut rng = Rng::new(3);
        let mut deque = BlockDeque::default();
        for step in 0..20_000u32 {
            match rng.below(4) {
                0 => deque.push_front(step),
                1 => deque.insert(rng.below(deque.len() + 1), step),
                2 => drop(deque.pop_back()),
                _ => deque.push_back(step),
            }
        }
        let recount: usize = deque
            .blocks
            .iter()
            .map(|b| vec_size::<u32>(b.capacity()))
            .sum();
        assert_eq!(deque.block_bytes, recount);
    }

    #[test]
    fn blocks_stay_bounded_and_memory_comes_back() {
        let mut deque = BlockDeque::default();
        let empty = deque.heap_bytes();
        for i in 0..100_000u64 {
            deque.push_front(i);
        }
        assert!(
            deque
                .blocks
                .iter()
                .all(|b| !b.is_empty() && b.len() <= BLOCK_ITEMS)
        );
        assert!(
            deque.heap_bytes() < 100_000 * 8 * 2,
            "{}",
            deque.heap_bytes()
        );
        while deque.pop_back().is_some() {}
        assert!(deque.heap_bytes() <= empty + 512, "{}", deque.heap_bytes());
    }
}
