//! Records inside a batch's plain payload: 16-byte record header, headers block, value.

use bytes::Bytes;

use super::batch::BatchFault;
use super::{i64_at, u16_at, u32_at};

/// Fixed bytes in front of every record.
pub const RECORD_HEADER_BYTES: usize = 16;
/// Fixed bytes in front of each header's key and value.
const HEADER_FIELD_BYTES: usize = 6;

/// One record header: opaque key and value bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub key: Bytes,
    pub value: Bytes,
}

/// Bytes a record takes in the plain payload.
pub fn encoded_len(value: &[u8], headers: &[(&[u8], &[u8])]) -> usize {
    RECORD_HEADER_BYTES + headers_len(headers) + value.len()
}

/// Bytes of the headers block.
pub fn headers_len(headers: &[(&[u8], &[u8])]) -> usize {
    headers
        .iter()
        .map(|(k, v)| HEADER_FIELD_BYTES + k.len() + v.len())
        .sum()
}

/// Appends one encoded record to `out`. The caller has checked the lengths against the
/// batch limit (so they fit their `u32`/`u16` fields).
pub fn encode(out: &mut Vec<u8>, ts_delta_ms: i64, value: &[u8], headers: &[(&[u8], &[u8])]) {
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(&(headers_len(headers) as u32).to_le_bytes());
    out.extend_from_slice(&ts_delta_ms.to_le_bytes());
    for (k, v) in headers {
        out.extend_from_slice(&(k.len() as u16).to_le_bytes());
        out.extend_from_slice(k);
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
    out.extend_from_slice(value);
}

/// One decoded record, borrowing from the batch payload.
#[derive(Clone, Debug)]
pub struct RawRecord {
    pub ts_delta_ms: i64,
    pub headers: Bytes,
    pub value: Bytes,
}

/// Walks the records of a plain payload, checking every length against what remains.
#[derive(Debug)]
pub struct RecordIter {
    payload: Bytes,
    pos: usize,
    left: u32,
}

impl RecordIter {
    pub fn new(payload: Bytes, count: u32) -> RecordIter {
        RecordIter {
            payload,
            pos: 0,
            left: count,
        }
    }

    /// Checks that exactly `count` records fill the payload, without building them.
    pub fn validate(payload: &[u8], count: u32) -> Result<(), BatchFault> {
        let mut pos = 0usize;
        for _ in 0..count {
            pos = record_end(payload, pos).ok_or(BatchFault::Records)?;
        }
        if pos != payload.len() {
            return Err(BatchFault::Records);
        }
        Ok(())
    }
}

/// End position of the record starting at `pos`, if it fits and its headers parse.
fn record_end(p: &[u8], pos: usize) -> Option<usize> {
    let fixed_end = pos.checked_add(RECORD_HEADER_BYTES)?;
    if fixed_end > p.len() {
        return None;
    }
    let value_len = u32_at(p, pos) as usize;
    let headers_len = u32_at(p, pos + 4) as usize;
    let headers_end = fixed_end.checked_add(headers_len)?;
    let end = headers_end.checked_add(value_len)?;
    if end > p.len() {
        return None;
    }
    check_headers(&p[fixed_end..headers_end])?;
    Some(end)
}

/// Checks that a headers block is a whole number of headers.
fn check_headers(mut b: &[u8]) -> Option<()> {
    while !b.is_empty() {
        if b.len() < 2 {
            return None;
        }
        let key_len = u16_at(b, 0) as usize;
        let value_len_at = 2 + key_len;
        if b.len() < value_len_at + 4 {
            return None;
        }
        let value_len = u32_at(b, value_len_at) as usize;
        let end = (value_len_at + 4).checked_add(value_len)?;
        if end > b.len() {
            return None;
        }
        b = &b[end..];
    }
    Some(())
}

/// Splits a checked headers block into headers.
pub fn split_headers(block: &Bytes) -> Vec<Header> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 2 <= block.len() {
        let key_len = u16_at(block, pos) as usize;
        let key = block.slice(pos + 2..pos + 2 + key_len);
        let vl_at = pos + 2 + key_len;
        let value_len = u32_at(block, vl_at) as usize;
        let value = block.slice(vl_at + 4..vl_at + 4 + value_len);
        out.push(Header { key, value });
        pos = vl_at + 4 + value_len;
    }
    out
}

impl Iterator for RecordIter {
    type Item = RawRecord;

    /// Yields records of a payload that `validate` accepted; stops early on any
    /// inconsistency rather than panicking.
    fn next(&mut self) -> Option<RawRecord> {
        if self.left == 0 {
            return None;
        }
        let p = &self.payload;
        let start = self.pos;
        let end = record_end(p, start)?;
        let value_len = u32_at(p, start) as usize;
        let headers_len = u32_at(p, start + 4) as usize;
        let ts_delta_ms = i64_at(p, start + 8);
        let h0 = start + RECORD_HEADER_BYTES;
        let rec = RawRecord {
            ts_delta_ms,
            headers: p.slice(h0..h0 + headers_len),
            value: p.slice(h0 + headers_len..h0 + headers_len + value_len),
        };
        self.pos = end;
        self.left -= 1;
        Some(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_with_headers() {
        let mut out = Vec::new();
        encode(&mut out, 0, b"one", &[]);
        encode(&mut out, -5, b"two", &[(b"k", b"vv"), (b"", b"")]);
        assert_eq!(
            out.len(),
            encoded_len(b"one", &[]) + encoded_len(b"two", &[(b"k", b"vv"), (b"", b"")])
        );
        RecordIter::validate(&out, 2).unwrap();
        assert!(RecordIter::validate(&out, 1).is_err());
        assert!(RecordIter::validate(&out, 3).is_err());
        let recs: Vec<_> = RecordIter::new(Bytes::from(out), 2).collect();
        assert_eq!(&recs[1].value[..], b"two");
        assert_eq!(recs[1].ts_delta_ms, -5);
        let hs = split_headers(&recs[1].headers);
        assert_eq!(hs.len(), 2);
        assert_eq!(&hs[0].value[..], b"vv");
    }

    #[test]
    fn truncated_payload_is_rejected() {
        let mut out = Vec::new();
        encode(&mut out, 0, b"value", &[(b"key", b"v")]);
        for cut in 0..out.len() {
            assert!(RecordIter::validate(&out[..cut], 1).is_err());
        }
    }
}
