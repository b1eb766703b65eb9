//! Number parsing and formatting with Redis's exact rules.
//!
//! Redis parses integers with `string2ll` (no sign but `-`, no leading zeros,
//! no spaces, fits in `i64`) and floats with `strtod` (rejecting NaN, overflow
//! and underflow). Formatting here never allocates.

use std::io::Write as _;

/// The most bytes an `i64` takes in decimal (`-9223372036854775808`).
pub const MAX_I64_DIGITS: usize = 20;

/// The most bytes [`format_double`] writes (sign, 17 digits, point, exponent).
pub const MAX_DOUBLE_CHARS: usize = 32;

/// Parses `bytes` exactly as Redis's `string2ll`: `0`, or an optional `-`
/// followed by a digit 1-9 and more digits, within `i64`.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    match bytes {
        [] => None,
        [b'0'] => Some(0),
        [b'-', rest @ ..] => {
            let magnitude = parse_magnitude(rest)?;
            0i64.checked_sub_unsigned(magnitude)
        }
        _ => i64::try_from(parse_magnitude(bytes)?).ok(),
    }
}

/// Digits without sign, first digit 1-9.
fn parse_magnitude(digits: &[u8]) -> Option<u64> {
    let (&first, rest) = digits.split_first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut value = u64::from(first - b'0');
    for &b in rest {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(value)
}

/// Parses a float as Redis's `getDoubleFromObject` does with `strtod`: no
/// leading space, no trailing bytes, `inf`/`-inf` allowed, NaN, overflow and
/// underflow refused.
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let first = *bytes.first()?;
    if first.is_ascii_whitespace() {
        return None;
    }
    if let Some(value) = parse_hex_f64(text) {
        // Overflow and underflow are refused by the hexadecimal reader itself.
        return value;
    }
    let value: f64 = text.parse().ok()?;
    if value.is_nan() {
        return None;
    }
    let unsigned = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    let is_inf_literal = unsigned == "inf" || unsigned == "infinity";
    if value.is_infinite() && !is_inf_literal {
        return None; // strtod: ERANGE overflow
    }
    if value == 0.0
        && unsigned
            .bytes()
            .take_while(|b| *b != b'e')
            .any(|b| (b'1'..=b'9').contains(&b))
    {
        return None; // strtod: ERANGE underflow
    }
    Some(value)
}

/// `text` as a whole as C's `strtod` reads it: a decimal float (Rust's grammar, which is
/// C's for decimals) or a hexadecimal one (`0x10`, `-0x1.8p1`).
pub fn str_to_f64(text: &str) -> Option<f64> {
    match parse_hex_f64(text) {
        Some(value) => value,
        None => text.parse().ok(),
    }
}

/// A hexadecimal float with an optional sign: `0x` or `0X`, hex digits with an optional
/// point (at least one digit), then optionally `p` or `P` and a decimal power of two.
/// `None` when `text` is not hexadecimal at all; `Some(None)` when it is but is malformed
/// or out of f64's range (strtod's ERANGE: a non-zero value that overflows or underflows).
fn parse_hex_f64(text: &str) -> Option<Option<f64>> {
    let (negative, rest) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    let rest = rest
        .strip_prefix(b"0x")
        .or_else(|| rest.strip_prefix(b"0X"))?;
    Some(hex_value(rest).map(|value| if negative { -value } else { value }))
}

/// The value of what follows `0x`.
fn hex_value(rest: &[u8]) -> Option<f64> {
    let (digits, power) = match rest.iter().position(|b| matches!(b, b'p' | b'P')) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (whole, fraction) = match digits.iter().position(|b| *b == b'.') {
        Some(at) => (&digits[..at], &digits[at + 1..]),
        None => (digits, &[][..]),
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    // Sixteen hex digits fill the mantissa; further whole digits scale it, further
    // fraction digits are below its precision.
    let (mut mantissa, mut exponent) = (0u64, 0i64);
    let mut used = 0;
    for (i, &b) in whole.iter().chain(fraction).enumerate() {
        let digit = u64::from(char::from(b).to_digit(16)?);
        let in_fraction = i >= whole.len();
        if used < 16 {
            mantissa = mantissa << 4 | digit;
            used += usize::from(mantissa != 0);
            exponent -= if in_fraction { 4 } else { 0 };
        } else {
            // Below the mantissa's precision: a non-zero digit is kept as a sticky low
            // bit, so that the conversion rounds as the exact value would.
            mantissa |= u64::from(digit != 0);
            exponent += if in_fraction { 0 } else { 4 };
        }
    }
    if let Some(power) = power {
        let (sign, digits) = match power {
            [b'-', rest @ ..] => (-1, rest),
            [b'+', rest @ ..] => (1, rest),
            rest => (1, rest),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        // A power too long for an i64 is past any float's range anyway.
        let magnitude = std::str::from_utf8(digits)
            .ok()?
            .parse::<i64>()
            .unwrap_or(i64::MAX / 4);
        exponent = exponent.saturating_add(sign * magnitude);
    }
    let exponent = i32::try_from(exponent.clamp(-4000, 4000)).expect("clamped");
    // Two steps, so that an exponent past f64's own range still scales a large or small
    // mantissa correctly.
    let half = exponent / 2;
    let value = mantissa as f64 * 2f64.powi(half) * 2f64.powi(exponent - half);
    let out_of_range = value.is_infinite() || value == 0.0 && mantissa != 0;
    (!out_of_range).then_some(value)
}

/// Parses an unsigned cursor as Redis's `parseScanCursorOrReply` (`strtoul`:
/// an optional sign, a negative value wraps); an empty argument is cursor 0
/// as there.
pub fn parse_cursor(bytes: &[u8]) -> Option<u64> {
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() {
        // strtoul parses nothing and Redis accepts the empty remainder as 0.
        return bytes.is_empty().then_some(0);
    }
    let mut value: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// Writes `value` in decimal into `buf` and returns the written bytes.
pub fn format_i64(value: i64, buf: &mut [u8; MAX_I64_DIGITS]) -> &[u8] {
    let mut magnitude = value.unsigned_abs();
    let mut pos = buf.len();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if value < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    &buf[pos..]
}

/// Writes `value` as C's `printf("%.17g")` does (what Redis 7.0 uses for
/// double replies), with `inf`, `-inf`, `nan` and `-nan` (a NaN with its sign bit set,
/// such as Lua's `0/0` on x86) spelled as glibc's printf spells them.
pub fn format_double(value: f64, buf: &mut [u8; MAX_DOUBLE_CHARS]) -> &[u8] {
    if value.is_nan() {
        return if value.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        };
    }
    if value.is_infinite() {
        return if value > 0.0 { b"inf" } else { b"-inf" };
    }
    // 17 significant digits, correctly rounded: d.dddddddddddddddde[-]X
    let mut sci = [0u8; MAX_DOUBLE_CHARS];
    let sci_len = {
        let mut cursor = &mut sci[..];
        let before = cursor.len();
        write!(cursor, "{:.16e}", value.abs()).expect("a 17-digit float fits in 32 bytes");
        before - cursor.len()
    };
    let sci = &sci[..sci_len];
    let e_pos = sci
        .iter()
        .position(|&b| b == b'e')
        .expect("{:e} writes an exponent");
    let exponent: i32 = std::str::from_utf8(&sci[e_pos + 1..])
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("{:e} writes a decimal exponent");
    let mut digits = [0u8; 17];
    let mut n = 0;
    for &b in &sci[..e_pos] {
        if b.is_ascii_digit() {
            digits[n] = b;
            n += 1;
        }
    }
    // %g drops trailing zeros of the significand.
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let digits = &digits[..n];
    let mut out = Out { buf, len: 0 };
    if value.is_sign_negative() {
        out.push(b'-');
    }
    if (-4..17).contains(&exponent) {
        write_fixed(&mut out, digits, exponent);
    } else {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exponent < 0 { b'-' } else { b'+' });
        let abs = exponent.unsigned_abs();
        if abs < 10 {
            out.push(b'0');
        }
        let mut tmp = [0u8; MAX_I64_DIGITS];
        out.extend(format_i64(i64::from(abs), &mut tmp));
    }
    let len = out.len;
    &buf[..len]
}

/// Fixed notation for `%g` when -4 <= exponent < 17.
fn write_fixed(out: &mut Out<'_>, digits: &[u8], exponent: i32) {
    if exponent < 0 {
        out.extend(b"0.");
        for _ in 0..(-exponent - 1) {
            out.push(b'0');
        }
        out.extend(digits);
        return;
    }
    let int_len = exponent as usize + 1;
    for i in 0..int_len {
        out.push(digits.get(i).copied().unwrap_or(b'0'));
    }
    if digits.len() > int_len {
        out.push(b'.');
        out.extend(&digits[int_len..]);
    }
}

struct Out<'a> {
    buf: &'a mut [u8; MAX_DOUBLE_CHARS],
    len: usize,
}

impl Out<'_> {
    fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    fn extend(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hexadecimal_floats_read_as_strtod_reads_them() {
        for (text, value) in [
            ("0x10", 16.0),
            ("0X1p3", 8.0),
            ("-0x1.8p1", -3.0),
            ("+0x.8", 0.5),
            ("0x1P-2", 0.25),
            ("0x00000000000000000001", 1.0),
            ("0x10000000000000000000", 2f64.powi(76)),
            ("0x1p1023", 2f64.powi(1023)),
        ] {
            assert_eq!(parse_f64(text.as_bytes()), Some(value), "{text}");
        }
        for bad in [
            "0x",
            "0xp1",
            "0x1p",
            "0x1p+",
            "0xg",
            "0x1.2.3",
            "x10",
            "0x1p1024",
            "0x1p-5000",
            "0xep-5000",
        ] {
            assert_eq!(parse_f64(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(parse_f64(b"0x0p1"), Some(0.0));
    }

    fn g17(value: f64) -> String {
        let mut buf = [0u8; MAX_DOUBLE_CHARS];
        String::from_utf8(format_double(value, &mut buf).to_vec()).unwrap()
    }

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"01",
            b"+1",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"1a",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn floats_follow_strtod_with_redis_checks() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"0"), Some(0.0));
        assert_eq!(parse_f64(b"0e5"), Some(0.0));
        for bad in [&b""[..], b"nan", b" 1", b"1 ", b"1e400", b"1e-400", b"abc"] {
            assert_eq!(parse_f64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn cursors_follow_strtoul() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b"-"), None);
        assert_eq!(parse_cursor(b"1x"), None);
    }

    #[test]
    fn integer_formatting() {
        let mut buf = [0u8; MAX_I64_DIGITS];
        assert_eq!(format_i64(0, &mut buf), b"0");
        assert_eq!(format_i64(-42, &mut buf), b"-42");
        assert_eq!(format_i64(i64::MIN, &mut buf), b"-9223372036854775808");
        assert_eq!(format_i64(i64::MAX, &mut buf), b"9223372036854775807");
    }

    #[test]
    fn doubles_format_like_printf_g17() {
        assert_eq!(g17(0.0), "0");
        assert_eq!(g17(-0.0), "-0");
        assert_eq!(g17(1.5), "1.5");
        assert_eq!(g17(0.1), "0.10000000000000001");
        assert_eq!(g17(3.0), "3");
        assert_eq!(g17(100.0), "100");
        assert_eq!(g17(1e16), "10000000000000000");
        assert_eq!(g17(1e17), "1e+17");
        assert_eq!(g17(1.5e300), "1.5000000000000001e+300");
        assert_eq!(g17(0.0001), "0.0001");
        assert_eq!(g17(0.00001), "1.0000000000000001e-05");
        assert_eq!(g17(-2.5), "-2.5");
        assert_eq!(g17(f64::INFINITY), "inf");
        assert_eq!(g17(f64::NEG_INFINITY), "-inf");
        assert_eq!(g17(f64::NAN), "nan");
        assert_eq!(g17(-f64::NAN), "-nan");
        assert_eq!(g17(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(g17(5e-324), "4.9406564584124654e-324");
        // As redis-server 7.0.15 replies to ZSCORE:
        assert_eq!(g17(1e300), "1.0000000000000001e+300");
        assert_eq!(g17(123456789.123), "123456789.123");
    }
}
