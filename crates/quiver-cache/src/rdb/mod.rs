//! Redis's RDB format as Redis 7.0 writes it (version 10): the encoding of single values
//! (DUMP/RESTORE payloads) and of whole snapshots (SAVE, BGSAVE, loading at start-up).
//!
//! Values are written in the encodings Redis 7.0 itself writes (integers and LZF in
//! strings, listpacks for small hashes and sorted sets, intsets, quicklists of listpacks,
//! stream listpacks with their consumer groups), so a payload moves between Quiver and
//! redis-server either way. Reading also takes the older encodings Redis 7.0 still loads
//! (plain lists, ziplists, quicklists of ziplists, textual scores).
//!
//! Like the rest of this crate it does no I/O: it turns values into bytes and bytes into
//! values. Every length read from input is checked against the bytes that are there before
//! anything is allocated for it, so a damaged or hostile payload is refused, never trusted.

pub mod journal;
mod packed;
pub(crate) use packed::back_length_bytes;
pub mod snapshot;
mod value;

pub use journal::{Replayed, ShardBusy, journal_libraries};
pub(crate) use snapshot::Capture;
pub use snapshot::{Consistency, LoadError, SnapshotStats};
pub use snapshot::{LoadReport, SnapshotLoader, SnapshotWriter};
pub use value::{DebugObject, QuicklistShape, RestoreOptions, dump_payload_check};

use std::borrow::Cow;

/// The RDB version this module writes (Redis 7.0's), and the newest it reads.
pub const RDB_VERSION: u16 = 10;

/// Longest string a payload may hold (Redis's `proto-max-bulk-len` default).
pub const MAX_STRING: usize = 512 << 20;

/// Why bytes are not a valid RDB encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RdbError {
    /// The input ends in the middle of an item.
    #[error("the data ends in the middle of an item")]
    Truncated,
    /// The input holds something that is not valid here.
    #[error("{0}")]
    Bad(String),
}

pub(crate) fn bad(what: impl Into<String>) -> RdbError {
    RdbError::Bad(what.into())
}

pub(crate) type Result<T> = std::result::Result<T, RdbError>;

/// Bytes being read, with a position.
#[derive(Debug, Clone)]
pub(crate) struct Input<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) pos: usize,
}

/// What a length byte announces: a length, or a string in a special encoding.
enum Length {
    Plain(u64),
    Encoded(u8),
}

impl<'a> Input<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(RdbError::Truncated);
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    /// An 8-byte little-endian number (RDB's millisecond times).
    pub(crate) fn u64_le(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A 4-byte little-endian number (RDB's second times).
    pub(crate) fn u32_le(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A 16-byte stream ID (two big-endian numbers).
    pub(crate) fn raw_id(&mut self) -> Result<(u64, u64)> {
        let b = self.take(16)?;
        Ok((big_endian(&b[..8]), big_endian(&b[8..])))
    }

    /// A binary double (8 bytes, little-endian).
    pub(crate) fn binary_double(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A double as text with a one-byte length (253 nan, 254 inf, 255 -inf).
    pub(crate) fn text_double(&mut self) -> Result<f64> {
        match self.u8()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            len => {
                let text = self.take(usize::from(len))?;
                std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(|| bad("a score that is not a number"))
            }
        }
    }

    fn length_or_encoding(&mut self) -> Result<Length> {
        let first = self.u8()?;
        match first >> 6 {
            0 => Ok(Length::Plain(u64::from(first & 0x3f))),
            1 => Ok(Length::Plain(
                (u64::from(first & 0x3f) << 8) | u64::from(self.u8()?),
            )),
            3 => Ok(Length::Encoded(first & 0x3f)),
            _ if first == 0x80 => Ok(Length::Plain(big_endian(self.take(4)?))),
            _ if first == 0x81 => Ok(Length::Plain(big_endian(self.take(8)?))),
            _ => Err(bad(format!("unknown length encoding {first:#04x}"))),
        }
    }

    /// A plain length (the raw 64-bit value: some fields store -1 this way).
    pub(crate) fn length(&mut self) -> Result<u64> {
        match self.length_or_encoding()? {
            Length::Plain(len) => Ok(len),
            Length::Encoded(_) => Err(bad("a string encoding where a length belongs")),
        }
    }

    /// A count of items that each take at least `min_bytes`: refused when the input cannot
    /// hold that many, so a damaged count never drives an allocation.
    pub(crate) fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.length()?;
        usize::try_from(n)
            .ok()
            .filter(|n| n.saturating_mul(min_bytes.max(1)) <= self.remaining())
            .ok_or(RdbError::Truncated)
    }

    /// A string in any of RDB's encodings: plain, an integer (8, 16 or 32 bits), or LZF.
    pub(crate) fn string(&mut self) -> Result<Cow<'a, [u8]>> {
        match self.length_or_encoding()? {
            Length::Plain(len) => {
                let len = usize::try_from(len).map_err(|_| RdbError::Truncated)?;
                Ok(Cow::Borrowed(self.take(len)?))
            }
            Length::Encoded(0) => Ok(Cow::Owned((self.u8()? as i8).to_string().into_bytes())),
            Length::Encoded(1) => Ok(Cow::Owned(
                i16::from_le_bytes(self.array()?).to_string().into_bytes(),
            )),
            Length::Encoded(2) => Ok(Cow::Owned(
                i32::from_le_bytes(self.array()?).to_string().into_bytes(),
            )),
            Length::Encoded(3) => {
                let compressed = self.length()?;
                let original = self.length()?;
                let original = usize::try_from(original)
                    .ok()
                    .filter(|n| *n <= MAX_STRING)
                    .ok_or_else(|| bad(format!("a compressed string of {original} bytes")))?;
                let compressed = usize::try_from(compressed).map_err(|_| RdbError::Truncated)?;
                let input = self.take(compressed)?;
                lzf_decompress(input, original)
                    .map(Cow::Owned)
                    .ok_or_else(|| bad("LZF data that does not decompress"))
            }
            Length::Encoded(other) => Err(bad(format!("unknown string encoding {other}"))),
        }
    }
}

/// The string in any RDB encoding at `*pos` of `data`; `*pos` moves past it.
pub fn read_string_at(data: &[u8], pos: &mut usize) -> std::result::Result<Vec<u8>, RdbError> {
    let mut input = Input { data, pos: *pos };
    let s = input.string()?.into_owned();
    *pos = input.pos;
    Ok(s)
}

/// A big-endian number of up to 8 bytes (RDB's long lengths and stream IDs).
fn big_endian(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b))
}

/// Writes the low `n` bytes of `v`, most significant first.
fn push_big_endian(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend((0..n).rev().map(|i| (v >> (8 * i)) as u8));
}

/// RDB's length encoding.
pub fn write_length(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u64::from(u32::MAX) {
        out.push(0x80);
        push_big_endian(out, len, 4);
    } else {
        out.push(0x81);
        push_big_endian(out, len, 8);
    }
}

/// A length-prefixed string written as it is.
pub fn write_plain_string(out: &mut Vec<u8>, data: &[u8]) {
    write_length(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// An integer in the smallest of RDB's integer string encodings, when it fits in 32 bits.
fn write_int_encoded(out: &mut Vec<u8>, v: i64) -> bool {
    if let Ok(v) = i8::try_from(v) {
        out.extend_from_slice(&[0xc0, v as u8]);
    } else if let Ok(v) = i16::try_from(v) {
        out.push(0xc1);
        out.extend_from_slice(&v.to_le_bytes());
    } else if let Ok(v) = i32::try_from(v) {
        out.push(0xc2);
        out.extend_from_slice(&v.to_le_bytes());
    } else {
        return false;
    }
    true
}

/// An integer string: encoded as an integer when it fits in 32 bits, else its digits.
pub(crate) fn write_int_string(out: &mut Vec<u8>, v: i64) {
    if !write_int_encoded(out, v) {
        write_plain_string(out, v.to_string().as_bytes());
    }
}

thread_local! {
    /// Strings are written uncompressed on this thread (see [`without_compression`]).
    static PLAIN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` writing strings as Redis does with `rdbcompression no`: the journal's
/// records, written on the path of every write command, skip the cost of LZF.
pub(crate) fn without_compression<R>(f: impl FnOnce() -> R) -> R {
    let before = PLAIN.replace(true);
    let result = f();
    PLAIN.set(before);
    result
}

/// A string as Redis writes it with `rdbcompression yes`: a short integer spelled
/// canonically as an integer, a string over 20 bytes LZF-compressed when that saves at
/// least four bytes, anything else plain.
pub fn write_string(out: &mut Vec<u8>, data: &[u8]) {
    if data.len() <= 11
        && let Some(v) = crate::value::string::parse_i64(data)
        && write_int_encoded(out, v)
    {
        return;
    }
    if data.len() > 20
        && !PLAIN.get()
        && let Some(compressed) = lzf_compress(data, data.len() - 4)
    {
        out.push(0xc3);
        write_length(out, compressed.len() as u64);
        write_length(out, data.len() as u64);
        out.extend_from_slice(&compressed);
        return;
    }
    write_plain_string(out, data);
}

/// A 16-byte stream ID.
pub(crate) fn write_raw_id(out: &mut Vec<u8>, ms: u64, seq: u64) {
    push_big_endian(out, ms, 8);
    push_big_endian(out, seq, 8);
}

const LZF_MAX_LITERAL: usize = 32;
const LZF_MAX_OFFSET: usize = 1 << 13;
const LZF_MAX_REFERENCE: usize = (1 << 8) + (1 << 3);
const LZF_HASH_BITS: u32 = 16;

/// LZF compression as Redis's liblzf does it (16-bit hash table, "very fast" mode), so a
/// compressed string is the same bytes Redis writes. `None` when the result would not fit
/// in `limit` bytes.
pub fn lzf_compress(input: &[u8], limit: usize) -> Option<Vec<u8>> {
    if input.is_empty() || limit == 0 {
        return None;
    }
    LZF_TABLE.with(|table| {
        let mut table = table.borrow_mut();
        let table = &mut *table;
        if table.slots.is_empty() {
            table.slots = vec![0; 1 << LZF_HASH_BITS];
        }
        let out = lzf_compress_with(input, limit, table);
        // Only the slots this input used are cleared, so the next input starts from an
        // empty table (deterministic output) without clearing 256 KiB each time.
        for &i in &table.touched {
            table.slots[i as usize] = 0;
        }
        table.touched.clear();
        out
    })
}

/// liblzf's hash table of recent positions, kept per thread between calls.
#[derive(Default)]
struct LzfTable {
    slots: Vec<u32>,
    touched: Vec<u32>,
}

impl LzfTable {
    fn set(&mut self, slot: usize, pos: usize) {
        self.slots[slot] = pos as u32;
        self.touched.push(slot as u32);
    }
}

thread_local! {
    static LZF_TABLE: std::cell::RefCell<LzfTable> = std::cell::RefCell::default();
}

fn lzf_compress_with(input: &[u8], limit: usize, table: &mut LzfTable) -> Option<Vec<u8>> {
    let n = input.len();
    let slot = |h: u32| -> usize {
        ((h >> (24 - LZF_HASH_BITS)).wrapping_sub(h.wrapping_mul(5)) & ((1 << LZF_HASH_BITS) - 1))
            as usize
    };
    let mut out = Vec::with_capacity(limit + 1);
    // `run_at` is where the current literal run's length byte sits.
    let mut run_at = 0;
    out.push(0);
    let mut lit = 0usize;
    let mut ip = 0usize;
    let first = |p: usize| (u32::from(input[p]) << 8) | u32::from(input[p + 1]);
    let mut hval = if n >= 2 { first(0) } else { 0 };
    while n >= 3 && ip < n - 2 {
        hval = (hval << 8) | u32::from(input[ip + 2]);
        let s = slot(hval);
        let candidate = table.slots[s] as usize;
        table.set(s, ip);
        let matched = candidate > 0
            && candidate < ip
            && ip - candidate - 1 < LZF_MAX_OFFSET
            && input[candidate..candidate + 3] == input[ip..ip + 3];
        if matched {
            let off = ip - candidate - 1;
            let maxlen = (n - ip - 2).min(LZF_MAX_REFERENCE);
            // The exact test of liblzf: a back reference takes up to 3 bytes and a new run 1.
            if out.len() + 3 + 1 >= limit && out.len() - usize::from(lit == 0) + 3 + 1 >= limit {
                return None;
            }
            out[run_at] = (lit as u8).wrapping_sub(1);
            if lit == 0 {
                out.pop();
            }
            // liblzf first compares 16 bytes unrolled when more than 16 may match, without
            // the `maxlen` bound, then one at a time with it; its lengths are kept exactly.
            let mut len = 2;
            let mut ended = false;
            if maxlen > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[candidate + len] != input[ip + len] {
                        ended = true;
                        break;
                    }
                }
            }
            while !ended {
                len += 1;
                ended = len >= maxlen || input[candidate + len] != input[ip + len];
            }
            let len = len - 2;
            ip += 1;
            if len < 7 {
                out.push(((off >> 8) + (len << 5)) as u8);
            } else {
                out.push(((off >> 8) + (7 << 5)) as u8);
                out.push((len - 7) as u8);
            }
            out.push(off as u8);
            run_at = out.len();
            out.push(0);
            lit = 0;
            ip += len + 1;
            if ip >= n - 2 {
                break;
            }
            ip -= 2;
            hval = first(ip);
            for _ in 0..2 {
                hval = (hval << 8) | u32::from(input[ip + 2]);
                table.set(slot(hval), ip);
                ip += 1;
            }
        } else {
            if out.len() >= limit {
                return None;
            }
            literal(&mut out, &mut lit, &mut run_at, input[ip]);
            ip += 1;
        }
    }
    if out.len() + 3 > limit {
        return None;
    }
    while ip < n {
        literal(&mut out, &mut lit, &mut run_at, input[ip]);
        ip += 1;
    }
    out[run_at] = (lit as u8).wrapping_sub(1);
    if lit == 0 {
        out.pop();
    }
    (out.len() <= limit).then_some(out)
}

/// Adds one literal byte to the current run, closing the run when it is full.
fn literal(out: &mut Vec<u8>, lit: &mut usize, run_at: &mut usize, byte: u8) {
    *lit += 1;
    out.push(byte);
    if *lit == LZF_MAX_LITERAL {
        out[*run_at] = (*lit - 1) as u8;
        *lit = 0;
        *run_at = out.len();
        out.push(0);
    }
}

/// LZF decompression to exactly `len` bytes.
pub fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            out.extend_from_slice(input.get(ip..ip + run)?);
            ip += run;
        } else {
            let mut run = ctrl >> 5;
            if run == 7 {
                run += usize::from(*input.get(ip)?);
                ip += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(ip)?) + 1;
            ip += 1;
            let start = out.len().checked_sub(back)?;
            for i in 0..run + 2 {
                let byte = out[start + i];
                out.push(byte);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

/// Redis's CRC64 (Jones polynomial, reflected, no final xor), eight bytes at a time
/// ("slice-by-8": eight tables, one lookup per byte, the eight independent), which runs
/// several times faster than a byte at a time: a snapshot checksums every byte it writes
/// or loads.
pub fn crc64(crc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    let mut crc = chunks.by_ref().fold(crc, |crc, chunk| {
        let x = crc ^ u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        CRC64_TABLES
            .iter()
            .rev()
            .enumerate()
            .fold(0, |acc, (byte, table)| {
                acc ^ table[((x >> (8 * byte)) & 0xff) as usize]
            })
    });
    for &b in chunks.remainder() {
        crc = CRC64_TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// `CRC64_TABLES[0]` is the CRC of each byte value; table `k` is that of the byte followed
/// by `k` zero bytes.
static CRC64_TABLES: [[u64; 256]; 8] = crc64_tables();

const fn crc64_tables() -> [[u64; 256]; 8] {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut tables = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = (prev >> 8) ^ tables[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_matches_redis_test_vector() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    /// The definition: a byte at a time through the first table.
    fn crc64_bytewise(crc: u64, data: &[u8]) -> u64 {
        data.iter().fold(crc, |crc, &b| {
            CRC64_TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8)
        })
    }

    #[test]
    fn crc64_eight_at_a_time_equals_a_byte_at_a_time() {
        let data: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..9 {
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 500, 991 - start] {
                let part = &data[start..start + len];
                for seed in [0, 1, u64::MAX, 0xe9c6_d914_c4b8_d9ca] {
                    assert_eq!(
                        crc64(seed, part),
                        crc64_bytewise(seed, part),
                        "start {start}, len {len}"
                    );
                }
            }
        }
        // Split anywhere, the running checksum is the same.
        let whole = crc64(0, &data);
        for cut in [1, 5, 8, 333] {
            assert_eq!(crc64(crc64(0, &data[..cut]), &data[cut..]), whole);
        }
    }

    #[test]
    fn lengths_round_trip() {
        for len in [
            0,
            63,
            64,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
        ] {
            let mut out = Vec::new();
            write_length(&mut out, len);
            let mut input = Input::new(&out);
            assert_eq!(input.length(), Ok(len));
            assert_eq!(input.remaining(), 0);
        }
    }

    #[test]
    fn strings_in_every_encoding() {
        let read = |b: &[u8]| Input::new(b).string().map(|s| s.into_owned());
        assert_eq!(read(&[0xc0, 0xfe]).unwrap(), b"-2");
        assert_eq!(read(&[0xc1, 0x39, 0x30]).unwrap(), b"12345");
        assert_eq!(read(&[0xc2, 0x15, 0xcd, 0x5b, 0x07]).unwrap(), b"123456789");
        // "aaaaaaaaaa": a literal 'a', then 9 bytes copied from 1 back (7 + 0 + 2).
        let lzf = [0x00, b'a', 0xe0, 0x00, 0x00];
        assert_eq!(
            lzf_decompress(&lzf, 10).as_deref(),
            Some(&b"aaaaaaaaaa"[..])
        );
        let mut wire = vec![0xc3, lzf.len() as u8, 10];
        wire.extend_from_slice(&lzf);
        assert_eq!(read(&wire).unwrap(), b"aaaaaaaaaa");
        assert!(read(&[0xc3, 1, 5, 0x00]).is_err());
        assert!(
            lzf_decompress(&[0x20, 0x05], 3).is_none(),
            "reference before the start"
        );
    }

    #[test]
    fn written_strings_read_back() {
        let long = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc".repeat(20);
        for s in [
            &b""[..],
            b"0",
            b"-1",
            b"007",
            b"2147483647",
            b"2147483648",
            b"hello world",
            &long,
            b"abcdefghijklmnopqrstuvwxyz",
        ] {
            let mut out = Vec::new();
            write_string(&mut out, s);
            let mut input = Input::new(&out);
            assert_eq!(input.string().unwrap(), s);
            assert_eq!(input.remaining(), 0);
        }
        let mut out = Vec::new();
        write_string(&mut out, &long);
        assert!(out.len() < long.len() / 4, "repetitive text compresses");
    }

    #[test]
    fn lzf_round_trips_any_bytes() {
        let mut state = 0x1234_5678_u64;
        for len in [3, 21, 100, 1000, 70_000] {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    b"abcd"[(state >> 62) as usize]
                })
                .collect();
            let compressed = lzf_compress(&data, data.len() + 64).expect("fits");
            assert_eq!(lzf_decompress(&compressed, data.len()), Some(data));
        }
    }
}
