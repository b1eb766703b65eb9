//! One value in RDB form: the type byte and the body, both ways, and DUMP/RESTORE on top.

use bytes::Bytes;

use super::packed::{
    Item, ListpackWriter, intset, intset_values, listpack_items, ziplist_items, zipmap_pairs,
};
use super::{
    Input, RDB_VERSION, Result, bad, crc64, write_int_string, write_length, write_raw_id,
    write_string,
};
use crate::commands::KeyCtx;
use crate::error::OpError;
use crate::evict::Clock;
use crate::keyspace::{Db, Entry, Event};
use crate::value::Value;
use crate::value::hash::HashValue;
use crate::value::list::ListValue;
use crate::value::set::SetValue;
use crate::value::stream::{Consumer, Fields, Group, Pending, StreamId, StreamValue};
use crate::value::zset::ZSetValue;

pub(crate) const TYPE_STRING: u8 = 0;
const TYPE_LIST: u8 = 1;
const TYPE_SET: u8 = 2;
const TYPE_ZSET: u8 = 3;
const TYPE_HASH: u8 = 4;
const TYPE_ZSET_2: u8 = 5;
const TYPE_HASH_ZIPMAP: u8 = 9;
const TYPE_LIST_ZIPLIST: u8 = 10;
const TYPE_SET_INTSET: u8 = 11;
const TYPE_ZSET_ZIPLIST: u8 = 12;
const TYPE_HASH_ZIPLIST: u8 = 13;
const TYPE_LIST_QUICKLIST: u8 = 14;
const TYPE_STREAM_LISTPACKS: u8 = 15;
const TYPE_HASH_LISTPACK: u8 = 16;
const TYPE_ZSET_LISTPACK: u8 = 17;
const TYPE_LIST_QUICKLIST_2: u8 = 18;
const TYPE_STREAM_LISTPACKS_2: u8 = 19;

/// Whether `t` is a value type this module reads.
pub(crate) fn is_value_type(t: u8) -> bool {
    matches!(t, 0..=5 | 10..=19) && t != 9
}

/// Bytes a quicklist node's listpack may grow to (`list-max-listpack-size -2`).
const QUICKLIST_NODE_BYTES: usize = 8192;
const QUICKLIST_PACKED: u64 = 2;
const QUICKLIST_PLAIN: u64 = 1;

/// Stream entry flags inside a node.
const STREAM_DELETED: i64 = 1;
const STREAM_SAME_FIELDS: i64 = 2;

/// Writes `entry`'s value: its type byte, `key` if given (a snapshot's form), then the
/// body.
pub(crate) fn write_value(out: &mut Vec<u8>, entry: &Entry, key: Option<&[u8]>) {
    let t = match &entry.value {
        Value::Int(_) | Value::Inline | Value::Grown(_) => TYPE_STRING,
        Value::List(_) => TYPE_LIST_QUICKLIST_2,
        Value::Set(set) if set.encoding() == "intset" => TYPE_SET_INTSET,
        Value::Set(_) => TYPE_SET,
        Value::ZSet(zset) if zset.encoding() == "listpack" => TYPE_ZSET_LISTPACK,
        Value::ZSet(_) => TYPE_ZSET_2,
        Value::Hash(hash) if hash.encoding() == "listpack" => TYPE_HASH_LISTPACK,
        Value::Hash(_) => TYPE_HASH,
        Value::Stream(_) => TYPE_STREAM_LISTPACKS_2,
    };
    out.push(t);
    if let Some(key) = key {
        write_string(out, key);
    }
    match &entry.value {
        Value::Int(v) => write_int_string(out, *v),
        Value::Inline | Value::Grown(_) => {
            let bytes = entry.str().expect("a string value");
            bytes.with(|b| write_string(out, b));
        }
        Value::List(list) => write_list(out, list),
        Value::Set(set) => write_set(out, set, t == TYPE_SET_INTSET),
        Value::ZSet(zset) => write_zset(out, zset, t == TYPE_ZSET_LISTPACK),
        Value::Hash(hash) => write_hash(out, hash, t == TYPE_HASH_LISTPACK),
        Value::Stream(stream) => write_stream(out, stream),
    }
}

/// A list as Redis 7.0's quicklist holds it after pushes at the tail: listpack nodes
/// filled up to the node size, each written as a string.
fn write_list(out: &mut Vec<u8>, list: &ListValue) {
    let nodes = quicklist_nodes(list);
    write_length(out, nodes.len() as u64);
    for node in nodes {
        write_length(out, QUICKLIST_PACKED);
        write_string(out, &node);
    }
}

/// The listpacks of `list`'s quicklist nodes.
fn quicklist_nodes(list: &ListValue) -> Vec<Vec<u8>> {
    let mut nodes = Vec::new();
    let mut node = ListpackWriter::new();
    for item in list.items().iter() {
        // Redis's estimate of what an item adds (SIZE_ESTIMATE_OVERHEAD).
        if node.len() > 0 && node.bytes() + item.len() + 8 > QUICKLIST_NODE_BYTES {
            nodes.push(std::mem::replace(&mut node, ListpackWriter::new()).finish());
        }
        node.push(item);
    }
    if node.len() > 0 {
        nodes.push(node.finish());
    }
    nodes
}

fn write_set(out: &mut Vec<u8>, set: &SetValue, packed: bool) {
    if packed {
        // An intset's members come in numeric order.
        let values: Vec<i64> = set
            .members()
            .map(|m| crate::value::string::parse_i64(m).expect("an intset member"))
            .collect();
        write_string(out, &intset(&values));
        return;
    }
    write_length(out, set.len() as u64);
    for member in set.members() {
        write_string(out, member);
    }
}

/// A score as Redis 7.0 keeps it in a listpack: an integer when it is one (below 2^52),
/// else `%.17g`.
fn score_text(score: f64) -> Vec<u8> {
    if score == 0.0 {
        return b"0".to_vec();
    }
    if score > -4_503_599_627_370_495.0 && score < 4_503_599_627_370_496.0 && score.fract() == 0.0 {
        return (score as i64).to_string().into_bytes();
    }
    let mut buf = [0; quiver_resp::num::MAX_DOUBLE_CHARS];
    quiver_resp::num::format_double(score, &mut buf).to_vec()
}

fn write_zset(out: &mut Vec<u8>, zset: &ZSetValue, packed: bool) {
    if packed {
        let mut lp = ListpackWriter::new();
        for item in zset.iter_from(0) {
            lp.push(&item.member);
            lp.push(&score_text(item.score));
        }
        write_string(out, &lp.finish());
        return;
    }
    // Highest first, as Redis writes a skiplist so loading it inserts at the head.
    write_length(out, zset.len() as u64);
    for item in zset.iter_rev_from(zset.len().saturating_sub(1)) {
        write_string(out, &item.member);
        out.extend_from_slice(&item.score.to_le_bytes());
    }
}

fn write_hash(out: &mut Vec<u8>, hash: &HashValue, packed: bool) {
    if packed {
        let mut lp = ListpackWriter::new();
        for field in hash.fields() {
            lp.push(&field.name);
            lp.push(&field.value);
        }
        write_string(out, &lp.finish());
        return;
    }
    write_length(out, hash.len() as u64);
    for field in hash.fields() {
        write_string(out, &field.name);
        write_string(out, &field.value);
    }
}

fn write_stream(out: &mut Vec<u8>, stream: &StreamValue) {
    let nodes: Vec<_> = stream.node_entries().collect();
    write_length(out, nodes.len() as u64);
    for (first, master, entries) in nodes {
        let entries: Vec<_> = entries.collect();
        let mut lp = ListpackWriter::new();
        lp.push_int(entries.len() as i64);
        lp.push_int(0);
        let names: Vec<&[u8]> = master.iter().step_by(2).collect();
        lp.push_int(names.len() as i64);
        for name in &names {
            lp.push(name);
        }
        lp.push_int(0);
        for (id, fields) in entries {
            let same = fields.len() == names.len() * 2
                && fields.iter().step_by(2).zip(&names).all(|(a, b)| a == *b);
            lp.push_int(if same { STREAM_SAME_FIELDS } else { 0 });
            lp.push_int(id.ms.wrapping_sub(first.ms) as i64);
            lp.push_int(id.seq.wrapping_sub(first.seq) as i64);
            let pairs = fields.len() / 2;
            if same {
                for value in fields.iter().skip(1).step_by(2) {
                    lp.push(value);
                }
                lp.push_int(pairs as i64 + 3);
            } else {
                lp.push_int(pairs as i64);
                for item in fields.iter() {
                    lp.push(item);
                }
                lp.push_int(2 * pairs as i64 + 4);
            }
        }
        let mut key = Vec::with_capacity(16);
        write_raw_id(&mut key, first.ms, first.seq);
        write_string(out, &key);
        write_string(out, &lp.finish());
    }
    let id = |out: &mut Vec<u8>, id: StreamId| {
        write_length(out, id.ms);
        write_length(out, id.seq);
    };
    write_length(out, stream.len() as u64);
    id(out, stream.last_id);
    id(out, stream.first_id());
    id(out, stream.max_deleted);
    write_length(out, stream.entries_added);
    write_length(out, stream.groups().len() as u64);
    for (name, group) in stream.groups() {
        write_string(out, name);
        id(out, group.last_delivered);
        write_length(out, group.entries_read.unwrap_or(u64::MAX));
        write_length(out, group.pending.len() as u64);
        for (pid, pending) in &group.pending {
            write_raw_id(out, pid.ms, pid.seq);
            out.extend_from_slice(&pending.delivered_ms.to_le_bytes());
            write_length(out, pending.deliveries);
        }
        write_length(out, group.consumers.len() as u64);
        for (name, consumer) in &group.consumers {
            write_string(out, name);
            out.extend_from_slice(&consumer.seen_ms.to_le_bytes());
            write_length(out, consumer.pending.len() as u64);
            for pid in &consumer.pending {
                write_raw_id(out, pid.ms, pid.seq);
            }
        }
    }
}

/// A value read back: a string, or a built collection.
#[derive(Debug)]
pub(crate) enum Loaded {
    Str(Vec<u8>),
    Value(Value),
}

impl Loaded {
    /// A list, set, sorted set or hash with nothing in it, which Redis refuses in a
    /// payload and skips in a snapshot (a stream may be empty).
    pub(crate) fn is_empty_collection(&self) -> bool {
        match self {
            Loaded::Str(_) => false,
            Loaded::Value(Value::List(l)) => l.is_empty(),
            Loaded::Value(Value::Set(s)) => s.is_empty(),
            Loaded::Value(Value::ZSet(z)) => z.is_empty(),
            Loaded::Value(Value::Hash(h)) => h.is_empty(),
            Loaded::Value(_) => false,
        }
    }

    pub(crate) fn into_entry(self, key: &[u8], access: u32) -> Entry {
        match self {
            Loaded::Str(bytes) => Entry::string(key, &bytes, access),
            Loaded::Value(value) => Entry::with_value(key, value, access),
        }
    }
}

/// Reads a value body of type `t`.
pub(crate) fn read_value(t: u8, input: &mut Input<'_>) -> Result<Loaded> {
    Ok(Loaded::Value(match t {
        TYPE_STRING => return Ok(Loaded::Str(input.string()?.into_owned())),
        TYPE_LIST => {
            let mut list = ListValue::default();
            for _ in 0..input.count(1)? {
                list.push_back(&input.string()?);
            }
            Value::List(Box::new(list))
        }
        TYPE_LIST_ZIPLIST => {
            let mut list = ListValue::default();
            for item in ziplist_items(&input.string()?)? {
                list.push_back(&item.bytes());
            }
            Value::List(Box::new(list))
        }
        TYPE_LIST_QUICKLIST | TYPE_LIST_QUICKLIST_2 => {
            let mut list = ListValue::default();
            for _ in 0..input.count(2)? {
                let container = if t == TYPE_LIST_QUICKLIST_2 {
                    input.length()?
                } else {
                    QUICKLIST_PACKED
                };
                let node = input.string()?;
                match container {
                    QUICKLIST_PLAIN => list.push_back(&node),
                    QUICKLIST_PACKED => {
                        let items = if t == TYPE_LIST_QUICKLIST {
                            ziplist_items(&node)?
                        } else {
                            listpack_items(&node)?
                        };
                        if items.is_empty() {
                            return Err(bad("an empty quicklist node"));
                        }
                        for item in items {
                            list.push_back(&item.bytes());
                        }
                    }
                    other => return Err(bad(format!("unknown quicklist container {other}"))),
                }
            }
            Value::List(Box::new(list))
        }
        TYPE_SET => {
            let mut set = SetValue::default();
            for _ in 0..input.count(1)? {
                if !set.insert(&input.string()?) {
                    return Err(bad("a set with a duplicate member"));
                }
            }
            Value::Set(Box::new(set))
        }
        TYPE_SET_INTSET => {
            let mut set = SetValue::default();
            for v in intset_values(&input.string()?)? {
                set.insert(v.to_string().as_bytes());
            }
            Value::Set(Box::new(set))
        }
        TYPE_ZSET | TYPE_ZSET_2 => {
            let mut zset = ZSetValue::default();
            for _ in 0..input.count(2)? {
                let member = input.string()?;
                let score = if t == TYPE_ZSET_2 {
                    input.binary_double()?
                } else {
                    input.text_double()?
                };
                if score.is_nan() {
                    return Err(bad("a score that is not a number"));
                }
                if zset.insert(&member, score).is_some() {
                    return Err(bad("a sorted set with a duplicate member"));
                }
            }
            Value::ZSet(Box::new(zset))
        }
        TYPE_ZSET_ZIPLIST | TYPE_ZSET_LISTPACK => {
            let blob = input.string()?;
            let items = if t == TYPE_ZSET_ZIPLIST {
                ziplist_items(&blob)?
            } else {
                listpack_items(&blob)?
            };
            let mut zset = ZSetValue::default();
            for pair in pairs(&items)? {
                let score = match &pair[1] {
                    Item::Int(v) => *v as f64,
                    Item::Str(s) => crate::value::string::parse_f64(s)
                        .ok_or_else(|| bad("a score that is not a number"))?,
                };
                if zset.insert(&pair[0].bytes(), score).is_some() {
                    return Err(bad("a sorted set with a duplicate member"));
                }
            }
            Value::ZSet(Box::new(zset))
        }
        TYPE_HASH => {
            let mut hash = HashValue::default();
            for _ in 0..input.count(2)? {
                let field = input.string()?;
                if !hash.set(&field, &input.string()?) {
                    return Err(bad("a hash with a duplicate field"));
                }
            }
            Value::Hash(Box::new(hash))
        }
        TYPE_HASH_ZIPMAP => {
            let blob = input.string()?;
            let mut hash = HashValue::default();
            for (field, value) in zipmap_pairs(&blob)? {
                if !hash.set(field, value) {
                    return Err(bad("a hash with a duplicate field"));
                }
            }
            Value::Hash(Box::new(hash))
        }
        TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK => {
            let blob = input.string()?;
            let items = if t == TYPE_HASH_ZIPLIST {
                ziplist_items(&blob)?
            } else {
                listpack_items(&blob)?
            };
            let mut hash = HashValue::default();
            for pair in pairs(&items)? {
                if !hash.set(&pair[0].bytes(), &pair[1].bytes()) {
                    return Err(bad("a hash with a duplicate field"));
                }
            }
            Value::Hash(Box::new(hash))
        }
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 => {
            Value::Stream(Box::new(read_stream(input, t == TYPE_STREAM_LISTPACKS_2)?))
        }
        other => return Err(bad(format!("unknown value type {other}"))),
    }))
}

fn pairs<'a, 'b>(items: &'b [Item<'a>]) -> Result<std::slice::ChunksExact<'b, Item<'a>>> {
    if !items.len().is_multiple_of(2) || items.is_empty() {
        return Err(bad("a packed map with an odd number of items"));
    }
    Ok(items.chunks_exact(2))
}

fn read_id(input: &mut Input<'_>) -> Result<StreamId> {
    Ok(StreamId {
        ms: input.length()?,
        seq: input.length()?,
    })
}

fn read_stream(input: &mut Input<'_>, v2: bool) -> Result<StreamValue> {
    let mut stream = StreamValue::default();
    let mut last = None;
    for _ in 0..input.count(2)? {
        let key = input.string()?;
        if key.len() != 16 {
            return Err(bad("a stream node key that is not an ID"));
        }
        let master = Input::new(&key).raw_id()?;
        let blob = input.string()?;
        let items = listpack_items(&blob)?;
        let mut it = items.iter();
        let mut next = || it.next().ok_or_else(|| bad("a stream node cut short"));
        let _count = next()?.int()?;
        let _deleted = next()?.int()?;
        let field_count =
            usize::try_from(next()?.int()?).map_err(|_| bad("a negative field count"))?;
        let mut names = Vec::with_capacity(field_count.min(items.len()));
        for _ in 0..field_count {
            names.push(next()?.bytes().into_owned());
        }
        if next()?.int()? != 0 {
            return Err(bad("a stream master entry without its terminator"));
        }
        while let Ok(flags) = next() {
            let flags = flags.int()?;
            let id = StreamId {
                ms: master.0.wrapping_add(next()?.int()? as u64),
                seq: master.1.wrapping_add(next()?.int()? as u64),
            };
            let mut fields = Vec::new();
            if flags & STREAM_SAME_FIELDS != 0 {
                for name in &names {
                    fields.push(name.clone());
                    fields.push(next()?.bytes().into_owned());
                }
            } else {
                let n =
                    usize::try_from(next()?.int()?).map_err(|_| bad("a negative field count"))?;
                for _ in 0..2 * n.min(items.len()) {
                    fields.push(next()?.bytes().into_owned());
                }
            }
            next()?.int()?;
            if flags & STREAM_DELETED != 0 {
                continue;
            }
            if fields.is_empty() {
                return Err(bad("a stream entry without fields"));
            }
            if last.is_some_and(|l| id <= l) {
                return Err(bad("stream entries out of order"));
            }
            last = Some(id);
            stream.append(id, Fields::new(&fields));
        }
    }
    let length = input.length()?;
    if length != stream.len() as u64 {
        return Err(bad("a stream whose length does not match its entries"));
    }
    let last_id = read_id(input)?;
    if last.is_some_and(|l| l > last_id) {
        return Err(bad("a stream whose last ID is below an entry"));
    }
    stream.last_id = last_id;
    if v2 {
        let _first = read_id(input)?;
        stream.max_deleted = read_id(input)?;
        stream.entries_added = input.length()?;
    } else {
        stream.entries_added = length;
    }
    for _ in 0..input.count(3)? {
        let name = Bytes::from(input.string()?.into_owned());
        let last_delivered = read_id(input)?;
        let entries_read = if v2 {
            Some(input.length()?).filter(|n| *n != u64::MAX)
        } else {
            None
        };
        let mut group = Group {
            last_delivered,
            entries_read,
            ..Group::default()
        };
        for _ in 0..input.count(17)? {
            let (ms, seq) = input.raw_id()?;
            let delivered_ms = input.u64_le()?;
            let deliveries = input.length()?;
            let pending = Pending {
                consumer: Bytes::new(),
                delivered_ms,
                deliveries,
            };
            if group
                .pending
                .insert(StreamId { ms, seq }, pending)
                .is_some()
            {
                return Err(bad("a group with a duplicate pending entry"));
            }
        }
        for _ in 0..input.count(10)? {
            let cname = Bytes::from(input.string()?.into_owned());
            let mut consumer = Consumer {
                seen_ms: input.u64_le()?,
                ..Consumer::default()
            };
            for _ in 0..input.count(16)? {
                let (ms, seq) = input.raw_id()?;
                let id = StreamId { ms, seq };
                let pending = group
                    .pending
                    .get_mut(&id)
                    .ok_or_else(|| bad("a consumer's pending entry missing from its group"))?;
                if !pending.consumer.is_empty() {
                    return Err(bad("a pending entry owned by two consumers"));
                }
                pending.consumer = cname.clone();
                consumer.pending.insert(id);
            }
            if group.consumers.insert(cname, consumer).is_some() {
                return Err(bad("a group with a duplicate consumer"));
            }
        }
        if group.pending.values().any(|p| p.consumer.is_empty()) {
            return Err(bad("a pending entry without a consumer"));
        }
        if stream.groups_mut().insert(name, group).is_some() {
            return Err(bad("a stream with a duplicate group"));
        }
    }
    Ok(stream)
}

/// The DUMP payload of `entry`: the value, the RDB version and a CRC64.
pub(crate) fn dump_payload(entry: &Entry) -> Vec<u8> {
    let mut out = Vec::new();
    write_value(&mut out, entry, None);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Whether `payload` carries an RDB version this build reads and a matching CRC64.
pub fn dump_payload_check(payload: &[u8]) -> bool {
    let Some(body_len) = payload.len().checked_sub(10) else {
        return false;
    };
    let version = u16::from_le_bytes([payload[body_len], payload[body_len + 1]]);
    let crc = u64::from_le_bytes(payload[body_len + 2..].try_into().expect("8 bytes"));
    version <= RDB_VERSION && crc64(0, &payload[..body_len + 2]) == crc
}

/// Decodes a checked DUMP payload.
fn decode_payload(payload: &[u8]) -> std::result::Result<Loaded, OpError> {
    if !dump_payload_check(payload) {
        return Err(OpError::BadDumpPayload);
    }
    // The value is read from the whole payload, footer included, and bytes after it are
    // ignored: what Redis does, so a damaged length reads the same value in both.
    let mut input = Input::new(payload);
    let t = input.u8().map_err(|_| OpError::BadDataFormat)?;
    read_value(t, &mut input)
        .ok()
        .filter(|loaded| !loaded.is_empty_collection())
        .ok_or(OpError::BadDataFormat)
}

/// RESTORE's options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RestoreOptions {
    /// REPLACE: overwrite an existing key.
    pub replace: bool,
    /// ABSTTL: the TTL is a Unix time in milliseconds.
    pub absttl: bool,
    /// IDLETIME seconds (applies under an LRU or no policy).
    pub idle_s: Option<u64>,
    /// FREQ (applies under an LFU policy).
    pub freq: Option<u8>,
}

/// Access data for a restored key.
fn restored_access(opts: &RestoreOptions, clock: &Clock) -> Option<u32> {
    if clock.lfu {
        let minutes = ((clock.now_ms / 60_000) & 0xFF_FFFF) as u32;
        opts.freq.map(|f| (minutes << 8) | u32::from(f))
    } else {
        opts.idle_s
            .map(|idle| ((clock.now_ms / 1000).saturating_sub(idle)) as u32)
    }
}

/// What DEBUG OBJECT reports of a key.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugObject {
    /// Where the value is held in memory now.
    pub address: usize,
    /// As OBJECT REFCOUNT.
    pub refcount: i64,
    /// As OBJECT ENCODING.
    pub encoding: &'static str,
    /// Bytes of the value in a snapshot (its type byte and key left out).
    pub serialized_len: usize,
    /// Redis's 24-bit `lru` field: the LRU clock in seconds, or under an LFU policy
    /// the minutes (16 bits) and the counter (8 bits).
    pub lru: u32,
    /// Seconds since the last access (LRU policies; 0 under LFU).
    pub idle_s: u64,
    /// A list's quicklist: nodes, elements and listpack bytes.
    pub quicklist: Option<QuicklistShape>,
}

/// A list as a quicklist of listpacks holds it (DEBUG OBJECT's `ql_*` fields).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuicklistShape {
    pub nodes: usize,
    pub elements: usize,
    pub bytes: usize,
}

impl Db<'_> {
    /// DEBUG OBJECT: what Redis reports of `key`'s value, if it exists.
    pub fn debug_object(&mut self, key: &[u8], now_ms: u64) -> Option<DebugObject> {
        let lfu = self.clock(now_ms).lfu;
        let shared = self.shares_integers();
        self.read_key(key, now_ms, |k| {
            let entry = k.entry()?;
            let mut body = Vec::new();
            write_value(&mut body, entry, None);
            let quicklist = match &entry.value {
                Value::List(list) => {
                    let nodes = quicklist_nodes(list);
                    Some(QuicklistShape {
                        nodes: nodes.len(),
                        elements: list.len(),
                        bytes: nodes.iter().map(Vec::len).sum(),
                    })
                }
                _ => None,
            };
            let access = entry.access;
            Some(DebugObject {
                encoding: entry.value.encoding(entry.inline_len()),
                serialized_len: body.len() - 1,
                address: std::ptr::from_ref(entry) as usize,
                refcount: entry.value.refcount(shared),
                lru: access & 0xFF_FFFF,
                idle_s: if lfu {
                    0
                } else {
                    crate::evict::idle_ms(access, now_ms) / 1000
                },
                quicklist,
            })
        })
    }

    /// DUMP: the serialized value of `key`, if it exists.
    pub fn dump(&mut self, key: &[u8], now_ms: u64) -> Option<Vec<u8>> {
        self.read_key(key, now_ms, |k| k.entry().map(dump_payload))
    }

    /// RESTORE `key` from a DUMP payload, with `ttl_arg` (milliseconds, 0 for none) as
    /// given; errors come in Redis's order: an existing key, the TTL, the payload.
    pub fn restore(
        &mut self,
        key: &[u8],
        ttl_arg: &[u8],
        payload: &[u8],
        opts: RestoreOptions,
        now_ms: u64,
    ) -> std::result::Result<(), OpError> {
        let decoded = decode_payload(payload);
        self.write_key(key, now_ms, true, |k| {
            if !opts.replace && k.exists() {
                return Err(OpError::BusyKey);
            }
            let ttl = crate::value::string::parse_i64(ttl_arg).ok_or(OpError::NotAnInteger)?;
            if ttl < 0 {
                return Err(OpError::InvalidRestoreTtl);
            }
            let loaded = decoded?;
            if opts.replace {
                k.delete();
            }
            let at_ms = match ttl {
                0 => None,
                t if opts.absttl => Some(t as u64),
                t => Some(now_ms.saturating_add(t as u64)),
            };
            if at_ms.is_some_and(|at| at <= now_ms) {
                return Ok(());
            }
            insert_loaded(k, loaded, restored_access(&opts, &k.clock));
            k.set_expire(at_ms);
            k.signal_ready();
            k.notify(Event::generic("restore"));
            Ok(())
        })
    }
}

impl Db<'_> {
    /// Stores a key read from a snapshot; `Err` when the key is already there.
    pub(crate) fn load_entry(
        &mut self,
        key: &[u8],
        loaded: Loaded,
        expire_at: Option<u64>,
        access: u32,
        now_ms: u64,
    ) -> std::result::Result<(), ()> {
        self.write_key(key, now_ms, false, |k| {
            if k.exists() {
                return Err(OpError::BusyKey);
            }
            insert_loaded(k, loaded, Some(access));
            k.set_expire(expire_at);
            Ok(())
        })
        .map_err(|_| ())
    }

    /// Stores a key read back from the journal in place of whatever the key holds.
    pub(crate) fn replace_loaded(
        &mut self,
        key: &[u8],
        loaded: Loaded,
        expire_at: Option<u64>,
        now_ms: u64,
    ) {
        let stored = self.write_key(key, now_ms, false, |k| {
            k.delete();
            insert_loaded(k, loaded, None);
            k.set_expire(expire_at);
            Ok(())
        });
        debug_assert!(stored.is_ok());
    }
}

/// Stores a loaded value under the key of `k` (absent), with `access` if given.
fn insert_loaded(k: &mut KeyCtx<'_>, loaded: Loaded, access: Option<u32>) {
    let access = access.unwrap_or_else(|| crate::evict::initial_access(&k.clock));
    let entry = loaded.into_entry(k.key, access);
    k.idx = Some(k.s.insert(k.db, k.hash, entry));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream with one group whose pending entry 1-0 consumer `a` owns; `corrupt`
    /// changes the group before it is written.
    fn written(corrupt: impl FnOnce(&mut Group)) -> Vec<u8> {
        let mut stream = StreamValue::default();
        for seq in 0..2 {
            stream.append(StreamId { ms: 1, seq }, Fields::new(&[b"f", b"v"]));
        }
        stream.last_id = StreamId { ms: 1, seq: 1 };
        let id = StreamId { ms: 1, seq: 0 };
        let mut group = Group {
            last_delivered: stream.last_id,
            ..Group::default()
        };
        group.pending.insert(
            id,
            Pending {
                consumer: Bytes::from_static(b"a"),
                delivered_ms: 1,
                deliveries: 1,
            },
        );
        let mut owner = Consumer::default();
        owner.pending.insert(id);
        group.consumers.insert(Bytes::from_static(b"a"), owner);
        corrupt(&mut group);
        stream.groups_mut().insert(Bytes::from_static(b"g"), group);
        let mut out = Vec::new();
        write_stream(&mut out, &stream);
        out
    }

    #[test]
    fn a_pending_entry_two_consumers_own_is_refused() {
        let whole = written(|_| {});
        assert!(read_stream(&mut Input::new(&whole), true).is_ok());
        let twice = written(|group| {
            let mut other = Consumer::default();
            other.pending.insert(StreamId { ms: 1, seq: 0 });
            group.consumers.insert(Bytes::from_static(b"b"), other);
        });
        let error = read_stream(&mut Input::new(&twice), true).unwrap_err();
        assert!(
            error.to_string().contains("owned by two consumers"),
            "{error}"
        );
    }
}
