//! Typed errors: one enum for connecting, one for requests on a connection.

use std::io;
use std::time::Duration;

use quiver_wire::{EncodeError, ErrorCode, NameError};
use thiserror::Error;

/// Why [`Client::connect`](crate::Client::connect) failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URL is not `quiver://host:port` or `quiver+quic://host:port`.
    #[error(
        "invalid URL {url:?}: {reason}; expected quiver://host:port or quiver+quic://host:port"
    )]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A scheme this client does not speak.
    #[error(
        "unsupported scheme {scheme:?} in {url:?}; use quiver:// (TCP) or quiver+quic:// (QUIC)"
    )]
    UnsupportedScheme {
        /// The scheme given.
        scheme: String,
        /// The URL given.
        url: String,
    },
    /// The TLS settings for `quiver+quic://` are missing or unusable.
    #[error("QUIC TLS: {reason}")]
    Tls {
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The QUIC connection could not be made (unreachable, handshake refused, a pinned
    /// fingerprint that does not match the server's certificate).
    #[error("cannot connect over QUIC to {addr}: {reason}")]
    Quic {
        /// The address tried.
        addr: String,
        /// quinn's explanation.
        reason: String,
    },
    /// The TCP connection could not be made, or (QUIC) the host did not resolve or no
    /// local UDP socket could be opened.
    #[error("cannot connect to {addr}: {source}")]
    Io {
        /// The address tried.
        addr: String,
        /// The socket error.
        source: io::Error,
    },
    /// No HelloOk within the connect timeout.
    #[error("no answer to Hello from {addr} within {after:?}")]
    Timeout {
        /// The address tried.
        addr: String,
        /// The connect timeout.
        after: Duration,
    },
    /// The server refused the Hello (bad version, bad token).
    #[error("the server refused the connection: {code}: {message}")]
    Refused {
        /// The server's error code.
        code: ErrorCode,
        /// The server's explanation.
        message: String,
    },
    /// The server answered Hello with something that is not the protocol.
    #[error("the server did not answer Hello as the protocol says: {0}")]
    Protocol(String),
}

/// Why a request failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// The server answered with an Error frame.
    #[error("the server answered {code}: {message}")]
    Server {
        /// The server's error code (`ErrorCode::INVALID_NAME`, `OVERLOADED`, ...).
        code: ErrorCode,
        /// The server's explanation.
        message: String,
    },
    /// No reply within the request timeout.
    #[error("no reply within {after:?}")]
    Timeout {
        /// The request timeout.
        after: Duration,
    },
    /// The connection is closed.
    #[error("the connection is closed: {reason}")]
    Disconnected {
        /// Why, as far as the client knows.
        reason: String,
    },
    /// A stream name or pattern outside the grammar (checked before sending).
    #[error("invalid stream name or pattern: {0}")]
    InvalidName(NameError),
    /// A request over the protocol's limits (checked before sending).
    #[error("request not sent: {0}")]
    Encode(EncodeError),
    /// A call this method does not take (checked before sending).
    #[error("request not sent: {0}")]
    Unsupported(&'static str),
    /// The server answered with a frame that does not answer this request.
    #[error("unexpected reply {got} to a {request} request")]
    UnexpectedReply {
        /// The request type.
        request: &'static str,
        /// The frame type received.
        got: String,
    },
}

impl RequestError {
    /// The server's error code, when the server refused the request.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Server { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Why a [`Publisher`](crate::Publisher) operation failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublisherError {
    /// The stream name is outside the grammar.
    #[error("invalid stream name: {0}")]
    InvalidName(NameError),
    /// A [`PublisherOptions`](crate::PublisherOptions) value out of range.
    #[error("publisher option {option} = {value} is out of range; expected {min} to {max}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// The value given.
        value: u64,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// Headers outside the protocol's limits (count, key or value length, empty key).
    #[error("the message was not taken: its headers: {0}")]
    InvalidHeaders(EncodeError),
    /// A payload larger than one message may be.
    #[error("a message of {bytes} bytes was not taken; at most {max} bytes per message")]
    MessageTooLarge {
        /// The payload's size.
        bytes: usize,
        /// The protocol's limit.
        max: usize,
    },
    /// Earlier batches were not published: the server refused them, or the connection
    /// was lost before they were acknowledged (they may or may not have been taken).
    /// Reported once; messages published before and after them are unaffected.
    #[error("{messages} messages in {batches} batches were not published: {source}")]
    NotPublished {
        /// Messages in the failed batches.
        messages: u64,
        /// Failed batches.
        batches: u64,
        /// Why the first of them failed.
        source: RequestError,
    },
    /// No in-flight batch was acknowledged within the client's request timeout.
    #[error("no acknowledgement within {after:?} with {in_flight} batches in flight")]
    Timeout {
        /// The request timeout.
        after: Duration,
        /// Batches still unacknowledged.
        in_flight: usize,
    },
    /// With ack `none`, the round trip that confirms the server has taken every batch
    /// failed.
    #[error("could not confirm that the server took the batches: {source}")]
    Unconfirmed {
        /// Why the confirming Ping failed.
        source: RequestError,
    },
}
