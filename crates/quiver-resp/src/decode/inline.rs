//! Inline requests: one line split on spaces with Redis's `sdssplitargs`
//! quoting rules (`"..."` with `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<c>`
//! escapes, `'...'` with `\'`), as `redis-cli` and telnet send them.
//!
//! Unquoted arguments are slices of the frame; when any argument is quoted,
//! all are unescaped into one new buffer.
//!
//! One deliberate difference: Redis refuses a line over the inline limit only
//! when the limit is reached before the `\n` has arrived, so whether a long
//! line passes depends on how the bytes were split into reads. Here a line
//! longer than the limit is always refused, whatever the read sizes.

use bytes::Bytes;

use super::ParseError;
use crate::limits::Limits;
use crate::request::Request;

/// Scans the inline request at the start of `buf`: the line through its
/// `\n`, its quotes validated. Returns the request length.
pub(super) fn scan(buf: &[u8], limits: &Limits) -> Result<usize, ParseError> {
    let window = buf.len().min(limits.max_inline_len_bytes.saturating_add(1));
    let Some(newline) = memchr::memchr(b'\n', &buf[..window]) else {
        if buf.len() > limits.max_inline_len_bytes {
            return Err(ParseError::TooBigInline);
        }
        return Err(ParseError::Incomplete);
    };
    let line = line_of(buf, newline);
    let mut pos = skip_blanks(line, 0);
    while pos < line.len() {
        let (end, _) = token(line, pos, None)?;
        pos = skip_blanks(line, end);
    }
    Ok(newline + 1)
}

/// Parses the inline request that is exactly `frame` (as found by `scan`).
pub(super) fn parse(frame: Bytes, limits: &Limits) -> Result<Request, ParseError> {
    let len = scan(&frame, limits)?;
    let line = line_of(&frame, len - 1);
    let mut spans = Vec::new();
    let mut any_quoted = false;
    let mut pos = skip_blanks(line, 0);
    while pos < line.len() {
        let (end, quoted) = token(line, pos, None)?;
        any_quoted |= quoted;
        spans.push((pos, end));
        pos = skip_blanks(line, end);
    }
    if !any_quoted {
        let mut request = Request::builder(frame.clone(), spans.len());
        for (start, end) in spans {
            request.push_span(start, end);
        }
        return Ok(request);
    }
    let mut data = Vec::with_capacity(line.len());
    let mut bounds = Vec::with_capacity(spans.len());
    for (start, _) in spans {
        let from = data.len();
        token(line, start, Some(&mut data))?;
        bounds.push((from, data.len()));
    }
    let mut request = Request::builder(Bytes::from(data), bounds.len());
    for (start, end) in bounds {
        request.push_span(start, end);
    }
    Ok(request)
}

/// The request line before the `\n` at `newline`: one trailing `\r` dropped,
/// and cut at the first NUL byte (Redis splits a C string).
fn line_of(buf: &[u8], newline: usize) -> &[u8] {
    let mut line = &buf[..newline];
    if let Some(stripped) = line.strip_suffix(b"\r") {
        line = stripped;
    }
    match memchr::memchr(0, line) {
        Some(nul) => &line[..nul],
        None => line,
    }
}

/// C's `isspace` in the C locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn skip_blanks(line: &[u8], mut pos: usize) -> usize {
    while pos < line.len() && is_space(line[pos]) {
        pos += 1;
    }
    pos
}

/// Inside a token: plain, in double quotes, or in single quotes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Double,
    Single,
}

/// Scans one token starting at `pos` (not a blank), appending its unescaped
/// bytes to `out` if given. Returns the position after the token and whether
/// it used quotes.
fn token(
    line: &[u8],
    mut pos: usize,
    mut out: Option<&mut Vec<u8>>,
) -> Result<(usize, bool), ParseError> {
    let mut quote = Quote::None;
    let mut quoted = false;
    let mut emit = |b: u8| {
        if let Some(out) = out.as_deref_mut() {
            out.push(b);
        }
    };
    loop {
        let c = line.get(pos).copied();
        match quote {
            Quote::None => match c {
                None | Some(b' ' | b'\n' | b'\r' | b'\t') => return Ok((pos, quoted)),
                Some(b'"') => quote = Quote::Double,
                Some(b'\'') => quote = Quote::Single,
                Some(b) => emit(b),
            },
            Quote::Double => match c {
                None => return Err(ParseError::UnbalancedQuotes),
                Some(b'\\')
                    if line.get(pos + 1) == Some(&b'x') && hex_pair(line, pos + 2).is_some() =>
                {
                    emit(hex_pair(line, pos + 2).expect("checked by the guard"));
                    pos += 3;
                }
                Some(b'\\') if pos + 1 < line.len() => {
                    pos += 1;
                    emit(match line[pos] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                }
                Some(b'"') => return close(line, pos),
                Some(b) => emit(b),
            },
            Quote::Single => match c {
                None => return Err(ParseError::UnbalancedQuotes),
                Some(b'\\') if line.get(pos + 1) == Some(&b'\'') => {
                    pos += 1;
                    emit(b'\'');
                }
                Some(b'\'') => return close(line, pos),
                Some(b) => emit(b),
            },
        }
        quoted |= quote != Quote::None;
        pos += 1;
    }
}

/// A closing quote at `pos` must be followed by a blank or the end.
fn close(line: &[u8], pos: usize) -> Result<(usize, bool), ParseError> {
    match line.get(pos + 1) {
        Some(&next) if !is_space(next) => Err(ParseError::UnbalancedQuotes),
        _ => Ok((pos + 1, true)),
    }
}

fn hex_pair(line: &[u8], pos: usize) -> Option<u8> {
    let hi = (*line.get(pos)? as char).to_digit(16)?;
    let lo = (*line.get(pos + 1)? as char).to_digit(16)?;
    Some((hi * 16 + lo) as u8)
}
