//! Wall-clock time for the transports, read in one place. The keyspace and
//! the broker never read the clock themselves: transports pass `now` in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Time since the Unix epoch (zero if the clock is before 1970).
fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    u64::try_from(since_epoch().as_millis()).unwrap_or(u64::MAX)
}

/// Microseconds since the Unix epoch.
pub fn unix_micros() -> u128 {
    since_epoch().as_micros()
}
