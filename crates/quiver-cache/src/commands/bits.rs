//! Bitmap commands on string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP. Bit 0
//! is the most significant bit of the first byte, as in Redis.

use super::KeyCtx;
use crate::MAX_STRING_BYTES;
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses, events};
use crate::value::Value;

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

/// Where BITPOS looks: the whole string, or from `start` (to `end` when given),
/// negative from the end, in bytes or (`bits`) in bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitPosRange {
    /// The whole string.
    All,
    /// From `start`, to `end` when given.
    From {
        start: i64,
        end: Option<i64>,
        bits: bool,
    },
}

/// A BITOP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// What SETBIT and BITFIELD announce when they change the string.
const SETBIT: Event = Event::new(EventClasses::STRING, "setbit");

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
            k.on_change(SETBIT);
            k.grow_string(byte + 1, |buf, grew| {
                let old = u8::from(buf[byte] & mask != 0);
                if bit {
                    buf[byte] |= mask;
                } else {
                    buf[byte] &= !mask;
                }
                // Redis touches the key unless the bit was already as asked and the
                // string did not grow.
                (old, grew || (old == 1) != bit)
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

impl Db<'_> {
    /// BITPOS: the first bit equal to `bit` in `range`, or -1. A missing key is all
    /// zeros: 0 for a clear bit, -1 for a set one. Without an end, a search for a clear
    /// bit in a string of ones answers the first bit past its end.
    pub fn bitpos(
        &mut self,
        key: &[u8],
        bit: bool,
        range: BitPosRange,
        now_ms: u64,
    ) -> Result<i64, OpError> {
        self.read_key(key, now_ms, |k| match k.entry() {
            None => Ok(if bit { -1 } else { 0 }),
            Some(e) => Ok(e.str()?.with(|b| find_bit(b, bit, range))),
        })
    }

    /// BITOP: `op` over `sources` (a missing one reads as an empty string) stored in
    /// `dest` without a TTL; an empty result deletes `dest`. Returns the result's length.
    pub fn bitop(
        &mut self,
        op: BitOp,
        dest: &[u8],
        sources: &[&[u8]],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.make_room(now_ms)?;
        let (db, clock) = (self.db, self.clock(now_ms));
        let mut keys = Vec::with_capacity(sources.len() + 1);
        keys.push(dest);
        keys.extend_from_slice(sources);
        self.multi(&keys, |set, routes| {
            let mut values = Vec::with_capacity(sources.len());
            for (source, &(shard, hash)) in sources.iter().zip(&routes[1..]) {
                let k = KeyCtx::write(set.get(shard), db, hash, source, clock);
                values.push(match k.entry() {
                    None => {
                        k.notify(events::KEY_MISS);
                        Vec::new()
                    }
                    Some(e) => e.str()?.to_vec(),
                });
            }
            let result = combine(op, &values);
            let (shard, hash) = routes[0];
            let mut d = KeyCtx::write(set.get(shard), db, hash, dest, clock);
            if result.is_empty() {
                d.delete();
                return Ok(0);
            }
            let len = result.len();
            d.on_change(Event::new(EventClasses::STRING, "set"))
                .put_value(Value::Grown(Box::new(result)));
            d.set_expire(None);
            Ok(len)
        })
    }
}

/// What BITFIELD does with a value that does not fit its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overflow {
    /// Wrap around (the default).
    #[default]
    Wrap,
    /// Saturate at the type's limit.
    Sat,
    /// Do nothing and answer null.
    Fail,
}

/// One BITFIELD operation on the field of `bits` bits (`signed` or not) at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitField {
    pub signed: bool,
    pub bits: u32,
    pub offset: u64,
    pub action: FieldAction,
    pub overflow: Overflow,
}

/// What a BITFIELD operation does to its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldAction {
    /// Read it.
    Get,
    /// Write the value (replies the old one).
    Set(i64),
    /// Add to it (replies the new value).
    IncrBy(i64),
}

impl Db<'_> {
    /// BITFIELD: runs `fields` in order; each answers a value, or `None` when `FAIL`
    /// refused an overflow. With only reads, a missing key reads as zeros and is not
    /// created; with a write, the string is created and grown to the furthest field
    /// written first, as Redis does.
    pub fn bitfield(
        &mut self,
        key: &[u8],
        fields: &[BitField],
        now_ms: u64,
    ) -> Result<Vec<Option<i64>>, OpError> {
        let writes = fields.iter().filter(|f| f.action != FieldAction::Get);
        let Some(furthest) = writes.map(|f| f.offset + u64::from(f.bits) - 1).max() else {
            return self.read_key(key, now_ms, |k| match k.entry() {
                None => Ok(fields.iter().map(|f| Some(read_field(&[], f))).collect()),
                Some(e) => Ok(e
                    .str()?
                    .with(|b| fields.iter().map(|f| Some(read_field(b, f))).collect())),
            });
        };
        let bytes = usize::try_from(furthest >> 3).unwrap_or(usize::MAX) + 1;
        if bytes > MAX_STRING_BYTES {
            return Err(OpError::StringTooLong);
        }
        self.write_key(key, now_ms, true, |k| {
            let (replies, wrote) = k.grow_string(bytes, |buf, grew| {
                let mut wrote = false;
                let replies = fields
                    .iter()
                    .map(|f| {
                        let (reply, write) = apply_field(buf, f);
                        if let Some(value) = write {
                            // As Redis 7.0: a write counts when the string grew or the
                            // field changed.
                            let before = read_field(buf, f);
                            write_field(buf, f, value);
                            wrote |= grew || read_field(buf, f) != before;
                        }
                        reply
                    })
                    .collect::<Vec<_>>();
                ((replies, wrote), wrote)
            })?;
            // Announced only when a write counted (not for a grown string alone).
            if wrote {
                k.notify(SETBIT);
            }
            Ok(replies)
        })
    }
}

/// The field `f` of `bytes` (zeros past the end), sign-extended when signed.
fn read_field(bytes: &[u8], f: &BitField) -> i64 {
    let raw = (0..u64::from(f.bits)).fold(0u64, |value, i| {
        let bit = f.offset + i;
        let set = usize::try_from(bit >> 3)
            .ok()
            .and_then(|byte| bytes.get(byte))
            .is_some_and(|b| b & (0x80 >> (bit & 7)) != 0);
        (value << 1) | u64::from(set)
    });
    if f.signed && f.bits < 64 && raw >> (f.bits - 1) & 1 == 1 {
        (raw | (u64::MAX << f.bits)) as i64
    } else {
        raw as i64
    }
}

/// Writes the low `f.bits` bits of `value` into field `f` of `buf` (long enough).
fn write_field(buf: &mut [u8], f: &BitField, value: i64) {
    let value = value as u64;
    for i in 0..u64::from(f.bits) {
        let bit = f.offset + i;
        let byte = &mut buf[(bit >> 3) as usize];
        let mask = 0x80 >> (bit & 7);
        if value >> (u64::from(f.bits) - 1 - i) & 1 == 1 {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
    }
}

/// The reply of one operation and the value to write, if any, with the overflow rule.
fn apply_field(buf: &[u8], f: &BitField) -> (Option<i64>, Option<i64>) {
    let old = read_field(buf, f);
    let (start, incr, reply_old) = match f.action {
        FieldAction::Get => return (Some(old), None),
        FieldAction::Set(value) => (value, 0, true),
        FieldAction::IncrBy(incr) => (old, incr, false),
    };
    let fitted = if f.signed {
        fit_signed(start, incr, f.bits, f.overflow)
    } else {
        fit_unsigned(start as u64, incr, f.bits, f.overflow).map(|v| v as i64)
    };
    match fitted {
        None => (None, None),
        Some(new) => (Some(if reply_old { old } else { new }), Some(new)),
    }
}

/// `value + incr` in a signed field of `bits` bits, or `None` for a refused overflow.
fn fit_signed(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let sum = i128::from(value) + i128::from(incr);
    if sum >= i128::from(min) && sum <= i128::from(max) {
        return Some(sum as i64);
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > i128::from(max) { max } else { min }),
        Overflow::Wrap => {
            let wrapped = (value as u64).wrapping_add(incr as u64);
            if bits == 64 {
                return Some(wrapped as i64);
            }
            let mask = u64::MAX << bits;
            let sign = 1u64 << (bits - 1);
            Some(if wrapped & sign != 0 {
                wrapped | mask
            } else {
                wrapped & !mask
            } as i64)
        }
    }
}

/// `value + incr` in an unsigned field of `bits` bits (at most 63), or `None` for a
/// refused overflow.
fn fit_unsigned(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max = (1u64 << bits) - 1;
    let sum = i128::from(value) + i128::from(incr);
    if sum >= 0 && sum <= i128::from(max) {
        return Some(sum as u64);
    }
    match overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sum > i128::from(max) { max } else { 0 }),
        Overflow::Wrap => Some(value.wrapping_add(incr as u64) & max),
    }
}

/// BITOP's result: as long as the longest input, shorter ones padded with zeros.
fn combine(op: BitOp, values: &[Vec<u8>]) -> Vec<u8> {
    let len = values.iter().map(Vec::len).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let byte = |v: &Vec<u8>| v.get(i).copied().unwrap_or(0);
            let mut inputs = values.iter().map(byte);
            let first = inputs.next().unwrap_or(0);
            match op {
                BitOp::Not => !first,
                BitOp::And => inputs.fold(first, |acc, b| acc & b),
                BitOp::Or => inputs.fold(first, |acc, b| acc | b),
                BitOp::Xor => inputs.fold(first, |acc, b| acc ^ b),
            }
        })
        .collect()
}

/// The first bit equal to `bit` in `range` of `bytes`, with Redis's index rules.
fn find_bit(bytes: &[u8], bit: bool, range: BitPosRange) -> i64 {
    let len = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
    let (start, end, end_given, bits) = match range {
        BitPosRange::All => (0, len - 1, false, false),
        BitPosRange::From { start, end, bits } => {
            let total = if bits { len.saturating_mul(8) } else { len };
            (start, end.unwrap_or(total - 1), end.is_some(), bits)
        }
    };
    let total = if bits { len.saturating_mul(8) } else { len };
    let resolve = |i: i64| if i < 0 { (total + i).max(0) } else { i };
    let (start, end) = (resolve(start), resolve(end).min(total - 1));
    if start > end {
        return -1;
    }
    let (first, last) = if bits {
        (start, end)
    } else {
        (start * 8, end * 8 + 7)
    };
    let at = |i: i64| bytes[(i >> 3) as usize] & (0x80 >> (i & 7)) != 0;
    match (first..=last).find(|&i| at(i) == bit) {
        Some(i) => i,
        // No clear bit in a range without an end: the first one past the string.
        None if !bit && !end_given => last + 1,
        None => -1,
    }
}

/// Bits set in `bytes`, eight bytes at a time.
fn popcount(bytes: &[u8]) -> u64 {
    // Blocks of 31 words: each word's bits are counted per byte (at most 8), and 31 of
    // those summed per byte stay below 256; the bytes are added up once per block. The
    // word operations vectorize where the CPU has no popcount instruction.
    const BLOCK: usize = 31 * 8;
    let (words, tail) = bytes.split_at(bytes.len() / 8 * 8);
    let whole: u64 = words.chunks(BLOCK).map(block_ones).sum();
    whole + tail.iter().map(|b| u64::from(b.count_ones())).sum::<u64>()
}

/// Bits set in a block of at most 31 whole words.
fn block_ones(block: &[u8]) -> u64 {
    const ONES: u64 = 0x5555_5555_5555_5555;
    const TWOS: u64 = 0x3333_3333_3333_3333;
    const NIBBLES: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    const BYTES: u64 = 0x00ff_00ff_00ff_00ff;
    let per_byte = block
        .chunks_exact(8)
        .map(|w| {
            let x = u64::from_le_bytes(w.try_into().expect("eight bytes"));
            let x = x - ((x >> 1) & ONES);
            let x = (x & TWOS) + ((x >> 2) & TWOS);
            (x + (x >> 4)) & NIBBLES
        })
        .fold(0u64, u64::wrapping_add);
    let pairs = (per_byte & BYTES) + ((per_byte >> 8) & BYTES);
    pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48
}

/// Bits set in `range` of `bytes`, with Redis's index rules.
fn count_bits(bytes: &[u8], range: BitRange) -> u64 {
    let ones = popcount;
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
    fn finds_bits() {
        let from = |start, end, bits| BitPosRange::From { start, end, bits };
        assert_eq!(find_bit(b"\xff\xf0\x00", false, BitPosRange::All), 12);
        assert_eq!(find_bit(b"\x00\xff\xf0", true, from(0, None, false)), 8);
        assert_eq!(find_bit(b"\x00\xff\xf0", true, from(2, None, false)), 16);
        assert_eq!(find_bit(b"\x00\xff\xf0", true, from(7, Some(15), true)), 8);
        assert_eq!(find_bit(b"\xff\xff", false, BitPosRange::All), 16);
        assert_eq!(find_bit(b"\xff\xff", false, from(0, Some(-1), false)), -1);
        assert_eq!(find_bit(b"\x00", true, BitPosRange::All), -1);
        assert_eq!(find_bit(b"", false, BitPosRange::All), -1);
    }

    #[test]
    fn combines_with_padding() {
        let values = [b"\xf0\x0f".to_vec(), b"\xff".to_vec()];
        assert_eq!(combine(BitOp::And, &values), b"\xf0\x00");
        assert_eq!(combine(BitOp::Or, &values), b"\xff\x0f");
        assert_eq!(combine(BitOp::Xor, &values), b"\x0f\x0f");
        assert_eq!(combine(BitOp::Not, &values[1..]), b"\x00");
    }

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

    #[test]
    fn counts_whole_blocks_words_and_bytes_alike() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut bytes = Vec::new();
        for len in (0..600).chain([2_000, 4_096, 10_007]) {
            bytes.clear();
            bytes.extend((0..len).map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            }));
            let naive: u64 = bytes.iter().map(|b| u64::from(b.count_ones())).sum();
            assert_eq!(popcount(&bytes), naive, "{len} bytes");
        }
        // Every bit set: the most a block's byte counts can hold.
        assert_eq!(popcount(&[0xff; 31 * 8 * 3 + 13]), 8 * (31 * 8 * 3 + 13));
    }
}
