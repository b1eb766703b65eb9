//! The broker's clock, behind a trait so that tests choose the time.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// Where the broker reads time: a monotonic instant for batching deadlines and wall-clock
/// milliseconds for the timestamps it puts on messages.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Monotonic time (tokio's, so that paused-time tests drive it).
    fn now(&self) -> Instant;
    /// Milliseconds since the Unix epoch.
    fn unix_ms(&self) -> u64;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn unix_ms(&self) -> u64 {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    }
}

/// A clock whose wall-clock time is set by hand; its monotonic time is tokio's.
#[derive(Debug, Default)]
pub struct ManualClock {
    unix_ms: AtomicU64,
}

impl ManualClock {
    /// A clock reading `unix_ms`.
    pub fn new(unix_ms: u64) -> Self {
        Self {
            unix_ms: AtomicU64::new(unix_ms),
        }
    }

    /// Sets the wall-clock time.
    pub fn set_unix_ms(&self, unix_ms: u64) {
        self.unix_ms.store(unix_ms, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn unix_ms(&self) -> u64 {
        self.unix_ms.load(Ordering::Relaxed)
    }
}
