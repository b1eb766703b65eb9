//! Byte layouts of everything `quiver-log` writes, exactly as `docs/log-format.md` draws
//! them. Pure functions over byte slices: no I/O, no clock.

pub mod batch;
pub mod index;
pub mod record;

pub use batch::{BatchHeader, Codec, HEADER_BYTES, MAX_BATCH_PLAIN_BYTES};
pub use index::{INDEX_ENTRY_BYTES, INDEX_HEADER_BYTES, IndexEntry};
pub use record::{Header, RECORD_HEADER_BYTES};

/// Reads a little-endian `u16` at `at`; the caller has checked the length.
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Reads a little-endian `u32` at `at`; the caller has checked the length.
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads a little-endian `u64` at `at`; the caller has checked the length.
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Reads a little-endian `i64` at `at`; the caller has checked the length.
pub(crate) fn i64_at(b: &[u8], at: usize) -> i64 {
    u64_at(b, at) as i64
}
