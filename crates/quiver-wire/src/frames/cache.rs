//! Cache frames: get, set with TTL, delete, and their replies.

use bytes::{BufMut, Bytes, BytesMut};

use crate::frames::payload::{FramePayload, empty_frame};
use crate::header::FrameType;
use crate::limits::{MAX_CACHE_KEY_LEN, MAX_CACHE_VALUE_LEN, MAX_DELETE_KEYS};
use crate::reader::{DecodeError, Reader, limit};
use crate::writer::{self, EncodeError};

/// Read one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheGet {
    /// Binary key, at most [`MAX_CACHE_KEY_LEN`] bytes.
    pub key: Bytes,
}

impl FramePayload for CacheGet {
    const TYPE: FrameType = FrameType::CacheGet;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_bytes16(dst, "key", &self.key, MAX_CACHE_KEY_LEN)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            key: reader.bytes16("key", MAX_CACHE_KEY_LEN)?,
        })
    }
}

/// Write one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheSet {
    /// Binary key, at most [`MAX_CACHE_KEY_LEN`] bytes.
    pub key: Bytes,
    /// Time to live in ms; 0 for no expiry.
    pub ttl_ms: u64,
    /// The value, at most [`MAX_CACHE_VALUE_LEN`] bytes.
    pub value: Bytes,
}

impl FramePayload for CacheSet {
    const TYPE: FrameType = FrameType::CacheSet;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_bytes16(dst, "key", &self.key, MAX_CACHE_KEY_LEN)?;
        dst.put_u64_le(self.ttl_ms);
        writer::put_bytes32(dst, "value", &self.value, MAX_CACHE_VALUE_LEN)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            key: reader.bytes16("key", MAX_CACHE_KEY_LEN)?,
            ttl_ms: reader.u64("ttl")?,
            value: reader.bytes32("value", MAX_CACHE_VALUE_LEN)?,
        })
    }
}

/// Delete keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheDelete {
    /// 1 to [`MAX_DELETE_KEYS`] keys.
    pub keys: Vec<Bytes>,
}

impl FramePayload for CacheDelete {
    const TYPE: FrameType = FrameType::CacheDelete;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        if self.keys.is_empty() {
            return Err(EncodeError::Empty { field: "keys" });
        }
        writer::limit("key count", self.keys.len(), MAX_DELETE_KEYS)?;
        dst.put_u16_le(self.keys.len() as u16);
        for key in &self.keys {
            writer::put_bytes16(dst, "key", key, MAX_CACHE_KEY_LEN)?;
        }
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let count = usize::from(reader.u16("key count")?);
        if count == 0 {
            return Err(DecodeError::EmptyCount { field: "key count" });
        }
        limit("key count", count, MAX_DELETE_KEYS)?;
        // Each key takes at least 2 bytes: bound `count` by the payload before allocating.
        if count * 2 > reader.remaining() {
            return Err(DecodeError::Truncated {
                field: "keys",
                needed: count * 2,
                remaining: reader.remaining(),
            });
        }
        let keys = (0..count)
            .map(|_| reader.bytes16("key", MAX_CACHE_KEY_LEN))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { keys })
    }
}

/// The answer to CacheGet when the key exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheValue {
    /// The value, at most [`MAX_CACHE_VALUE_LEN`] bytes.
    pub value: Bytes,
}

impl FramePayload for CacheValue {
    const TYPE: FrameType = FrameType::CacheValue;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_bytes32(dst, "value", &self.value, MAX_CACHE_VALUE_LEN)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            value: reader.bytes32("value", MAX_CACHE_VALUE_LEN)?,
        })
    }
}

empty_frame! {
    /// The answer to CacheGet when the key does not exist (or expired).
    CacheNotFound
}

empty_frame! {
    /// The answer to CacheSet.
    CacheOk
}

/// The answer to CacheDelete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheDeleted {
    /// Keys that existed and were deleted.
    pub count: u32,
}

impl FramePayload for CacheDeleted {
    const TYPE: FrameType = FrameType::CacheDeleted;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        dst.put_u32_le(self.count);
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            count: reader.u32("count")?,
        })
    }
}
