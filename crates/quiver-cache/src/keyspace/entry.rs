//! One key and its value, as the keyspace table stores it (48 bytes plus one allocation for
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

/// A stored key.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    buf: Box<[u8]>,
    pub(crate) value: Value,
    key_len: u32,
    /// LRU clock (seconds) or LFU (minutes << 8 | counter), per the eviction policy.
    pub(crate) access: u32,
    /// Position in the database's volatile list, or [`NOT_VOLATILE`].
    pub(crate) volatile_pos: u32,
}

impl Keyed for Entry {
    fn key(&self) -> &[u8] {
        &self.buf[..self.key_len as usize]
    }
}

impl Entry {
    /// A string entry; canonical integers take the integer form.
    pub(crate) fn string(key: &[u8], value: &[u8], access: u32) -> Self {
        let mut e = Self::with_value(key, Value::Inline, access);
        e.set_string(value);
        e
    }

    /// An entry holding `value` (not `Inline`).
    pub(crate) fn with_value(key: &[u8], value: Value, access: u32) -> Self {
        Self {
            buf: key.into(),
            value,
            key_len: u32::try_from(key.len())
                .expect("keys are bounded by MAX_STRING_BYTES < 4 GiB"),
            access,
            volatile_pos: NOT_VOLATILE,
        }
    }

    /// The same value under another key.
    pub(crate) fn rekeyed(&self, key: &[u8]) -> Self {
        let mut buf = Vec::with_capacity(key.len() + self.buf.len() - self.key_len as usize);
        buf.extend_from_slice(key);
        buf.extend_from_slice(&self.buf[self.key_len as usize..]);
        Self {
            buf: buf.into_boxed_slice(),
            value: self.value.clone(),
            key_len: u32::try_from(key.len())
                .expect("keys are bounded by MAX_STRING_BYTES < 4 GiB"),
            access: self.access,
            volatile_pos: NOT_VOLATILE,
        }
    }

    /// Heap bytes this entry owns (its buffer and value), not its table slot.
    pub(crate) fn mem(&self) -> usize {
        alloc_size(self.buf.len()) + self.value.mem()
    }

    /// The string value, or `WrongType`.
    pub(crate) fn str(&self) -> Result<StrRef<'_>, OpError> {
        match &self.value {
            Value::Inline => Ok(StrRef::Bytes(&self.buf[self.key_len as usize..])),
            Value::Int(i) => Ok(StrRef::Int(*i)),
            Value::Grown(v) => Ok(StrRef::Bytes(v)),
            _ => Err(OpError::WrongType),
        }
    }

    /// Replaces the value with the string `value`.
    pub(crate) fn set_string(&mut self, value: &[u8]) {
        let key_len = self.key_len as usize;
        if let Some(i) = parse_i64(value) {
            if self.buf.len() != key_len {
                self.buf = self.buf[..key_len].into();
            }
            self.value = Value::Int(i);
            return;
        }
        let mut buf = Vec::with_capacity(key_len + value.len());
        buf.extend_from_slice(&self.buf[..key_len]);
        buf.extend_from_slice(value);
        self.buf = buf.into_boxed_slice();
        self.value = Value::Inline;
    }

    /// Replaces the value with the integer `v`.
    pub(crate) fn set_int(&mut self, v: i64) {
        let key_len = self.key_len as usize;
        if self.buf.len() != key_len {
            self.buf = self.buf[..key_len].into();
        }
        self.value = Value::Int(v);
    }

    /// Replaces the value with a non-string value.
    pub(crate) fn set_value(&mut self, value: Value) {
        let key_len = self.key_len as usize;
        if self.buf.len() != key_len {
            self.buf = self.buf[..key_len].into();
        }
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
        self.buf.len() - self.key_len as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_is_compact() {
        assert_eq!(std::mem::size_of::<Entry>(), 48);
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
    }
}
