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
    out
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
    for (name, help, value) in counters {
        family(out, name, "counter", help);
        let _ = writeln!(out, "{name} {value}");
    }
    family(
        out,
        "quiver_streams_dropped_total",
        "counter",
        "Events a subscriber did not receive, by slow-subscriber policy.",
    );
    for (policy, value) in [
        ("drop_new", totals.dropped_new),
        ("drop_old", totals.dropped_old),
        ("disconnect", totals.dropped_disconnect),
    ] {
        let _ = writeln!(
            out,
            "quiver_streams_dropped_total{{policy=\"{policy}\"}} {value}"
        );
    }
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

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}
