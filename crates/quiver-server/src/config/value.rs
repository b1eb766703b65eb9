//! Text forms of the value kinds that configuration keys use: sizes (`64MiB`),
//! durations (`250us`, `2s`), booleans and integers, parsed and rendered
//! canonically so that `quiver config` output reads back to the same values.

use std::time::Duration;

/// Binary and decimal size units, longest suffix first so `KiB` wins over `B`.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("k", 1 << 10),
    ("m", 1 << 20),
    ("g", 1 << 30),
    ("b", 1),
];

/// Duration units in nanoseconds, longest suffix first so `ms` wins over `s`.
const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// What a size accepts, for error messages.
pub const SIZE_HELP: &str = "a size: a whole number of bytes with an optional unit B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB for powers of ten), e.g. 64MiB";

/// What a duration accepts, for error messages.
pub const DURATION_HELP: &str =
    "a duration: a whole number with a unit ns, us, ms, s, m or h, e.g. 250us or 2s";

/// Parses `64MiB`, `4 KiB`, `1000`, `2GB` into bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let (number, unit) = split_number(text)?;
    let multiplier = if unit.is_empty() {
        1
    } else {
        let unit = unit.to_ascii_lowercase();
        SIZE_UNITS.iter().find(|(name, _)| *name == unit)?.1
    };
    number.checked_mul(multiplier)
}

/// Renders bytes with the largest binary unit that divides them exactly.
pub fn render_size(bytes: u64) -> String {
    for (unit, factor) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes != 0 && bytes.is_multiple_of(factor) {
            return format!("{}{unit}", bytes / factor);
        }
    }
    format!("{bytes}B")
}

/// Parses `250us`, `10ms`, `2s`, `1m`, `1h` or a bare `0`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = split_number(text)?;
    if unit.is_empty() {
        return (number == 0).then_some(Duration::ZERO);
    }
    let nanos_per_unit = DURATION_UNITS.iter().find(|(name, _)| *name == unit)?.1;
    let nanos = number.checked_mul(nanos_per_unit)?;
    Some(Duration::from_nanos(nanos))
}

/// Renders a duration with the largest unit that divides it exactly (minutes
/// are skipped: `90s` reads better than a mix of units).
pub fn render_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    for (unit, factor) in [
        ("h", 3_600_000_000_000u128),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if nanos.is_multiple_of(factor) {
            return format!("{}{unit}", nanos / factor);
        }
    }
    format!("{nanos}ns")
}

/// Parses `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Splits `  64 MiB ` into `(64, "MiB")`; underscores in the number are allowed.
fn split_number(text: &str) -> Option<(u64, &str)> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    let digits: String = text[..digits_end].chars().filter(|c| *c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    let number = digits.parse().ok()?;
    Some((number, text[digits_end..].trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("64MiB"), Some(64 << 20));
        assert_eq!(parse_size("64 mib"), Some(64 << 20));
        assert_eq!(parse_size("4KiB"), Some(4096));
        assert_eq!(parse_size("2GB"), Some(2_000_000_000));
        assert_eq!(parse_size("1_000"), Some(1000));
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size("12B"), Some(12));
    }

    #[test]
    fn bad_sizes_are_refused() {
        for text in [
            "",
            "MiB",
            "-1",
            "1.5MiB",
            "12parsecs",
            "99999999999999999999",
            "20000000TiB",
        ] {
            assert_eq!(parse_size(text), None, "{text}");
        }
    }

    #[test]
    fn sizes_render_canonically_and_round_trip() {
        for bytes in [0, 1, 1000, 1024, 65536, 64 << 20, 3 << 30, (1 << 40) + 1] {
            assert_eq!(parse_size(&render_size(bytes)), Some(bytes));
        }
        assert_eq!(render_size(64 << 20), "64MiB");
        assert_eq!(render_size(1000), "1000B");
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("10ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("1m"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("0"), Some(Duration::ZERO));
    }

    #[test]
    fn bad_durations_are_refused() {
        for text in ["", "2", "s", "2 weeks", "-1s", "1.5s"] {
            assert_eq!(parse_duration(text), None, "{text}");
        }
    }

    #[test]
    fn durations_render_canonically_and_round_trip() {
        for nanos in [
            0u64,
            1,
            1000,
            250_000,
            2_000_000_000,
            60_000_000_000,
            5_400_000_000_000,
        ] {
            let duration = Duration::from_nanos(nanos);
            assert_eq!(parse_duration(&render_duration(duration)), Some(duration));
        }
        assert_eq!(render_duration(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool("TRUE"), Some(true));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }
}
