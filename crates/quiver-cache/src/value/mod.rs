//! The value model: what a key can hold.

pub mod deque;
pub mod hash;
pub mod limits;
pub mod list;
pub mod set;
pub mod stream;
pub mod string;
pub mod zset;

use crate::memory::alloc_size;
use crate::table::Keyed;
use hash::HashValue;
use list::ListValue;
use set::SetValue;
use stream::StreamValue;
use zset::ZSetValue;

/// Strings up to this length report "embstr" (Redis's embedded-string limit).
const EMBSTR_MAX_BYTES: usize = 44;

/// The type of a key's value, as TYPE names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueType {
    /// A string (also integers).
    String,
    /// A list.
    List,
    /// A set.
    Set,
    /// A sorted set.
    ZSet,
    /// A hash.
    Hash,
    /// A stream.
    Stream,
}

impl ValueType {
    /// The name TYPE replies with.
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::List => "list",
            Self::Set => "set",
            Self::ZSet => "zset",
            Self::Hash => "hash",
            Self::Stream => "stream",
        }
    }

    /// The type named `name` (case-insensitive), as SCAN's TYPE option takes it.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        [
            Self::String,
            Self::List,
            Self::Set,
            Self::ZSet,
            Self::Hash,
            Self::Stream,
        ]
        .into_iter()
        .find(|t| t.name().as_bytes().eq_ignore_ascii_case(name))
    }
}

/// A stored value. String bytes of the `Inline` form live in the entry's buffer after the
/// key, so a typical string key costs one allocation.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// String bytes stored inline in the entry buffer.
    Inline,
    /// A string that is a canonical integer (the INCR fast path).
    Int(i64),
    /// A string grown in place by APPEND or SETRANGE, kept with spare capacity so repeated
    /// appends are amortized O(1). Boxed so `Value` stays two words.
    #[allow(clippy::box_collection)]
    Grown(Box<Vec<u8>>),
    Hash(Box<HashValue>),
    List(Box<ListValue>),
    Set(Box<SetValue>),
    ZSet(Box<ZSetValue>),
    Stream(Box<StreamValue>),
}

impl Value {
    /// The item a lookup of `member` (a hash field, a set or sorted-set member) compares
    /// first, if any: for reading ahead.
    pub(crate) fn member_candidate(&self, member: &[u8]) -> Option<&dyn Keyed> {
        match self {
            Self::Hash(hash) => hash.first_candidate(member),
            Self::Set(set) => set.first_candidate(member),
            Self::ZSet(zset) => zset.first_candidate(member),
            Self::Inline | Self::Int(_) | Self::Grown(_) | Self::List(_) | Self::Stream(_) => None,
        }
    }

    /// The bytes of a string kept apart from its entry (grown by APPEND, SETRANGE or
    /// SETBIT); empty for any other value: for reading ahead.
    pub(crate) fn grown_bytes(&self) -> &[u8] {
        match self {
            Self::Grown(bytes) => bytes,
            _ => &[],
        }
    }

    /// Elements that freeing the value frees one by one (1 for a string).
    pub(crate) fn elements(&self) -> usize {
        match self {
            Self::Inline | Self::Int(_) | Self::Grown(_) => 1,
            Self::Hash(hash) => hash.len(),
            Self::List(list) => list.len(),
            Self::Set(set) => set.len(),
            Self::ZSet(zset) => zset.len(),
            Self::Stream(stream) => stream.len().max(1),
        }
    }

    pub(crate) fn kind(&self) -> ValueType {
        match self {
            Self::Inline | Self::Int(_) | Self::Grown(_) => ValueType::String,
            Self::Hash(_) => ValueType::Hash,
            Self::List(_) => ValueType::List,
            Self::Set(_) => ValueType::Set,
            Self::ZSet(_) => ValueType::ZSet,
            Self::Stream(_) => ValueType::Stream,
        }
    }

    /// Heap bytes owned through this value (not the entry buffer).
    pub(crate) fn mem(&self) -> usize {
        match self {
            Self::Inline | Self::Int(_) => 0,
            Self::Grown(v) => alloc_size(std::mem::size_of::<Vec<u8>>()) + alloc_size(v.capacity()),
            Self::Hash(h) => h.mem(),
            Self::List(l) => l.mem(),
            Self::Set(s) => s.mem(),
            Self::ZSet(z) => z.mem(),
            Self::Stream(s) => s.mem(),
        }
    }

    /// OBJECT REFCOUNT as Redis reports it: values are never shared between keys here,
    /// but Redis shares the integers 0 to 9999 (when `shared_integers`) and reports them
    /// as referenced `i32::MAX` times.
    pub(crate) fn refcount(&self, shared_integers: bool) -> i64 {
        match self {
            Self::Int(n) if shared_integers && (0..10_000).contains(n) => i64::from(i32::MAX),
            _ => 1,
        }
    }

    pub(crate) fn encoding(&self, inline_len: usize) -> &'static str {
        match self {
            Self::Int(_) => "int",
            Self::Inline if inline_len <= EMBSTR_MAX_BYTES => "embstr",
            Self::Inline | Self::Grown(_) => "raw",
            Self::Hash(h) => h.encoding(),
            Self::List(l) => l.encoding(),
            Self::Set(s) => s.encoding(),
            Self::ZSet(z) => z.encoding(),
            Self::Stream(_) => "stream",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_stays_two_words() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    #[test]
    fn type_names() {
        assert_eq!(ValueType::from_name(b"ZSET"), Some(ValueType::ZSet));
        assert_eq!(ValueType::from_name(b"stream"), Some(ValueType::Stream));
        assert_eq!(ValueType::from_name(b"json"), None);
        assert_eq!(ValueType::Hash.name(), "hash");
    }
}
