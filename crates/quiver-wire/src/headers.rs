//! Message headers, held as their encoded block so that decoding and re-encoding them is a
//! slice and a copy, never a per-header allocation.

use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};

use crate::limits::{MAX_HEADER_COUNT, MAX_HEADER_KEY_LEN, MAX_HEADER_VALUE_LEN};
use crate::reader::{DecodeError, Reader, limit};
use crate::writer::{self, EncodeError};

/// The headers of one message: `u8` count, then (`str8` key, `bytes16` value) pairs.
/// Empty when the message has none.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Headers {
    /// The encoded block including its count byte; empty for no headers.
    raw: Bytes,
}

impl Headers {
    /// No headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes `pairs`, checking each against the limits.
    pub fn from_pairs<'a, I>(pairs: I) -> Result<Self, EncodeError>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
    {
        let mut block = BytesMut::new();
        block.put_u8(0);
        let mut count = 0usize;
        for (key, value) in pairs {
            count += 1;
            limit_encode("header count", count, MAX_HEADER_COUNT)?;
            if key.is_empty() {
                return Err(EncodeError::Empty {
                    field: "header key",
                });
            }
            writer::put_bytes8(&mut block, "header key", key.as_bytes(), MAX_HEADER_KEY_LEN)?;
            writer::put_bytes16(&mut block, "header value", value, MAX_HEADER_VALUE_LEN)?;
        }
        if count == 0 {
            return Ok(Self::new());
        }
        block[0] = count as u8;
        Ok(Self {
            raw: block.freeze(),
        })
    }

    /// Whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Number of headers.
    pub fn len(&self) -> usize {
        self.raw.first().map_or(0, |&count| usize::from(count))
    }

    /// The (key, value) pairs in wire order.
    pub fn iter(&self) -> HeaderIter<'_> {
        HeaderIter {
            rest: self.raw.get(1..).unwrap_or_default(),
        }
    }

    /// Writes the block (a single zero byte when empty).
    pub(crate) fn write(&self, dst: &mut BytesMut) {
        if self.raw.is_empty() {
            dst.put_u8(0);
        } else {
            dst.put_slice(&self.raw);
        }
    }

    /// Encoded size of the block.
    pub(crate) fn encoded_len(&self) -> usize {
        self.raw.len().max(1)
    }

    /// Reads and validates one block, keeping it as a slice of the payload.
    pub(crate) fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        let start = reader.position();
        if Self::validate(reader)? == 0 {
            return Ok(Self::new());
        }
        Ok(Self {
            raw: reader.bytes().slice(start..reader.position()),
        })
    }

    /// Reads past one block, validating it; returns its header count.
    pub(crate) fn validate(reader: &mut Reader) -> Result<usize, DecodeError> {
        let count = usize::from(reader.u8("header count")?);
        limit("header count", count, MAX_HEADER_COUNT)?;
        for _ in 0..count {
            let key = reader.ref8("header key", MAX_HEADER_KEY_LEN)?;
            if key.is_empty() {
                return Err(DecodeError::NonCanonical {
                    field: "header key",
                    reason: "header keys are not empty",
                });
            }
            if std::str::from_utf8(key).is_err() {
                return Err(DecodeError::InvalidUtf8 {
                    field: "header key",
                });
            }
            reader.ref16("header value", MAX_HEADER_VALUE_LEN)?;
        }
        Ok(count)
    }

    /// The block `raw` (count byte included), already validated, as `Headers`.
    pub(crate) fn from_validated(raw: Bytes) -> Self {
        if raw.first().is_none_or(|&count| count == 0) {
            Self::new()
        } else {
            Self { raw }
        }
    }
}

fn limit_encode(field: &'static str, len: usize, max: usize) -> Result<(), EncodeError> {
    writer::limit(field, len, max)
}

/// Iterator over headers; built only over validated blocks.
#[derive(Clone)]
pub struct HeaderIter<'a> {
    rest: &'a [u8],
}

impl<'a> HeaderIter<'a> {
    /// Iterates a validated block (count byte first; empty for none).
    pub(crate) fn over_block(block: &'a [u8]) -> Self {
        Self {
            rest: block.get(1..).unwrap_or_default(),
        }
    }
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        // The block was validated when built or decoded, so `get` never fails here; if it
        // did, iteration would simply end.
        let (&key_len, rest) = self.rest.split_first()?;
        let key = rest.get(..usize::from(key_len))?;
        let rest = &rest[key.len()..];
        let value_len = usize::from(u16::from_le_bytes([*rest.first()?, *rest.get(1)?]));
        let value = rest.get(2..2 + value_len)?;
        self.rest = &rest[2 + value_len..];
        Some((std::str::from_utf8(key).unwrap_or_default(), value))
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (k, String::from_utf8_lossy(v))))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_iterate_and_read_back() {
        let headers = Headers::from_pairs([("content-type", &b"json"[..]), ("k", &b""[..])])
            .expect("within limits");
        assert_eq!(headers.len(), 2);
        let pairs: Vec<_> = headers.iter().collect();
        assert_eq!(pairs, vec![("content-type", &b"json"[..]), ("k", &b""[..])]);
        let mut buf = BytesMut::new();
        headers.write(&mut buf);
        assert_eq!(buf.len(), headers.encoded_len());
        let buf = buf.freeze();
        let mut reader = Reader::new(&buf, 0);
        assert_eq!(Headers::read(&mut reader), Ok(headers));
    }

    #[test]
    fn limits() {
        let many: Vec<(&str, &[u8])> = (0..=MAX_HEADER_COUNT).map(|_| ("k", &b"v"[..])).collect();
        assert!(matches!(
            Headers::from_pairs(many),
            Err(EncodeError::LimitExceeded { .. })
        ));
        assert_eq!(
            Headers::from_pairs([("", &b"v"[..])]),
            Err(EncodeError::Empty {
                field: "header key"
            })
        );
        let empty = Headers::from_pairs(std::iter::empty()).expect("no headers");
        assert!(empty.is_empty());
        assert_eq!(empty.encoded_len(), 1);
    }
}
