//! Memory accounting: what an allocation of `n` bytes really costs, and what the standard
//! collections used by values cost for a given capacity. The figures model glibc malloc
//! (8 bytes of chunk header, 16-byte granularity, 32-byte minimum chunk) and hashbrown's
//! table layout (one control byte per bucket, buckets a power of two at most 7/8 full), so
//! `used_memory` tracks the process's real heap growth rather than payload bytes.

use std::mem::size_of;

/// malloc's per-chunk header.
const MALLOC_HEADER_BYTES: usize = 8;
/// malloc's size granularity.
const MALLOC_ALIGN_BYTES: usize = 16;
/// malloc's smallest chunk.
const MALLOC_MIN_CHUNK_BYTES: usize = 32;
/// hashbrown's control-byte group width (trailing control bytes).
const HASHBROWN_GROUP_BYTES: usize = 16;

/// Bytes malloc really takes for an allocation of `n` bytes (0 for no allocation).
pub fn alloc_size(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let chunk = (n + MALLOC_HEADER_BYTES).div_ceil(MALLOC_ALIGN_BYTES) * MALLOC_ALIGN_BYTES;
    chunk.max(MALLOC_MIN_CHUNK_BYTES)
}

/// Bytes a hashbrown table (std `HashMap`/`HashSet`) with `capacity` usable slots of `T`
/// takes.
pub fn hash_table_size<T>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 4 {
        4
    } else if capacity < 8 {
        8
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    alloc_size(buckets * size_of::<T>() + buckets + HASHBROWN_GROUP_BYTES)
}

/// Bytes a `Vec<T>`/`VecDeque<T>` buffer with `capacity` slots takes.
pub fn vec_size<T>(capacity: usize) -> usize {
    alloc_size(capacity * size_of::<T>())
}

/// Bytes a `Box<[u8]>` of `len` bytes takes on the heap.
pub fn bytes_size(len: usize) -> usize {
    alloc_size(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malloc_model() {
        assert_eq!(alloc_size(0), 0);
        assert_eq!(alloc_size(1), 32);
        assert_eq!(alloc_size(24), 32);
        assert_eq!(alloc_size(25), 48);
        assert_eq!(alloc_size(80), 96);
    }

    #[test]
    fn hash_tables_grow_in_powers_of_two() {
        assert_eq!(hash_table_size::<u64>(0), 0);
        assert!(hash_table_size::<u64>(3) < hash_table_size::<u64>(7));
        assert_eq!(
            hash_table_size::<u64>(14),
            alloc_size(16 * 8 + 16 + HASHBROWN_GROUP_BYTES)
        );
    }
}
