//! A bounds-checked cursor over one frame's payload. Every length is checked against its
//! limit and against the bytes left before anything is sliced; slices share the frame's
//! `Bytes` (no copy).

use bytes::Bytes;
use thiserror::Error;

use crate::error_code::ErrorCode;
use crate::header::FrameType;
use crate::name::NameError;

/// Why a payload could not be decoded. The frame's length was valid, so the receiver knows
/// where the next frame starts; [`DecodeError::code`] says whether to close anyway.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// A field runs past the end of the payload.
    #[error("field `{field}` needs {needed} bytes but only {remaining} remain in the payload")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// Bytes are left after the last field.
    #[error("{count} unexpected bytes after the last field of a {frame_type:?} frame")]
    TrailingBytes {
        /// The frame being decoded.
        frame_type: FrameType,
        /// Bytes left over.
        count: usize,
    },
    /// A text field is not UTF-8.
    #[error("field `{field}` is not valid UTF-8")]
    InvalidUtf8 {
        /// The field.
        field: &'static str,
    },
    /// An enum field has a value the protocol does not define.
    #[error("field `{field}` has value {value}; allowed: {allowed}")]
    UnknownValue {
        /// The field.
        field: &'static str,
        /// The value received.
        value: u64,
        /// What is allowed.
        allowed: &'static str,
    },
    /// A count that must be at least 1 is 0.
    #[error("field `{field}` is 0; at least 1 item is required")]
    EmptyCount {
        /// The field.
        field: &'static str,
    },
    /// A valid-looking but non-canonical encoding (every frame has exactly one encoding).
    #[error("non-canonical encoding of `{field}`: {reason}")]
    NonCanonical {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A number outside its range, in a frame that is otherwise whole (answered, and the
    /// connection goes on).
    #[error("field `{field}` has value {value}; allowed: {allowed}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value received.
        value: u64,
        /// What is allowed.
        allowed: &'static str,
    },
    /// A count or length is over its limit.
    #[error("field `{field}` is {len}; the limit is {max}")]
    LimitExceeded {
        /// The field.
        field: &'static str,
        /// The value received.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A stream name, pattern or group is outside the grammar.
    #[error("invalid name in field `{field}`: {source}")]
    InvalidName {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        source: NameError,
    },
    /// A required flag bit this version does not know is set.
    #[error("unsupported flags {flags:#06x} on a {frame_type:?} frame")]
    UnsupportedFlags {
        /// The frame.
        frame_type: FrameType,
        /// The unknown required bits.
        flags: u16,
    },
}

impl DecodeError {
    /// The error code to answer with. Closing codes end the connection.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::LimitExceeded { .. } => ErrorCode::LIMIT_EXCEEDED,
            Self::InvalidName { .. } => ErrorCode::INVALID_NAME,
            Self::UnsupportedFlags { .. } => ErrorCode::UNSUPPORTED_FLAGS,
            Self::OutOfRange { .. } => ErrorCode::INVALID_ARGUMENT,
            _ => ErrorCode::MALFORMED_FRAME,
        }
    }
}

/// An opaque, bounds-checked cursor over one frame's payload, handed to
/// [`crate::FramePayload::decode_payload`].
pub struct Reader<'a> {
    buf: &'a Bytes,
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A cursor over `buf` from offset `start` to its end (no refcount is taken: slices
    /// are made only for the fields that keep bytes).
    pub(crate) fn new(buf: &'a Bytes, start: usize) -> Self {
        Self {
            buf,
            pos: start.min(buf.len()),
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn bytes(&self) -> &'a Bytes {
        self.buf
    }

    fn take(&mut self, field: &'static str, n: usize) -> Result<&[u8], DecodeError> {
        let remaining = self.remaining();
        if n > remaining {
            return Err(DecodeError::Truncated {
                field,
                needed: n,
                remaining,
            });
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..self.pos])
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(field, N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(field)?[0])
    }

    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.array(field).map(u16::from_le_bytes)
    }

    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.array(field).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, DecodeError> {
        self.array(field).map(u64::from_le_bytes)
    }

    /// `n` bytes as a shared slice of the payload.
    pub(crate) fn slice(&mut self, field: &'static str, n: usize) -> Result<Bytes, DecodeError> {
        let remaining = self.remaining();
        if n > remaining {
            return Err(DecodeError::Truncated {
                field,
                needed: n,
                remaining,
            });
        }
        let start = self.pos;
        self.pos += n;
        Ok(self.buf.slice(start..self.pos))
    }

    /// A `u8`-length-prefixed byte string of at most `max` bytes.
    pub(crate) fn bytes8(&mut self, field: &'static str, max: usize) -> Result<Bytes, DecodeError> {
        let len = usize::from(self.u8(field)?);
        self.limited_slice(field, len, max)
    }

    /// A `u16`-length-prefixed byte string of at most `max` bytes.
    pub(crate) fn bytes16(
        &mut self,
        field: &'static str,
        max: usize,
    ) -> Result<Bytes, DecodeError> {
        let len = usize::from(self.u16(field)?);
        self.limited_slice(field, len, max)
    }

    /// A `u32`-length-prefixed byte string of at most `max` bytes.
    pub(crate) fn bytes32(
        &mut self,
        field: &'static str,
        max: usize,
    ) -> Result<Bytes, DecodeError> {
        let len = self.u32(field)? as usize;
        self.limited_slice(field, len, max)
    }

    /// A `u8`-length-prefixed byte string, borrowed (for validation without a slice).
    pub(crate) fn ref8(&mut self, field: &'static str, max: usize) -> Result<&[u8], DecodeError> {
        let len = usize::from(self.u8(field)?);
        limit(field, len, max)?;
        self.take(field, len)
    }

    /// A `u16`-length-prefixed byte string, borrowed.
    pub(crate) fn ref16(&mut self, field: &'static str, max: usize) -> Result<&[u8], DecodeError> {
        let len = usize::from(self.u16(field)?);
        limit(field, len, max)?;
        self.take(field, len)
    }

    /// A `u32`-length-prefixed byte string, borrowed.
    pub(crate) fn ref32(&mut self, field: &'static str, max: usize) -> Result<&[u8], DecodeError> {
        let len = self.u32(field)? as usize;
        limit(field, len, max)?;
        self.take(field, len)
    }

    /// A `u8`-length-prefixed UTF-8 string.
    pub(crate) fn str8(&mut self, field: &'static str, max: usize) -> Result<String, DecodeError> {
        let raw = self.bytes8(field, max)?;
        utf8(field, &raw)
    }

    /// A `u16`-length-prefixed UTF-8 string.
    pub(crate) fn str16(&mut self, field: &'static str, max: usize) -> Result<String, DecodeError> {
        let raw = self.bytes16(field, max)?;
        utf8(field, &raw)
    }

    fn limited_slice(
        &mut self,
        field: &'static str,
        len: usize,
        max: usize,
    ) -> Result<Bytes, DecodeError> {
        limit(field, len, max)?;
        self.slice(field, len)
    }

    /// Fails unless the payload was consumed exactly.
    pub(crate) fn finish(self, frame_type: FrameType) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes { frame_type, count }),
        }
    }
}

pub(crate) fn limit(field: &'static str, len: usize, max: usize) -> Result<(), DecodeError> {
    if len > max {
        return Err(DecodeError::LimitExceeded { field, len, max });
    }
    Ok(())
}

fn utf8(field: &'static str, raw: &[u8]) -> Result<String, DecodeError> {
    std::str::from_utf8(raw)
        .map(str::to_owned)
        .map_err(|_| DecodeError::InvalidUtf8 { field })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_checked_against_limit_then_remaining() {
        let buf = Bytes::from_static(&[5, b'a', b'b']);
        let mut r = Reader::new(&buf, 0);
        assert_eq!(
            r.bytes8("x", 4),
            Err(DecodeError::LimitExceeded {
                field: "x",
                len: 5,
                max: 4
            })
        );
        let mut r = Reader::new(&buf, 0);
        assert_eq!(
            r.bytes8("x", 10),
            Err(DecodeError::Truncated {
                field: "x",
                needed: 5,
                remaining: 2
            })
        );
        let bad = Bytes::from_static(&[2, 0xff, 0xfe]);
        let mut r = Reader::new(&bad, 0);
        assert_eq!(
            r.str8("x", 10),
            Err(DecodeError::InvalidUtf8 { field: "x" })
        );
    }

    #[test]
    fn scalars_are_little_endian() {
        let buf = Bytes::from_static(&[1, 2, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]);
        let mut r = Reader::new(&buf, 0);
        assert_eq!(r.u8("a"), Ok(1));
        assert_eq!(r.u16("b"), Ok(2));
        assert_eq!(r.u32("c"), Ok(3));
        assert_eq!(r.u64("d"), Ok(4));
        assert_eq!(r.finish(FrameType::Ping), Ok(()));
    }
}
