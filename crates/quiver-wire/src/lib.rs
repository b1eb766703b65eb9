//! `quiver-wire`: Quiver's native binary protocol, version 1 (`docs/wire-protocol.md`).
//!
//! It owns the frame header, one type per frame, the limits, stream-name validation and the
//! codec: [`check`] tells without allocating whether a whole, valid-looking frame is
//! buffered (returning [`CheckError::Incomplete`] until it is), [`decode`] turns it into a
//! typed [`Frame`] whose payloads are slices of the received `Bytes`, and [`encode`] appends
//! a frame to a `BytesMut`. It never does I/O and never reads the clock: transports in
//! `quiver-server` and `quiver-client` drive it.
//!
//! The key design decision is the EventBatch layout: everything that differs between the
//! subscribers of a stream (the subscription id) sits in a 20-byte prefix, so the broker
//! encodes each delivery batch once ([`EventBatchBody`]) and sends the same refcounted bytes
//! to every subscriber behind its own [`EventBatchBody::prefix`].

#![forbid(unsafe_code)]

/// The `bytes` crate this API is built on (`Bytes`, `BytesMut`), re-exported so that users
/// need not pin the same version.
pub use bytes;

mod codec;
mod error_code;
mod frames;
mod header;
mod headers;
pub mod limits;
mod name;
mod reader;
mod writer;

pub use codec::{Envelope, WireError, decode, decode_next, encode};
pub use error_code::ErrorCode;
pub use frames::*;
pub use header::{
    CheckError, Direction, FLAG_HEADERS, FrameHeader, FrameInfo, FrameType, MAGIC,
    REQUIRED_FLAGS_MASK, VERSION, check, check_with_limit,
};
pub use headers::{HeaderIter, Headers};
pub use name::{NameError, StreamName, StreamPattern, validate_group};
pub use reader::{DecodeError, Reader};
pub use writer::EncodeError;
