//! What each worker records (per-request latency in an HDR histogram, errors, results
//! that contradict the operation) and the summary of a run: completed operations per
//! second over the measured phase, latency percentiles, errors.

use hdrhistogram::Histogram;
use serde_json::json;

use super::Op;

/// Highest latency the histograms track (ns): 60 s, longer than any request may wait.
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// What one worker saw of its measured requests.
#[derive(Debug)]
pub struct WorkerStats {
    /// Latency of each request that got an answer, ns.
    pub latency_ns: Histogram<u64>,
    /// Requests answered as expected or not (everything but errors).
    pub completed: u64,
    /// Requests that failed (error reply, timeout, closed connection).
    pub errors: u64,
    /// Answers that contradict the operation: a miss in `get-hit`, a hit in `get-miss`.
    pub wrong_results: u64,
    /// The first error, to tell the reader what went wrong.
    pub first_error: Option<String>,
}

impl WorkerStats {
    pub fn new() -> WorkerStats {
        WorkerStats {
            latency_ns: new_histogram(),
            completed: 0,
            errors: 0,
            wrong_results: 0,
            first_error: None,
        }
    }

    /// Records one answered request that took `latency_ns`.
    pub fn record(&mut self, latency_ns: u64) {
        self.latency_ns
            .saturating_record(latency_ns.clamp(1, MAX_LATENCY_NS));
        self.completed += 1;
    }

    /// Records one failed request.
    pub fn error(&mut self, error: String) {
        self.errors += 1;
        self.first_error.get_or_insert(error);
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &WorkerStats) {
        self.latency_ns
            .add(&other.latency_ns)
            .expect("worker histograms share the same bounds");
        self.completed += other.completed;
        self.errors += other.errors;
        self.wrong_results += other.wrong_results;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
        .expect("1..60 s at 3 significant digits is a valid histogram range")
}

/// The load shape, echoed in the report.
#[derive(Debug, Clone)]
pub struct Shape {
    pub target: String,
    pub op: Op,
    pub payload_bytes: usize,
    pub concurrency: usize,
    pub connections: usize,
    pub threads: usize,
    pub total: u64,
    pub warmup: u64,
    pub keys: u64,
    pub ttl_ms: Option<u64>,
}

/// The figures of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub completed: u64,
    pub errors: u64,
    pub wrong_results: u64,
    pub secs: f64,
    /// Answered requests per second over the measured phase (errors excluded).
    pub ops_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl Summary {
    /// Sums up `stats` (all workers merged) of a measured phase that lasted `secs`.
    pub fn of(stats: &WorkerStats, secs: f64) -> Summary {
        let latency = &stats.latency_ns;
        let us = |ns: u64| ns as f64 / 1000.0;
        let answered = !latency.is_empty();
        let at = |q: f64| {
            if answered {
                us(latency.value_at_quantile(q))
            } else {
                0.0
            }
        };
        Summary {
            completed: stats.completed,
            errors: stats.errors,
            wrong_results: stats.wrong_results,
            secs,
            ops_per_sec: if secs > 0.0 {
                (stats.completed as f64 / secs).round()
            } else {
                0.0
            },
            p50_us: at(0.5),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: if answered { us(latency.max()) } else { 0.0 },
            mean_us: if answered {
                (latency.mean() / 10.0).round() / 100.0
            } else {
                0.0
            },
        }
    }

    pub fn to_json(&self, shape: &Shape, first_error: Option<&str>) -> serde_json::Value {
        json!({
            "bench": "cache",
            "target": shape.target,
            "op": shape.op.name(),
            "payload_bytes": shape.payload_bytes,
            "concurrency": shape.concurrency,
            "connections": shape.connections,
            "threads": shape.threads,
            "total": shape.total,
            "warmup": shape.warmup,
            "keys": shape.keys,
            "ttl_ms": shape.ttl_ms,
            "completed": self.completed,
            "errors": self.errors,
            "wrong_results": self.wrong_results,
            "first_error": first_error,
            "secs": self.secs,
            "ops_per_sec": self.ops_per_sec,
            "p50_us": self.p50_us,
            "p99_us": self.p99_us,
            "p999_us": self.p999_us,
            "max_us": self.max_us,
            "mean_us": self.mean_us,
        })
    }

    pub fn print_text(&self, shape: &Shape, first_error: Option<&str>) {
        println!(
            "cache {} {}: {} B values, {} in flight over {} connection(s), {} client thread(s), {} requests (+{} warm-up) over {} keys{}",
            shape.target,
            shape.op.name(),
            shape.payload_bytes,
            shape.concurrency,
            shape.connections,
            shape.threads,
            shape.total,
            shape.warmup,
            shape.keys,
            shape
                .ttl_ms
                .map_or(String::new(), |ttl| format!(", TTL {ttl} ms")),
        );
        println!(
            "completed {} in {:.3} s: {:.0} ops/s",
            self.completed, self.secs, self.ops_per_sec
        );
        println!(
            "latency us: p50 {:.1}  p99 {:.1}  p999 {:.1}  max {:.1}  mean {:.1}",
            self.p50_us, self.p99_us, self.p999_us, self.max_us, self.mean_us
        );
        println!(
            "errors {} (wrong results {})",
            self.errors, self.wrong_results
        );
        if let Some(error) = first_error {
            println!("first error: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_merged_histograms() {
        let mut a = WorkerStats::new();
        let mut b = WorkerStats::new();
        for us in 1..=500u64 {
            a.record(us * 1000);
        }
        for us in 501..=1000u64 {
            b.record(us * 1000);
        }
        b.error("no reply".to_owned());
        b.wrong_results = 2;
        a.merge(&b);
        let summary = Summary::of(&a, 2.0);
        assert_eq!(summary.completed, 1000);
        assert_eq!(summary.errors, 1);
        assert_eq!(summary.wrong_results, 2);
        assert_eq!(summary.ops_per_sec, 500.0);
        // 3 significant digits: within 0.1 % of the exact rank.
        assert!((summary.p50_us - 500.0).abs() <= 1.0, "{summary:?}");
        assert!((summary.p99_us - 990.0).abs() <= 1.0, "{summary:?}");
        assert!((summary.p999_us - 999.0).abs() <= 1.0, "{summary:?}");
        assert!((summary.max_us - 1000.0).abs() <= 1.0, "{summary:?}");
        assert!((summary.mean_us - 500.5).abs() <= 1.0, "{summary:?}");
        assert_eq!(a.first_error.as_deref(), Some("no reply"));
    }

    #[test]
    fn an_empty_run_reports_zeros_not_garbage() {
        let mut stats = WorkerStats::new();
        stats.error("refused".to_owned());
        let summary = Summary::of(&stats, 0.0);
        assert_eq!(summary.ops_per_sec, 0.0);
        assert_eq!(
            (summary.p50_us, summary.p999_us, summary.max_us),
            (0.0, 0.0, 0.0)
        );
        let shape = Shape {
            target: "quiver://127.0.0.1:1".to_owned(),
            op: Op::GetMiss,
            payload_bytes: 64,
            concurrency: 1,
            connections: 1,
            threads: 1,
            total: 1,
            warmup: 0,
            keys: 1,
            ttl_ms: None,
        };
        let json = summary.to_json(&shape, stats.first_error.as_deref());
        assert_eq!(json["op"], "get-miss");
        assert_eq!(json["errors"], 1);
        assert_eq!(json["first_error"], "refused");
        for key in ["ops_per_sec", "p50_us", "p99_us", "p999_us"] {
            assert!(json[key].is_number(), "{key} in {json}");
        }
    }

    #[test]
    fn latencies_are_clamped_into_the_histogram() {
        let mut stats = WorkerStats::new();
        stats.record(0);
        stats.record(u64::MAX);
        assert_eq!(stats.completed, 2);
        assert!(stats.latency_ns.max() >= MAX_LATENCY_NS);
    }
}
