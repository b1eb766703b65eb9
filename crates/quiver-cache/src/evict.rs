//! Access tracking and eviction under `max_memory`, approximated by sampling as Redis does.
//!
//! Each key keeps 32 bits of access data: under LRU policies the time of last access in
//! seconds; under LFU policies Redis's logarithmic counter (low 8 bits, incremented with
//! probability `1 / ((counter - 5) * lfu_log_factor + 1)`) and the minute it was last
//! decremented (high bits; one decrement per `lfu_decay_time` minutes of idleness).
//!
//! An eviction round samples `max_memory_samples` keys from each of a few random shards into
//! a pool of the best [`POOL_SIZE`] candidates kept across rounds, then evicts the best one
//! that still exists. The pool mutex is a leaf lock: no shard is locked while it is held.

use std::sync::PoisonError;

use crate::config::EvictionPolicy;
use crate::error::OpError;
use crate::keyspace::Db;
use crate::rng::Rng;
use crate::table::Keyed;

/// Candidates remembered between rounds (Redis's `EVPOOL_SIZE`).
pub const POOL_SIZE: usize = 16;
/// Shards sampled per round: more finds better candidates, costs more lock acquisitions.
const SHARDS_PER_ROUND: usize = 4;
/// Evictions one write may perform; bounds the latency a single write pays when memory is
/// far over the limit (for example after lowering it). Later writes continue the work.
const MAX_EVICTIONS_PER_WRITE: usize = 1024;
/// LFU counter of a new key (Redis's `LFU_INIT_VAL`), so new keys are not evicted at once.
const LFU_INIT_VAL: u32 = 5;
const MS_PER_MINUTE: u64 = 60_000;
const MS_PER_SECOND: u64 = 1000;

/// Time and policy knobs an operation needs to update access data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    pub(crate) now_ms: u64,
    pub(crate) lfu: bool,
    pub(crate) log_factor: u32,
    pub(crate) decay_time_min: u32,
}

fn minutes(now_ms: u64) -> u32 {
    ((now_ms / MS_PER_MINUTE) & 0xFF_FFFF) as u32
}

/// Access data for a new key.
pub(crate) fn initial_access(c: &Clock) -> u32 {
    if c.lfu {
        (minutes(c.now_ms) << 8) | LFU_INIT_VAL
    } else {
        (c.now_ms / MS_PER_SECOND) as u32
    }
}

/// The LFU counter after applying decay for idle minutes.
pub(crate) fn lfu_counter(access: u32, c: &Clock) -> u32 {
    let counter = access & 0xFF;
    if c.decay_time_min == 0 {
        return counter;
    }
    let now = minutes(c.now_ms);
    // An access up to an hour after `c` was read (by another thread, or during a
    // snapshot that reads the clock once) is no time ago, not a wrapped-around age.
    let ahead = (access >> 8).wrapping_sub(now) & 0xFF_FFFF;
    let elapsed = if ahead <= 60 {
        0
    } else {
        now.wrapping_sub(access >> 8) & 0xFF_FFFF
    };
    counter.saturating_sub(elapsed / c.decay_time_min)
}

/// Milliseconds since last access under LRU (second resolution); an access up to an
/// hour after `now_ms` (read by another thread) counts as none.
pub(crate) fn idle_ms(access: u32, now_ms: u64) -> u64 {
    let now_s = (now_ms / MS_PER_SECOND) as u32;
    if access.wrapping_sub(now_s) <= 3600 {
        return 0;
    }
    u64::from(now_s.wrapping_sub(access)) * MS_PER_SECOND
}

/// Records an access.
pub(crate) fn touch(access: &mut u32, c: &Clock, rng: &mut Rng) {
    if !c.lfu {
        *access = (c.now_ms / MS_PER_SECOND) as u32;
        return;
    }
    let mut counter = lfu_counter(*access, c);
    if counter < 255 {
        let base = counter.saturating_sub(LFU_INIT_VAL);
        let p = 1.0 / (f64::from(base) * f64::from(c.log_factor) + 1.0);
        if rng.unit_f64() < p {
            counter += 1;
        }
    }
    *access = (minutes(c.now_ms) << 8) | counter;
}

/// A remembered eviction candidate; higher `score` = better to evict.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    score: u64,
    shard: usize,
    db: usize,
    hash: u64,
    key: Vec<u8>,
}

/// The best candidates seen so far, best last.
#[derive(Debug, Default)]
pub struct EvictionPool {
    items: Vec<Candidate>,
}

impl EvictionPool {
    fn offer(&mut self, c: Candidate) {
        if self
            .items
            .iter()
            .any(|x| x.shard == c.shard && x.db == c.db && x.key == c.key)
        {
            return;
        }
        if self.items.len() == POOL_SIZE {
            if self.items[0].score >= c.score {
                return;
            }
            self.items.remove(0);
        }
        let pos = self.items.partition_point(|x| x.score <= c.score);
        self.items.insert(pos, c);
    }
}

/// Evicts until used memory is within `max_memory`, or fails with OOM when the policy is
/// noeviction or nothing may be evicted.
pub(crate) fn make_room(db: &mut Db<'_>, now_ms: u64) -> Result<(), OpError> {
    let ks = db.ks;
    let max = ks.max_memory_bytes();
    if max == 0 {
        return Ok(());
    }
    for _ in 0..MAX_EVICTIONS_PER_WRITE {
        if ks.used_memory() as u64 <= max {
            return Ok(());
        }
        let policy = ks.policy();
        if policy == EvictionPolicy::NoEviction || !evict_one(db, policy, now_ms) {
            return Err(OpError::OutOfMemory);
        }
    }
    // Still over after a full batch of evictions: let this write proceed, as Redis does
    // while eviction is making progress; the next writes keep evicting.
    Ok(())
}

/// Evicts one key; false when no key may be evicted.
fn evict_one(db: &mut Db<'_>, policy: EvictionPolicy, now_ms: u64) -> bool {
    let ks = db.ks;
    let shards = ks.shard_count();
    let start = ks.next_shard_hint();
    let random = matches!(
        policy,
        EvictionPolicy::AllKeysRandom | EvictionPolicy::VolatileRandom
    );
    if random {
        for off in 0..shards {
            let idx = (start + off) % shards;
            if db.with_shard(idx, |s| evict_random(s, policy.is_volatile())) {
                return true;
            }
        }
        return false;
    }
    let samples = ks.max_memory_samples();
    let clock = ks.clock(now_ms);
    for attempt in 0..shards {
        let mut found = Vec::new();
        for off in 0..SHARDS_PER_ROUND.min(shards) {
            let idx = (start + attempt * SHARDS_PER_ROUND + off) % shards;
            db.with_shard(idx, |s| {
                sample_into(s, idx, policy, samples, &clock, &mut found)
            });
        }
        let mut pool = ks.pool.lock().unwrap_or_else(PoisonError::into_inner);
        for c in found {
            pool.offer(c);
        }
        let mut best = pool.items.pop();
        drop(pool);
        while let Some(c) = best {
            let evicted = db.with_shard(c.shard, |s| {
                let Some(idx) = s.dbs[c.db].table.find(c.hash, &c.key) else {
                    return false;
                };
                if policy.is_volatile() && s.expire_at(c.db, idx).is_none() {
                    return false;
                }
                s.remove_evicted(c.db, idx, c.hash);
                true
            });
            if evicted {
                return true;
            }
            best = ks
                .pool
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .items
                .pop();
        }
        if attempt * SHARDS_PER_ROUND >= shards {
            break;
        }
    }
    false
}

fn evict_random(s: &mut crate::keyspace::Shard, volatile: bool) -> bool {
    let dbs = s.dbs.len();
    let first = s.rng.below(dbs);
    for off in 0..dbs {
        let d = (first + off) % dbs;
        let t = &s.dbs[d];
        let idx = if volatile {
            if t.volatile.is_empty() {
                continue;
            }
            t.volatile[s.rng.below(t.volatile.len())].idx as usize
        } else {
            if t.table.is_empty() {
                continue;
            }
            s.rng.below(t.table.len())
        };
        let hash = s.hash(s.dbs[d].table.at(idx).key());
        s.remove_evicted(d, idx, hash);
        return true;
    }
    false
}

fn sample_into(
    s: &mut crate::keyspace::Shard,
    shard: usize,
    policy: EvictionPolicy,
    samples: usize,
    clock: &crate::evict::Clock,
    out: &mut Vec<Candidate>,
) {
    for d in 0..s.dbs.len() {
        let t = &s.dbs[d];
        let pool_len = if policy.is_volatile() {
            t.volatile.len()
        } else {
            t.table.len()
        };
        if pool_len == 0 {
            continue;
        }
        for _ in 0..samples.min(pool_len) {
            let pick = s.rng.below(pool_len);
            let t = &s.dbs[d];
            let (idx, expire) = if policy.is_volatile() {
                let v = t.volatile[pick];
                (v.idx as usize, Some(v.expire_at_ms))
            } else {
                (pick, None)
            };
            let e = t.table.at(idx);
            let score = match policy {
                EvictionPolicy::VolatileTtl => u64::MAX - expire.unwrap_or(u64::MAX),
                EvictionPolicy::AllKeysLfu | EvictionPolicy::VolatileLfu => {
                    u64::from(255 - lfu_counter(e.access, clock).min(255))
                }
                _ => idle_ms(e.access, clock.now_ms),
            };
            out.push(Candidate {
                score,
                shard,
                db: d,
                hash: s.hash(e.key()),
                key: e.key().to_vec(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(now_ms: u64, lfu: bool) -> Clock {
        Clock {
            now_ms,
            lfu,
            log_factor: 10,
            decay_time_min: 1,
        }
    }

    #[test]
    fn lfu_counter_grows_logarithmically_and_decays() {
        let mut rng = Rng::new(1);
        let c = clock(0, true);
        let mut a = initial_access(&c);
        for _ in 0..1000 {
            touch(&mut a, &c, &mut rng);
        }
        let after_1000 = lfu_counter(a, &c);
        assert!(after_1000 > 10 && after_1000 < 40, "{after_1000}");
        for _ in 0..100_000 {
            touch(&mut a, &c, &mut rng);
        }
        let after_100k = lfu_counter(a, &c);
        assert!(after_100k > after_1000 && after_100k < 255, "{after_100k}");
        let later = clock(10 * MS_PER_MINUTE, true);
        assert_eq!(lfu_counter(a, &later), after_100k - 10);
        // Touched after the clock was read: no decay.
        let mut b = a;
        touch(&mut b, &later, &mut rng);
        assert_eq!(lfu_counter(b, &c), lfu_counter(b, &later));
    }

    #[test]
    fn lru_idle_time() {
        let mut rng = Rng::new(1);
        let mut a = 0;
        touch(&mut a, &clock(5_000, false), &mut rng);
        assert_eq!(idle_ms(a, 12_000), 7_000);
        // Touched after the clock was read: not idle.
        assert_eq!(idle_ms(a, 3_000), 0);
        // Far ahead (an LFU-format value after a policy change): not "just used".
        assert!(idle_ms(3_400_000_000, 1_800_000_000_000) > 3_600_000);
    }

    #[test]
    fn pool_keeps_the_best() {
        let mut p = EvictionPool::default();
        for i in 0..40u64 {
            p.offer(Candidate {
                score: i,
                shard: 0,
                db: 0,
                hash: 0,
                key: vec![i as u8],
            });
        }
        assert_eq!(p.items.len(), POOL_SIZE);
        assert_eq!(p.items.last().unwrap().score, 39);
        assert_eq!(p.items[0].score, 40 - POOL_SIZE as u64);
    }
}
