//! Publishing: Publish, PublishBatch and their PublishAck.

use bytes::{BufMut, Bytes, BytesMut};

use crate::frames::payload::{FramePayload, put_name, read_stream};
use crate::header::{FLAG_HEADERS, FrameType};
use crate::headers::Headers;
use crate::limits::{MAX_BATCH_COUNT, MAX_MESSAGE_LEN};
use crate::name::StreamName;
use crate::reader::{DecodeError, Reader, limit};
use crate::writer::{self, EncodeError};

/// What a PublishAck promises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AckMode {
    /// No reply on success.
    None = 0,
    /// The broker took the message into the stream's queue.
    Accepted = 1,
    /// The message is in the stream's log with the stream's durability.
    Committed = 2,
}

impl AckMode {
    fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        match reader.u8("ack")? {
            0 => Ok(Self::None),
            1 => Ok(Self::Accepted),
            2 => Ok(Self::Committed),
            value => Err(DecodeError::UnknownValue {
                field: "ack",
                value: u64::from(value),
                allowed: "0 none, 1 accepted, 2 committed",
            }),
        }
    }
}

/// One message to a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publish {
    /// The stream (no wildcard).
    pub stream: StreamName,
    /// What the reply promises.
    pub ack: AckMode,
    /// Headers; empty for none.
    pub headers: Headers,
    /// The message, at most [`MAX_MESSAGE_LEN`] bytes.
    pub payload: Bytes,
}

impl FramePayload for Publish {
    const TYPE: FrameType = FrameType::Publish;
    const KNOWN_FLAGS: u16 = FLAG_HEADERS;

    fn flags(&self) -> u16 {
        if self.headers.is_empty() {
            0
        } else {
            FLAG_HEADERS
        }
    }

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::limit("payload", self.payload.len(), MAX_MESSAGE_LEN)?;
        put_name(dst, self.stream.as_bytes());
        dst.put_u8(self.ack as u8);
        if !self.headers.is_empty() {
            self.headers.write(dst);
        }
        writer::put_bytes32(dst, "payload", &self.payload, MAX_MESSAGE_LEN)
    }

    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let stream = read_stream(reader, "stream")?;
        let ack = AckMode::read(reader)?;
        let headers = if flags & FLAG_HEADERS != 0 {
            let headers = Headers::read(reader)?;
            if headers.is_empty() {
                return Err(DecodeError::NonCanonical {
                    field: "headers",
                    reason: "the HEADERS flag is set but the header count is 0",
                });
            }
            headers
        } else {
            Headers::new()
        };
        let payload = reader.bytes32("payload", MAX_MESSAGE_LEN)?;
        Ok(Self {
            stream,
            ack,
            headers,
            payload,
        })
    }
}

/// One message of a batch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    /// Headers; empty for none.
    pub headers: Headers,
    /// The message, at most [`MAX_MESSAGE_LEN`] bytes.
    pub payload: Bytes,
}

/// Many messages to one stream, sequenced as a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublishBatch {
    /// The stream (no wildcard).
    pub stream: StreamName,
    /// What the reply promises, for the whole batch.
    pub ack: AckMode,
    /// 1 to [`MAX_BATCH_COUNT`] messages.
    pub messages: Vec<Message>,
}

impl FramePayload for PublishBatch {
    const TYPE: FrameType = FrameType::PublishBatch;
    const KNOWN_FLAGS: u16 = FLAG_HEADERS;

    fn flags(&self) -> u16 {
        if self.messages.iter().any(|m| !m.headers.is_empty()) {
            FLAG_HEADERS
        } else {
            0
        }
    }

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        if self.messages.is_empty() {
            return Err(EncodeError::Empty { field: "messages" });
        }
        writer::limit("message count", self.messages.len(), MAX_BATCH_COUNT)?;
        let with_headers = self.flags() & FLAG_HEADERS != 0;
        put_name(dst, self.stream.as_bytes());
        dst.put_u8(self.ack as u8);
        dst.put_u16_le(self.messages.len() as u16);
        for message in &self.messages {
            if with_headers {
                message.headers.write(dst);
            }
            writer::put_bytes32(dst, "payload", &message.payload, MAX_MESSAGE_LEN)?;
        }
        Ok(())
    }

    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let stream = read_stream(reader, "stream")?;
        let ack = AckMode::read(reader)?;
        let count = read_batch_count(reader, "message count")?;
        let with_headers = flags & FLAG_HEADERS != 0;
        // Each message takes at least 4 bytes, so `count` is bounded by the payload before
        // the vector is allocated.
        let min_len = count * if with_headers { 5 } else { 4 };
        if min_len > reader.remaining() {
            return Err(DecodeError::Truncated {
                field: "messages",
                needed: min_len,
                remaining: reader.remaining(),
            });
        }
        let mut messages = Vec::with_capacity(count);
        for _ in 0..count {
            let headers = if with_headers {
                Headers::read(reader)?
            } else {
                Headers::new()
            };
            let payload = reader.bytes32("payload", MAX_MESSAGE_LEN)?;
            messages.push(Message { headers, payload });
        }
        if with_headers && messages.iter().all(|m| m.headers.is_empty()) {
            return Err(no_headers_in_batch());
        }
        Ok(Self {
            stream,
            ack,
            messages,
        })
    }
}

pub(crate) fn read_batch_count(
    reader: &mut Reader,
    field: &'static str,
) -> Result<usize, DecodeError> {
    let count = usize::from(reader.u16(field)?);
    if count == 0 {
        return Err(DecodeError::EmptyCount { field });
    }
    limit(field, count, MAX_BATCH_COUNT)?;
    Ok(count)
}

pub(crate) fn no_headers_in_batch() -> DecodeError {
    DecodeError::NonCanonical {
        field: "headers",
        reason: "the HEADERS flag is set but no item has a header",
    }
}

/// The answer to Publish and PublishBatch (ack `accepted` or `committed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishAck {
    /// Sequence (offset, for a durable stream) of the first message.
    pub first_sequence: u64,
    /// Messages acknowledged.
    pub count: u32,
}

impl FramePayload for PublishAck {
    const TYPE: FrameType = FrameType::PublishAck;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        dst.put_u64_le(self.first_sequence);
        dst.put_u32_le(self.count);
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            first_sequence: reader.u64("first sequence")?,
            count: reader.u32("count")?,
        })
    }
}
