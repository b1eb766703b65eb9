//! Hash commands: HSET HSETNX HGET HMSET HMGET HDEL HEXISTS HLEN HGETALL HKEYS HVALS HINCRBY
//! HINCRBYFLOAT HSTRLEN HRANDFIELD HSCAN.

use bytes::Bytes;

use super::{out, random_indices};
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses};
use crate::scan::{scan_elements, scan_whole};
use crate::value::hash::{Field, HashValue};
use crate::value::string::{
    add_f64, add_i64, format_f64, format_i64, int_buf, parse_f64, parse_i64,
};

const fn hash_event(name: &'static str) -> Event {
    Event::new(EventClasses::HASH, name)
}

impl Db<'_> {
    /// HSET / HMSET: returns how many fields were new.
    pub fn hset(
        &mut self,
        key: &[u8],
        pairs: &[(&[u8], &[u8])],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.write_key(key, now_ms, true, |k| {
            k.on_change(hash_event("hset"));
            let n = k.modify::<HashValue, _>(true, |h| {
                pairs.iter().filter(|(f, v)| h.set(f, v)).count()
            })?;
            Ok(n.unwrap_or(0))
        })
    }

    /// HSETNX: sets the field only if absent; returns whether it did.
    pub fn hsetnx(
        &mut self,
        key: &[u8],
        field: &[u8],
        value: &[u8],
        now_ms: u64,
    ) -> Result<bool, OpError> {
        self.write_key(key, now_ms, true, |k| {
            if k.view::<HashValue>()?
                .is_some_and(|h| h.get(field).is_some())
            {
                return Ok(false);
            }
            k.on_change(hash_event("hset"));
            k.modify::<HashValue, _>(true, |h| h.set(field, value))?;
            Ok(true)
        })
    }

    /// HGET.
    pub fn hget(
        &mut self,
        key: &[u8],
        field: &[u8],
        now_ms: u64,
    ) -> Result<Option<Bytes>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<HashValue>()?.and_then(|h| h.get(field)).map(out))
        })
    }

    /// HMGET.
    pub fn hmget(
        &mut self,
        key: &[u8],
        fields: &[&[u8]],
        now_ms: u64,
    ) -> Result<Vec<Option<Bytes>>, OpError> {
        self.read_key(key, now_ms, |k| {
            let h = k.view::<HashValue>()?;
            Ok(fields
                .iter()
                .map(|f| h.and_then(|h| h.get(f)).map(out))
                .collect())
        })
    }

    /// HDEL: returns how many fields existed.
    pub fn hdel(&mut self, key: &[u8], fields: &[&[u8]], now_ms: u64) -> Result<usize, OpError> {
        self.write_key(key, now_ms, false, |k| {
            k.on_change(hash_event("hdel"));
            let n = k.modify_if::<HashValue, _>(false, |h| {
                let removed = fields.iter().filter(|f| h.remove(f)).count();
                (removed, removed > 0)
            })?;
            Ok(n.unwrap_or(0))
        })
    }

    /// HEXISTS.
    pub fn hexists(&mut self, key: &[u8], field: &[u8], now_ms: u64) -> Result<bool, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<HashValue>()?
                .is_some_and(|h| h.get(field).is_some()))
        })
    }

    /// HLEN.
    pub fn hlen(&mut self, key: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<HashValue>()?.map_or(0, HashValue::len))
        })
    }

    /// HGETALL: (field, value) pairs.
    pub fn hgetall(&mut self, key: &[u8], now_ms: u64) -> Result<Vec<(Bytes, Bytes)>, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<HashValue>()?
                .map(|h| h.fields().map(|f| (out(&f.name), out(&f.value))).collect())
                .unwrap_or_default())
        })
    }

    /// HKEYS.
    pub fn hkeys(&mut self, key: &[u8], now_ms: u64) -> Result<Vec<Bytes>, OpError> {
        Ok(self
            .hgetall(key, now_ms)?
            .into_iter()
            .map(|p| p.0)
            .collect())
    }

    /// HVALS.
    pub fn hvals(&mut self, key: &[u8], now_ms: u64) -> Result<Vec<Bytes>, OpError> {
        Ok(self
            .hgetall(key, now_ms)?
            .into_iter()
            .map(|p| p.1)
            .collect())
    }

    /// HINCRBY.
    pub fn hincrby(
        &mut self,
        key: &[u8],
        field: &[u8],
        delta: i64,
        now_ms: u64,
    ) -> Result<i64, OpError> {
        self.write_key(key, now_ms, true, |k| {
            let current = match k.view::<HashValue>()?.and_then(|h| h.get(field)) {
                None => 0,
                Some(v) => parse_i64(v).ok_or(OpError::HashNotAnInteger)?,
            };
            let v = add_i64(current, delta)?;
            let mut buf = int_buf();
            let text = format_i64(v, &mut buf);
            k.on_change(hash_event("hincrby"));
            k.modify::<HashValue, _>(true, |h| h.set(field, text))?;
            Ok(v)
        })
    }

    /// HINCRBYFLOAT: the new value as Redis formats it.
    pub fn hincrbyfloat(
        &mut self,
        key: &[u8],
        field: &[u8],
        delta: f64,
        now_ms: u64,
    ) -> Result<Bytes, OpError> {
        self.write_key(key, now_ms, true, |k| {
            let current = match k.view::<HashValue>()?.and_then(|h| h.get(field)) {
                None => 0.0,
                Some(v) => parse_f64(v).ok_or(OpError::HashNotAFloat)?,
            };
            let text = format_f64(add_f64(current, delta)?);
            k.on_change(hash_event("hincrbyfloat"));
            k.modify::<HashValue, _>(true, |h| h.set(field, &text))?;
            Ok(Bytes::from(text))
        })
    }

    /// HSTRLEN.
    pub fn hstrlen(&mut self, key: &[u8], field: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| {
            Ok(k.view::<HashValue>()?
                .and_then(|h| h.get(field))
                .map_or(0, <[u8]>::len))
        })
    }

    /// HRANDFIELD: `count` `None` = one field; positive = distinct fields; negative =
    /// |count| fields with repeats. Pairs carry the values (drop them without WITHVALUES).
    pub fn hrandfield(
        &mut self,
        key: &[u8],
        count: Option<i64>,
        now_ms: u64,
    ) -> Result<Vec<(Bytes, Bytes)>, OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(h) = k.view::<HashValue>()? else {
                return Ok(Vec::new());
            };
            let len = h.len();
            let picks = random_indices(&mut k.s.rng, len, count.unwrap_or(1))?;
            let h = k.view::<HashValue>()?.expect("present above");
            Ok(picks
                .into_iter()
                .map(|i| {
                    let f = h.at(i);
                    (out(&f.name), out(&f.value))
                })
                .collect())
        })
    }

    /// HSCAN: the next cursor and (field, value) pairs.
    pub fn hscan(
        &mut self,
        key: &[u8],
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
        now_ms: u64,
    ) -> Result<(u64, Vec<(Bytes, Bytes)>), OpError> {
        self.read_key(key, now_ms, |k| {
            let Some(h) = k.view::<HashValue>()? else {
                return Ok((0, Vec::new()));
            };
            if h.encoding() == "listpack" {
                let pair = |f: &Field| (out(&f.name), out(&f.value));
                return Ok(scan_whole(h.fields(), pattern, |f| &f.name, pair));
            }
            Ok(scan_elements(
                cursor,
                count,
                pattern,
                |c, f| h.scan_step(c, f),
                |f| (out(&f.name), out(&f.value)),
            ))
        })
    }
}
