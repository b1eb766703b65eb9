//! `quiver-bench pubsub --matrix`: every cell of fan-out x payload x batch, against every
//! `--target`, `--rounds` times. Within a cell the targets alternate (A B, B A, A B, ...:
//! who goes first rotates by round), so a busy moment of the machine falls on both. The
//! figures per cell and target are medians over the rounds, and a ratio is the median of
//! the per-round ratios against the first target. Writes every raw round as JSON, a
//! Markdown table and one SVG bar chart per fan-out.
//!
//! Payload 0 cannot carry the 9-byte send time, so those cells only count deliveries:
//! throughput and loss, no latency ("n/a").

mod aggregate;
mod markdown;
mod svg;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use super::report::{Shape, Summary};
use super::target::Kind;
use super::{PubsubArgs, run_once};
use aggregate::{Cell, Run};

/// Subscribers per cell: one, and a fan-out that multiplies the delivery work.
pub const FANOUTS: [usize; 2] = [1, 10];
/// Payload bytes per cell: empty (count only), small, 1 KiB, 4 KiB.
pub const PAYLOADS: [usize; 4] = [0, 256, 1024, 4096];
/// Messages per publish batch per cell: one at a time, and batched.
pub const BATCHES: [usize; 2] = [1, 64];
/// Most `--rounds`: the matrix already runs 16 cells per target per round.
pub const MAX_ROUNDS: usize = 15;
/// Pause between runs so the previous run's connections are closed on both sides.
const BETWEEN_RUNS: Duration = Duration::from_millis(200);

/// The cells in the order they run.
pub fn cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    for fanout in FANOUTS {
        for batch in BATCHES {
            for payload_bytes in PAYLOADS {
                cells.push(Cell {
                    fanout,
                    payload_bytes,
                    batch,
                });
            }
        }
    }
    cells
}

/// Runs the matrix and writes its files to `args.out`.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    args: &PubsubArgs,
    kinds: &[Kind],
) -> anyhow::Result<()> {
    let labels = aggregate::labels(&args.target);
    let cells = cells();
    let mut runs = Vec::new();
    for (index, &cell) in cells.iter().enumerate() {
        for round in 0..args.rounds {
            for turn in 0..kinds.len() {
                let target = (turn + round) % kinds.len();
                let shape = shape(args, cell, target);
                let outcome = run_once(runtime, kinds[target], &shape)
                    .map(|(stats, publish_secs)| Summary::of(&shape, &stats, publish_secs))
                    .map_err(|error| format!("{error:#}"));
                eprintln!(
                    "[cell {}/{} round {}/{}] {:<8} fan-out {:>2} payload {:>4} batch {:>2}: {}",
                    index + 1,
                    cells.len(),
                    round + 1,
                    args.rounds,
                    labels[target],
                    cell.fanout,
                    cell.payload_bytes,
                    cell.batch,
                    match &outcome {
                        Ok(summary) => format!(
                            "{:.0} msgs/s, lost {}",
                            summary.delivered_per_sec, summary.lost
                        ),
                        Err(error) => format!("failed: {error}"),
                    }
                );
                runs.push(Run {
                    cell,
                    target,
                    round,
                    shape,
                    outcome,
                });
                std::thread::sleep(BETWEEN_RUNS);
            }
        }
    }
    write(args, &labels, &cells, &runs)
}

/// The shape of one run of `cell` against target number `target`.
fn shape(args: &PubsubArgs, cell: Cell, target: usize) -> Shape {
    Shape {
        target: args.target[target].clone(),
        publishers: args.publishers,
        subscribers: cell.fanout,
        payload_bytes: cell.payload_bytes,
        batch: cell.batch,
        total: args.total,
        warmup: args.warmup,
        rate: args.rate,
        quiver_ack: args.quiver_ack,
    }
}

/// What the files say about how the figures were made.
pub struct Provenance {
    /// The command line, as run.
    pub command: String,
    /// `nproc` and the CPU model.
    pub machine: String,
    pub note: Option<String>,
    pub rounds: usize,
    pub total: u64,
    pub warmup: u64,
    pub publishers: usize,
    /// The Quiver publishers' ack mode (`accepted` or `none`).
    pub quiver_ack: String,
}

fn write(args: &PubsubArgs, labels: &[String], cells: &[Cell], runs: &[Run]) -> anyhow::Result<()> {
    let provenance = Provenance {
        command: std::env::args()
            .map(|arg| shell_quoted(&arg))
            .collect::<Vec<_>>()
            .join(" "),
        machine: machine(),
        note: args.note.clone(),
        rounds: args.rounds,
        total: args.total,
        warmup: args.warmup,
        publishers: args.publishers,
        quiver_ack: format!("{:?}", args.quiver_ack).to_lowercase(),
    };
    let table = aggregate::table(labels, cells, runs);
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let raw: Vec<serde_json::Value> = runs
        .iter()
        .map(|run| {
            let result = match &run.outcome {
                Ok(summary) => summary.to_json(&run.shape),
                Err(error) => json!({ "target": run.shape.target, "error": error }),
            };
            json!({
                "fanout": run.cell.fanout,
                "payload_bytes": run.cell.payload_bytes,
                "batch": run.cell.batch,
                "round": run.round + 1,
                "target_label": labels[run.target],
                "result": result,
            })
        })
        .collect();
    let document = json!({
        "bench": "pubsub-matrix",
        "command": provenance.command,
        "machine": provenance.machine,
        "note": provenance.note,
        "targets": args.target,
        "labels": labels,
        "rounds": args.rounds,
        "publishers": args.publishers,
        "total": args.total,
        "warmup": args.warmup,
        "quiver_ack": provenance.quiver_ack,
        "cells": aggregate::to_json(labels, &table),
        "runs": raw,
    });
    save(
        out,
        "pubsub-matrix.json",
        &serde_json::to_string_pretty(&document)?,
    )?;
    save(
        out,
        "pubsub-matrix.md",
        &markdown::render(&provenance, labels, &table),
    )?;
    for fanout in FANOUTS {
        let chart = svg::render(fanout, labels, &table);
        save(out, &format!("pubsub-matrix-fanout-{fanout}.svg"), &chart)?;
    }
    eprintln!("wrote {}", out.display());
    Ok(())
}

fn save(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// `arg` as a POSIX shell reads it back: bare when it is plain, else in single quotes.
fn shell_quoted(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// `nproc` and the CPU model line, as `lscpu` would say them.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cores} cores, {model}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_quoted("--total"), "--total");
        assert_eq!(
            shell_quoted("quiver://127.0.0.1:7070"),
            "quiver://127.0.0.1:7070"
        );
        assert_eq!(shell_quoted("a b; c"), "'a b; c'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }

    #[test]
    fn the_matrix_has_every_cell_once() {
        let cells = cells();
        assert_eq!(cells.len(), FANOUTS.len() * PAYLOADS.len() * BATCHES.len());
        for (i, a) in cells.iter().enumerate() {
            assert!(!cells[i + 1..].contains(a), "{a:?} twice");
        }
    }
}
