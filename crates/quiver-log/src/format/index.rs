//! Sparse index file: 16-byte header, then 20-byte CRC'd entries.

use super::{i64_at, u32_at, u64_at};

/// Bytes of the index file header.
pub const INDEX_HEADER_BYTES: usize = 16;
/// Bytes of one index entry.
pub const INDEX_ENTRY_BYTES: usize = 20;
/// `"QVLI"`.
const INDEX_MAGIC: [u8; 4] = *b"QVLI";
const INDEX_VERSION: u8 = 1;

/// Bit 31 of the stored `rel_offset`: this is a sealed segment's end entry.
const END_FLAG: u32 = 1 << 31;

/// One index point: a batch boundary in a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// `batch.base_offset - segment base`.
    pub rel_offset: u32,
    /// Byte position of the batch in the segment.
    pub position: u32,
    /// Largest record timestamp before `position` in the segment (`i64::MIN` if none).
    pub max_ts_before_ms: i64,
    /// The end entry of a sealed segment (written only once its data is durable).
    pub end: bool,
}

impl IndexEntry {
    /// The entry every segment starts with.
    pub const START: IndexEntry = IndexEntry {
        rel_offset: 0,
        position: 0,
        max_ts_before_ms: i64::MIN,
        end: false,
    };

    /// An ordinary index point.
    pub fn point(rel_offset: u32, position: u32, max_ts_before_ms: i64) -> IndexEntry {
        IndexEntry {
            rel_offset,
            position,
            max_ts_before_ms,
            end: false,
        }
    }

    /// Appends the encoded entry with its CRC.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let stored = if self.end {
            self.rel_offset | END_FLAG
        } else {
            self.rel_offset
        };
        out.extend_from_slice(&stored.to_le_bytes());
        out.extend_from_slice(&self.position.to_le_bytes());
        out.extend_from_slice(&self.max_ts_before_ms.to_le_bytes());
        let crc = crc32c::crc32c(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
    }
}

/// Encodes the index file header.
pub fn encode_header(base_offset: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(INDEX_HEADER_BYTES);
    out.extend_from_slice(&INDEX_MAGIC);
    out.extend_from_slice(&[INDEX_VERSION, 0, 0, 0]);
    out.extend_from_slice(&base_offset.to_le_bytes());
    out
}

/// Decodes an index file, keeping the longest valid prefix of entries. Returns `None` when
/// the header is missing or names another segment.
pub fn decode(bytes: &[u8], base_offset: u64) -> Option<Vec<IndexEntry>> {
    if bytes.len() < INDEX_HEADER_BYTES
        || bytes[0..4] != INDEX_MAGIC
        || bytes[4] != INDEX_VERSION
        || bytes[5..8] != [0, 0, 0]
        || u64_at(bytes, 8) != base_offset
    {
        return None;
    }
    let mut out: Vec<IndexEntry> = Vec::new();
    for chunk in bytes[INDEX_HEADER_BYTES..].chunks_exact(INDEX_ENTRY_BYTES) {
        if crc32c::crc32c(&chunk[..16]) != u32_at(chunk, 16) {
            break;
        }
        let stored = u32_at(chunk, 0);
        let e = IndexEntry {
            rel_offset: stored & !END_FLAG,
            position: u32_at(chunk, 4),
            max_ts_before_ms: i64_at(chunk, 8),
            end: stored & END_FLAG != 0,
        };
        let ordered = match out.last() {
            None => e == IndexEntry::START,
            Some(p) => {
                e.position > p.position
                    && e.rel_offset >= p.rel_offset
                    && e.max_ts_before_ms >= p.max_ts_before_ms
            }
        };
        if !ordered {
            break;
        }
        out.push(e);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_and_stops_at_damage() {
        let mut b = encode_header(42);
        IndexEntry::START.encode(&mut b);
        IndexEntry::point(3, 100, 9).encode(&mut b);
        IndexEntry {
            end: true,
            ..IndexEntry::point(5, 200, 9)
        }
        .encode(&mut b);
        assert_eq!(decode(&b, 42).unwrap().len(), 3);
        assert!(decode(&b, 42).unwrap()[2].end);
        assert!(decode(&b, 41).is_none());
        let n = b.len();
        b[n - 3] ^= 0x40;
        assert_eq!(decode(&b, 42).unwrap().len(), 2);
        assert_eq!(decode(&b[..b.len() - 1], 42).unwrap().len(), 2);
    }
}
