//! What each subscriber records, and the summary of a run: delivered messages per second
//! (first to last delivery), end-to-end latency percentiles, and what was lost.

use hdrhistogram::Histogram;
use serde_json::json;

/// Highest latency the histograms track (ns): 60 s, the longest a run may last.
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// What one subscriber saw of the measured messages.
#[derive(Debug)]
pub struct SubscriberStats {
    /// End-to-end latency of each measured message, ns.
    pub latency_ns: Histogram<u64>,
    /// Measured messages received.
    pub received: u64,
    /// Lag notices received (Quiver).
    pub lag_events: u64,
    /// Messages the server said it did not deliver (Quiver).
    pub lag_missed: u64,
    /// First and last measured delivery, ns since the run's base instant.
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    /// Why the subscription ended early, if it did.
    pub ended: Option<String>,
}

impl SubscriberStats {
    pub fn new() -> SubscriberStats {
        SubscriberStats {
            latency_ns: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
                .expect("1..60 s at 3 significant digits is a valid histogram range"),
            received: 0,
            lag_events: 0,
            lag_missed: 0,
            first_ns: None,
            last_ns: 0,
            ended: None,
        }
    }

    /// Records one measured message sent at `sent_ns` and received at `now_ns`.
    pub fn record(&mut self, sent_ns: u64, now_ns: u64) {
        let latency = now_ns.saturating_sub(sent_ns).clamp(1, MAX_LATENCY_NS);
        self.latency_ns.saturating_record(latency);
        self.received += 1;
        self.first_ns.get_or_insert(now_ns);
        self.last_ns = now_ns;
    }
}

/// The load shape, echoed in the report.
#[derive(Debug, Clone)]
pub struct Shape {
    pub target: String,
    pub publishers: usize,
    pub subscribers: usize,
    pub payload_bytes: usize,
    pub batch: usize,
    pub total: u64,
    pub warmup: u64,
    pub rate: Option<u64>,
    /// Quiver publishers wait for each batch's `accepted` ack, or not at all.
    pub quiver_ack: QuiverAck,
}

/// How a Quiver publisher acknowledges a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QuiverAck {
    /// Wait for the broker's `accepted` ack: one batch in flight per publisher.
    Accepted,
    /// Fire and forget, like a NATS core publish: the next batch follows at once.
    None,
}

/// Prints the summary of `stats` (one per subscriber), as JSON or text.
pub fn print(shape: &Shape, stats: &[SubscriberStats], publish_secs: f64, as_json: bool) {
    let mut latency = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3)
        .expect("1..60 s at 3 significant digits is a valid histogram range");
    for s in stats {
        latency
            .add(&s.latency_ns)
            .expect("histograms share the same bounds");
    }
    let received: u64 = stats.iter().map(|s| s.received).sum();
    let lag_events: u64 = stats.iter().map(|s| s.lag_events).sum();
    let lag_missed: u64 = stats.iter().map(|s| s.lag_missed).sum();
    let expected = shape.total * shape.subscribers as u64;
    let lost = expected.saturating_sub(received);
    let first = stats.iter().filter_map(|s| s.first_ns).min().unwrap_or(0);
    let last = stats.iter().map(|s| s.last_ns).max().unwrap_or(0);
    let span_secs = last.saturating_sub(first) as f64 / 1e9;
    let delivered_per_sec = if span_secs > 0.0 {
        received as f64 / span_secs
    } else {
        0.0
    };
    let us = |q: f64| latency.value_at_quantile(q) as f64 / 1000.0;
    let ended: Vec<&str> = stats.iter().filter_map(|s| s.ended.as_deref()).collect();
    if as_json {
        let out = json!({
            "target": shape.target,
            "publishers": shape.publishers,
            "subscribers": shape.subscribers,
            "payload_bytes": shape.payload_bytes,
            "batch": shape.batch,
            "total": shape.total,
            "warmup": shape.warmup,
            "rate": shape.rate,
            "quiver_ack": format!("{:?}", shape.quiver_ack).to_lowercase(),
            "expected": expected,
            "received": received,
            "lost": lost,
            "lag_events": lag_events,
            "lag_missed": lag_missed,
            "ended_early": ended,
            "delivery_secs": span_secs,
            "publish_secs": publish_secs,
            "delivered_per_sec": delivered_per_sec.round(),
            "p50_us": us(0.5),
            "p99_us": us(0.99),
            "p999_us": us(0.999),
            "max_us": latency.max() as f64 / 1000.0,
            "mean_us": (latency.mean() / 10.0).round() / 100.0,
        });
        println!("{out}");
        return;
    }
    println!(
        "pubsub {}: {} publishers, {} subscribers, {} B payload, batch {}, {} messages (+{} warm-up){}",
        shape.target,
        shape.publishers,
        shape.subscribers,
        shape.payload_bytes,
        shape.batch,
        shape.total,
        shape.warmup,
        shape
            .rate
            .map_or(String::new(), |r| format!(", paced at {r} msgs/s")),
    );
    println!(
        "delivered {received}/{expected} in {span_secs:.3} s: {delivered_per_sec:.0} msgs/s (publishing took {publish_secs:.3} s)"
    );
    println!(
        "latency us: p50 {:.1}  p99 {:.1}  p999 {:.1}  max {:.1}",
        us(0.5),
        us(0.99),
        us(0.999),
        latency.max() as f64 / 1000.0
    );
    println!("lost {lost} (lag notices {lag_events}, missed {lag_missed})");
    for reason in ended {
        println!("a subscription ended early: {reason}");
    }
}
