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
//!
//! ```
//! use quiver_wire::bytes::{Bytes, BytesMut};
//! use quiver_wire::{AckMode, Envelope, Event, EventBatchBody, Frame, Headers, Publish, StreamName};
//!
//! let stream = StreamName::new("acme/orders/created")?;
//! // A client publishes; the bytes go on the socket.
//! let mut out = BytesMut::new();
//! let publish = Publish { stream: stream.clone(), ack: AckMode::Accepted, headers: Headers::new(), payload: Bytes::from_static(b"hi") };
//! quiver_wire::encode(7, &publish, &mut out)?;
//!
//! // The server reads: `Ok(None)` until a whole frame is buffered.
//! let mut received = BytesMut::from(&out[..5]);
//! assert_eq!(quiver_wire::decode_next(&mut received)?, None);
//! received.extend_from_slice(&out[5..]);
//! let Some(Envelope { request_id: 7, frame: Frame::Publish(got) }) = quiver_wire::decode_next(&mut received)? else {
//!     panic!("expected the publish");
//! };
//! assert_eq!(got, publish);
//!
//! // The broker encodes a delivery batch once and fans it out.
//! let events = [Event { sequence: 1, timestamp_ms: 1_700_000_000_000, headers: Headers::new(), payload: got.payload }];
//! let body = EventBatchBody::encode(&stream, &events, &mut BytesMut::new())?;
//! for subscription_id in [3, 9] {
//!     let mut socket_buffer = BytesMut::new();
//!     socket_buffer.extend_from_slice(&body.prefix(subscription_id));
//!     socket_buffer.extend_from_slice(body.as_bytes());
//!     let Some(Envelope { frame: Frame::EventBatch(batch), .. }) = quiver_wire::decode_next(&mut socket_buffer)? else {
//!         panic!("expected an event batch");
//!     };
//!     assert_eq!(batch.subscription_id, subscription_id);
//!     assert_eq!(batch.body.events().next().map(|e| e.payload), Some(Bytes::from_static(b"hi")));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

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

pub use codec::{Envelope, WireError, decode, decode_next, decode_next_with_limit, encode};
pub use error_code::ErrorCode;
pub use frames::*;
pub use header::{
    CheckError, Direction, FLAG_HEADERS, FLAG_LIMIT, FLAG_RESUME, FrameHeader, FrameInfo,
    FrameType, MAGIC, REQUIRED_FLAGS_MASK, VERSION, announced_frame_len, check, check_with_limit,
};
pub use headers::{HeaderIter, Headers};
pub use name::{NameError, StreamName, StreamPattern, validate_group};
pub use reader::{DecodeError, Reader};
pub use writer::EncodeError;
