//! What each subscriber records, and the summary of a run: delivered messages per second
//! (first to last delivery), end-to-end latency percentiles (none for a count-only run
//! with empty payloads), and what was lost.

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
        self.arrived(now_ns);
    }

    /// Records one measured message received at `now_ns` whose send time is unknown
    /// (a count-only run).
    pub fn arrived(&mut self, now_ns: u64) {
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
    /// The broker's `accepted` ack for every batch, with a bounded number unacknowledged.
    Accepted,
    /// Fire and forget, like a NATS core publish: the next batch follows at once.
    None,
}

/// The figures of one run, summed over its subscribers.
#[derive(Debug, Clone)]
pub struct Summary {
    pub expected: u64,
    pub received: u64,
    pub lost: u64,
    pub lag_events: u64,
    pub lag_missed: u64,
    pub ended: Vec<String>,
    /// First to last measured delivery, over all subscribers.
    pub span_secs: f64,
    pub publish_secs: f64,
    pub delivered_per_sec: f64,
    /// End-to-end latency; `None` for a count-only run (payload 0: no send time to read).
    pub latency: Option<Latency>,
}

/// End-to-end latency percentiles, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

/// Whether a payload of `payload_bytes` carries no send time, so a run only counts.
pub fn is_count_only(payload_bytes: usize) -> bool {
    payload_bytes == 0
}

impl Summary {
    /// Sums up `stats` (one per subscriber) of a run shaped `shape`.
    pub fn of(shape: &Shape, stats: &[SubscriberStats], publish_secs: f64) -> Summary {
        let mut latency = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3)
            .expect("1..60 s at 3 significant digits is a valid histogram range");
        for s in stats {
            latency
                .add(&s.latency_ns)
                .expect("histograms share the same bounds");
        }
        let received: u64 = stats.iter().map(|s| s.received).sum();
        let expected = shape.total * shape.subscribers as u64;
        let first = stats.iter().filter_map(|s| s.first_ns).min().unwrap_or(0);
        let last = stats.iter().map(|s| s.last_ns).max().unwrap_or(0);
        let span_secs = last.saturating_sub(first) as f64 / 1e9;
        let delivered_per_sec = if span_secs > 0.0 {
            received as f64 / span_secs
        } else {
            0.0
        };
        let us = |q: f64| latency.value_at_quantile(q) as f64 / 1000.0;
        let latency = (!is_count_only(shape.payload_bytes)).then(|| Latency {
            p50_us: us(0.5),
            p99_us: us(0.99),
            p999_us: us(0.999),
            max_us: latency.max() as f64 / 1000.0,
            mean_us: (latency.mean() / 10.0).round() / 100.0,
        });
        Summary {
            expected,
            received,
            lost: expected.saturating_sub(received),
            lag_events: stats.iter().map(|s| s.lag_events).sum(),
            lag_missed: stats.iter().map(|s| s.lag_missed).sum(),
            ended: stats.iter().filter_map(|s| s.ended.clone()).collect(),
            span_secs,
            publish_secs,
            delivered_per_sec,
            latency,
        }
    }

    /// The run as one JSON object (latency figures `null` for a count-only run).
    pub fn to_json(&self, shape: &Shape) -> serde_json::Value {
        let latency = |pick: fn(&Latency) -> f64| self.latency.as_ref().map(pick);
        json!({
            "target": shape.target,
            "publishers": shape.publishers,
            "subscribers": shape.subscribers,
            "payload_bytes": shape.payload_bytes,
            "batch": shape.batch,
            "total": shape.total,
            "warmup": shape.warmup,
            "rate": shape.rate,
            "quiver_ack": format!("{:?}", shape.quiver_ack).to_lowercase(),
            "expected": self.expected,
            "received": self.received,
            "lost": self.lost,
            "lag_events": self.lag_events,
            "lag_missed": self.lag_missed,
            "ended_early": self.ended,
            "delivery_secs": self.span_secs,
            "publish_secs": self.publish_secs,
            "delivered_per_sec": self.delivered_per_sec.round(),
            "p50_us": latency(|l| l.p50_us),
            "p99_us": latency(|l| l.p99_us),
            "p999_us": latency(|l| l.p999_us),
            "max_us": latency(|l| l.max_us),
            "mean_us": latency(|l| l.mean_us),
        })
    }
}

/// Prints the summary of `stats` (one per subscriber), as JSON or text.
pub fn print(shape: &Shape, stats: &[SubscriberStats], publish_secs: f64, as_json: bool) {
    let summary = Summary::of(shape, stats, publish_secs);
    if as_json {
        println!("{}", summary.to_json(shape));
        return;
    }
    let Summary {
        expected,
        received,
        lost,
        lag_events,
        lag_missed,
        span_secs,
        delivered_per_sec,
        ..
    } = summary;
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
    match summary.latency {
        Some(latency) => println!(
            "latency us: p50 {:.1}  p99 {:.1}  p999 {:.1}  max {:.1}",
            latency.p50_us, latency.p99_us, latency.p999_us, latency.max_us
        ),
        None => println!("latency: n/a (payload 0 carries no send time; the run only counts)"),
    }
    println!("lost {lost} (lag notices {lag_events}, missed {lag_missed})");
    for reason in &summary.ended {
        println!("a subscription ended early: {reason}");
    }
}
