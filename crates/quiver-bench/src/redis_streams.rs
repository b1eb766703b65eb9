//! `quiver-bench redis-streams`: the Redis stream type over RESP against any Redis-protocol
//! server. First N entries are added with pipelined XADD; then C consumers of one group
//! read them with XREADGROUP (COUNT K) and acknowledge each batch with one XACK sent in
//! the same write as their next XREADGROUP, until the group has read everything. Reports
//! XADD/s and consumed (read and acknowledged) entries/s. Plain blocking sockets, one
//! thread per consumer: the same client for every server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;

/// Options of `redis-streams`.
#[derive(Debug, Args)]
pub struct RedisStreamsArgs {
    /// `redis://host:port`.
    #[arg(long)]
    target: String,
    /// Entries added, then consumed.
    #[arg(long, default_value_t = 500_000)]
    entries: u64,
    /// XADD commands per pipeline.
    #[arg(long, default_value_t = 64)]
    pipeline: usize,
    /// Consumers of the group, each on its own connection.
    #[arg(long, default_value_t = 4)]
    consumers: usize,
    /// XREADGROUP COUNT.
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// Bytes of each entry's one value.
    #[arg(long, default_value_t = 64)]
    payload: usize,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

const KEY: &[u8] = b"bench:stream";

fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// A reply, as much of it as this client needs.
enum Value {
    Line,
    Error(String),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Value>>),
}

/// A connection reading whole replies.
struct Conn {
    stream: TcpStream,
    input: Vec<u8>,
    at: usize,
}

impl Conn {
    fn open(target: &str) -> anyhow::Result<Conn> {
        let addr = target
            .strip_prefix("redis://")
            .with_context(|| format!("bad --target {target:?}: expected redis://host:port"))?
            .trim_end_matches('/');
        let stream = TcpStream::connect(addr).with_context(|| format!("connecting to {target}"))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            input: Vec::new(),
            at: 0,
        })
    }

    fn fill(&mut self) -> anyhow::Result<()> {
        if self.at > 0 && self.at == self.input.len() {
            self.input.clear();
            self.at = 0;
        }
        let mut chunk = [0u8; 64 * 1024];
        let n = self.stream.read(&mut chunk)?;
        if n == 0 {
            bail!("the server closed the connection");
        }
        self.input.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    fn line(&mut self) -> anyhow::Result<Vec<u8>> {
        loop {
            if let Some(end) = self.input[self.at..].windows(2).position(|w| w == b"\r\n") {
                let line = self.input[self.at..self.at + end].to_vec();
                self.at += end + 2;
                return Ok(line);
            }
            self.fill()?;
        }
    }

    fn value(&mut self) -> anyhow::Result<Value> {
        let line = self.line()?;
        let number =
            |text: &[u8]| -> anyhow::Result<i64> { Ok(std::str::from_utf8(text)?.parse()?) };
        Ok(match line.first() {
            Some(b'+' | b':') => Value::Line,
            Some(b'-') => Value::Error(String::from_utf8_lossy(&line[1..]).into_owned()),
            Some(b'$') => match number(&line[1..])? {
                -1 => Value::Bulk(None),
                len => {
                    let len = usize::try_from(len)?;
                    while self.input.len() < self.at + len + 2 {
                        self.fill()?;
                    }
                    let bulk = self.input[self.at..self.at + len].to_vec();
                    self.at += len + 2;
                    Value::Bulk(Some(bulk))
                }
            },
            Some(b'*') => match number(&line[1..])? {
                -1 => Value::Array(None),
                len => Value::Array(Some(
                    (0..len)
                        .map(|_| self.value())
                        .collect::<anyhow::Result<_>>()?,
                )),
            },
            _ => bail!("unexpected reply {:?}", String::from_utf8_lossy(&line)),
        })
    }

    fn send(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(self.stream.write_all(bytes)?)
    }
}

/// The entry IDs of an XREADGROUP reply (RESP2: `[[key, [[id, fields], ...]]]`).
fn ids(reply: Value) -> anyhow::Result<Vec<Vec<u8>>> {
    let streams = match reply {
        Value::Array(None) => return Ok(Vec::new()),
        Value::Array(Some(streams)) => streams,
        Value::Error(error) => bail!("XREADGROUP: {error}"),
        _ => bail!("XREADGROUP: not an array"),
    };
    let mut found = Vec::new();
    for stream in streams {
        let Value::Array(Some(mut pair)) = stream else {
            bail!("XREADGROUP: a stream is not a pair");
        };
        let Some(Value::Array(Some(entries))) = pair.pop() else {
            bail!("XREADGROUP: no entries");
        };
        for entry in entries {
            let Value::Array(Some(mut entry)) = entry else {
                bail!("XREADGROUP: an entry is not an array");
            };
            entry.truncate(1);
            match entry.pop() {
                Some(Value::Bulk(Some(id))) => found.push(id),
                _ => bail!("XREADGROUP: an entry without an ID"),
            }
        }
    }
    Ok(found)
}

/// Runs the load; one line (or JSON object) with the figures.
pub fn run(args: &RedisStreamsArgs) -> anyhow::Result<()> {
    let mut setup = Conn::open(&args.target)?;
    let mut out = Vec::new();
    command(&mut out, &[b"DEL", KEY]);
    setup.send(&out)?;
    setup.value()?;

    let value = vec![b'x'; args.payload];
    let started = Instant::now();
    let mut added = 0;
    while added < args.entries {
        let batch = (args.entries - added).min(args.pipeline as u64);
        out.clear();
        for _ in 0..batch {
            command(&mut out, &[b"XADD", KEY, b"*", b"f", &value]);
        }
        setup.send(&out)?;
        for _ in 0..batch {
            if let Value::Error(error) = setup.value()? {
                bail!("XADD: {error}");
            }
        }
        added += batch;
    }
    let xadd_secs = started.elapsed().as_secs_f64();

    out.clear();
    command(&mut out, &[b"XGROUP", b"CREATE", KEY, b"g", b"0"]);
    setup.send(&out)?;
    if let Value::Error(error) = setup.value()? {
        bail!("XGROUP CREATE: {error}");
    }

    let started = Instant::now();
    let consumed: u64 = std::thread::scope(|scope| -> anyhow::Result<u64> {
        let handles: Vec<_> = (0..args.consumers)
            .map(|i| scope.spawn(move || consume(args, i)))
            .collect();
        let mut total = 0;
        for handle in handles {
            total += handle
                .join()
                .map_err(|_| anyhow::anyhow!("a consumer panicked"))??;
        }
        Ok(total)
    })?;
    let consume_secs = started.elapsed().as_secs_f64();
    if consumed != args.entries {
        bail!("consumed {consumed} entries of {}", args.entries);
    }
    let xadd_per_sec = args.entries as f64 / xadd_secs;
    let consumed_per_sec = consumed as f64 / consume_secs;
    if args.json {
        println!(
            "{{\"target\":{:?},\"entries\":{},\"xadd_per_sec\":{xadd_per_sec:.0},\"consumed_per_sec\":{consumed_per_sec:.0},\"consumers\":{},\"count\":{}}}",
            args.target, args.entries, args.consumers, args.count
        );
    } else {
        println!(
            "{}: XADD {xadd_per_sec:.0}/s (pipelines of {}), XREADGROUP+XACK {consumed_per_sec:.0} entries/s ({} consumers, COUNT {})",
            args.target, args.pipeline, args.consumers, args.count
        );
    }
    Ok(())
}

/// One consumer: reads and acknowledges until the group has nothing left.
fn consume(args: &RedisStreamsArgs, index: usize) -> anyhow::Result<u64> {
    let mut conn = Conn::open(&args.target)?;
    let name = format!("c{index}");
    let count = args.count.to_string();
    let mut out = Vec::new();
    let mut pending_ack = false;
    let mut consumed = 0;
    loop {
        out.clear();
        command(
            &mut out,
            &[
                b"XREADGROUP",
                b"GROUP",
                b"g",
                name.as_bytes(),
                b"COUNT",
                count.as_bytes(),
                b"STREAMS",
                KEY,
                b">",
            ],
        );
        conn.send(&out)?;
        if pending_ack {
            conn.value()?;
        }
        let read = ids(conn.value()?)?;
        if read.is_empty() {
            return Ok(consumed);
        }
        consumed += read.len() as u64;
        out.clear();
        let mut ack: Vec<&[u8]> = vec![b"XACK", KEY, b"g"];
        ack.extend(read.iter().map(Vec::as_slice));
        command(&mut out, &ack);
        conn.send(&out)?;
        pending_ack = true;
    }
}
