//! String commands: GET SET (EX PX EXAT PXAT NX XX KEEPTTL GET) SETNX SETEX PSETEX MGET MSET
//! MSETNX GETSET GETDEL GETEX APPEND STRLEN GETRANGE SETRANGE INCR DECR INCRBY DECRBY
//! INCRBYFLOAT.

use bytes::Bytes;

use super::{KeyCtx, out};
use crate::MAX_STRING_BYTES;
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses, events};
use crate::value::Value;
use crate::value::string::{add_f64, add_i64, format_f64, parse_f64, parse_i64, range_of};

/// SET's NX/XX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetCondition {
    /// Always set.
    #[default]
    Always,
    /// NX: only if the key does not exist.
    IfAbsent,
    /// XX: only if the key exists.
    IfPresent,
}

/// What SET does to the TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetExpiry {
    /// No option: the key loses any TTL.
    #[default]
    Clear,
    /// KEEPTTL.
    Keep,
    /// EX/PX/EXAT/PXAT converted by the caller to absolute unix milliseconds.
    AtMs(u64),
}

impl SetExpiry {
    /// `ttl_ms` milliseconds after `now_ms`; `None` when that time does not fit Redis's
    /// signed 64-bit milliseconds (as `SET … PX` refuses it).
    pub fn after(now_ms: u64, ttl_ms: u64) -> Option<SetExpiry> {
        let at = now_ms.checked_add(ttl_ms)?;
        (at <= i64::MAX as u64).then_some(SetExpiry::AtMs(at))
    }
}

/// SET's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetOptions {
    /// NX / XX.
    pub condition: SetCondition,
    /// EX PX EXAT PXAT KEEPTTL.
    pub expiry: SetExpiry,
    /// GET: return the old value.
    pub get: bool,
}

/// What SET did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOutcome {
    /// Whether the value was written (false when NX/XX refused).
    pub written: bool,
    /// The previous value, when GET was asked for (`None` if there was none).
    pub old: Option<Bytes>,
}

/// GETEX's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GetExExpiry {
    /// No option: the TTL is untouched.
    #[default]
    Unchanged,
    /// PERSIST.
    Persist,
    /// EX/PX/EXAT/PXAT as absolute unix milliseconds.
    AtMs(u64),
}

const SET: Event = Event::new(EventClasses::STRING, "set");

fn string_of(k: &KeyCtx<'_>) -> Result<Option<Bytes>, OpError> {
    match k.entry() {
        None => Ok(None),
        Some(e) => Ok(Some(e.str()?.with(out))),
    }
}

impl Db<'_> {
    /// GET: the value, copied out.
    pub fn get(&mut self, key: &[u8], now_ms: u64) -> Result<Option<Bytes>, OpError> {
        self.read_key(key, now_ms, |k| string_of(k))
    }

    /// GET without a copy: `f` sees the value's bytes under the shard lock (integers are
    /// formatted on the stack), so a server can encode the reply straight into its buffer.
    pub fn get_with<R>(
        &mut self,
        key: &[u8],
        now_ms: u64,
        f: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<R, OpError> {
        self.read_key(key, now_ms, |k| match k.entry() {
            None => Ok(f(None)),
            Some(e) => Ok(e.str()?.with(|b| f(Some(b)))),
        })
    }

    /// SET with all its options.
    pub fn set(
        &mut self,
        key: &[u8],
        value: &[u8],
        opts: SetOptions,
        now_ms: u64,
    ) -> Result<SetOutcome, OpError> {
        self.write_key(key, now_ms, true, |k| {
            if opts.get && !k.exists() {
                k.notify(events::KEY_MISS);
            }
            let old = if opts.get { string_of(k)? } else { None };
            let refused = match opts.condition {
                SetCondition::Always => false,
                SetCondition::IfAbsent => k.exists(),
                SetCondition::IfPresent => !k.exists(),
            };
            if refused {
                return Ok(SetOutcome {
                    written: false,
                    old,
                });
            }
            // SET replaces a value of any type.
            k.put_string(value);
            k.notify(SET);
            match opts.expiry {
                SetExpiry::Clear => k.set_expire(None),
                SetExpiry::Keep => {}
                SetExpiry::AtMs(at) => {
                    k.set_expire(Some(at));
                    k.notify(events::EXPIRE);
                }
            }
            Ok(SetOutcome { written: true, old })
        })
    }

    /// MGET: one value per key, `None` for missing keys and non-strings.
    pub fn mget(&mut self, keys: &[&[u8]], now_ms: u64) -> Vec<Option<Bytes>> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            keys.iter()
                .zip(routes)
                .map(|(key, &(shard, hash))| {
                    let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
                    string_of(&k).ok().flatten()
                })
                .collect()
        })
    }

    /// MSET: sets every pair atomically.
    pub fn mset(&mut self, pairs: &[(&[u8], &[u8])], now_ms: u64) -> Result<(), OpError> {
        self.msetnx_inner(pairs, now_ms, false).map(|_| ())
    }

    /// MSETNX: sets every pair only if none of the keys exists; returns whether it did.
    pub fn msetnx(&mut self, pairs: &[(&[u8], &[u8])], now_ms: u64) -> Result<bool, OpError> {
        self.msetnx_inner(pairs, now_ms, true)
    }

    fn msetnx_inner(
        &mut self,
        pairs: &[(&[u8], &[u8])],
        now_ms: u64,
        nx: bool,
    ) -> Result<bool, OpError> {
        self.make_room(now_ms)?;
        let keys: Vec<&[u8]> = pairs.iter().map(|p| p.0).collect();
        let (db, clock) = (self.db, self.clock(now_ms));
        Ok(self.multi(&keys, |set, routes| {
            if nx
                && keys.iter().zip(routes).any(|(key, &(shard, hash))| {
                    KeyCtx::write(set.get(shard), db, hash, key, clock).exists()
                })
            {
                return false;
            }
            for ((key, value), &(shard, hash)) in pairs.iter().zip(routes) {
                let mut k = KeyCtx::write(set.get(shard), db, hash, key, clock);
                k.on_change(SET).put_string(value);
                k.set_expire(None);
            }
            true
        }))
    }

    /// GETDEL: the value, then the key is deleted.
    pub fn getdel(&mut self, key: &[u8], now_ms: u64) -> Result<Option<Bytes>, OpError> {
        self.write_key(key, now_ms, false, |k| {
            if !k.exists() {
                k.notify(events::KEY_MISS);
            }
            let v = string_of(k)?;
            k.delete();
            Ok(v)
        })
    }

    /// GETEX: the value, optionally changing the TTL.
    pub fn getex(
        &mut self,
        key: &[u8],
        expiry: GetExExpiry,
        now_ms: u64,
    ) -> Result<Option<Bytes>, OpError> {
        self.write_key(key, now_ms, false, |k| {
            if !k.exists() {
                k.notify(events::KEY_MISS);
            }
            let v = string_of(k)?;
            match expiry {
                GetExExpiry::Unchanged => {}
                // A TTL change is a modification (WATCH, the change feed); removing
                // no TTL is not.
                GetExExpiry::Persist if k.expire_at().is_some() => {
                    k.set_expire(None);
                    k.on_change(events::PERSIST).mark_modified();
                }
                GetExExpiry::Persist => {}
                GetExExpiry::AtMs(at) if at <= now_ms => {
                    k.delete();
                }
                GetExExpiry::AtMs(at) => {
                    k.set_expire(Some(at));
                    k.on_change(events::EXPIRE).mark_modified();
                }
            }
            Ok(v)
        })
    }

    /// APPEND: returns the new length.
    pub fn append(&mut self, key: &[u8], value: &[u8], now_ms: u64) -> Result<usize, OpError> {
        const APPEND: Event = Event::new(EventClasses::STRING, "append");
        self.write_key(key, now_ms, true, |k| {
            let Some(idx) = k.idx else {
                k.on_change(APPEND).put_string(value);
                return Ok(value.len());
            };
            let len = k.entry().map_or(Ok(0), |e| e.str().map(|s| s.len()))?;
            if len + value.len() > MAX_STRING_BYTES {
                return Err(OpError::StringTooLong);
            }
            let len = k.s.update(k.db, idx, |e| {
                let buf = e.grown_mut()?;
                buf.extend_from_slice(value);
                Ok(buf.len())
            })?;
            k.notify(APPEND);
            Ok(len)
        })
    }

    /// STRLEN.
    pub fn strlen(&mut self, key: &[u8], now_ms: u64) -> Result<usize, OpError> {
        self.read_key(key, now_ms, |k| match k.entry() {
            None => Ok(0),
            Some(e) => Ok(e.str()?.len()),
        })
    }

    /// GETRANGE with Redis's index rules.
    pub fn getrange(
        &mut self,
        key: &[u8],
        start: i64,
        end: i64,
        now_ms: u64,
    ) -> Result<Bytes, OpError> {
        self.read_key(key, now_ms, |k| match k.entry() {
            None => Ok(Bytes::new()),
            Some(e) => Ok(e.str()?.with(|b| out(&b[range_of(b.len(), start, end)]))),
        })
    }

    /// SETRANGE: overwrites from `offset`, zero-padding; returns the new length.
    pub fn setrange(
        &mut self,
        key: &[u8],
        offset: usize,
        value: &[u8],
        now_ms: u64,
    ) -> Result<usize, OpError> {
        self.write_key(key, now_ms, true, |k| {
            let len = match k.entry() {
                None => 0,
                Some(e) => e.str()?.len(),
            };
            if value.is_empty() {
                return Ok(len);
            }
            if offset.saturating_add(value.len()) > MAX_STRING_BYTES {
                return Err(OpError::StringTooLong);
            }
            k.on_change(Event::new(EventClasses::STRING, "setrange"));
            k.grow_string(offset + value.len(), |buf, _| {
                buf[offset..offset + value.len()].copy_from_slice(value);
                (buf.len(), true)
            })
        })
    }

    /// INCRBY (INCR, DECR, DECRBY are this with 1, -1, -n).
    pub fn incr_by(&mut self, key: &[u8], delta: i64, now_ms: u64) -> Result<i64, OpError> {
        const INCRBY: Event = Event::new(EventClasses::STRING, "incrby");
        self.write_key(key, now_ms, true, |k| {
            let Some(idx) = k.idx else {
                k.put_string(b"0");
                let idx = k.idx.expect("just stored");
                k.s.update(k.db, idx, |e| e.set_int(delta));
                k.notify(INCRBY);
                return Ok(delta);
            };
            let current = match &k.s.entry(k.db, idx).value {
                Value::Int(i) => *i,
                _ => {
                    let e = k.s.entry(k.db, idx);
                    e.str()?.with(parse_i64).ok_or(OpError::NotAnInteger)?
                }
            };
            let v = add_i64(current, delta)?;
            k.s.update(k.db, idx, |e| e.set_int(v));
            k.notify(INCRBY);
            Ok(v)
        })
    }

    /// INCRBYFLOAT: returns the new value formatted as Redis does.
    ///
    /// `delta` is `None` when the argument is not a float: refused after the stored value
    /// is checked, in Redis's order.
    pub fn incr_by_float(
        &mut self,
        key: &[u8],
        delta: Option<f64>,
        now_ms: u64,
    ) -> Result<Bytes, OpError> {
        self.write_key(key, now_ms, true, |k| {
            let current = match k.entry() {
                None => 0.0,
                Some(e) => e.str()?.with(parse_f64).ok_or(OpError::NotAFloat)?,
            };
            let delta = delta.ok_or(OpError::NotAFloat)?;
            let v = add_f64(current, delta)?;
            let text = format_f64(v);
            k.on_change(Event::new(EventClasses::STRING, "incrbyfloat"))
                .put_text(&text);
            Ok(Bytes::from(text))
        })
    }
}
