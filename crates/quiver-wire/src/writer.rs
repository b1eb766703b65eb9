//! Encoding helpers and `EncodeError`. The encoder refuses to write a frame its peer would
//! reject, so every limit is checked here too.

use bytes::{BufMut, BytesMut};
use thiserror::Error;

use crate::name::NameError;

/// Why a frame could not be encoded. Nothing is left in the buffer when encoding fails.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// A field is over its limit.
    #[error("field `{field}` is {len}; the limit is {max}")]
    LimitExceeded {
        /// The field.
        field: &'static str,
        /// Its size or count.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A batch or key list is empty; the protocol needs at least one item.
    #[error("field `{field}` is empty; at least one item is required")]
    Empty {
        /// The field.
        field: &'static str,
    },
    /// An event has headers but the batch was started without them.
    #[error("an event has headers but the batch was started without the HEADERS flag")]
    HeadersNotEnabled,
    /// A valid but non-canonical encoding was asked for.
    #[error("non-canonical encoding of `{field}`: {reason}")]
    NonCanonical {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A field has a value the protocol does not allow.
    #[error("field `{field}` is invalid: {reason}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is allowed.
        reason: &'static str,
    },
    /// A queue group name is outside the grammar.
    #[error("invalid group: {0}")]
    InvalidGroup(NameError),
    /// The whole payload is over the frame limit.
    #[error("frame payload would be {len} bytes; the limit is {max}")]
    FrameTooLarge {
        /// Payload length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// Subscription ids are never 0.
pub(crate) fn put_subscription_id(
    dst: &mut BytesMut,
    subscription_id: u32,
) -> Result<(), EncodeError> {
    if subscription_id == 0 {
        return Err(EncodeError::Invalid {
            field: "subscription id",
            reason: "subscription ids are never 0",
        });
    }
    dst.put_u32_le(subscription_id);
    Ok(())
}

pub(crate) fn limit(field: &'static str, len: usize, max: usize) -> Result<(), EncodeError> {
    if len > max {
        return Err(EncodeError::LimitExceeded { field, len, max });
    }
    Ok(())
}

/// `u8` length + bytes. Callers have checked `bytes.len() <= max <= u8::MAX`.
pub(crate) fn put_bytes8(
    dst: &mut BytesMut,
    field: &'static str,
    bytes: &[u8],
    max: usize,
) -> Result<(), EncodeError> {
    limit(field, bytes.len(), max.min(u8::MAX as usize))?;
    dst.put_u8(bytes.len() as u8);
    dst.put_slice(bytes);
    Ok(())
}

pub(crate) fn put_bytes16(
    dst: &mut BytesMut,
    field: &'static str,
    bytes: &[u8],
    max: usize,
) -> Result<(), EncodeError> {
    limit(field, bytes.len(), max.min(u16::MAX as usize))?;
    dst.put_u16_le(bytes.len() as u16);
    dst.put_slice(bytes);
    Ok(())
}

pub(crate) fn put_bytes32(
    dst: &mut BytesMut,
    field: &'static str,
    bytes: &[u8],
    max: usize,
) -> Result<(), EncodeError> {
    limit(field, bytes.len(), max.min(u32::MAX as usize))?;
    dst.put_u32_le(bytes.len() as u32);
    dst.put_slice(bytes);
    Ok(())
}
