//! Connection frames: Hello/HelloOk negotiation, Ping/Pong, Error, Goodbye.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error_code::ErrorCode;
use crate::frames::payload::{FramePayload, empty_frame};
use crate::header::{FrameType, VERSION};
use crate::limits::{MAX_AUTH_TOKEN_LEN, MAX_CLIENT_NAME_LEN, MAX_ERROR_TEXT_LEN, MAX_FRAME_LEN};
use crate::reader::{DecodeError, Reader};
use crate::writer::{self, EncodeError};

/// Optional features negotiated in Hello/HelloOk. Unknown bits are never an error: the
/// server simply does not grant them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(pub u64);

impl Capabilities {
    /// Messages may carry headers.
    pub const HEADERS: Self = Self(1 << 0);
    /// Cache frames are available.
    pub const CACHE: Self = Self(1 << 1);
    /// `committed` acks and `earliest`/`offset`/`timestamp` starts are available.
    pub const DURABLE: Self = Self(1 << 2);
    /// Every capability version 1 defines.
    pub const ALL_V1: Self = Self(Self::HEADERS.0 | Self::CACHE.0 | Self::DURABLE.0);

    /// Whether every bit of `other` is set here.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits both sets have: what a server grants.
    pub fn intersect(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

/// The version both sides speak, if any: the highest in `min..=max` this crate supports.
pub fn negotiate_version(min_version: u8, max_version: u8) -> Option<u8> {
    (min_version..=max_version)
        .contains(&VERSION)
        .then_some(VERSION)
}

/// The client's first frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// Lowest version the client speaks (at least 1).
    pub min_version: u8,
    /// Highest version the client speaks (at least `min_version`).
    pub max_version: u8,
    /// Capabilities the client asks for.
    pub capabilities: Capabilities,
    /// Free text for logs and metrics, at most [`MAX_CLIENT_NAME_LEN`] bytes.
    pub client_name: String,
    /// Credentials, at most [`MAX_AUTH_TOKEN_LEN`] bytes; empty without auth.
    pub auth_token: Bytes,
}

impl FramePayload for Hello {
    const TYPE: FrameType = FrameType::Hello;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        if self.min_version == 0 || self.max_version < self.min_version {
            return Err(EncodeError::Invalid {
                field: "max version",
                reason: "1 <= min version <= max version",
            });
        }
        dst.put_u8(self.min_version);
        dst.put_u8(self.max_version);
        dst.put_u64_le(self.capabilities.0);
        writer::put_bytes8(
            dst,
            "client name",
            self.client_name.as_bytes(),
            MAX_CLIENT_NAME_LEN,
        )?;
        writer::put_bytes16(dst, "auth token", &self.auth_token, MAX_AUTH_TOKEN_LEN)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let min_version = reader.u8("min version")?;
        let max_version = reader.u8("max version")?;
        if min_version == 0 || max_version < min_version {
            return Err(DecodeError::UnknownValue {
                field: "max version",
                value: u64::from(max_version),
                allowed: "1 <= min version <= max version",
            });
        }
        Ok(Self {
            min_version,
            max_version,
            capabilities: Capabilities(reader.u64("capabilities")?),
            client_name: reader.str8("client name", MAX_CLIENT_NAME_LEN)?,
            auth_token: reader.bytes16("auth token", MAX_AUTH_TOKEN_LEN)?,
        })
    }
}

/// The server's answer to Hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelloOk {
    /// The version chosen (at least 1).
    pub version: u8,
    /// The capabilities granted.
    pub capabilities: Capabilities,
    /// The largest payload the server accepts, at most [`MAX_FRAME_LEN`].
    pub max_frame_len: u32,
    /// The server's name and version, at most [`MAX_CLIENT_NAME_LEN`] bytes.
    pub server_name: String,
}

impl FramePayload for HelloOk {
    const TYPE: FrameType = FrameType::HelloOk;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        if self.version == 0 {
            return Err(EncodeError::Invalid {
                field: "version",
                reason: "versions start at 1",
            });
        }
        writer::limit(
            "max frame length",
            self.max_frame_len as usize,
            MAX_FRAME_LEN,
        )?;
        dst.put_u8(self.version);
        dst.put_u64_le(self.capabilities.0);
        dst.put_u32_le(self.max_frame_len);
        writer::put_bytes8(
            dst,
            "server name",
            self.server_name.as_bytes(),
            MAX_CLIENT_NAME_LEN,
        )
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let version = reader.u8("version")?;
        if version == 0 {
            return Err(DecodeError::UnknownValue {
                field: "version",
                value: 0,
                allowed: "1..=255",
            });
        }
        let capabilities = Capabilities(reader.u64("capabilities")?);
        let max_frame_len = reader.u32("max frame length")?;
        if max_frame_len as usize > MAX_FRAME_LEN {
            return Err(DecodeError::LimitExceeded {
                field: "max frame length",
                len: max_frame_len as usize,
                max: MAX_FRAME_LEN,
            });
        }
        let server_name = reader.str8("server name", MAX_CLIENT_NAME_LEN)?;
        Ok(Self {
            version,
            capabilities,
            max_frame_len,
            server_name,
        })
    }
}

empty_frame! {
    /// Liveness probe; either side sends it, the other answers Pong with the same id.
    Ping
}

empty_frame! {
    /// The answer to Ping.
    Pong
}

/// A failed request (request id of the request) or a connection error (request id 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorFrame {
    /// What went wrong; codes below 100 close the connection.
    pub code: ErrorCode,
    /// A sentence for humans, at most [`MAX_ERROR_TEXT_LEN`] bytes.
    pub message: String,
}

impl ErrorFrame {
    /// An Error with `message` cut (at a character boundary) to [`MAX_ERROR_TEXT_LEN`], so
    /// that encoding it never fails.
    pub fn new(code: ErrorCode, message: &str) -> Self {
        Self {
            code,
            message: truncate_text(message).to_owned(),
        }
    }
}

/// `text` cut at a character boundary to at most [`MAX_ERROR_TEXT_LEN`] bytes.
pub(crate) fn truncate_text(text: &str) -> &str {
    let mut end = text.len().min(MAX_ERROR_TEXT_LEN);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Orderly close: the sender sends no new requests after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Goodbye {
    /// Why: usually `NORMAL_CLOSE` or `SHUTTING_DOWN`.
    pub code: ErrorCode,
    /// A sentence for humans, at most [`MAX_ERROR_TEXT_LEN`] bytes.
    pub message: String,
}

macro_rules! coded_text_frame {
    ($name:ident, $frame_type:ident) => {
        impl FramePayload for $name {
            const TYPE: FrameType = FrameType::$frame_type;

            fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
                dst.put_u16_le(self.code.0);
                writer::put_bytes16(dst, "message", self.message.as_bytes(), MAX_ERROR_TEXT_LEN)
            }

            fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
                let code = ErrorCode(reader.u16("code")?);
                let message = reader.str16("message", MAX_ERROR_TEXT_LEN)?;
                Ok(Self { code, message })
            }
        }
    };
}

coded_text_frame!(ErrorFrame, Error);
coded_text_frame!(Goodbye, Goodbye);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_is_cut_at_a_character_boundary() {
        let long = "\u{e9}".repeat(MAX_ERROR_TEXT_LEN);
        let frame = ErrorFrame::new(ErrorCode::INTERNAL, &long);
        assert!(frame.message.len() <= MAX_ERROR_TEXT_LEN);
        assert_eq!(frame.message.len(), MAX_ERROR_TEXT_LEN);
        let mut buf = BytesMut::new();
        crate::encode(1, &frame, &mut buf).expect("a cut message always encodes");
    }

    #[test]
    fn version_negotiation() {
        assert_eq!(negotiate_version(1, 1), Some(1));
        assert_eq!(negotiate_version(1, 9), Some(1));
        assert_eq!(negotiate_version(2, 9), None);
    }

    #[test]
    fn capabilities() {
        let asked = Capabilities(Capabilities::HEADERS.0 | 1 << 40);
        let granted = asked.intersect(Capabilities::ALL_V1);
        assert_eq!(granted, Capabilities::HEADERS);
        assert!(Capabilities::ALL_V1.contains(Capabilities::CACHE));
        assert!(!granted.contains(Capabilities::CACHE));
    }
}
