//! `quiver-resp`: the RESP2/RESP3 codec of Quiver's Redis-compatible cache.
//!
//! What it owns:
//! - request decoding ([`Decoder`]): multibulk (`*N\r\n$len\r\n...`) and inline
//!   commands (what `redis-cli` and telnet send), in two steps: a cheap
//!   [`Decoder::check`] that a whole request is buffered (no allocation,
//!   [`ParseError::Incomplete`] otherwise) and [`Decoder::parse`] into a
//!   [`Request`] whose arguments are zero-copy slices of the received buffer;
//! - reply encoding ([`Reply`], [`Protocol`] and the direct writers in
//!   [`encode`]) for RESP2 and RESP3;
//! - Redis's error replies ([`CommandError`], [`ErrorCode`]) with Redis 7's
//!   exact texts, and Redis's number syntax ([`num`]).
//!
//! What it never does: I/O, clocks, or touching the keyspace. The commands
//! themselves (the table, parsing, execution, replies) live with the server's RESP
//! transport, one module per family.
//!
//! Key design decision: every size limit ([`Limits`]) is checked while
//! scanning, before anything is allocated, and arguments are `Bytes` slices of
//! the connection's read buffer: decoding a pipelined `SET` copies no
//! argument bytes and allocates nothing (up to [`request::INLINE_ARGS`]
//! argument positions are stored inline in the [`Request`]).

#![forbid(unsafe_code)]

pub mod decode;
pub mod encode;
pub mod error;
pub mod limits;
pub mod num;
pub mod request;

pub use bytes;
pub use decode::{Decoder, ParseError};
pub use encode::{Protocol, Reply};
pub use error::{CommandError, ErrorCode};
pub use limits::Limits;
pub use request::Request;
