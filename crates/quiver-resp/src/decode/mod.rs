//! Request decoding in two steps, as Redis's `processInputBuffer` reads:
//! a request starting with `*` is multibulk, anything else is inline.
//!
//! [`Decoder::check`] finds the length of the first whole request without
//! allocating (or [`ParseError::Incomplete`]); [`Decoder::parse`] then turns
//! exactly those bytes into a [`Request`] whose arguments are slices of them.
//! Pipelining of any depth is decoding requests one after another.

mod inline;
mod multibulk;

use bytes::{Bytes, BytesMut};

use crate::limits::Limits;
use crate::request::{Request, Spans};

/// Why no request could be decoded. Every variant but [`Incomplete`] is a
/// protocol error after which Redis replies with the error text (the
/// `Display` output, e.g. `ERR Protocol error: invalid bulk length`) and
/// closes the connection.
///
/// [`Incomplete`]: ParseError::Incomplete
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The buffer does not yet hold a whole request: read more bytes.
    #[error("incomplete request: more bytes are needed")]
    Incomplete,
    /// `*N` with N not an integer or above the multibulk limit.
    #[error("ERR Protocol error: invalid multibulk length")]
    InvalidMultibulkLength,
    /// `$N` with N not an integer, negative, or above `proto-max-bulk-len`.
    #[error("ERR Protocol error: invalid bulk length")]
    InvalidBulkLength,
    /// A multibulk element that does not start with `$`.
    #[error("ERR Protocol error: expected '$', got '{}'", char::from(*.got))]
    ExpectedBulk {
        /// The byte found instead of `$`.
        got: u8,
    },
    /// An inline request line longer than the inline limit.
    #[error("ERR Protocol error: too big inline request")]
    TooBigInline,
    /// A `*N` header line longer than the inline limit.
    #[error("ERR Protocol error: too big mbulk count string")]
    TooBigMultibulkCount,
    /// A `$N` header line longer than the inline limit.
    #[error("ERR Protocol error: too big bulk count string")]
    TooBigBulkCount,
    /// An inline request with an unterminated quote, or a closing quote not
    /// followed by a space.
    #[error("ERR Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
    /// More elements than an unauthenticated client may send.
    #[error("ERR Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulkLength,
    /// A longer argument than an unauthenticated client may send.
    #[error("ERR Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulkLength,
    /// The client buffered more than `client-query-buffer-limit` without
    /// completing a request; Redis closes such a client without a reply.
    #[error(
        "client query buffer of {buffered_bytes} bytes reached the limit of {limit_bytes} bytes"
    )]
    QueryBufferLimit {
        /// Bytes buffered.
        buffered_bytes: usize,
        /// The configured limit.
        limit_bytes: usize,
    },
}

impl ParseError {
    /// True when the client should get the error text as a reply before the
    /// connection closes (all protocol errors but the query buffer limit).
    pub fn replies(&self) -> bool {
        !matches!(
            self,
            ParseError::Incomplete | ParseError::QueryBufferLimit { .. }
        )
    }
}

/// A request decoder for one connection's limits.
#[derive(Clone, Copy, Debug, Default)]
pub struct Decoder {
    limits: Limits,
}

impl Decoder {
    /// A decoder enforcing `limits`.
    pub fn new(limits: Limits) -> Decoder {
        Decoder { limits }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Changes the limits (e.g. once a client authenticates).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The byte length of the first whole request in `buf`, without
    /// allocating. `Incomplete` means "read more"; once `buf` holds more than
    /// the query buffer limit without a whole request, `QueryBufferLimit`.
    pub fn check(&self, buf: &[u8]) -> Result<usize, ParseError> {
        let result = match buf.first() {
            None => Err(ParseError::Incomplete),
            Some(b'*') => multibulk::scan(buf, &self.limits, None),
            Some(_) => inline::scan(buf, &self.limits),
        };
        self.limit_incomplete(result, buf.len())
    }

    /// `Incomplete` becomes `QueryBufferLimit` once `buffered` bytes reach the
    /// query buffer limit.
    fn limit_incomplete<T>(
        &self,
        result: Result<T, ParseError>,
        buffered: usize,
    ) -> Result<T, ParseError> {
        match result {
            Err(ParseError::Incomplete) if buffered >= self.limits.max_query_buffer_bytes => {
                Err(ParseError::QueryBufferLimit {
                    buffered_bytes: buffered,
                    limit_bytes: self.limits.max_query_buffer_bytes,
                })
            }
            other => other,
        }
    }

    /// Parses one request from `frame`, the first `check(..)` bytes of the
    /// buffer. Arguments are slices of `frame` (quoted inline arguments are
    /// unescaped into one new buffer). Errors like `check` on any other input.
    pub fn parse(&self, frame: Bytes) -> Result<Request, ParseError> {
        match frame.first() {
            None => Err(ParseError::Incomplete),
            Some(b'*') => {
                let mut spans = Spans::with_capacity(0);
                multibulk::scan(&frame, &self.limits, Some(&mut spans))?;
                Ok(Request::from_spans(frame, spans))
            }
            Some(_) => inline::parse(frame, &self.limits),
        }
    }

    /// Checks, splits off and parses the first whole request in `buf`;
    /// `Ok(None)` when more bytes are needed. The request shares `buf`'s
    /// allocation.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Request>, ParseError> {
        if buf.first() == Some(&b'*') {
            // One pass: the scan that finds the end also records the argument
            // spans, which stay valid because the frame starts where `buf` does.
            let mut spans = Spans::with_capacity(0);
            let scanned = multibulk::scan(buf, &self.limits, Some(&mut spans));
            return match self.limit_incomplete(scanned, buf.len()) {
                Ok(len) => Ok(Some(Request::from_spans(buf.split_to(len).freeze(), spans))),
                Err(ParseError::Incomplete) => Ok(None),
                Err(err) => Err(err),
            };
        }
        match self.check(buf) {
            Ok(len) => {
                let frame = buf.split_to(len).freeze();
                self.parse(frame).map(Some)
            }
            Err(ParseError::Incomplete) => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// Position of the first `\r` in `buf[from..]`, looking at most `window`
/// bytes ahead (header lines are bounded by the inline limit).
fn find_cr(buf: &[u8], from: usize, window: usize) -> Option<usize> {
    let end = buf.len().min(from.saturating_add(window).saturating_add(1));
    buf[from..end]
        .iter()
        .position(|&b| b == b'\r')
        .map(|i| from + i)
}

#[cfg(test)]
mod tests;
