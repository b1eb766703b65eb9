//! Active expiry: the server calls [`Keyspace::active_expire`] periodically (Redis does it
//! 10 times a second) to reclaim keys whose TTL passed but that nobody reads.
//!
//! Each call visits shards round-robin; in each database of a shard it samples
//! [`KEYS_PER_LOOP`] keys with a TTL, deletes the expired ones, and samples again while more
//! than a quarter of a sample had expired (Redis's rule), so the fraction of expired keys
//! left behind stays near 25% or below, while `budget` bounds the keys examined per call and
//! therefore its CPU time.

use crate::keyspace::{Keyspace, Shard};

/// Keys sampled per loop, as Redis's `ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP`.
pub const KEYS_PER_LOOP: usize = 20;
/// Repeat while more than 1/this of a sample had expired (Redis: 25%).
const STALE_DEN: usize = 4;

/// What one active-expiry call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpireReport {
    /// Keys with a TTL examined.
    pub sampled: usize,
    /// Keys deleted.
    pub expired: usize,
}

impl Keyspace {
    /// Deletes expired keys, examining at most about `budget` keys (see the module docs).
    pub fn active_expire(&self, now_ms: u64, budget: usize) -> ExpireReport {
        let mut report = ExpireReport::default();
        let shards = self.shard_count();
        let mut idle_shards = 0;
        while report.sampled < budget && idle_shards < shards {
            let idx = self.next_shard_hint();
            // A shard held by a transaction or a script is left for a later round: the
            // background must not wait on it (a script may hold it for long).
            let Some(mut s) = self.try_lock_shard(idx) else {
                idle_shards += 1;
                continue;
            };
            let before = report;
            for db in 0..s.dbs.len() {
                expire_db(&mut s, db, now_ms, budget, &mut report);
                if report.sampled >= budget {
                    break;
                }
            }
            self.publish_mem(idx, s.mem);
            // A key clients were blocked on expired: they look again.
            if !s.ready.is_empty() {
                self.note_ready();
            }
            if report.sampled == before.sampled {
                idle_shards += 1;
            } else {
                idle_shards = 0;
            }
        }
        report
    }
}

fn expire_db(s: &mut Shard, db: usize, now_ms: u64, budget: usize, report: &mut ExpireReport) {
    loop {
        let n = s.dbs[db].volatile.len();
        if n == 0 || report.sampled >= budget {
            return;
        }
        let take = KEYS_PER_LOOP.min(n);
        let mut expired = 0;
        for _ in 0..take {
            let n = s.dbs[db].volatile.len();
            if n == 0 {
                break;
            }
            let v = s.dbs[db].volatile[s.rng.below(n)];
            report.sampled += 1;
            if v.expire_at_ms <= now_ms {
                let idx = v.idx as usize;
                let hash = {
                    use crate::table::Keyed;
                    s.hash(s.dbs[db].table.at(idx).key())
                };
                s.remove_expired(db, idx, hash);
                expired += 1;
            }
        }
        report.expired += expired;
        if expired * STALE_DEN <= take {
            return;
        }
    }
}
