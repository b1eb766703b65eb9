//! Set values over the scannable [`HashedTable`].

use crate::hashed_table::HashedTable;
use crate::memory::bytes_size;
use crate::table::{Keyed, box_size};
use crate::value::string::parse_i64;

// A set whose members have all been integers and that never grew past
// `set-max-intset-entries` reports "intset"; any other set "hashtable", as in Redis 7.0,
// which never converts back.
use super::limits::SET_MAX_INTSET_ENTRIES;

impl Keyed for Box<[u8]> {
    fn key(&self) -> &[u8] {
        self
    }
}

/// A set value.
#[derive(Debug, Clone, Default)]
pub struct SetValue {
    table: HashedTable<Box<[u8]>>,
    heap_bytes: usize,
    hashtable: bool,
}

impl SetValue {
    /// The entry a lookup of `member` compares first, if any: for reading ahead.
    pub(crate) fn first_candidate(&self, member: &[u8]) -> Option<&dyn Keyed> {
        self.table
            .first_candidate(member)
            .map(|item| item as &dyn Keyed)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Whether `member` is in the set.
    pub fn contains(&self, member: &[u8]) -> bool {
        self.table.find(member).is_some()
    }

    /// Adds `member`; returns true when it was not there.
    pub fn insert(&mut self, member: &[u8]) -> bool {
        if self.contains(member) {
            return false;
        }
        self.heap_bytes += bytes_size(member.len());
        self.table.insert_new(member.into());
        self.hashtable |= self.len() > SET_MAX_INTSET_ENTRIES.get() || parse_i64(member).is_none();
        true
    }

    /// Takes the encoding a set of these members made anew would have (an intset when it
    /// can be one), as Redis's SPOP does for what it leaves of a set.
    pub(crate) fn encode_anew(&mut self) {
        self.hashtable = self.len() > SET_MAX_INTSET_ENTRIES.get()
            || self.table.items().any(|m| parse_i64(m).is_none());
    }

    /// Removes `member`; returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.table.remove(member) {
            Some(m) => {
                self.heap_bytes -= bytes_size(m.len());
                true
            }
            None => false,
        }
    }

    /// Removes and returns the member at storage position `idx`.
    pub fn remove_at(&mut self, idx: usize) -> Box<[u8]> {
        let m = self.table.remove_at(idx);
        self.heap_bytes -= bytes_size(m.len());
        m
    }

    /// All members: an intset's in numeric order, as Redis keeps one (SMEMBERS, SSCAN,
    /// SINTER, SORT BY nosort list them so), others in storage order.
    pub fn members(&self) -> Box<dyn Iterator<Item = &Box<[u8]>> + '_> {
        if self.hashtable {
            return Box::new(self.table.items());
        }
        let mut members: Vec<(i64, &Box<[u8]>)> = self
            .table
            .items()
            .map(|m| (parse_i64(m).unwrap_or_default(), m))
            .collect();
        members.sort_unstable_by_key(|(value, _)| *value);
        Box::new(members.into_iter().map(|(_, m)| m))
    }

    /// The member at storage position `idx`.
    pub fn at(&self, idx: usize) -> &[u8] {
        self.table.at(idx)
    }

    /// One SSCAN step.
    pub fn scan_step(&self, cursor: u64, f: impl FnMut(&Box<[u8]>)) -> u64 {
        self.table.scan_step(cursor, f)
    }

    /// Heap bytes of this value, the box included.
    pub fn mem(&self) -> usize {
        box_size::<Self>() + self.table.struct_bytes() + self.heap_bytes
    }

    /// The encoding Redis would report for this set.
    pub fn encoding(&self) -> &'static str {
        if self.hashtable {
            "hashtable"
        } else {
            "intset"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_and_encodings() {
        let mut s = SetValue::default();
        assert!(s.insert(b"1"));
        assert!(!s.insert(b"1"));
        assert_eq!(s.encoding(), "intset");
        s.insert(b"a");
        assert_eq!(s.encoding(), "hashtable");
        for i in 0..200 {
            s.insert(format!("m{i}").as_bytes());
        }
        assert!(s.remove(b"a"));
        assert_eq!(s.encoding(), "hashtable", "never back to intset");
        assert!(!s.contains(b"a"));
        assert_eq!(s.len(), 201);
    }
}
