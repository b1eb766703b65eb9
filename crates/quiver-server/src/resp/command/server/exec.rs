//! Running server commands: INFO CONFIG COMMAND TIME.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{EventClasses, EvictionPolicy};
use quiver_resp::Reply;
use quiver_resp::encode as write;

use crate::resp::command::exec::container_help;
use crate::resp::command::server::{ConfigCommand, ServerCommand};
use crate::resp::connection::{Connection, Flow};
use crate::resp::info;
use crate::resp::table::command_reply;
use quiver_core::pubsub::OutputLimits;

/// TIME's reply: seconds and microseconds.
pub(in crate::resp) fn write_time(out: &mut BytesMut) {
    let micros = crate::clock::unix_micros();
    write::write_array_len(out, 2);
    write::write_bulk(out, (micros / 1_000_000).to_string().as_bytes());
    write::write_bulk(out, (micros % 1_000_000).to_string().as_bytes());
}

/// Runs a server command.
pub(in crate::resp) fn execute(
    conn: &mut Connection,
    command: ServerCommand,
    out: &mut BytesMut,
) -> Flow {
    let protocol = conn.session.protocol;
    match command {
        ServerCommand::Info { sections } => {
            let text = info::render(&conn.shared, &sections);
            Reply::Verbatim {
                format: *b"txt",
                text: Bytes::from(text),
            }
            .encode(protocol, out);
        }
        ServerCommand::Command(command) => command_reply(&command).encode(protocol, out),
        ServerCommand::Time => write_time(out),
        ServerCommand::Config(command) => config(conn, command, out),
        ServerCommand::Role => {
            write::write_array_len(out, 3);
            write::write_bulk(out, b"master");
            write::write_integer(out, 0);
            write::write_array_len(out, 0);
        }
        ServerCommand::ReplicaOf { primary: None } => write::write_simple(out, b"OK"),
        ServerCommand::ReplicaOf {
            primary: Some((host, port)),
        } => write::write_error(
            out,
            format!(
                "ERR this node does not replicate, so it cannot follow {}:{port}; it is a primary (REPLICAOF NO ONE is accepted)",
                String::from_utf8_lossy(&host)
            )
            .as_bytes(),
        ),
        ServerCommand::Shutdown { abort: true, .. } => {
            write::write_error(out, b"ERR No shutdown in progress.")
        }
        ServerCommand::Shutdown {
            save: Some(true), ..
        } => {
            tracing::warn!(
                client = conn.session.id,
                "SHUTDOWN SAVE refused: the cache does not write snapshots; the server keeps running"
            );
            write::write_error(out, b"ERR Errors trying to SHUTDOWN. Check logs.");
        }
        ServerCommand::Shutdown { .. } => {
            tracing::info!(client = conn.session.id, peer = %conn.session.peer, "shutdown requested by a client (SHUTDOWN)");
            conn.shared.shut_down();
            return Flow::Close;
        }
    }
    Flow::Continue
}

/// The parameters `CONFIG GET` shows, with their current values.
fn config_values(conn: &Connection) -> Vec<(&'static str, String)> {
    let runtime = conn.shared.runtime();
    let cache = &conn.shared.cache;
    vec![
        ("maxmemory", cache.max_memory_bytes().to_string()),
        ("maxmemory-policy", cache.policy().name().to_owned()),
        ("maxmemory-samples", cache.max_memory_samples().to_string()),
        (
            "requirepass",
            runtime
                .requirepass
                .map(|pass| String::from_utf8_lossy(&pass).into_owned())
                .unwrap_or_default(),
        ),
        (
            "protected-mode",
            if runtime.protected_mode { "yes" } else { "no" }.to_owned(),
        ),
        ("databases", cache.databases().to_string()),
        ("maxclients", conn.shared.max_clients.to_string()),
        (
            "timeout",
            conn.shared
                .settings
                .idle_timeout
                .map_or(0, |idle| idle.as_secs())
                .to_string(),
        ),
        (
            "proto-max-bulk-len",
            conn.shared.settings.limits.max_bulk_len_bytes.to_string(),
        ),
        (
            "client-query-buffer-limit",
            conn.shared
                .settings
                .limits
                .max_query_buffer_bytes
                .to_string(),
        ),
        ("client-output-buffer-limit", output_limits(conn)),
        ("port", conn.shared.listen_addr.port().to_string()),
        ("bind", conn.shared.listen_addr.ip().to_string()),
        ("notify-keyspace-events", cache.notify_events().to_string()),
        (
            "busy-reply-threshold",
            conn.shared.scripts.busy_threshold_ms().to_string(),
        ),
        (
            "lua-time-limit",
            conn.shared.scripts.busy_threshold_ms().to_string(),
        ),
        ("save", String::new()),
        ("appendonly", "no".to_owned()),
    ]
}

fn config(conn: &mut Connection, command: ConfigCommand, out: &mut BytesMut) {
    let protocol = conn.session.protocol;
    match command {
        ConfigCommand::Get { patterns } => {
            let values = config_values(conn);
            let pairs: Vec<(Reply, Reply)> = values
                .into_iter()
                .filter(|(name, _)| {
                    patterns
                        .iter()
                        .any(|pattern| quiver_core::cache::glob_match(pattern, name.as_bytes()))
                })
                .map(|(name, value)| (Reply::bulk_static(name), Reply::bulk(value)))
                .collect();
            Reply::Map(pairs).encode(protocol, out);
        }
        ConfigCommand::Set { pairs } => match config_set(conn, &pairs) {
            Ok(()) => write::write_simple(out, b"OK"),
            Err(message) => write::write_error(out, message.as_bytes()),
        },
        ConfigCommand::ResetStat => {
            conn.shared.stats.reset();
            conn.shared.cache.reset_stats();
            write::write_simple(out, b"OK");
        }
        ConfigCommand::Help => container_help("config", protocol, out),
    }
}

/// Applies `CONFIG SET` pairs all or nothing, with Redis's error texts.
fn config_set(conn: &mut Connection, pairs: &[(Bytes, Bytes)]) -> Result<(), String> {
    enum Change {
        MaxMemory(u64),
        Policy(EvictionPolicy),
        RequirePass(Option<Bytes>),
        ProtectedMode(bool),
        PubSubLimits(OutputLimits),
        KeyspaceEvents(EventClasses),
        BusyThreshold(u64),
    }
    let mut changes = Vec::with_capacity(pairs.len());
    for (name, value) in pairs {
        let name_text = String::from_utf8_lossy(name).to_ascii_lowercase();
        let value_text = String::from_utf8_lossy(value);
        let invalid = |reason: &str| {
            format!("ERR CONFIG SET failed (possibly related to argument '{name_text}') - {reason}")
        };
        let change = match name_text.as_str() {
            "maxmemory" => Change::MaxMemory(parse_memory(&value_text).ok_or_else(|| invalid("argument must be a memory value"))?),
            "maxmemory-policy" => Change::Policy(value_text.parse().map_err(|_| invalid("argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"))?),
            "requirepass" => Change::RequirePass((!value.is_empty()).then(|| value.clone())),
            "protected-mode" => Change::ProtectedMode(match value_text.to_ascii_lowercase().as_str() {
                "yes" => true,
                "no" => false,
                _ => return Err(invalid("argument must be 'yes' or 'no'")),
            }),
            "client-output-buffer-limit" => Change::PubSubLimits(
                parse_output_limits(&value_text, conn.shared.pubsub.limits()).map_err(|reason| invalid(&reason))?,
            ),
            "notify-keyspace-events" => Change::KeyspaceEvents(
                EventClasses::parse(&value_text).ok_or_else(|| invalid("Invalid event class character. Use 'Ag$lshzxeKEtmdn'."))?,
            ),
            "busy-reply-threshold" | "lua-time-limit" => Change::BusyThreshold(
                value_text.parse().map_err(|_| invalid("argument couldn't be parsed into an integer"))?,
            ),
            _ => return Err(format!("ERR Unknown option or number of arguments for CONFIG SET - '{name_text}'")),
        };
        changes.push(change);
    }
    for change in changes {
        match change {
            Change::MaxMemory(bytes) => conn.shared.cache.set_max_memory_bytes(bytes),
            Change::Policy(policy) => conn.shared.cache.set_policy(policy),
            Change::RequirePass(pass) => {
                conn.shared
                    .runtime
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .requirepass = pass;
            }
            Change::PubSubLimits(limits) => conn.shared.pubsub.set_limits(limits),
            Change::KeyspaceEvents(classes) => conn.shared.pubsub.set_notify_events(classes),
            Change::BusyThreshold(ms) => conn.shared.scripts.set_busy_threshold_ms(ms),
            Change::ProtectedMode(on) => {
                conn.shared
                    .runtime
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .protected_mode = on;
            }
        }
    }
    Ok(())
}

/// `client-output-buffer-limit` as Redis shows it. Normal clients have one hard limit,
/// `resp.max_output_buffer`; there are no replicas.
fn output_limits(conn: &Connection) -> String {
    let pubsub = conn.shared.pubsub.limits();
    format!(
        "normal {} 0 0 slave 0 0 0 pubsub {} {} {}",
        conn.shared.settings.max_output_buffer_bytes,
        pubsub.hard_bytes,
        pubsub.soft_bytes,
        pubsub.soft_period.as_secs()
    )
}

/// `CONFIG SET client-output-buffer-limit "pubsub <hard> <soft> <seconds>"`: groups of
/// a class and three values. Only the pubsub class can change here.
fn parse_output_limits(text: &str, mut limits: OutputLimits) -> Result<OutputLimits, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".to_owned());
    }
    for group in words.chunks(4) {
        let class = group[0].to_ascii_lowercase();
        let memory = |word: &str| {
            parse_memory(word).ok_or_else(|| format!("Error in hard, soft or soft_seconds setting in buffer limit configuration: {word:?} is not a memory value"))
        };
        let (hard, soft) = (memory(group[1])?, memory(group[2])?);
        let seconds: u64 = group[3]
            .parse()
            .map_err(|_| format!("Error in hard, soft or soft_seconds setting in buffer limit configuration: {:?} is not a number of seconds", group[3]))?;
        match class.as_str() {
            "pubsub" => {
                limits = OutputLimits {
                    hard_bytes: hard,
                    soft_bytes: soft,
                    soft_period: std::time::Duration::from_secs(seconds),
                };
            }
            "normal" | "slave" | "replica" => {
                return Err(format!(
                    "Quiver sets only the pubsub class at run time; normal clients are bounded by resp.max_output_buffer in the configuration file, and there are no replicas (got class {class:?})"
                ));
            }
            _ => {
                return Err(format!(
                    "Invalid client class specified in buffer limit configuration: {class:?}"
                ));
            }
        }
    }
    Ok(limits)
}

/// Redis memory values: bytes, or a number with k, kb, m, mb, g, gb (any case).
fn parse_memory(text: &str) -> Option<u64> {
    let lower = text.trim().to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let number: u64 = digits.parse().ok()?;
    let multiplier = match unit {
        "" | "b" => 1,
        "k" => 1_000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(multiplier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values_as_redis_reads_them() {
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("1kb"), Some(1024));
        assert_eq!(parse_memory("1k"), Some(1000));
        assert_eq!(parse_memory("2MB"), Some(2 << 20));
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
        assert_eq!(parse_memory("lots"), None);
        assert_eq!(parse_memory("-1"), None);
    }
}
