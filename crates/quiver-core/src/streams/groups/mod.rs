//! Durable consumer groups: named groups on durable streams whose members share the
//! stream's messages with explicit acknowledgements.
//!
//! - A member joins a group on one durable stream, or on every durable stream a pattern
//!   matches (streams created later included); the group is created on first use, with the
//!   settings the join gives (or the broker's defaults) and a start position.
//! - The group's dispatcher gives each member messages while it holds fewer than its
//!   `max_in_flight` unacknowledged ones; each message goes to one member.
//! - A member acks messages (done) or nacks them (give back, optionally after a delay). A
//!   message not acked within `ack_wait` is delivered again, possibly to another member;
//!   the late ack of the first member is then refused. A member that leaves gives back
//!   what it held at once.
//! - A message delivered `max_deliveries` times without an ack is written to the group's
//!   dead-letter stream, with headers naming its stream, offset, group and delivery count.
//! - The group's position, pending messages and delivery counts are written to the catalog
//!   at most every `flush_interval` while they change, and when the last member leaves: a
//!   crash loses at most that interval of acks, whose messages are then delivered again
//!   (at least once, never lost).
//!
//! Queue groups on live streams (no acks, nothing stored) are another thing: see
//! [`SubscribeOptions::group`](crate::streams::SubscribeOptions).

mod config;
pub(crate) mod group;
mod member;
#[cfg(test)]
mod model;
pub(crate) mod state;

use std::time::Duration;

use bytes::Bytes;
use thiserror::Error;

pub use config::{
    GroupConfig, GroupConfigError, GroupDefaults, MAX_ACK_WAIT, MAX_GROUP_NAME, MAX_IN_FLIGHT,
    MAX_NACK_DELAY,
};
pub use group::{DEAD_GROUP_HEADER, DEAD_OFFSET_HEADER, DEAD_STREAM_HEADER, DELIVERY_COUNT_HEADER};
pub use member::{GroupAcker, GroupMember, JoinOptions};
pub(crate) use member::{
    MemberShared, group_of, info, join_stream, live_members, save_now, start_offset,
};

use crate::streams::batch::{Header, content_bytes};
use crate::streams::name::StreamName;
use crate::streams::subscriber::EndReason;

/// One message as a group member receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupEvent {
    /// Its offset in the stream.
    pub offset: u64,
    /// How many times it was delivered, this time included (1 the first time).
    pub deliveries: u32,
    /// When it was published, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// The payload.
    pub payload: Bytes,
    /// The headers.
    pub headers: Vec<Header>,
}

impl GroupEvent {
    /// Payload and header bytes.
    pub fn size_bytes(&self) -> u64 {
        content_bytes(&self.payload, &self.headers)
    }
}

/// Messages of one stream for one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupBatch {
    /// The stream (a member of a pattern receives from many).
    pub stream: StreamName,
    /// The messages, redeliveries first, each in offset order.
    pub events: Vec<GroupEvent>,
}

/// What a member receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupDelivery {
    /// Messages to work on and ack.
    Batch(GroupBatch),
    /// The membership is over (the stream or group was deleted, the broker stops).
    Ended(EndReason),
}

/// A member as [`GroupInfo`] shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberInfo {
    /// The name it joined with.
    pub name: String,
    /// Messages it holds (delivered, not acked).
    pub pending: u32,
    /// Messages delivered to it since it joined.
    pub delivered: u64,
    /// Messages it acked since it joined.
    pub acked: u64,
}

/// A group's settings, position and counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    /// The stream.
    pub stream: StreamName,
    /// The group's name.
    pub name: String,
    /// Its settings.
    pub config: GroupConfig,
    /// Where its dead letters go.
    pub dead_letter: StreamName,
    /// The next offset never delivered.
    pub next: u64,
    /// Every offset below is acknowledged (or dead-lettered).
    pub floor: u64,
    /// The stream's end (offset after its last stored message).
    pub end: u64,
    /// Delivered, not acknowledged.
    pub pending: u64,
    /// Of those, ready to be delivered again (lease ran out, nacked, holder left).
    pub ready: u64,
    /// Not yet delivered: `end - next`.
    pub undelivered: u64,
    /// Not yet acknowledged: `undelivered + pending`.
    pub lag: u64,
    /// Messages acknowledged (since the group was created).
    pub acked: u64,
    /// Deliveries after the first.
    pub redelivered: u64,
    /// Messages written to the dead-letter stream.
    pub dead_lettered: u64,
    /// Messages retention deleted before the group acknowledged them.
    pub lost_to_retention: u64,
    /// Its members now.
    pub members: Vec<MemberInfo>,
}

/// A group operation the broker refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GroupError {
    /// A group name outside the grammar.
    #[error(
        "group name {name:?} is invalid: use 1-64 bytes of A-Z a-z 0-9 _ - . (a stream name level)"
    )]
    InvalidName { name: String },
    /// The stream does not exist.
    #[error("stream {stream} does not exist")]
    NoStream { stream: StreamName },
    /// Consumer groups need a durable stream.
    #[error(
        "stream {stream} is not durable; consumer groups need a stored stream (create it durable, or use a queue group for live delivery)"
    )]
    NotDurable { stream: StreamName },
    /// The group does not exist.
    #[error("stream {stream} has no group {group}")]
    NoGroup { stream: StreamName, group: String },
    /// A member acked or nacked an offset it does not hold.
    #[error(
        "offset {offset} of {stream} is not held by this member of group {group}: it was never delivered to it, was already acked, or its ack wait ran out and it is being delivered again"
    )]
    NotHeld {
        stream: StreamName,
        group: String,
        offset: u64,
    },
    /// A member acked or nacked for a stream it is not a member on.
    #[error("this member of group {group} does not receive stream {stream}")]
    NotMember { stream: StreamName, group: String },
    /// A nack delay past [`MAX_NACK_DELAY`].
    #[error("nack delay {delay:?} is longer than the limit of 24h")]
    NackDelay { delay: Duration },
    /// A reset or start past the end of the stream.
    #[error("offset {offset} is past the end of {stream} ({end}); use {end} or earlier")]
    PastEnd {
        stream: StreamName,
        offset: u64,
        end: u64,
    },
    /// A member's own max in flight of zero or past [`MAX_IN_FLIGHT`].
    #[error(
        "a member's max in flight {max_in_flight} is out of range; expected 1 to {MAX_IN_FLIGHT}"
    )]
    MemberInFlight { max_in_flight: u32 },
    /// A group setting outside what is allowed.
    #[error("group {group} of {stream}: {source}")]
    Config {
        stream: StreamName,
        group: String,
        source: GroupConfigError,
    },
    /// The group's state could not be written.
    #[error("group {group} of {stream}: {message}")]
    Storage {
        stream: StreamName,
        group: String,
        message: String,
    },
}

/// Checks a group name (a stream name level: 1-64 bytes of `A-Z a-z 0-9 _ - .`).
pub fn validate_group_name(name: &str) -> Result<(), GroupError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_GROUP_NAME
        && name.bytes().all(crate::streams::name::is_level_byte);
    if ok {
        Ok(())
    } else {
        Err(GroupError::InvalidName {
            name: name.to_owned(),
        })
    }
}
