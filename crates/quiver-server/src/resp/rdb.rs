//! Pieces of Redis's RDB encoding shared by what Quiver exchanges with Redis in that
//! format (FUNCTION DUMP/RESTORE payloads): lengths, strings (plain, integer-encoded
//! and LZF-compressed), and the CRC64 that closes a payload.

/// RDB's length encoding.
pub fn write_length(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend((0..4).rev().map(|i| (len >> (8 * i)) as u8));
    } else {
        out.push(0x81);
        out.extend((0..8).rev().map(|i| (len >> (8 * i)) as u8));
    }
}

/// A length-prefixed string, written plain.
pub fn write_string(out: &mut Vec<u8>, data: &[u8]) {
    write_length(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// What a length byte announces: a length, or a string in a special encoding.
enum Length {
    Plain(u64),
    Encoded(u8),
}

fn read_length_or_encoding(data: &[u8], pos: &mut usize) -> Option<Length> {
    let first = *data.get(*pos)?;
    *pos += 1;
    let mut big_endian = |n: usize| -> Option<u64> {
        let bytes = data.get(*pos..pos.checked_add(n)?)?;
        *pos += n;
        Some(bytes.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b)))
    };
    match first >> 6 {
        0 => Some(Length::Plain(u64::from(first & 0x3f))),
        1 => Some(Length::Plain(
            (u64::from(first & 0x3f) << 8) | big_endian(1)?,
        )),
        2 if first == 0x80 => big_endian(4).map(Length::Plain),
        2 if first == 0x81 => big_endian(8).map(Length::Plain),
        3 => Some(Length::Encoded(first & 0x3f)),
        _ => None,
    }
}

/// A plain length.
pub fn read_length(data: &[u8], pos: &mut usize) -> Option<u64> {
    match read_length_or_encoding(data, pos)? {
        Length::Plain(len) => Some(len),
        Length::Encoded(_) => None,
    }
}

/// Longest string a payload may decompress to (Redis's `proto-max-bulk-len` default).
const MAX_STRING: usize = 512 << 20;

/// A string in any of RDB's encodings: plain, an integer (8, 16 or 32 bits), or LZF.
pub fn read_string(data: &[u8], pos: &mut usize) -> Result<Vec<u8>, &'static str> {
    const BAD: &str = "bad length";
    let take = |pos: &mut usize, n: usize| -> Result<&[u8], &'static str> {
        let end = pos.checked_add(n).ok_or(BAD)?;
        let bytes = data.get(*pos..end).ok_or(BAD)?;
        *pos = end;
        Ok(bytes)
    };
    match read_length_or_encoding(data, pos).ok_or(BAD)? {
        Length::Plain(len) => Ok(take(pos, usize::try_from(len).map_err(|_| BAD)?)?.to_vec()),
        Length::Encoded(0) => Ok((take(pos, 1)?[0] as i8).to_string().into_bytes()),
        Length::Encoded(1) => {
            let b = take(pos, 2)?;
            Ok(i16::from_le_bytes([b[0], b[1]]).to_string().into_bytes())
        }
        Length::Encoded(2) => {
            let b = take(pos, 4)?;
            Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]])
                .to_string()
                .into_bytes())
        }
        Length::Encoded(3) => {
            let compressed = read_length(data, pos).ok_or(BAD)?;
            let original = read_length(data, pos).ok_or(BAD)?;
            let original = usize::try_from(original)
                .ok()
                .filter(|n| *n <= MAX_STRING)
                .ok_or("compressed string too long")?;
            let input = take(pos, usize::try_from(compressed).map_err(|_| BAD)?)?;
            lzf_decompress(input, original).ok_or("bad LZF data")
        }
        Length::Encoded(_) => Err("unknown string encoding"),
    }
}

/// LZF decompression to exactly `len` bytes (what Redis compresses strings with).
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

/// Redis's CRC64 (Jones polynomial, reflected, no final xor).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_matches_redis_test_vector() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
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
            let mut pos = 0;
            assert_eq!(read_length(&out, &mut pos), Some(len));
            assert_eq!(pos, out.len());
        }
    }

    #[test]
    fn strings_in_every_encoding() {
        let mut pos = 0;
        assert_eq!(read_string(&[0xc0, 0xfe], &mut pos).unwrap(), b"-2");
        pos = 0;
        assert_eq!(
            read_string(&[0xc1, 0x39, 0x30], &mut pos).unwrap(),
            b"12345"
        );
        pos = 0;
        assert_eq!(
            read_string(&[0xc2, 0x15, 0xcd, 0x5b, 0x07], &mut pos).unwrap(),
            b"123456789"
        );
        // "aaaaaaaaaa": a literal 'a', then 9 bytes copied from 1 back (7 + 0 + 2).
        let lzf = [0x00, b'a', 0xe0, 0x00, 0x00];
        assert_eq!(
            lzf_decompress(&lzf, 10).as_deref(),
            Some(b"aaaaaaaaaa".as_slice())
        );
        let mut wire = vec![0xc3, lzf.len() as u8, 10];
        wire.extend_from_slice(&lzf);
        pos = 0;
        assert_eq!(read_string(&wire, &mut pos).unwrap(), b"aaaaaaaaaa");
        assert_eq!(pos, wire.len());
        pos = 0;
        assert!(read_string(&[0xc3, 1, 5, 0x00], &mut pos).is_err());
        assert!(
            lzf_decompress(&[0x20, 0x05], 3).is_none(),
            "reference before the start"
        );
    }
}
