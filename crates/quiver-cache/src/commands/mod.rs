//! Data operations, one file per command family, all as methods of [`crate::Db`]; this file
//! holds the per-key context they share and the option types callers pass in.

mod bits;
mod geo;
mod hashes;
mod hyperloglog;
mod keys;
mod lcs;
mod lists;
mod sets;
mod sort;
mod stream_groups;
mod streams;
mod strings;
mod zrange;
mod zsets;

pub use bits::{BitField, BitOp, BitPosRange, BitRange, FieldAction, Overflow};
pub use geo::{GeoFound, GeoQuery, GeoSort, GeoStore, GeoView};
pub use hyperloglog::{HllDebug, HllDebugReply};
pub use keys::{ENTRY_OVERHEAD_BYTES, ExpireCondition, to_expire_at_ms};
pub use lcs::{Lcs, LcsMatch, lcs};
pub use lists::ListEnd;
pub use sort::{SortOptions, SortOutput};
pub use stream_groups::{
    ClaimOptions, Delivered, GroupRead, GroupStart, PendingInfo, PendingSummary,
};
pub use streams::{ConsumerInfo, GroupInfo, StreamAddId, StreamInfo, StreamTrim};
pub use strings::{GetExExpiry, SetCondition, SetExpiry, SetOptions, SetOutcome};
pub use zrange::{Aggregate, ZRangeBy, ZRangeSpec};
pub use zsets::{ZAddCompare, ZAddCondition, ZAddOptions, ZAddReply, ZSetOp};

use bytes::Bytes;

use crate::error::OpError;
use crate::evict::{Clock, initial_access};
use crate::keyspace::{Db, Entry, Event, Shard, events};
use crate::value::Value;
use crate::value::hash::HashValue;
use crate::value::list::ListValue;
use crate::value::set::SetValue;
use crate::value::stream::StreamValue;
use crate::value::zset::ZSetValue;

/// Turns a collection value type into and out of [`Value`].
pub(crate) trait Kind: Sized + Default {
    fn wrap(b: Box<Self>) -> Value;
    fn peek(v: &Value) -> Option<&Self>;
    fn peek_mut(v: &mut Value) -> Option<&mut Self>;
    fn is_empty_value(&self) -> bool;
}

macro_rules! kind {
    ($t:ty, $variant:ident) => {
        impl Kind for $t {
            fn wrap(b: Box<Self>) -> Value {
                Value::$variant(b)
            }
            fn peek(v: &Value) -> Option<&Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn peek_mut(v: &mut Value) -> Option<&mut Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn is_empty_value(&self) -> bool {
                self.is_empty()
            }
        }
    };
}

kind!(HashValue, Hash);
kind!(ListValue, List);
kind!(SetValue, Set);
kind!(ZSetValue, ZSet);

impl Kind for StreamValue {
    fn wrap(b: Box<Self>) -> Value {
        Value::Stream(b)
    }
    fn peek(v: &Value) -> Option<&Self> {
        match v {
            Value::Stream(x) => Some(x),
            _ => None,
        }
    }
    fn peek_mut(v: &mut Value) -> Option<&mut Self> {
        match v {
            Value::Stream(x) => Some(x),
            _ => None,
        }
    }
    /// A stream key stays when its last entry goes (XDEL, XTRIM), as in Redis.
    fn is_empty_value(&self) -> bool {
        false
    }
}

/// One key inside a locked shard, looked up once.
pub(crate) struct KeyCtx<'s> {
    pub(crate) s: &'s mut Shard,
    pub(crate) db: usize,
    pub(crate) hash: u64,
    pub(crate) key: &'s [u8],
    pub(crate) clock: Clock,
    pub(crate) idx: Option<usize>,
    /// The keyspace event the next change of the key announces ([`KeyCtx::on_change`]).
    event: Option<Event>,
}

/// Redis's index rules for LRANGE, LTRIM and ZRANGE by rank: negative indices count from
/// the end, the range is inclusive and clamped; `None` when it is empty.
pub(super) fn index_range(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

impl<'s> KeyCtx<'s> {
    /// Looks `key` up for a write (no hit/miss counted).
    pub(crate) fn write(
        s: &'s mut Shard,
        db: usize,
        hash: u64,
        key: &'s [u8],
        clock: Clock,
    ) -> Self {
        let idx = s.lookup_write(db, hash, key, &clock);
        Self {
            s,
            db,
            hash,
            key,
            clock,
            idx,
            event: None,
        }
    }

    /// Looks `key` up for a read (a hit or miss is counted).
    pub(crate) fn read(
        s: &'s mut Shard,
        db: usize,
        hash: u64,
        key: &'s [u8],
        clock: Clock,
    ) -> Self {
        let idx = s.lookup_read(db, hash, key, &clock);
        Self {
            s,
            db,
            hash,
            key,
            clock,
            idx,
            event: None,
        }
    }

    /// The keyspace event the next change of the key announces, once: a collection
    /// change through [`KeyCtx::modify_if`] that changed something (before the deletion
    /// of a collection it emptied), a store, a TTL change.
    pub(crate) fn on_change(&mut self, event: Event) -> &mut Self {
        self.event = Some(event);
        self
    }

    /// Announces `event` of the key now.
    pub(crate) fn notify(&self, event: Event) {
        self.s.event(self.db, self.key, event);
    }

    fn announce(&mut self) {
        if let Some(event) = self.event.take() {
            self.notify(event);
        }
    }

    pub(crate) fn exists(&self) -> bool {
        self.idx.is_some()
    }

    pub(crate) fn entry(&self) -> Option<&Entry> {
        self.idx.map(|i| self.s.entry(self.db, i))
    }

    /// The collection of type `T`, `None` if the key is absent, `WrongType` if it holds
    /// another type.
    pub(crate) fn view<T: Kind>(&self) -> Result<Option<&T>, OpError> {
        match self.entry() {
            None => Ok(None),
            Some(e) => T::peek(&e.value).map(Some).ok_or(OpError::WrongType),
        }
    }

    /// Fails with `WrongType` if the key holds something other than a `T`.
    pub(crate) fn check<T: Kind>(&self) -> Result<(), OpError> {
        self.view::<T>().map(|_| ())
    }

    /// Changes the collection of type `T` through `f`, creating it first when `create` (an
    /// absent key without `create` gives `Ok(None)`); deletes the key if `f` empties it.
    pub(crate) fn modify<T: Kind, R>(
        &mut self,
        create: bool,
        f: impl FnOnce(&mut T) -> R,
    ) -> Result<Option<R>, OpError> {
        self.modify_if(create, |v| (f(v), true))
    }

    /// Like [`KeyCtx::modify`], but the key counts as modified (for WATCH and the change
    /// feed) only when `f` says it changed something: Redis does not touch a key for an
    /// SADD of members already there or an SREM of absent ones.
    pub(crate) fn modify_if<T: Kind, R>(
        &mut self,
        create: bool,
        f: impl FnOnce(&mut T) -> (R, bool),
    ) -> Result<Option<R>, OpError> {
        self.check::<T>()?;
        if self.idx.is_none() {
            if !create {
                return Ok(None);
            }
            let access = initial_access(&self.clock);
            let entry = Entry::with_value(self.key, T::wrap(Box::default()), access);
            self.idx = Some(self.s.insert(self.db, self.hash, entry));
        }
        let idx = self.idx.expect("the key exists or was just created");
        let (r, empty, changed) = self.s.update_if(self.db, idx, |e| {
            let v = T::peek_mut(&mut e.value).expect("type checked above");
            let (r, changed) = f(v);
            ((r, v.is_empty_value(), changed), changed)
        });
        if changed {
            self.announce();
        }
        if empty {
            self.delete();
        }
        Ok(Some(r))
    }

    /// Stores a string, replacing any value (and keeping the TTL unless told otherwise).
    pub(crate) fn put_string(&mut self, value: &[u8]) {
        self.put_str(value, false);
    }

    /// Stores a string as text even when it reads as an integer (INCRBYFLOAT's result).
    pub(crate) fn put_text(&mut self, value: &[u8]) {
        self.put_str(value, true);
    }

    fn put_str(&mut self, value: &[u8], text: bool) {
        match self.idx {
            Some(idx) => self.s.update(self.db, idx, |e| {
                if text {
                    e.set_text(value);
                } else {
                    e.set_string(value);
                }
            }),
            None => {
                let access = initial_access(&self.clock);
                let entry = if text {
                    Entry::text(self.key, value, access)
                } else {
                    Entry::string(self.key, value, access)
                };
                self.idx = Some(self.s.insert(self.db, self.hash, entry));
            }
        }
        self.announce();
    }

    /// Stores an already built value, replacing any value.
    pub(crate) fn put_value(&mut self, value: Value) {
        match self.idx {
            Some(idx) => self.s.update(self.db, idx, |e| e.set_value(value)),
            None => {
                let entry = Entry::with_value(self.key, value, initial_access(&self.clock));
                self.idx = Some(self.s.insert(self.db, self.hash, entry));
            }
        }
        self.announce();
    }

    /// Deletes the key if present (a `del` event); returns whether it was.
    pub(crate) fn delete(&mut self) -> bool {
        let deleted = self.take().is_some();
        if deleted {
            self.notify(events::DEL);
        }
        deleted
    }

    /// Removes the key and hands back its entry, announcing nothing.
    pub(crate) fn take(&mut self) -> Option<Entry> {
        let idx = self.idx.take()?;
        Some(self.s.remove(self.db, idx, self.hash))
    }

    pub(crate) fn expire_at(&self) -> Option<u64> {
        self.idx.and_then(|i| self.s.expire_at(self.db, i))
    }

    /// Makes the key a string of at least `len` bytes (creating it, zero-padding it) and
    /// changes its bytes through `f`, told whether the string grew; the key counts as
    /// modified when `f` says so (SETRANGE, SETBIT, BITFIELD).
    pub(crate) fn grow_string<R>(
        &mut self,
        len: usize,
        f: impl FnOnce(&mut Vec<u8>, bool) -> (R, bool),
    ) -> Result<R, OpError> {
        match self.entry() {
            Some(e) => {
                e.str()?;
            }
            None => self.put_string(b""),
        }
        let idx = self.idx.expect("the key exists or was just created");
        let mut modified = false;
        let r = self.s.update_if(self.db, idx, |e| {
            let buf = match e.grown_mut() {
                Ok(buf) => buf,
                Err(error) => return (Err(error), false),
            };
            let grew = buf.len() < len;
            if grew {
                buf.resize(len, 0);
            }
            let (r, changed) = f(buf, grew);
            modified = changed;
            (Ok(r), modified)
        });
        if modified {
            self.announce();
        }
        r
    }

    /// Records a modification of the key that changed nothing else (a TTL change), for
    /// WATCH and the change feed.
    pub(crate) fn mark_modified(&mut self) {
        if let Some(idx) = self.idx {
            self.s.update(self.db, idx, |_| ());
            self.announce();
        }
    }

    pub(crate) fn set_expire(&mut self, at_ms: Option<u64>) {
        if let Some(idx) = self.idx {
            self.s.set_expire(self.db, idx, at_ms);
        }
    }

    pub(crate) fn signal_ready(&mut self) {
        self.s.signal_ready(self.db, self.key);
    }
}

/// Copies bytes out for a reply.
pub(crate) fn out(b: &[u8]) -> Bytes {
    Bytes::copy_from_slice(b)
}

impl Db<'_> {
    /// Runs `f` on `key` looked up for a read.
    pub(crate) fn read_key<R>(
        &mut self,
        key: &[u8],
        now_ms: u64,
        f: impl FnOnce(&mut KeyCtx<'_>) -> R,
    ) -> R {
        let (shard, hash) = self.route(key);
        let (db, clock) = (self.db, self.clock(now_ms));
        self.with_shard(shard, |s| f(&mut KeyCtx::read(s, db, hash, key, clock)))
    }

    /// Runs `f` on `key` looked up for a write; `grows` says the command may add data, so
    /// `max_memory` is enforced first.
    pub(crate) fn write_key<R>(
        &mut self,
        key: &[u8],
        now_ms: u64,
        grows: bool,
        f: impl FnOnce(&mut KeyCtx<'_>) -> Result<R, OpError>,
    ) -> Result<R, OpError> {
        if grows {
            self.make_room(now_ms)?;
        }
        let (shard, hash) = self.route(key);
        let (db, clock) = (self.db, self.clock(now_ms));
        self.with_shard(shard, |s| f(&mut KeyCtx::write(s, db, hash, key, clock)))
    }

    /// Runs `f` with the shards of all `keys` locked (ascending order), passing each key's
    /// (shard, hash).
    pub(crate) fn multi<R>(
        &mut self,
        keys: &[&[u8]],
        f: impl FnOnce(&mut crate::keyspace::ShardSet<'_>, &[(usize, u64)]) -> R,
    ) -> R {
        let routes: Vec<(usize, u64)> = keys.iter().map(|k| self.route(k)).collect();
        let shards: Vec<usize> = routes.iter().map(|r| r.0).collect();
        self.with_shards(&shards, |set| f(set, &routes))
    }
}

/// `count` distinct positions in `0..len` (all of them when `count >= len`), in random order.
pub(crate) fn distinct_indices(rng: &mut crate::rng::Rng, len: usize, count: usize) -> Vec<usize> {
    if count >= len {
        return (0..len).collect();
    }
    if count * 4 >= len {
        // Partial Fisher-Yates over all positions.
        let mut all: Vec<usize> = (0..len).collect();
        for i in 0..count {
            let j = i + rng.below(len - i);
            all.swap(i, j);
        }
        all.truncate(count);
        return all;
    }
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let i = rng.below(len);
        if seen.insert(i) {
            out.push(i);
        }
    }
    out
}

/// Most picks with repeats one HRANDFIELD/SRANDMEMBER/ZRANDMEMBER answers (a negative
/// count): the reply is built whole, so `-10000000000` must not try.
pub const MAX_RANDOM_PICKS: u64 = 1 << 24;

/// Positions for HRANDFIELD/SRANDMEMBER/ZRANDMEMBER-style `count`: positive = distinct,
/// negative = |count| picks with repeats (at most [`MAX_RANDOM_PICKS`]).
pub(crate) fn random_indices(
    rng: &mut crate::rng::Rng,
    len: usize,
    count: i64,
) -> Result<Vec<usize>, OpError> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if count >= 0 {
        return Ok(distinct_indices(rng, len, count as usize));
    }
    let picks = count.unsigned_abs();
    if picks > MAX_RANDOM_PICKS {
        return Err(OpError::TooManyPicks);
    }
    Ok((0..picks).map(|_| rng.below(len)).collect())
}

/// Validates every key of a multi-key read: expires lazily, checks the value type with
/// `check` (missing keys are fine), and returns each key's position (or `None`).
pub(crate) fn locate_all(
    set: &mut crate::keyspace::ShardSet<'_>,
    db: usize,
    keys: &[&[u8]],
    routes: &[(usize, u64)],
    clock: Clock,
    check: impl Fn(&KeyCtx<'_>) -> Result<(), OpError>,
) -> Result<Vec<Option<usize>>, OpError> {
    keys.iter()
        .zip(routes)
        .map(|(key, &(shard, hash))| {
            let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
            check(&k)?;
            Ok(k.idx)
        })
        .collect()
}

/// The stored entry a [`locate_all`] position names.
pub(crate) fn entry_at<'a>(
    set: &'a crate::keyspace::ShardSet<'_>,
    db: usize,
    shard: usize,
    idx: Option<usize>,
) -> Option<&'a Entry> {
    idx.map(|i| set.peek(shard).entry(db, i))
}
