//! Redis's packed containers as they appear inside RDB strings: listpacks (written and
//! read), intsets (written and read), ziplists and zipmaps (read, from older dumps).

use std::borrow::Cow;

use super::{Result, bad};
use crate::value::string::parse_i64;

/// Builds a listpack, storing each string that spells an integer as an integer, as Redis
/// does.
#[derive(Debug)]
pub(crate) struct ListpackWriter {
    buf: Vec<u8>,
    count: usize,
}

impl ListpackWriter {
    pub(crate) fn new() -> Self {
        Self {
            buf: vec![0; 6],
            count: 0,
        }
    }

    /// Bytes the listpack takes so far (its end marker included).
    pub(crate) fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    pub(crate) fn push(&mut self, item: &[u8]) {
        if item.len() <= 20
            && let Some(v) = parse_i64(item)
        {
            return self.push_int(v);
        }
        let start = self.buf.len();
        let len = item.len();
        if len < 64 {
            self.buf.push(0x80 | len as u8);
        } else if len < 4096 {
            self.buf.push(0xe0 | (len >> 8) as u8);
            self.buf.push(len as u8);
        } else {
            self.buf.push(0xf0);
            self.buf
                .extend_from_slice(&u32::try_from(len).expect("bounded").to_le_bytes());
        }
        self.buf.extend_from_slice(item);
        self.back_length(start);
    }

    pub(crate) fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        match v {
            0..=127 => self.buf.push(v as u8),
            -4096..=4095 => {
                let u = (v as u64) & 0x1fff;
                self.buf.push(0xc0 | (u >> 8) as u8);
                self.buf.push(u as u8);
            }
            -32_768..=32_767 => {
                self.buf.push(0xf1);
                self.buf.extend_from_slice(&(v as i16).to_le_bytes());
            }
            -8_388_608..=8_388_607 => {
                self.buf.push(0xf2);
                self.buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
            }
            -2_147_483_648..=2_147_483_647 => {
                self.buf.push(0xf3);
                self.buf.extend_from_slice(&(v as i32).to_le_bytes());
            }
            _ => {
                self.buf.push(0xf4);
                self.buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.back_length(start);
    }

    /// The entry's length, written so the listpack can be walked backwards.
    fn back_length(&mut self, start: usize) {
        let len = self.buf.len() - start;
        let l = len as u64;
        let parts = back_length_bytes(len);
        for i in (0..parts).rev() {
            let byte = ((l >> (7 * i)) & 127) as u8;
            self.buf
                .push(if i + 1 == parts { byte } else { byte | 128 });
        }
        self.count += 1;
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xff);
        let total = u32::try_from(self.buf.len()).expect("listpacks stay under 4 GiB");
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let count = u16::try_from(self.count).unwrap_or(u16::MAX);
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// Bytes of a listpack entry's back length for an entry of `len` bytes.
pub(crate) fn back_length_bytes(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// An element of a listpack or ziplist.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl Item<'_> {
    pub(crate) fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            Item::Int(v) => Cow::Owned(v.to_string().into_bytes()),
            Item::Str(s) => Cow::Borrowed(s),
        }
    }

    pub(crate) fn int(&self) -> Result<i64> {
        match self {
            Item::Int(v) => Ok(*v),
            Item::Str(s) => parse_i64(s).ok_or_else(|| bad("a text where a number belongs")),
        }
    }
}

fn slice(data: &[u8], at: usize, len: usize) -> Result<&[u8]> {
    data.get(
        at..at
            .checked_add(len)
            .ok_or_else(|| bad("a length past the end"))?,
    )
    .ok_or_else(|| bad("a packed entry past the end of its container"))
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0, |acc, b| (acc << 8) | u64::from(*b))
}

/// Sign-extends the low `bits` of `v`.
fn signed(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// The elements of a listpack, checked against its header.
pub(crate) fn listpack_items(lp: &[u8]) -> Result<Vec<Item<'_>>> {
    if lp.len() < 7 || le(&lp[..4]) != lp.len() as u64 || lp[lp.len() - 1] != 0xff {
        return Err(bad("a listpack whose header does not match its size"));
    }
    let declared = le(&lp[4..6]) as usize;
    let end = lp.len() - 1;
    let mut items = Vec::new();
    let mut at = 6;
    while at < end {
        let b = lp[at];
        let (item, len) = if b & 0x80 == 0 {
            (Item::Int(i64::from(b)), 1)
        } else if b & 0xc0 == 0x80 {
            let n = usize::from(b & 0x3f);
            (Item::Str(slice(lp, at + 1, n)?), 1 + n)
        } else if b & 0xe0 == 0xc0 {
            let v = (u64::from(b & 0x1f) << 8) | u64::from(slice(lp, at + 1, 1)?[0]);
            (Item::Int(signed(v, 13)), 2)
        } else if b & 0xf0 == 0xe0 {
            let n = (usize::from(b & 0x0f) << 8) | usize::from(slice(lp, at + 1, 1)?[0]);
            (Item::Str(slice(lp, at + 2, n)?), 2 + n)
        } else {
            let (width, bits) = match b {
                0xf0 => {
                    let n = le(slice(lp, at + 1, 4)?) as usize;
                    let s = slice(lp, at + 5, n)?;
                    (Some((Item::Str(s), 5 + n)), 0)
                }
                0xf1 => (None, 16),
                0xf2 => (None, 24),
                0xf3 => (None, 32),
                0xf4 => (None, 64),
                _ => return Err(bad(format!("unknown listpack entry type {b:#04x}"))),
            };
            match width {
                Some(found) => found,
                None => {
                    let n = (bits / 8) as usize;
                    (Item::Int(signed(le(slice(lp, at + 1, n)?), bits)), 1 + n)
                }
            }
        };
        at += len + back_length_bytes(len);
        if at > end {
            return Err(bad("a listpack entry past the end"));
        }
        items.push(item);
    }
    if declared != usize::from(u16::MAX) && declared != items.len() {
        return Err(bad("a listpack whose count does not match its entries"));
    }
    Ok(items)
}

/// An intset of `values` (sorted, distinct) in the narrowest width that holds them all.
pub(crate) fn intset(values: &[i64]) -> Vec<u8> {
    let width: usize = if values.iter().all(|v| i16::try_from(*v).is_ok()) {
        2
    } else if values.iter().all(|v| i32::try_from(*v).is_ok()) {
        4
    } else {
        8
    };
    let mut out = Vec::with_capacity(8 + width * values.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

/// The members of an intset, checked for size and order.
pub(crate) fn intset_values(data: &[u8]) -> Result<Vec<i64>> {
    if data.len() < 8 {
        return Err(bad("an intset shorter than its header"));
    }
    let width = le(&data[..4]) as usize;
    let len = le(&data[4..8]) as usize;
    if !matches!(width, 2 | 4 | 8) || data.len() - 8 != width.saturating_mul(len) {
        return Err(bad("an intset whose header does not match its size"));
    }
    let values: Vec<i64> = data[8..]
        .chunks_exact(width)
        .map(|c| signed(le(c), 8 * width as u32))
        .collect();
    if values.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad("an intset out of order"));
    }
    Ok(values)
}

/// The field/value pairs of a zipmap (the compact hash of dumps before Redis 2.6): a
/// one-byte pair count (254: "count them"), then per pair the field's length, the field,
/// the value's length, a byte counting free bytes after the value, the value and those
/// free bytes, and a final 0xff. A length below 254 is that byte; a larger byte is
/// followed by the length (254 or more) as four bytes, little-endian. Checked as Redis
/// checks one it loads (nothing outside the blob, at least one pair, a count of 254 or
/// the number of pairs), and a short length written long, which Redis would misread, is
/// refused.
pub(crate) fn zipmap_pairs(zm: &[u8]) -> Result<Vec<(&[u8], &[u8])>> {
    const BIG: u8 = 254;
    const END: u8 = 0xff;
    let cut = || bad("a zipmap entry past its end");
    if zm.len() < 2 || zm[zm.len() - 1] != END {
        return Err(bad("a zipmap without its end marker"));
    }
    let length = |at: &mut usize| -> Result<usize> {
        let first = *zm.get(*at).ok_or_else(cut)?;
        if first < BIG {
            *at += 1;
            return Ok(usize::from(first));
        }
        let n = le(slice(zm, *at + 1, 4)?) as usize;
        // Redis reads a length's bytes by the length's value: a short length written long
        // would be misread.
        if n < usize::from(BIG) {
            return Err(bad(format!(
                "a zipmap length of {n} written in the long form"
            )));
        }
        *at += 5;
        Ok(n)
    };
    let mut pairs = Vec::new();
    let mut at = 1;
    while *zm.get(at).ok_or_else(cut)? != END {
        let field_len = length(&mut at)?;
        let field = slice(zm, at, field_len)?;
        at += field_len;
        let value_len = length(&mut at)?;
        let free = usize::from(*zm.get(at).ok_or_else(cut)?);
        let value = slice(zm, at + 1, value_len)?;
        at += 1 + value_len + free;
        pairs.push((field, value));
    }
    if pairs.is_empty() || (zm[0] != BIG && usize::from(zm[0]) != pairs.len()) {
        return Err(bad(format!(
            "a zipmap whose count ({}) does not match its {} pairs",
            zm[0],
            pairs.len()
        )));
    }
    Ok(pairs)
}

/// The elements of a ziplist (the compact encoding of dumps before Redis 7.0).
pub(crate) fn ziplist_items(zl: &[u8]) -> Result<Vec<Item<'_>>> {
    if zl.len() < 11 || le(&zl[..4]) != zl.len() as u64 || zl[zl.len() - 1] != 0xff {
        return Err(bad("a ziplist whose header does not match its size"));
    }
    let end = zl.len() - 1;
    let mut items = Vec::new();
    let mut at = 10;
    while at < end {
        at += if zl[at] < 254 { 1 } else { 5 };
        let b = *zl
            .get(at)
            .ok_or_else(|| bad("a ziplist entry past the end"))?;
        let (item, len) = match b >> 6 {
            0 => {
                let n = usize::from(b & 0x3f);
                (Item::Str(slice(zl, at + 1, n)?), 1 + n)
            }
            1 => {
                let n = (usize::from(b & 0x3f) << 8) | usize::from(slice(zl, at + 1, 1)?[0]);
                (Item::Str(slice(zl, at + 2, n)?), 2 + n)
            }
            2 => {
                let n = slice(zl, at + 1, 4)?
                    .iter()
                    .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
                (Item::Str(slice(zl, at + 5, n)?), 5 + n)
            }
            _ => {
                let bits = match b {
                    0xc0 => 16,
                    0xd0 => 32,
                    0xe0 => 64,
                    0xf0 => 24,
                    0xfe => 8,
                    0xf1..=0xfd => 0,
                    _ => return Err(bad(format!("unknown ziplist entry type {b:#04x}"))),
                };
                if bits == 0 {
                    (Item::Int(i64::from(b & 0x0f) - 1), 1)
                } else {
                    let n = bits as usize / 8;
                    (Item::Int(signed(le(slice(zl, at + 1, n)?), bits)), 1 + n)
                }
            }
        };
        at += len;
        if at > end {
            return Err(bad("a ziplist entry past the end"));
        }
        items.push(item);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipmaps_read_as_redis_reads_them() {
        let long = vec![b'k'; 300];
        let mut zm = vec![254, 2, b'f', b'1', 2, 2, b'v', b'1', b'.', b'.', 254];
        zm.extend_from_slice(&300u32.to_le_bytes());
        zm.extend_from_slice(&long);
        zm.extend_from_slice(&[0, 0, 0xff]);
        let pairs = zipmap_pairs(&zm).unwrap();
        assert_eq!(pairs, [(&b"f1"[..], &b"v1"[..]), (&long[..], &b""[..])]);
        zm[0] = 2;
        assert_eq!(zipmap_pairs(&zm).unwrap().len(), 2);
        for bad in [
            &b"\x03\x01a\x01\x00x\xff"[..], // a count that does not match
            b"\x00\xff",                    // no pair
            b"\x01\x01a\x05\x00x\xff",      // a value past the end
            b"\x01\x01a\x01\x00x",          // no end marker
            b"\x01\x01a\x01\x00x\x00\xff",  // a length past the end
            b"\x01\xfe\x03\x00\x00\x00big\x00\x00\xff", // a short length written long
            b"\x01\xfe\xff\xff\xff\xff\xff", // a length past the end
            b"\xff\x01a\x01\x00x\xff",      // a count of 255
        ] {
            assert!(zipmap_pairs(bad).is_err(), "{bad:?}");
        }
        // What follows the first end marker is not read, as in Redis.
        assert_eq!(
            zipmap_pairs(b"\x01\x01a\x01\x00x\xff\x07\xff")
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn listpack_round_trip_in_every_encoding() {
        let long = vec![b'x'; 5000];
        let mid = vec![b'y'; 300];
        let items: Vec<Vec<u8>> = [
            &b"0"[..],
            b"127",
            b"128",
            b"-4096",
            b"4095",
            b"-32768",
            b"8388607",
            b"-2147483648",
            b"9223372036854775807",
            b"-9223372036854775808",
            b"007",
            b"",
            b"hello",
            &mid,
            &long,
        ]
        .iter()
        .map(|s| s.to_vec())
        .collect();
        let mut w = ListpackWriter::new();
        for item in &items {
            w.push(item);
        }
        let lp = w.finish();
        let back: Vec<Vec<u8>> = listpack_items(&lp)
            .unwrap()
            .iter()
            .map(|i| i.bytes().into_owned())
            .collect();
        assert_eq!(back, items);
        let mut cut = lp.clone();
        cut.truncate(lp.len() - 3);
        assert!(listpack_items(&cut).is_err());
    }

    #[test]
    fn a_small_listpack_has_redis_bytes() {
        // Redis 7.0: HSET h a 1 → DUMP holds this listpack.
        let mut w = ListpackWriter::new();
        w.push(b"a");
        w.push(b"1");
        assert_eq!(
            w.finish(),
            [0x0c, 0, 0, 0, 0x02, 0, 0x81, b'a', 0x02, 0x01, 0x01, 0xff]
        );
    }

    #[test]
    fn intsets_pick_their_width() {
        for values in [vec![1, 2, 3], vec![-70_000, 5], vec![i64::MIN, i64::MAX]] {
            assert_eq!(intset_values(&intset(&values)).unwrap(), values);
        }
        assert_eq!(intset(&[1])[..4], [2, 0, 0, 0]);
        assert!(intset_values(&intset(&[3, 1])).is_err());
    }
}
