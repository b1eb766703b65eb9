//! The fixed 16-byte frame header and `check`, the cheap first step of decoding: it tells
//! whether a whole valid-looking frame is buffered without allocating anything.

use thiserror::Error;

use crate::error_code::ErrorCode;
use crate::limits::{HEADER_LEN, MAX_FRAME_LEN};

/// The two magic bytes that open every frame: `"QV"`.
pub const MAGIC: [u8; 2] = *b"QV";

/// The protocol version this crate speaks; also the header version of Hello and HelloOk.
pub const VERSION: u8 = 1;

/// Flag bit 0: each message or event carries a header block.
pub const FLAG_HEADERS: u16 = 0x0001;

/// Flag bit 8 (required) of Subscribe: a list of streams to resume at their own offsets
/// follows the fixed fields.
pub const FLAG_RESUME: u16 = 0x0100;

/// Flag bit 9 (required) of JoinGroup: a `u32` limit (at least 1) follows the fixed
/// fields: the member is given at most that many messages per stream, then nothing more.
pub const FLAG_LIMIT: u16 = 0x0200;

/// Flag bits 8-15: a receiver that does not know one of these rejects the frame; unknown
/// bits 0-7 are ignored.
pub const REQUIRED_FLAGS_MASK: u16 = 0xFF00;

/// Who may send a frame type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Only the client sends it.
    ClientToServer,
    /// Only the server sends it.
    ServerToClient,
    /// Either side sends it.
    Both,
}

macro_rules! frame_types {
    ($($name:ident = $value:literal, $dir:ident;)*) => {
        /// The type byte of a frame (`docs/wire-protocol.md` section 4).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum FrameType {
            $(
                #[allow(missing_docs)]
                $name = $value,
            )*
        }

        impl FrameType {
            /// The type with this byte, if version 1 defines it.
            pub fn from_u8(value: u8) -> Option<Self> {
                match value {
                    $($value => Some(Self::$name),)*
                    _ => None,
                }
            }

            /// Who may send frames of this type.
            pub fn direction(self) -> Direction {
                match self {
                    $(Self::$name => Direction::$dir,)*
                }
            }

            /// Every defined type, in type-byte order.
            pub const ALL: &[FrameType] = &[$(Self::$name,)*];
        }
    };
}

frame_types! {
    Hello = 0x01, ClientToServer;
    HelloOk = 0x02, ServerToClient;
    Ping = 0x03, Both;
    Pong = 0x04, Both;
    Error = 0x05, Both;
    Goodbye = 0x06, Both;
    Publish = 0x10, ClientToServer;
    PublishBatch = 0x11, ClientToServer;
    PublishAck = 0x12, ServerToClient;
    Subscribe = 0x13, ClientToServer;
    Subscribed = 0x14, ServerToClient;
    Unsubscribe = 0x15, ClientToServer;
    Unsubscribed = 0x16, ServerToClient;
    EventBatch = 0x17, ServerToClient;
    Lag = 0x18, ServerToClient;
    SubscriptionEnded = 0x19, ServerToClient;
    CacheGet = 0x20, ClientToServer;
    CacheSet = 0x21, ClientToServer;
    CacheDelete = 0x22, ClientToServer;
    CacheValue = 0x23, ServerToClient;
    CacheNotFound = 0x24, ServerToClient;
    CacheOk = 0x25, ServerToClient;
    CacheDeleted = 0x26, ServerToClient;
    CreateStream = 0x30, ClientToServer;
    StreamInfo = 0x31, ServerToClient;
    DescribeStream = 0x32, ClientToServer;
    DeleteStream = 0x33, ClientToServer;
    StreamDeleted = 0x34, ServerToClient;
    ListStreams = 0x35, ClientToServer;
    StreamList = 0x36, ServerToClient;
    JoinGroup = 0x40, ClientToServer;
    GroupEventBatch = 0x41, ServerToClient;
    GroupAck = 0x42, ClientToServer;
    GroupNack = 0x43, ClientToServer;
    GroupAcked = 0x44, ServerToClient;
    DescribeGroups = 0x45, ClientToServer;
    GroupList = 0x46, ServerToClient;
    ResetGroup = 0x47, ClientToServer;
    DeleteGroup = 0x48, ClientToServer;
    GroupDeleted = 0x49, ServerToClient;
}

/// A validated frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Protocol version of the frame.
    pub version: u8,
    /// What the payload is.
    pub frame_type: FrameType,
    /// Flag bits, meaning per frame type.
    pub flags: u16,
    /// The request this frame is or answers; 0 for pushed frames.
    pub request_id: u32,
    /// Payload bytes after the header, at most [`MAX_FRAME_LEN`].
    pub payload_len: u32,
}

impl FrameHeader {
    /// Writes the 16 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..2].copy_from_slice(&MAGIC);
        out[2] = self.version;
        out[3] = self.frame_type as u8;
        out[4..6].copy_from_slice(&self.flags.to_le_bytes());
        out[8..12].copy_from_slice(&self.request_id.to_le_bytes());
        out[12..16].copy_from_slice(&self.payload_len.to_le_bytes());
        out
    }
}

/// What `check` found: a whole frame of `frame_len` bytes is at the start of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// The validated header.
    pub header: FrameHeader,
    /// Header plus payload: the bytes to take from the buffer.
    pub frame_len: usize,
}

/// Why `check` cannot return a frame yet, or ever.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckError {
    /// Not a whole frame yet: read more bytes and call again.
    #[error("incomplete frame: more bytes needed")]
    Incomplete,
    /// Magic byte at `offset` is not the one of `"QV"`.
    #[error("bad magic byte {found:#04x} at offset {offset}; frames start with 0x51 0x56 (\"QV\")")]
    BadMagic {
        /// 0 or 1.
        offset: usize,
        /// The byte received.
        found: u8,
    },
    /// A version this crate does not speak.
    #[error("unsupported protocol version {found}; this peer speaks version {VERSION}")]
    UnsupportedVersion {
        /// The version byte received.
        found: u8,
    },
    /// A type byte version 1 does not define.
    #[error("unknown frame type {found:#04x}")]
    UnknownFrameType {
        /// The type byte received.
        found: u8,
    },
    /// The reserved header bytes are not zero.
    #[error("reserved header bytes are {found:#06x}; version 1 requires 0")]
    ReservedNotZero {
        /// The reserved field received.
        found: u16,
    },
    /// The payload length is over the limit.
    #[error("frame payload length {len} exceeds the limit of {max} bytes")]
    FrameTooLarge {
        /// The length received.
        len: u32,
        /// The limit in force.
        max: usize,
    },
}

impl CheckError {
    /// The error code to send before closing; `None` for [`CheckError::Incomplete`].
    pub fn code(&self) -> Option<ErrorCode> {
        Some(match self {
            Self::Incomplete => return None,
            Self::BadMagic { .. } => ErrorCode::BAD_MAGIC,
            Self::UnsupportedVersion { .. } => ErrorCode::UNSUPPORTED_VERSION,
            Self::UnknownFrameType { .. } => ErrorCode::UNKNOWN_FRAME_TYPE,
            Self::ReservedNotZero { .. } => ErrorCode::MALFORMED_FRAME,
            Self::FrameTooLarge { .. } => ErrorCode::FRAME_TOO_LARGE,
        })
    }
}

/// The bytes of the frame `buf` starts with, header and payload, once its 16 header bytes
/// are buffered: what a receive loop reserves at once for the rest of a large frame
/// instead of growing its buffer read by read. The length is the one announced, capped at
/// the largest frame; [`check`] is what validates it.
pub fn announced_frame_len(buf: &[u8]) -> Option<usize> {
    let fixed = buf.get(..HEADER_LEN)?;
    Some(HEADER_LEN + (le_u32(&fixed[12..16]) as usize).min(MAX_FRAME_LEN))
}

/// Checks whether `buf` starts with a whole frame whose header is valid and whose length is
/// within [`MAX_FRAME_LEN`]. Header fields are checked as soon as their bytes are present,
/// so garbage is rejected at its first wrong byte and an oversize frame as soon as its
/// length is known; nothing is allocated.
pub fn check(buf: &[u8]) -> Result<FrameInfo, CheckError> {
    check_with_limit(buf, MAX_FRAME_LEN)
}

/// [`check`] with a payload limit lower than [`MAX_FRAME_LEN`] (the one a server announced).
pub fn check_with_limit(buf: &[u8], max_payload_len: usize) -> Result<FrameInfo, CheckError> {
    let max = max_payload_len.min(MAX_FRAME_LEN);
    for (offset, (&found, &expected)) in buf.iter().zip(MAGIC.iter()).enumerate() {
        if found != expected {
            return Err(CheckError::BadMagic { offset, found });
        }
    }
    if let Some(&version) = buf.get(2)
        && version != VERSION
    {
        return Err(CheckError::UnsupportedVersion { found: version });
    }
    let frame_type = match buf.get(3) {
        Some(&byte) => {
            FrameType::from_u8(byte).ok_or(CheckError::UnknownFrameType { found: byte })?
        }
        None => return Err(CheckError::Incomplete),
    };
    let Some(fixed) = buf.get(..HEADER_LEN) else {
        if let Some(reserved) = buf.get(6..8)
            && reserved != [0, 0]
        {
            return Err(reserved_error(reserved));
        }
        return Err(CheckError::Incomplete);
    };
    if fixed[6..8] != [0, 0] {
        return Err(reserved_error(&fixed[6..8]));
    }
    let payload_len = le_u32(&fixed[12..16]);
    if payload_len as usize > max {
        return Err(CheckError::FrameTooLarge {
            len: payload_len,
            max,
        });
    }
    let frame_len = HEADER_LEN + payload_len as usize;
    if buf.len() < frame_len {
        return Err(CheckError::Incomplete);
    }
    let header = FrameHeader {
        version: VERSION,
        frame_type,
        flags: u16::from_le_bytes([fixed[4], fixed[5]]),
        request_id: le_u32(&fixed[8..12]),
        payload_len,
    };
    Ok(FrameInfo { header, frame_len })
}

fn reserved_error(reserved: &[u8]) -> CheckError {
    let found = u16::from_le_bytes([reserved[0], reserved[1]]);
    CheckError::ReservedNotZero { found }
}

fn le_u32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ping(request_id: u32) -> [u8; HEADER_LEN] {
        let header = FrameHeader {
            version: VERSION,
            frame_type: FrameType::Ping,
            flags: 0,
            request_id,
            payload_len: 0,
        };
        header.to_bytes()
    }

    #[test]
    fn whole_header_and_prefixes() {
        let bytes = ping(7);
        let info = check(&bytes).expect("a ping header is a whole frame");
        assert_eq!(info.frame_len, HEADER_LEN);
        assert_eq!(info.header.request_id, 7);
        for len in 0..HEADER_LEN {
            assert_eq!(
                check(&bytes[..len]),
                Err(CheckError::Incomplete),
                "prefix {len}"
            );
        }
    }

    #[test]
    fn announced_length_once_the_header_is_there() {
        let mut header = FrameHeader {
            version: VERSION,
            frame_type: FrameType::EventBatch,
            flags: 0,
            request_id: 0,
            payload_len: 300_000,
        };
        let bytes = header.to_bytes();
        assert_eq!(announced_frame_len(&bytes[..HEADER_LEN - 1]), None);
        assert_eq!(announced_frame_len(&bytes), Some(HEADER_LEN + 300_000));
        header.payload_len = u32::MAX;
        assert_eq!(
            announced_frame_len(&header.to_bytes()),
            Some(HEADER_LEN + MAX_FRAME_LEN),
            "capped at the largest frame"
        );
    }

    #[test]
    fn rejects_at_the_first_wrong_byte() {
        assert_eq!(
            check(b"X"),
            Err(CheckError::BadMagic {
                offset: 0,
                found: b'X'
            })
        );
        assert_eq!(
            check(b"QX"),
            Err(CheckError::BadMagic {
                offset: 1,
                found: b'X'
            })
        );
        assert_eq!(
            check(b"QV\x02"),
            Err(CheckError::UnsupportedVersion { found: 2 })
        );
        assert_eq!(
            check(b"QV\x01\x7f"),
            Err(CheckError::UnknownFrameType { found: 0x7f })
        );
        assert_eq!(
            check(b"QV\x01\x03\x00\x00\x01\x00"),
            Err(CheckError::ReservedNotZero { found: 1 })
        );
    }

    #[test]
    fn rejects_oversize_before_the_payload_arrives() {
        let mut bytes = ping(1);
        bytes[12..16].copy_from_slice(&(MAX_FRAME_LEN as u32 + 1).to_le_bytes());
        assert!(matches!(
            check(&bytes),
            Err(CheckError::FrameTooLarge { .. })
        ));
        bytes[12..16].copy_from_slice(&100u32.to_le_bytes());
        assert!(matches!(
            check_with_limit(&bytes, 99),
            Err(CheckError::FrameTooLarge { max: 99, .. })
        ));
        assert_eq!(check(&bytes), Err(CheckError::Incomplete));
    }

    #[test]
    fn frame_types_round_trip() {
        for &frame_type in FrameType::ALL {
            assert_eq!(FrameType::from_u8(frame_type as u8), Some(frame_type));
        }
        assert_eq!(FrameType::from_u8(0), None);
    }
}
