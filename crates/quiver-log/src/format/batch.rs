//! The 48-byte batch header: encode, check and CRC.

use super::{i64_at, u32_at, u64_at};

/// Bytes of a batch header.
pub const HEADER_BYTES: usize = 48;
/// `"QVLB"`.
pub const BATCH_MAGIC: [u8; 4] = *b"QVLB";
/// The only batch version this code reads or writes.
pub const BATCH_VERSION: u8 = 1;
/// Largest plain (uncompressed) batch payload: bounds what a reader allocates before the
/// CRC has been checked.
pub const MAX_BATCH_PLAIN_BYTES: usize = 16 << 20;
/// Position of the CRC field; the CRC covers the bytes before it and the payload.
const CRC_AT: usize = 44;

/// Compression codec of a batch payload, taken from the flags only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// Payload stored as is.
    None,
    /// lz4 block format.
    Lz4,
}

impl Codec {
    fn bits(self) -> u8 {
        match self {
            Codec::None => 0,
            Codec::Lz4 => 1,
        }
    }
}

/// A decoded batch header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    pub codec: Codec,
    pub base_offset: u64,
    pub first_ts_ms: i64,
    pub epoch: u64,
    pub count: u32,
    pub stored_len: u32,
    pub plain_len: u32,
    pub crc: u32,
}

/// Why a header or batch is not valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchFault {
    #[error("bad magic {0:02x?}, expected \"QVLB\"")]
    Magic([u8; 4]),
    #[error("unsupported batch version {0}, this build reads version 1")]
    Version(u8),
    #[error("unknown flag bits {0:#04x}; allowed: codec 0 (none) or 1 (lz4)")]
    Flags(u8),
    #[error("reserved header bytes are {0:#06x}, must be 0")]
    Reserved(u16),
    #[error("batch holds 0 records; at least 1 is required")]
    Empty,
    #[error("plain payload of {0} bytes exceeds the limit of 16 MiB")]
    TooLarge(u32),
    #[error("stored length {stored} is inconsistent with plain length {plain} for this codec")]
    Lengths { stored: u32, plain: u32 },
    #[error("CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Crc { stored: u32, computed: u32 },
    #[error("records do not fill the payload exactly")]
    Records,
    #[error("lz4 payload does not decompress to its stated length")]
    Decompress,
    #[error("batch starts at offset {found}, expected {expected}")]
    Sequence { expected: u64, found: u64 },
}

impl BatchHeader {
    /// Total bytes the batch occupies in a segment.
    pub fn total_len(&self) -> u64 {
        HEADER_BYTES as u64 + u64::from(self.stored_len)
    }

    /// Offset after the batch's last record.
    pub fn next_offset(&self) -> u64 {
        self.base_offset + u64::from(self.count)
    }

    /// Writes the header without its CRC into `out[..HEADER_BYTES]`.
    pub fn encode_into(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&BATCH_MAGIC);
        out[4] = BATCH_VERSION;
        out[5] = self.codec.bits();
        out[6..8].copy_from_slice(&[0, 0]);
        out[8..16].copy_from_slice(&self.base_offset.to_le_bytes());
        out[16..24].copy_from_slice(&self.first_ts_ms.to_le_bytes());
        out[24..32].copy_from_slice(&self.epoch.to_le_bytes());
        out[32..36].copy_from_slice(&self.count.to_le_bytes());
        out[36..40].copy_from_slice(&self.stored_len.to_le_bytes());
        out[40..44].copy_from_slice(&self.plain_len.to_le_bytes());
        out[44..48].copy_from_slice(&self.crc.to_le_bytes());
    }

    /// Checks and decodes a header (everything but the CRC, which needs the payload).
    pub fn decode(b: &[u8; HEADER_BYTES]) -> Result<BatchHeader, BatchFault> {
        let magic = [b[0], b[1], b[2], b[3]];
        if magic != BATCH_MAGIC {
            return Err(BatchFault::Magic(magic));
        }
        if b[4] != BATCH_VERSION {
            return Err(BatchFault::Version(b[4]));
        }
        let codec = match b[5] {
            0 => Codec::None,
            1 => Codec::Lz4,
            other => return Err(BatchFault::Flags(other)),
        };
        let reserved = u16::from_le_bytes([b[6], b[7]]);
        if reserved != 0 {
            return Err(BatchFault::Reserved(reserved));
        }
        let h = BatchHeader {
            codec,
            base_offset: u64_at(b, 8),
            first_ts_ms: i64_at(b, 16),
            epoch: u64_at(b, 24),
            count: u32_at(b, 32),
            stored_len: u32_at(b, 36),
            plain_len: u32_at(b, 40),
            crc: u32_at(b, CRC_AT),
        };
        if h.count == 0 {
            return Err(BatchFault::Empty);
        }
        if h.plain_len as usize > MAX_BATCH_PLAIN_BYTES {
            return Err(BatchFault::TooLarge(h.plain_len));
        }
        let lengths_ok = match codec {
            Codec::None => h.stored_len == h.plain_len,
            Codec::Lz4 => h.stored_len as usize <= lz4_bound(h.plain_len as usize),
        };
        if !lengths_ok {
            return Err(BatchFault::Lengths {
                stored: h.stored_len,
                plain: h.plain_len,
            });
        }
        Ok(h)
    }
}

/// Largest lz4 output for `plain` input bytes.
fn lz4_bound(plain: usize) -> usize {
    lz4_flex::block::get_maximum_output_size(plain)
}

/// CRC-32C over header bytes 0..44 and the stored payload.
pub fn batch_crc(header: &[u8], payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&header[..CRC_AT]);
    crc32c::crc32c_append(crc, payload)
}

/// Checks the CRC of a whole batch (`header ++ payload`) against the stored value.
pub fn check_crc(h: &BatchHeader, header: &[u8], payload: &[u8]) -> Result<(), BatchFault> {
    let computed = batch_crc(header, payload);
    if computed != h.crc {
        return Err(BatchFault::Crc {
            stored: h.crc,
            computed,
        });
    }
    Ok(())
}

/// Writes the CRC of the batch `buf` (header followed by its payload) into its header.
pub fn seal_crc(buf: &mut [u8]) {
    let crc = batch_crc(&buf[..HEADER_BYTES], &buf[HEADER_BYTES..]);
    buf[CRC_AT..HEADER_BYTES].copy_from_slice(&crc.to_le_bytes());
}

/// Returns the plain payload: `stored` itself or its lz4 decompression.
pub fn plain_payload(h: &BatchHeader, stored: bytes::Bytes) -> Result<bytes::Bytes, BatchFault> {
    match h.codec {
        Codec::None => Ok(stored),
        Codec::Lz4 => {
            let mut out = vec![0u8; h.plain_len as usize];
            match lz4_flex::block::decompress_into(&stored, &mut out) {
                Ok(n) if n == out.len() => Ok(bytes::Bytes::from(out)),
                _ => Err(BatchFault::Decompress),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BatchHeader {
        BatchHeader {
            codec: Codec::None,
            base_offset: 7,
            first_ts_ms: -3,
            epoch: 2,
            count: 1,
            stored_len: 4,
            plain_len: 4,
            crc: 0,
        }
    }

    #[test]
    fn header_round_trips_and_crc_catches_flips() {
        let mut buf = vec![0u8; HEADER_BYTES + 4];
        sample().encode_into(&mut buf);
        buf[HEADER_BYTES..].copy_from_slice(b"abcd");
        seal_crc(&mut buf);
        let hb: [u8; HEADER_BYTES] = buf[..HEADER_BYTES].try_into().unwrap();
        let h = BatchHeader::decode(&hb).unwrap();
        assert_eq!(h.base_offset, 7);
        assert!(check_crc(&h, &buf[..HEADER_BYTES], &buf[HEADER_BYTES..]).is_ok());
        buf[10] ^= 1;
        let hb: [u8; HEADER_BYTES] = buf[..HEADER_BYTES].try_into().unwrap();
        let h = BatchHeader::decode(&hb).unwrap();
        assert!(check_crc(&h, &buf[..HEADER_BYTES], &buf[HEADER_BYTES..]).is_err());
    }

    #[test]
    fn header_rejects_unknown_flags_and_versions() {
        let mut buf = [0u8; HEADER_BYTES];
        sample().encode_into(&mut buf);
        buf[5] = 0x08;
        assert_eq!(BatchHeader::decode(&buf), Err(BatchFault::Flags(0x08)));
        buf[5] = 0;
        buf[4] = 2;
        assert_eq!(BatchHeader::decode(&buf), Err(BatchFault::Version(2)));
    }
}
