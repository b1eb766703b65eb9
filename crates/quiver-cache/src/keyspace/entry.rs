//! One key and its value, as the keyspace table stores it (40 bytes plus one allocation for
//! a string key: the key bytes followed by the value bytes).

use crate::error::OpError;
use crate::memory::alloc_size;
use crate::table::Keyed;
use crate::value::Value;
use crate::value::string::{format_i64, int_buf, parse_i64};

/// `volatile_pos` of a key without a TTL.
pub(crate) const NOT_VOLATILE: u32 = u32::MAX;

/// A string value borrowed from an entry.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StrRef<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl StrRef<'_> {
    /// Calls `f` with the string's bytes (integers are formatted on the stack).
    pub(crate) fn with<R>(self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            StrRef::Bytes(b) => f(b),
            StrRef::Int(i) => {
                let mut buf = int_buf();
                f(format_i64(i, &mut buf))
            }
        }
    }

    pub(crate) fn len(self) -> usize {
        self.with(|b| b.len())
    }

    pub(crate) fn to_vec(self) -> Vec<u8> {
        self.with(|b| b.to_vec())
    }
}

/// Key lengths below this take a one-byte prefix in the entry buffer; longer keys take this
/// marker byte followed by a 4-byte little-endian length.
const SHORT_KEY_MAX: usize = 0xFF;

/// Bytes of the key-length prefix for `key`.
fn prefix_len(key: &[u8]) -> usize {
    if key.len() < SHORT_KEY_MAX { 1 } else { 5 }
}

/// Writes the key-length prefix and the key into `buf`.
fn put_key(buf: &mut Vec<u8>, key: &[u8]) {
    if key.len() < SHORT_KEY_MAX {
        buf.push(key.len() as u8);
    } else {
        let len = u32::try_from(key.len()).expect("keys are bounded by MAX_STRING_BYTES < 4 GiB");
        buf.push(SHORT_KEY_MAX as u8);
        buf.extend_from_slice(&len.to_le_bytes());
    }
    buf.extend_from_slice(key);
}

/// A stored key (40 bytes): `buf` holds a key-length prefix, the key, and for `Inline`
/// strings the value, so a typical string key costs this plus one allocation.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    buf: Box<[u8]>,
    pub(crate) value: Value,
    /// LRU clock (seconds) or LFU (minutes << 8 | counter), per the eviction policy.
    pub(crate) access: u32,
    /// Position in the database's volatile list, or [`NOT_VOLATILE`].
    pub(crate) volatile_pos: u32,
}

impl Keyed for Entry {
    fn key(&self) -> &[u8] {
        let (start, end) = self.key_span();
        &self.buf[start..end]
    }
}

impl Entry {
    /// A string entry; canonical integers take the integer form. One allocation.
    pub(crate) fn string(key: &[u8], value: &[u8], access: u32) -> Self {
        Self::string_as(key, value, parse_i64(value), access)
    }

    /// A string entry kept as text even when it reads as an integer (what Redis
    /// stores for INCRBYFLOAT: "embstr", not "int").
    pub(crate) fn text(key: &[u8], value: &[u8], access: u32) -> Self {
        Self::string_as(key, value, None, access)
    }

    fn string_as(key: &[u8], value: &[u8], int: Option<i64>, access: u32) -> Self {
        let value_len = if int.is_some() { 0 } else { value.len() };
        let mut buf = Vec::with_capacity(prefix_len(key) + key.len() + value_len);
        put_key(&mut buf, key);
        let value = match int {
            Some(i) => Value::Int(i),
            None => {
                buf.extend_from_slice(value);
                Value::Inline
            }
        };
        Self {
            buf: buf.into_boxed_slice(),
            value,
            access,
            volatile_pos: NOT_VOLATILE,
        }
    }

    /// An entry holding `value` (not `Inline`).
    pub(crate) fn with_value(key: &[u8], value: Value, access: u32) -> Self {
        let mut buf = Vec::with_capacity(prefix_len(key) + key.len());
        put_key(&mut buf, key);
        Self {
            buf: buf.into_boxed_slice(),
            value,
            access,
            volatile_pos: NOT_VOLATILE,
        }
    }

    /// The same value under another key.
    pub(crate) fn rekeyed(&self, key: &[u8]) -> Self {
        let tail = &self.buf[self.key_span().1..];
        let mut buf = Vec::with_capacity(prefix_len(key) + key.len() + tail.len());
        put_key(&mut buf, key);
        buf.extend_from_slice(tail);
        Self {
            buf: buf.into_boxed_slice(),
            value: self.value.clone(),
            access: self.access,
            volatile_pos: NOT_VOLATILE,
        }
    }

    /// The entry's buffer: the key and an inline string value.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Where the key sits in `buf`.
    fn key_span(&self) -> (usize, usize) {
        match self.buf[0] as usize {
            SHORT_KEY_MAX => {
                let mut len = [0u8; 4];
                len.copy_from_slice(&self.buf[1..5]);
                (5, 5 + u32::from_le_bytes(len) as usize)
            }
            n => (1, 1 + n),
        }
    }

    /// Heap bytes this entry owns (its buffer and value), not its table slot.
    pub(crate) fn mem(&self) -> usize {
        alloc_size(self.buf.len()) + self.value.mem()
    }

    /// The string value, or `WrongType`.
    pub(crate) fn str(&self) -> Result<StrRef<'_>, OpError> {
        match &self.value {
            Value::Inline => Ok(StrRef::Bytes(&self.buf[self.key_span().1..])),
            Value::Int(i) => Ok(StrRef::Int(*i)),
            Value::Grown(v) => Ok(StrRef::Bytes(v)),
            _ => Err(OpError::WrongType),
        }
    }

    /// Drops inline string bytes, keeping prefix and key.
    fn truncate_to_key(&mut self) {
        let end = self.key_span().1;
        if self.buf.len() != end {
            self.buf = self.buf[..end].into();
        }
    }

    /// Replaces the value with the string `value`.
    pub(crate) fn set_string(&mut self, value: &[u8]) {
        if let Some(i) = parse_i64(value) {
            self.truncate_to_key();
            self.value = Value::Int(i);
            return;
        }
        self.set_text(value);
    }

    /// Replaces the value with the string `value`, kept as text.
    pub(crate) fn set_text(&mut self, value: &[u8]) {
        let end = self.key_span().1;
        if matches!(self.value, Value::Inline) && self.buf.len() == end + value.len() {
            // Same length: overwritten in place, sparing an allocation and a free.
            self.buf[end..].copy_from_slice(value);
            return;
        }
        let mut buf = Vec::with_capacity(end + value.len());
        buf.extend_from_slice(&self.buf[..end]);
        buf.extend_from_slice(value);
        self.buf = buf.into_boxed_slice();
        self.value = Value::Inline;
    }

    /// Replaces the value with the integer `v`.
    pub(crate) fn set_int(&mut self, v: i64) {
        self.truncate_to_key();
        self.value = Value::Int(v);
    }

    /// Replaces the value with a non-string value.
    pub(crate) fn set_value(&mut self, value: Value) {
        self.truncate_to_key();
        self.value = value;
    }

    /// The string as a growable buffer (for APPEND and SETRANGE), converting to `Grown`.
    pub(crate) fn grown_mut(&mut self) -> Result<&mut Vec<u8>, OpError> {
        if !matches!(self.value, Value::Grown(_)) {
            let bytes = self.str()?.to_vec();
            self.set_value(Value::Grown(Box::new(bytes)));
        }
        match &mut self.value {
            Value::Grown(v) => Ok(v),
            _ => unreachable!("converted to Grown just above"),
        }
    }

    /// Bytes of the inline string (for OBJECT ENCODING).
    pub(crate) fn inline_len(&self) -> usize {
        self.buf.len() - self.key_span().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_is_compact() {
        assert_eq!(std::mem::size_of::<Entry>(), 40);
    }

    #[test]
    fn string_forms() {
        let mut e = Entry::string(b"k", b"123", 0);
        assert!(matches!(e.value, Value::Int(123)));
        assert_eq!(e.str().unwrap().to_vec(), b"123");
        e.set_string(b"0123");
        assert_eq!(e.str().unwrap().to_vec(), b"0123");
        assert_eq!(e.key(), b"k");
        e.grown_mut().unwrap().extend_from_slice(b"x");
        assert_eq!(e.str().unwrap().to_vec(), b"0123x");
        let r = e.rekeyed(b"other");
        assert_eq!(r.key(), b"other");
        assert_eq!(r.str().unwrap().to_vec(), b"0123x");
        let long = vec![b'k'; 300];
        let mut e = Entry::string(&long, b"value", 0);
        assert_eq!(e.key(), &long[..]);
        assert_eq!(e.str().unwrap().to_vec(), b"value");
        e.set_string(b"VALUE");
        assert_eq!(e.key(), &long[..]);
        assert_eq!(e.str().unwrap().to_vec(), b"VALUE");
        e.set_string(b"42");
        assert_eq!(e.key(), &long[..]);
        assert_eq!(e.inline_len(), 0);
        e.set_string(b"ab");
        assert_eq!(e.str().unwrap().to_vec(), b"ab");
        let r = e.rekeyed(b"");
        assert_eq!(r.key(), b"");
        assert_eq!(r.str().unwrap().to_vec(), b"ab");
    }
}
