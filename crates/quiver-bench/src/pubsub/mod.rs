//! `quiver-bench pubsub`: M subscribers, each on its own connection, subscribe to one
//! stream (subject); N publishers publish `total` messages of `payload` bytes in batches
//! of K. Every payload starts with its send time (8 bytes, little-endian ns since the run's
//! base instant) and a phase byte (warm-up or measured), so every subscriber records the
//! end-to-end latency of each measured message into an HDR histogram. The same shape runs
//! against every target, so peers are measured the same way in one run.

mod matrix;
mod report;
mod resp;
mod target;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::Args;
use tokio::sync::watch;
use tokio::task::JoinSet;

use report::{QuiverAck, Shape, SubscriberStats, is_count_only};
use target::{Delivery, Kind, Publisher, Subscriber};

/// Longest a whole run may last before it is aborted with an error.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long subscribers may keep receiving after the last publish before what they have
/// not received counts as lost.
const DRAIN_GRACE: Duration = Duration::from_secs(3);
/// Bytes at the start of every payload: the send time (u64 ns) and the phase byte.
const HEADER_BYTES: usize = 9;
/// Phase byte of a warm-up message (excluded from every figure).
const PHASE_WARMUP: u8 = 1;
/// Phase byte of a measured message.
const PHASE_MEASURED: u8 = 0;
/// Largest `--payload`: a sane ceiling below every target's message limit (NATS: 1 MiB).
const MAX_PAYLOAD_BYTES: usize = 512 * 1024;
/// Largest `--batch`: Quiver's publish batches and NATS flushes stay well below 64 MiB.
const MAX_BATCH: usize = 4096;

#[derive(Debug, Args)]
pub struct PubsubArgs {
    /// `quiver://host:port`, `quiver+quic://host:port?fingerprint=<hex>`, `nats://host:port`
    /// or `redis://host:port`. With `--matrix`,
    /// repeat it or give a comma list: every target runs every cell (the first is the
    /// reference of the ratios).
    #[arg(long, required = true, value_delimiter = ',')]
    target: Vec<String>,
    /// Publishing connections.
    #[arg(long, default_value_t = 1)]
    publishers: usize,
    /// Subscribing connections, one subscription each.
    #[arg(long, default_value_t = 1)]
    subscribers: usize,
    /// Payload size in bytes: at least 9 (send time + phase), or 0 to only count
    /// deliveries (no latency figures).
    #[arg(long, default_value_t = 256)]
    payload: usize,
    /// Messages per publish batch (NATS: publishes per flush).
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Measured messages, across all publishers.
    #[arg(long, default_value_t = 100_000)]
    total: u64,
    /// Warm-up messages published first, across all publishers, excluded from the figures.
    #[arg(long, default_value_t = 10_000)]
    warmup: u64,
    /// Pace publishing to this many messages per second in all (for latency runs).
    #[arg(long)]
    rate: Option<u64>,
    /// Quiver only: ask for each batch's `accepted` ack (a publisher keeps at most 8
    /// batches, or 512 messages when batches are small, unacknowledged) or publish with
    /// ack `none`, as a NATS core publish does.
    #[arg(long, value_enum, default_value = "accepted")]
    quiver_ack: QuiverAck,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Run the comparison matrix instead of one run: fan-out {1, 10} x payload
    /// {0, 256, 1024, 4096} x batch {1, 64} against every --target, targets alternating
    /// within each cell; --subscribers, --payload and --batch are set by the matrix.
    /// Writes JSON (every round), a Markdown table and SVG charts to --out.
    #[arg(long)]
    matrix: bool,
    /// Matrix: rounds per cell and target (the figures are the medians).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Matrix: directory for pubsub-matrix.json, pubsub-matrix.md and the SVG charts.
    #[arg(long, default_value = "docs/benchmarks")]
    out: PathBuf,
    /// Matrix: a line written into the Markdown and JSON (peer versions, date).
    #[arg(long)]
    note: Option<String>,
}

pub fn run(args: &PubsubArgs) -> anyhow::Result<()> {
    let kinds = args
        .target
        .iter()
        .map(|url| Kind::of(url))
        .collect::<anyhow::Result<Vec<Kind>>>()?;
    validate(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    if args.matrix {
        return matrix::run(&runtime, args, &kinds);
    }
    let [kind] = kinds[..] else {
        bail!(
            "{} targets given: one run drives one --target (use --matrix to compare several)",
            kinds.len()
        );
    };
    let shape = Shape {
        target: args.target[0].clone(),
        publishers: args.publishers,
        subscribers: args.subscribers,
        payload_bytes: args.payload,
        batch: args.batch,
        total: args.total,
        warmup: args.warmup,
        rate: args.rate,
        quiver_ack: args.quiver_ack,
    };
    let (stats, publish_secs) = run_once(&runtime, kind, &shape)?;
    report::print(&shape, &stats, publish_secs, args.json);
    Ok(())
}

/// One run of `shape` against `kind`, bounded by [`RUN_TIMEOUT`]: each subscriber's
/// stats and how long publishing took.
fn run_once(
    runtime: &tokio::runtime::Runtime,
    kind: Kind,
    shape: &Shape,
) -> anyhow::Result<(Vec<SubscriberStats>, f64)> {
    runtime.block_on(async {
        tokio::time::timeout(RUN_TIMEOUT, drive(kind, shape))
            .await
            .map_err(|_| {
                anyhow::anyhow!(
                    "the run did not finish within {} s; lower --total or raise --rate",
                    RUN_TIMEOUT.as_secs()
                )
            })?
    })
}

fn validate(args: &PubsubArgs) -> anyhow::Result<()> {
    if !is_count_only(args.payload) && !(HEADER_BYTES..=MAX_PAYLOAD_BYTES).contains(&args.payload) {
        bail!(
            "--payload {} is out of range: 0 (count only, no latency) or {HEADER_BYTES}..={MAX_PAYLOAD_BYTES} bytes (the first {HEADER_BYTES} carry the send time and phase)",
            args.payload
        );
    }
    if !(1..=MAX_BATCH).contains(&args.batch) {
        bail!("--batch {} is out of range: 1..={MAX_BATCH}", args.batch);
    }
    if args.publishers == 0 || args.subscribers == 0 {
        bail!("--publishers and --subscribers must be at least 1");
    }
    if args.total == 0 {
        bail!("--total must be at least 1");
    }
    if args.matrix && !(1..=matrix::MAX_ROUNDS).contains(&args.rounds) {
        bail!(
            "--rounds {} is out of range: 1..={}",
            args.rounds,
            matrix::MAX_ROUNDS
        );
    }
    if let Some(rate) = args.rate {
        if rate == 0 {
            bail!("--rate must be at least 1 msg/s (omit it to publish as fast as possible)");
        }
        let paced_secs = (args.total + args.warmup) / rate;
        if paced_secs >= RUN_TIMEOUT.as_secs() {
            bail!(
                "--total {} plus --warmup {} at --rate {rate} takes {paced_secs} s, longer than a run may last ({} s)",
                args.total,
                args.warmup,
                RUN_TIMEOUT.as_secs()
            );
        }
    }
    Ok(())
}

/// Connects everyone, publishes, waits for the deliveries; returns each subscriber's
/// stats and how long publishing took.
async fn drive(kind: Kind, shape: &Shape) -> anyhow::Result<(Vec<SubscriberStats>, f64)> {
    let base = Instant::now();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut subscribers = JoinSet::new();
    for _ in 0..shape.subscribers {
        let subscriber = Subscriber::connect(kind, &shape.target).await?;
        let count = Count {
            warmup: shape.warmup,
            measured: shape.total,
            count_only: is_count_only(shape.payload_bytes),
        };
        subscribers.spawn(receive(subscriber, base, count, stop_rx.clone()));
    }
    let mut publishers = Vec::with_capacity(shape.publishers);
    for _ in 0..shape.publishers {
        publishers.push(Publisher::connect(kind, &shape.target, shape.quiver_ack).await?);
    }
    let publish_start = Instant::now();
    let mut publishing = JoinSet::new();
    for (index, publisher) in publishers.into_iter().enumerate() {
        let plan = Plan {
            warmup: share(shape.warmup, shape.publishers, index),
            measured: share(shape.total, shape.publishers, index),
            payload_bytes: shape.payload_bytes,
            batch: shape.batch,
            interval_per_msg: shape
                .rate
                .map(|rate| Duration::from_secs_f64(shape.publishers as f64 / rate as f64)),
        };
        publishing.spawn(publish(publisher, plan, base));
    }
    while let Some(result) = publishing.join_next().await {
        result.context("a publisher task panicked")??;
    }
    let publish_secs = publish_start.elapsed().as_secs_f64();
    let mut stats = Vec::with_capacity(shape.subscribers);
    let drained = tokio::time::timeout(DRAIN_GRACE, async {
        while let Some(result) = subscribers.join_next().await {
            stats.push(result.context("a subscriber task panicked")?);
        }
        anyhow::Ok(())
    })
    .await;
    if let Ok(result) = drained {
        result?;
    } else {
        // Whatever has not arrived by now counts as lost.
        let _ = stop_tx.send(true);
        while let Some(result) = subscribers.join_next().await {
            stats.push(result.context("a subscriber task panicked")?);
        }
    }
    Ok((stats, publish_secs))
}

/// `count` split over `parts`: part `index`'s share, the remainder going to the first.
fn share(count: u64, parts: usize, index: usize) -> u64 {
    let parts = parts as u64;
    let index = index as u64;
    count / parts + u64::from(index < count % parts)
}

/// What one publisher sends.
#[derive(Debug, Clone, Copy)]
struct Plan {
    warmup: u64,
    measured: u64,
    payload_bytes: usize,
    batch: usize,
    /// Time between messages of this publisher when paced.
    interval_per_msg: Option<Duration>,
}

async fn publish(publisher: Publisher, plan: Plan, base: Instant) -> anyhow::Result<()> {
    let start = tokio::time::Instant::now();
    let mut sent = 0u64;
    for (phase, count) in [(PHASE_WARMUP, plan.warmup), (PHASE_MEASURED, plan.measured)] {
        let mut left = count;
        while left > 0 {
            let n = left.min(plan.batch as u64);
            if let Some(interval) = plan.interval_per_msg {
                tokio::time::sleep_until(start + interval.mul_f64(sent as f64)).await;
            }
            let payloads = (0..n)
                .map(|_| payload(plan.payload_bytes, phase, base))
                .collect();
            publisher.publish(payloads).await?;
            left -= n;
            sent += n;
        }
    }
    publisher.finish().await
}

/// A payload of `bytes` bytes: send time (ns since `base`, little-endian), phase, zeros;
/// empty for a count-only run.
fn payload(bytes: usize, phase: u8, base: Instant) -> Bytes {
    if is_count_only(bytes) {
        return Bytes::new();
    }
    let mut buf = vec![0u8; bytes];
    let sent_ns = u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX);
    buf[..8].copy_from_slice(&sent_ns.to_le_bytes());
    buf[8] = phase;
    Bytes::from(buf)
}

/// What a subscriber counts.
#[derive(Debug, Clone, Copy)]
struct Count {
    /// Warm-up messages published first (count-only runs skip this many deliveries).
    warmup: u64,
    /// Measured messages it should receive.
    measured: u64,
    /// Payloads are empty: no send time and no phase, so the first `warmup` deliveries
    /// count as the warm-up (publish order is kept per stream) and no latency is known.
    count_only: bool,
}

/// Receives until every measured message arrived, the subscription ended, or `stop`.
async fn receive(
    mut subscriber: Subscriber,
    base: Instant,
    count: Count,
    mut stop: watch::Receiver<bool>,
) -> SubscriberStats {
    let mut stats = SubscriberStats::new();
    let mut warmup_left = if count.count_only { count.warmup } else { 0 };
    while stats.received < count.measured {
        let delivery = tokio::select! {
            delivery = subscriber.next() => delivery,
            _ = stop.changed() => break,
        };
        match delivery {
            Delivery::Payload(bytes) => {
                let now_ns = u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX);
                if count.count_only {
                    if warmup_left > 0 {
                        warmup_left -= 1;
                    } else {
                        stats.arrived(now_ns);
                    }
                    continue;
                }
                let Some(header) = bytes.get(..HEADER_BYTES) else {
                    continue;
                };
                if header[8] != PHASE_MEASURED {
                    continue;
                }
                let sent_ns = u64::from_le_bytes(header[..8].try_into().expect("slice of 8 bytes"));
                stats.record(sent_ns, now_ns);
            }
            Delivery::Lag(missed) => {
                stats.lag_events += 1;
                stats.lag_missed += missed;
            }
            Delivery::Ended(reason) => {
                stats.ended = Some(reason);
                break;
            }
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_count() {
        for (count, parts) in [(10, 3), (7, 7), (3, 5), (100_000, 4)] {
            let sum: u64 = (0..parts).map(|i| share(count, parts, i)).sum();
            assert_eq!(sum, count);
        }
    }

    #[test]
    fn payload_carries_time_and_phase() {
        let base = Instant::now();
        let bytes = payload(16, PHASE_WARMUP, base);
        assert_eq!(bytes.len(), 16);
        assert_eq!(bytes[8], PHASE_WARMUP);
        assert!(bytes[9..].iter().all(|&b| b == 0));
        assert!(payload(0, PHASE_MEASURED, base).is_empty());
    }
}
