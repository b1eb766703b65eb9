//! Settings of a durable consumer group: how long a member may hold a message, how many
//! deliveries a message gets before it is dead-lettered, and where dead letters go.

use std::time::Duration;

use thiserror::Error;

use crate::streams::name::{MAX_LEVEL_LEN, StreamName};

/// Longest ack wait: a message held longer than a day is not being worked on.
pub const MAX_ACK_WAIT: Duration = Duration::from_secs(24 * 3600);

/// Most unacknowledged messages one member may hold (per stream of its group).
pub const MAX_IN_FLIGHT: u32 = 1 << 20;

/// Longest a nack may delay a redelivery.
pub const MAX_NACK_DELAY: Duration = Duration::from_secs(24 * 3600);

/// Longest group name (a name level).
pub const MAX_GROUP_NAME: usize = MAX_LEVEL_LEN;

/// One group's settings, fixed when the group is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfig {
    /// How long a member may hold a message without acking it before it is redelivered.
    pub ack_wait: Duration,
    /// Deliveries after which an unacknowledged message goes to the dead-letter stream;
    /// 0: redeliver forever.
    pub max_deliveries: u32,
    /// Most unacknowledged messages one member holds (per stream).
    pub max_in_flight: u32,
    /// Where dead letters go; `None`: the stream's name with `.dead` appended to its last
    /// level (`acme/orders/created.dead`).
    pub dead_letter: Option<StreamName>,
}

/// The settings groups get unless they are created with their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupDefaults {
    /// See [`GroupConfig::ack_wait`].
    pub ack_wait: Duration,
    /// See [`GroupConfig::max_deliveries`].
    pub max_deliveries: u32,
    /// See [`GroupConfig::max_in_flight`].
    pub max_in_flight: u32,
    /// How often a group whose state changed writes it to the catalog. A crash loses at
    /// most this much of acknowledgements and positions: those messages are delivered
    /// again (at least once, never lost).
    pub flush_interval: Duration,
}

impl Default for GroupDefaults {
    /// 30 s ack wait, 5 deliveries, 1000 messages in flight per member (JetStream's
    /// `ack_wait` and `max_ack_pending`), state written every 100 ms.
    fn default() -> Self {
        Self {
            ack_wait: Duration::from_secs(30),
            max_deliveries: 5,
            max_in_flight: 1000,
            flush_interval: Duration::from_millis(100),
        }
    }
}

impl GroupDefaults {
    /// A group config with these defaults.
    pub fn config(&self) -> GroupConfig {
        GroupConfig {
            ack_wait: self.ack_wait,
            max_deliveries: self.max_deliveries,
            max_in_flight: self.max_in_flight,
            dead_letter: None,
        }
    }
}

/// A group setting outside what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GroupConfigError {
    /// Ack wait of zero or past [`MAX_ACK_WAIT`].
    #[error("ack wait {ack_wait:?} is out of range; expected 1ms to 24h")]
    AckWait { ack_wait: Duration },
    /// In flight of zero or past [`MAX_IN_FLIGHT`].
    #[error("max in flight {max_in_flight} is out of range; expected 1 to {MAX_IN_FLIGHT}")]
    InFlight { max_in_flight: u32 },
    /// The default dead-letter name does not fit the name grammar.
    #[error(
        "the default dead-letter stream of {stream} would be {stream}.dead, which is not a valid stream name; give the group a dead-letter stream"
    )]
    DeadLetterName { stream: StreamName },
    /// The dead-letter stream is the stream itself.
    #[error("stream {stream} cannot be its own dead-letter stream")]
    DeadLetterLoop { stream: StreamName },
}

impl GroupConfig {
    /// Checks the values.
    pub fn validate(&self) -> Result<(), GroupConfigError> {
        if self.ack_wait.is_zero() || self.ack_wait > MAX_ACK_WAIT {
            return Err(GroupConfigError::AckWait {
                ack_wait: self.ack_wait,
            });
        }
        if self.max_in_flight == 0 || self.max_in_flight > MAX_IN_FLIGHT {
            return Err(GroupConfigError::InFlight {
                max_in_flight: self.max_in_flight,
            });
        }
        Ok(())
    }

    /// The dead-letter stream of a group of `stream`.
    pub fn dead_letter_of(&self, stream: &StreamName) -> Result<StreamName, GroupConfigError> {
        let name = match &self.dead_letter {
            Some(name) => name.clone(),
            None => StreamName::new(&format!("{stream}.dead")).map_err(|_| {
                GroupConfigError::DeadLetterName {
                    stream: stream.clone(),
                }
            })?,
        };
        if &name == stream {
            return Err(GroupConfigError::DeadLetterLoop {
                stream: stream.clone(),
            });
        }
        Ok(name)
    }
}
