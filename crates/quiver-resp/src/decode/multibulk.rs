//! Multibulk requests: `*N\r\n` then N times `$len\r\n<len bytes>\r\n`.
//!
//! Follows Redis's `processMultibulkBuffer`: a header line is found by its
//! `\r` and needs one more byte; the two bytes after a bulk are skipped; `*0`
//! and negative counts are empty requests.

use super::{ParseError, find_cr};
use crate::limits::{
    Limits, UNAUTHENTICATED_MAX_BULK_LEN_BYTES, UNAUTHENTICATED_MAX_MULTIBULK_LEN,
};
use crate::num::parse_i64;
use crate::request::Spans;

/// The fewest bytes one element takes (`$0\r\n\r\n`); bounds the argument
/// vector by the bytes actually present.
const MIN_ELEMENT_BYTES: usize = 6;

/// Scans the multibulk request at the start of `buf` (which starts with `*`),
/// pushing argument spans into `sink` if given. Returns the request length.
pub(super) fn scan(
    buf: &[u8],
    limits: &Limits,
    mut sink: Option<&mut Spans>,
) -> Result<usize, ParseError> {
    let (count, mut pos) = header(buf, 0, limits, ParseError::TooBigMultibulkCount)?;
    let count = match parse_i64(count) {
        Some(n) if n > limits.max_multibulk_len as i64 => {
            return Err(ParseError::InvalidMultibulkLength);
        }
        Some(n) if limits.unauthenticated && n > UNAUTHENTICATED_MAX_MULTIBULK_LEN as i64 => {
            return Err(ParseError::UnauthenticatedMultibulkLength);
        }
        Some(n) if n <= 0 => return Ok(pos),
        Some(n) => n as usize,
        None => return Err(ParseError::InvalidMultibulkLength),
    };
    if let Some(spans) = sink.as_deref_mut() {
        let present = (buf.len() - pos) / MIN_ELEMENT_BYTES + 1;
        *spans = Spans::with_capacity(count.min(present));
    }
    for _ in 0..count {
        if pos >= buf.len() {
            return Err(ParseError::Incomplete);
        }
        let (len_text, data_start) = header(buf, pos, limits, ParseError::TooBigBulkCount)?;
        if buf[pos] != b'$' {
            return Err(ParseError::ExpectedBulk { got: buf[pos] });
        }
        let len = bulk_len(&len_text[1..], limits)?;
        let data_end = data_start.saturating_add(len);
        if buf.len() < data_end.saturating_add(2) {
            return Err(ParseError::Incomplete);
        }
        if let Some(spans) = sink.as_deref_mut() {
            spans.push(data_start, data_end);
        }
        pos = data_end + 2;
    }
    Ok(pos)
}

/// The header line at `pos` (without its `\r`) and the position after its
/// line ending, skipping the `*` for the count line.
fn header<'a>(
    buf: &'a [u8],
    pos: usize,
    limits: &Limits,
    too_big: ParseError,
) -> Result<(&'a [u8], usize), ParseError> {
    let Some(cr) = find_cr(buf, pos, limits.max_inline_len_bytes) else {
        if buf.len() - pos > limits.max_inline_len_bytes {
            return Err(too_big);
        }
        return Err(ParseError::Incomplete);
    };
    if cr + 1 >= buf.len() {
        return Err(ParseError::Incomplete);
    }
    let skip = usize::from(pos == 0);
    Ok((&buf[pos + skip..cr], cr + 2))
}

/// Validates a bulk length against the limits, as Redis does.
fn bulk_len(text: &[u8], limits: &Limits) -> Result<usize, ParseError> {
    match parse_i64(text) {
        Some(n) if n < 0 || n as u64 > limits.max_bulk_len_bytes as u64 => {
            Err(ParseError::InvalidBulkLength)
        }
        Some(n)
            if limits.unauthenticated && n as u64 > UNAUTHENTICATED_MAX_BULK_LEN_BYTES as u64 =>
        {
            Err(ParseError::UnauthenticatedBulkLength)
        }
        Some(n) => usize::try_from(n).map_err(|_| ParseError::InvalidBulkLength),
        None => Err(ParseError::InvalidBulkLength),
    }
}
