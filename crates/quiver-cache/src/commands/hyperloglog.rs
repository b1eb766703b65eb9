//! HyperLogLog commands on string values: PFADD, PFCOUNT, PFMERGE and PFDEBUG, on
//! Redis's byte format ([`crate::hll`]).

use super::KeyCtx;
use crate::error::OpError;
use crate::hll::{self, Encoding, HllError};
use crate::keyspace::{Db, Event, EventClasses};
use crate::value::Value;

/// What PFADD and PFMERGE announce.
const PFADD: Event = Event::new(EventClasses::STRING, "pfadd");

fn refused(error: HllError) -> OpError {
    match error {
        HllError::NotHll => OpError::NotHll,
        HllError::Corrupt => OpError::CorruptHll,
    }
}

/// A PFDEBUG subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HllDebug {
    /// The registers, one number each (turns a sparse value dense, as Redis does).
    GetReg,
    /// The sparse opcodes as text.
    Decode,
    /// `dense` or `sparse`.
    Encoding,
    /// Turns a sparse value dense; whether it did.
    ToDense,
}

/// What PFDEBUG answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HllDebugReply {
    Registers(Vec<u8>),
    Decoded(String),
    Encoding(&'static str),
    Converted(bool),
}

/// The string of `k` checked to be a HyperLogLog (`None` for a missing key).
fn checked(k: &KeyCtx<'_>) -> Result<Option<Encoding>, OpError> {
    match k.entry() {
        None => Ok(None),
        Some(e) => Ok(Some(e.str()?.with(hll::check).map_err(refused)?)),
    }
}

/// Changes the HyperLogLog bytes of an existing key through `f`; the key counts as
/// modified when `f` says so.
fn change<R>(
    k: &mut KeyCtx<'_>,
    f: impl FnOnce(&mut Vec<u8>) -> (Result<R, OpError>, bool),
) -> Result<R, OpError> {
    let mut result = None;
    k.grow_string(0, |buf, _| {
        let (r, changed) = f(buf);
        result = Some(r);
        ((), changed)
    })?;
    result.expect("the closure ran")
}

impl Db<'_> {
    /// PFADD: adds `elements`; whether the key was created or a register changed.
    pub fn pfadd(&mut self, key: &[u8], elements: &[&[u8]], now_ms: u64) -> Result<bool, OpError> {
        let sparse_max = self.ks.hll_sparse_max_bytes();
        self.write_key(key, now_ms, true, |k| {
            let created = checked(k)?.is_none();
            if created {
                k.put_value(Value::Grown(Box::new(hll::empty())));
            }
            k.on_change(PFADD);
            change(k, |buf| {
                let mut updated = created;
                for element in elements {
                    match hll::add(buf, element, sparse_max) {
                        Ok(changed) => updated |= changed,
                        Err(error) => return (Err(refused(error)), updated),
                    }
                }
                if updated {
                    hll::invalidate(buf);
                }
                (Ok(updated), updated)
            })
        })
    }

    /// PFCOUNT of one key: the cached count, or the estimate (then cached in the value,
    /// which counts as a modification, as in Redis). 0 for a missing key.
    pub fn pfcount(&mut self, key: &[u8], now_ms: u64) -> Result<u64, OpError> {
        self.read_key(key, now_ms, |k| {
            if checked(k)?.is_none() {
                return Ok(0);
            }
            if let Some(cached) = k.entry().and_then(|e| e.str().ok()?.with(hll::cached)) {
                return Ok(cached);
            }
            change(k, |buf| match hll::count(buf) {
                Ok(count) => {
                    hll::store_cached(buf, count);
                    (Ok(count), true)
                }
                Err(error) => (Err(refused(error)), false),
            })
        })
    }

    /// PFCOUNT of several keys: the estimate of their union (missing keys are empty).
    pub fn pfcount_union(&mut self, keys: &[&[u8]], now_ms: u64) -> Result<u64, OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(keys, |set, routes| {
            let mut max = vec![0u8; hll::REGISTERS];
            for (key, &(shard, hash)) in keys.iter().zip(routes) {
                let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
                if checked(&k)?.is_some() {
                    let e = k.entry().expect("checked present");
                    e.str()?
                        .with(|b| hll::merge_into(&mut max, b))
                        .map_err(refused)?;
                }
            }
            Ok(hll::count_registers(&max))
        })
    }

    /// PFMERGE: the union of `dest` and `sources` stored in `dest` (dense when any input
    /// is), keeping its TTL.
    pub fn pfmerge(&mut self, dest: &[u8], sources: &[&[u8]], now_ms: u64) -> Result<(), OpError> {
        self.make_room(now_ms)?;
        let sparse_max = self.ks.hll_sparse_max_bytes();
        let (db, clock) = (self.db, self.clock(now_ms));
        let mut keys = Vec::with_capacity(sources.len() + 1);
        keys.push(dest);
        keys.extend_from_slice(sources);
        self.multi(&keys, |set, routes| {
            let mut max = vec![0u8; hll::REGISTERS];
            let mut dense = false;
            for (key, &(shard, hash)) in keys.iter().zip(routes) {
                let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
                if let Some(encoding) = checked(&k)? {
                    dense |= encoding == Encoding::Dense;
                    let e = k.entry().expect("checked present");
                    e.str()?
                        .with(|b| hll::merge_into(&mut max, b))
                        .map_err(refused)?;
                }
            }
            let (shard, hash) = routes[0];
            let mut d = KeyCtx::write(set.get(shard), db, hash, dest, clock);
            if !d.exists() {
                d.put_value(Value::Grown(Box::new(hll::empty())));
            }
            d.on_change(PFADD);
            change(&mut d, |buf| {
                if dense && let Err(error) = hll::to_dense(buf) {
                    return (Err(refused(error)), false);
                }
                hll::raise_all(buf, &max, sparse_max);
                hll::invalidate(buf);
                (Ok(()), true)
            })
        })
    }

    /// PFDEBUG on an existing HyperLogLog.
    pub fn pfdebug(
        &mut self,
        key: &[u8],
        what: HllDebug,
        now_ms: u64,
    ) -> Result<HllDebugReply, OpError> {
        self.write_key(key, now_ms, false, |k| {
            let Some(encoding) = checked(k)? else {
                return Err(OpError::HllDebugNoKey);
            };
            let sparse = encoding == Encoding::Sparse;
            let to_dense = |buf: &mut Vec<u8>| match hll::to_dense(buf) {
                Ok(()) => (Ok(()), true),
                Err(error) => (Err(refused(error)), false),
            };
            match what {
                HllDebug::Encoding => Ok(HllDebugReply::Encoding(if sparse {
                    "sparse"
                } else {
                    "dense"
                })),
                HllDebug::Decode if !sparse => Err(OpError::HllNotSparse),
                HllDebug::Decode => Ok(HllDebugReply::Decoded(
                    k.entry().expect("present").str()?.with(hll::decode),
                )),
                HllDebug::ToDense => {
                    if sparse {
                        change(k, to_dense)?;
                    }
                    Ok(HllDebugReply::Converted(sparse))
                }
                HllDebug::GetReg => {
                    if sparse {
                        change(k, to_dense)?;
                    }
                    let e = k.entry().expect("present");
                    Ok(HllDebugReply::Registers(
                        e.str()?.with(hll::registers).map_err(refused)?,
                    ))
                }
            }
        })
    }
}
