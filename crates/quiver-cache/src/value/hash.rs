//! Hash values: field -> value over the scannable [`HashedTable`].

use crate::hashed_table::HashedTable;
use crate::memory::bytes_size;
use crate::table::{Keyed, box_size};

use super::limits::{HASH_MAX_ENTRIES, HASH_MAX_VALUE};

/// One field of a hash.
#[derive(Debug, Clone)]
pub struct Field {
    /// The field name.
    pub name: Box<[u8]>,
    /// The field's value.
    pub value: Box<[u8]>,
}

impl Keyed for Field {
    fn key(&self) -> &[u8] {
        &self.name
    }
}

/// A hash value.
#[derive(Debug, Clone, Default)]
pub struct HashValue {
    table: HashedTable<Field>,
    heap_bytes: usize,
    big: bool,
}

impl HashValue {
    /// The entry a lookup of `member` compares first, if any: for reading ahead.
    pub(crate) fn first_candidate(&self, member: &[u8]) -> Option<&dyn Keyed> {
        self.table
            .first_candidate(member)
            .map(|item| item as &dyn Keyed)
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.table.find(field).map(|i| &*self.table.at(i).value)
    }

    /// Sets `field`; returns true when the field is new.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        self.note_sizes(field.len().max(value.len()));
        match self.table.find(field) {
            Some(i) => {
                let f = self.table.at_mut(i);
                if f.value.len() == value.len() {
                    // Same length: overwritten in place, sparing an allocation and a free.
                    f.value.copy_from_slice(value);
                    return false;
                }
                self.heap_bytes -= bytes_size(f.value.len());
                f.value = value.into();
                self.heap_bytes += bytes_size(value.len());
                false
            }
            None => {
                self.heap_bytes += bytes_size(field.len()) + bytes_size(value.len());
                self.table.insert_new(Field {
                    name: field.into(),
                    value: value.into(),
                });
                self.note_sizes(0);
                true
            }
        }
    }

    /// Removes `field`; returns whether it existed.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self.table.remove(field) {
            Some(f) => {
                self.heap_bytes -= bytes_size(f.name.len()) + bytes_size(f.value.len());
                true
            }
            None => false,
        }
    }

    /// All fields in storage order.
    pub fn fields(&self) -> impl Iterator<Item = &Field> {
        self.table.items()
    }

    /// The field at storage position `idx`.
    pub fn at(&self, idx: usize) -> &Field {
        self.table.at(idx)
    }

    /// One HSCAN step.
    pub fn scan_step(&self, cursor: u64, f: impl FnMut(&Field)) -> u64 {
        self.table.scan_step(cursor, f)
    }

    /// Heap bytes of this value, the box included.
    pub fn mem(&self) -> usize {
        box_size::<Self>() + self.table.struct_bytes() + self.heap_bytes
    }

    /// The encoding Redis would report for this hash.
    pub fn encoding(&self) -> &'static str {
        if self.big { "hashtable" } else { "listpack" }
    }

    fn note_sizes(&mut self, elem_len: usize) {
        if elem_len > HASH_MAX_VALUE.get() || self.len() > HASH_MAX_ENTRIES.get() {
            self.big = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_remove_and_memory() {
        let mut h = HashValue::default();
        let empty = h.mem();
        assert!(h.set(b"a", b"1"));
        assert!(!h.set(b"a", b"2"));
        assert_eq!(h.get(b"a"), Some(&b"2"[..]));
        assert!(h.mem() > empty);
        assert!(h.remove(b"a"));
        assert!(!h.remove(b"a"));
        assert_eq!(h.mem(), empty);
        assert_eq!(h.encoding(), "listpack");
        h.set(b"x", &[0; 100]);
        assert_eq!(h.encoding(), "hashtable");
    }
}
