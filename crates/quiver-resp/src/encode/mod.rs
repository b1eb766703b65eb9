//! Reply encoding for RESP2 and RESP3.
//!
//! [`Reply`] is a reply tree for replies built from parts (`COMMAND INFO`,
//! `HELLO`, `EXEC`); the writers in [`write`] put the common replies straight
//! into the output buffer. Both write into any [`BufMut`] (`BytesMut`,
//! `Vec<u8>`). RESP3-only types degrade to what Redis sends a RESP2 client.

mod write;

use bytes::{BufMut, Bytes};

pub use write::{
    OK, write_array_len, write_big_number, write_bool, write_bulk, write_bulk_integer,
    write_double, write_error, write_integer, write_map_len, write_null, write_null_array,
    write_push_len, write_set_len, write_simple, write_verbatim,
};

use crate::error::CommandError;

/// The protocol a connection speaks: RESP2 until `HELLO 3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// RESP2, every connection's protocol at first.
    #[default]
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

impl Protocol {
    /// The protocol for a `HELLO` protover (2 or 3).
    pub fn from_version(version: i64) -> Option<Protocol> {
        match version {
            2 => Some(Protocol::Resp2),
            3 => Some(Protocol::Resp3),
            _ => None,
        }
    }

    /// The version number `HELLO` reports.
    pub fn version(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

/// One reply, encodable for either protocol.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// A status line: `+OK`.
    Simple(Bytes),
    /// An error line whose first word is the error code: `-ERR ...`.
    Error(Bytes),
    /// `:42`.
    Integer(i64),
    /// `$3\r\nabc`.
    Bulk(Bytes),
    /// The null bulk string (RESP2 `$-1`, RESP3 `_`).
    Null,
    /// The null array (RESP2 `*-1`, RESP3 `_`).
    NullArray,
    /// `*N` and N replies.
    Array(Vec<Reply>),
    /// RESP3 `%N`; RESP2 a flat array of keys and values.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 `~N`; RESP2 an array.
    Set(Vec<Reply>),
    /// RESP3 `,1.5`; RESP2 a bulk string formatted with `%.17g`.
    Double(f64),
    /// RESP3 `#t`; RESP2 `:1`/`:0`.
    Boolean(bool),
    /// RESP3 `(digits`; RESP2 a bulk string.
    BigNumber(Bytes),
    /// RESP3 `=N\r\ntxt:...`; RESP2 a bulk string of the text.
    Verbatim {
        /// Three-byte format, `txt` or `mkd`.
        format: [u8; 3],
        /// The text.
        text: Bytes,
    },
    /// RESP3 `>N` out-of-band push; RESP2 an array.
    Push(Vec<Reply>),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple(Bytes::from_static(b"OK"))
    }

    /// A status line from static text.
    pub fn simple(text: &'static str) -> Reply {
        Reply::Simple(Bytes::from_static(text.as_bytes()))
    }

    /// A bulk string copied from `data`.
    pub fn bulk(data: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(data.as_ref()))
    }

    /// A bulk string from static text.
    pub fn bulk_static(text: &'static str) -> Reply {
        Reply::Bulk(Bytes::from_static(text.as_bytes()))
    }

    /// The reply for `error`.
    pub fn error(error: &CommandError) -> Reply {
        Reply::Error(Bytes::from(error.to_string()))
    }

    /// Appends this reply's encoding for `protocol` to `out`.
    pub fn encode<B: BufMut>(&self, protocol: Protocol, out: &mut B) {
        match self {
            Reply::Simple(text) => write_simple(out, text),
            Reply::Error(message) => write_error(out, message),
            Reply::Integer(value) => write_integer(out, *value),
            Reply::Bulk(data) => write_bulk(out, data),
            Reply::Null => write_null(out, protocol),
            Reply::NullArray => write_null_array(out, protocol),
            Reply::Array(items) => {
                write_array_len(out, items.len());
                items.iter().for_each(|item| item.encode(protocol, out));
            }
            Reply::Map(pairs) => {
                write_map_len(out, protocol, pairs.len());
                for (key, value) in pairs {
                    key.encode(protocol, out);
                    value.encode(protocol, out);
                }
            }
            Reply::Set(items) => {
                write_set_len(out, protocol, items.len());
                items.iter().for_each(|item| item.encode(protocol, out));
            }
            Reply::Push(items) => {
                write_push_len(out, protocol, items.len());
                items.iter().for_each(|item| item.encode(protocol, out));
            }
            Reply::Double(value) => write_double(out, protocol, *value),
            Reply::Boolean(value) => write_bool(out, protocol, *value),
            Reply::BigNumber(digits) => write_big_number(out, protocol, digits),
            Reply::Verbatim { format, text } => write_verbatim(out, protocol, format, text),
        }
    }

    /// This reply's encoding for `protocol` as a new vector.
    pub fn to_vec(&self, protocol: Protocol) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(protocol, &mut out);
        out
    }
}

impl From<CommandError> for Reply {
    fn from(error: CommandError) -> Reply {
        Reply::error(&error)
    }
}

#[cfg(test)]
mod tests;
