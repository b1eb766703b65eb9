//! Commands that act on the connection or the server rather than on keys:
//! PING ECHO HELLO AUTH SELECT QUIT RESET CLIENT, INFO CONFIG COMMAND TIME.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::EvictionPolicy;
use quiver_resp::command::ConnectionCommand;
use quiver_resp::command::connection::{ClientCommand, ClientKill, ClientType, Hello};
use quiver_resp::command::server::{ConfigCommand, ServerCommand};
use quiver_resp::encode as write;
use quiver_resp::table::command_reply;
use quiver_resp::{CommandError, Protocol, Reply};

use super::connection::{Connection, Flow};
use super::exec::SessionCommand;
use super::{info, transaction};

/// Runs a transaction, connection or server command.
pub(super) fn execute(conn: &mut Connection, command: SessionCommand, out: &mut BytesMut) -> Flow {
    match command {
        SessionCommand::Transaction(command) => transaction::execute(conn, command, out),
        SessionCommand::Connection(command) => connection(conn, command, out),
        SessionCommand::Server(command) => {
            server(conn, command, out);
            Flow::Continue
        }
    }
}

fn error(out: &mut BytesMut, error: &CommandError) {
    write::write_error(out, error.to_string().as_bytes());
}

fn connection(conn: &mut Connection, command: ConnectionCommand, out: &mut BytesMut) -> Flow {
    let protocol = conn.session.protocol;
    match command {
        ConnectionCommand::Ping { message: None } => write::write_simple(out, b"PONG"),
        ConnectionCommand::Ping {
            message: Some(message),
        }
        | ConnectionCommand::Echo { message } => {
            write::write_bulk(out, &message);
        }
        ConnectionCommand::Hello(hello) => hello_command(conn, hello, out),
        ConnectionCommand::Auth { username, password } => {
            match authenticate(conn, username.as_deref(), &password) {
                Ok(()) => write::write_simple(out, b"OK"),
                Err(err) => error(out, &err),
            }
        }
        ConnectionCommand::Select { db } => match conn.shared.cache.select(db.into()) {
            Ok(db) => {
                conn.session.db = db;
                write::write_simple(out, b"OK");
            }
            Err(_) => error(out, &CommandError::DbIndexOutOfRange),
        },
        ConnectionCommand::Quit => {
            write::write_simple(out, b"OK");
            return Flow::Close;
        }
        ConnectionCommand::Reset => {
            let password_required = conn.shared.runtime().requirepass.is_some();
            for watched in conn.session.watched.drain(..) {
                conn.shared.cache.unwatch(&watched);
            }
            conn.session.reset(password_required);
            set_limits(conn);
            write::write_simple(out, b"RESET");
        }
        ConnectionCommand::Client(command) => client(conn, command, out, protocol),
    }
    Flow::Continue
}

/// Checks credentials for the default user, the only user Quiver has.
fn authenticate(
    conn: &mut Connection,
    username: Option<&[u8]>,
    password: &[u8],
) -> Result<(), CommandError> {
    let required = conn.shared.runtime().requirepass;
    let Some(required) = required else {
        // Redis accepts any password for `AUTH default x` when none is set,
        // but refuses the one-argument form with its own message.
        return match username {
            None => Err(CommandError::AuthNotConfigured),
            Some(user) if user == b"default" => Ok(()),
            Some(_) => Err(CommandError::WrongPass),
        };
    };
    if username.is_some_and(|user| user != b"default") || password != required.as_ref() {
        return Err(CommandError::WrongPass);
    }
    conn.session.authenticated = true;
    set_limits(conn);
    Ok(())
}

/// Applies the decoder limits that match the session's authentication.
fn set_limits(conn: &mut Connection) {
    let limits = conn.shared.settings.limits;
    conn.decoder.set_limits(if conn.session.authenticated {
        limits
    } else {
        limits.unauthenticated()
    });
}

fn hello_command(conn: &mut Connection, hello: Hello, out: &mut BytesMut) {
    let protocol = match hello.protover {
        None => conn.session.protocol,
        Some(version) => match Protocol::from_version(version) {
            Some(protocol) => protocol,
            None => return error(out, &CommandError::NoProto),
        },
    };
    if let Some((user, pass)) = &hello.auth
        && let Err(err) = authenticate(conn, Some(user), pass)
    {
        return error(out, &err);
    }
    if !conn.session.authenticated {
        return error(out, &CommandError::NoAuth);
    }
    if let Some(name) = hello.setname {
        conn.session.name = (!name.is_empty()).then_some(name);
    }
    conn.session.protocol = protocol;
    let reply = Hello::reply(info::REDIS_VERSION, protocol, conn.session.id);
    reply.encode(protocol, out);
}

fn client(conn: &mut Connection, command: ClientCommand, out: &mut BytesMut, protocol: Protocol) {
    match command {
        ClientCommand::Id => {
            write::write_integer(out, i64::try_from(conn.session.id).unwrap_or(i64::MAX))
        }
        ClientCommand::SetName { name } => {
            conn.session.name = (!name.is_empty()).then_some(name);
            write::write_simple(out, b"OK");
        }
        ClientCommand::GetName => match &conn.session.name {
            Some(name) => write::write_bulk(out, name),
            None => write::write_null(out, protocol),
        },
        ClientCommand::List { client_type, ids } => {
            conn.handle.update(&conn.session);
            let mut text = String::new();
            for client in conn.shared.clients.all() {
                let type_ok = matches!(client_type, None | Some(ClientType::Normal));
                if type_ok
                    && (ids.is_empty()
                        || ids
                            .iter()
                            .any(|id| u64::try_from(*id).is_ok_and(|id| id == client.id)))
                {
                    text.push_str(&client.line());
                    text.push('\n');
                }
            }
            Reply::Verbatim {
                format: *b"txt",
                text: Bytes::from(text),
            }
            .encode(protocol, out);
        }
        ClientCommand::Info => {
            conn.handle.update(&conn.session);
            let text = format!("{}\n", conn.handle.line());
            Reply::Verbatim {
                format: *b"txt",
                text: Bytes::from(text),
            }
            .encode(protocol, out);
        }
        ClientCommand::Kill(filter) => kill(conn, &filter, out),
        ClientCommand::Help => help("client", protocol, out),
    }
}

/// `CLIENT HELP`, `CONFIG HELP`: the lines the command table holds.
fn help(container: &str, protocol: Protocol, out: &mut BytesMut) {
    let reply =
        quiver_resp::table::lookup(container.as_bytes()).and_then(quiver_resp::table::help_reply);
    reply
        .expect("containers with a HELP subcommand have help lines")
        .encode(protocol, out);
}

fn kill(conn: &mut Connection, filter: &ClientKill, out: &mut BytesMut) {
    let mut killed = 0;
    for client in conn.shared.clients.all() {
        let is_me = client.id == conn.session.id;
        let matches = filter.id.is_none_or(|id| id == client.id)
            && filter
                .addr
                .as_ref()
                .is_none_or(|addr| addr.as_ref() == client.peer.to_string().as_bytes())
            && filter
                .laddr
                .as_ref()
                .is_none_or(|addr| addr.as_ref() == client.local.to_string().as_bytes())
            && filter
                .user
                .as_ref()
                .is_none_or(|user| user.as_ref() == b"default")
            && matches!(filter.client_type, None | Some(ClientType::Normal))
            && !(is_me && filter.skip_me);
        if matches {
            client.kill.notify_one();
            killed += 1;
        }
    }
    if filter.legacy {
        if killed == 0 {
            write::write_error(out, b"ERR No such client");
        } else {
            write::write_simple(out, b"OK");
        }
    } else {
        write::write_integer(out, killed);
    }
}

fn server(conn: &mut Connection, command: ServerCommand, out: &mut BytesMut) {
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
        ServerCommand::Time => {
            let micros = crate::clock::unix_micros();
            write::write_array_len(out, 2);
            write::write_bulk(out, (micros / 1_000_000).to_string().as_bytes());
            write::write_bulk(out, (micros % 1_000_000).to_string().as_bytes());
        }
        ServerCommand::Config(command) => config(conn, command, out),
    }
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
        ("port", conn.shared.listen_addr.port().to_string()),
        ("bind", conn.shared.listen_addr.ip().to_string()),
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
        ConfigCommand::Help => help("config", protocol, out),
    }
}

/// Applies `CONFIG SET` pairs all or nothing, with Redis's error texts.
fn config_set(conn: &mut Connection, pairs: &[(Bytes, Bytes)]) -> Result<(), String> {
    enum Change {
        MaxMemory(u64),
        Policy(EvictionPolicy),
        RequirePass(Option<Bytes>),
        ProtectedMode(bool),
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
