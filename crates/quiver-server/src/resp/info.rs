//! `INFO`: the server, clients, memory, persistence, stats, replication, cpu, modules,
//! errorstats, cluster, keyspace, commandstats and latencystats sections in Redis's
//! `field:value` format.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::RespShared;
use super::latency::histogram;
use crate::http::process;

/// The Redis version Quiver's command set and replies follow; clients use it
/// to pick features (Quiver's own version is `quiver_version`).
pub const REDIS_VERSION: &str = "7.0.15";

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];
const ALL_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
    "commandstats",
    "latencystats",
];

/// A 40-character hexadecimal id drawn once per process, as Redis's `run_id` and
/// `master_replid` are.
fn process_id_hex(which: usize) -> &'static str {
    use std::hash::BuildHasher;
    static IDS: std::sync::OnceLock<[String; 2]> = std::sync::OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let random = std::collections::hash_map::RandomState::new();
        let id = |salt: u64| {
            let words: String = (0..3)
                .map(|i| format!("{:016x}", random.hash_one((salt, i, std::process::id()))))
                .collect();
            words[..40].to_owned()
        };
        [id(0), id(1)]
    });
    &ids[which]
}

/// The kernel interface Quiver's runtime waits on sockets with.
const MULTIPLEXING_API: &str = if cfg!(any(target_os = "linux", target_os = "android")) {
    "epoll"
} else {
    "kqueue"
};

/// Renders the requested sections (none: the default ones).
pub fn render(shared: &RespShared, requested: &[Bytes]) -> String {
    let mut wanted: Vec<&str> = Vec::new();
    if requested.is_empty() {
        wanted.extend(DEFAULT_SECTIONS);
    }
    for name in requested {
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        match name.as_str() {
            "default" => wanted.extend(DEFAULT_SECTIONS),
            "all" | "everything" => wanted.extend(ALL_SECTIONS),
            other => {
                if let Some(known) = ALL_SECTIONS.iter().find(|section| **section == other) {
                    wanted.push(known);
                }
            }
        }
    }
    let mut out = String::with_capacity(1024);
    for section in ALL_SECTIONS
        .iter()
        .filter(|section| wanted.contains(section))
    {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        match *section {
            "server" => server(shared, &mut out),
            "clients" => clients(shared, &mut out),
            "memory" => memory(shared, &mut out),
            "persistence" => persistence(shared, &mut out),
            "stats" => stats(shared, &mut out),
            "keyspace" => keyspace(shared, &mut out),
            "replication" => replication(&mut out),
            "cpu" => cpu(&mut out),
            "modules" => out.push_str("# Modules\r\n"),
            "errorstats" => errorstats(shared, &mut out),
            "cluster" => out.push_str("# Cluster\r\ncluster_enabled:0\r\n"),
            "commandstats" => commandstats(shared, &mut out),
            _ => latencystats(shared, &mut out),
        }
    }
    out
}

fn server(shared: &RespShared, out: &mut String) {
    let uptime = shared.started.elapsed().as_secs();
    let hz = shared.stored_params.get("hz");
    let path = |path: Option<std::path::PathBuf>| {
        path.map(|p| p.display().to_string()).unwrap_or_default()
    };
    let _ = write!(
        out,
        "# Server\r\nredis_version:{REDIS_VERSION}\r\nquiver_version:{}\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:{}\r\nmonotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:{MULTIPLEXING_API}\r\nprocess_id:{}\r\nrun_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{uptime}\r\nuptime_in_days:{}\r\nhz:{hz}\r\nconfigured_hz:{hz}\r\nexecutable:{}\r\nconfig_file:{}\r\n",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
        usize::BITS,
        std::process::id(),
        process_id_hex(0),
        shared.listen_addr.port(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_micros()),
        uptime / 86_400,
        path(std::env::current_exe().ok()),
        path(shared.config_file.get().cloned()),
    );
}

fn clients(shared: &RespShared, out: &mut String) {
    let _ = write!(
        out,
        "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\ntracking_clients:{}\r\n",
        shared.clients.count(),
        shared.max_clients,
        shared.cache.blocked_clients(),
        shared.pubsub.tracking_figures()[0],
    );
}

fn memory(shared: &RespShared, out: &mut String) {
    let (scripts, functions, lua) = shared.scripts.info();
    let cache = &shared.cache;
    let stats = cache.stats();
    let rss = process::memory().resident_bytes.unwrap_or(0);
    let system = process::total_memory().unwrap_or(0);
    // Resident size over what the keyspace accounts (as MEMORY STATS's `fragmentation`).
    let used = stats.used_memory as u64;
    let fragmentation = if used == 0 {
        0.0
    } else {
        rss as f64 / used as f64
    };
    let _ = write!(
        out,
        "# Memory\r\nused_memory:{}\r\nused_memory_human:{}\r\nused_memory_peak:{}\r\nused_memory_peak_human:{}\r\nused_memory_rss:{rss}\r\nused_memory_rss_human:{}\r\ntotal_system_memory:{system}\r\ntotal_system_memory_human:{}\r\nmem_fragmentation_ratio:{fragmentation:.2}\r\nmem_fragmentation_bytes:{}\r\nmem_allocator:libc\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{}\r\nlazyfree_pending_objects:{}\r\nused_memory_lua:{lua}\r\nused_memory_vm_eval:{lua}\r\nused_memory_lua_human:{}\r\nnumber_of_cached_scripts:{scripts}\r\nnumber_of_functions:{functions}\r\n",
        stats.used_memory,
        human(stats.used_memory as u64),
        stats.used_memory_peak,
        human(stats.used_memory_peak as u64),
        human(rss),
        human(system),
        rss as i64 - used as i64,
        cache.max_memory_bytes(),
        human(cache.max_memory_bytes()),
        cache.policy().name(),
        cache.lazy_free_pending(),
        human(lua as u64),
    );
}

/// Snapshot and append-only figures; the cache loads what is on disk before the
/// listeners open, so `loading` is always 0 here.
fn persistence(shared: &RespShared, out: &mut String) {
    let p = shared.cache.persist_info();
    let a = shared.cache.aof_info();
    let status = |ok: bool| if ok { "ok" } else { "err" };
    let _ = write!(
        out,
        "# Persistence\r\nloading:0\r\nasync_loading:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{}\r\nrdb_saves:{}\r\nrdb_last_cow_size:0\r\nrdb_last_load_keys_loaded:{}\r\nrdb_last_save_keys:{}\r\nrdb_last_save_bytes:{}\r\naof_enabled:{}\r\naof_rewrite_in_progress:{}\r\naof_rewrite_scheduled:{}\r\naof_last_rewrite_time_sec:{}\r\naof_current_rewrite_time_sec:{}\r\naof_last_bgrewrite_status:{}\r\naof_rewrites:{}\r\naof_last_write_status:{}\r\naof_loaded_records:{}\r\n",
        p.changes_since_save,
        u8::from(p.bgsave_in_progress),
        p.last_save_s,
        status(p.last_bgsave_ok),
        p.last_bgsave_time_s,
        p.current_bgsave_time_s,
        p.saves,
        p.loaded_keys,
        p.last_stats.keys,
        p.last_stats.bytes,
        u8::from(a.enabled),
        u8::from(a.rewrite_in_progress),
        u8::from(a.rewrite_scheduled),
        a.last_rewrite_time_s,
        a.current_rewrite_time_s,
        status(a.last_rewrite_ok),
        a.rewrites,
        status(a.last_write_ok),
        a.loaded_records,
    );
    if a.enabled {
        let _ = write!(
            out,
            "aof_current_size:{}\r\naof_base_size:{}\r\naof_pending_rewrite:{}\r\naof_buffer_length:0\r\naof_pending_bio_fsync:{}\r\naof_delayed_fsync:0\r\n",
            a.current_size,
            a.base_size,
            u8::from(a.rewrite_scheduled),
            a.pending_records,
        );
    }
}

fn stats(shared: &RespShared, out: &mut String) {
    let keyspace = shared.cache.stats();
    let pubsub = shared.pubsub.stats();
    let counters = &shared.stats;
    let count = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
    let (ops, input_kbps, output_kbps) = counters.instantaneous();
    let tracking = shared.pubsub.tracking_figures();
    // Quiver does not replicate, fork, evict clients or cache MIGRATE's connections:
    // those figures are 0.
    let _ = write!(
        out,
        "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:{ops}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\ntotal_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0\r\ninstantaneous_input_kbps:{input_kbps:.2}\r\ninstantaneous_output_kbps:{output_kbps:.2}\r\ninstantaneous_input_repl_kbps:0.00\r\ninstantaneous_output_repl_kbps:0.00\r\nrejected_connections:{}\r\nsync_full:0\r\nsync_partial_ok:0\r\nsync_partial_err:0\r\nexpired_keys:{}\r\nevicted_keys:{}\r\nevicted_clients:0\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\npubsubshard_channels:{}\r\ntotal_forks:0\r\nmigrate_cached_sockets:0\r\ntracking_total_keys:{}\r\ntracking_total_items:{}\r\ntracking_total_prefixes:{}\r\nlazyfreed_objects:{}\r\nunexpected_error_replies:0\r\ntotal_error_replies:{}\r\ntotal_reads_processed:{}\r\ntotal_writes_processed:{}\r\n",
        count(&counters.total_connections),
        count(&counters.total_commands),
        count(&counters.net_input_bytes),
        count(&counters.net_output_bytes),
        count(&counters.rejected_connections),
        keyspace.expired_keys,
        keyspace.evicted_keys,
        keyspace.keyspace_hits,
        keyspace.keyspace_misses,
        pubsub.channels,
        pubsub.patterns,
        pubsub.shard_channels,
        tracking[1],
        tracking[2],
        tracking[3],
        shared.cache.lazy_freed(),
        count(&counters.total_error_replies),
        count(&counters.reads_processed),
        count(&counters.writes_processed),
    );
}

/// A standalone primary with no replicas (Quiver does not replicate).
fn replication(out: &mut String) {
    let _ = write!(
        out,
        "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
        process_id_hex(1),
    );
}

/// CPU seconds used by the process and by its children (none are started); the
/// section holds only a header where the times cannot be read.
fn cpu(out: &mut String) {
    out.push_str("# CPU\r\n");
    if let Some(t) = process::cpu_times() {
        let _ = write!(
            out,
            "used_cpu_sys:{:.6}\r\nused_cpu_user:{:.6}\r\nused_cpu_sys_children:{:.6}\r\nused_cpu_user_children:{:.6}\r\n",
            t.system, t.user, t.children_system, t.children_user,
        );
    }
}

fn keyspace(shared: &RespShared, out: &mut String) {
    out.push_str("# Keyspace\r\n");
    let now_ms = crate::clock::unix_ms();
    for (index, db) in shared.cache.stats().dbs.iter().enumerate() {
        if db.keys > 0 {
            let _ = write!(
                out,
                "db{index}:keys={},expires={},avg_ttl={}\r\n",
                db.keys,
                db.expires,
                db.avg_ttl_ms(now_ms)
            );
        }
    }
}

fn commandstats(shared: &RespShared, out: &mut String) {
    out.push_str("# Commandstats\r\n");
    for (name, slot) in shared.stats.used() {
        let calls = slot.calls.load(Ordering::Relaxed);
        let usec = slot.usec.load(Ordering::Relaxed);
        let per_call = if calls == 0 {
            0.0
        } else {
            usec as f64 / calls as f64
        };
        let _ = write!(
            out,
            "cmdstat_{name}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}\r\n",
            slot.rejected_calls.load(Ordering::Relaxed),
            slot.failed_calls.load(Ordering::Relaxed),
        );
    }
}

/// The error replies sent, by code.
fn errorstats(shared: &RespShared, out: &mut String) {
    out.push_str("# Errorstats\r\n");
    for (code, count) in shared.stats.errors() {
        let code = String::from_utf8_lossy(&code);
        let _ = write!(out, "errorstat_{code}:count={count}\r\n");
    }
}

/// Each command's latency at the `latency-tracking-info-percentiles`, in microseconds
/// (nothing while `latency-tracking` is off).
fn latencystats(shared: &RespShared, out: &mut String) {
    out.push_str("# Latencystats\r\n");
    if !shared.stats.tracking() {
        return;
    }
    let percentiles: Vec<f64> = shared
        .stored_params
        .get("latency-tracking-info-percentiles")
        .split_ascii_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    for (name, slot) in shared.stats.all() {
        let counts = slot.latency_counts();
        if counts.iter().all(|&n| n == 0) {
            continue;
        }
        let _ = write!(out, "latency_percentiles_usec_{name}:");
        for (i, &p) in percentiles.iter().enumerate() {
            let ns = histogram::percentile(&counts, p).unwrap_or(0);
            let label = format!("{p:.6}");
            let label = label.trim_end_matches('0').trim_end_matches('.');
            let comma = if i == 0 { "" } else { "," };
            let _ = write!(out, "{comma}p{label}={:.3}", ns as f64 / 1000.0);
        }
        out.push_str("\r\n");
    }
}

/// Redis's human-readable byte counts: `1.50M`.
fn human(bytes: u64) -> String {
    const UNITS: [(&str, f64); 4] = [
        ("T", 1_099_511_627_776.0),
        ("G", 1_073_741_824.0),
        ("M", 1_048_576.0),
        ("K", 1024.0),
    ];
    let value = bytes as f64;
    for (unit, size) in UNITS {
        if value >= size {
            return format!("{:.2}{unit}", value / size);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn human_sizes() {
        assert_eq!(human(12), "12B");
        assert_eq!(human(1536), "1.50K");
        assert_eq!(human(3 << 20), "3.00M");
    }
}
