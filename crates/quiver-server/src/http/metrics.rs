//! Prometheus text exposition (format 0.0.4) of server-wide figures.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use super::process;
use crate::serve::listener::ListenerStats;
use crate::serve::state::ServerState;

/// A per-listener metric family: name, type, help, and how to read it.
type ListenerMetric = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ListenerStats) -> u64,
);

/// Renders every metric the server exposes.
pub fn render(state: &ServerState) -> String {
    let mut out = String::with_capacity(2048);
    family(
        &mut out,
        "quiver_build_info",
        "gauge",
        "Build information; the value is always 1.",
    );
    let _ = writeln!(
        out,
        "quiver_build_info{{version=\"{}\",profile=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        state.profile
    );
    family(
        &mut out,
        "quiver_uptime_seconds",
        "gauge",
        "Seconds since the server started.",
    );
    let _ = writeln!(
        out,
        "quiver_uptime_seconds {:.3}",
        state.started.elapsed().as_secs_f64()
    );
    family(
        &mut out,
        "quiver_ready",
        "gauge",
        "1 when /ready answers 200, else 0.",
    );
    let _ = writeln!(
        out,
        "quiver_ready {}",
        u8::from(state.readiness.checks().ready())
    );

    let memory = process::memory();
    if let Some(bytes) = memory.resident_bytes {
        family(
            &mut out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
        );
        let _ = writeln!(out, "process_resident_memory_bytes {bytes}");
    }
    if let Some(bytes) = memory.virtual_bytes {
        family(
            &mut out,
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
        );
        let _ = writeln!(out, "process_virtual_memory_bytes {bytes}");
    }

    let per_listener: [ListenerMetric; 4] = [
        (
            "quiver_listener_open_connections",
            "gauge",
            "Connections open now.",
            |l| l.open(),
        ),
        (
            "quiver_listener_max_connections",
            "gauge",
            "Configured connection limit.",
            |l| u64::from(l.max_connections),
        ),
        (
            "quiver_listener_accepted_connections_total",
            "counter",
            "Connections admitted.",
            |l| l.accepted_total.load(Ordering::Relaxed),
        ),
        (
            "quiver_listener_refused_connections_total",
            "counter",
            "Connections refused at the connection limit.",
            |l| l.refused_total.load(Ordering::Relaxed),
        ),
    ];
    for (name, kind, help, read) in per_listener {
        family(&mut out, name, kind, help);
        for listener in &state.listeners {
            let _ = writeln!(
                out,
                "{name}{{listener=\"{}\",addr=\"{}\"}} {}",
                listener.name,
                listener.addr,
                read(listener)
            );
        }
    }
    streams(&mut out, state);
    pubsub(&mut out, state);
    snapshots(&mut out, state);
    durable(&mut out, state);
    gateway(&mut out, state);
    out
}

/// The HTTP gateway: requests by route and status, latency, admission and rate limits.
fn gateway(out: &mut String, state: &ServerState) {
    let g = &state.gateway;
    let a = &g.admission;
    g.stats.render(out);
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    plain_counters(
        out,
        &[
            (
                "quiver_http_admitted_total",
                "Requests admission control let in.",
                load(&a.admitted),
            ),
            (
                "quiver_http_refused_full_total",
                "Requests refused with 503 because http.max_ccu requests were in the gateway.",
                load(&a.refused_full),
            ),
            (
                "quiver_http_refused_queue_timeout_total",
                "Requests refused with 503 after waiting http.queue_timeout in the admission queue.",
                load(&a.refused_timeout),
            ),
            (
                "quiver_http_event_streams_refused_total",
                "Event streams refused with 503 at http.max_event_streams.",
                load(&g.event_slots.refused),
            ),
            (
                "quiver_http_rate_limited_total",
                "Requests refused with 429 by http.rate_limit.",
                g.rate.as_ref().map_or(0, |r| load(&r.refused)),
            ),
        ],
    );
    let gauges: [(&str, &str, u64); 6] = [
        (
            "quiver_http_ccu",
            "Requests in the gateway now (served plus waiting).",
            a.inside() as u64,
        ),
        (
            "quiver_http_queue",
            "Requests waiting in the admission queue now.",
            a.waiting() as u64,
        ),
        ("quiver_http_max_ccu", "http.max_ccu.", a.max() as u64),
        (
            "quiver_http_normal_capacity",
            "Requests served at once: http.max_ccu times http.utilization.",
            a.normal() as u64,
        ),
        (
            "quiver_http_event_streams",
            "Server-Sent Events streams open now.",
            g.event_slots.open() as u64,
        ),
        (
            "quiver_http_consumers",
            "Consumer-group consumers the REST API keeps now.",
            g.consumers.count() as u64,
        ),
    ];
    for (name, help, value) in gauges {
        family(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {value}");
    }
}

/// Per durable stream (storage, appends, fsync latency) and per consumer group (lag,
/// pending, redeliveries, dead letters).
fn durable(out: &mut String, state: &ServerState) {
    let streams: Vec<_> = state
        .broker
        .list_streams()
        .into_iter()
        .filter_map(|info| info.durable.clone().map(|durable| (info, durable)))
        .collect();
    if streams.is_empty() {
        return;
    }
    type Read = fn(&quiver_core::streams::durable::DurableStats) -> u64;
    let per_stream: [(&str, &str, &str, Read); 9] = [
        (
            "quiver_stream_stored_messages",
            "gauge",
            "Messages a durable stream holds (readable).",
            |d| d.stored_messages,
        ),
        (
            "quiver_stream_stored_bytes",
            "gauge",
            "Bytes of a durable stream's log segments on disk.",
            |d| d.stored_bytes,
        ),
        (
            "quiver_stream_first_offset",
            "gauge",
            "The first offset a reader may start at.",
            |d| d.first_offset,
        ),
        (
            "quiver_stream_next_offset",
            "gauge",
            "The offset after the last stored message.",
            |d| d.next_offset,
        ),
        (
            "quiver_stream_appended_messages_total",
            "counter",
            "Messages appended since start-up (its rate is the append rate).",
            |d| d.appended,
        ),
        (
            "quiver_stream_appended_bytes_total",
            "counter",
            "Payload and header bytes appended since start-up.",
            |d| d.appended_bytes,
        ),
        (
            "quiver_stream_append_rounds_total",
            "counter",
            "Append rounds: one write (and under sync one fsync) each.",
            |d| d.append_rounds,
        ),
        (
            "quiver_stream_duplicates_total",
            "counter",
            "Publishes dropped as repeats of a stored message id.",
            |d| d.duplicates,
        ),
        (
            "quiver_stream_failed",
            "gauge",
            "1 when the stream's log failed and appends stop until a restart.",
            |d| u64::from(d.failed.is_some()),
        ),
    ];
    for (name, kind, help, read) in per_stream {
        family(out, name, kind, help);
        for (info, durable) in &streams {
            let _ = writeln!(out, "{name}{{stream=\"{}\"}} {}", info.name, read(durable));
        }
    }
    family(
        out,
        "quiver_stream_fsync_seconds",
        "histogram",
        "Latency of a durable stream's fsyncs.",
    );
    for (info, durable) in &streams {
        let log = &durable.log;
        // The log's last bucket holds every longer fsync: it counts under +Inf only, and
        // +Inf and the count are the buckets' sum (one reading, so they agree).
        let (finite, longer) = log
            .fsync_histogram_us
            .split_at(log.fsync_histogram_us.len() - 1);
        let mut cumulative = 0;
        for (i, count) in finite.iter().enumerate() {
            cumulative += count;
            let le = (1u64 << (i + 1)) as f64 / 1e6;
            let _ = writeln!(
                out,
                "quiver_stream_fsync_seconds_bucket{{stream=\"{}\",le=\"{le}\"}} {cumulative}",
                info.name
            );
        }
        let _ = writeln!(
            out,
            "quiver_stream_fsync_seconds_bucket{{stream=\"{}\",le=\"+Inf\"}} {}\nquiver_stream_fsync_seconds_sum{{stream=\"{}\"}} {:.6}\nquiver_stream_fsync_seconds_count{{stream=\"{}\"}} {}",
            info.name,
            cumulative + longer[0],
            info.name,
            log.fsync_us as f64 / 1e6,
            info.name,
            cumulative + longer[0]
        );
    }
    groups(out, state, &streams);
}

fn groups(
    out: &mut String,
    state: &ServerState,
    streams: &[(
        quiver_core::streams::StreamInfo,
        quiver_core::streams::durable::DurableStats,
    )],
) {
    let all: Vec<_> = streams
        .iter()
        .flat_map(|(info, _)| state.broker.groups(&info.name).unwrap_or_default())
        .collect();
    if all.is_empty() {
        return;
    }
    type Read = fn(&quiver_core::streams::GroupInfo) -> u64;
    let per_group: [(&str, &str, &str, Read); 8] = [
        (
            "quiver_group_lag",
            "gauge",
            "Messages a consumer group has not acknowledged (undelivered + pending).",
            |g| g.lag,
        ),
        (
            "quiver_group_pending",
            "gauge",
            "Messages delivered to a group's members and not acknowledged.",
            |g| g.pending,
        ),
        (
            "quiver_group_ready",
            "gauge",
            "Pending messages waiting to be delivered again.",
            |g| g.ready,
        ),
        (
            "quiver_group_members",
            "gauge",
            "Members of a group now.",
            |g| g.members.len() as u64,
        ),
        (
            "quiver_group_acked_total",
            "counter",
            "Messages a group acknowledged.",
            |g| g.acked,
        ),
        (
            "quiver_group_redelivered_total",
            "counter",
            "Deliveries after the first.",
            |g| g.redelivered,
        ),
        (
            "quiver_group_dead_lettered_total",
            "counter",
            "Messages moved to the group's dead-letter stream.",
            |g| g.dead_lettered,
        ),
        (
            "quiver_group_lost_to_retention_total",
            "counter",
            "Messages retention deleted before the group acknowledged them.",
            |g| g.lost_to_retention,
        ),
    ];
    for (name, kind, help, read) in per_group {
        family(out, name, kind, help);
        for group in &all {
            let (stream, value) = (&group.stream, read(group));
            let _ = writeln!(
                out,
                "{name}{{stream=\"{stream}\",group=\"{}\"}} {value}",
                group.name
            );
        }
    }
}

/// The streams broker's totals over every stream.
fn streams(out: &mut String, state: &ServerState) {
    let stats = state.broker.stats();
    let totals = &stats.totals;
    let counters: [(&str, &str, u64); 4] = [
        (
            "quiver_streams_published_total",
            "Events accepted by the broker.",
            totals.published,
        ),
        (
            "quiver_streams_delivered_total",
            "Events handed to subscribers (once per subscriber).",
            totals.delivered,
        ),
        (
            "quiver_streams_batches_total",
            "Delivery batches sealed (each encoded once for all subscribers).",
            totals.batches,
        ),
        (
            "quiver_streams_block_timeouts_total",
            "Publishes that failed waiting for room under the block policy.",
            totals.block_timeouts,
        ),
    ];
    plain_counters(out, &counters);
    labeled(
        out,
        ("quiver_streams_dropped_total", "counter"),
        "Events a subscriber did not receive, by slow-subscriber policy.",
        "policy",
        &[
            ("drop_new", totals.dropped_new),
            ("drop_old", totals.dropped_old),
            ("disconnect", totals.dropped_disconnect),
        ],
    );
    family(
        out,
        "quiver_streams_subscriptions",
        "gauge",
        "Live subscriptions.",
    );
    let _ = writeln!(out, "quiver_streams_subscriptions {}", stats.subscriptions);
    family(
        out,
        "quiver_streams_streams",
        "gauge",
        "Streams the broker knows.",
    );
    let _ = writeln!(out, "quiver_streams_streams {}", stats.streams.len());
}

/// The cache's snapshots (SAVE, BGSAVE, the `save` rules) and append-only file.
fn snapshots(out: &mut String, state: &ServerState) {
    let p = state.cache.persist_info();
    plain_counters(
        out,
        &[(
            "quiver_cache_snapshots_total",
            "Cache snapshots written (SAVE, BGSAVE, save rules, shutdown).",
            p.saves,
        )],
    );
    let gauges: [(&str, &str, i64); 6] = [
        (
            "quiver_cache_changes_since_snapshot",
            "Keys changed since the last cache snapshot.",
            i64::try_from(p.changes_since_save).unwrap_or(i64::MAX),
        ),
        (
            "quiver_cache_snapshot_in_progress",
            "1 while a background snapshot is being written.",
            i64::from(p.bgsave_in_progress),
        ),
        (
            "quiver_cache_last_snapshot_ok",
            "1 when the last snapshot succeeded, 0 when it failed (writes are then refused with MISCONF while save rules are set).",
            i64::from(p.last_bgsave_ok),
        ),
        (
            "quiver_cache_last_snapshot_time_seconds",
            "Unix time of the last successful snapshot (or of the start).",
            i64::try_from(p.last_save_s).unwrap_or(i64::MAX),
        ),
        (
            "quiver_cache_last_snapshot_keys",
            "Keys in the last snapshot written.",
            i64::try_from(p.last_stats.keys).unwrap_or(i64::MAX),
        ),
        (
            "quiver_cache_last_snapshot_bytes",
            "Bytes of the last snapshot written.",
            i64::try_from(p.last_stats.bytes).unwrap_or(i64::MAX),
        ),
    ];
    let a = state.cache.aof_info();
    plain_counters(
        out,
        &[
            (
                "quiver_cache_aof_rewrites_total",
                "Rewrites of the cache's append-only file (BGREWRITEAOF, automatic, start-up).",
                a.rewrites,
            ),
            (
                "quiver_cache_aof_fsyncs_total",
                "Fsyncs of the append-only log (one serves every write waiting for it under appendfsync always).",
                a.fsyncs,
            ),
        ],
    );
    let aof_gauges: [(&str, &str, i64); 4] = [
        (
            "quiver_cache_aof_enabled",
            "1 while the cache journals its changes in the append-only file.",
            i64::from(a.enabled),
        ),
        (
            "quiver_cache_aof_last_write_ok",
            "1 when the last write and fsync of the append-only log succeeded, 0 when one failed (writes are then refused with MISCONF until a rewrite succeeds).",
            i64::from(a.last_write_ok),
        ),
        (
            "quiver_cache_aof_size_bytes",
            "Bytes of the append-only log now.",
            i64::try_from(a.current_size).unwrap_or(i64::MAX),
        ),
        (
            "quiver_cache_aof_rewrite_in_progress",
            "1 while a new base of the append-only file is being written.",
            i64::from(a.rewrite_in_progress),
        ),
    ];
    for (name, help, value) in gauges.into_iter().chain(aof_gauges) {
        family(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {value}");
    }
}

/// The Redis channels (PUBLISH, SUBSCRIBE and friends over RESP).
fn pubsub(out: &mut String, state: &ServerState) {
    let stats = state.pubsub.stats();
    let counters: [(&str, &str, u64); 3] = [
        (
            "quiver_pubsub_published_total",
            "Messages published to Redis channels (PUBLISH, SPUBLISH).",
            stats.published,
        ),
        (
            "quiver_pubsub_delivered_total",
            "Messages queued for Redis channel subscribers (once per subscriber).",
            stats.delivered,
        ),
        (
            "quiver_keyspace_events_dropped_total",
            "Keyspace events not sent to the stream quiver/cache/keyspace because its backlog was full.",
            stats.keyspace_events_dropped,
        ),
    ];
    plain_counters(out, &counters);
    labeled(
        out,
        ("quiver_pubsub_disconnected_total", "counter"),
        "Subscribers disconnected by client-output-buffer-limit pubsub, by limit.",
        "limit",
        &[
            ("hard", stats.disconnected_hard),
            ("soft", stats.disconnected_soft),
        ],
    );
    labeled(
        out,
        ("quiver_pubsub_channels", "gauge"),
        "Redis channels, patterns and shard channels with at least one subscriber.",
        "kind",
        &[
            ("channel", stats.channels),
            ("pattern", stats.patterns),
            ("shard_channel", stats.shard_channels),
        ],
    );
}

/// Counters without labels: (name, help, value).
fn plain_counters(out: &mut String, counters: &[(&str, &str, u64)]) {
    for (name, help, value) in counters {
        family(out, name, "counter", help);
        let _ = writeln!(out, "{name} {value}");
    }
}

/// One family with one label: a line per (label value, value).
fn labeled(
    out: &mut String,
    (name, kind): (&str, &str),
    help: &str,
    label: &str,
    values: &[(&str, u64)],
) {
    family(out, name, kind, help);
    for (at, value) in values {
        let _ = writeln!(out, "{name}{{{label}=\"{at}\"}} {value}");
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}
