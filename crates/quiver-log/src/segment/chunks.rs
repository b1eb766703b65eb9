//! Large read-ahead buffers, kept for reuse. A buffer of a MiB allocated afresh for every
//! refill costs more than the read into it: the allocator hands freed buffers of that size
//! back to the kernel, so every new one is faulted in and zeroed page by page again. A
//! pooled buffer is reused once every record read from it has been dropped.

use std::sync::{Mutex, PoisonError};

use bytes::BytesMut;

/// Reads this large or larger come from the pool; smaller ones are plain allocations,
/// which the allocator serves from memory it keeps.
pub const POOLED_MIN_BYTES: usize = 256 << 10;

/// The size of a pooled buffer; a longer read is a plain allocation.
pub const POOLED_BYTES: usize = 1 << 20;

/// Most buffers the process keeps: the memory held for reuse stays at or under 16 MiB.
const POOL_BUFFERS: usize = 16;

/// The process's pool of read-ahead buffers.
pub static CHUNKS: ChunkPool = ChunkPool::new(POOL_BUFFERS);

/// Buffers of [`POOLED_BYTES`], each either free or still shared with records read from it.
#[derive(Debug)]
pub struct ChunkPool {
    buffers: Mutex<Vec<BytesMut>>,
    most: usize,
}

impl ChunkPool {
    pub const fn new(most: usize) -> Self {
        Self {
            buffers: Mutex::new(Vec::new()),
            most,
        }
    }

    /// Fills a buffer with `len` bytes by `read` and returns them. A pooled buffer serves
    /// reads of [`POOLED_MIN_BYTES`] to [`POOLED_BYTES`]; it goes back to the pool after
    /// the read (the bytes returned still share it until they are dropped).
    pub fn read(
        &self,
        len: usize,
        read: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
    ) -> std::io::Result<bytes::Bytes> {
        if !(POOLED_MIN_BYTES..=POOLED_BYTES).contains(&len) {
            let mut buf = BytesMut::zeroed(len);
            read(&mut buf)?;
            return Ok(buf.freeze());
        }
        let mut buf = self
            .free()
            .unwrap_or_else(|| BytesMut::with_capacity(POOLED_BYTES));
        buf.resize(len, 0);
        read(&mut buf)?;
        let bytes = buf.split().freeze();
        self.give_back(buf);
        Ok(bytes)
    }

    /// A pooled buffer no record shares any more, emptied, taken out of the pool.
    fn free(&self) -> Option<BytesMut> {
        let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        let at = buffers
            .iter_mut()
            .position(|buf| buf.try_reclaim(POOLED_BYTES))?;
        Some(buffers.swap_remove(at))
    }

    /// Keeps the handle left after a read (an empty view of the buffer) if there is room.
    fn give_back(&self, buf: BytesMut) {
        let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        if buffers.len() < self.most {
            buffers.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(byte: u8) -> impl FnOnce(&mut [u8]) -> std::io::Result<()> {
        move |buf| {
            buf.fill(byte);
            Ok(())
        }
    }

    #[test]
    fn a_buffer_is_reused_once_its_bytes_are_dropped() {
        let pool = ChunkPool::new(2);
        let first = pool.read(POOLED_MIN_BYTES, fill(1)).unwrap();
        let at = first.as_ptr();
        // Still shared: a second read gets another buffer.
        let second = pool.read(POOLED_BYTES, fill(2)).unwrap();
        assert_ne!(second.as_ptr(), at);
        assert!(first.iter().all(|&b| b == 1), "the first read is intact");
        drop(first);
        let third = pool.read(POOLED_MIN_BYTES + 1, fill(3)).unwrap();
        assert_eq!(
            third.as_ptr(),
            at,
            "the free buffer is reused from its start"
        );
        assert_eq!(third.len(), POOLED_MIN_BYTES + 1);
        assert!(third.iter().all(|&b| b == 3));
        assert!(
            second.iter().all(|&b| b == 2),
            "a shared buffer is not touched"
        );
    }

    #[test]
    fn a_slice_keeps_its_buffer_out_of_use() {
        let pool = ChunkPool::new(1);
        let read = pool.read(POOLED_BYTES, fill(7)).unwrap();
        let kept = read.slice(10..20);
        drop(read);
        let next = pool.read(POOLED_BYTES, fill(8)).unwrap();
        assert!(kept.iter().all(|&b| b == 7));
        assert!(next.iter().all(|&b| b == 8));
    }

    #[test]
    fn the_pool_holds_at_most_its_bound() {
        let pool = ChunkPool::new(2);
        let reads: Vec<_> = (0..4)
            .map(|i| pool.read(POOLED_BYTES, fill(i)).unwrap())
            .collect();
        assert_eq!(pool.buffers.lock().unwrap().len(), 2);
        drop(reads);
        let again = pool.read(POOLED_BYTES, fill(9)).unwrap();
        assert_eq!(pool.buffers.lock().unwrap().len(), 2);
        assert!(again.iter().all(|&b| b == 9));
    }

    #[test]
    fn reads_outside_the_pooled_sizes_are_plain_and_a_failed_read_keeps_nothing() {
        let pool = ChunkPool::new(2);
        let small = pool.read(POOLED_MIN_BYTES - 1, fill(1)).unwrap();
        let large = pool.read(POOLED_BYTES + 1, fill(2)).unwrap();
        assert_eq!(
            (small.len(), large.len()),
            (POOLED_MIN_BYTES - 1, POOLED_BYTES + 1)
        );
        assert!(pool.buffers.lock().unwrap().is_empty());
        let failed = pool.read(POOLED_BYTES, |_| Err(std::io::Error::other("disk")));
        assert!(failed.is_err());
        assert!(pool.buffers.lock().unwrap().is_empty());
    }
}
