//! Direct reply writers for the hot path: no intermediate [`Reply`], no
//! allocation (numbers are formatted on the stack).
//!
//! [`Reply`]: super::Reply

use bytes::BufMut;

use super::Protocol;
use crate::num::{MAX_DOUBLE_CHARS, MAX_I64_DIGITS, format_double, format_i64};

/// `+OK\r\n`, the most common reply.
pub const OK: &[u8] = b"+OK\r\n";

/// Writes a type byte, a decimal number and `\r\n`.
fn write_header<B: BufMut>(out: &mut B, kind: u8, value: i64) {
    let mut digits = [0u8; MAX_I64_DIGITS];
    out.put_u8(kind);
    out.put_slice(format_i64(value, &mut digits));
    out.put_slice(b"\r\n");
}

fn len_i64(len: usize) -> i64 {
    i64::try_from(len).expect("a reply length fits in i64 (it is in memory)")
}

/// `+<text>\r\n`. `text` must not contain `\r` or `\n` (status lines are
/// written by the server, not taken from clients).
pub fn write_simple<B: BufMut>(out: &mut B, text: &[u8]) {
    debug_assert!(
        !text.contains(&b'\r') && !text.contains(&b'\n'),
        "a status line is one line"
    );
    out.put_u8(b'+');
    out.put_slice(text);
    out.put_slice(b"\r\n");
}

/// `-<message>\r\n`, with `\r` and `\n` in the message turned into spaces as
/// Redis does (messages may quote client input).
pub fn write_error<B: BufMut>(out: &mut B, message: &[u8]) {
    out.put_u8(b'-');
    let mut rest = message;
    while let Some(pos) = rest.iter().position(|&b| b == b'\r' || b == b'\n') {
        out.put_slice(&rest[..pos]);
        out.put_u8(b' ');
        rest = &rest[pos + 1..];
    }
    out.put_slice(rest);
    out.put_slice(b"\r\n");
}

/// `:<value>\r\n`.
pub fn write_integer<B: BufMut>(out: &mut B, value: i64) {
    write_header(out, b':', value);
}

/// `$<len>\r\n<data>\r\n`.
pub fn write_bulk<B: BufMut>(out: &mut B, data: &[u8]) {
    write_header(out, b'$', len_i64(data.len()));
    out.put_slice(data);
    out.put_slice(b"\r\n");
}

/// An integer as a bulk string (e.g. `INCRBYFLOAT`, `HINCRBY` in replies that
/// Redis sends as bulk).
pub fn write_bulk_integer<B: BufMut>(out: &mut B, value: i64) {
    let mut digits = [0u8; MAX_I64_DIGITS];
    write_bulk(out, format_i64(value, &mut digits));
}

/// The null bulk string: RESP2 `$-1`, RESP3 `_`.
pub fn write_null<B: BufMut>(out: &mut B, protocol: Protocol) {
    out.put_slice(match protocol {
        Protocol::Resp2 => b"$-1\r\n",
        Protocol::Resp3 => b"_\r\n",
    });
}

/// The null array: RESP2 `*-1`, RESP3 `_`.
pub fn write_null_array<B: BufMut>(out: &mut B, protocol: Protocol) {
    out.put_slice(match protocol {
        Protocol::Resp2 => b"*-1\r\n",
        Protocol::Resp3 => b"_\r\n",
    });
}

/// `*<len>\r\n`, followed by `len` elements.
pub fn write_array_len<B: BufMut>(out: &mut B, len: usize) {
    write_header(out, b'*', len_i64(len));
}

/// A map header, followed by `len` key/value pairs: RESP3 `%<len>`, RESP2 a
/// flat array of `2 * len` elements.
pub fn write_map_len<B: BufMut>(out: &mut B, protocol: Protocol, len: usize) {
    match protocol {
        Protocol::Resp2 => write_header(out, b'*', len_i64(len) * 2),
        Protocol::Resp3 => write_header(out, b'%', len_i64(len)),
    }
}

/// A set header: RESP3 `~<len>`, RESP2 an array.
pub fn write_set_len<B: BufMut>(out: &mut B, protocol: Protocol, len: usize) {
    let kind = match protocol {
        Protocol::Resp2 => b'*',
        Protocol::Resp3 => b'~',
    };
    write_header(out, kind, len_i64(len));
}

/// A push header: RESP3 `><len>`, RESP2 an array.
pub fn write_push_len<B: BufMut>(out: &mut B, protocol: Protocol, len: usize) {
    let kind = match protocol {
        Protocol::Resp2 => b'*',
        Protocol::Resp3 => b'>',
    };
    write_header(out, kind, len_i64(len));
}

/// A double: RESP3 `,<%.17g>`, RESP2 a bulk string of the same text (Redis
/// 7.0 formatting; `inf`, `-inf`, `nan`).
pub fn write_double<B: BufMut>(out: &mut B, protocol: Protocol, value: f64) {
    let mut buf = [0u8; MAX_DOUBLE_CHARS];
    let text = format_double(value, &mut buf);
    match protocol {
        Protocol::Resp2 => write_bulk(out, text),
        Protocol::Resp3 => {
            out.put_u8(b',');
            out.put_slice(text);
            out.put_slice(b"\r\n");
        }
    }
}

/// A boolean: RESP3 `#t`/`#f`, RESP2 the integer 1 or 0.
pub fn write_bool<B: BufMut>(out: &mut B, protocol: Protocol, value: bool) {
    out.put_slice(match (protocol, value) {
        (Protocol::Resp2, true) => b":1\r\n",
        (Protocol::Resp2, false) => b":0\r\n",
        (Protocol::Resp3, true) => b"#t\r\n",
        (Protocol::Resp3, false) => b"#f\r\n",
    });
}

/// A big number given as its decimal digits: RESP3 `(<digits>`, RESP2 a bulk
/// string.
pub fn write_big_number<B: BufMut>(out: &mut B, protocol: Protocol, digits: &[u8]) {
    match protocol {
        Protocol::Resp2 => write_bulk(out, digits),
        Protocol::Resp3 => {
            out.put_u8(b'(');
            out.put_slice(digits);
            out.put_slice(b"\r\n");
        }
    }
}

/// A verbatim string with a three-byte format (`txt`, `mkd`): RESP3
/// `=<len>\r\n<fmt>:<text>`, RESP2 a bulk string of the text.
pub fn write_verbatim<B: BufMut>(out: &mut B, protocol: Protocol, format: &[u8; 3], text: &[u8]) {
    match protocol {
        Protocol::Resp2 => write_bulk(out, text),
        Protocol::Resp3 => {
            write_header(out, b'=', len_i64(text.len() + 4));
            out.put_slice(format);
            out.put_u8(b':');
            out.put_slice(text);
            out.put_slice(b"\r\n");
        }
    }
}
