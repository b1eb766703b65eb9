//! `quiver-bench log`: appends from N threads in batches of K with a chosen durability,
//! measuring per-call latency (HDR histogram, ns resolution) and throughput; optionally a
//! sequential read, reopen (recovery) and verify of what was written; or `--fsync-floor`,
//! the plain `write` + `fdatasync` loop that bounds any durable append on that disk.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use hdrhistogram::Histogram;
use quiver_log::{Compression, Durability, Log, LogConfig};
use serde_json::json;

/// Highest latency the histograms track (ns): 60 s.
const MAX_LATENCY_NS: u64 = 60_000_000_000;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DurabilityArg {
    Buffered,
    Os,
    Interval,
    Sync,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Durability mode of the log.
    #[arg(long, value_enum, default_value = "buffered")]
    durability: DurabilityArg,
    /// fsync interval for `--durability interval`.
    #[arg(long, default_value_t = 10)]
    interval_ms: u64,
    /// Concurrent appending threads.
    #[arg(long, default_value_t = 1)]
    appenders: usize,
    /// Records per append call.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Bytes per record.
    #[arg(long, default_value_t = 100)]
    payload: usize,
    /// Records in total (fsync-floor: fsyncs in total).
    #[arg(long, default_value_t = 1_000_000)]
    total: u64,
    /// Directory for the log (default: a temporary directory under the current one).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Compress batches with lz4 from this many bytes.
    #[arg(long)]
    lz4_min_bytes: Option<usize>,
    /// After appending: time a sequential read, a reopen (recovery) and a full verify.
    #[arg(long)]
    read: bool,
    /// Measure the plain write + fdatasync loop instead of the log.
    #[arg(long)]
    fsync_floor: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &LogArgs) -> anyhow::Result<()> {
    if args.appenders == 0 || args.batch == 0 || args.total == 0 {
        bail!("--appenders, --batch and --total must be at least 1");
    }
    let base = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix("quiver-bench-log-")
        .tempdir_in(&base)?;
    let result = if args.fsync_floor {
        fsync_floor(args, tmp.path())?
    } else {
        append_bench(args, tmp.path())?
    };
    if args.json {
        println!("{result}");
    } else {
        println!("{}", serde_json::to_string_pretty(&result)?);
    }
    Ok(())
}

fn percentiles(h: &Histogram<u64>) -> serde_json::Value {
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    json!({ "p50_us": us(0.5), "p99_us": us(0.99), "p999_us": us(0.999), "max_us": h.max() as f64 / 1000.0 })
}

fn merge(mut value: serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    if let (Some(a), serde_json::Value::Object(b)) = (value.as_object_mut(), extra) {
        a.extend(b);
    }
    value
}

fn durability(args: &LogArgs) -> Durability {
    match args.durability {
        DurabilityArg::Buffered => Durability::Buffered,
        DurabilityArg::Os => Durability::Os,
        DurabilityArg::Interval => Durability::Interval {
            interval_ms: args.interval_ms,
        },
        DurabilityArg::Sync => Durability::Sync,
    }
}

fn append_bench(args: &LogArgs, dir: &Path) -> anyhow::Result<serde_json::Value> {
    let config =
        LogConfig {
            durability: durability(args),
            compression: args.lz4_min_bytes.map_or(Compression::None, |min_bytes| {
                Compression::Lz4 { min_bytes }
            }),
            ..LogConfig::default()
        };
    let log = Arc::new(Log::open(dir, config.clone())?);
    let calls_per_thread = args.total.div_ceil((args.appenders * args.batch) as u64);
    let start = Instant::now();
    let threads: Vec<_> = (0..args.appenders)
        .map(|t| {
            let log = log.clone();
            let (batch, payload) = (args.batch, args.payload);
            std::thread::spawn(move || -> anyhow::Result<Histogram<u64>> {
                let values: Vec<Vec<u8>> =
                    (0..batch).map(|i| vec![(t + i) as u8; payload]).collect();
                let refs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
                let mut h = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3)?;
                for _ in 0..calls_per_thread {
                    let t0 = Instant::now();
                    if batch == 1 {
                        log.append(refs[0])?;
                    } else {
                        log.append_batch(&refs)?;
                    }
                    h.saturating_record(t0.elapsed().as_nanos() as u64);
                }
                Ok(h)
            })
        })
        .collect();
    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3)?;
    for t in threads {
        let th = t
            .join()
            .map_err(|_| anyhow::anyhow!("appender thread panicked"))??;
        h.add(th)?;
    }
    log.flush()?;
    let elapsed = start.elapsed().as_secs_f64();
    let records = calls_per_thread * (args.appenders * args.batch) as u64;
    let stats = log.stats();
    let mut out = merge(
        json!({
            "bench": "log-append",
            "durability": format!("{:?}", args.durability).to_lowercase(),
            "appenders": args.appenders, "batch": args.batch, "payload": args.payload, "records": records,
            "elapsed_s": elapsed,
            "records_per_sec": records as f64 / elapsed,
            "bytes_per_sec": (records * args.payload as u64) as f64 / elapsed,
            "calls": h.len(),
            "fsyncs": stats.fsyncs,
            "segments": stats.segments,
            "compression_ratio": stats.compression_ratio,
        }),
        percentiles(&h),
    );
    drop(log);
    if args.read {
        out = merge(
            out,
            read_bench(dir, &config, records * args.payload as u64)?,
        );
    }
    Ok(out)
}

fn read_bench(dir: &Path, config: &LogConfig, bytes: u64) -> anyhow::Result<serde_json::Value> {
    let t0 = Instant::now();
    let log = Log::open(dir, config.clone())?;
    let recovery_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut seen = 0u64;
    for r in log.iter(0) {
        seen += r?.value.len() as u64;
        n += 1;
    }
    let read_s = t0.elapsed().as_secs_f64();
    drop(log);
    let t0 = Instant::now();
    let report = quiver_log::tools::verify(dir)?;
    let verify_s = t0.elapsed().as_secs_f64();
    anyhow::ensure!(seen == bytes, "read {seen} bytes, expected {bytes}");
    Ok(json!({
        "read_records": n,
        "read_bytes_per_sec": seen as f64 / read_s,
        "reopen_recovery_ms": recovery_ms,
        "verify_bytes_per_sec": report.bytes as f64 / verify_s,
    }))
}

/// The disk's floor for durable appends: `write` + `fdatasync` of one payload at a time at
/// the end of a file (each fsync also writes the file's new length), then the same over a
/// file already filled with zeros and synced (the data only), which is what a `sync` log
/// does within the stretch it fills ahead of its data.
fn fsync_floor(args: &LogArgs, dir: &Path) -> anyhow::Result<serde_json::Value> {
    let open = |name: &str| {
        OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(dir.join(name))
    };
    let appending = open("fsync-floor.dat")?;
    let (elapsed, h) = write_and_sync(args, &appending)?;
    let over_zeros = open("fsync-floor-zeroed.dat")?;
    over_zeros.write_all_at(&vec![0u8; args.payload * args.total as usize], 0)?;
    over_zeros.sync_all()?;
    let (zeroed_elapsed, zeroed) = write_and_sync(args, &over_zeros)?;
    let over = percentiles(&zeroed);
    Ok(merge(
        json!({
            "bench": "fsync-floor", "payload": args.payload, "fsyncs": args.total, "elapsed_s": elapsed,
            "records_per_sec": args.total as f64 / elapsed,
            "bytes_per_sec": (args.total * args.payload as u64) as f64 / elapsed,
            "over_zeros_records_per_sec": args.total as f64 / zeroed_elapsed,
            "over_zeros_p50_us": over["p50_us"], "over_zeros_p99_us": over["p99_us"],
        }),
        percentiles(&h),
    ))
}

/// `--total` writes of `--payload` bytes one after another into `file`, each followed by
/// `fdatasync`: the time taken and each write's latency.
fn write_and_sync(args: &LogArgs, file: &std::fs::File) -> anyhow::Result<(f64, Histogram<u64>)> {
    let data = vec![0x5au8; args.payload];
    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3)?;
    let mut pos = 0u64;
    let start = Instant::now();
    for _ in 0..args.total {
        let t0 = Instant::now();
        file.write_all_at(&data, pos)?;
        file.sync_data()?;
        h.saturating_record(t0.elapsed().as_nanos() as u64);
        pos += data.len() as u64;
    }
    Ok((start.elapsed().as_secs_f64(), h))
}
