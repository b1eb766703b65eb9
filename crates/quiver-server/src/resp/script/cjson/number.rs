//! The numbers of `cjson` as C reads and writes them: `strtod` (what lua-cjson's decoder
//! reads) and `%.14g` (what its encoder writes, at `encode_number_precision`).

/// C's `%.{precision}g` (every NaN as `nan`, as lua-cjson writes it).
pub(super) fn format_g(value: f64, precision: i64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    let precision = precision.clamp(1, 17) as usize;
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').expect("an exponent");
    let exponent: i64 = exponent.parse().expect("a number");
    if exponent < -4 || exponent >= precision as i64 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i64 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// C's `strtod` at the start of `text`: the number and the bytes it used, or `None`
/// when no number starts there (decimal and hexadecimal forms, `inf`, `infinity`,
/// `nan` and `nan(…)`, each with a sign).
pub(super) fn strtod(text: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let negative = match at(0) {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let sign = |v: f64| if negative { -v } else { v };
    let word = |w: &[u8]| text.len() >= i + w.len() && text[i..i + w.len()].eq_ignore_ascii_case(w);
    if word(b"infinity") {
        return Some((sign(f64::INFINITY), i + 8));
    }
    if word(b"inf") {
        return Some((sign(f64::INFINITY), i + 3));
    }
    if word(b"nan") {
        let mut end = i + 3;
        if at(end) == b'(' {
            let close = (end + 1..text.len())
                .find(|&j| !(text[j].is_ascii_alphanumeric() || text[j] == b'_'));
            if let Some(close) = close.filter(|&j| text[j] == b')') {
                end = close + 1;
            }
        }
        return Some((sign(f64::NAN), end));
    }
    if at(i) == b'0' && at(i + 1) | 0x20 == b'x' {
        if let Some((value, used)) = hex_float(&text[i + 2..]) {
            return Some((sign(value), i + 2 + used));
        }
        // Just "0": the x is not part of the number.
        return Some((sign(0.0), i + 1));
    }
    let start = i;
    let digits = |mut j: usize| {
        while at(j).is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut end = digits(i);
    let mut mantissa = end > start;
    if at(end) == b'.' {
        let after = digits(end + 1);
        mantissa |= after > end + 1;
        end = after;
    }
    if !mantissa {
        return None;
    }
    if at(end) | 0x20 == b'e' {
        let mut j = end + 1;
        if matches!(at(j), b'+' | b'-') {
            j += 1;
        }
        let after = digits(j);
        if after > j {
            end = after;
        }
    }
    let mut literal = std::str::from_utf8(&text[start..end]).ok()?.to_owned();
    if literal.starts_with('.') {
        literal.insert(0, '0');
    }
    let value: f64 = literal
        .replace(".e", ".0e")
        .replace(".E", ".0E")
        .parse()
        .ok()?;
    Some((sign(value), end))
}

/// A hexadecimal floating-point number after `0x`: its value and the bytes used.
fn hex_float(text: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let (mut value, mut i, mut any, mut scale) = (0.0f64, 0, false, 0i32);
    while let Some(d) = (at(i) as char).to_digit(16) {
        value = value * 16.0 + f64::from(d);
        (i, any) = (i + 1, true);
    }
    if at(i) == b'.' {
        i += 1;
        while let Some(d) = (at(i) as char).to_digit(16) {
            value = value * 16.0 + f64::from(d);
            (i, any, scale) = (i + 1, true, scale - 4);
        }
    }
    if !any {
        return None;
    }
    if at(i) | 0x20 == b'p' {
        let mut j = i + 1;
        let negative = at(j) == b'-';
        if matches!(at(j), b'+' | b'-') {
            j += 1;
        }
        let start = j;
        let mut exponent = 0i32;
        while at(j).is_ascii_digit() {
            exponent = exponent
                .saturating_mul(10)
                .saturating_add(i32::from(at(j) - b'0'));
            j += 1;
        }
        if j > start {
            scale = scale.saturating_add(if negative { -exponent } else { exponent });
            i = j;
        }
    }
    Some((value * 2f64.powi(scale), i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_c_prints_them() {
        for (value, precision, text) in [
            (1.0 / 3.0, 14, "0.33333333333333"),
            (1e15, 14, "1e+15"),
            (123456.0, 3, "1.23e+05"),
            (123456.0, 14, "123456"),
            (0.0001, 14, "0.0001"),
            (0.00001, 14, "1e-05"),
            (-0.0, 14, "-0"),
            (1e300, 14, "1e+300"),
            (2f64.powi(53), 14, "9.007199254741e+15"),
            (0.5, 1, "0.5"),
            (99.5, 2, "1e+02"),
        ] {
            assert_eq!(format_g(value, precision), text, "{value} at {precision}");
        }
    }

    #[test]
    fn strtod_reads_what_c_reads() {
        for (text, value, used) in [
            ("01", 1.0, 2),
            ("1.5e3,", 1500.0, 5),
            ("-2.", -2.0, 3),
            (".5", 0.5, 2),
            ("1e", 1.0, 1),
            ("0x10", 16.0, 4),
            ("0x1p4", 16.0, 5),
            ("0x", 0.0, 1),
            ("+7", 7.0, 2),
            ("-Infinity", f64::NEG_INFINITY, 9),
            ("inf]", f64::INFINITY, 3),
        ] {
            assert_eq!(strtod(text.as_bytes()), Some((value, used)), "{text}");
        }
        let (nan, used) = strtod(b"nan(123)x").unwrap();
        assert!(nan.is_nan() && used == 8);
        assert_eq!(strtod(b"-"), None);
        assert_eq!(strtod(b"."), None);
        assert_eq!(strtod(b"e5"), None);
    }
}
