//! Whole-keyspace snapshots in RDB form: writing one to a sink, and loading one fed in
//! chunks, so neither the writer nor the loader holds the file in memory.

use std::sync::MutexGuard;
use std::sync::atomic::{AtomicU64, Ordering};

use super::value::{Loaded, is_value_type, read_value, write_value};
use super::{Input, RDB_VERSION, RdbError, bad, crc64, write_length, write_string};
use crate::config::EvictionPolicy;
use crate::evict::{Clock, idle_ms, initial_access, lfu_counter};
use crate::keyspace::{DbTable, Keyspace, Shard, lock};

const OP_FUNCTION2: u8 = 0xF5;
const OP_MODULE_AUX: u8 = 0xF7;
const OP_IDLE: u8 = 0xF8;
const OP_FREQ: u8 = 0xF9;
const OP_AUX: u8 = 0xFA;
const OP_RESIZEDB: u8 = 0xFB;
const OP_EXPIRETIME_MS: u8 = 0xFC;
const OP_EXPIRETIME: u8 = 0xFD;
const OP_SELECTDB: u8 = 0xFE;
const OP_EOF: u8 = 0xFF;

/// Bytes gathered before they are handed to the sink.
const CHUNK: usize = if cfg!(test) { 1 } else { 64 << 10 };

/// Keys a background snapshot writes per hold of a shard, and bytes after which it lets
/// go sooner: a command waits for at most this much work.
const CAPTURE_KEYS: usize = if cfg!(test) { 2 } else { 256 };
const CAPTURE_BYTES: usize = 64 << 10;

/// The pause of a background snapshot after each hold of a shard. Written flat out, a
/// snapshot keeps a core busy, and on a machine with few cores a serving thread woken by
/// a request waits for it to be descheduled (milliseconds); pausing, it leaves the core
/// free often enough that requests do not wait. A 1 M-key snapshot of an idle server
/// takes 0.77 s instead of 0.33 s (benchmarks.md, "Cache snapshots").
const CAPTURE_PAUSE: std::time::Duration =
    std::time::Duration::from_micros(if cfg!(test) { 0 } else { 20 });

/// How the keyspace is walked while a snapshot is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// Every shard stays locked for the whole snapshot (SAVE): one instant, no writes meanwhile.
    PointInTime,
    /// One shard at a time (BGSAVE): serving goes on; each shard is captured at its own
    /// instant.
    PerShard,
}

/// What a snapshot holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Keys written.
    pub keys: u64,
    /// Keys written with a TTL.
    pub expires: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// Builds a snapshot's bytes and hands them to a sink in chunks, keeping the running CRC.
pub struct SnapshotWriter<'a, E> {
    buf: Vec<u8>,
    crc: u64,
    bytes: u64,
    sink: &'a mut dyn FnMut(&[u8]) -> Result<(), E>,
}

impl<'a, E> SnapshotWriter<'a, E> {
    /// A snapshot beginning with the header, `aux` fields and `records` (whole RDB
    /// records written as given: function libraries).
    pub fn new(
        aux: &[(&str, &[u8])],
        records: &[u8],
        sink: &'a mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Self {
        let mut buf = Vec::with_capacity(CHUNK * 2);
        buf.extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
        for (name, value) in aux {
            buf.push(OP_AUX);
            write_string(&mut buf, name.as_bytes());
            write_string(&mut buf, value);
        }
        buf.extend_from_slice(records);
        Self {
            buf,
            crc: 0,
            bytes: 0,
            sink,
        }
    }

    fn flush(&mut self) -> Result<(), E> {
        self.crc = crc64(self.crc, &self.buf);
        self.bytes += self.buf.len() as u64;
        (self.sink)(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn maybe_flush(&mut self) -> Result<(), E> {
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the end marker and the checksum; the file's size.
    pub fn finish(mut self) -> Result<u64, E> {
        self.buf.push(OP_EOF);
        let crc = crc64(self.crc, &self.buf);
        self.buf.extend_from_slice(&crc.to_le_bytes());
        self.crc = crc;
        self.bytes += self.buf.len() as u64;
        (self.sink)(&self.buf)?;
        Ok(self.bytes)
    }
}

impl Keyspace {
    /// Writes every live key to `sink` as an RDB file with `aux` fields and `records`
    /// before the keys; with [`Consistency::PointInTime`] all shards are held for the
    /// whole walk. The keys go shard by shard, each shard's databases in turn (a
    /// `SELECTDB` before each), so that every database of a shard is captured at the same
    /// instant, also across SWAPDB.
    pub fn write_snapshot<E>(
        &self,
        now_ms: u64,
        (aux, records): (&[(&str, &[u8])], &[u8]),
        consistency: Consistency,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<SnapshotStats, E> {
        let clock = self.clock(now_ms);
        let policy = self.policy();
        let mut w = SnapshotWriter::new(aux, records, sink);
        let mut stats = SnapshotStats::default();
        let held: Vec<MutexGuard<'_, Shard>> = match consistency {
            Consistency::PointInTime => self.shards.iter().map(|c| lock(&c.lock)).collect(),
            Consistency::PerShard => Vec::new(),
        };
        let mut sizes = self.database_sizes(&held);
        for i in 0..self.shards.len() {
            match held.get(i) {
                Some(s) => {
                    for (db, t) in s
                        .dbs
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| !t.table.is_empty())
                    {
                        select(&mut w.buf, db, &mut sizes);
                        for idx in 0..t.table.len() {
                            write_entry(&mut w.buf, t, idx, &clock, policy, &mut stats);
                        }
                        w.maybe_flush()?;
                    }
                }
                None => self.capture(i, (clock, policy), &mut sizes, &mut w, &mut stats)?,
            }
        }
        drop(held);
        stats.bytes = w.finish()?;
        Ok(stats)
    }

    /// Keys and keys with a TTL per database, as `RESIZEDB` hints (shard by shard, unless
    /// every shard is `held`).
    fn database_sizes(&self, held: &[MutexGuard<'_, Shard>]) -> Vec<Option<(usize, usize)>> {
        let mut sizes = vec![(0, 0); self.databases];
        let mut add = |s: &Shard| {
            for (size, t) in sizes.iter_mut().zip(&s.dbs) {
                size.0 += t.table.len();
                size.1 += t.volatile.len();
            }
        };
        if held.is_empty() {
            self.shards.iter().for_each(|c| add(&lock(&c.lock)));
        } else {
            held.iter().for_each(|s| add(s));
        }
        sizes.into_iter().map(Some).collect()
    }

    /// Writes the keys of shard `i`, every database as it was when this began, holding
    /// the shard for [`CAPTURE_KEYS`] keys at a time: a [`Capture`] per database,
    /// registered with the shard, keeps the keys that writers change before the walk
    /// reaches them.
    fn capture<E>(
        &self,
        i: usize,
        (clock, policy): (Clock, EvictionPolicy),
        sizes: &mut [Option<(usize, usize)>],
        w: &mut SnapshotWriter<'_, E>,
        stats: &mut SnapshotStats,
    ) -> Result<(), E> {
        static IDS: AtomicU64 = AtomicU64::new(0);
        let cell = &self.shards[i].lock;
        // Unregisters the captures however this ends (a failed write included).
        struct Registered<'a>(&'a std::sync::Mutex<Shard>, Vec<(u64, usize)>);
        impl Drop for Registered<'_> {
            fn drop(&mut self) {
                let ids = &self.1;
                lock(self.0)
                    .captures
                    .retain(|c| !ids.iter().any(|&(id, _)| id == c.id));
            }
        }
        let mut registered = Registered(cell, Vec::new());
        {
            let mut s = lock(cell);
            for db in 0..s.dbs.len() {
                if s.dbs[db].table.is_empty() {
                    continue;
                }
                let id = IDS.fetch_add(1, Ordering::Relaxed);
                s.captures.push(Capture {
                    id,
                    db,
                    next: 0,
                    taken: Vec::new(),
                    saved: Vec::new(),
                    stats: SnapshotStats::default(),
                    clock,
                    policy,
                });
                registered.1.push((id, db));
            }
        }
        for &(id, db) in &registered.1 {
            select(&mut w.buf, db, sizes);
            loop {
                let done = {
                    let mut guard = lock(cell);
                    let s = &mut *guard;
                    let at = s
                        .captures
                        .iter()
                        .position(|c| c.id == id)
                        .expect("registered until its walk is done");
                    let c = &mut s.captures[at];
                    let done = c.step(&s.dbs[c.db], &mut w.buf);
                    if done {
                        stats.keys += c.stats.keys;
                        stats.expires += c.stats.expires;
                        s.captures.swap_remove(at);
                    }
                    done
                };
                w.maybe_flush()?;
                if done {
                    break;
                }
                std::thread::sleep(CAPTURE_PAUSE);
            }
        }
        Ok(())
    }
}

/// Starts the keys of database `db`: `SELECTDB`, and the first time, `RESIZEDB` with the
/// database's size when the snapshot began (unless it was empty).
fn select(out: &mut Vec<u8>, db: usize, sizes: &mut [Option<(usize, usize)>]) {
    out.push(OP_SELECTDB);
    write_length(out, db as u64);
    if let Some((keys, expires)) = sizes[db].take().filter(|&(keys, _)| keys > 0) {
        out.push(OP_RESIZEDB);
        write_length(out, keys as u64);
        write_length(out, expires as u64);
    }
}

/// A background snapshot's walk through one database of one shard, registered with the
/// shard while it runs. Keys below `next` were written (or came after the walk began);
/// of those at or above it, the ones marked in `taken` were already written, by a writer
/// that changed them, or came after the walk began: the walk passes over them. So each
/// key is written once, as it was when the walk began.
#[derive(Debug)]
pub(crate) struct Capture {
    id: u64,
    /// The database the walk goes through (it follows the keys through SWAPDB).
    pub(crate) db: usize,
    next: usize,
    /// A bit per table position.
    taken: Vec<u64>,
    /// Keys written by writers, waiting to be handed to the file.
    saved: Vec<u8>,
    stats: SnapshotStats,
    clock: Clock,
    policy: EvictionPolicy,
}

impl Capture {
    fn is_taken(&self, idx: usize) -> bool {
        self.taken
            .get(idx / 64)
            .is_some_and(|word| word & (1 << (idx % 64)) != 0)
    }

    fn mark(&mut self, idx: usize, taken: bool) {
        let word = idx / 64;
        if self.taken.len() <= word {
            if !taken {
                return;
            }
            self.taken.resize(word + 1, 0);
        }
        if taken {
            self.taken[word] |= 1 << (idx % 64);
        } else {
            self.taken[word] &= !(1 << (idx % 64));
        }
    }

    fn save(&mut self, t: &DbTable, idx: usize) {
        let (clock, policy) = (self.clock, self.policy);
        write_entry(&mut self.saved, t, idx, &clock, policy, &mut self.stats);
    }

    /// The key at `idx` is about to change or go: written first if the walk has not
    /// reached it.
    pub(crate) fn before_change(&mut self, t: &DbTable, idx: usize) {
        if idx >= self.next && !self.is_taken(idx) {
            self.save(t, idx);
            self.mark(idx, true);
        }
    }

    /// A key came at `idx`, after the walk began: not for this snapshot.
    pub(crate) fn inserted(&mut self, idx: usize) {
        if idx >= self.next {
            self.mark(idx, true);
        }
    }

    /// The key at `idx` was removed (after [`Capture::before_change`]) and the one at
    /// `last` took its place (`t` as it is now).
    pub(crate) fn removed(&mut self, t: &DbTable, idx: usize, last: usize) {
        let moved_taken = self.is_taken(last);
        self.mark(last, false);
        if idx == last {
            return;
        }
        if idx >= self.next {
            self.mark(idx, moved_taken);
        } else if last >= self.next && !moved_taken {
            // Moved behind the walk before it was written.
            self.save(t, idx);
        }
    }

    /// The database is about to be emptied: what the walk has not reached is written now.
    pub(crate) fn flushing(&mut self, t: &DbTable) {
        for idx in self.next..t.table.len() {
            if !self.is_taken(idx) {
                self.save(t, idx);
            }
        }
        self.next = 0;
        self.taken.clear();
    }

    /// Writes what writers saved and the next keys of the walk to `out`; whether the walk
    /// is done.
    fn step(&mut self, t: &DbTable, out: &mut Vec<u8>) -> bool {
        out.append(&mut self.saved);
        let start = out.len();
        let end = (self.next + CAPTURE_KEYS).min(t.table.len());
        while self.next < end && out.len() - start < CAPTURE_BYTES {
            let idx = self.next;
            if self.is_taken(idx) {
                self.mark(idx, false);
            } else {
                let (clock, policy) = (self.clock, self.policy);
                write_entry(out, t, idx, &clock, policy, &mut self.stats);
            }
            self.next += 1;
        }
        self.next >= t.table.len()
    }
}

/// Writes the key at `idx` of `t` to `out`, unless it expired.
fn write_entry(
    out: &mut Vec<u8>,
    t: &DbTable,
    idx: usize,
    clock: &Clock,
    policy: EvictionPolicy,
    stats: &mut SnapshotStats,
) {
    let expire = t.expire_at(idx);
    if expire.is_some_and(|at| at <= clock.now_ms) {
        return;
    }
    let entry = t.table.at(idx);
    if let Some(at) = expire {
        out.push(OP_EXPIRETIME_MS);
        out.extend_from_slice(&at.to_le_bytes());
        stats.expires += 1;
    }
    if policy.is_lfu() {
        out.push(OP_FREQ);
        out.push(lfu_counter(entry.access, clock) as u8);
    } else if policy.is_lru() {
        out.push(OP_IDLE);
        write_length(out, idle_ms(entry.access, clock.now_ms) / 1000);
    }
    write_value(out, entry, Some(crate::table::Keyed::key(entry)));
    stats.keys += 1;
}

/// Why a snapshot could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The file is not an RDB file, or from a newer version.
    #[error("not an RDB file of version {RDB_VERSION} or older: {0}")]
    Header(String),
    /// The bytes at `offset` are not valid.
    #[error("bad data at byte {offset}: {reason}")]
    Bad {
        /// Where the item that failed starts.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// The file ends before its end marker and checksum.
    #[error("the file ends at byte {0} before its end marker")]
    Truncated(u64),
    /// The checksum does not match the contents.
    #[error("checksum mismatch: the file says {expected:#018x}, the contents give {actual:#018x}")]
    Checksum {
        /// The checksum in the file.
        expected: u64,
        /// The checksum of the contents.
        actual: u64,
    },
}

/// What a load found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Keys loaded.
    pub keys: u64,
    /// Keys skipped because they had expired.
    pub expired: u64,
    /// Keys skipped because they held an empty collection.
    pub empty: u64,
    /// The RDB version of the file.
    pub version: u16,
    /// Function libraries the file carries (their source), for the scripting layer.
    pub functions: Vec<Vec<u8>>,
    /// The auxiliary fields, in file order.
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Loads an RDB file fed in chunks of any size into a keyspace.
#[derive(Debug)]
pub struct SnapshotLoader {
    buf: Vec<u8>,
    /// Bytes of the file consumed before `buf`.
    offset: u64,
    crc: u64,
    header: bool,
    done: bool,
    db: usize,
    expire: Option<u64>,
    idle_s: Option<u64>,
    freq: Option<u8>,
    /// A key already there is replaced instead of failing the load.
    merge: bool,
    report: LoadReport,
    /// Bytes left in `buf` by the last parse, which ended in an unfinished item: the
    /// next parse waits until `buf` holds twice as many, so a key of n bytes is parsed
    /// about log n times rather than once per chunk (quadratic).
    waiting: usize,
}

impl Default for SnapshotLoader {
    fn default() -> Self {
        Self::new()
    }
}

/// One parsed item of the file.
enum Item {
    Key(Vec<u8>, Loaded),
    Other,
}

impl SnapshotLoader {
    /// A loader at the start of a file.
    pub fn new() -> Self {
        Self {
            buf: Vec::new(),
            offset: 0,
            crc: 0,
            header: false,
            done: false,
            db: 0,
            expire: None,
            idle_s: None,
            freq: None,
            merge: false,
            report: LoadReport::default(),
            waiting: 0,
        }
    }

    /// The same loader, replacing keys already there instead of failing on them.
    pub fn merging(self) -> Self {
        Self {
            merge: true,
            ..self
        }
    }

    /// Feeds the next bytes of the file; keys are stored in `ks` as they complete (a large
    /// one once enough of it is there, see [`SnapshotLoader::finish`]).
    pub fn feed(&mut self, ks: &Keyspace, chunk: &[u8], now_ms: u64) -> Result<(), LoadError> {
        self.buf.extend_from_slice(chunk);
        if self.buf.len() < self.waiting.saturating_mul(2) {
            return Ok(());
        }
        self.parse_buffered(ks, now_ms)
    }

    fn parse_buffered(&mut self, ks: &Keyspace, now_ms: u64) -> Result<(), LoadError> {
        let mut buf = std::mem::take(&mut self.buf);
        let consumed = self.parse(ks, &buf, now_ms)?;
        self.crc = crc64(self.crc, &buf[..consumed]);
        self.offset += consumed as u64;
        buf.drain(..consumed);
        self.waiting = if self.done { 0 } else { buf.len() };
        self.buf = buf;
        Ok(())
    }

    /// Parses the complete items at the start of `buf`; the bytes they took.
    fn parse(&mut self, ks: &Keyspace, buf: &[u8], now_ms: u64) -> Result<usize, LoadError> {
        let mut input = Input::new(buf);
        if !self.header {
            if buf.len() < 9 {
                return Ok(0);
            }
            let head = input.take(9).expect("9 bytes");
            let version = std::str::from_utf8(&head[5..])
                .ok()
                .and_then(|v| v.parse::<u16>().ok());
            match (head.starts_with(b"REDIS"), version) {
                (true, Some(v)) if (1..=RDB_VERSION).contains(&v) => self.report.version = v,
                _ => {
                    return Err(LoadError::Header(
                        String::from_utf8_lossy(head).into_owned(),
                    ));
                }
            }
            self.header = true;
        }
        let mut consumed = input.pos;
        while !self.done {
            let start = input.pos;
            let at = |offset: u64, reason| LoadError::Bad {
                offset: offset + start as u64,
                reason,
            };
            match self.item(&mut input) {
                Ok(Item::Key(key, loaded)) => {
                    consumed = input.pos;
                    self.store(ks, &key, loaded, now_ms)
                        .map_err(|reason| at(self.offset, reason))?;
                }
                Ok(Item::Other) => consumed = input.pos,
                Err(RdbError::Truncated) => break,
                Err(RdbError::Bad(reason)) => return Err(at(self.offset, reason)),
            }
        }
        Ok(consumed)
    }

    fn item(&mut self, input: &mut Input<'_>) -> Result<Item, RdbError> {
        let op = input.u8()?;
        match op {
            OP_EOF => {
                self.done = true;
                Ok(Item::Other)
            }
            OP_SELECTDB => {
                self.db = usize::try_from(input.length()?).unwrap_or(usize::MAX);
                Ok(Item::Other)
            }
            OP_RESIZEDB => {
                input.length()?;
                input.length()?;
                Ok(Item::Other)
            }
            OP_AUX => {
                let name = input.string()?.into_owned();
                let value = input.string()?.into_owned();
                self.report.aux.push((name, value));
                Ok(Item::Other)
            }
            OP_FUNCTION2 => {
                let code = input.string()?.into_owned();
                self.report.functions.push(code);
                Ok(Item::Other)
            }
            OP_MODULE_AUX => Err(bad("module data, which Quiver does not load")),
            OP_EXPIRETIME_MS => {
                self.expire = Some(input.u64_le()?);
                Ok(Item::Other)
            }
            OP_EXPIRETIME => {
                self.expire = Some(u64::from(input.u32_le()?) * 1000);
                Ok(Item::Other)
            }
            OP_IDLE => {
                self.idle_s = Some(input.length()?);
                Ok(Item::Other)
            }
            OP_FREQ => {
                self.freq = Some(input.u8()?);
                Ok(Item::Other)
            }
            t if is_value_type(t) => {
                let key = input.string()?.into_owned();
                let loaded = read_value(t, input)?;
                Ok(Item::Key(key, loaded))
            }
            other => Err(bad(format!("unknown type or opcode {other}"))),
        }
    }

    fn store(
        &mut self,
        ks: &Keyspace,
        key: &[u8],
        loaded: Loaded,
        now_ms: u64,
    ) -> Result<(), String> {
        let expire = self.expire.take();
        let (idle_s, freq) = (self.idle_s.take(), self.freq.take());
        if self.db >= ks.databases() {
            return Err(format!(
                "database {} out of range (the node has {} databases)",
                self.db,
                ks.databases()
            ));
        }
        if expire.is_some_and(|at| at <= now_ms) {
            self.report.expired += 1;
            return Ok(());
        }
        if loaded.is_empty_collection() {
            self.report.empty += 1;
            return Ok(());
        }
        let clock = ks.clock(now_ms);
        let access = match (clock.lfu, idle_s, freq) {
            (true, _, Some(f)) => (((now_ms / 60_000) & 0xFF_FFFF) as u32) << 8 | u32::from(f),
            (false, Some(idle), _) => (now_ms / 1000).saturating_sub(idle) as u32,
            _ => initial_access(&clock),
        };
        let mut db = ks.db(self.db).map_err(|e| e.to_string())?;
        if self.merge {
            db.replace_loaded(key, loaded, expire, now_ms);
        } else {
            db.load_entry(key, loaded, expire, access, now_ms)
                .map_err(|()| {
                    format!(
                        "the key {:?} is already there",
                        String::from_utf8_lossy(key)
                    )
                })?;
        }
        self.report.keys += 1;
        Ok(())
    }

    /// Checks that the file was complete and its checksum right (a zero checksum, which
    /// Redis writes with `rdbchecksum no`, is not checked).
    /// Ends the load after the last [`SnapshotLoader::feed`], storing in `ks` what is
    /// left to parse; the file must have ended (its EOF and checksum).
    pub fn finish(mut self, ks: &Keyspace, now_ms: u64) -> Result<LoadReport, LoadError> {
        if !self.done {
            self.parse_buffered(ks, now_ms)?;
        }
        if !self.done || self.buf.len() < 8 && self.report.version >= 5 {
            return Err(LoadError::Truncated(self.offset + self.buf.len() as u64));
        }
        if self.report.version >= 5 {
            let expected = u64::from_le_bytes(self.buf[..8].try_into().expect("8 bytes"));
            if expected != 0 && expected != self.crc {
                return Err(LoadError::Checksum {
                    expected,
                    actual: self.crc,
                });
            }
        }
        Ok(self.report)
    }
}

#[cfg(test)]
mod tests {
    //! A background snapshot against a model: writes land between every two keys it
    //! writes (`CAPTURE_KEYS` and `CHUNK` are tiny in tests), and the file still holds
    //! each key of every database exactly as it was when the snapshot began (one shard:
    //! one instant).

    use proptest::prelude::*;

    use super::{Consistency, SnapshotLoader};
    use crate::{CacheConfig, ExpireCondition, Keyspace, ListEnd, SetOptions};

    const NOW: u64 = 1_700_000_000_000;

    #[derive(Debug, Clone)]
    enum Op {
        Set(u8, u8),
        Append(u8),
        Push(u8),
        Del(u8),
        Expire(u8),
        Persist(u8),
        Rename(u8, u8),
        Move(u8, usize),
        FlushDb,
        FlushAll,
        SwapDb(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0..24u8;
        prop_oneof![
            4 => (key.clone(), any::<u8>()).prop_map(|(k, v)| Op::Set(k, v)),
            2 => key.clone().prop_map(Op::Append),
            2 => key.clone().prop_map(Op::Push),
            3 => key.clone().prop_map(Op::Del),
            2 => key.clone().prop_map(Op::Expire),
            1 => key.clone().prop_map(Op::Persist),
            2 => (key.clone(), key.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
            1 => (key, 1..3usize).prop_map(|(k, db)| Op::Move(k, db)),
            1 => Just(Op::FlushDb),
            1 => Just(Op::FlushAll),
            2 => (1..3usize).prop_map(Op::SwapDb),
        ]
    }

    fn key(k: u8) -> Vec<u8> {
        format!("key:{k}").into_bytes()
    }

    fn apply(ks: &Keyspace, op: &Op) {
        let mut db = ks.db(0).unwrap();
        // Wrong-type errors change nothing, and are part of the game.
        match *op {
            Op::Set(k, v) => drop(db.set(&key(k), &[v; 3], SetOptions::default(), NOW)),
            Op::Append(k) => drop(db.append(&key(k), b"+", NOW)),
            Op::Push(k) => drop(db.push(&key(k), &[b"item"], ListEnd::Right, false, NOW)),
            Op::Del(k) => drop(db.del(&[&key(k)], NOW)),
            Op::Expire(k) => drop(db.expire_at(
                &key(k),
                (NOW + 60_000 + u64::from(k)) as i64,
                ExpireCondition::Always,
                NOW,
            )),
            Op::Persist(k) => drop(db.persist(&key(k), NOW)),
            Op::Rename(a, b) => drop(db.rename(&key(a), &key(b), false, NOW)),
            Op::Move(k, to) => drop(db.move_key(&key(k), to, NOW)),
            Op::FlushDb => drop(db.flushdb()),
            Op::FlushAll => drop(db.flushall()),
            Op::SwapDb(other) => db.swapdb(0, other).unwrap(),
        }
    }

    /// Databases 0 to 2 (the only ones the operations reach): every key with its DUMP
    /// payload and expiry time.
    fn contents(ks: &Keyspace) -> Vec<(usize, Vec<u8>, Vec<u8>, i64)> {
        let mut out = Vec::new();
        for n in 0..3 {
            let mut db = ks.db(n).unwrap();
            let mut keys = db.keys(b"*", NOW);
            keys.sort();
            for k in keys {
                let dump = db.dump(&k, NOW).expect("listed");
                let at = db.expire_time_ms(&k, NOW);
                out.push((n, k, dump, at));
            }
        }
        out
    }

    fn keyspace() -> Keyspace {
        Keyspace::new(CacheConfig {
            shards: 1,
            ..CacheConfig::default()
        })
        .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn writes_during_a_background_snapshot_do_not_change_what_it_holds(
            before in proptest::collection::vec(op(), 0..60),
            during in proptest::collection::vec(op(), 0..60),
        ) {
            let ks = keyspace();
            for op in &before {
                apply(&ks, op);
            }
            let expected = contents(&ks);
            let mut file = Vec::new();
            let mut pending = during.iter();
            ks.write_snapshot(NOW, (&[], &[]), Consistency::PerShard, &mut |bytes: &[u8]| {
                file.extend_from_slice(bytes);
                if let Some(op) = pending.next() {
                    apply(&ks, op);
                }
                Ok::<(), ()>(())
            })
            .unwrap();
            let loaded = keyspace();
            let mut loader = SnapshotLoader::new();
            loader.feed(&loaded, &file, NOW).unwrap();
            loader.finish(&loaded, NOW).unwrap();
            prop_assert_eq!(contents(&loaded), expected);
        }
    }

    /// A file fed in small pieces, with a key far larger than a piece: every key loads,
    /// and the big one is parsed a few times, not once per piece.
    #[test]
    fn a_large_key_fed_in_small_pieces_loads_whole() {
        let ks = keyspace();
        let items: Vec<Vec<u8>> = (0..20_000u32)
            .map(|i| format!("item-{i}").into_bytes())
            .collect();
        let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
        {
            let mut db = ks.db(0).unwrap();
            db.push(b"big", &items, ListEnd::Right, false, NOW).unwrap();
            db.set(b"small", b"v", SetOptions::default(), NOW).unwrap();
        }
        let mut file = Vec::new();
        ks.write_snapshot(NOW, (&[], &[]), Consistency::PerShard, &mut |c: &[u8]| {
            file.extend_from_slice(c);
            Ok::<(), ()>(())
        })
        .unwrap();
        let loaded = keyspace();
        let mut loader = SnapshotLoader::new();
        let mut parses = 0;
        for piece in file.chunks(256) {
            let before = loader.waiting;
            loader.feed(&loaded, piece, NOW).unwrap();
            parses += usize::from(loader.waiting != before || loader.buf.is_empty());
        }
        loader.finish(&loaded, NOW).unwrap();
        assert_eq!(contents(&loaded), contents(&ks));
        assert!(
            parses < file.len() / 256 / 4,
            "{parses} parses for {} bytes",
            file.len()
        );
    }
}
