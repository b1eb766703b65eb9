//! MEMORY STATS, DOCTOR, MALLOC-STATS and PURGE. Quiver's `used_memory` is what the
//! keyspace holds (values, keys and their entries); the figures below break it down as
//! Redis's do, and give the process's resident size beside it.

use bytes::BytesMut;
use quiver_core::cache::ENTRY_OVERHEAD_BYTES;
use quiver_resp::Reply;
use quiver_resp::encode as write;

use crate::http::process;
use crate::resp::connection::Connection;

/// Below this much, MEMORY DOCTOR has nothing to say (Redis's threshold).
const DOCTOR_MIN_BYTES: usize = 5 << 20;

/// More cached scripts than this is worth a word from MEMORY DOCTOR.
const DOCTOR_MANY_SCRIPTS: usize = 1000;

/// The figures MEMORY STATS and MEMORY DOCTOR read.
struct Figures {
    used: usize,
    peak: usize,
    rss: usize,
    lua: usize,
    scripts: usize,
    /// Keys and keys with a TTL, per database that holds any.
    dbs: Vec<(usize, usize, usize)>,
}

impl Figures {
    fn read(conn: &Connection) -> Figures {
        let stats = conn.shared.cache.stats();
        let (scripts, _, lua) = conn.shared.scripts.info();
        let dbs = stats
            .dbs
            .iter()
            .enumerate()
            .filter(|(_, db)| db.keys > 0)
            .map(|(index, db)| (index, db.keys, db.expires))
            .collect();
        let rss = process::memory().resident_bytes.unwrap_or(0);
        Figures {
            used: stats.used_memory,
            peak: stats.used_memory_peak.max(stats.used_memory),
            rss: usize::try_from(rss).unwrap_or(usize::MAX),
            lua,
            scripts,
            dbs,
        }
    }

    fn keys(&self) -> usize {
        self.dbs.iter().map(|(_, keys, _)| keys).sum()
    }

    /// Resident size over what is accounted: fragmentation and what the keyspace does
    /// not count (connections' buffers, the binary, the streams).
    fn fragmentation(&self) -> f64 {
        ratio(self.rss, self.used)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

fn int(n: usize) -> Reply {
    Reply::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

/// MEMORY STATS: Redis's fields, in Redis's order.
pub(super) fn stats(conn: &Connection, out: &mut BytesMut) {
    let f = Figures::read(conn);
    let head = [
        ("peak.allocated", int(f.peak)),
        ("total.allocated", int(f.used)),
        ("startup.allocated", int(0)),
        ("replication.backlog", int(0)),
        ("clients.slaves", int(0)),
        ("clients.normal", int(0)),
        ("cluster.links", int(0)),
        ("aof.buffer", int(0)),
        ("lua.caches", int(f.lua)),
        ("functions.caches", int(0)),
    ];
    let mut reply: Vec<(Reply, Reply)> = head
        .into_iter()
        .map(|(name, value)| (Reply::bulk(name), value))
        .collect();
    let mut overhead = f.lua;
    for &(index, keys, _) in &f.dbs {
        // A TTL is held in the key's entry: there is no second table for expiries.
        let main = keys * ENTRY_OVERHEAD_BYTES;
        overhead += main;
        let db = Reply::Map(vec![
            (Reply::bulk("overhead.hashtable.main"), int(main)),
            (Reply::bulk("overhead.hashtable.expires"), int(0)),
            (Reply::bulk("overhead.hashtable.slot-to-keys"), int(0)),
        ]);
        reply.push((Reply::bulk(format!("db.{index}")), db));
    }
    let keys = f.keys();
    let dataset = f.used.saturating_sub(overhead);
    let frag_bytes = f.rss.saturating_sub(f.used);
    let tail = [
        ("overhead.total", int(overhead)),
        ("keys.count", int(keys)),
        (
            "keys.bytes-per-key",
            int(f.used.checked_div(keys).unwrap_or(0)),
        ),
        ("dataset.bytes", int(dataset)),
        (
            "dataset.percentage",
            Reply::Double(ratio(dataset, f.used) * 100.0),
        ),
        (
            "peak.percentage",
            Reply::Double(ratio(f.used, f.peak) * 100.0),
        ),
        ("allocator.allocated", int(f.used)),
        ("allocator.active", int(f.used)),
        ("allocator.resident", int(f.rss)),
        ("allocator-fragmentation.ratio", Reply::Double(1.0)),
        ("allocator-fragmentation.bytes", int(0)),
        ("allocator-rss.ratio", Reply::Double(f.fragmentation())),
        ("allocator-rss.bytes", int(frag_bytes)),
        ("rss-overhead.ratio", Reply::Double(1.0)),
        ("rss-overhead.bytes", int(0)),
        ("fragmentation", Reply::Double(f.fragmentation())),
        ("fragmentation.bytes", int(frag_bytes)),
    ];
    reply.extend(
        tail.into_iter()
            .map(|(name, value)| (Reply::bulk(name), value)),
    );
    Reply::Map(reply).encode(conn.session.protocol, out);
}

/// MEMORY DOCTOR: Redis's report, from the checks that apply to Quiver.
pub(super) fn doctor(conn: &Connection, out: &mut BytesMut) {
    let f = Figures::read(conn);
    let report = doctor_report(&f);
    write::write_verbatim(out, conn.session.protocol, b"txt", report.as_bytes());
}

fn doctor_report(f: &Figures) -> String {
    if f.used < DOCTOR_MIN_BYTES {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".to_owned();
    }
    let mut issues = Vec::new();
    if ratio(f.peak, f.used) > 1.5 {
        issues.push(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Quiver instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Quiver instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, the only option is to shutdown and restart the instance.\n\n");
    }
    if f.fragmentation() > 1.4 && f.rss.saturating_sub(f.used) > 10 << 20 {
        issues.push(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Quiver process is much larger than the sum of the logical allocations Quiver performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report), to large connection buffers or live streams, which used_memory does not count, or may result from a workload that causes the allocator to fragment memory a lot. Note: The currently used allocator is \"libc\".\n\n");
    }
    if f.scripts > DOCTOR_MANY_SCRIPTS {
        issues.push(" * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n");
    }
    if issues.is_empty() {
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".to_owned();
    }
    let mut report =
        "Sam, I detected a few issues in this Quiver instance memory implants:\n\n".to_owned();
    issues.into_iter().for_each(|issue| report.push_str(issue));
    report.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    report
}

/// MEMORY MALLOC-STATS: Redis's answer when it is built without jemalloc, as Quiver's
/// allocator is the system's.
pub(super) fn malloc_stats(out: &mut BytesMut) {
    write::write_bulk(out, b"Stats not supported for the current allocator");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(used: usize, peak: usize, rss: usize, scripts: usize) -> Figures {
        Figures {
            used,
            peak,
            rss,
            lua: 0,
            scripts,
            dbs: vec![(0, 10, 0)],
        }
    }

    #[test]
    fn the_doctor_reports_what_applies() {
        let mib = 1 << 20;
        assert!(doctor_report(&figures(mib, mib, 4 * mib, 0)).contains("is empty"));
        assert!(doctor_report(&figures(64 * mib, 64 * mib, 70 * mib, 0)).contains("can't find"));
        let report = doctor_report(&figures(64 * mib, 200 * mib, 200 * mib, 2000));
        assert!(report.contains("Peak memory"), "{report}");
        assert!(report.contains("High total RSS"), "{report}");
        assert!(report.contains("Many scripts"), "{report}");
    }
}
