//! Consumer groups of the stream type: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM,
//! XAUTOCLAIM.

use bytes::Bytes;

use super::KeyCtx;
use super::streams::stream_event;
use crate::error::OpError;
use crate::keyspace::{Db, events};
use crate::value::stream::{Consumer, Fields, Group, Pending, StreamId, StreamValue};

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
        let groups = |k: &KeyCtx<'_>| {
            k.view::<StreamValue>()
                .ok()
                .flatten()
                .map_or(0, |s| s.groups().len())
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
            let (before, groups_before) = (consumers(k), groups(k));
            if let Some(name) = event {
                k.on_change(stream_event(name));
            }
            let result = k.modify_if::<StreamValue, _>(false, |s| f(s, group))?;
            if consumers(k) > before {
                k.notify(stream_event("xgroup-createconsumer"));
            }
            if groups(k) < groups_before {
                // Clients blocked reading for a group that is gone look again.
                k.signal_ready();
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
                    let delivered: Vec<_> =
                        ids.iter().map(|id| (*id, s.get(*id).cloned())).collect();
                    let g = s.groups_mut().get_mut(name).expect("checked");
                    // An entry deleted from the stream is answered as nil and, as in
                    // Redis, not counted as delivered again.
                    for (id, _) in delivered.iter().filter(|(_, entry)| entry.is_some()) {
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
