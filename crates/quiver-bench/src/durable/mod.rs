//! `quiver-bench durable` and `quiver-bench group`: the same load against Quiver's durable
//! streams and NATS JetStream (file storage).
//!
//! `durable`: N publishers each keep K batches of B messages unacknowledged (ack
//! `committed` by default: stored with the stream's durability) while one reader follows
//! the stream live; or, with `--catch-up`, the messages are stored first and the reader
//! then reads them all from the earliest. Every payload carries its send time, publisher
//! and sequence, so the report counts what was lost or duplicated as well as rates and
//! latencies (publish-to-ack, and send-to-delivery).
//!
//! `group`: `--total` messages are stored, then M members of one consumer group take them
//! with explicit acks (Quiver: a member acks each delivered batch in one request; NATS: a
//! durable pull consumer, one ack per message), until every message is acknowledged.

mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::Args;
use hdrhistogram::Histogram;
use quiver_client::{AckMode, Storage};
use quiver_core::streams::durable::{Durability, parse_durability};
use serde_json::json;
use tokio::sync::Mutex;

use target::{Conn, Kind, Member, Names, Publisher, Reader};

/// Bytes at the start of every payload: send time (u64 ns), publisher (u32), sequence (u64).
const HEADER_BYTES: usize = 20;
/// Longest a run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the reader may keep reading after the last ack before the rest counts lost.
const DRAIN_GRACE: Duration = Duration::from_secs(5);
/// Batches of the prefill that `group` and `--catch-up` store first.
const PREFILL_BATCH: usize = 1024;
/// Prefill batches kept in flight.
const PREFILL_WINDOW: usize = 16;

/// `quiver-bench durable`.
#[derive(Debug, Args)]
pub struct DurableArgs {
    /// `quiver://host:port` or `nats://host:port` (JetStream).
    #[arg(long)]
    target: String,
    /// Publishing connections.
    #[arg(long, default_value_t = 1)]
    publishers: usize,
    /// Publishes (batches) each publisher keeps unacknowledged.
    #[arg(long, default_value_t = 8)]
    in_flight: usize,
    /// Messages per publish (NATS: consecutive asynchronous publishes).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Payload bytes (at least 20: send time, publisher, sequence).
    #[arg(long, default_value_t = 256)]
    payload: usize,
    /// Messages in all.
    #[arg(long, default_value_t = 100_000)]
    total: u64,
    /// Quiver's ack: `committed` (stored with the stream's durability), `accepted`, `none`.
    #[arg(long, default_value = "committed")]
    ack: String,
    /// Quiver's durability of the stream: buffered, os, interval:MS or sync. (JetStream's
    /// is the server's `sync_interval`: start nats-server accordingly.)
    #[arg(long, default_value = "os")]
    durability: String,
    /// Pace publishing to this many messages per second in all (latency runs).
    #[arg(long)]
    rate: Option<u64>,
    /// Store everything first, then read it all from the earliest with one reader.
    #[arg(long)]
    catch_up: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// `quiver-bench group`.
#[derive(Debug, Args)]
pub struct GroupArgs {
    /// `quiver://host:port` or `nats://host:port` (JetStream).
    #[arg(long)]
    target: String,
    /// Members of the group, each its own connection.
    #[arg(long, default_value_t = 4)]
    members: usize,
    /// Payload bytes (at least 20).
    #[arg(long, default_value_t = 256)]
    payload: usize,
    /// Messages stored first, then consumed.
    #[arg(long, default_value_t = 100_000)]
    total: u64,
    /// Unacknowledged messages per member (NATS: the consumer's max_ack_pending).
    #[arg(long, default_value_t = 1000)]
    in_flight: u32,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")
}

fn storage(text: &str) -> anyhow::Result<Storage> {
    Ok(
        match parse_durability(text).map_err(|e| anyhow::anyhow!("--durability: {e}"))? {
            Durability::Buffered => Storage::Buffered,
            Durability::Os => Storage::Os,
            Durability::Interval { interval_ms } => Storage::Interval {
                interval_ms: u32::try_from(interval_ms)?,
            },
            Durability::Sync => Storage::Sync,
        },
    )
}

/// A payload: send time (ns since `base`), publisher, sequence, zeros.
fn payload(bytes: usize, base: Instant, publisher: u32, sequence: u64) -> Bytes {
    let mut buf = vec![0u8; bytes];
    let sent = u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX);
    buf[..8].copy_from_slice(&sent.to_le_bytes());
    buf[8..12].copy_from_slice(&publisher.to_le_bytes());
    buf[12..20].copy_from_slice(&sequence.to_le_bytes());
    Bytes::from(buf)
}

/// (send ns, publisher, sequence) of a payload.
fn identity(payload: &[u8]) -> Option<(u64, u32, u64)> {
    let head = payload.get(..HEADER_BYTES)?;
    Some((
        u64::from_le_bytes(head[..8].try_into().ok()?),
        u32::from_le_bytes(head[8..12].try_into().ok()?),
        u64::from_le_bytes(head[12..20].try_into().ok()?),
    ))
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 300_000_000, 3).expect("valid histogram bounds")
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// What the reader saw.
struct Read {
    received: u64,
    duplicates: u64,
    latency_us: Histogram<u64>,
    last: Option<Instant>,
    bytes: u64,
}

/// Which (publisher, sequence) pairs were seen: a bitmap of sequences below a bound per
/// publisher (a hash set costs more than the rest of a reader's work per message).
struct Seen {
    bound: u64,
    publishers: Vec<(u32, Vec<u64>)>,
    /// Where the last publisher looked up is in `publishers`.
    last: usize,
}

impl Seen {
    fn new(bound: u64) -> Self {
        Self {
            bound,
            publishers: Vec::new(),
            last: 0,
        }
    }

    /// Marks the pair: `Some(true)` the first time, `Some(false)` again, `None` for a
    /// sequence at or past the bound (not one this run published).
    fn insert(&mut self, publisher: u32, sequence: u64) -> Option<bool> {
        if sequence >= self.bound {
            return None;
        }
        if self.publishers.get(self.last).map(|p| p.0) != Some(publisher) {
            self.last = match self.publishers.iter().position(|p| p.0 == publisher) {
                Some(index) => index,
                None => {
                    let words = self.bound.div_ceil(64) as usize;
                    self.publishers.push((publisher, vec![0; words]));
                    self.publishers.len() - 1
                }
            };
        }
        let bits = &mut self.publishers[self.last].1;
        let (word, mask) = ((sequence / 64) as usize, 1u64 << (sequence % 64));
        let first = bits[word] & mask == 0;
        bits[word] |= mask;
        Some(first)
    }
}

/// Reads until `expect` distinct messages arrived or `stop` is set; with `timed`, each
/// message's delivery latency and the time of the last one (a catch-up times the whole read
/// instead, and reads the clock once per message less).
async fn read(
    mut reader: Reader,
    expect: u64,
    base: Instant,
    stop: Arc<AtomicU64>,
    timed: bool,
) -> Read {
    let mut seen = Seen::new(expect);
    let mut out = Read {
        received: 0,
        duplicates: 0,
        latency_us: histogram(),
        last: None,
        bytes: 0,
    };
    // Made once: a timer set up for every message would cost more than the message.
    let stopped = wait_stop(&stop);
    tokio::pin!(stopped);
    while out.received < expect {
        let next = tokio::select! {
            biased;
            next = reader.next() => next,
            () = &mut stopped => None,
        };
        let Some(payload) = next else { break };
        out.bytes += payload.len() as u64;
        let Some((sent_ns, publisher, sequence)) = identity(&payload) else {
            continue;
        };
        match seen.insert(publisher, sequence) {
            None => continue,
            Some(false) => {
                out.duplicates += 1;
                continue;
            }
            Some(true) => {}
        }
        out.received += 1;
        if !timed {
            continue;
        }
        let now = Instant::now();
        out.last = Some(now);
        let now_ns = u64::try_from(now.duration_since(base).as_nanos()).unwrap_or(u64::MAX);
        let _ = out
            .latency_us
            .record((now_ns.saturating_sub(sent_ns) / 1000).max(1));
    }
    out
}

async fn wait_stop(stop: &AtomicU64) {
    while stop.load(Ordering::Acquire) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One publisher's share of `total`.
fn share(total: u64, parts: usize, index: usize) -> u64 {
    total / parts as u64 + u64::from((index as u64) < total % parts as u64)
}

struct Published {
    acked: u64,
    ack_us: Histogram<u64>,
}

#[allow(clippy::too_many_arguments)]
async fn publish(
    conn: Conn,
    names: Names,
    ack: AckMode,
    window: usize,
    batch: usize,
    payload_bytes: usize,
    count: u64,
    publisher: u32,
    interval: Option<Duration>,
    base: Instant,
) -> anyhow::Result<Published> {
    let mut sender = Publisher::new(conn, &names, ack, window, batch);
    let mut out = Published {
        acked: 0,
        ack_us: histogram(),
    };
    let start = tokio::time::Instant::now();
    let mut sequence = 0u64;
    let record = |done: Vec<Duration>, out: &mut Published| {
        for latency in done {
            let _ = out.ack_us.record(micros(latency));
        }
    };
    while sequence < count {
        let n = (count - sequence).min(batch as u64);
        if let Some(interval) = interval {
            tokio::time::sleep_until(start + interval.mul_f64(sequence as f64)).await;
        }
        let messages = (sequence..sequence + n)
            .map(|s| payload(payload_bytes, base, publisher, s))
            .collect();
        let done = sender.send(messages).await?;
        record(done, &mut out);
        sequence += n;
    }
    let done = sender.finish().await?;
    record(done, &mut out);
    out.acked = count;
    Ok(out)
}

/// Stores `total` messages as fast as possible (for `group` and `--catch-up`).
async fn prefill(
    conn: &Conn,
    names: &Names,
    payload_bytes: usize,
    total: u64,
    base: Instant,
) -> anyhow::Result<()> {
    let published = publish(
        conn.clone(),
        names.clone(),
        AckMode::Committed,
        PREFILL_WINDOW,
        PREFILL_BATCH,
        payload_bytes,
        total,
        u32::MAX,
        None,
        base,
    )
    .await?;
    if published.acked != total {
        bail!("the prefill stored {} of {total}", published.acked);
    }
    Ok(())
}

fn percentile(h: &Histogram<u64>, q: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.value_at_quantile(q)
    }
}

pub fn run(args: &DurableArgs) -> anyhow::Result<()> {
    let kind = Kind::of(&args.target)?;
    if args.payload < HEADER_BYTES || args.payload > 512 * 1024 {
        bail!(
            "--payload {} is out of range: {HEADER_BYTES}..=524288",
            args.payload
        );
    }
    if args.publishers == 0 || args.in_flight == 0 || args.batch == 0 || args.total == 0 {
        bail!("--publishers, --in-flight, --batch and --total must be at least 1");
    }
    let ack = match args.ack.as_str() {
        "committed" => AckMode::Committed,
        "accepted" => AckMode::Accepted,
        "none" => AckMode::None,
        other => bail!("--ack {other:?}: expected committed, accepted or none"),
    };
    let storage = storage(&args.durability)?;
    let runtime = runtime()?;
    let report = runtime.block_on(async {
        tokio::time::timeout(RUN_TIMEOUT, durable(args, kind, ack, storage))
            .await
            .map_err(|_| anyhow::anyhow!("the run took longer than {} s", RUN_TIMEOUT.as_secs()))?
    })?;
    print(&report, args.json);
    Ok(())
}

async fn durable(
    args: &DurableArgs,
    kind: Kind,
    ack: AckMode,
    storage: Storage,
) -> anyhow::Result<serde_json::Value> {
    let base = Instant::now();
    let names = Names::fresh("durable");
    let admin = Conn::connect(kind, &args.target).await?;
    admin.create(&names, storage).await?;
    if args.catch_up {
        prefill(&admin, &names, args.payload, args.total, base).await?;
        let reader_conn = Conn::connect(kind, &args.target).await?;
        let start = Instant::now();
        let reader = Reader::open(&reader_conn, &names, true).await?;
        let stop = Arc::new(AtomicU64::new(0));
        let read = read(reader, args.total, base, stop, false).await;
        let secs = start.elapsed().as_secs_f64();
        admin.delete(&names).await;
        return Ok(json!({
            "mode": "catch-up",
            "target": args.target,
            "payload": args.payload,
            "total": args.total,
            "delivered": read.received,
            "lost": args.total - read.received,
            "duplicates": read.duplicates,
            "catchup_secs": secs,
            "delivered_per_sec": read.received as f64 / secs,
            "payload_bytes_per_sec": read.bytes as f64 / secs,
        }));
    }
    let reader_conn = Conn::connect(kind, &args.target).await?;
    let reader = Reader::open(&reader_conn, &names, false).await?;
    let stop = Arc::new(AtomicU64::new(0));
    let reading = tokio::spawn(read(reader, args.total, base, Arc::clone(&stop), true));
    let interval = args
        .rate
        .map(|rate| Duration::from_secs_f64(args.publishers as f64 / rate.max(1) as f64));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for index in 0..args.publishers {
        let conn = Conn::connect(kind, &args.target).await?;
        tasks.push(tokio::spawn(publish(
            conn,
            names.clone(),
            ack,
            args.in_flight,
            args.batch,
            args.payload,
            share(args.total, args.publishers, index),
            index as u32,
            interval,
            base,
        )));
    }
    let mut ack_us = histogram();
    let mut acked = 0;
    for task in tasks {
        let published = task.await.context("publisher task")??;
        acked += published.acked;
        ack_us.add(&published.ack_us).context("merge histograms")?;
    }
    let publish_secs = started.elapsed().as_secs_f64();
    let stopper = Arc::clone(&stop);
    tokio::spawn(async move {
        tokio::time::sleep(DRAIN_GRACE).await;
        stopper.store(1, Ordering::Release);
    });
    let read = reading.await.context("reader task")?;
    let delivered_secs = read
        .last
        .map_or(publish_secs, |last| (last - started).as_secs_f64());
    admin.delete(&names).await;
    Ok(json!({
        "mode": "publish",
        "target": args.target,
        "publishers": args.publishers,
        "in_flight": args.in_flight,
        "batch": args.batch,
        "payload": args.payload,
        "total": args.total,
        "ack": args.ack,
        "durability": args.durability,
        "rate": args.rate,
        "published_per_sec": acked as f64 / publish_secs,
        "delivered_per_sec": read.received as f64 / delivered_secs,
        "p50_us": percentile(&ack_us, 0.50),
        "p99_us": percentile(&ack_us, 0.99),
        "p999_us": percentile(&ack_us, 0.999),
        "max_us": ack_us.max(),
        "delivery_p50_us": percentile(&read.latency_us, 0.50),
        "delivery_p99_us": percentile(&read.latency_us, 0.99),
        "lost": acked.saturating_sub(read.received),
        "duplicates": read.duplicates,
    }))
}

pub fn run_group(args: &GroupArgs) -> anyhow::Result<()> {
    let kind = Kind::of(&args.target)?;
    if args.payload < HEADER_BYTES || args.members == 0 || args.total == 0 || args.in_flight == 0 {
        bail!(
            "--payload must be at least {HEADER_BYTES}; --members, --total and --in-flight at least 1"
        );
    }
    let runtime = runtime()?;
    let report = runtime.block_on(async {
        tokio::time::timeout(RUN_TIMEOUT, group(args, kind))
            .await
            .map_err(|_| anyhow::anyhow!("the run took longer than {} s", RUN_TIMEOUT.as_secs()))?
    })?;
    print(&report, args.json);
    Ok(())
}

/// What the members together have seen.
struct Tally {
    seen: Seen,
    acked: u64,
    deliveries: u64,
    redelivered: u64,
}

async fn group(args: &GroupArgs, kind: Kind) -> anyhow::Result<serde_json::Value> {
    let base = Instant::now();
    let names = Names::fresh("group");
    let admin = Conn::connect(kind, &args.target).await?;
    admin.create(&names, Storage::Os).await?;
    prefill(&admin, &names, args.payload, args.total, base).await?;
    let tally = Arc::new(Mutex::new(Tally {
        seen: Seen::new(args.total),
        acked: 0,
        deliveries: 0,
        redelivered: 0,
    }));
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..args.members {
        let conn = Conn::connect(kind, &args.target).await?;
        let mut member = Member::join(&conn, &names, "bench", args.in_flight).await?;
        let (tally, done, names) = (Arc::clone(&tally), Arc::clone(&done), names.clone());
        tasks.push(tokio::spawn(async move {
            let _conn = conn;
            // Never cancelled mid-step (a message taken and not acked would wait out its
            // ack wait): the run ends by aborting the members once everything is acked.
            while let Some(received) = member.step(&names).await? {
                let mut tally = tally.lock().await;
                for (payload, deliveries) in received.messages {
                    tally.deliveries += 1;
                    if deliveries > 1 {
                        tally.redelivered += 1;
                    }
                    if let Some((_, publisher, sequence)) = identity(&payload)
                        && tally.seen.insert(publisher, sequence) == Some(true)
                    {
                        tally.acked += 1;
                    }
                }
                done.store(tally.acked, Ordering::Release);
            }
            anyhow::Ok(())
        }));
    }
    while done.load(Ordering::Acquire) < args.total {
        if let Some(finished) = tasks.iter_mut().find(|t| t.is_finished()) {
            finished.await.context("member task")??;
            bail!("a member stopped before every message was acknowledged");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    for task in &tasks {
        task.abort();
    }
    let secs = started.elapsed().as_secs_f64();
    admin.delete(&names).await;
    let tally = tally.lock().await;
    let acked = tally.acked;
    Ok(json!({
        "mode": "group",
        "target": args.target,
        "members": args.members,
        "payload": args.payload,
        "total": args.total,
        "in_flight": args.in_flight,
        "acked_per_sec": acked as f64 / secs,
        "deliveries": tally.deliveries,
        "redelivered": tally.redelivered,
        "lost": args.total - acked,
    }))
}

fn print(report: &serde_json::Value, json: bool) {
    if json {
        println!("{report}");
        return;
    }
    if let Some(object) = report.as_object() {
        for (key, value) in object {
            println!("{key:<22}{value}");
        }
    }
}
