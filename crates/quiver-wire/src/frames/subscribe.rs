//! Subscriptions: Subscribe/Subscribed, Unsubscribe/Unsubscribed, and the pushed Lag and
//! SubscriptionEnded notices.

use bytes::{BufMut, BytesMut};

use crate::error_code::ErrorCode;
use crate::frames::payload::{
    FramePayload, put_name, read_pattern, read_stream, read_subscription_id, subscription_id_frame,
};
use crate::header::{FLAG_RESUME, FrameType};
use crate::limits::{MAX_BATCH_COUNT, MAX_ERROR_TEXT_LEN, MAX_LEVEL_LEN, MAX_RESUME_STREAMS};
use crate::name::{StreamName, StreamPattern, validate_group};
use crate::reader::{DecodeError, Reader, limit};
use crate::writer::{self, EncodeError};

/// Where a subscription starts reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPosition {
    /// Only messages published from now on.
    Latest,
    /// From the oldest retained message (durable streams).
    Earliest,
    /// From this offset (durable streams).
    Offset(u64),
    /// From the first message at or after this time, ms since the Unix epoch (durable streams).
    TimestampMs(u64),
}

impl StartPosition {
    pub(crate) fn encode(self, dst: &mut BytesMut) {
        let (kind, value) = match self {
            Self::Latest => (0, 0),
            Self::Earliest => (1, 0),
            Self::Offset(offset) => (2, offset),
            Self::TimestampMs(timestamp_ms) => (3, timestamp_ms),
        };
        dst.put_u8(kind);
        dst.put_u64_le(value);
    }

    pub(crate) fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        let kind = reader.u8("start kind")?;
        let value = reader.u64("start value")?;
        let position = match kind {
            0 => Self::Latest,
            1 => Self::Earliest,
            2 => return Ok(Self::Offset(value)),
            3 => return Ok(Self::TimestampMs(value)),
            _ => {
                return Err(DecodeError::UnknownValue {
                    field: "start kind",
                    value: u64::from(kind),
                    allowed: "0 latest, 1 earliest, 2 offset, 3 timestamp",
                });
            }
        };
        if value != 0 {
            return Err(DecodeError::NonCanonical {
                field: "start value",
                reason: "must be 0 for latest and earliest",
            });
        }
        Ok(position)
    }
}

/// Subscribe to the streams a pattern selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscribe {
    /// Which streams.
    pub pattern: StreamPattern,
    /// Where to start.
    pub start: StartPosition,
    /// Queue group whose members share the messages; `None` for an ordinary subscriber.
    pub group: Option<String>,
    /// Events this subscription may have queued; 0 for the stream's default.
    pub queue_capacity: u32,
    /// Most events per EventBatch, at most [`MAX_BATCH_COUNT`]; 0 for the stream's batch
    /// size (which shares the stream's encoding with every other subscriber).
    pub max_batch_events: u16,
    /// Durable streams to resume at an offset of their own, overriding `start` for them
    /// (at most [`MAX_RESUME_STREAMS`]; flag `RESUME`): what a client that reconnects sends
    /// to go on from the message after the last one it received.
    pub resume: Vec<(StreamName, u64)>,
}

impl FramePayload for Subscribe {
    const TYPE: FrameType = FrameType::Subscribe;
    const KNOWN_FLAGS: u16 = FLAG_RESUME;

    fn flags(&self) -> u16 {
        if self.resume.is_empty() {
            0
        } else {
            FLAG_RESUME
        }
    }

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::limit("resume count", self.resume.len(), MAX_RESUME_STREAMS)?;
        writer::limit(
            "max batch events",
            usize::from(self.max_batch_events),
            MAX_BATCH_COUNT,
        )?;
        let group = self.group.as_deref().unwrap_or_default();
        if let Some(group) = &self.group {
            validate_group(group).map_err(EncodeError::InvalidGroup)?;
        }
        put_name(dst, self.pattern.as_bytes());
        self.start.encode(dst);
        writer::put_bytes8(dst, "group", group.as_bytes(), MAX_LEVEL_LEN)?;
        dst.put_u32_le(self.queue_capacity);
        dst.put_u16_le(self.max_batch_events);
        if !self.resume.is_empty() {
            dst.put_u16_le(self.resume.len() as u16);
            for (stream, offset) in &self.resume {
                put_name(dst, stream.as_bytes());
                dst.put_u64_le(*offset);
            }
        }
        Ok(())
    }

    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let pattern = read_pattern(reader, "pattern")?;
        let start = StartPosition::read(reader)?;
        let group = reader.str8("group", MAX_LEVEL_LEN)?;
        let group = if group.is_empty() {
            None
        } else {
            validate_group(&group).map_err(|source| DecodeError::InvalidName {
                field: "group",
                source,
            })?;
            Some(group)
        };
        let queue_capacity = reader.u32("queue capacity")?;
        let max_batch_events = reader.u16("max batch events")?;
        limit(
            "max batch events",
            usize::from(max_batch_events),
            MAX_BATCH_COUNT,
        )?;
        let mut resume = Vec::new();
        if flags & FLAG_RESUME != 0 {
            let count = usize::from(reader.u16("resume count")?);
            if count == 0 {
                return Err(DecodeError::NonCanonical {
                    field: "resume count",
                    reason: "the RESUME flag is set exactly when at least one stream resumes",
                });
            }
            limit("resume count", count, MAX_RESUME_STREAMS)?;
            resume.reserve(count.min(reader.remaining() / 12));
            for _ in 0..count {
                let stream = read_stream(reader, "resume stream")?;
                resume.push((stream, reader.u64("resume offset")?));
            }
        }
        Ok(Self {
            pattern,
            start,
            group,
            queue_capacity,
            max_batch_events,
            resume,
        })
    }
}

/// A group name: a non-empty name level.
pub(crate) fn read_group_name(
    reader: &mut Reader,
    field: &'static str,
) -> Result<String, DecodeError> {
    let group = reader.str8(field, MAX_LEVEL_LEN)?;
    validate_group(&group).map_err(|source| DecodeError::InvalidName { field, source })?;
    Ok(group)
}

subscription_id_frame! {
    /// The answer to Subscribe: the connection-local id of the new subscription.
    Subscribed
}

subscription_id_frame! {
    /// Ends a subscription.
    Unsubscribe
}

subscription_id_frame! {
    /// The answer to Unsubscribe; no frame for the subscription follows it.
    Unsubscribed
}

/// Pushed before a subscription's next EventBatch when it lost messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lag {
    /// The subscription.
    pub subscription_id: u32,
    /// Messages it did not receive since the previous Lag.
    pub missed: u64,
}

impl FramePayload for Lag {
    const TYPE: FrameType = FrameType::Lag;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_subscription_id(dst, self.subscription_id)?;
        dst.put_u64_le(self.missed);
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            subscription_id: read_subscription_id(reader)?,
            missed: reader.u64("missed")?,
        })
    }
}

/// Pushed when the broker ends a subscription (slow subscriber, stream deleted, shutdown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionEnded {
    /// The subscription.
    pub subscription_id: u32,
    /// Why, e.g. [`ErrorCode::SLOW_CONSUMER`].
    pub code: ErrorCode,
    /// A sentence for humans, at most [`MAX_ERROR_TEXT_LEN`] bytes.
    pub message: String,
}

impl FramePayload for SubscriptionEnded {
    const TYPE: FrameType = FrameType::SubscriptionEnded;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_subscription_id(dst, self.subscription_id)?;
        dst.put_u16_le(self.code.0);
        writer::put_bytes16(dst, "message", self.message.as_bytes(), MAX_ERROR_TEXT_LEN)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            subscription_id: read_subscription_id(reader)?,
            code: ErrorCode(reader.u16("code")?),
            message: reader.str16("message", MAX_ERROR_TEXT_LEN)?,
        })
    }
}
