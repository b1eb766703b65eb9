//! Times on the command line: RFC 3339 in UTC for output, and the start positions people
//! type (`earliest`, `latest`, an offset, a time, or how long ago).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use quiver_client::StartPosition;

use crate::config::value::parse_duration;

/// What `--from` and `--to` accept, for error messages.
pub const POSITION_HELP: &str =
    "earliest, latest, an offset (42), a time (2026-11-23T21:00:00Z) or how long ago (10m, 2h)";

/// Parses a start position as people type it.
pub fn parse_position(text: &str, now_ms: u64) -> Result<StartPosition, String> {
    let text = text.trim();
    match text {
        "earliest" => return Ok(StartPosition::Earliest),
        "latest" => return Ok(StartPosition::Latest),
        _ => {}
    }
    if let Ok(offset) = text.parse::<u64>() {
        return Ok(StartPosition::Offset(offset));
    }
    if let Some(ms) = parse_rfc3339(text) {
        return Ok(StartPosition::TimestampMs(ms));
    }
    if let Some(ago) = parse_duration(text) {
        let ago_ms = u64::try_from(ago.as_millis()).unwrap_or(u64::MAX);
        return Ok(StartPosition::TimestampMs(now_ms.saturating_sub(ago_ms)));
    }
    Err(format!("{text:?} is not a position; use {POSITION_HELP}"))
}

/// Milliseconds since the Unix epoch now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` since the Unix epoch as `2026-11-23T21:00:00.123Z`.
pub fn format_rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        ms % 1000
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` into ms since the Unix epoch.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't' | b' ')
    {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<u64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if bytes[13] != b':' || bytes[16] != b':' {
        return None;
    }
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month)
        || !(1..=month_days).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut millis = 0;
    if bytes.get(at) == Some(&b'.') {
        let start = at + 1;
        let mut end = start;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if end == start {
            return None;
        }
        let digits = &text[start..end.min(start + 3)];
        millis = digits.parse::<u64>().ok()? * 10u64.pow(3 - digits.len() as u32);
        at = end;
    }
    let offset_minutes: i64 = match text.get(at..)? {
        "Z" | "z" => 0,
        zone if zone.len() == 6 && zone.as_bytes()[3] == b':' => {
            let sign = match zone.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let part = |range: std::ops::Range<usize>| -> Option<i64> {
                let digits = zone.get(range)?;
                digits
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| digits.parse().ok())?
            };
            let (hours, minutes) = (part(1..3)?, part(4..6)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            sign * (hours * 60 + minutes)
        }
        _ => return None,
    };
    let days = days_from_civil(year as i64, month as u32, day as u32);
    let secs = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64 - offset_minutes * 60;
    u64::try_from(secs).ok().map(|secs| secs * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of `days` since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A duration as people read it: `1h`, `30s`, `250ms`.
pub fn format_duration(duration: Duration) -> String {
    crate::config::value::render_duration(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_and_positions_parse() {
        for ms in [0, 1_700_000_000_123, 951_782_400_000, 4_102_444_799_999] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(ms), "{ms}");
        }
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            parse_rfc3339("2026-11-23T22:00:00+01:00"),
            parse_rfc3339("2026-11-23T21:00:00Z")
        );
        assert_eq!(
            parse_rfc3339("2026-11-23T21:00:00.5Z").map(|ms| ms % 1000),
            Some(500)
        );
        assert!(parse_rfc3339("2026-13-01T00:00:00Z").is_none());
        assert!(parse_rfc3339("2026-02-31T21:00:00Z").is_none());
        assert!(
            parse_rfc3339("2028-02-29T21:00:00Z").is_some(),
            "a leap day"
        );
        assert!(parse_rfc3339("2026-02-29T21:00:00Z").is_none());
        assert!(parse_rfc3339("2026-11-23T21:00:00+99:99").is_none());
        assert!(parse_rfc3339("2026-11-23T21:00:00+-1:00").is_none());
        assert!(parse_rfc3339("yesterday").is_none());
        let now = 10_000_000;
        assert_eq!(parse_position("earliest", now), Ok(StartPosition::Earliest));
        assert_eq!(parse_position("17", now), Ok(StartPosition::Offset(17)));
        assert_eq!(
            parse_position("10s", now),
            Ok(StartPosition::TimestampMs(now - 10_000))
        );
        assert!(parse_position("soon", now).is_err());
    }
}
