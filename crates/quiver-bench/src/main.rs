//! `quiver-bench`: Quiver's load generator. One subcommand per job (`log`, `pubsub`,
//! `cache`, `durable`, `group`, `redis-streams`, `http`), each printing a human summary or one JSON object (`--json`).
//!
//! It is never a dependency of anything; competitor client crates belong here only.

use clap::{Parser, Subcommand};

mod cache;
mod durable;
mod http;
mod log;
mod pubsub;
mod redis_streams;

/// Load generator and side-by-side comparisons for Quiver.
#[derive(Debug, Parser)]
#[command(name = "quiver-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Append/read throughput and latency of the embedded log (in-process).
    Log(log::LogArgs),
    /// Pub/sub fan-out throughput and end-to-end latency against quiver://, nats:// or redis://.
    Pubsub(pubsub::PubsubArgs),
    /// Cache SET / GET throughput and latency against quiver://, quiver+quic:// or redis://.
    Cache(cache::CacheArgs),
    /// Durable-stream publishing (acks, delivery, loss) or catch-up against quiver:// or
    /// nats:// (JetStream).
    Durable(durable::DurableArgs),
    /// Consumer-group consumption with explicit acks against quiver:// or nats://
    /// (JetStream durable pull consumer).
    Group(durable::GroupArgs),
    /// The Redis stream type over RESP: XADD, then XREADGROUP with XACK, against any
    /// redis:// server.
    RedisStreams(redis_streams::RedisStreamsArgs),
    /// The HTTP gateway: many connections against admission control (`load`), or
    /// Server-Sent Events subscribers and their end-to-end latency (`events`).
    Http(http::HttpArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Log(args) => log::run(&args),
        Command::Pubsub(args) => pubsub::run(&args),
        Command::Cache(args) => cache::run(&args),
        Command::Durable(args) => durable::run(&args),
        Command::Group(args) => durable::run_group(&args),
        Command::RedisStreams(args) => redis_streams::run(&args),
        Command::Http(args) => http::run(&args),
    }
}
