//! Running server commands: INFO CONFIG COMMAND TIME.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::persist::SaveError;
use quiver_resp::encode as write;
use quiver_resp::{Protocol, Reply};

use crate::clock::unix_ms;
use crate::resp::RespShared;
use crate::resp::command::exec::container_help;
use crate::resp::command::server::{DebugCommand, ServerCommand};
use crate::resp::connection::{Connection, Flow};
use crate::resp::info;
use crate::resp::table::command_reply;

/// TIME's reply: seconds and microseconds.
pub(in crate::resp) fn write_time(out: &mut BytesMut) {
    let micros = crate::clock::unix_micros();
    write::write_array_len(out, 2);
    write::write_bulk(out, (micros / 1_000_000).to_string().as_bytes());
    write::write_bulk(out, (micros % 1_000_000).to_string().as_bytes());
}

/// Runs a server command that needs only the server's shared state (also from a
/// script); any other comes back.
pub(in crate::resp) fn execute_shared(
    shared: &RespShared,
    command: ServerCommand,
    protocol: Protocol,
    out: &mut BytesMut,
) -> Result<(), ServerCommand> {
    match command {
        ServerCommand::Command(command) => command_reply(&command).encode(protocol, out),
        ServerCommand::Time => write_time(out),
        ServerCommand::ClusterDisabled => {
            write::write_error(out, b"ERR This instance has cluster support disabled");
        }
        ServerCommand::ModuleList => write::write_array_len(out, 0),
        ServerCommand::ModuleHelp => container_help("module", protocol, out),
        ServerCommand::SlowLogGet { count } => {
            let entries = shared.slowlog.newest(count);
            write::write_array_len(out, entries.len());
            for entry in entries {
                write::write_array_len(out, 6);
                write::write_integer(out, i64::try_from(entry.id).unwrap_or(i64::MAX));
                write::write_integer(out, i64::try_from(entry.time_s).unwrap_or(i64::MAX));
                write::write_integer(out, i64::try_from(entry.duration_us).unwrap_or(i64::MAX));
                write::write_array_len(out, entry.args.len());
                for arg in &entry.args {
                    write::write_bulk(out, arg);
                }
                write::write_bulk(out, entry.peer.as_bytes());
                write::write_bulk(out, &entry.name);
            }
        }
        ServerCommand::SlowLogLen => {
            let len = shared.slowlog.entries();
            write::write_integer(out, i64::try_from(len).unwrap_or(i64::MAX));
        }
        ServerCommand::SlowLogReset => {
            shared.slowlog.reset();
            write::write_simple(out, b"OK");
        }
        ServerCommand::SlowLogHelp => container_help("slowlog", protocol, out),
        ServerCommand::Lolwut => {
            let text = format!("Quiver ver. {}\n", env!("CARGO_PKG_VERSION"));
            write::write_verbatim(out, protocol, b"txt", text.as_bytes());
        }
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
        ServerCommand::MemoryMallocStats => super::memory::malloc_stats(out),
        // Redis purges only jemalloc's dirty pages; built on the system allocator, as
        // Quiver is, it answers OK with nothing to do.
        ServerCommand::MemoryPurge => write::write_simple(out, b"OK"),
        ServerCommand::LastSave => {
            let last = shared.cache.last_save_s();
            write::write_integer(out, i64::try_from(last).unwrap_or(i64::MAX));
        }
        command => return Err(command),
    }
    Ok(())
}

/// Runs a server command.
pub(in crate::resp) fn execute(
    conn: &mut Connection,
    command: ServerCommand,
    out: &mut BytesMut,
) -> Flow {
    let protocol = conn.session.protocol;
    let command = match execute_shared(&conn.shared, command, protocol, out) {
        Ok(()) => return Flow::Continue,
        Err(command) => command,
    };
    match command {
        ServerCommand::Info { sections } => {
            let text = info::render(&conn.shared, &sections);
            Reply::Verbatim {
                format: *b"txt",
                text: Bytes::from(text),
            }
            .encode(protocol, out);
        }
        ServerCommand::Migrate(migrate) => {
            return crate::resp::command::keys::migrate::start(conn, *migrate, out);
        }
        ServerCommand::Config(command) => super::config::config(conn, command, out),
        ServerCommand::Debug(command) => debug(conn, command, out),
        ServerCommand::ModuleLoad { path } => module_load(conn, path, out),
        ServerCommand::Shutdown { abort: true, .. } => {
            write::write_error(out, b"ERR No shutdown in progress.")
        }
        ServerCommand::Save => match conn.shared.cache.save(unix_ms()) {
            Ok(_) => write::write_simple(out, b"OK"),
            Err(SaveError::InProgress) => {
                write::write_error(out, b"ERR Background save already in progress");
            }
            Err(error) => {
                tracing::error!(%error, "SAVE failed");
                write::write_error(out, b"ERR");
            }
        },
        ServerCommand::BgSave { schedule } => match conn.shared.cache.bgsave(unix_ms) {
            Ok(()) => write::write_simple(out, b"Background saving started"),
            Err(SaveError::InProgress) if schedule => {
                conn.shared.cache.schedule_bgsave();
                write::write_simple(out, b"Background saving scheduled");
            }
            Err(SaveError::InProgress) => {
                write::write_error(out, b"ERR Background save already in progress");
            }
            Err(error) => {
                tracing::error!(%error, "BGSAVE failed to start");
                write::write_error(out, b"ERR");
            }
        },
        ServerCommand::BgRewriteAof => match conn.shared.cache.bgrewriteaof(unix_ms) {
            Ok(()) => write::write_simple(out, b"Background append only file rewriting started"),
            Err(error) => write::write_error(out, format!("ERR {error}").as_bytes()),
        },
        ServerCommand::LatencyLatest => {
            let latest = conn.shared.latency.latest();
            Reply::Array(
                latest
                    .into_iter()
                    .map(|(name, time, ms, max)| {
                        Reply::Array(vec![
                            Reply::bulk(name),
                            Reply::Integer(i64::try_from(time).unwrap_or(i64::MAX)),
                            Reply::Integer(i64::try_from(ms).unwrap_or(i64::MAX)),
                            Reply::Integer(i64::try_from(max).unwrap_or(i64::MAX)),
                        ])
                    })
                    .collect(),
            )
            .encode(protocol, out);
        }
        ServerCommand::LatencyHistory { event } => {
            let samples = conn.shared.latency.history(&event);
            Reply::Array(
                samples
                    .into_iter()
                    .map(|(time, ms)| {
                        Reply::Array(vec![
                            Reply::Integer(i64::try_from(time).unwrap_or(i64::MAX)),
                            Reply::Integer(i64::try_from(ms).unwrap_or(i64::MAX)),
                        ])
                    })
                    .collect(),
            )
            .encode(protocol, out);
        }
        ServerCommand::LatencyReset { events } => {
            let reset = conn.shared.latency.reset(&events);
            write::write_integer(out, i64::try_from(reset).unwrap_or(i64::MAX));
        }
        ServerCommand::LatencyGraph { event } => {
            match conn.shared.latency.graph(&event, unix_ms() / 1000) {
                Ok(graph) => write::write_verbatim(out, protocol, b"txt", graph.as_bytes()),
                Err(message) => write::write_error(out, message.as_bytes()),
            }
        }
        ServerCommand::LatencyDoctor => {
            let report = conn.shared.latency.doctor();
            write::write_verbatim(out, protocol, b"txt", report.as_bytes());
        }
        ServerCommand::LatencyHistogram { commands } => {
            latency_histogram(conn, &commands).encode(protocol, out);
        }
        ServerCommand::LatencyHelp => container_help("latency", protocol, out),
        ServerCommand::Acl(command) => super::acl::execute(conn, command, out),
        // A client that monitors already gets no reply, as in Redis.
        ServerCommand::Monitor if conn.session.monitor.is_some() => {}
        ServerCommand::Monitor => {
            let limit = conn.shared.settings.max_output_buffer_bytes;
            conn.session.monitor = Some(conn.shared.monitors.add(conn.session.id, limit));
            conn.handle.update(&conn.session);
            write::write_simple(out, b"OK");
        }
        ServerCommand::MemoryStats => super::memory::stats(conn, out),
        ServerCommand::MemoryDoctor => super::memory::doctor(conn, out),
        // Answered by `execute_shared` above.
        ServerCommand::Command(_)
        | ServerCommand::Time
        | ServerCommand::ClusterDisabled
        | ServerCommand::ModuleList
        | ServerCommand::ModuleHelp
        | ServerCommand::SlowLogGet { .. }
        | ServerCommand::SlowLogLen
        | ServerCommand::SlowLogReset
        | ServerCommand::SlowLogHelp
        | ServerCommand::Lolwut
        | ServerCommand::Role
        | ServerCommand::ReplicaOf { .. }
        | ServerCommand::MemoryMallocStats
        | ServerCommand::MemoryPurge
        | ServerCommand::LastSave => {}
        ServerCommand::Shutdown { save, .. } => {
            // A script past busy-reply-threshold holds the keyspace, which a save would
            // wait for: only NOSAVE may stop the server then, as in Redis.
            if save != Some(false) && conn.shared.scripts.busy() {
                write::write_error(out, conn.shared.scripts.busy_error().as_bytes());
                return Flow::Continue;
            }
            // As Redis: SAVE always writes a snapshot first, NOSAVE never, and no option
            // writes one when `save` rules are set. A failed save keeps the server up.
            let rules = !conn.shared.cache.persistence().rules().is_empty();
            if save.unwrap_or(rules)
                && let Err(error) = conn.shared.cache.save(unix_ms())
            {
                tracing::error!(%error, "SHUTDOWN: the snapshot could not be written; the server keeps running");
                write::write_error(out, b"ERR Errors trying to SHUTDOWN. Check logs.");
                return Flow::Continue;
            }
            conn.shared.cache.persistence().decide_shutdown_save();
            tracing::info!(client = conn.session.id, peer = %conn.session.peer, "shutdown requested by a client (SHUTDOWN)");
            conn.shared.shut_down();
            return Flow::Close;
        }
    }
    Flow::Continue
}

/// `DEBUG PROTOCOL type`: Redis's test value of each RESP type (RESP2 gets each in its
/// RESP2 form; a push has none).
fn debug_protocol(kind: &[u8], protocol: quiver_resp::Protocol, out: &mut BytesMut) {
    use quiver_resp::Protocol;
    let text = String::from_utf8_lossy(kind).to_ascii_lowercase();
    let numbers = || (0..3).map(Reply::Integer).collect::<Vec<_>>();
    let reply = match text.as_str() {
        "string" => Reply::bulk_static("Hello World"),
        "integer" => Reply::Integer(12345),
        // Redis's test value 3.141, which is not meant as pi.
        "double" => Reply::Double(3141.0 / 1000.0),
        "bignum" => Reply::BigNumber(Bytes::from_static(b"1234567999999999999999999999999999999")),
        "null" => Reply::Null,
        "array" => Reply::Array(numbers()),
        "set" => Reply::Set(numbers()),
        "map" => Reply::Map(
            (0..3)
                .map(|i| (Reply::Integer(i), Reply::Boolean(i == 1)))
                .collect(),
        ),
        "attrib" => {
            if protocol == Protocol::Resp3 {
                out.extend_from_slice(b"|1\r\n");
                Reply::bulk_static("key-popularity").encode(protocol, out);
                Reply::Array(vec![Reply::bulk_static("key:123"), Reply::Integer(90)])
                    .encode(protocol, out);
            }
            Reply::bulk_static("Some real reply following the attribute")
        }
        "push" if protocol == Protocol::Resp2 => {
            return write::write_error(out, b"ERR RESP2 is not supported by this command");
        }
        "push" => {
            Reply::Push(vec![
                Reply::bulk_static("server-cpu-usage"),
                Reply::Integer(42),
            ])
            .encode(protocol, out);
            Reply::bulk_static("Some real reply following the push reply")
        }
        "verbatim" => Reply::Verbatim {
            format: *b"txt",
            text: Bytes::from_static(b"This is a verbatim\nstring"),
        },
        "true" => Reply::Boolean(true),
        "false" => Reply::Boolean(false),
        _ => {
            return write::write_error(
                out,
                b"ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
            );
        }
    };
    reply.encode(protocol, out);
}

/// MODULE LOAD, LOADEX and UNLOAD: refused as `enable-module-command` says (`no` by
/// default, as in Redis 7); where it allows them, Quiver answers as Redis does for a
/// module that cannot be loaded, or that is not loaded: it runs no Redis modules.
fn module_load(conn: &Connection, path: Option<Bytes>, out: &mut BytesMut) {
    if !allowed_by(conn, "enable-module-command") {
        return write::write_error(
            out,
            b"ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.",
        );
    }
    let Some(path) = path else {
        return write::write_error(
            out,
            b"ERR Error unloading module: no such module with that name",
        );
    };
    tracing::warn!(
        client = conn.session.id,
        path = %String::from_utf8_lossy(&path),
        "MODULE LOAD refused: Quiver does not load Redis modules"
    );
    write::write_error(
        out,
        b"ERR Error loading the extension. Please check the server logs.",
    );
}

/// Whether a protected command is allowed by its `enable-*-command` parameter: `yes`,
/// or `local` for a client on a loopback address.
fn allowed_by(conn: &Connection, param: &'static str) -> bool {
    match conn.shared.stored_params.get(param).as_str() {
        "yes" => true,
        "local" => conn.session.peer.ip().is_loopback(),
        _ => false,
    }
}

/// DEBUG, allowed as `enable-debug-command` says (`no` by default, as in Redis 7; set it
/// in `resp.redis_config`).
fn debug(conn: &mut Connection, command: DebugCommand, out: &mut BytesMut) {
    if !allowed_by(conn, "enable-debug-command") {
        write::write_error(
            out,
            b"ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.",
        );
        return;
    }
    match command {
        DebugCommand::Sleep(pause) => {
            std::thread::sleep(pause);
            write::write_simple(out, b"OK");
        }
        DebugCommand::SetActiveExpire(on) => {
            conn.shared.cache.set_active_expire(on);
            write::write_simple(out, b"OK");
        }
        DebugCommand::Reload { merge, flush, save } => debug_reload(conn, merge, flush, save, out),
        DebugCommand::Object(key) => debug_object(conn, &key, out),
        DebugCommand::Protocol(kind) => debug_protocol(&kind, conn.session.protocol, out),
        DebugCommand::Error(text) => {
            // Written as given, line breaks made spaces, as Redis writes it.
            let line: Vec<u8> = text
                .iter()
                .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
                .collect();
            out.extend_from_slice(b"-");
            out.extend_from_slice(&line);
            out.extend_from_slice(b"\r\n");
        }
        DebugCommand::Help => {
            let lines = [
                "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "RELOAD [option ...]",
                "    Save the RDB on disk and reload it back to memory. Options:",
                "    * MERGE: conflicting keys are loaded from the RDB.",
                "    * NOFLUSH: the existing keys are not removed before the load; without",
                "      MERGE a conflicting key fails the load.",
                "    * NOSAVE: the keys are loaded from the existing RDB file.",
                "OBJECT <key>",
                "    Show low level info about the `key` and associated value.",
                "ERROR <string>",
                "    Return a Redis protocol error with <string> as message. Useful for clients",
                "    unit tests to simulate Redis errors.",
                "PROTOCOL <type>",
                "    Reply with a test value of the specified type. <type> can be: string,",
                "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
                "    true, false.",
                "SET-ACTIVE-EXPIRE <0|1>",
                "    Setting it to 0 disables expiring keys in background when they are not",
                "    accessed (otherwise the server does it).",
                "SLEEP <seconds>",
                "    Stop the server for <seconds>. Decimals allowed.",
                "HELP",
                "    Print this help.",
            ];
            Reply::Array(lines.iter().map(|line| Reply::simple(line)).collect())
                .encode(conn.session.protocol, out);
        }
        DebugCommand::Unsupported(name) => {
            let message = format!(
                "ERR DEBUG {} is not supported by this server; see DEBUG HELP",
                String::from_utf8_lossy(&name).to_ascii_uppercase()
            );
            write::write_error(out, message.as_bytes());
        }
        DebugCommand::Unknown(name) => {
            let message = format!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
                String::from_utf8_lossy(&name)
            );
            write::write_error(out, message.as_bytes());
        }
    }
}

/// DEBUG OBJECT: Redis's status line about a key's value.
fn debug_object(conn: &Connection, key: &[u8], out: &mut BytesMut) {
    let cache = &conn.shared.cache;
    let found = cache
        .db(conn.session.db)
        .expect("the session's database exists")
        .debug_object(key, unix_ms());
    cache.after_command();
    let Some(o) = found else {
        write::write_error(out, b"ERR no such key");
        return;
    };
    let mut line = format!(
        "Value at:0x{:x} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        o.address, o.refcount, o.encoding, o.serialized_len, o.lru, o.idle_s
    );
    if let Some(ql) = o.quicklist {
        // `list-max-listpack-size -2` and `list-compress-depth 0`, as Quiver keeps lists.
        let average = ql.elements as f64 / ql.nodes.max(1) as f64;
        line.push_str(&format!(
            " ql_nodes:{} ql_avg_node:{average:.2} ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:{}",
            ql.nodes, ql.bytes
        ));
    }
    write::write_simple(out, line.as_bytes());
}

/// LATENCY HISTOGRAM: for each command named (every command called, when none is),
/// its calls and their cumulative count at each bucket's bound in microseconds.
fn latency_histogram(conn: &Connection, commands: &[Bytes]) -> Reply {
    // A container's name takes its subcommands too (`client` names `client|list`).
    let wanted = |name: &str| {
        let container = name.split('|').next().unwrap_or(name);
        commands.is_empty()
            || commands.iter().any(|c| {
                c.eq_ignore_ascii_case(name.as_bytes())
                    || c.eq_ignore_ascii_case(container.as_bytes())
            })
    };
    let entries = conn
        .shared
        .stats
        .all()
        .filter(|(name, _)| wanted(name))
        .filter_map(|(name, slot)| {
            let counts = slot.latency_counts();
            let calls: u64 = counts.iter().sum();
            if calls == 0 {
                return None;
            }
            let buckets = crate::resp::latency::histogram::powers_of_two(&counts)
                .into_iter()
                .map(|(bound, cumulative)| {
                    (
                        Reply::Integer(bound as i64),
                        Reply::Integer(cumulative as i64),
                    )
                })
                .collect();
            let detail = Reply::Map(vec![
                (Reply::bulk("calls"), Reply::Integer(calls as i64)),
                (Reply::bulk("histogram_usec"), Reply::Map(buckets)),
            ]);
            Some((Reply::bulk(name), detail))
        })
        .collect();
    Reply::Map(entries)
}

/// DEBUG RELOAD: saves the snapshot (unless NOSAVE), removes every key (unless NOFLUSH),
/// and loads the snapshot file back, its keys replacing existing ones with MERGE.
fn debug_reload(conn: &Connection, merge: bool, flush: bool, save: bool, out: &mut BytesMut) {
    let cache = &conn.shared.cache;
    if save && let Err(error) = cache.save(unix_ms()) {
        tracing::error!(%error, "DEBUG RELOAD: the snapshot could not be saved");
        write::write_error(out, b"ERR");
        return;
    }
    if flush {
        let garbage = cache.db(0).expect("database 0 exists").flushall();
        cache.free_later(garbage);
        cache.after_command();
    }
    let loaded = cache.reload_snapshot(merge, unix_ms());
    cache.after_command();
    match loaded {
        Ok(_) => {
            tracing::info!("keyspace reloaded by DEBUG RELOAD");
            write::write_simple(out, b"OK");
        }
        Err(error) => {
            tracing::error!(%error, "DEBUG RELOAD: the snapshot could not be loaded");
            write::write_error(
                out,
                b"ERR Error trying to load the RDB dump, check server logs.",
            );
        }
    }
}
