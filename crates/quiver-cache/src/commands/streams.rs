//! Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XREAD XSETID.

use bytes::Bytes;

use super::KeyCtx;
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses, events};
use crate::value::stream::{Consumer, Fields, Group, Pending, StreamId, StreamValue, TrimTo};

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

/// The ID a new entry gets after `last`, or why it cannot be added.
const fn stream_event(name: &'static str) -> Event {
    Event::new(EventClasses::STREAM, name)
}

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

/// Where a group starts: `$` (the last ID now) or an ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupStart {
    /// `$`.
    Last,
    /// An ID.
    Id(StreamId),
}

/// What XREADGROUP reads: new entries (`>`) or the consumer's pending ones after an ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupRead {
    /// `>`.
    New,
    /// Pending entries after this ID.
    History(StreamId),
}

/// One pending entry as XPENDING lists it: ID, consumer, idle ms, deliveries.
pub type PendingInfo = (StreamId, Bytes, u64, u64);

/// XPENDING's summary: count, smallest and greatest ID, pending per consumer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PendingSummary {
    pub count: u64,
    pub range: Option<(StreamId, StreamId)>,
    pub consumers: Vec<(Bytes, u64)>,
}

/// XCLAIM's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClaimOptions {
    /// IDLE / TIME: when the entries count as delivered (ms since the epoch).
    pub delivered_ms: Option<u64>,
    /// RETRYCOUNT.
    pub retry_count: Option<u64>,
    /// FORCE: claim an entry that is in the stream but not pending.
    pub force: bool,
    /// JUSTID: the IDs only, deliveries not counted.
    pub just_id: bool,
    /// LASTID: moves the group's last delivered ID forward.
    pub last_id: Option<StreamId>,
}

/// Entries as delivered: an entry deleted since it was pending has no fields.
pub type Delivered = Vec<(StreamId, Option<Fields>)>;

impl Group {
    fn consumer(&mut self, name: &[u8], now_ms: u64) -> &mut Consumer {
        if !self.consumers.contains_key(name) {
            let consumer = Consumer {
                seen_ms: now_ms,
                ..Consumer::default()
            };
            self.consumers
                .insert(Bytes::copy_from_slice(name), consumer);
        }
        self.consumers.get_mut(name).expect("inserted above")
    }

    /// Makes `id` pending for `consumer` (moving it from another, creating or refreshing
    /// the consumer at `now_ms`), delivered at `at`, with `count` deliveries (one more
    /// than before when `None`).
    fn assign(&mut self, id: StreamId, consumer: &[u8], at: u64, count: Option<u64>, now_ms: u64) {
        let owner = Bytes::copy_from_slice(consumer);
        if let Some(old) = self.pending.get(&id).map(|p| p.consumer.clone())
            && old != owner
            && let Some(previous) = self.consumers.get_mut(&old)
        {
            previous.pending.remove(&id);
        }
        let entry = self.pending.entry(id).or_insert(Pending {
            consumer: owner.clone(),
            delivered_ms: at,
            deliveries: 0,
        });
        entry.consumer = owner;
        entry.delivered_ms = at;
        entry.deliveries = count.unwrap_or(entry.deliveries + 1);
        let owner = self.consumer(consumer, now_ms);
        owner.seen_ms = now_ms;
        owner.pending.insert(id);
    }

    /// Drops `id` from the pending entries (its consumer's too).
    fn forget(&mut self, id: StreamId) -> bool {
        let Some(pending) = self.pending.remove(&id) else {
            return false;
        };
        if let Some(consumer) = self.consumers.get_mut(&pending.consumer) {
            consumer.pending.remove(&id);
        }
        true
    }
}

impl Db<'_> {
    /// XGROUP CREATE.
    pub fn xgroup_create(
        &mut self,
        key: &[u8],
        group: &[u8],
        start: GroupStart,
        mkstream: bool,
        entries_read: Option<u64>,
        now_ms: u64,
    ) -> Result<(), OpError> {
        self.write_key(key, now_ms, true, |k| {
            k.check::<StreamValue>()?;
            if !k.exists() && !mkstream {
                return Err(OpError::StreamGroupNeedsKey);
            }
            if k.view::<StreamValue>()?
                .is_some_and(|s| s.groups().contains_key(group))
            {
                return Err(OpError::BusyGroup);
            }
            k.on_change(stream_event("xgroup-create"));
            k.modify::<StreamValue, _>(true, |s| {
                let last_delivered = match start {
                    GroupStart::Last => s.last_id,
                    GroupStart::Id(id) => id,
                };
                let created = Group {
                    last_delivered,
                    entries_read,
                    ..Group::default()
                };
                s.groups_mut()
                    .insert(Bytes::copy_from_slice(group), created);
            })?;
            Ok(())
        })
    }

    /// Runs `f` on group `group` of stream `key`: `NoGroup` when either is missing,
    /// `StreamGroupNeedsKey` for a missing key when `key_error`. `event`, if any, is
    /// announced when `f` says it changed something; a consumer `f` created is announced
    /// as `xgroup-createconsumer`.
    fn with_group<R>(
        &mut self,
        key: &[u8],
        group: &[u8],
        now_ms: u64,
        key_error: bool,
        event: Option<&'static str>,
        f: impl FnOnce(&mut StreamValue, &[u8]) -> (R, bool),
    ) -> Result<R, OpError> {
        let consumers = |k: &KeyCtx<'_>| {
            k.view::<StreamValue>()
                .ok()
                .flatten()
                .and_then(|s| s.groups().get(group))
                .map_or(0, |g| g.consumers.len())
        };
        self.write_key(key, now_ms, false, |k| {
            match k.view::<StreamValue>()? {
                None if key_error => return Err(OpError::StreamGroupNeedsKey),
                None => {
                    // Redis reads the key for these (XGROUP writes it).
                    k.notify(events::KEY_MISS);
                    return Err(OpError::NoGroup);
                }
                Some(s) if !s.groups().contains_key(group) => return Err(OpError::NoGroup),
                Some(_) => {}
            }
            let before = consumers(k);
            if let Some(name) = event {
                k.on_change(stream_event(name));
            }
            let result = k.modify_if::<StreamValue, _>(false, |s| f(s, group))?;
            if consumers(k) > before {
                k.notify(stream_event("xgroup-createconsumer"));
            }
            Ok(result.expect("the key exists"))
        })
    }

    /// XGROUP SETID.
    pub fn xgroup_setid(
        &mut self,
        key: &[u8],
        group: &[u8],
        start: GroupStart,
        entries_read: Option<u64>,
        now_ms: u64,
    ) -> Result<(), OpError> {
        self.with_group(key, group, now_ms, true, Some("xgroup-setid"), |s, name| {
            let last = s.last_id;
            let g = s.groups_mut().get_mut(name).expect("checked");
            g.last_delivered = match start {
                GroupStart::Last => last,
                GroupStart::Id(id) => id,
            };
            g.entries_read = entries_read;
            ((), true)
        })
    }

    /// XGROUP DESTROY: whether the group existed.
    pub fn xgroup_destroy(
        &mut self,
        key: &[u8],
        group: &[u8],
        now_ms: u64,
    ) -> Result<bool, OpError> {
        match self.with_group(
            key,
            group,
            now_ms,
            true,
            Some("xgroup-destroy"),
            |s, name| (s.groups_mut().remove(name).is_some(), true),
        ) {
            Err(OpError::NoGroup) => Ok(false),
            other => other,
        }
    }

    /// XGROUP CREATECONSUMER: whether it was created.
    pub fn xgroup_create_consumer(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        now_ms: u64,
    ) -> Result<bool, OpError> {
        self.with_group(key, group, now_ms, true, None, |s, name| {
            let g = s.groups_mut().get_mut(name).expect("checked");
            let created = !g.consumers.contains_key(consumer);
            g.consumer(consumer, now_ms);
            (created, created)
        })
    }

    /// XGROUP DELCONSUMER: how many entries it had pending (they are dropped).
    pub fn xgroup_del_consumer(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        now_ms: u64,
    ) -> Result<u64, OpError> {
        let event = Some("xgroup-delconsumer");
        self.with_group(key, group, now_ms, true, event, |s, name| {
            let g = s.groups_mut().get_mut(name).expect("checked");
            let Some(gone) = g.consumers.remove(consumer) else {
                return (0, false);
            };
            for id in &gone.pending {
                g.pending.remove(id);
            }
            (gone.pending.len() as u64, true)
        })
    }

    /// Whether group `group` of stream `key` exists (`WrongType` for another type).
    pub fn xgroup_exists(
        &mut self,
        key: &[u8],
        group: &[u8],
        now_ms: u64,
    ) -> Result<bool, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<StreamValue>()?
                .is_some_and(|s| s.groups().contains_key(group)))
        })
    }

    /// XREADGROUP on one stream: new entries (made pending unless `noack`) or the
    /// consumer's pending ones.
    #[allow(clippy::too_many_arguments)]
    pub fn xreadgroup(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        read: GroupRead,
        count: Option<usize>,
        noack: bool,
        now_ms: u64,
    ) -> Result<Delivered, OpError> {
        self.with_group(key, group, now_ms, false, None, |s, name| {
            let limit = count.unwrap_or(usize::MAX);
            match read {
                GroupRead::New => {
                    let after = s.groups()[name].last_delivered;
                    let entries = match after.next() {
                        Some(from) => s.range(from, StreamId::MAX, count, false),
                        None => Vec::new(),
                    };
                    let mut entries_read = s.groups()[name].entries_read;
                    for (id, _) in &entries {
                        entries_read = match entries_read {
                            Some(read) if !s.deleted_since(*id) => Some(read + 1),
                            _ if s.entries_added > 0 => s.entries_read_at(*id),
                            other => other,
                        };
                    }
                    let g = s.groups_mut().get_mut(name).expect("checked");
                    // As Redis 7.0: the consumer is made (or seen) only when served.
                    if !entries.is_empty() {
                        g.consumer(consumer, now_ms).seen_ms = now_ms;
                    }
                    if let Some((last, _)) = entries.last() {
                        g.last_delivered = *last;
                        g.entries_read = entries_read;
                    }
                    if !noack {
                        for (id, _) in &entries {
                            g.assign(*id, consumer, now_ms, Some(1), now_ms);
                        }
                    }
                    let changed = !entries.is_empty();
                    (
                        entries.into_iter().map(|(id, f)| (id, Some(f))).collect(),
                        changed,
                    )
                }
                GroupRead::History(after) => {
                    let ids: Vec<StreamId> = {
                        let g = s.groups_mut().get_mut(name).expect("checked");
                        let c = g.consumer(consumer, now_ms);
                        c.seen_ms = now_ms;
                        match after.next() {
                            Some(from) => c.pending.range(from..).take(limit).copied().collect(),
                            None => Vec::new(),
                        }
                    };
                    let delivered = ids.iter().map(|id| (*id, s.get(*id).cloned())).collect();
                    let g = s.groups_mut().get_mut(name).expect("checked");
                    for id in &ids {
                        if let Some(p) = g.pending.get_mut(id) {
                            p.delivered_ms = now_ms;
                            p.deliveries += 1;
                        }
                    }
                    (delivered, true)
                }
            }
        })
    }

    /// XACK: how many of `ids` were pending and are acknowledged now (0 for a missing
    /// key or group).
    pub fn xack(
        &mut self,
        key: &[u8],
        group: &[u8],
        ids: &[StreamId],
        now_ms: u64,
    ) -> Result<u64, OpError> {
        match self.with_group(key, group, now_ms, false, None, |s, name| {
            let g = s.groups_mut().get_mut(name).expect("checked");
            let n = ids.iter().filter(|id| g.forget(**id)).count() as u64;
            (n, n > 0)
        }) {
            Err(OpError::NoGroup) => Ok(0),
            other => other,
        }
    }

    /// XPENDING's summary.
    pub fn xpending_summary(
        &mut self,
        key: &[u8],
        group: &[u8],
        now_ms: u64,
    ) -> Result<PendingSummary, OpError> {
        self.with_group(key, group, now_ms, false, None, |s, name| {
            let g = &s.groups()[name];
            let first = g.pending.keys().next().copied();
            let last = g.pending.keys().next_back().copied();
            let consumers = g
                .consumers
                .iter()
                .filter(|(_, c)| !c.pending.is_empty())
                .map(|(n, c)| (n.clone(), c.pending.len() as u64))
                .collect();
            let summary = PendingSummary {
                count: g.pending.len() as u64,
                range: first.zip(last),
                consumers,
            };
            (summary, false)
        })
    }

    /// XPENDING's extended form: pending entries from `start` to `end`, idle at least
    /// `min_idle`, of `consumer` if given, at most `count`.
    #[allow(clippy::too_many_arguments)]
    pub fn xpending(
        &mut self,
        key: &[u8],
        group: &[u8],
        min_idle: u64,
        start: StreamId,
        end: StreamId,
        count: usize,
        consumer: Option<&[u8]>,
        now_ms: u64,
    ) -> Result<Vec<PendingInfo>, OpError> {
        self.with_group(key, group, now_ms, false, None, |s, name| {
            let g = &s.groups()[name];
            if start > end {
                return (Vec::new(), false);
            }
            let ids: Box<dyn Iterator<Item = StreamId>> = match consumer {
                Some(consumer) => match g.consumers.get(consumer) {
                    Some(c) => Box::new(c.pending.range(start..=end).copied()),
                    None => Box::new(std::iter::empty()),
                },
                None => Box::new(g.pending.range(start..=end).map(|(id, _)| *id)),
            };
            let list = ids
                .filter_map(|id| {
                    let p = &g.pending[&id];
                    let idle = now_ms.saturating_sub(p.delivered_ms);
                    (idle >= min_idle).then(|| (id, p.consumer.clone(), idle, p.deliveries))
                })
                .take(count)
                .collect();
            (list, false)
        })
    }

    /// XCLAIM: `ids` pending (or, with FORCE, in the stream) and idle at least
    /// `min_idle` become `consumer`'s.
    #[allow(clippy::too_many_arguments)]
    pub fn xclaim(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        min_idle: u64,
        ids: &[StreamId],
        options: ClaimOptions,
        now_ms: u64,
    ) -> Result<Delivered, OpError> {
        self.with_group(key, group, now_ms, false, None, |s, name| {
            let at = options.delivered_ms.unwrap_or(now_ms);
            let mut claimed = Vec::new();
            {
                let g = s.groups_mut().get_mut(name).expect("checked");
                if let Some(last) = options.last_id
                    && last > g.last_delivered
                {
                    g.last_delivered = last;
                }
            }
            for &id in ids {
                let fields = s.get(id).cloned();
                let g = s.groups_mut().get_mut(name).expect("checked");
                let Some(fields) = fields else {
                    // Deleted from the stream meanwhile: no longer pending.
                    g.forget(id);
                    continue;
                };
                let pending = g.pending.get(&id).cloned();
                if pending.is_none() && !options.force {
                    continue;
                }
                if let Some(p) = &pending
                    && min_idle > 0
                    && now_ms.saturating_sub(p.delivered_ms) < min_idle
                {
                    continue;
                }
                let before = pending.as_ref().map_or(0, |p| p.deliveries);
                let count = match options.retry_count {
                    Some(count) => count,
                    None if options.just_id => before,
                    None => before + 1,
                };
                g.assign(id, consumer, at, Some(count), now_ms);
                claimed.push((id, Some(fields)));
            }
            let changed = !claimed.is_empty() || options.last_id.is_some();
            (claimed, changed)
        })
    }

    /// XAUTOCLAIM: pending entries from `start` idle at least `min_idle` become
    /// `consumer`'s, looking at up to `count` of them; the ID to continue from, what was
    /// claimed, and the IDs that were pending but deleted from the stream (dropped).
    #[allow(clippy::too_many_arguments)]
    pub fn xautoclaim(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        min_idle: u64,
        start: StreamId,
        count: usize,
        just_id: bool,
        now_ms: u64,
    ) -> Result<(StreamId, Delivered, Vec<StreamId>), OpError> {
        self.with_group(key, group, now_ms, false, None, |s, name| {
            let candidates: Vec<(StreamId, Pending)> = s.groups()[name]
                .pending
                .range(start..)
                .map(|(id, p)| (*id, p.clone()))
                .collect();
            let mut claimed = Vec::new();
            let mut deleted = Vec::new();
            let mut attempts = count.saturating_mul(10);
            let mut left = count;
            let mut next = StreamId::MIN;
            for (id, p) in candidates {
                if attempts == 0 || left == 0 {
                    next = id;
                    break;
                }
                attempts -= 1;
                let fields = s.get(id).cloned();
                let g = s.groups_mut().get_mut(name).expect("checked");
                let Some(fields) = fields else {
                    g.forget(id);
                    deleted.push(id);
                    left -= 1;
                    continue;
                };
                if now_ms.saturating_sub(p.delivered_ms) < min_idle {
                    continue;
                }
                let count = if just_id {
                    p.deliveries
                } else {
                    p.deliveries + 1
                };
                g.assign(id, consumer, now_ms, Some(count), now_ms);
                claimed.push((id, Some(fields)));
                left -= 1;
            }
            let changed = !claimed.is_empty() || !deleted.is_empty();
            ((next, claimed, deleted), changed)
        })
    }
}

/// A group as XINFO shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    pub name: Bytes,
    pub last_delivered: StreamId,
    pub entries_read: Option<u64>,
    pub lag: Option<u64>,
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
