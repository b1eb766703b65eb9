//! [`BlockDeque`]: a double-ended queue of byte strings packed into blocks of about 8 KiB,
//! for list values.
//!
//! One ring buffer for a whole list would grow by doubling, and moving a list of ten million
//! elements to a buffer twice the size copies hundreds of megabytes with the shard locked: a
//! stall of a tenth of a second for every client on that shard. In blocks, a push or a pop
//! at either end touches one block, as Redis's quicklist nodes do. Within a block the
//! elements' bytes share one buffer (no allocation per element, 8 bytes of bookkeeping
//! each): a push appends its bytes to the buffer, wherever the element goes in the list, and
//! the bytes of removed elements are reclaimed when they are half the buffer. Positions are
//! found by walking block lengths from the nearer end, as Redis walks its nodes.

use std::collections::VecDeque;
use std::ops::Range;

use crate::memory::vec_size;

/// Most elements in one block.
pub const BLOCK_ITEMS: usize = 512;
/// Bytes of element data past which a block takes no more elements (one larger element
/// gets a block of its own).
pub const BLOCK_BYTES: usize = 8 * 1024;

/// Where an element's bytes sit in its block's buffer.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn range(self) -> Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// Some consecutive elements of the list.
#[derive(Debug, Clone, Default)]
struct Block {
    data: Vec<u8>,
    /// The elements in list order.
    spans: VecDeque<Span>,
    /// Bytes of `data` no element uses any more.
    dead: usize,
}

impl Block {
    fn heap_bytes(&self) -> usize {
        vec_size::<u8>(self.data.capacity()) + vec_size::<Span>(self.spans.capacity())
    }

    fn get(&self, offset: usize) -> Option<&[u8]> {
        self.spans.get(offset).map(|span| &self.data[span.range()])
    }

    /// Whether `len` more bytes still fit.
    fn has_room(&self, len: usize) -> bool {
        self.spans.len() < BLOCK_ITEMS && self.data.len() - self.dead + len <= BLOCK_BYTES
    }

    /// Appends `bytes` to the buffer; the caller places the span.
    fn store(&mut self, bytes: &[u8]) -> Span {
        if self.data.capacity() - self.data.len() < bytes.len() && !self.spans.is_empty() {
            // About to grow: reclaim first if that makes the room.
            if self.dead >= bytes.len() {
                self.compact();
            }
        }
        let start = u32::try_from(self.data.len()).expect("a block buffer stays under 4 GiB");
        self.data.extend_from_slice(bytes);
        Span {
            start,
            len: u32::try_from(bytes.len()).expect("elements are bounded under 4 GiB"),
        }
    }

    /// Notes that `span`'s bytes are no longer used; reclaims them when half is dead.
    fn release(&mut self, span: Span) {
        self.dead += span.len as usize;
        if self.spans.is_empty() {
            self.data = Vec::new();
            self.dead = 0;
        } else if self.dead * 2 > self.data.len() && self.data.len() > 64 {
            self.compact();
        }
    }

    /// Rewrites the buffer with the live elements only, in list order, leaving a quarter
    /// of room (up to a full block) so that the next pushes do not grow it at once.
    fn compact(&mut self) {
        let live = self.data.len() - self.dead;
        let mut data = Vec::with_capacity((live + live / 4).min(BLOCK_BYTES).max(live));
        for span in &mut self.spans {
            let start = u32::try_from(data.len()).expect("a block buffer stays under 4 GiB");
            data.extend_from_slice(&self.data[span.range()]);
            span.start = start;
        }
        self.data = data;
        self.dead = 0;
        if self.spans.capacity() > 16 && self.spans.len() * 4 < self.spans.capacity() {
            self.spans.shrink_to(self.spans.len() * 2);
        }
    }
}

/// A double-ended queue of byte strings in blocks; see the module docs. No block is empty.
#[derive(Debug, Clone, Default)]
pub struct BlockDeque {
    blocks: VecDeque<Block>,
    len: usize,
    /// Heap bytes of all blocks, kept up to date so memory is O(1) to report.
    block_bytes: usize,
}

impl BlockDeque {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes of the blocks and the block index.
    pub fn heap_bytes(&self) -> usize {
        vec_size::<Block>(self.blocks.capacity()) + self.block_bytes
    }

    /// Adds at the head.
    pub fn push_front(&mut self, bytes: &[u8]) {
        if self.blocks.front().is_none_or(|b| !b.has_room(bytes.len())) {
            self.blocks.push_front(Block::default());
        }
        self.with_block(0, |b| {
            let span = b.store(bytes);
            b.spans.push_front(span);
        });
        self.len += 1;
    }

    /// Adds at the tail.
    pub fn push_back(&mut self, bytes: &[u8]) {
        if self.blocks.back().is_none_or(|b| !b.has_room(bytes.len())) {
            self.blocks.push_back(Block::default());
        }
        self.with_block(self.blocks.len() - 1, |b| {
            let span = b.store(bytes);
            b.spans.push_back(span);
        });
        self.len += 1;
    }

    /// Removes from the head.
    pub fn pop_front(&mut self) -> Option<Box<[u8]>> {
        if self.blocks.is_empty() {
            return None;
        }
        self.remove_in(0, |b| b.spans.pop_front())
    }

    /// Removes from the tail.
    pub fn pop_back(&mut self) -> Option<Box<[u8]>> {
        let last = self.blocks.len().checked_sub(1)?;
        self.remove_in(last, |b| b.spans.pop_back())
    }

    /// The element at `idx`.
    pub fn get(&self, idx: usize) -> Option<&[u8]> {
        let (block, offset) = self.locate(idx)?;
        self.blocks[block].get(offset)
    }

    /// Replaces the element at `idx`; returns false when `idx` is out of range.
    pub fn set(&mut self, idx: usize, bytes: &[u8]) -> bool {
        let Some((block, offset)) = self.locate(idx) else {
            return false;
        };
        self.with_block(block, |b| {
            let old = b.spans[offset];
            if old.len as usize == bytes.len() {
                b.data[old.range()].copy_from_slice(bytes);
                return;
            }
            let span = b.store(bytes);
            // Storing may have compacted the buffer, moving the old bytes.
            let old = std::mem::replace(&mut b.spans[offset], span);
            b.release(old);
        });
        true
    }

    /// Inserts `bytes` at `idx` (0..=len); a full block is split in two first.
    pub fn insert(&mut self, idx: usize, bytes: &[u8]) {
        assert!(
            idx <= self.len,
            "insert position {idx} past the end ({})",
            self.len
        );
        if idx == self.len {
            return self.push_back(bytes);
        }
        let (mut block, mut offset) = self.locate(idx).expect("idx < len");
        if !self.blocks[block].has_room(bytes.len()) && self.blocks[block].spans.len() > 1 {
            let half = self.blocks[block].spans.len() / 2;
            let tail = self.with_block(block, |b| {
                let mut tail = Block::default();
                for span in b.spans.split_off(half) {
                    let moved = tail.store(&b.data[span.range()]);
                    tail.spans.push_back(moved);
                    b.dead += span.len as usize;
                }
                b.compact();
                tail
            });
            self.block_bytes += tail.heap_bytes();
            self.blocks.insert(block + 1, tail);
            if offset >= half {
                block += 1;
                offset -= half;
            }
        }
        self.with_block(block, |b| {
            let span = b.store(bytes);
            b.spans.insert(offset, span);
        });
        self.len += 1;
    }

    /// All elements, head first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u8]> {
        self.blocks
            .iter()
            .flat_map(|b| b.spans.iter().map(|span| &b.data[span.range()]))
    }

    /// The elements from `idx` on, head first.
    pub fn iter_from(&self, idx: usize) -> impl Iterator<Item = &[u8]> {
        let (block, offset) = self.locate(idx).unwrap_or((self.blocks.len(), 0));
        self.blocks
            .range(block..)
            .enumerate()
            .flat_map(move |(i, b)| {
                let skip = if i == 0 { offset } else { 0 };
                b.spans.range(skip..).map(|span| &b.data[span.range()])
            })
    }

    /// Keeps only the elements for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&[u8]) -> bool) {
        let mut kept = Self::default();
        for element in self.iter() {
            if keep(element) {
                kept.push_back(element);
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
                if left < b.spans.len() {
                    return Some((block, left));
                }
                left -= b.spans.len();
            }
        } else {
            let mut right = self.len - 1 - idx;
            for (block, b) in self.blocks.iter().enumerate().rev() {
                if right < b.spans.len() {
                    return Some((block, b.spans.len() - 1 - right));
                }
                right -= b.spans.len();
            }
        }
        unreachable!("block lengths add up to len")
    }

    /// Runs `f` on block `block`, keeping the memory count right.
    fn with_block<R>(&mut self, block: usize, f: impl FnOnce(&mut Block) -> R) -> R {
        let b = &mut self.blocks[block];
        let before = b.heap_bytes();
        let r = f(b);
        self.block_bytes = self.block_bytes + b.heap_bytes() - before;
        r
    }

    /// Takes the span `take` removes from block `block` and hands back its bytes; drops the
    /// block if that emptied it.
    fn remove_in(
        &mut self,
        block: usize,
        take: impl FnOnce(&mut Block) -> Option<Span>,
    ) -> Option<Box<[u8]>> {
        let element = self.with_block(block, |b| {
            let span = take(b)?;
            let element: Box<[u8]> = b.data[span.range()].into();
            b.release(span);
            Some(element)
        })?;
        self.len -= 1;
        if self.blocks[block].spans.is_empty() {
            let b = self.blocks.remove(block).expect("the block exists");
            self.block_bytes -= b.heap_bytes();
            if self.blocks.is_empty() {
                self.blocks = VecDeque::new();
            } else if self.blocks.capacity() > 16 && self.blocks.len() * 4 < self.blocks.capacity()
            {
                self.blocks.shrink_to(self.blocks.len() * 2);
            }
        }
        Some(element)
    }
}

impl std::ops::Index<usize> for BlockDeque {
    type Output = [u8];

    fn index(&self, idx: usize) -> &[u8] {
        let len = self.len;
        self.get(idx)
            .unwrap_or_else(|| panic!("index {idx} out of range for a list of {len}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn element(rng: &mut Rng, step: u32) -> Vec<u8> {
        // Mostly short, now and then longer than a block.
        let len = match rng.below(50) {
            0 => BLOCK_BYTES + rng.below(100),
            1..=5 => rng.below(2_000),
            _ => rng.below(70),
        };
        let mut bytes = step.to_le_bytes().to_vec();
        bytes.resize(len.max(4), b'x');
        bytes
    }

    /// Random operations agree with a plain `VecDeque`, across block splits, removals and
    /// buffer compactions.
    #[test]
    fn matches_a_vecdeque() {
        let mut rng = Rng::new(7);
        let mut deque = BlockDeque::default();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        for step in 0..40_000u32 {
            let bytes = element(&mut rng, step);
            match rng.below(11) {
                0..=2 => {
                    deque.push_back(&bytes);
                    model.push_back(bytes);
                }
                3..=4 => {
                    deque.push_front(&bytes);
                    model.push_front(bytes);
                }
                5 => assert_eq!(deque.pop_front().map(Vec::from), model.pop_front()),
                6 => assert_eq!(deque.pop_back().map(Vec::from), model.pop_back()),
                7 => {
                    let at = rng.below(model.len() + 1);
                    deque.insert(at, &bytes);
                    model.insert(at, bytes);
                }
                8 | 9 if !model.is_empty() => {
                    let at = rng.below(model.len());
                    assert!(deque.set(at, &bytes));
                    model[at] = bytes;
                }
                _ if step % 5_000 == 0 => {
                    deque.retain(|v| v[0] % 3 != 0);
                    model.retain(|v| v[0] % 3 != 0);
                }
                _ => {}
            }
            assert_eq!(deque.len(), model.len());
            if step % 500 == 0 {
                assert!(deque.iter().eq(model.iter().map(Vec::as_slice)));
                assert!(deque.iter().rev().eq(model.iter().rev().map(Vec::as_slice)));
                let from = rng.below(model.len() + 1);
                assert!(
                    deque
                        .iter_from(from)
                        .eq(model.range(from..).map(Vec::as_slice))
                );
                for _ in 0..20 {
                    let at = rng.below(model.len() + 1);
                    assert_eq!(deque.get(at), model.get(at).map(Vec::as_slice));
                }
                let recount: usize = deque.blocks.iter().map(Block::heap_bytes).sum();
                assert_eq!(deque.block_bytes, recount);
            }
        }
        assert!(!deque.set(deque.len(), b"x"));
    }

    #[test]
    fn blocks_stay_bounded_and_memory_comes_back() {
        let mut deque = BlockDeque::default();
        let empty = deque.heap_bytes();
        let value = [7u8; 64];
        for _ in 0..100_000 {
            deque.push_front(&value);
        }
        assert!(deque.blocks.iter().all(|b| {
            !b.spans.is_empty() && b.spans.len() <= BLOCK_ITEMS && b.data.len() <= BLOCK_BYTES
        }));
        // 64 bytes of data and 8 of bookkeeping per element, with some slack.
        let per_element = deque.heap_bytes() as f64 / 100_000.0;
        assert!(per_element < 80.0, "{per_element} bytes per element");
        while deque.pop_back().is_some() {}
        assert!(deque.heap_bytes() <= empty + 512, "{}", deque.heap_bytes());
    }
}
