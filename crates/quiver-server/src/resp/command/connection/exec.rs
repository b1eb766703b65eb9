//! Running connection commands: PING ECHO HELLO AUTH SELECT QUIT RESET CLIENT.

use bytes::{Bytes, BytesMut};
use quiver_resp::encode as write;
use quiver_resp::{CommandError, Protocol, Reply};

use crate::resp::clients::ClientHandle;
use crate::resp::command::ConnectionCommand;
use crate::resp::command::connection::{ClientCommand, ClientKill, ClientType, Hello};
use crate::resp::command::exec::{container_help, error};
use crate::resp::connection::{Connection, Flow};
use crate::resp::info;

/// Runs a connection command.
pub(in crate::resp) fn execute(
    conn: &mut Connection,
    command: ConnectionCommand,
    out: &mut BytesMut,
) -> Flow {
    let protocol = conn.session.protocol;
    match command {
        // A RESP2 subscriber gets PING's answer as a message-shaped array, as in Redis.
        ConnectionCommand::Ping { message }
            if conn.session.subscribed() && protocol == Protocol::Resp2 =>
        {
            write::write_array_len(out, 2);
            write::write_bulk(out, b"pong");
            write::write_bulk(out, message.as_deref().unwrap_or_default());
        }
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
                if of_type(&client, client_type)
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
        ClientCommand::Help => container_help("client", protocol, out),
    }
}

/// Whether `client` is of `wanted` type (any with `None`): `pubsub` while it holds a
/// subscription, `normal` otherwise (Quiver has no replicas or masters).
fn of_type(client: &ClientHandle, wanted: Option<ClientType>) -> bool {
    let subscriber = client.view().is_subscriber();
    match wanted {
        None => true,
        Some(ClientType::Normal) => !subscriber,
        Some(ClientType::PubSub) => subscriber,
        Some(ClientType::Replica | ClientType::Master) => false,
    }
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
            && of_type(&client, filter.client_type)
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
