//! Stream administration: create, describe, delete and list streams, and the StreamInfo
//! that answers them. Needs the `DURABLE` capability.

use bytes::{BufMut, BytesMut};

use crate::frames::payload::{FramePayload, empty_frame, put_name, read_stream};
use crate::frames::subscribe::read_group_name;
use crate::header::FrameType;
use crate::limits::{MAX_GROUPS_LISTED, MAX_LEVEL_LEN, MAX_LIST_STREAMS, MAX_NAME_LEN};
use crate::name::{StreamName, validate_group};
use crate::reader::{DecodeError, Reader, limit};
use crate::writer::{self, EncodeError};

/// Longest `interval:MS` fsync interval a stream may ask for.
pub const MAX_INTERVAL_MS: u32 = 60_000;

/// How a stream stores its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Not stored: a live stream.
    Live,
    /// Stored; an append returns after the copy into the server's buffer.
    Buffered,
    /// Stored; an append returns after `write(2)`.
    Os,
    /// Stored; `write(2)`, and an fsync every `interval_ms` (1 to [`MAX_INTERVAL_MS`]).
    Interval {
        /// The fsync interval.
        interval_ms: u32,
    },
    /// Stored; an append returns after the fsync that covers it.
    Sync,
}

impl Storage {
    fn encode(self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        let (kind, interval) = match self {
            Self::Live => (0, 0),
            Self::Buffered => (1, 0),
            Self::Os => (2, 0),
            Self::Interval { interval_ms } if (1..=MAX_INTERVAL_MS).contains(&interval_ms) => {
                (3, interval_ms)
            }
            Self::Interval { .. } => {
                return Err(EncodeError::Invalid {
                    field: "interval ms",
                    reason: "1 to 60000",
                });
            }
            Self::Sync => (4, 0),
        };
        dst.put_u8(kind);
        dst.put_u32_le(interval);
        Ok(())
    }

    fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        let kind = reader.u8("durability")?;
        let interval_ms = reader.u32("interval ms")?;
        let storage = match kind {
            0 => Self::Live,
            1 => Self::Buffered,
            2 => Self::Os,
            3 if (1..=MAX_INTERVAL_MS).contains(&interval_ms) => {
                return Ok(Self::Interval { interval_ms });
            }
            3 => {
                return Err(DecodeError::OutOfRange {
                    field: "interval ms",
                    value: u64::from(interval_ms),
                    allowed: "1 to 60000",
                });
            }
            4 => Self::Sync,
            _ => {
                return Err(DecodeError::UnknownValue {
                    field: "durability",
                    value: u64::from(kind),
                    allowed: "0 live, 1 buffered, 2 os, 3 interval, 4 sync",
                });
            }
        };
        if interval_ms != 0 {
            return Err(DecodeError::NonCanonical {
                field: "interval ms",
                reason: "must be 0 unless the durability is interval",
            });
        }
        Ok(storage)
    }
}

/// What a stream does when a subscription's queue is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Policy {
    /// The server's configured default (in a CreateStream only).
    #[default]
    Default = 0,
    /// Drop the new batch for that subscription.
    DropNew = 1,
    /// Evict the oldest queued batches.
    DropOld = 2,
    /// Publishers wait for room.
    Block = 3,
    /// End the subscription.
    Disconnect = 4,
}

impl Policy {
    fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(match reader.u8("policy")? {
            0 => Self::Default,
            1 => Self::DropNew,
            2 => Self::DropOld,
            3 => Self::Block,
            4 => Self::Disconnect,
            value => {
                return Err(DecodeError::UnknownValue {
                    field: "policy",
                    value: u64::from(value),
                    allowed: "0 default, 1 drop_new, 2 drop_old, 3 block, 4 disconnect",
                });
            }
        })
    }
}

/// A stream's storage, retention, de-duplication and slow-subscriber settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamSettings {
    /// How messages are stored.
    pub storage: Storage,
    /// Delete messages older than this (ms); 0: no bound.
    pub max_age_ms: u64,
    /// Keep about this many bytes; 0: no bound.
    pub max_bytes: u64,
    /// Keep at most this many newest messages; 0: no bound.
    pub max_messages: u64,
    /// Keep what a consumer group has not acknowledged, whatever the bounds say.
    pub keep_unacked: bool,
    /// Remember message ids this long (ms) to drop retried publishes; 0: off.
    pub dedupe_window_ms: u64,
    /// The slow-subscriber policy.
    pub policy: Policy,
}

const FLAG_KEEP_UNACKED: u8 = 0x01;

impl StreamSettings {
    fn encode(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        self.storage.encode(dst)?;
        dst.put_u64_le(self.max_age_ms);
        dst.put_u64_le(self.max_bytes);
        dst.put_u64_le(self.max_messages);
        dst.put_u8(if self.keep_unacked {
            FLAG_KEEP_UNACKED
        } else {
            0
        });
        dst.put_u64_le(self.dedupe_window_ms);
        dst.put_u8(self.policy as u8);
        Ok(())
    }

    fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        let storage = Storage::read(reader)?;
        let max_age_ms = reader.u64("max age ms")?;
        let max_bytes = reader.u64("max bytes")?;
        let max_messages = reader.u64("max messages")?;
        let flags = reader.u8("retention flags")?;
        if flags & !FLAG_KEEP_UNACKED != 0 {
            return Err(DecodeError::UnknownValue {
                field: "retention flags",
                value: u64::from(flags),
                allowed: "bit 0 keep_unacked; other bits 0",
            });
        }
        Ok(Self {
            storage,
            max_age_ms,
            max_bytes,
            max_messages,
            keep_unacked: flags & FLAG_KEEP_UNACKED != 0,
            dedupe_window_ms: reader.u64("dedupe window ms")?,
            policy: Policy::read(reader)?,
        })
    }
}

/// Create a stream with explicit settings. Answered by StreamInfo, or Error
/// (`ALREADY_EXISTS`, `INVALID_ARGUMENT`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateStream {
    /// The stream.
    pub stream: StreamName,
    /// Its settings.
    pub settings: StreamSettings,
}

impl FramePayload for CreateStream {
    const TYPE: FrameType = FrameType::CreateStream;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        put_name(dst, self.stream.as_bytes());
        self.settings.encode(dst)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            stream: read_stream(reader, "stream")?,
            settings: StreamSettings::read(reader)?,
        })
    }
}

/// A stream's settings and state (answers CreateStream and DescribeStream, and is an
/// entry of StreamList).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamInfo {
    /// The stream.
    pub stream: StreamName,
    /// When it was created, ms since the Unix epoch.
    pub created_ms: u64,
    /// Its settings (the policy as applied, never `Default`).
    pub settings: StreamSettings,
    /// The first stored offset (0 for a live stream).
    pub first_offset: u64,
    /// The next offset (sequence number) a message gets.
    pub next_offset: u64,
    /// Bytes stored (0 for a live stream).
    pub stored_bytes: u64,
    /// Subscriptions attached now.
    pub subscribers: u32,
    /// Messages taken since the server started.
    pub published: u64,
    /// Its consumer groups (at most [`MAX_GROUPS_LISTED`] names).
    pub groups: Vec<String>,
}

impl StreamInfo {
    fn encode(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::limit("group count", self.groups.len(), MAX_GROUPS_LISTED)?;
        put_name(dst, self.stream.as_bytes());
        dst.put_u64_le(self.created_ms);
        self.settings.encode(dst)?;
        dst.put_u64_le(self.first_offset);
        dst.put_u64_le(self.next_offset);
        dst.put_u64_le(self.stored_bytes);
        dst.put_u32_le(self.subscribers);
        dst.put_u64_le(self.published);
        dst.put_u16_le(self.groups.len() as u16);
        for group in &self.groups {
            validate_group(group).map_err(EncodeError::InvalidGroup)?;
            writer::put_bytes8(dst, "group", group.as_bytes(), MAX_LEVEL_LEN)?;
        }
        Ok(())
    }

    fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        let stream = read_stream(reader, "stream")?;
        let created_ms = reader.u64("created ms")?;
        let settings = StreamSettings::read(reader)?;
        let first_offset = reader.u64("first offset")?;
        let next_offset = reader.u64("next offset")?;
        let stored_bytes = reader.u64("stored bytes")?;
        let subscribers = reader.u32("subscribers")?;
        let published = reader.u64("published")?;
        let count = usize::from(reader.u16("group count")?);
        limit("group count", count, MAX_GROUPS_LISTED)?;
        let mut groups = Vec::with_capacity(count.min(reader.remaining()));
        for _ in 0..count {
            groups.push(read_group_name(reader, "group")?);
        }
        Ok(Self {
            stream,
            created_ms,
            settings,
            first_offset,
            next_offset,
            stored_bytes,
            subscribers,
            published,
            groups,
        })
    }
}

impl FramePayload for StreamInfo {
    const TYPE: FrameType = FrameType::StreamInfo;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        self.encode(dst)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Self::read(reader)
    }
}

/// A request naming one stream.
macro_rules! stream_request {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            /// The stream.
            pub stream: StreamName,
        }

        impl FramePayload for $name {
            const TYPE: FrameType = FrameType::$name;

            fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
                put_name(dst, self.stream.as_bytes());
                Ok(())
            }

            fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
                Ok(Self {
                    stream: read_stream(reader, "stream")?,
                })
            }
        }
    };
}

stream_request! {
    /// Describe a stream; answered by StreamInfo or Error `NOT_FOUND`.
    DescribeStream
}

stream_request! {
    /// Delete a stream, its stored messages and its groups; answered by StreamDeleted.
    DeleteStream
}

empty_frame! {
    /// The answer to DeleteStream.
    StreamDeleted
}

/// List streams in name order, a page at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListStreams {
    /// Start after this name; `None`: from the first.
    pub after: Option<StreamName>,
    /// Most streams in the answer (1 to [`MAX_LIST_STREAMS`]).
    pub limit: u16,
}

impl FramePayload for ListStreams {
    const TYPE: FrameType = FrameType::ListStreams;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        if self.limit == 0 {
            return Err(EncodeError::Empty { field: "limit" });
        }
        writer::limit("limit", usize::from(self.limit), MAX_LIST_STREAMS)?;
        let after = self.after.as_ref().map_or(&[][..], |s| s.as_bytes());
        put_name(dst, after);
        dst.put_u16_le(self.limit);
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let raw = reader.bytes8("after", MAX_NAME_LEN)?;
        let after = if raw.is_empty() {
            None
        } else {
            Some(
                StreamName::from_bytes(raw).map_err(|source| DecodeError::InvalidName {
                    field: "after",
                    source,
                })?,
            )
        };
        let limit_value = reader.u16("limit")?;
        if limit_value == 0 {
            return Err(DecodeError::EmptyCount { field: "limit" });
        }
        limit("limit", usize::from(limit_value), MAX_LIST_STREAMS)?;
        Ok(Self {
            after,
            limit: limit_value,
        })
    }
}

/// A page of streams answering ListStreams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamList {
    /// The streams, in name order.
    pub streams: Vec<StreamInfo>,
    /// Whether more streams follow the last one (ask again with it as `after`).
    pub more: bool,
}

impl FramePayload for StreamList {
    const TYPE: FrameType = FrameType::StreamList;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::limit("stream count", self.streams.len(), MAX_LIST_STREAMS)?;
        dst.put_u16_le(self.streams.len() as u16);
        for info in &self.streams {
            info.encode(dst)?;
        }
        dst.put_u8(u8::from(self.more));
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let count = usize::from(reader.u16("stream count")?);
        limit("stream count", count, MAX_LIST_STREAMS)?;
        let mut streams = Vec::with_capacity(count.min(reader.remaining() / 64));
        for _ in 0..count {
            streams.push(StreamInfo::read(reader)?);
        }
        let more = match reader.u8("more")? {
            0 => false,
            1 => true,
            value => {
                return Err(DecodeError::UnknownValue {
                    field: "more",
                    value: u64::from(value),
                    allowed: "0 or 1",
                });
            }
        };
        Ok(Self { streams, more })
    }
}
