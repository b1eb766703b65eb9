//! From raw rounds to the figures of the table: per cell and target the median (and
//! min–max) of delivered msgs/s, the median p50 and p99, the messages lost over all
//! rounds; per cell the median of the per-round ratios of the first target to each other.

use serde_json::json;

use crate::pubsub::report::{Shape, Summary};

/// One cell of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// Subscribers.
    pub fanout: usize,
    pub payload_bytes: usize,
    /// Messages per publish batch.
    pub batch: usize,
}

/// One run: a cell, a target (index into `--target`), a round, and what came of it.
#[derive(Debug)]
pub struct Run {
    pub cell: Cell,
    pub target: usize,
    pub round: usize,
    pub shape: Shape,
    pub outcome: Result<Summary, String>,
}

/// Median and range over rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// One target's figures in one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Delivered msgs/s over the rounds that completed.
    pub per_sec: Option<Spread>,
    /// Median p50 and p99 (µs); `None` for count-only cells or when no round completed.
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// Measured messages not delivered, summed over the rounds that completed.
    pub lost: u64,
    pub rounds_ok: usize,
    pub rounds_failed: usize,
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cell: Cell,
    /// Per target, in `--target` order.
    pub figures: Vec<Figures>,
    /// Per target: median over rounds of (first target's msgs/s / this target's); `None`
    /// for the first target and when no round of both completed.
    pub ratios: Vec<Option<f64>>,
}

/// Short names for the targets: the URL scheme, with a number when two share one.
pub fn labels(urls: &[String]) -> Vec<String> {
    let schemes: Vec<&str> = urls
        .iter()
        .map(|url| {
            url.split_once("://")
                .map_or(url.as_str(), |(scheme, _)| scheme)
        })
        .collect();
    schemes
        .iter()
        .enumerate()
        .map(|(i, scheme)| {
            if schemes.iter().filter(|s| *s == scheme).count() > 1 {
                format!("{scheme}#{}", i + 1)
            } else {
                (*scheme).to_owned()
            }
        })
        .collect()
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Every cell's row, for `labels.len()` targets.
pub fn table(labels: &[String], cells: &[Cell], runs: &[Run]) -> Vec<Row> {
    cells
        .iter()
        .map(|&cell| {
            let of = |target: usize| {
                runs.iter()
                    .filter(move |run| run.cell == cell && run.target == target)
            };
            let figures = (0..labels.len()).map(|t| figures(of(t))).collect();
            let ratios = (0..labels.len())
                .map(|t| (t > 0).then(|| ratio(runs, cell, t)).flatten())
                .collect();
            Row {
                cell,
                figures,
                ratios,
            }
        })
        .collect()
}

fn figures<'a>(runs: impl Iterator<Item = &'a Run>) -> Figures {
    let mut done = Vec::new();
    let mut rounds_failed = 0;
    for run in runs {
        match &run.outcome {
            Ok(summary) => done.push(summary),
            Err(_) => rounds_failed += 1,
        }
    }
    let rates: Vec<f64> = done.iter().map(|s| s.delivered_per_sec).collect();
    let per_sec = median(&rates).map(|median| Spread {
        median,
        min: rates.iter().copied().fold(f64::INFINITY, f64::min),
        max: rates.iter().copied().fold(0.0, f64::max),
    });
    let latency = |pick: fn(&Summary) -> Option<f64>| {
        let values: Vec<f64> = done.iter().filter_map(|s| pick(s)).collect();
        median(&values)
    };
    Figures {
        per_sec,
        p50_us: latency(|s| s.latency.map(|l| l.p50_us)),
        p99_us: latency(|s| s.latency.map(|l| l.p99_us)),
        lost: done.iter().map(|s| s.lost).sum(),
        rounds_ok: done.len(),
        rounds_failed,
    }
}

/// Median over rounds of (target 0's msgs/s / `target`'s), rounds where both completed.
fn ratio(runs: &[Run], cell: Cell, target: usize) -> Option<f64> {
    let rate = |t: usize, round: usize| {
        runs.iter()
            .find(|run| run.cell == cell && run.target == t && run.round == round)
            .and_then(|run| run.outcome.as_ref().ok())
            .map(|summary| summary.delivered_per_sec)
    };
    let rounds = runs.iter().map(|run| run.round + 1).max().unwrap_or(0);
    let ratios: Vec<f64> = (0..rounds)
        .filter_map(|round| match (rate(0, round), rate(target, round)) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        })
        .collect();
    median(&ratios)
}

/// The table as JSON, one object per cell.
pub fn to_json(labels: &[String], rows: &[Row]) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let targets: Vec<serde_json::Value> = row
                .figures
                .iter()
                .zip(&row.ratios)
                .zip(labels)
                .map(|((f, ratio), label)| {
                    json!({
                        "label": label,
                        "delivered_per_sec_median": f.per_sec.map(|s| s.median.round()),
                        "delivered_per_sec_min": f.per_sec.map(|s| s.min.round()),
                        "delivered_per_sec_max": f.per_sec.map(|s| s.max.round()),
                        "p50_us_median": f.p50_us,
                        "p99_us_median": f.p99_us,
                        "lost_all_rounds": f.lost,
                        "rounds_ok": f.rounds_ok,
                        "rounds_failed": f.rounds_failed,
                        "first_target_over_this_median": ratio,
                    })
                })
                .collect();
            json!({
                "fanout": row.cell.fanout,
                "payload_bytes": row.cell.payload_bytes,
                "batch": row.cell.batch,
                "targets": targets,
            })
        })
        .collect();
    serde_json::Value::Array(rows)
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::pubsub::report::{Latency, QuiverAck};

    pub fn summary(per_sec: f64, lost: u64, p50_us: Option<f64>) -> Summary {
        Summary {
            expected: 100,
            received: 100 - lost,
            lost,
            lag_events: 0,
            lag_missed: 0,
            ended: Vec::new(),
            span_secs: 1.0,
            publish_secs: 1.0,
            delivered_per_sec: per_sec,
            latency: p50_us.map(|p50_us| Latency {
                p50_us,
                p99_us: p50_us * 2.0,
                p999_us: p50_us * 3.0,
                max_us: p50_us * 4.0,
                mean_us: p50_us,
            }),
        }
    }

    pub fn run(cell: Cell, target: usize, round: usize, outcome: Result<Summary, String>) -> Run {
        Run {
            cell,
            target,
            round,
            shape: Shape {
                target: format!("t{target}"),
                publishers: 1,
                subscribers: cell.fanout,
                payload_bytes: cell.payload_bytes,
                batch: cell.batch,
                total: 100,
                warmup: 0,
                rate: None,
                quiver_ack: QuiverAck::Accepted,
            },
            outcome,
        }
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn labels_are_schemes_numbered_when_shared() {
        let urls = ["quiver://a:1", "nats://b:2"].map(str::to_owned);
        assert_eq!(labels(&urls), ["quiver", "nats"]);
        let urls = ["nats://a:1", "nats://b:2"].map(str::to_owned);
        assert_eq!(labels(&urls), ["nats#1", "nats#2"]);
    }

    #[test]
    fn a_row_takes_medians_per_target_and_ratios_per_round() {
        let cell = Cell {
            fanout: 1,
            payload_bytes: 256,
            batch: 64,
        };
        let runs = vec![
            run(cell, 0, 0, Ok(summary(300.0, 0, Some(10.0)))),
            run(cell, 1, 0, Ok(summary(100.0, 1, Some(20.0)))),
            run(cell, 1, 1, Ok(summary(200.0, 2, Some(40.0)))),
            run(cell, 0, 1, Ok(summary(200.0, 0, Some(30.0)))),
            run(cell, 0, 2, Ok(summary(1000.0, 0, Some(20.0)))),
            run(cell, 1, 2, Err("timed out".to_owned())),
        ];
        let labels = ["quiver", "nats"].map(str::to_owned);
        let rows = table(&labels, &[cell], &runs);
        let row = &rows[0];
        let quiver = &row.figures[0];
        assert_eq!(
            quiver.per_sec,
            Some(Spread {
                median: 300.0,
                min: 200.0,
                max: 1000.0
            })
        );
        assert_eq!((quiver.p50_us, quiver.p99_us), (Some(20.0), Some(40.0)));
        let nats = &row.figures[1];
        assert_eq!(nats.per_sec.map(|s| s.median), Some(150.0));
        assert_eq!((nats.lost, nats.rounds_ok, nats.rounds_failed), (3, 2, 1));
        // Rounds 1 and 2 only: 300/100 = 3 and 200/200 = 1, median 2.
        assert_eq!(row.ratios, [None, Some(2.0)]);
        let json = to_json(&labels, &rows);
        assert_eq!(json[0]["targets"][1]["first_target_over_this_median"], 2.0);
    }

    #[test]
    fn count_only_cells_have_no_latency() {
        let cell = Cell {
            fanout: 10,
            payload_bytes: 0,
            batch: 1,
        };
        let runs = vec![run(cell, 0, 0, Ok(summary(50.0, 0, None)))];
        let rows = table(&["quiver".to_owned()], &[cell], &runs);
        assert_eq!(rows[0].figures[0].p50_us, None);
        assert_eq!(rows[0].ratios, [None]);
    }
}
