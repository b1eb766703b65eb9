//! The hash table under the keyspace and under every hash, set and sorted-set value.
//!
//! Items live densely in a `Vec` (O(1) uniform random sampling for eviction, RANDOMKEY,
//! SPOP; removal swaps the last item into the hole), and an open-addressing index of `u64`
//! slots maps hashes to item positions. A slot packs the item's 32-bit hash (high half) and
//! its position plus one (low half; 0 = empty). Probing is linear and removal shifts later
//! slots back, so an item always sits in the unbroken run of slots that starts at its home
//! slot `hash & mask`. That is what makes SCAN work as Redis's does: the cursor walks home
//! slots in reverse-binary order, and for each home slot returns every item whose home it is
//! (found by walking that run). Growing or shrinking the power-of-two index keeps Redis's
//! guarantee: an item present for the whole scan is returned at least once.

use std::mem::size_of;

use crate::chunks::Chunks;
use crate::memory::{alloc_size, vec_size};

/// Smallest index size once anything is stored.
const MIN_SLOTS: usize = 8;
/// Grow when more than 3/4 of slots would be in use: linear probing slows sharply past that.
const MAX_LOAD_NUM: usize = 3;
const MAX_LOAD_DEN: usize = 4;
/// Shrink when fewer than 1/8 of slots are in use (Redis shrinks below 1/10), rebuilding at
/// about half load so a few inserts do not grow it straight back.
const MIN_LOAD_DEN: usize = 8;
/// Positions are stored as `u32` plus one in the slot's low half.
pub const MAX_TABLE_ITEMS: usize = u32::MAX as usize - 1;

/// Something stored in a [`Table`]: it has a byte key.
pub trait Keyed {
    /// The item's key.
    fn key(&self) -> &[u8];
}

/// Dense items plus an open-addressing index; see the module docs.
#[derive(Debug, Clone)]
pub struct Table<T> {
    slots: Vec<u64>,
    items: Chunks<T>,
}

fn home(hash32: u32, mask: usize) -> usize {
    hash32 as usize & mask
}

fn pack(hash32: u32, idx: usize) -> u64 {
    (u64::from(hash32) << 32) | (idx as u64 + 1)
}

fn slot_hash(slot: u64) -> u32 {
    (slot >> 32) as u32
}

fn slot_idx(slot: u64) -> usize {
    (slot as u32) as usize - 1
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            items: Chunks::default(),
        }
    }
}

/// The 32 bits of a full hash the table uses.
pub fn hash32(hash: u64) -> u32 {
    hash as u32
}

impl<T: Keyed> Table<T> {
    /// An empty table that allocates nothing.
    pub const fn new() -> Self {
        Self {
            slots: Vec::new(),
            items: Chunks::new(),
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// All items, in storage order.
    pub fn items(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    /// The item at `idx`.
    pub fn at(&self, idx: usize) -> &T {
        self.items.get(idx)
    }

    /// The item at `idx`, mutably. Its key must not change.
    pub fn at_mut(&mut self, idx: usize) -> &mut T {
        self.items.get_mut(idx)
    }

    /// Position of the item with `key` (whose full hash is `hash`).
    pub fn find(&self, hash: u64, key: &[u8]) -> Option<usize> {
        self.candidates(hash)
            .find(|&idx| self.items.get(idx).key() == key)
    }

    /// Positions of the items in `hash`'s run of slots whose 32-bit hash matches, in
    /// probing order.
    fn candidates(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        let h = hash32(hash);
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = home(h, mask);
        std::iter::from_fn(move || {
            loop {
                let s = *self.slots.get(i)?;
                if s == 0 {
                    return None;
                }
                i = (i + 1) & mask;
                if slot_hash(s) == h {
                    return Some(slot_idx(s));
                }
            }
        })
    }

    /// The item a lookup of `hash` compares first, if any: the memory a lookup touches,
    /// for reading ahead of a batch of lookups.
    pub fn first_candidate(&self, hash: u64) -> Option<&T> {
        self.candidates(hash).next().map(|idx| self.items.get(idx))
    }

    /// Adds `item`, whose key must not be present; returns its position.
    pub fn insert_new(&mut self, hash: u64, item: T) -> usize {
        assert!(
            self.items.len() < MAX_TABLE_ITEMS,
            "a table holds at most MAX_TABLE_ITEMS items; memory runs out long before"
        );
        if (self.items.len() + 1) * MAX_LOAD_DEN > self.slots.len() * MAX_LOAD_NUM {
            let want = (self.slots.len() * 2).max(MIN_SLOTS);
            self.rebuild(want);
        }
        let idx = self.items.len();
        self.items.push(item);
        self.place(pack(hash32(hash), idx));
        idx
    }

    /// Removes the item at `idx` (whose full hash is `hash`); the last item moves into its
    /// position. Returns the removed item; `rehash` gives the full hash of any item (used
    /// for the one that moves).
    pub fn remove_at(&mut self, idx: usize, hash: u64, rehash: impl Fn(&T) -> u64) -> T {
        let pos = self.slot_of(hash32(hash), idx);
        self.delete_slot(pos);
        let last = self.items.len() - 1;
        if idx != last {
            let moved_hash = hash32(rehash(self.items.get(last)));
            let moved_pos = self.slot_of(moved_hash, last);
            self.slots[moved_pos] = pack(moved_hash, idx);
        }
        let item = self.items.swap_remove(idx);
        self.maybe_shrink();
        item
    }

    /// Removes everything and frees the memory.
    pub fn clear(&mut self) {
        self.slots = Vec::new();
        self.items.clear();
    }

    /// Bytes the table's own buffers take (not what items point to).
    pub fn struct_bytes(&self) -> usize {
        vec_size::<u64>(self.slots.capacity()) + self.items.bytes()
    }

    /// One SCAN step: calls `f` on every item whose home slot is `cursor`'s, and returns the
    /// next cursor (0 when the scan is complete).
    pub fn scan_step(&self, cursor: u64, mut f: impl FnMut(&T)) -> u64 {
        if self.slots.is_empty() {
            return 0;
        }
        let mask = self.slots.len() - 1;
        let start = cursor as usize & mask;
        let mut i = start;
        loop {
            let s = self.slots[i];
            if s == 0 {
                break;
            }
            if home(slot_hash(s), mask) == start {
                f(self.items.get(slot_idx(s)));
            }
            i = (i + 1) & mask;
            if i == start {
                break;
            }
        }
        next_cursor(cursor, mask as u64)
    }

    fn slot_of(&self, h: u32, idx: usize) -> usize {
        let mask = self.slots.len() - 1;
        let want = pack(h, idx);
        let mut i = home(h, mask);
        loop {
            let s = self.slots[i];
            assert!(s != 0, "every stored item has a slot in its run");
            if s == want {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    fn place(&mut self, slot: u64) {
        let mask = self.slots.len() - 1;
        let mut i = home(slot_hash(slot), mask);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    /// Backward-shift deletion: later slots of the run move into the hole when that keeps
    /// them between their home and their old place.
    fn delete_slot(&mut self, pos: usize) {
        let mask = self.slots.len() - 1;
        let mut hole = pos;
        let mut j = (pos + 1) & mask;
        loop {
            let s = self.slots[j];
            if s == 0 {
                break;
            }
            let h = home(slot_hash(s), mask);
            if (j.wrapping_sub(h) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.slots[hole] = s;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[hole] = 0;
    }

    fn maybe_shrink(&mut self) {
        if self.items.is_empty() {
            self.clear();
            return;
        }
        if self.slots.len() > MIN_SLOTS && self.items.len() * MIN_LOAD_DEN < self.slots.len() {
            let want = (self.items.len() * 2).next_power_of_two().max(MIN_SLOTS);
            self.rebuild(want);
            self.items.shrink_to(self.items.len() * 2);
        }
    }

    fn rebuild(&mut self, size: usize) {
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        for s in old.into_iter().filter(|s| *s != 0) {
            self.place(s);
        }
    }
}

/// Redis's reverse-binary cursor increment over a table of `mask + 1` slots.
fn next_cursor(cursor: u64, mask: u64) -> u64 {
    let mut v = cursor | !mask;
    v = v.reverse_bits();
    v = v.wrapping_add(1);
    v.reverse_bits()
}

/// Heap bytes of a boxed value of type `B` (the box itself).
pub fn box_size<B>() -> usize {
    alloc_size(size_of::<B>())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::hashed_table::HashedTable;
    use crate::rng::Rng;

    impl Keyed for Vec<u8> {
        fn key(&self) -> &[u8] {
            self
        }
    }

    fn k(i: u32) -> Vec<u8> {
        format!("k{i}").into_bytes()
    }

    #[test]
    fn first_candidate_follows_the_probe_run() {
        // Every item shares one home slot, so all but the first sit past it.
        let mut t: Table<Vec<u8>> = Table::new();
        let hash = |i: u64| (i << 8) | 5;
        for i in 0..6 {
            t.insert_new(hash(i), k(i as u32));
        }
        for i in 0..6 {
            assert_eq!(t.first_candidate(hash(i)), Some(&k(i as u32)));
        }
        assert_eq!(t.first_candidate(hash(9)), None);
        assert_eq!(Table::<Vec<u8>>::new().first_candidate(hash(0)), None);
    }

    #[test]
    fn insert_find_remove() {
        let mut t: HashedTable<Vec<u8>> = HashedTable::default();
        for i in 0..1000 {
            t.insert_new(k(i));
        }
        assert_eq!(t.len(), 1000);
        for i in 0..1000 {
            assert_eq!(t.at(t.find(&k(i)).unwrap()), &k(i));
        }
        for i in (0..1000).step_by(2) {
            assert_eq!(t.remove(&k(i)), Some(k(i)));
        }
        for i in 0..1000 {
            assert_eq!(t.find(&k(i)).is_some(), i % 2 == 1, "{i}");
        }
        for i in (1..1000).step_by(2) {
            t.remove(&k(i));
        }
        assert!(t.is_empty());
        assert_eq!(t.struct_bytes(), 0);
    }

    fn full_scan(t: &HashedTable<Vec<u8>>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut c = 0;
        loop {
            c = t.scan_step(c, |x| out.push(x.clone()));
            if c == 0 {
                return out;
            }
        }
    }

    #[test]
    fn scan_returns_every_item() {
        let mut t: HashedTable<Vec<u8>> = HashedTable::default();
        for i in 0..5000 {
            t.insert_new(k(i));
        }
        let seen: HashSet<_> = full_scan(&t).into_iter().collect();
        assert_eq!(seen.len(), 5000);
    }

    #[test]
    fn scan_guarantee_holds_while_growing_and_shrinking() {
        let mut rng = Rng::new(3);
        for round in 0..20 {
            let mut t: HashedTable<Vec<u8>> = HashedTable::default();
            // Stable items stay for the whole scan; churn items come and go.
            for i in 0..200 {
                t.insert_new(k(i));
            }
            let mut next = 1_000_000u32;
            let mut churn: Vec<Vec<u8>> = Vec::new();
            let mut seen = HashSet::new();
            let mut c = 0;
            let grow = round % 2 == 0;
            loop {
                c = t.scan_step(c, |x| {
                    seen.insert(x.clone());
                });
                for _ in 0..rng.below(40) {
                    if next >= 1_003_000 && churn.is_empty() {
                        break;
                    }
                    if next < 1_003_000 && (grow || churn.is_empty() || rng.below(3) == 0) {
                        let key = k(next);
                        next += 1;
                        t.insert_new(key.clone());
                        churn.push(key);
                    } else {
                        let key = churn.swap_remove(rng.below(churn.len()));
                        t.remove(&key);
                    }
                }
                if !grow && churn.len() > 10 {
                    // Shrinking phase: drop most churn items at once.
                    for key in churn.drain(..) {
                        t.remove(&key);
                    }
                }
                if c == 0 {
                    break;
                }
            }
            for i in 0..200 {
                assert!(seen.contains(&k(i)), "round {round}: stable key {i} missed");
            }
        }
    }

    #[test]
    fn next_cursor_visits_all_slots_once() {
        let mask = 15;
        let mut c = 0;
        let mut seen = HashSet::new();
        loop {
            assert!(seen.insert(c));
            c = next_cursor(c, mask);
            if c == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 16);
    }
}

#[cfg(test)]
mod probe_tests {
    use std::hash::BuildHasher;

    use super::*;

    impl Keyed for (Vec<u8>, u32) {
        fn key(&self) -> &[u8] {
            &self.0
        }
    }

    /// Linear probing stays short at the maximum load the table allows.
    #[test]
    fn probe_lengths_stay_short() {
        let state = foldhash::fast::FixedState::with_seed(7);
        let mut t: Table<(Vec<u8>, u32)> = Table::new();
        let n = 24_000u32; // just under 3/4 of 32768 slots
        for i in 0..n {
            let k = format!("key:{i:012}").into_bytes();
            t.insert_new(state.hash_one(&k[..]), (k, i));
        }
        let mask = t.slots.len() - 1;
        let mut total = 0usize;
        let mut worst = 0usize;
        for (pos, s) in t.slots.iter().enumerate() {
            if *s != 0 {
                let d = pos.wrapping_sub(home(slot_hash(*s), mask)) & mask;
                total += d + 1;
                worst = worst.max(d + 1);
            }
        }
        let avg = total as f64 / f64::from(n);
        assert!(avg < 3.0, "average probe length {avg}, worst {worst}");
    }
}
