//! The committed watermark file `committed.wm` (see `docs/log-format.md`).

use std::io;

use crate::format::{u32_at, u64_at};
use crate::storage::{Storage, read_all, write_atomic};

/// File name of the watermark.
pub const WATERMARK_FILE: &str = "committed.wm";
const MAGIC: [u8; 4] = *b"QVLW";
const VERSION: u8 = 1;
/// Bytes of the watermark file.
const WATERMARK_BYTES: usize = 28;

/// A decoded watermark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermark {
    pub committed_next: u64,
    pub epoch: u64,
}

/// Encodes a watermark.
pub fn encode(committed_next: u64, epoch: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(WATERMARK_BYTES);
    b.extend_from_slice(&MAGIC);
    b.extend_from_slice(&[VERSION, 0, 0, 0]);
    b.extend_from_slice(&committed_next.to_le_bytes());
    b.extend_from_slice(&epoch.to_le_bytes());
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes a watermark, describing what is wrong if it is invalid.
pub fn decode(b: &[u8]) -> Result<Watermark, String> {
    if b.len() != WATERMARK_BYTES {
        return Err(format!(
            "watermark is {} bytes, expected {WATERMARK_BYTES}",
            b.len()
        ));
    }
    if b[0..4] != MAGIC || b[4] != VERSION || b[5..8] != [0, 0, 0] {
        return Err("bad watermark magic, version or reserved bytes".to_string());
    }
    let crc = crc32c::crc32c(&b[..24]);
    if crc != u32_at(b, 24) {
        return Err(format!(
            "watermark CRC mismatch: stored {:#010x}, computed {crc:#010x}",
            u32_at(b, 24)
        ));
    }
    Ok(Watermark {
        committed_next: u64_at(b, 8),
        epoch: u64_at(b, 16),
    })
}

/// Reads the watermark: `Ok(None)` if absent, `Err` with a description if corrupt.
pub fn read(storage: &dyn Storage) -> Result<Option<Watermark>, String> {
    let f = match storage.open(WATERMARK_FILE, false) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot open: {e}")),
    };
    let bytes = read_all(&*f).map_err(|e| format!("cannot read: {e}"))?;
    decode(&bytes).map(Some)
}

/// Replaces the watermark atomically.
pub fn write(storage: &dyn Storage, committed_next: u64, epoch: u64) -> io::Result<()> {
    write_atomic(storage, WATERMARK_FILE, &encode(committed_next, epoch))
}
