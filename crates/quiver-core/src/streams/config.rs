//! Typed configuration of the streams broker. The server fills these from its profile
//! config; constructors check every value against the hard limits below, so a config that
//! exists is valid.
//!
//! Suggested profile values (the defaults are `balanced`):
//!
//! | profile | batch events / bytes / delay | queue events / bytes | why |
//! |---|---|---|---|
//! | `balanced` | 256 / 1 MiB / 0 | 8192 / 8 MiB | a publish call is one delivery; clients batch |
//! | `latency` | 64 / 256 KiB / 0 | 4096 / 4 MiB | nothing waits; small batches keep the head of line short |
//! | `throughput` | 1024 / 4 MiB / 1 ms | 65536 / 64 MiB | single-message publishers still get large shared batches |
//! | `low-memory` | 64 / 256 KiB / 0 | 1024 / 1 MiB | a stalled subscriber holds at most 1 MiB |

use std::time::Duration;

use thiserror::Error;

use crate::streams::durable::DurableConfig;
use crate::streams::policy::SlowPolicy;

/// Most events in one delivery batch: the wire's `MAX_BATCH_COUNT` (a `u16` count); bounds
/// the work and latency of one batch.
pub const MAX_BATCH_EVENTS: u32 = 4096;

/// Most payload bytes a batch collects before it is sealed. A batch exceeds it only when a
/// single message is larger; with [`MAX_MESSAGE_BYTES`] it stays well inside the wire's 8 MiB
/// frame.
pub const MAX_BATCH_BYTES: u64 = 4 << 20;

/// Longest a batch may wait for more messages: past this, batching costs more latency than
/// any deployment wants from a live stream.
pub const MAX_BATCH_DELAY: Duration = Duration::from_secs(1);

/// Largest message (payload plus header keys and values): the wire's `MAX_MESSAGE_LEN`
/// (NATS's default). Bigger blobs belong in the cache or a log.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 20;

/// Most events in one publish call: one wire `PublishBatch`.
pub const MAX_PUBLISH_EVENTS: usize = MAX_BATCH_EVENTS as usize;

/// Most events a subscription queue may be configured to hold.
pub const MAX_QUEUE_EVENTS: u32 = 1 << 20;

/// Most bytes a subscription queue may be configured to hold.
pub const MAX_QUEUE_BYTES: u64 = 1 << 30;

/// Longest a `block` publish may wait for room before it fails.
pub const MAX_BLOCK_TIMEOUT: Duration = Duration::from_secs(60);

const _: () = assert!(MAX_BATCH_BYTES + MAX_MESSAGE_BYTES <= 8 << 20);
const _: () = assert!(MAX_BATCH_EVENTS <= u16::MAX as u32 + 1);

/// A config value outside what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A number outside its range.
    #[error("{field} = {value} is out of range; expected {min} to {max}")]
    OutOfRange {
        field: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
}

fn check(field: &'static str, value: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            field,
            value,
            min,
            max,
        })
    }
}

/// How a stream's messages are grouped into delivery batches. A batch is sealed and
/// delivered when it holds `max_events` events, when adding the next message would pass
/// `max_bytes`, or `max_delay` after its first message, whichever comes first. With a
/// `max_delay` of zero, each publish call is delivered at its end (one batch per call, split
/// only by the count and byte bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchConfig {
    max_events: u32,
    max_bytes: u64,
    max_delay: Duration,
}

impl BatchConfig {
    /// Checks the values against [`MAX_BATCH_EVENTS`], [`MAX_BATCH_BYTES`] and [`MAX_BATCH_DELAY`].
    pub fn new(max_events: u32, max_bytes: u64, max_delay: Duration) -> Result<Self, ConfigError> {
        check(
            "batch.max_events",
            max_events.into(),
            1,
            MAX_BATCH_EVENTS.into(),
        )?;
        check("batch.max_bytes", max_bytes, 1, MAX_BATCH_BYTES)?;
        let delay_us = u64::try_from(max_delay.as_micros()).unwrap_or(u64::MAX);
        check(
            "batch.max_delay_us",
            delay_us,
            0,
            MAX_BATCH_DELAY.as_micros() as u64,
        )?;
        Ok(Self {
            max_events,
            max_bytes,
            max_delay,
        })
    }

    /// Most events per batch.
    pub fn max_events(&self) -> u32 {
        self.max_events
    }

    /// Most payload bytes per batch (a single larger message still makes a batch of one).
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Longest a batch waits for more messages.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }
}

impl Default for BatchConfig {
    /// 256 events, 1 MiB, no delay: a publish call is delivered as soon as it is taken, so
    /// clients that batch (as the SDK's publisher does) pay no added latency.
    fn default() -> Self {
        Self {
            max_events: 256,
            max_bytes: 1 << 20,
            max_delay: Duration::ZERO,
        }
    }
}

/// Bounds of one subscription's queue of delivery batches. The queue is full when the next
/// batch would pass either bound; an empty queue accepts any batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    max_events: u32,
    max_bytes: u64,
}

impl QueueLimits {
    /// Checks the values against [`MAX_QUEUE_EVENTS`] and [`MAX_QUEUE_BYTES`].
    pub fn new(max_events: u32, max_bytes: u64) -> Result<Self, ConfigError> {
        check(
            "queue.max_events",
            max_events.into(),
            1,
            MAX_QUEUE_EVENTS.into(),
        )?;
        check("queue.max_bytes", max_bytes, 1, MAX_QUEUE_BYTES)?;
        Ok(Self {
            max_events,
            max_bytes,
        })
    }

    /// Most events queued.
    pub fn max_events(&self) -> u32 {
        self.max_events
    }

    /// Most payload bytes queued.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }
}

impl Default for QueueLimits {
    /// 8192 events or 8 MiB: about 10 ms of a fast subscriber's traffic at 1 M msgs/s, enough
    /// to ride out a scheduling hiccup without letting one stalled reader hold much memory.
    fn default() -> Self {
        Self {
            max_events: 8192,
            max_bytes: 8 << 20,
        }
    }
}

/// Per-stream settings: batching, subscription queues, the slow-subscriber policy, and
/// whether (and how) the stream is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamConfig {
    /// How messages are grouped into delivery batches.
    pub batch: BatchConfig,
    /// Default queue bounds of the stream's subscriptions.
    pub queue: QueueLimits,
    /// What happens when a subscription's queue is full.
    pub policy: SlowPolicy,
    /// How long a publish may wait for room under [`SlowPolicy::Block`].
    pub block_timeout: BlockTimeout,
    /// `Some`: the stream is durable, stored in a log with these settings (needs a broker
    /// opened on a data directory). `None`: a live stream, nothing stored.
    pub durable: Option<DurableConfig>,
}

/// How long a publish may wait for room under [`SlowPolicy::Block`], at most
/// [`MAX_BLOCK_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTimeout(Duration);

impl BlockTimeout {
    /// Checks `timeout` against [`MAX_BLOCK_TIMEOUT`].
    pub fn new(timeout: Duration) -> Result<Self, ConfigError> {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        check(
            "block_timeout_ms",
            ms,
            0,
            MAX_BLOCK_TIMEOUT.as_millis() as u64,
        )?;
        Ok(Self(timeout))
    }

    /// The timeout.
    pub fn duration(&self) -> Duration {
        self.0
    }
}

impl Default for BlockTimeout {
    /// 5 s: long enough to ride out a subscriber's pause, short enough that a publisher
    /// learns that a reader is stuck.
    fn default() -> Self {
        Self(Duration::from_secs(5))
    }
}

/// Process-wide bounds of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most streams alive at once; a publish to a new stream beyond it fails. Each stream
    /// costs a few hundred bytes plus its pending batch.
    pub max_streams: usize,
    /// Most subscriptions of one exact stream name, and most subscriptions of one wildcard
    /// pattern: bounds the fan-out work of one batch.
    pub max_subscriptions_per_stream: usize,
    /// Most subscriptions in the process: each holds a queue of up to its bounds.
    pub max_subscriptions: usize,
}

impl Default for Limits {
    /// 100 000 streams, 10 000 subscriptions per stream, 100 000 subscriptions.
    fn default() -> Self {
        Self {
            max_streams: 100_000,
            max_subscriptions_per_stream: 10_000,
            max_subscriptions: 100_000,
        }
    }
}

/// Bounds on bytes in flight: message bytes published and not yet released by every
/// subscription (queued, or held by a transport that is writing them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InflightConfig {
    /// Bound of one connection's budget ([`crate::streams::Budget`]).
    pub connection_bytes: u64,
    /// Bound of the process-wide budget.
    pub process_bytes: u64,
    /// How long a publish may wait for budget before it fails; zero fails at once.
    pub wait: Duration,
}

impl Default for InflightConfig {
    /// 64 MiB per connection, 1 GiB per process, wait up to 5 s.
    fn default() -> Self {
        Self {
            connection_bytes: 64 << 20,
            process_bytes: 1 << 30,
            wait: Duration::from_secs(5),
        }
    }
}

/// Everything the streams broker is configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BrokerConfig {
    /// Registry bounds.
    pub limits: Limits,
    /// Settings of streams created by a publish or subscribe.
    pub default_stream: StreamConfig,
    /// In-flight byte budgets.
    pub inflight: InflightConfig,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_ranges() {
        assert!(BatchConfig::new(64, 1 << 16, Duration::from_millis(1)).is_ok());
        let err = BatchConfig::new(0, 1, Duration::ZERO).unwrap_err();
        assert_eq!(
            err.to_string(),
            "batch.max_events = 0 is out of range; expected 1 to 4096"
        );
        assert!(BatchConfig::new(1, MAX_BATCH_BYTES + 1, Duration::ZERO).is_err());
        assert!(BatchConfig::new(1, 1, Duration::from_secs(2)).is_err());
        assert!(QueueLimits::new(1, 0).is_err());
        assert!(BlockTimeout::new(Duration::from_secs(61)).is_err());
    }
}
