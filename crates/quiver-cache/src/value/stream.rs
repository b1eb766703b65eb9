//! The Redis stream type: entries ordered by ID (`ms-seq`), each a list of field/value
//! pairs, with the bookkeeping Redis keeps (last ID, first ID, entries added, the largest
//! deleted ID).
//!
//! Entries sit in an ordered map. Redis stores them in nodes of at most
//! `stream-node-max-entries` (100) entries and `stream-node-max-bytes` (4096) bytes, and
//! approximate trimming (`~`) removes whole nodes only; the node boundaries are kept here
//! too ([`Node`]), so that `XTRIM ~` and `XADD … ~` keep the entries Redis would keep.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use bytes::Bytes;

use crate::memory::alloc_size;

/// Most entries in one node (Redis's `stream-node-max-entries`).
pub const NODE_MAX_ENTRIES: usize = 100;
/// Most bytes in one node, as this module counts them (Redis's `stream-node-max-bytes`).
pub const NODE_MAX_BYTES: usize = 4096;

/// A stream entry ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

impl StreamId {
    /// The smallest ID.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest ID.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// The ID right after this one, if any.
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self.ms.checked_add(1).map(|ms| StreamId { ms, seq: 0 }),
        }
    }

    /// The ID right before this one, if any.
    pub fn prev(self) -> Option<StreamId> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self
                .ms
                .checked_sub(1)
                .map(|ms| StreamId { ms, seq: u64::MAX }),
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// An entry's field/value pairs, flattened (field, value, field, value...), in one
/// allocation: the item count, then each item's length and bytes (lengths as `u32`; an
/// argument is at most 512 MiB). A stored entry costs one allocation and never keeps a
/// client's read buffer alive.
#[derive(Clone, PartialEq, Eq)]
pub struct Fields(Box<[u8]>);

impl Fields {
    /// The items, copied into one allocation.
    pub fn new<T: AsRef<[u8]>>(items: &[T]) -> Fields {
        let total: usize = items.iter().map(|i| i.as_ref().len() + 4).sum();
        let mut data = Vec::with_capacity(4 + total);
        data.extend_from_slice(&(items.len() as u32).to_le_bytes());
        for item in items {
            let item = item.as_ref();
            data.extend_from_slice(&(item.len() as u32).to_le_bytes());
            data.extend_from_slice(item);
        }
        Fields(data.into_boxed_slice())
    }

    /// Number of items (fields and values).
    pub fn len(&self) -> usize {
        u32::from_le_bytes(self.0[..4].try_into().expect("a count")) as usize
    }

    /// Always false: an entry has at least one field and value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut rest = &self.0[4..];
        std::iter::from_fn(move || {
            let (len, tail) = rest.split_first_chunk::<4>()?;
            let len = u32::from_le_bytes(*len) as usize;
            let (item, tail) = tail.split_at(len);
            rest = tail;
            Some(item)
        })
    }

    /// Bytes of the items (what Redis compares with `stream-node-max-bytes`).
    fn raw_bytes(&self) -> usize {
        self.0.len() - 4 - 4 * self.len()
    }

    /// Heap bytes it takes.
    fn mem(&self) -> usize {
        alloc_size(self.0.len()) + 48
    }
}

impl fmt::Debug for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

impl From<Vec<Bytes>> for Fields {
    fn from(items: Vec<Bytes>) -> Fields {
        Fields::new(&items)
    }
}

/// A node of Redis's layout: how many entries it holds (deleted ones included, as Redis
/// counts them for "full"), how many are live, its first entry's ID and fields (the
/// "master entry" later entries are compressed against), and the size of the listpack
/// Redis would hold it in.
#[derive(Debug, Clone)]
struct Node {
    first: StreamId,
    master_fields: Fields,
    total: usize,
    live: usize,
    bytes: usize,
}

/// A stream value.
#[derive(Debug, Clone, Default)]
pub struct StreamValue {
    /// Entries in ID order: appended at the back, trimmed from the front.
    entries: VecDeque<(StreamId, Fields)>,
    nodes: VecDeque<Node>,
    /// The ID of the last entry ever added (0-0 for none).
    pub(crate) last_id: StreamId,
    /// The largest ID deleted (XDEL, trimming), 0-0 for none.
    pub(crate) max_deleted: StreamId,
    /// Entries ever added.
    pub(crate) entries_added: u64,
    /// Consumer groups, by name.
    groups: BTreeMap<Bytes, Group>,
    mem: usize,
}

/// Listpack sizes, to place node boundaries where Redis places them.
mod listpack {
    /// Bytes of a listpack's header and end marker.
    pub(super) const EMPTY: usize = 7;

    use crate::rdb::back_length_bytes as backlen;

    /// An integer element.
    pub(super) fn int(value: i64) -> usize {
        let encoded = match value {
            0..=127 => 1,
            -4096..=4095 => 2,
            -32_768..=32_767 => 3,
            -8_388_608..=8_388_607 => 4,
            -2_147_483_648..=2_147_483_647 => 5,
            _ => 9,
        };
        encoded + backlen(encoded)
    }

    /// A string element: stored as an integer when it reads as one, as Redis does.
    pub(super) fn string(bytes: &[u8]) -> usize {
        if let Some(value) = as_int(bytes) {
            return int(value);
        }
        let header = match bytes.len() {
            0..=63 => 1,
            64..=4095 => 2,
            _ => 5,
        };
        let len = header + bytes.len();
        len + backlen(len)
    }

    /// The integer a string spells canonically (no sign but `-`, no leading zero).
    fn as_int(bytes: &[u8]) -> Option<i64> {
        if bytes.is_empty() || bytes.len() > 20 {
            return None;
        }
        let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
        if digits.is_empty()
            || !digits.iter().all(u8::is_ascii_digit)
            || (digits[0] == b'0' && (digits.len() > 1 || bytes[0] == b'-'))
        {
            return None;
        }
        std::str::from_utf8(bytes).ok()?.parse().ok()
    }

    /// A number that is a difference of IDs, as Redis appends it (an `i64`).
    pub(super) fn diff(value: u64) -> usize {
        int(value as i64)
    }
}

/// A new node's listpack with the master entry for `fields` (count 1, deleted 0, the
/// field names, the terminator).
fn new_node_bytes(fields: &Fields) -> usize {
    let names = fields.iter().step_by(2);
    listpack::EMPTY
        + listpack::int(1)
        + listpack::int(0)
        + listpack::int(fields.len() as i64 / 2)
        + names.map(listpack::string).sum::<usize>()
        + listpack::int(0)
}

/// What one entry adds to its node's listpack: flags, the ID as differences from the
/// node's first, the fields (only the values when they are the master entry's fields),
/// and the element count for walking back.
fn entry_bytes(node: &Node, id: StreamId, fields: &Fields) -> usize {
    let same = fields.len() == node.master_fields.len()
        && fields
            .iter()
            .step_by(2)
            .zip(node.master_fields.iter().step_by(2))
            .all(|(a, b)| a == b);
    let pairs = fields.len() / 2;
    let (body, elements) = if same {
        let values: usize = fields.iter().skip(1).step_by(2).map(listpack::string).sum();
        (values, pairs + 3)
    } else {
        let all: usize = fields.iter().map(listpack::string).sum();
        (listpack::int(pairs as i64) + all, pairs * 2 + 1 + 3)
    };
    listpack::int(2)
        + listpack::diff(id.ms.wrapping_sub(node.first.ms))
        + listpack::diff(id.seq.wrapping_sub(node.first.seq))
        + body
        + listpack::int(elements as i64)
}

impl StreamValue {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no entry (a stream key can exist empty).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first entry's ID (0-0 when empty).
    pub fn first_id(&self) -> StreamId {
        self.entries.front().map(|(id, _)| *id).unwrap_or_default()
    }

    /// The last entry's ID, if any.
    pub fn last_entry_id(&self) -> Option<StreamId> {
        self.entries.back().map(|(id, _)| *id)
    }

    /// Appends an entry with `id` (greater than `last_id`: the caller checked).
    pub(crate) fn append(&mut self, id: StreamId, fields: Fields) {
        self.mem += fields.mem();
        let full = self.nodes.back().is_none_or(|node| {
            node.bytes + fields.raw_bytes() >= NODE_MAX_BYTES || node.total >= NODE_MAX_ENTRIES
        });
        if full {
            self.nodes.push_back(Node {
                first: id,
                master_fields: fields.clone(),
                total: 0,
                live: 0,
                bytes: new_node_bytes(&fields),
            });
        }
        let node = self.nodes.back_mut().expect("a node to append to");
        node.bytes += entry_bytes(node, id, &fields);
        node.total += 1;
        node.live += 1;
        self.entries.push_back((id, fields));
        self.last_id = id;
        self.entries_added += 1;
    }

    /// The live entries node by node, as Redis's listpacks hold them: each node's first
    /// ID and master fields, and its entries.
    pub(crate) fn node_entries(
        &self,
    ) -> impl Iterator<Item = (StreamId, &Fields, impl Iterator<Item = &(StreamId, Fields)>)> {
        let mut at = 0;
        self.nodes.iter().filter(|n| n.live > 0).map(move |node| {
            let entries = self.entries.range(at..at + node.live);
            at += node.live;
            (node.first, &node.master_fields, entries)
        })
    }

    /// Entries from `start` to `end` (inclusive), in order or reversed, at most `count`.
    pub fn range(
        &self,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        rev: bool,
    ) -> Vec<(StreamId, Fields)> {
        if start > end {
            return Vec::new();
        }
        let limit = count.unwrap_or(usize::MAX);
        let upto = self.entries.partition_point(|(id, _)| *id <= end);
        let range = self.entries.range(self.at(start)..upto);
        let pick = |(id, fields): &(StreamId, Fields)| (*id, fields.clone());
        if rev {
            range.rev().take(limit).map(pick).collect()
        } else {
            range.take(limit).map(pick).collect()
        }
    }

    /// The position of the first entry at or after `id`.
    fn at(&self, id: StreamId) -> usize {
        self.entries.partition_point(|(entry, _)| *entry < id)
    }

    /// The position of entry `id`, if it is there.
    fn index(&self, id: StreamId) -> Option<usize> {
        let at = self.at(id);
        (self.entries.get(at).is_some_and(|(entry, _)| *entry == id)).then_some(at)
    }

    /// Deletes the entry `id`; whether it was there.
    pub(crate) fn delete(&mut self, id: StreamId) -> bool {
        let Some(at) = self.index(id) else {
            return false;
        };
        let (_, fields) = self.entries.remove(at).expect("found above");
        self.forget(&fields);
        if id > self.max_deleted {
            self.max_deleted = id;
        }
        let at = self.node_of(id);
        let node = &mut self.nodes[at];
        node.live -= 1;
        if node.live == 0 {
            self.nodes.remove(at);
        }
        true
    }

    /// The index of the node holding `id`.
    fn node_of(&self, id: StreamId) -> usize {
        self.nodes.partition_point(|node| node.first <= id) - 1
    }

    fn forget(&mut self, fields: &Fields) {
        self.mem -= fields.mem();
    }

    /// Removes the first entry (trimming: unlike XDEL, not a deletion Redis records).
    fn pop_first(&mut self) {
        if let Some((_, fields)) = self.entries.pop_front() {
            self.forget(&fields);
            let node = self.nodes.front_mut().expect("an entry is in a node");
            node.live -= 1;
            if node.live == 0 {
                self.nodes.pop_front();
            }
        }
    }

    /// Trims from the head: exactly while `keep_going` holds for the first entry, or, when
    /// `approx`, whole nodes only, never more than `limit` entries (0: no limit). Returns
    /// the entries removed.
    pub(crate) fn trim(&mut self, strategy: TrimTo, approx: bool, limit: u64) -> u64 {
        let mut removed = 0u64;
        if approx {
            while let Some(node) = self.nodes.front() {
                let live = node.live as u64;
                if !self.whole_node_goes(0, strategy) || (limit > 0 && removed + live > limit) {
                    break;
                }
                for _ in 0..live {
                    self.pop_first();
                }
                removed += live;
            }
            return removed;
        }
        while let Some(first) = self.entries.front().map(|(id, _)| *id) {
            let goes = match strategy {
                TrimTo::MaxLen(max) => self.entries.len() as u64 > max,
                TrimTo::MinId(min) => first < min,
            };
            if !goes {
                break;
            }
            self.pop_first();
            removed += 1;
        }
        removed
    }

    /// Whether node `at` may go whole: the stream keeps at least `max` entries without it
    /// (MAXLEN), or its last entry is below `min` (MINID).
    fn whole_node_goes(&self, at: usize, strategy: TrimTo) -> bool {
        let node = &self.nodes[at];
        match strategy {
            TrimTo::MaxLen(max) => (self.entries.len() - node.live) as u64 >= max,
            TrimTo::MinId(min) => {
                let end = self
                    .nodes
                    .get(at + 1)
                    .map_or(StreamId::MAX, |next| next.first);
                // The node's last entry: the last one before the next node's first.
                let upto = self.entries.partition_point(|(id, _)| *id < end);
                let last = upto.checked_sub(1).and_then(|i| self.entries.get(i));
                last.is_some_and(|(last, _)| *last >= node.first && *last < min)
            }
        }
    }

    /// Heap bytes owned: entries, nodes, and the groups' consumers and pending entries
    /// (estimated per item; the groups are few).
    pub(crate) fn mem(&self) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| {
                let consumers: usize = g
                    .consumers
                    .iter()
                    .map(|(name, c)| alloc_size(name.len()) + 64 + c.pending.len() * 32)
                    .sum();
                alloc_size(name.len()) + 96 + g.pending.len() * 80 + consumers
            })
            .sum();
        alloc_size(std::mem::size_of::<Self>()) + self.mem + self.nodes.len() * 48 + groups
    }
}

/// What trimming keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimTo {
    /// At most this many entries.
    MaxLen(u64),
    /// Entries with IDs at or above this.
    MinId(StreamId),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_of(n: u64, fields: impl Fn(u64) -> Vec<Bytes>) -> StreamValue {
        let mut stream = StreamValue::default();
        for i in 1..=n {
            stream.append(StreamId { ms: i, seq: 0 }, fields(i).into());
        }
        stream
    }

    fn trimmed(mut stream: StreamValue) -> (u64, usize) {
        let removed = stream.trim(TrimTo::MaxLen(1), true, 0);
        (removed, stream.len())
    }

    /// The node sizes measured with redis-server 7.0.15 (XADD n entries, then
    /// `XTRIM MAXLEN ~ 1`): whole nodes go, the last stays.
    #[test]
    fn nodes_break_where_redis_breaks_them() {
        let small = |_| vec![Bytes::from_static(b"f"), Bytes::from_static(b"v")];
        let mut stream = stream_of(250, small);
        assert_eq!(stream.trim(TrimTo::MaxLen(120), true, 0), 100);
        assert_eq!(stream.len(), 150);
        let wide = |_| vec![Bytes::from_static(b"f"), Bytes::from(vec![b'x'; 100])];
        assert_eq!(trimmed(stream_of(200, wide)), (180, 20));
        let mixed = |i: u64| {
            vec![
                Bytes::from(format!("field{}", i % 3)),
                Bytes::from(vec![b'x'; 20]),
            ]
        };
        assert_eq!(trimmed(stream_of(200, mixed)), (100, 100));
    }

    /// More shapes, same measurement; IDs `i*1000-(i%7)`.
    #[test]
    fn nodes_break_where_redis_breaks_them_for_other_shapes() {
        let shaped = |n: u64, fields: &dyn Fn(u64) -> Vec<Bytes>| {
            let mut stream = StreamValue::default();
            for i in 1..=n {
                stream.append(
                    StreamId {
                        ms: i * 1000,
                        seq: i % 7,
                    },
                    fields(i).into(),
                );
            }
            trimmed(stream)
        };
        let b = |text: String| Bytes::from(text);
        let ints = |i: u64| vec![b("n".into()), b((i * 12345).to_string())];
        assert_eq!(shaped(300, &ints), (200, 100));
        let three = |i: u64| {
            vec![
                b("a".into()),
                b("x".repeat(30)),
                b("b".into()),
                b("y".repeat(10)),
                b("c".into()),
                b(i.to_string()),
            ]
        };
        assert_eq!(shaped(200, &three), (143, 57));
        let big = |_| vec![b("f".into()), b("z".repeat(1000))];
        assert_eq!(shaped(40, &big), (36, 4));
        let huge = |_| vec![b("f".into()), b("z".repeat(5000))];
        assert_eq!(shaped(5, &huge), (4, 1));
    }

    /// `radix-tree-keys` and `radix-tree-nodes` of XINFO STREAM, as redis-server 7.0.15
    /// reported them for streams of small entries with IDs `i*step` (and one trimmed).
    #[test]
    fn radix_tree_counts_match_redis() {
        let small = || vec![Bytes::from_static(b"f"), Bytes::from_static(b"v")];
        let counts = |n: u64, step: u64| {
            let mut stream = StreamValue::default();
            for i in 1..=n {
                stream.append(
                    StreamId {
                        ms: i * step,
                        seq: 0,
                    },
                    small().into(),
                );
            }
            stream
        };
        let of = |s: &StreamValue| (s.nodes(), s.radix_tree_nodes());
        assert_eq!(of(&StreamValue::default()), (0, 1));
        assert_eq!(of(&counts(250, 1)), (3, 8));
        assert_eq!(of(&counts(500, 1000)), (5, 12));
        assert_eq!(of(&counts(350, 70_000)), (4, 11));
        let mut trimmed = counts(1000, 1);
        trimmed.trim(TrimTo::MaxLen(500), true, 0);
        assert_eq!((trimmed.len(), of(&trimmed)), (500, (5, 14)));
    }
}

/// A pending entry: delivered to `consumer`, not acknowledged yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The consumer it was delivered to last.
    pub consumer: Bytes,
    /// When it was delivered last, ms since the Unix epoch.
    pub delivered_ms: u64,
    /// How many times it was delivered.
    pub deliveries: u64,
}

/// A consumer of a group.
#[derive(Debug, Clone, Default)]
pub struct Consumer {
    /// When it last read (or was created), ms since the Unix epoch.
    pub seen_ms: u64,
    /// The IDs pending for it.
    pub pending: std::collections::BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Debug, Clone, Default)]
pub struct Group {
    /// The last ID delivered to the group.
    pub last_delivered: StreamId,
    /// Entries read by the group, when known (Redis's `entries-read`).
    pub entries_read: Option<u64>,
    /// Every pending entry of the group.
    pub pending: BTreeMap<StreamId, Pending>,
    /// Its consumers, by name.
    pub consumers: BTreeMap<Bytes, Consumer>,
}

impl StreamValue {
    /// The groups, by name.
    pub fn groups(&self) -> &BTreeMap<Bytes, Group> {
        &self.groups
    }

    pub(crate) fn groups_mut(&mut self) -> &mut BTreeMap<Bytes, Group> {
        &mut self.groups
    }

    /// Whether an entry `id` is in the stream.
    pub fn contains(&self, id: StreamId) -> bool {
        self.index(id).is_some()
    }

    /// The entry `id`'s fields.
    pub fn get(&self, id: StreamId) -> Option<&Fields> {
        self.index(id).map(|at| &self.entries[at].1)
    }

    /// The largest ID deleted (0-0 for none).
    pub fn max_deleted(&self) -> StreamId {
        self.max_deleted
    }

    /// Entries ever added.
    pub fn entries_added(&self) -> u64 {
        self.entries_added
    }

    /// The last ID ever added.
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// Number of nodes (Redis's `radix-tree-keys`).
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// How many entries were added up to and including `id`, when that can be told
    /// (Redis's estimate of a consumer group's `entries-read`).
    pub fn entries_read_at(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.is_empty() && id <= self.last_id {
            return Some(self.entries_added);
        }
        if id == self.last_id {
            return Some(self.entries_added);
        }
        if id > self.last_id {
            return None;
        }
        let first = self.first_id();
        if self.max_deleted == StreamId::MIN || self.max_deleted < first {
            let before = self.entries_added - self.len() as u64;
            if id < first {
                return Some(before);
            }
            if id == first {
                return Some(before + 1);
            }
        }
        None
    }

    /// Whether an entry was deleted at or after `start`, among what the stream holds
    /// (a read counter past it cannot be trusted).
    pub fn deleted_since(&self, start: StreamId) -> bool {
        if self.is_empty()
            || self.max_deleted == StreamId::MIN
            || self.first_id() > self.max_deleted
        {
            return false;
        }
        start <= self.max_deleted
    }

    /// How many entries the group has not read yet, when that can be told; negative, as
    /// in Redis, when the group's read counter was set past the entries added.
    pub fn lag(&self, group: &Group) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        let read = match group.entries_read {
            Some(read) if !self.deleted_since(group.last_delivered) => Some(read),
            _ => self.entries_read_at(group.last_delivered),
        };
        read.map(|read| (self.entries_added as i64).wrapping_sub(read as i64))
    }
}

impl StreamValue {
    /// How many nodes Redis's radix tree of node IDs has (`radix-tree-nodes`): the
    /// tree's shape follows from the keys (each node's first ID, 16 bytes big-endian).
    pub fn radix_tree_nodes(&self) -> usize {
        let keys: Vec<StreamId> = self.nodes.iter().map(|node| node.first).collect();
        if keys.is_empty() {
            return 1;
        }
        rax_nodes(&keys, 0)
    }
}

/// Byte `i` (0..16) of an ID as Redis keys its radix tree: milliseconds then sequence,
/// most significant byte first.
fn key_byte(id: &StreamId, i: usize) -> u8 {
    let (word, at) = if i < 8 { (id.ms, i) } else { (id.seq, i - 8) };
    (word >> (56 - 8 * at)) as u8
}

/// Nodes of a radix tree holding the sorted `keys` (which share their first `depth`
/// bytes, see [`key_byte`]), from the node at `depth` down: a node holding a run of bytes shared by every
/// key below it, or one branching on a byte, and one node per key at its end.
fn rax_nodes(keys: &[StreamId], depth: usize) -> usize {
    let (first, last) = (&keys[0], &keys[keys.len() - 1]);
    let shared = (depth..16)
        .take_while(|&i| key_byte(first, i) == key_byte(last, i))
        .count();
    if depth + shared == 16 {
        // A single key: this node holds its rest (if any), then its end.
        return if shared == 0 { 1 } else { 2 };
    }
    if shared > 0 {
        return 1 + rax_nodes(keys, depth + shared);
    }
    let mut total = 1;
    let mut rest = keys;
    while let Some(head) = rest.first() {
        let byte = key_byte(head, depth);
        let split = rest.partition_point(|key| key_byte(key, depth) == byte);
        total += rax_nodes(&rest[..split], depth + 1);
        rest = &rest[split..];
    }
    total
}
