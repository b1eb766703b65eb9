//! What a durable stream keeps and how: its durability mode, its retention, its
//! de-duplication window, and the rules that make streams durable by name.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use quiver_log::{Durability, RecoveryMode};
use thiserror::Error;

use crate::streams::groups::GroupDefaults;
use crate::streams::pattern::Pattern;

/// Longest fsync interval of `interval:MS`: past a minute, `os` says the same more honestly.
pub const MAX_INTERVAL_MS: u64 = 60_000;

/// Longest de-duplication window: ids are kept in memory for this long.
pub const MAX_DEDUPE_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Most message ids one stream remembers for de-duplication; past it the oldest are
/// forgotten before their window ends (about 100 bytes each: 100 MB at most per stream).
pub const MAX_DEDUPE_IDS: usize = 1 << 20;

/// Longest message id: an id is a key, not a payload.
pub const MAX_MSG_ID_BYTES: usize = 128;

/// The header that carries a message's id for de-duplication (matched without regard to
/// ASCII case).
pub const MSG_ID_HEADER: &str = "Quiver-Msg-Id";

/// Smallest log segment of a durable stream.
pub const MIN_SEGMENT_BYTES: u64 = 64 << 10;

/// Largest log segment of a durable stream (the log's own bound).
pub const MAX_SEGMENT_BYTES: u64 = 1 << 30;

/// What the retention of a durable stream keeps. Every bound is optional.
///
/// `max_messages` is exact for readers (a subscriber starting at `earliest` starts at most
/// `max_messages` before the end); storage is released a whole log segment at a time, so
/// `max_bytes` and `max_age` keep up to one segment more than the bound (the stream's
/// segments are sized to an eighth of `max_bytes` and rotated every eighth of `max_age`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Retention {
    /// Messages older than this may be deleted.
    pub max_age: Option<Duration>,
    /// The stream is kept to about this many bytes of storage.
    pub max_bytes: Option<u64>,
    /// At most this many of the newest messages are kept.
    pub max_messages: Option<u64>,
    /// Keep every message a consumer group of the stream has not acknowledged, whatever
    /// the bounds above say.
    pub keep_unacked: bool,
}

/// How a durable stream stores its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurableConfig {
    /// When an append counts as done (and a `committed` ack is sent).
    pub durability: Durability,
    /// What is kept.
    pub retention: Retention,
    /// How long a message id (header [`MSG_ID_HEADER`]) is remembered; zero turns
    /// de-duplication off.
    pub dedupe_window: Duration,
}

impl Default for DurableConfig {
    /// `os` durability (nothing lost when the process dies), no retention bound, ids
    /// remembered for 2 minutes (as JetStream's default duplicate window).
    fn default() -> Self {
        Self {
            durability: Durability::Os,
            retention: Retention::default(),
            dedupe_window: Duration::from_secs(120),
        }
    }
}

impl DurableConfig {
    /// Checks every value against its bound.
    pub fn validate(&self) -> Result<(), DurableConfigError> {
        if let Durability::Interval { interval_ms } = self.durability
            && !(1..=MAX_INTERVAL_MS).contains(&interval_ms)
        {
            return Err(DurableConfigError::Interval { interval_ms });
        }
        if self.dedupe_window > MAX_DEDUPE_WINDOW {
            return Err(DurableConfigError::DedupeWindow {
                window: self.dedupe_window,
            });
        }
        let retention = &self.retention;
        if retention.max_age.is_some_and(|age| age.is_zero()) {
            return Err(DurableConfigError::Zero { field: "max_age" });
        }
        if retention.max_bytes == Some(0) {
            return Err(DurableConfigError::Zero { field: "max_bytes" });
        }
        if retention.max_messages == Some(0) {
            return Err(DurableConfigError::Zero {
                field: "max_messages",
            });
        }
        Ok(())
    }
}

/// A durable-stream setting outside what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DurableConfigError {
    /// A durability name that is not one of the four.
    #[error(
        "durability {text:?} is not one of buffered, os, interval:MS (MS from 1 to {MAX_INTERVAL_MS}) or sync"
    )]
    Durability { text: String },
    /// `interval:MS` outside its range.
    #[error("durability interval:{interval_ms} is out of range; MS is from 1 to {MAX_INTERVAL_MS}")]
    Interval { interval_ms: u64 },
    /// A de-duplication window past [`MAX_DEDUPE_WINDOW`].
    #[error("dedupe window {window:?} is longer than the limit of 24h")]
    DedupeWindow { window: Duration },
    /// A retention bound of zero (keep nothing) is surely a mistake.
    #[error("retention {field} of 0 would keep nothing; leave it unset for no bound")]
    Zero { field: &'static str },
}

/// Parses `buffered`, `os`, `interval:MS` (also `interval(MS)`) or `sync`.
pub fn parse_durability(text: &str) -> Result<Durability, DurableConfigError> {
    let bad = || DurableConfigError::Durability {
        text: text.to_owned(),
    };
    let durability = match text.trim() {
        "buffered" => Durability::Buffered,
        "os" => Durability::Os,
        "sync" => Durability::Sync,
        other => {
            let ms = other
                .strip_prefix("interval:")
                .or_else(|| {
                    other
                        .strip_prefix("interval(")
                        .and_then(|rest| rest.strip_suffix(')'))
                })
                .ok_or_else(bad)?;
            let interval_ms = ms
                .trim()
                .trim_end_matches("ms")
                .parse::<u64>()
                .map_err(|_| bad())?;
            if !(1..=MAX_INTERVAL_MS).contains(&interval_ms) {
                return Err(DurableConfigError::Interval { interval_ms });
            }
            Durability::Interval { interval_ms }
        }
    };
    Ok(durability)
}

/// The canonical text of a durability mode (what [`parse_durability`] reads).
pub fn durability_name(durability: Durability) -> DurabilityName {
    DurabilityName(durability)
}

/// Displays a durability mode as `buffered`, `os`, `interval:MS` or `sync`.
#[derive(Debug, Clone, Copy)]
pub struct DurabilityName(Durability);

impl fmt::Display for DurabilityName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Durability::Buffered => f.write_str("buffered"),
            Durability::Os => f.write_str("os"),
            Durability::Interval { interval_ms } => write!(f, "interval:{interval_ms}"),
            Durability::Sync => f.write_str("sync"),
        }
    }
}

/// Streams whose names match `pattern` are created durable with `config`. The first rule
/// that matches wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurableRule {
    /// Which stream names.
    pub pattern: Pattern,
    /// How they are stored.
    pub config: DurableConfig,
}

/// Where and how the broker keeps durable streams.
#[derive(Debug, Clone)]
pub struct StorageConfig {
    /// The data directory; the broker keeps `streams/` (one log per durable stream) and
    /// `catalog/` (stream definitions, group state) in it.
    pub dir: PathBuf,
    /// Streams made durable by name when they are first used.
    pub rules: Vec<DurableRule>,
    /// Most durable streams at once: each holds open files and up to two threads of its
    /// log (segment sealing, interval fsync).
    pub max_durable_streams: usize,
    /// Size of one log segment (retention releases storage a segment at a time; a
    /// `max_bytes` bound makes a stream's segments smaller).
    pub segment_bytes: u64,
    /// How often retention runs.
    pub retention_interval: Duration,
    /// What start-up does with corruption inside a log (a torn tail is always cut).
    pub recovery: RecoveryMode,
    /// Settings of consumer groups created without their own.
    pub groups: GroupDefaults,
}

impl StorageConfig {
    /// Defaults for a data directory: no rules, 4096 durable streams, 64 MiB segments,
    /// retention every second, strict recovery.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            rules: Vec::new(),
            max_durable_streams: 4096,
            segment_bytes: 64 << 20,
            retention_interval: Duration::from_secs(1),
            recovery: RecoveryMode::Strict,
            groups: GroupDefaults::default(),
        }
    }

    /// The rule for `name`, if any.
    pub(crate) fn rule_for(&self, name: &crate::streams::StreamName) -> Option<&DurableRule> {
        self.rules.iter().find(|rule| rule.pattern.matches(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_names_round_trip() {
        for text in ["buffered", "os", "interval:250", "sync"] {
            let parsed = parse_durability(text).unwrap();
            assert_eq!(durability_name(parsed).to_string(), text);
        }
        assert_eq!(
            parse_durability("interval(100ms)").unwrap(),
            Durability::Interval { interval_ms: 100 }
        );
        assert!(parse_durability("interval:0").is_err());
        assert!(parse_durability("fsync").is_err());
        let err = parse_durability("interval:999999").unwrap_err();
        assert!(err.to_string().contains("1 to 60000"), "{err}");
    }

    #[test]
    fn zero_bounds_are_refused() {
        let mut config = DurableConfig::default();
        config.retention.max_messages = Some(0);
        assert!(config.validate().is_err());
        config.retention.max_messages = None;
        config.dedupe_window = Duration::from_secs(25 * 3600);
        assert!(config.validate().is_err());
    }
}
