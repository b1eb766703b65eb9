//! `quiver-bench cache`: closed-loop load on a cache server's SET / GET. `--concurrency`
//! workers each keep one request in flight (send, wait for the reply, send the next), so
//! exactly N requests are in flight at any time; the workers share `--connections`
//! connections round-robin (default one). One connection carrying many requests is how
//! both the Quiver SDK (request ids) and the `redis` crate's multiplexed connection are
//! meant to be used, and it is the same shape for both, so the comparison is fair; more
//! connections spread the server's per-connection read loop over more cores.
//!
//! Every request's latency (from the call to its answer) goes into an HDR histogram; the
//! figure is answered requests per second over the measured phase. `get-hit` first sets
//! every key (not measured); `get-miss` reads keys no one sets. A warm-up phase of the
//! same operation runs before the measured one and is excluded from every figure.

mod report;
mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::{Args, ValueEnum};
use tokio::task::JoinSet;

use report::{Shape, Summary, WorkerStats};
use target::{CacheClient, CacheKind, Found};

/// Longest a whole run (connect, preload, warm-up, measured phase) may last.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);
/// Largest `--payload`: far below Quiver's 4 MiB value limit and Redis's 512 MiB, and
/// enough for any cache-value figure worth quoting.
const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// Most requests in flight: each is one task; more says nothing a smaller run does not.
const MAX_CONCURRENCY: usize = 4096;
/// Most connections: each holds a server-side read loop and a client reader and writer.
const MAX_CONNECTIONS: usize = 256;
/// Most client runtime threads; the machine the bench targets has a few cores.
const MAX_THREADS: usize = 64;
/// Most distinct keys: the bench holds every key in memory (about 60 B each).
const MAX_KEYS: u64 = 1_000_000;
/// Prefix of the keys `set` and `get-hit` use.
const HIT_PREFIX: &str = "bench:cache:key:";
/// Prefix of the keys `get-miss` reads; the bench never sets them.
const MISS_PREFIX: &str = "bench:cache:miss:";

/// The operation a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Op {
    /// SET of a `--payload`-byte value (with `--ttl-ms` when given).
    Set,
    /// GET of keys set beforehand (every answer should be a value).
    GetHit,
    /// GET of keys never set (every answer should be "not found").
    GetMiss,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Set => "set",
            Op::GetHit => "get-hit",
            Op::GetMiss => "get-miss",
        }
    }
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// `quiver://host:port`, `quiver+quic://host:port?fingerprint=<hex>` or `redis://host:port`.
    #[arg(long)]
    target: String,
    /// The operation to measure.
    #[arg(long, value_enum)]
    op: Op,
    /// Value size in bytes (what `set` writes and `get-hit` preloads).
    #[arg(long, default_value_t = 64)]
    payload: usize,
    /// Requests in flight: workers, each waiting for its reply before the next request.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Connections the workers share round-robin (at most --concurrency).
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Client runtime threads (1: one thread runs every worker and the clients' I/O).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Measured requests, across all workers.
    #[arg(long, default_value_t = 100_000)]
    total: u64,
    /// Warm-up requests of the same operation first, excluded from the figures.
    #[arg(long, default_value_t = 10_000)]
    warmup: u64,
    /// Distinct keys, used in turn.
    #[arg(long, default_value_t = 10_000)]
    keys: u64,
    /// TTL of every SET, in milliseconds (default: no expiry).
    #[arg(long)]
    ttl_ms: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &CacheArgs) -> anyhow::Result<()> {
    let kind = CacheKind::of(&args.target)?;
    validate(args)?;
    let runtime = if args.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()
    }
    .context("starting the tokio runtime")?;
    let shape = Shape {
        target: args.target.clone(),
        op: args.op,
        payload_bytes: args.payload,
        concurrency: args.concurrency,
        connections: args.connections,
        threads: args.threads,
        total: args.total,
        warmup: args.warmup,
        keys: args.keys,
        ttl_ms: args.ttl_ms,
    };
    let (stats, secs) = runtime.block_on(async {
        tokio::time::timeout(RUN_TIMEOUT, drive(kind, &shape))
            .await
            .map_err(|_| {
                anyhow::anyhow!(
                    "the run did not finish within {} s; lower --total",
                    RUN_TIMEOUT.as_secs()
                )
            })?
    })?;
    let summary = Summary::of(&stats, secs);
    if args.json {
        println!("{}", summary.to_json(&shape, stats.first_error.as_deref()));
    } else {
        summary.print_text(&shape, stats.first_error.as_deref());
    }
    Ok(())
}

fn validate(args: &CacheArgs) -> anyhow::Result<()> {
    if args.payload > MAX_PAYLOAD_BYTES {
        bail!(
            "--payload {} is out of range: 0..={MAX_PAYLOAD_BYTES} bytes",
            args.payload
        );
    }
    if !(1..=MAX_CONCURRENCY).contains(&args.concurrency) {
        bail!(
            "--concurrency {} is out of range: 1..={MAX_CONCURRENCY}",
            args.concurrency
        );
    }
    let most_connections = args.concurrency.min(MAX_CONNECTIONS);
    if !(1..=most_connections).contains(&args.connections) {
        bail!(
            "--connections {} is out of range: 1..={most_connections} (at most --concurrency and {MAX_CONNECTIONS})",
            args.connections
        );
    }
    if !(1..=MAX_THREADS).contains(&args.threads) {
        bail!(
            "--threads {} is out of range: 1..={MAX_THREADS}",
            args.threads
        );
    }
    if args.total == 0 {
        bail!("--total must be at least 1");
    }
    if !(1..=MAX_KEYS).contains(&args.keys) {
        bail!("--keys {} is out of range: 1..={MAX_KEYS}", args.keys);
    }
    if args.ttl_ms == Some(0) {
        bail!("--ttl-ms must be at least 1 (omit it for no expiry)");
    }
    Ok(())
}

/// What every worker of a run shares.
struct Workload {
    keys: Vec<Bytes>,
    value: Bytes,
    ttl_ms: Option<u64>,
}

/// Connects, preloads for `get-hit`, warms up, then measures; returns the merged stats
/// of the measured phase and how long it took.
async fn drive(kind: CacheKind, shape: &Shape) -> anyhow::Result<(WorkerStats, f64)> {
    let mut clients = Vec::with_capacity(shape.connections);
    for _ in 0..shape.connections {
        clients.push(CacheClient::connect(kind, &shape.target).await?);
    }
    let prefix = if shape.op == Op::GetMiss {
        MISS_PREFIX
    } else {
        HIT_PREFIX
    };
    let workload = Arc::new(Workload {
        keys: (0..shape.keys)
            .map(|i| Bytes::from(format!("{prefix}{i:08}")))
            .collect(),
        value: Bytes::from(vec![b'v'; shape.payload_bytes]),
        ttl_ms: shape.ttl_ms,
    });
    if shape.op == Op::GetHit {
        let preload = phase(&clients, shape.concurrency, Op::Set, &workload, shape.keys).await?;
        if let Some(error) = preload.first_error {
            bail!(
                "setting the {} keys before get-hit failed {} times; first: {error}",
                shape.keys,
                preload.errors
            );
        }
    }
    if shape.warmup > 0 {
        phase(
            &clients,
            shape.concurrency,
            shape.op,
            &workload,
            shape.warmup,
        )
        .await?;
    }
    let start = Instant::now();
    let stats = phase(
        &clients,
        shape.concurrency,
        shape.op,
        &workload,
        shape.total,
    )
    .await?;
    Ok((stats, start.elapsed().as_secs_f64()))
}

/// Runs `count` requests of `op` with `concurrency` workers over `clients`.
async fn phase(
    clients: &[CacheClient],
    concurrency: usize,
    op: Op,
    workload: &Arc<Workload>,
    count: u64,
) -> anyhow::Result<WorkerStats> {
    let next = Arc::new(AtomicU64::new(0));
    let mut workers = JoinSet::new();
    for client in clients.iter().cycle().take(concurrency) {
        workers.spawn(work(
            client.clone(),
            op,
            Arc::clone(workload),
            Arc::clone(&next),
            count,
        ));
    }
    let mut stats = WorkerStats::new();
    while let Some(result) = workers.join_next().await {
        stats.merge(&result.context("a worker task panicked")?);
    }
    Ok(stats)
}

/// One worker: takes the next request number until `count` are taken.
async fn work(
    mut client: CacheClient,
    op: Op,
    workload: Arc<Workload>,
    next: Arc<AtomicU64>,
    count: u64,
) -> WorkerStats {
    let mut stats = WorkerStats::new();
    let key_count = workload.keys.len() as u64;
    loop {
        let number = next.fetch_add(1, Ordering::Relaxed);
        if number >= count {
            break;
        }
        let key = &workload.keys[usize::try_from(number % key_count).expect("below --keys")];
        let start = Instant::now();
        let result = match op {
            Op::Set => client
                .set(key, &workload.value, workload.ttl_ms)
                .await
                .map(|()| None),
            Op::GetHit | Op::GetMiss => client.get(key).await.map(Some),
        };
        let latency_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        match result {
            Ok(found) => {
                stats.record(latency_ns);
                if is_wrong(op, found) {
                    stats.wrong_results += 1;
                }
            }
            Err(error) => stats.error(error),
        }
    }
    stats
}

/// Whether an answer contradicts the operation.
fn is_wrong(op: Op, found: Option<Found>) -> bool {
    matches!(
        (op, found),
        (Op::GetHit, Some(Found::Miss)) | (Op::GetMiss, Some(Found::Hit))
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: CacheArgs,
    }

    fn parse(extra: &[&str]) -> anyhow::Result<CacheArgs> {
        let base = [
            "bench",
            "--target",
            "quiver://127.0.0.1:1",
            "--op",
            "get-hit",
        ];
        let cli = Cli::try_parse_from(base.iter().chain(extra))?;
        validate(&cli.args)?;
        Ok(cli.args)
    }

    fn refused(extra: &[&str], needle: &str) {
        let error = parse(extra).expect_err("refused");
        assert!(error.to_string().contains(needle), "{error}");
    }

    #[test]
    fn defaults_are_valid_and_ops_parse() {
        let args = parse(&[]).expect("defaults");
        assert_eq!(args.op, Op::GetHit);
        assert_eq!(
            (args.concurrency, args.connections, args.threads),
            (32, 1, 1)
        );
        assert_eq!(args.payload, 64);
        for op in ["set", "get-hit", "get-miss"] {
            let cli = Cli::try_parse_from(["b", "--target", "redis://h:1", "--op", op])
                .expect("an op clap knows");
            assert_eq!(cli.args.op.name(), op);
        }
        assert!(Cli::try_parse_from(["b", "--target", "redis://h:1", "--op", "del"]).is_err());
    }

    #[test]
    fn out_of_range_arguments_are_refused_with_the_allowed_range() {
        refused(
            &["--payload", "1048577"],
            "--payload 1048577 is out of range",
        );
        refused(&["--concurrency", "0"], "--concurrency 0 is out of range");
        refused(&["--concurrency", "4097"], "1..=4096");
        refused(&["--concurrency", "4", "--connections", "5"], "1..=4");
        refused(&["--connections", "0"], "--connections 0");
        refused(&["--threads", "0"], "--threads 0");
        refused(&["--total", "0"], "--total must be at least 1");
        refused(&["--keys", "0"], "--keys 0 is out of range");
        refused(&["--keys", "1000001"], "1..=1000000");
        refused(&["--ttl-ms", "0"], "--ttl-ms must be at least 1");
        assert!(parse(&["--payload", "0", "--ttl-ms", "5", "--connections", "32"]).is_ok());
    }

    #[test]
    fn wrong_results_depend_on_the_op() {
        assert!(is_wrong(Op::GetHit, Some(Found::Miss)));
        assert!(is_wrong(Op::GetMiss, Some(Found::Hit)));
        assert!(!is_wrong(Op::GetHit, Some(Found::Hit)));
        assert!(!is_wrong(Op::GetMiss, Some(Found::Miss)));
        assert!(!is_wrong(Op::Set, None));
    }
}
