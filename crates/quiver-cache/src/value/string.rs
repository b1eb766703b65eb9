//! String values: the integer fast path and Redis's number parsing and formatting rules.

use crate::error::OpError;

/// Longest string Redis encodes as an integer ("-9223372036854775808" is 20 bytes).
const MAX_INT_STRING_BYTES: usize = 20;

/// Parses `s` as Redis's `string2ll` does: optional `-`, no `+`, no leading zeros (except
/// "0" itself), no spaces, within `i64`.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > MAX_INT_STRING_BYTES {
        return None;
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || (digits[0] == b'0' && (digits.len() > 1 || neg)) {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let digit = i64::from(d - b'0');
        v = v.checked_mul(10)?;
        v = if neg {
            v.checked_sub(digit)?
        } else {
            v.checked_add(digit)?
        };
    }
    Some(v)
}

/// Parses `s` as a float as Redis does for INCRBYFLOAT, HINCRBYFLOAT and scores: no
/// surrounding spaces, `inf`/`-inf`/`+inf` accepted, NaN refused.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    if text.is_empty()
        || text.starts_with(char::is_whitespace)
        || text.ends_with(char::is_whitespace)
    {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let v = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => {
            if lower.contains("inf") || lower.contains("nan") {
                return None;
            }
            quiver_resp::num::str_to_f64(text)?
        }
    };
    (!v.is_nan()).then_some(v)
}

/// Formats a float as INCRBYFLOAT replies: shortest text that reads back as the same value,
/// never in exponent form, no trailing zeros ("3", "10.6", "-0.5").
pub fn format_f64(v: f64) -> Vec<u8> {
    if v == 0.0 {
        return b"0".to_vec();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            b"inf".to_vec()
        } else {
            b"-inf".to_vec()
        };
    }
    format!("{v}").into_bytes()
}

/// Writes `v` in decimal into `buf` and returns the written tail.
pub fn format_i64(v: i64, buf: &mut [u8; MAX_INT_STRING_BYTES]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// A scratch buffer for [`format_i64`].
pub fn int_buf() -> [u8; MAX_INT_STRING_BYTES] {
    [0; MAX_INT_STRING_BYTES]
}

/// GETRANGE's index rules (Redis 7): negative indexes count from the end, the range is
/// clamped to the string, and an empty or inverted range gives an empty string.
pub fn range_of(len: usize, start: i64, end: i64) -> std::ops::Range<usize> {
    if len == 0 || (start < 0 && end < 0 && start > end) {
        return 0..0;
    }
    let len_i = len as i64;
    let mut start = if start < 0 { len_i + start } else { start };
    let mut end = if end < 0 { len_i + end } else { end };
    start = start.max(0);
    end = end.max(0);
    if end >= len_i {
        end = len_i - 1;
    }
    if start > end {
        return 0..0;
    }
    start as usize..end as usize + 1
}

/// Adds two integers as INCRBY does.
pub fn add_i64(current: i64, delta: i64) -> Result<i64, OpError> {
    current.checked_add(delta).ok_or(OpError::Overflow)
}

/// Adds two floats as INCRBYFLOAT does.
pub fn add_f64(current: f64, delta: f64) -> Result<f64, OpError> {
    let v = current + delta;
    if v.is_nan() || v.is_infinite() {
        return Err(OpError::NanOrInfinity);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_strictly() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"1a",
            b"9223372036854775808",
            b"-",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn floats_parse_and_format_like_redis() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"5.0e3"), Some(5000.0));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"abc"), None);
        assert_eq!(format_f64(10.5 + 0.1), b"10.6");
        assert_eq!(format_f64(3.0), b"3");
        assert_eq!(format_f64(5000.0), b"5000");
        assert_eq!(format_f64(-0.5), b"-0.5");
    }

    #[test]
    fn int_formatting() {
        let mut b = int_buf();
        assert_eq!(format_i64(0, &mut b), b"0");
        assert_eq!(format_i64(-42, &mut b), b"-42");
        assert_eq!(format_i64(i64::MIN, &mut b), b"-9223372036854775808");
    }

    #[test]
    fn getrange_rules() {
        // "This is a string" examples from the Redis docs.
        let len = 16;
        assert_eq!(range_of(len, 0, 3), 0..4);
        assert_eq!(range_of(len, -3, -1), 13..16);
        assert_eq!(range_of(len, 0, -1), 0..16);
        assert_eq!(range_of(len, 10, 100), 10..16);
        assert_eq!(range_of(len, 5, 3), 0..0);
        assert_eq!(range_of(len, -1, -5), 0..0);
        assert_eq!(range_of(0, 0, -1), 0..0);
        assert_eq!(range_of(len, -100, 2), 0..3);
    }
}
