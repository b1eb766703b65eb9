//! Journal records: the state of changed keys, one record per key, for the append-only
//! file. A record says what a key *is* after a change, never which command made it, so
//! replaying records is deterministic (no clock, no randomness, no script) and replaying
//! one twice does no harm.
//!
//! Record forms (the value of one log record; numbers as RDB lengths unless said):
//! - `W` db expire_ms(u64 LE, 0 for none) type key value: the key holds this value
//!   (type, key and value exactly as in an RDB file);
//! - `D` db key(RDB string): the key is gone;
//! - `F` db: every key of the database is gone (followed by `W` records for the keys it
//!   holds at the time, which SWAPDB brings);
//! - `L` code…: the function libraries, each as an RDB string (replacing all).

use super::value::{Loaded, is_value_type, read_value, write_value};
use super::{Input, RdbError, bad, write_length, write_string};
use crate::keyspace::{Keyspace, Shard, lock_spinning};
use crate::table::Keyed;
use crate::{Change, ChangeKind};

const TAG_WRITE: u8 = b'W';
const TAG_DELETE: u8 = b'D';
const TAG_FLUSH: u8 = b'F';
const TAG_LIBRARIES: u8 = b'L';

/// A shard stayed held while changes were journaled; try again later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a shard is held (a script or a transaction holds the keyspace)")]
pub struct ShardBusy;

/// What one replayed record did beyond the keyspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replayed {
    /// A key was written or removed, or a database emptied.
    Keys,
    /// The function libraries are now these (their source code).
    Libraries(Vec<Vec<u8>>),
}

impl Keyspace {
    /// Appends to `out` the records of `changes` (from the change feed, in order): the
    /// state of each key changed, and for an emptied database ([`ChangeKind::Flushed`],
    /// which SWAPDB also reports) the database's whole content.
    ///
    /// Never waits long for a shard: at a change whose shard stays held (a script or a
    /// transaction holds the keyspace) it stops with [`ShardBusy`] and the number of
    /// changes before it, whose records `out` holds.
    pub fn journal_changes(
        &self,
        changes: &[Change],
        now_ms: u64,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<(), (ShardBusy, usize)> {
        let mut last: Option<(usize, &[u8])> = None;
        for (i, change) in changes.iter().enumerate() {
            let done = out.len();
            let journaled = match change.kind {
                ChangeKind::Event(_) => Ok(()),
                ChangeKind::Flushed { .. } => {
                    last = None;
                    self.journal_database(change.db, now_ms, out)
                }
                // The same key again right after itself: its state is journaled once.
                _ if last == Some((change.db, &change.key)) => Ok(()),
                _ if change.db >= self.databases => Ok(()),
                _ => {
                    last = Some((change.db, &change.key));
                    self.journal_key(change.db, &change.key, now_ms)
                        .map(|record| out.push(record))
                }
            };
            if let Err(busy) = journaled {
                out.truncate(done);
                return Err((busy, i));
            }
        }
        Ok(())
    }

    /// The record of `key` of database `db` with its state at `now_ms`: its value, or
    /// that it is gone.
    fn journal_key(&self, db: usize, key: &[u8], now_ms: u64) -> Result<Vec<u8>, ShardBusy> {
        let (shard, hash) = self.route(key);
        let s = lock_spinning(&self.shards[shard].lock).ok_or(ShardBusy)?;
        let found = s.dbs[db]
            .table
            .find(hash, key)
            .filter(|&idx| s.expire_at(db, idx).is_none_or(|at| at > now_ms));
        let mut record = Vec::new();
        match found {
            Some(idx) => write_entry(&mut record, &s, db, idx),
            None => {
                record.push(TAG_DELETE);
                write_length(&mut record, db as u64);
                write_string(&mut record, key);
            }
        }
        Ok(record)
    }

    /// Appends to `out` the record emptying database `db`, then one record per key it
    /// holds at `now_ms`, a shard at a time.
    fn journal_database(
        &self,
        db: usize,
        now_ms: u64,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<(), ShardBusy> {
        let mut record = vec![TAG_FLUSH];
        write_length(&mut record, db as u64);
        out.push(record);
        if db >= self.databases {
            return Ok(());
        }
        for idx in 0..self.shards.len() {
            let s = lock_spinning(&self.shards[idx].lock).ok_or(ShardBusy)?;
            for idx in 0..s.dbs[db].table.len() {
                if s.expire_at(db, idx).is_some_and(|at| at <= now_ms) {
                    continue;
                }
                let mut record = Vec::new();
                write_entry(&mut record, &s, db, idx);
                out.push(record);
            }
        }
        Ok(())
    }

    /// Applies one record read back from the journal.
    pub fn replay_journal(&self, record: &[u8], now_ms: u64) -> Result<Replayed, RdbError> {
        let mut input = Input::new(record);
        let tag = input.u8()?;
        if tag == TAG_LIBRARIES {
            let mut libraries = Vec::new();
            while input.remaining() > 0 {
                libraries.push(input.string()?.into_owned());
            }
            return Ok(Replayed::Libraries(libraries));
        }
        let db = usize::try_from(input.length()?).unwrap_or(usize::MAX);
        let mut handle = self.db(db).map_err(|_| {
            bad(format!(
                "database {db} out of range (the node has {} databases)",
                self.databases
            ))
        })?;
        match tag {
            TAG_WRITE => {
                let expire = input.u64_le()?;
                let t = input.u8()?;
                if !is_value_type(t) {
                    return Err(bad(format!("unknown value type {t}")));
                }
                let key = input.string()?.into_owned();
                let loaded: Loaded = read_value(t, &mut input)?;
                if loaded.is_empty_collection() {
                    return Err(bad("an empty collection"));
                }
                match (expire != 0).then_some(expire) {
                    Some(at) if at <= now_ms => {
                        handle.del(&[&key], now_ms);
                    }
                    expire => handle.replace_loaded(&key, loaded, expire, now_ms),
                }
            }
            TAG_DELETE => {
                let key = input.string()?;
                handle.del(&[&key], now_ms);
            }
            TAG_FLUSH => drop(handle.flushdb()),
            other => return Err(bad(format!("unknown journal record tag {other}"))),
        }
        if input.remaining() > 0 {
            return Err(bad(format!(
                "{} bytes after the end of the record",
                input.remaining()
            )));
        }
        Ok(Replayed::Keys)
    }
}

/// The record that sets the function libraries to `libraries` (their source code).
pub fn journal_libraries<'a>(libraries: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut record = vec![TAG_LIBRARIES];
    for code in libraries {
        write_string(&mut record, code);
    }
    record
}

fn write_entry(out: &mut Vec<u8>, s: &Shard, db: usize, idx: usize) {
    let entry = s.dbs[db].table.at(idx);
    out.push(TAG_WRITE);
    write_length(out, db as u64);
    out.extend_from_slice(&s.expire_at(db, idx).unwrap_or(0).to_le_bytes());
    super::without_compression(|| write_value(out, entry, Some(entry.key())));
}
