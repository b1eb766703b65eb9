//! Bitmap commands on string values: SETBIT, GETBIT, BITCOUNT. Bit 0 is the most
//! significant bit of the first byte, as in Redis.

use crate::MAX_STRING_BYTES;
use crate::error::OpError;
use crate::keyspace::Db;

/// The byte holding bit `offset`, and the mask of that bit in it.
fn bit_at(offset: u64) -> (usize, u8) {
    let byte = usize::try_from(offset >> 3).unwrap_or(usize::MAX);
    (byte, 0x80 >> (offset & 7))
}

/// Which bits BITCOUNT counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitRange {
    /// The whole string.
    All,
    /// From `start` to `end` inclusive, negative from the end, in bytes or (`bits`)
    /// in bits.
    Span { start: i64, end: i64, bits: bool },
}

impl Db<'_> {
    /// GETBIT: the bit at `offset` (0 past the end or for a missing key).
    pub fn getbit(&mut self, key: &[u8], offset: u64, now_ms: u64) -> Result<u8, OpError> {
        let (byte, mask) = bit_at(offset);
        self.read_key(key, now_ms, |k| match k.entry() {
            None => Ok(0),
            Some(e) => Ok(e
                .str()?
                .with(|b| b.get(byte).map_or(0, |v| u8::from(v & mask != 0)))),
        })
    }

    /// SETBIT: sets or clears the bit at `offset`, zero-padding the string; returns the
    /// bit it replaced.
    pub fn setbit(
        &mut self,
        key: &[u8],
        offset: u64,
        bit: bool,
        now_ms: u64,
    ) -> Result<u8, OpError> {
        let (byte, mask) = bit_at(offset);
        if byte >= MAX_STRING_BYTES {
            return Err(OpError::StringTooLong);
        }
        self.write_key(key, now_ms, true, |k| {
            if let Some(e) = k.entry() {
                e.str()?;
            } else {
                k.put_string(b"");
            }
            let idx = k.idx.expect("created above");
            k.s.update_if(k.db, idx, |e| {
                let grew;
                let old = match e.grown_mut() {
                    Ok(buf) => {
                        grew = buf.len() <= byte;
                        if grew {
                            buf.resize(byte + 1, 0);
                        }
                        let old = u8::from(buf[byte] & mask != 0);
                        if bit {
                            buf[byte] |= mask;
                        } else {
                            buf[byte] &= !mask;
                        }
                        Ok(old)
                    }
                    Err(error) => {
                        grew = false;
                        Err(error)
                    }
                };
                // Redis touches the key unless the bit was already as asked and the
                // string did not grow.
                let changed = grew || old.as_ref().is_ok_and(|&old| (old == 1) != bit);
                (old, changed)
            })
        })
    }

    /// BITCOUNT: how many bits are set in `range` of the string (0 for a missing key).
    pub fn bitcount(&mut self, key: &[u8], range: BitRange, now_ms: u64) -> Result<u64, OpError> {
        self.read_key(key, now_ms, |k| match k.entry() {
            None => Ok(0),
            Some(e) => Ok(e.str()?.with(|b| count_bits(b, range))),
        })
    }
}

/// Bits set in `range` of `bytes`, with Redis's index rules.
fn count_bits(bytes: &[u8], range: BitRange) -> u64 {
    let ones = |slice: &[u8]| slice.iter().map(|b| u64::from(b.count_ones())).sum::<u64>();
    let (start, end, bits) = match range {
        BitRange::All => return ones(bytes),
        BitRange::Span { start, end, bits } => (start, end, bits),
    };
    if start < 0 && end < 0 && start > end {
        return 0;
    }
    let unit = if bits { 8 } else { 1 };
    let total = i64::try_from(bytes.len())
        .unwrap_or(i64::MAX)
        .saturating_mul(unit);
    let resolve = |i: i64| if i < 0 { (total + i).max(0) } else { i };
    let (start, end) = (resolve(start), resolve(end).min(total - 1));
    if start > end {
        return 0;
    }
    if !bits {
        return ones(&bytes[start as usize..=end as usize]);
    }
    (start..=end)
        .filter(|&bit| bytes[(bit >> 3) as usize] & (0x80 >> (bit & 7)) != 0)
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_byte_and_bit() {
        let bytes = b"foobar";
        assert_eq!(count_bits(bytes, BitRange::All), 26);
        let span = |start, end, bits| BitRange::Span { start, end, bits };
        assert_eq!(count_bits(bytes, span(0, 0, false)), 4);
        assert_eq!(count_bits(bytes, span(1, 1, false)), 6);
        assert_eq!(count_bits(bytes, span(5, 30, true)), 17);
        assert_eq!(count_bits(bytes, span(-1, -2, false)), 0);
        assert_eq!(count_bits(bytes, span(-100, 100, false)), 26);
        assert_eq!(count_bits(b"", span(0, -1, false)), 0);
    }
}
