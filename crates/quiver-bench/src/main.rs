//! `quiver-bench`: Quiver's load generator. One subcommand per job (`log`, `pubsub`,
//! `cache`), each printing a human summary or one JSON object (`--json`).
//!
//! It is never a dependency of anything; competitor client crates belong here only.

use clap::{Parser, Subcommand};

mod cache;
mod log;
mod pubsub;

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
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Log(args) => log::run(&args),
        Command::Pubsub(args) => pubsub::run(&args),
        Command::Cache(args) => cache::run(&args),
    }
}
