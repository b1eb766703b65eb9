//! Dense storage in fixed-size chunks: a `Vec` whose unused capacity is bounded by one chunk.
//! A plain `Vec` doubles, so a big table could hold up to half its size in unused (but
//! accounted) capacity; with chunks, `used_memory` stays close to what is really touched.

use crate::memory::vec_size;

/// Items per chunk once storage outgrows its first chunk (the first grows by doubling up to
/// this, so small tables stay small).
pub const CHUNK_ITEMS: usize = 1024;
const CHUNK_SHIFT: u32 = CHUNK_ITEMS.trailing_zeros();
const _: () = assert!(CHUNK_ITEMS.is_power_of_two());

/// A dense, index-addressed sequence stored in chunks of [`CHUNK_ITEMS`].
#[derive(Debug, Clone)]
pub struct Chunks<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
    /// Bytes of all chunk buffers, kept current so [`Chunks::bytes`] is O(1).
    chunk_bytes: usize,
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Chunks<T> {
    /// Empty storage that allocates nothing.
    pub const fn new() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
            chunk_bytes: 0,
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The item at `idx`.
    pub fn get(&self, idx: usize) -> &T {
        &self.chunks[idx >> CHUNK_SHIFT][idx & (CHUNK_ITEMS - 1)]
    }

    /// The item at `idx`, mutably.
    pub fn get_mut(&mut self, idx: usize) -> &mut T {
        &mut self.chunks[idx >> CHUNK_SHIFT][idx & (CHUNK_ITEMS - 1)]
    }

    /// All items in index order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// Appends an item.
    pub fn push(&mut self, item: T) {
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK_ITEMS) {
            let cap = if self.chunks.is_empty() {
                0
            } else {
                CHUNK_ITEMS
            };
            self.chunks.push(Vec::with_capacity(cap));
            self.chunk_bytes += vec_size::<T>(cap);
        }
        let last = self.chunks.last_mut().expect("a chunk was ensured above");
        let before = vec_size::<T>(last.capacity());
        last.push(item);
        self.chunk_bytes = self.chunk_bytes + vec_size::<T>(last.capacity()) - before;
        self.len += 1;
    }

    /// Removes the item at `idx`, moving the last item into its place.
    pub fn swap_remove(&mut self, idx: usize) -> T {
        assert!(
            idx < self.len,
            "swap_remove index {idx} past length {}",
            self.len
        );
        let last_chunk = self
            .chunks
            .last_mut()
            .expect("non-empty storage has a chunk");
        let last = last_chunk.pop().expect("the last chunk is never empty");
        if last_chunk.is_empty() {
            self.chunk_bytes -= vec_size::<T>(last_chunk.capacity());
            self.chunks.pop();
        }
        self.len -= 1;
        if idx == self.len {
            last
        } else {
            std::mem::replace(self.get_mut(idx), last)
        }
    }

    /// Gives back spare capacity of a single-chunk store (keeping room for `keep` items).
    pub fn shrink_to(&mut self, keep: usize) {
        if let [only] = self.chunks.as_mut_slice() {
            let before = vec_size::<T>(only.capacity());
            only.shrink_to(keep);
            self.chunk_bytes = self.chunk_bytes + vec_size::<T>(only.capacity()) - before;
        }
    }

    /// Removes everything and frees the memory.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Bytes of the buffers.
    pub fn bytes(&self) -> usize {
        vec_size::<Vec<T>>(self.chunks.capacity()) + self.chunk_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_get_swap_remove_across_chunks() {
        let mut c = Chunks::default();
        for i in 0..3000u32 {
            c.push(i);
        }
        assert_eq!(c.len(), 3000);
        assert_eq!(*c.get(2500), 2500);
        assert_eq!(c.swap_remove(10), 10);
        assert_eq!(*c.get(10), 2999);
        assert_eq!(c.swap_remove(2998), 2998);
        assert_eq!(c.len(), 2998);
        assert_eq!(c.iter().count(), 2998);
        while !c.is_empty() {
            c.swap_remove(0);
        }
        assert_eq!(c.bytes(), vec_size::<Vec<u32>>(c.chunks.capacity()));
    }

    #[test]
    fn unused_capacity_is_at_most_one_chunk() {
        let mut c = Chunks::default();
        for i in 0..(CHUNK_ITEMS * 5 + 1) as u64 {
            c.push(i);
        }
        let used = c.len() * 8;
        let spare = c.bytes() - used;
        assert!(spare <= CHUNK_ITEMS * 8 + 1024, "spare {spare}");
    }
}
