//! Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XREAD XSETID, and XINFO
//! (consumer groups are in `stream_groups.rs`).

use bytes::Bytes;

use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses};
use crate::value::stream::{Fields, Group, StreamId, StreamValue, TrimTo};

/// The ID XADD is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamAddId {
    /// `*`: the time now, or after the last ID.
    Auto,
    /// `ms-*`: that time with the next sequence.
    Seq(u64),
    /// `ms-seq`.
    Explicit(StreamId),
}

/// MAXLEN or MINID, exact (`=`) or approximate (`~`, whole nodes, at most `limit`
/// entries; 0 is no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamTrim {
    /// What to keep.
    pub to: TrimTo,
    /// `~`.
    pub approx: bool,
    /// LIMIT (only with `~`).
    pub limit: u64,
}

/// A stream keyspace event.
pub(super) const fn stream_event(name: &'static str) -> Event {
    Event::new(EventClasses::STREAM, name)
}

/// The ID a new entry gets after `last`, or why it cannot be added.
fn next_id(last: StreamId, given: StreamAddId, now_ms: u64) -> Result<StreamId, OpError> {
    match given {
        StreamAddId::Auto if now_ms > last.ms => Ok(StreamId { ms: now_ms, seq: 0 }),
        StreamAddId::Auto => last.next().ok_or(OpError::StreamExhausted),
        StreamAddId::Seq(ms) if ms > last.ms => Ok(StreamId { ms, seq: 0 }),
        StreamAddId::Seq(ms) if ms == last.ms => match last.seq.checked_add(1) {
            Some(seq) => Ok(StreamId { ms, seq }),
            None => Err(OpError::StreamSeqExhausted),
        },
        StreamAddId::Seq(_) => Err(OpError::StreamIdTooSmall),
        StreamAddId::Explicit(id) if id == StreamId::MIN => Err(OpError::StreamIdZero),
        StreamAddId::Explicit(id) if id > last => Ok(id),
        StreamAddId::Explicit(_) => Err(OpError::StreamIdTooSmall),
    }
}

impl Db<'_> {
    /// XADD: appends `fields` (field, value, ...) under a new ID, creating the stream
    /// unless `nomkstream`, then trims. `None` when NOMKSTREAM found no stream.
    pub fn xadd(
        &mut self,
        key: &[u8],
        nomkstream: bool,
        id: StreamAddId,
        trim: Option<StreamTrim>,
        fields: Vec<Bytes>,
        now_ms: u64,
    ) -> Result<Option<StreamId>, OpError> {
        self.write_key(key, now_ms, true, |k| {
            if nomkstream && !k.exists() {
                return Ok(None);
            }
            // The new ID is checked before an absent stream is made.
            let last = k
                .view::<StreamValue>()?
                .map_or(StreamId::MIN, |s| s.last_id);
            if last == StreamId::MAX {
                return Err(OpError::StreamExhausted);
            }
            let new = next_id(last, id, now_ms)?;
            k.on_change(stream_event("xadd"));
            let trimmed = k.modify::<StreamValue, _>(true, |s| {
                s.append(new, Fields::new(&fields));
                trim.map_or(0, |trim| s.trim(trim.to, trim.approx, trim.limit))
            })?;
            if trimmed.is_some_and(|n| n > 0) {
                k.notify(stream_event("xtrim"));
            }
            let added = trimmed.map(|_| new);
            // Clients blocked in XREAD on this key try again.
            k.signal_ready();
            Ok(added)
        })
    }

    /// XLEN.
    pub fn xlen(&mut self, key: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<StreamValue>()?.map_or(0, StreamValue::len))
        })
    }

    /// XRANGE (`rev` false) and XREVRANGE: entries from `start` to `end` inclusive, at
    /// most `count`; `None` when the key does not exist.
    pub fn xrange(
        &mut self,
        key: &[u8],
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        rev: bool,
        now_ms: u64,
    ) -> Result<Option<Vec<(StreamId, Fields)>>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<StreamValue>()?
                .map(|s| s.range(start, end, count, rev)))
        })
    }

    /// The ID of the last entry ever added (XREAD's `$`): 0-0 when the key does not exist.
    pub fn xlast_id(&mut self, key: &[u8], now_ms: u64) -> Result<StreamId, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<StreamValue>()?
                .map_or(StreamId::MIN, |s| s.last_id))
        })
    }

    /// XREAD on one stream: the entries after `after`, at most `count`; none when the key
    /// does not exist.
    pub fn xread(
        &mut self,
        key: &[u8],
        after: StreamId,
        count: Option<usize>,
        now_ms: u64,
    ) -> Result<Vec<(StreamId, Fields)>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(stream) = k.view::<StreamValue>()? else {
                return Ok(Vec::new());
            };
            Ok(match after.next() {
                Some(from) => stream.range(from, StreamId::MAX, count, false),
                None => Vec::new(),
            })
        })
    }

    /// XSETID: sets the last ID (and the count of entries ever added, the largest deleted
    /// ID), with Redis's checks.
    pub fn xsetid(
        &mut self,
        key: &[u8],
        last: StreamId,
        entries_added: Option<u64>,
        max_deleted: Option<StreamId>,
        now_ms: u64,
    ) -> Result<(), OpError> {
        self.write_key(key, now_ms, false, |k| {
            let Some(stream) = k.view::<StreamValue>()? else {
                return Err(OpError::NoSuchKey);
            };
            if let Some(top) = stream.last_entry_id() {
                if last < top {
                    return Err(OpError::StreamSetIdBelowTop);
                }
                if entries_added.is_some_and(|added| (stream.len() as u64) > added) {
                    return Err(OpError::StreamSetIdEntriesBelowLength);
                }
            }
            k.on_change(stream_event("xsetid"));
            k.modify::<StreamValue, _>(false, |s| {
                s.last_id = last;
                if let Some(added) = entries_added {
                    s.entries_added = added;
                }
                if let Some(deleted) = max_deleted.filter(|id| *id != StreamId::MIN) {
                    s.max_deleted = deleted;
                }
            })?;
            Ok(())
        })
    }

    /// XDEL: the entries deleted.
    pub fn xdel(&mut self, key: &[u8], ids: &[StreamId], now_ms: u64) -> Result<usize, OpError> {
        self.write_key(key, now_ms, false, |k| {
            k.on_change(stream_event("xdel"));
            let deleted = k.modify_if::<StreamValue, _>(false, |s| {
                let n = ids.iter().filter(|id| s.delete(**id)).count();
                (n, n > 0)
            })?;
            Ok(deleted.unwrap_or(0))
        })
    }

    /// XTRIM: the entries removed.
    pub fn xtrim(&mut self, key: &[u8], trim: StreamTrim, now_ms: u64) -> Result<u64, OpError> {
        self.write_key(key, now_ms, false, |k| {
            k.on_change(stream_event("xtrim"));
            let removed = k.modify_if::<StreamValue, _>(false, |s| {
                let n = s.trim(trim.to, trim.approx, trim.limit);
                (n, n > 0)
            })?;
            Ok(removed.unwrap_or(0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_last_one() {
        let last = StreamId { ms: 5, seq: 3 };
        assert_eq!(
            next_id(last, StreamAddId::Auto, 9),
            Ok(StreamId { ms: 9, seq: 0 })
        );
        assert_eq!(
            next_id(last, StreamAddId::Auto, 2),
            Ok(StreamId { ms: 5, seq: 4 })
        );
        assert_eq!(
            next_id(last, StreamAddId::Seq(5), 0),
            Ok(StreamId { ms: 5, seq: 4 })
        );
        assert_eq!(
            next_id(last, StreamAddId::Seq(4), 0),
            Err(OpError::StreamIdTooSmall)
        );
        assert_eq!(
            next_id(last, StreamAddId::Explicit(last), 0),
            Err(OpError::StreamIdTooSmall)
        );
        assert_eq!(
            next_id(StreamId::MIN, StreamAddId::Explicit(StreamId::MIN), 0),
            Err(OpError::StreamIdZero)
        );
    }
}

/// A group as XINFO shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    pub name: Bytes,
    pub last_delivered: StreamId,
    pub entries_read: Option<u64>,
    pub lag: Option<i64>,
    /// Its pending entries: ID, consumer, delivered at (ms), deliveries.
    pub pending: Vec<(StreamId, Bytes, u64, u64)>,
    pub consumers: Vec<ConsumerInfo>,
}

/// A consumer as XINFO shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerInfo {
    pub name: Bytes,
    pub seen_ms: u64,
    /// Its pending entries: ID, delivered at (ms), deliveries.
    pub pending: Vec<(StreamId, u64, u64)>,
}

/// A stream as XINFO STREAM shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    pub length: u64,
    pub radix_tree_keys: u64,
    pub radix_tree_nodes: u64,
    pub last_id: StreamId,
    pub max_deleted: StreamId,
    pub entries_added: u64,
    pub first_id: StreamId,
    pub first_entry: Option<(StreamId, Fields)>,
    pub last_entry: Option<(StreamId, Fields)>,
    /// FULL: the first entries asked for.
    pub entries: Vec<(StreamId, Fields)>,
    pub groups: Vec<GroupInfo>,
}

fn group_info(s: &StreamValue, name: &Bytes, g: &Group) -> GroupInfo {
    let pending = g
        .pending
        .iter()
        .map(|(id, p)| (*id, p.consumer.clone(), p.delivered_ms, p.deliveries))
        .collect();
    let consumers = g
        .consumers
        .iter()
        .map(|(name, c)| ConsumerInfo {
            name: name.clone(),
            seen_ms: c.seen_ms,
            pending: c
                .pending
                .iter()
                .map(|id| {
                    let p = &g.pending[id];
                    (*id, p.delivered_ms, p.deliveries)
                })
                .collect(),
        })
        .collect();
    GroupInfo {
        name: name.clone(),
        last_delivered: g.last_delivered,
        entries_read: g.entries_read,
        lag: s.lag(g),
        pending,
        consumers,
    }
}

impl Db<'_> {
    /// XINFO STREAM (with FULL, the first `full` entries: `Some(0)` for all).
    pub fn xinfo_stream(
        &mut self,
        key: &[u8],
        full: Option<usize>,
        now_ms: u64,
    ) -> Result<StreamInfo, OpError> {
        self.read_key(key, now_ms, |k| {
            let s = k.view::<StreamValue>()?.ok_or(OpError::NoSuchKey)?;
            let edge = |rev| s.range(StreamId::MIN, StreamId::MAX, Some(1), rev).pop();
            let entries = match full {
                Some(count) => s.range(
                    StreamId::MIN,
                    StreamId::MAX,
                    (count > 0).then_some(count),
                    false,
                ),
                None => Vec::new(),
            };
            let groups = s
                .groups()
                .iter()
                .map(|(name, g)| group_info(s, name, g))
                .collect();
            Ok(StreamInfo {
                length: s.len() as u64,
                radix_tree_keys: s.nodes() as u64,
                radix_tree_nodes: s.radix_tree_nodes() as u64,
                last_id: s.last_id(),
                max_deleted: s.max_deleted(),
                entries_added: s.entries_added(),
                first_id: s.first_id(),
                first_entry: edge(false),
                last_entry: edge(true),
                entries,
                groups,
            })
        })
    }

    /// XINFO CONSUMERS.
    pub fn xinfo_consumers(
        &mut self,
        key: &[u8],
        group: &[u8],
        now_ms: u64,
    ) -> Result<Vec<ConsumerInfo>, OpError> {
        self.read_key(key, now_ms, |k| {
            let s = k.view::<StreamValue>()?.ok_or(OpError::NoSuchKey)?;
            let (name, g) = s.groups().get_key_value(group).ok_or(OpError::NoGroup)?;
            Ok(group_info(s, name, g).consumers)
        })
    }
}
