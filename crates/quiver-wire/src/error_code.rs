//! Numeric error codes carried by Error, Goodbye and SubscriptionEnded frames.

use std::fmt;

/// An error code (`docs/wire-protocol.md` section 7). A newtype rather than an enum so that
/// a code from a newer peer survives decoding; codes below [`ErrorCode::FIRST_REQUEST_CODE`]
/// close the connection, the others do not, known or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub u16);

impl ErrorCode {
    /// The first two bytes of a frame are not `"QV"`.
    pub const BAD_MAGIC: Self = Self(1);
    /// Header version not spoken, or no common version in Hello.
    pub const UNSUPPORTED_VERSION: Self = Self(2);
    /// Payload length over the limit.
    pub const FRAME_TOO_LARGE: Self = Self(3);
    /// Type byte not defined.
    pub const UNKNOWN_FRAME_TYPE: Self = Self(4);
    /// Payload truncated, trailing bytes, bad UTF-8, unknown enum value, non-canonical.
    pub const MALFORMED_FRAME: Self = Self(5);
    /// The first frame was not Hello.
    pub const HELLO_REQUIRED: Self = Self(6);
    /// The auth token was rejected.
    pub const AUTH_FAILED: Self = Self(7);
    /// A frame in the wrong direction, a second Hello, a reused request id.
    pub const PROTOCOL_VIOLATION: Self = Self(8);
    /// The server is draining.
    pub const SHUTTING_DOWN: Self = Self(9);
    /// Orderly close.
    pub const NORMAL_CLOSE: Self = Self(10);
    /// Codes from here on answer one request and leave the connection open.
    pub const FIRST_REQUEST_CODE: u16 = 100;
    /// A stream name, pattern or group outside the grammar.
    pub const INVALID_NAME: Self = Self(100);
    /// A field over its limit, or a server limit reached.
    pub const LIMIT_EXCEEDED: Self = Self(101);
    /// An unknown required flag bit.
    pub const UNSUPPORTED_FLAGS: Self = Self(102);
    /// Unknown subscription id or stream.
    pub const NOT_FOUND: Self = Self(103);
    /// A valid request this server or stream cannot do.
    pub const UNSUPPORTED: Self = Self(104);
    /// Admission refused; retry later.
    pub const OVERLOADED: Self = Self(105);
    /// Subscription ended by the `disconnect` slow-subscriber policy.
    pub const SLOW_CONSUMER: Self = Self(106);
    /// The server failed.
    pub const INTERNAL: Self = Self(107);
    /// The thing to create exists already (a stream).
    pub const ALREADY_EXISTS: Self = Self(108);
    /// An ack or nack for a message the member does not hold.
    pub const NOT_HELD: Self = Self(109);
    /// The server could not store what was asked (a disk failure).
    pub const STORAGE: Self = Self(110);
    /// A value outside what is allowed (a retention bound, an offset past the end).
    pub const INVALID_ARGUMENT: Self = Self(111);

    const NAMES: [(Self, &'static str); 22] = [
        (Self::BAD_MAGIC, "BAD_MAGIC"),
        (Self::UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION"),
        (Self::FRAME_TOO_LARGE, "FRAME_TOO_LARGE"),
        (Self::UNKNOWN_FRAME_TYPE, "UNKNOWN_FRAME_TYPE"),
        (Self::MALFORMED_FRAME, "MALFORMED_FRAME"),
        (Self::HELLO_REQUIRED, "HELLO_REQUIRED"),
        (Self::AUTH_FAILED, "AUTH_FAILED"),
        (Self::PROTOCOL_VIOLATION, "PROTOCOL_VIOLATION"),
        (Self::SHUTTING_DOWN, "SHUTTING_DOWN"),
        (Self::NORMAL_CLOSE, "NORMAL_CLOSE"),
        (Self::INVALID_NAME, "INVALID_NAME"),
        (Self::LIMIT_EXCEEDED, "LIMIT_EXCEEDED"),
        (Self::UNSUPPORTED_FLAGS, "UNSUPPORTED_FLAGS"),
        (Self::NOT_FOUND, "NOT_FOUND"),
        (Self::UNSUPPORTED, "UNSUPPORTED"),
        (Self::OVERLOADED, "OVERLOADED"),
        (Self::SLOW_CONSUMER, "SLOW_CONSUMER"),
        (Self::INTERNAL, "INTERNAL"),
        (Self::ALREADY_EXISTS, "ALREADY_EXISTS"),
        (Self::NOT_HELD, "NOT_HELD"),
        (Self::STORAGE, "STORAGE"),
        (Self::INVALID_ARGUMENT, "INVALID_ARGUMENT"),
    ];

    /// Whether the sender closes the connection after an Error with this code.
    pub fn closes_connection(self) -> bool {
        self.0 < Self::FIRST_REQUEST_CODE
    }

    /// The documented name (`BAD_MAGIC`), or `None` for a code this version does not know.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMES
            .iter()
            .find(|(code, _)| *code == self)
            .map(|(_, name)| *name)
    }

    /// The code with this documented name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(code, _)| *code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "unknown error code {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_closing_rule() {
        for (code, name) in ErrorCode::NAMES {
            assert_eq!(ErrorCode::from_name(name), Some(code));
            assert_eq!(code.name(), Some(name));
        }
        assert!(ErrorCode::BAD_MAGIC.closes_connection());
        assert!(ErrorCode(99).closes_connection());
        assert!(!ErrorCode::INVALID_NAME.closes_connection());
        assert!(!ErrorCode(4000).closes_connection());
        assert_eq!(ErrorCode(4000).to_string(), "unknown error code 4000");
    }
}
