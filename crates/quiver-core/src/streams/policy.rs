//! The slow-subscriber policy: what a stream does when a subscription's queue is full.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// What happens to a delivery batch that does not fit a subscription's queue.
///
/// The policy belongs to the stream and applies whenever one of its batches meets a full
/// queue. Whatever the policy, a subscription that loses events is told exactly how many,
/// by a [`Delivery::Lag`](crate::streams::Delivery::Lag) before its next batch.
///
/// A queue always accepts a batch when it is empty, so a batch larger than the queue's
/// bounds is delivered whole rather than dropped forever.
///
/// A subscription whose pattern matches streams with different policies gets each stream's
/// policy for that stream's batches; `drop_old` then evicts the oldest queued batches
/// whatever their stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SlowPolicy {
    /// Drop the new batch for that subscription (it keeps what it has queued, the oldest).
    DropNew,
    /// Evict the oldest queued batches, whole, until the new one fits (keeps the newest).
    #[default]
    DropOld,
    /// Publishers wait until every subscription of the stream has room (backpressure). The
    /// wait is bounded by the stream's `block_timeout`; past it the publish fails with
    /// [`PublishError::Blocked`](crate::streams::PublishError::Blocked) and nothing of it is
    /// taken. Nothing is ever dropped.
    Block,
    /// End the subscription that is too slow ([`EndReason::SlowConsumer`](crate::streams::EndReason));
    /// the stream's other subscriptions and the subscription's connection are unaffected.
    Disconnect,
}

impl SlowPolicy {
    /// Every policy, in the order of the config names.
    pub const ALL: [SlowPolicy; 4] = [Self::DropNew, Self::DropOld, Self::Block, Self::Disconnect];

    /// The configuration name: `drop_new`, `drop_old`, `block` or `disconnect`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DropNew => "drop_new",
            Self::DropOld => "drop_old",
            Self::Block => "block",
            Self::Disconnect => "disconnect",
        }
    }

    /// Index into per-policy counters.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for SlowPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A policy name that is not one of `drop_new`, `drop_old`, `block`, `disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown slow-subscriber policy {0:?}; expected drop_new, drop_old, block or disconnect")]
#[non_exhaustive]
pub struct UnknownPolicy(pub String);

impl FromStr for SlowPolicy {
    type Err = UnknownPolicy;

    fn from_str(text: &str) -> Result<Self, UnknownPolicy> {
        Self::ALL
            .into_iter()
            .find(|policy| policy.as_str() == text)
            .ok_or_else(|| UnknownPolicy(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for policy in SlowPolicy::ALL {
            assert_eq!(policy.as_str().parse::<SlowPolicy>(), Ok(policy));
        }
        let err = "drop".parse::<SlowPolicy>().unwrap_err();
        assert!(err.to_string().contains("\"drop\""));
    }
}
