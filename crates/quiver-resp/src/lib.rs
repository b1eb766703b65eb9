//! `quiver-resp`: the RESP2/RESP3 codec and typed command layer of Quiver's
//! Redis-compatible cache.
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
//!   exact texts;
//! - the command table ([`table`]) that answers `COMMAND`, `COMMAND INFO`,
//!   `COMMAND COUNT`, `COMMAND LIST` and `COMMAND DOCS`;
//! - typed commands ([`Command::parse`]): one variant per command with its
//!   options parsed and validated the way Redis does, arguments kept as
//!   `Bytes` slices of the request.
//!
//! What it never does: I/O, clocks, or touching the keyspace. It turns bytes
//! into typed commands and typed replies into bytes; the server's RESP
//! transport moves the bytes and `quiver-core` executes the commands.
//!
//! Key design decision: every size limit ([`Limits`]) is checked while
//! scanning, before anything is allocated, and arguments are `Bytes` slices of
//! the connection's read buffer: decoding a pipelined `SET` copies no
//! argument bytes and allocates nothing (up to [`request::INLINE_ARGS`]
//! argument positions are stored inline in the [`Request`]).

#![forbid(unsafe_code)]

pub mod command;
pub mod decode;
pub mod encode;
pub mod error;
pub mod limits;
pub mod num;
pub mod request;
pub mod table;

pub use bytes;
pub use command::Command;
pub use decode::{Decoder, ParseError};
pub use encode::{Protocol, Reply};
pub use error::{CommandError, ErrorCode};
pub use limits::Limits;
pub use request::Request;
