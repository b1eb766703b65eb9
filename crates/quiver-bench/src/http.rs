//! `quiver-bench http`: the HTTP gateway under load.
//!
//! - `load`: C keep-alive HTTP/1.1 connections send one request after another for a
//!   while. Admitted responses (2xx) and refusals (503, 429) are counted apart, with the
//!   latency of the admitted ones and whether every refusal carried `Retry-After`: the
//!   overload shape (many more connections than `http.max_ccu`).
//! - `events`: N Server-Sent Events subscribers on one stream, a publisher posting R
//!   messages a second on a fixed schedule (from a few connections on a thread of its
//!   own, so that a slow response does not hold up the next message), each carrying the
//!   time it was due; each subscriber measures the end-to-end latency of every message.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::{Args, Subcommand};
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpStream;

#[derive(Debug, Args)]
pub struct HttpArgs {
    #[command(subcommand)]
    mode: Mode,
    /// Print one JSON object instead of the summary.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Many connections sending requests back to back.
    Load(LoadArgs),
    /// Server-Sent Events subscribers and their end-to-end latency.
    Events(EventsArgs),
}

#[derive(Debug, Args)]
struct LoadArgs {
    /// host:port of the HTTP listener.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    /// The path requested.
    #[arg(long, default_value = "/health")]
    path: String,
    /// POST a body of this many bytes instead of GET.
    #[arg(long)]
    post_bytes: Option<usize>,
    #[arg(long, default_value_t = 100)]
    connections: usize,
    #[arg(long, default_value_t = 10)]
    seconds: u64,
}

#[derive(Debug, Args)]
struct EventsArgs {
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    #[arg(long, default_value = "bench/sse/latency")]
    stream: String,
    #[arg(long, default_value_t = 1000)]
    subscribers: usize,
    /// Messages a second.
    #[arg(long, default_value_t = 1000)]
    rate: u64,
    #[arg(long, default_value_t = 10)]
    seconds: u64,
}

pub fn run(args: &HttpArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        match &args.mode {
            Mode::Load(load) => run_load(load).await,
            Mode::Events(events) => run_events(events).await,
        }
    })?;
    if args.json {
        println!("{report}");
    } else {
        for (key, value) in report.as_object().expect("an object") {
            println!("{key:>24}: {value}");
        }
    }
    Ok(())
}

type Sender = http1::SendRequest<Full<Bytes>>;

/// Latencies in µs, from 1 µs to a minute.
fn histogram() -> anyhow::Result<Histogram<u64>> {
    Ok(Histogram::new_with_bounds(1, 60_000_000, 3)?)
}

async fn connect(addr: &str) -> anyhow::Result<Sender> {
    let stream = TcpStream::connect(addr)
        .await
        .with_context(|| format!("connect {addr}"))?;
    stream.set_nodelay(true)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

fn request(method: &str, addr: &str, path: &str, body: Bytes) -> hyper::Request<Full<Bytes>> {
    hyper::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"))
        .header("content-type", "application/octet-stream")
        .body(Full::new(body))
        .expect("a valid request")
}

#[derive(Default)]
struct LoadFigures {
    admitted: u64,
    refused_503: u64,
    refused_429: u64,
    without_retry_after: u64,
    other: u64,
    latency_us: Option<Histogram<u64>>,
}

async fn run_load(args: &LoadArgs) -> anyhow::Result<serde_json::Value> {
    let body = Bytes::from(vec![b'x'; args.post_bytes.unwrap_or(0)]);
    let method = if args.post_bytes.is_some() {
        "POST"
    } else {
        "GET"
    };
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut tasks = Vec::new();
    for _ in 0..args.connections {
        let (addr, path, body) = (args.addr.clone(), args.path.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let mut figures = LoadFigures {
                latency_us: Some(histogram()?),
                ..LoadFigures::default()
            };
            let mut sender = connect(&addr).await?;
            while Instant::now() < deadline {
                if sender.ready().await.is_err() {
                    // The server closed the connection (a refusal may): open another.
                    sender = connect(&addr).await?;
                    continue;
                }
                let started = Instant::now();
                let Ok(response) = sender
                    .send_request(request(method, &addr, &path, body.clone()))
                    .await
                else {
                    sender = connect(&addr).await?;
                    continue;
                };
                let status = response.status().as_u16();
                let retry_after = response.headers().contains_key("retry-after");
                let _ = response.into_body().collect().await;
                let took = started.elapsed();
                match status {
                    200..=299 => {
                        figures.admitted += 1;
                        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
                        figures
                            .latency_us
                            .as_mut()
                            .expect("set")
                            .saturating_record(us);
                    }
                    503 | 429 => {
                        if status == 503 {
                            figures.refused_503 += 1;
                        } else {
                            figures.refused_429 += 1;
                        }
                        if !retry_after {
                            figures.without_retry_after += 1;
                        }
                    }
                    _ => figures.other += 1,
                }
            }
            anyhow::Ok(figures)
        }));
    }
    let mut total = LoadFigures {
        latency_us: Some(histogram()?),
        ..LoadFigures::default()
    };
    for task in tasks {
        let figures = task.await??;
        total.admitted += figures.admitted;
        total.refused_503 += figures.refused_503;
        total.refused_429 += figures.refused_429;
        total.without_retry_after += figures.without_retry_after;
        total.other += figures.other;
        total
            .latency_us
            .as_mut()
            .expect("set")
            .add(figures.latency_us.expect("set"))?;
    }
    let latency = total.latency_us.expect("set");
    let seconds = args.seconds as f64;
    Ok(json!({
        "connections": args.connections,
        "admitted_per_s": (total.admitted as f64 / seconds).round(),
        "admitted": total.admitted,
        "refused_503": total.refused_503,
        "refused_429": total.refused_429,
        "refusals_without_retry_after": total.without_retry_after,
        "other_statuses": total.other,
        "admitted_p50_ms": latency.value_at_quantile(0.5) as f64 / 1000.0,
        "admitted_p99_ms": latency.value_at_quantile(0.99) as f64 / 1000.0,
    }))
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

async fn run_events(args: &EventsArgs) -> anyhow::Result<serde_json::Value> {
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(args.subscribers);
    let mut subscribers = Vec::new();
    for _ in 0..args.subscribers {
        let (addr, stream) = (args.addr.clone(), args.stream.clone());
        let (stop, ready) = (Arc::clone(&stop), ready_tx.clone());
        subscribers.push(tokio::spawn(async move {
            let mut histogram = histogram()?;
            let mut sender = connect(&addr).await?;
            let path = format!("/v1/streams/{stream}/events");
            let response = sender
                .send_request(request("GET", &addr, &path, Bytes::new()))
                .await?;
            if response.status() != 200 {
                bail!("subscribe answered {}", response.status());
            }
            let mut body = response.into_body();
            // Bytes not yet parsed (an event cut between two frames).
            let mut pending: Vec<u8> = Vec::new();
            let mut announced = false;
            let mut lagged = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let frame =
                    match tokio::time::timeout(Duration::from_millis(200), body.frame()).await {
                        Ok(Some(Ok(frame))) => frame,
                        Ok(_) => break,
                        Err(_) => continue,
                    };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if !announced {
                    announced = true;
                    let _ = ready.send(()).await;
                }
                let arrived = now_ns();
                pending.extend_from_slice(&data);
                // Whole events only: up to the last blank line.
                let Some(end) = pending.windows(2).rposition(|w| w == b"\n\n") else {
                    continue;
                };
                let events = &pending[..end + 2];
                lagged += count(events, b"event: lag\n");
                for sent in data_numbers(events) {
                    histogram.saturating_record(arrived.saturating_sub(sent).max(1) / 1000);
                }
                pending.drain(..end + 2);
            }
            anyhow::Ok((histogram, lagged))
        }));
    }
    drop(ready_tx);
    for _ in 0..args.subscribers {
        if ready_rx.recv().await.is_none() {
            bail!("a subscriber ended before it was ready");
        }
    }
    let total = args.rate * args.seconds;
    let (addr, path) = (
        args.addr.clone(),
        format!("/v1/streams/{}/messages", args.stream),
    );
    let rate = args.rate;
    let publishing = std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(publish_on_schedule(addr, path, rate, total))
    });
    let publish_secs = tokio::task::spawn_blocking(move || publishing.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the publisher thread panicked"))??;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    let mut merged = histogram()?;
    let mut lagged = 0;
    for subscriber in subscribers {
        let (histogram, lag) = subscriber.await??;
        merged.add(histogram)?;
        lagged += lag;
    }
    let expected = total * args.subscribers as u64;
    Ok(json!({
        "subscribers": args.subscribers,
        "rate": args.rate,
        "published": total,
        "published_per_sec": total as f64 / publish_secs,
        "delivered": merged.len(),
        "expected": expected,
        "lag_events": lagged,
        "p50_ms": merged.value_at_quantile(0.5) as f64 / 1000.0,
        "p99_ms": merged.value_at_quantile(0.99) as f64 / 1000.0,
        "p999_ms": merged.value_at_quantile(0.999) as f64 / 1000.0,
        "max_ms": merged.max() as f64 / 1000.0,
    }))
}

/// Connections the events publisher posts on: each waits for its response before its
/// next request, so a few of them keep the schedule while a response is slow.
const EVENT_PUBLISHERS: usize = 8;

/// Posts `total` messages at `rate` a second, on its own thread's runtime so that the
/// subscribers' tasks do not hold it up. Each message is due at its place in the schedule
/// and carries that time, whether or not a connection was free to send it then: a late
/// send counts against the latency, not against the schedule (no coordinated omission).
/// Returns the seconds from the first message due to the last response.
async fn publish_on_schedule(
    addr: String,
    path: String,
    rate: u64,
    total: u64,
) -> anyhow::Result<f64> {
    let (due_tx, due_rx) = async_channel(EVENT_PUBLISHERS * 1024);
    let mut posting = Vec::new();
    for _ in 0..EVENT_PUBLISHERS {
        let mut sender = connect(&addr).await?;
        let (addr, path, due_rx) = (addr.clone(), path.clone(), Arc::clone(&due_rx));
        posting.push(tokio::spawn(async move {
            loop {
                let Some(sent_ns) = due_rx.lock().await.recv().await else {
                    return anyhow::Ok(());
                };
                sender.ready().await?;
                let body = Bytes::from(sent_ns.to_string());
                let response = sender
                    .send_request(request("POST", &addr, &path, body))
                    .await?;
                if !response.status().is_success() {
                    bail!("publish answered {}", response.status());
                }
                let _ = response.into_body().collect().await;
            }
        }));
    }
    let interval = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let started = Instant::now();
    for i in 0..total {
        let due = started + interval * u32::try_from(i).unwrap_or(u32::MAX);
        tokio::time::sleep_until(due.into()).await;
        due_tx.send(now_ns()).await?;
    }
    drop(due_tx);
    for task in posting {
        task.await??;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// A channel whose receiver the publishing connections share.
fn async_channel(
    capacity: usize,
) -> (
    tokio::sync::mpsc::Sender<u64>,
    Arc<tokio::sync::Mutex<tokio::sync::mpsc::Receiver<u64>>>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(capacity);
    (tx, Arc::new(tokio::sync::Mutex::new(rx)))
}

/// How many times `needle` occurs in `text`.
fn count(text: &[u8], needle: &[u8]) -> u64 {
    text.windows(needle.len()).filter(|w| *w == needle).count() as u64
}

/// The numbers of every `data: N` line of `text`, without copying it (the subscribers
/// parse a million events a second on the cores the server uses).
fn data_numbers(text: &[u8]) -> impl Iterator<Item = u64> + '_ {
    const PREFIX: &[u8] = b"data: ";
    text.split(|b| *b == b'\n').filter_map(|line| {
        let digits = line.strip_prefix(PREFIX)?;
        std::str::from_utf8(digits).ok()?.parse().ok()
    })
}
