//! Running connection commands: PING ECHO HELLO AUTH SELECT QUIT RESET CLIENT.

use bytes::{Bytes, BytesMut};
use quiver_resp::encode as write;
use quiver_resp::{CommandError, Protocol, Reply};

use crate::resp::clients::ClientHandle;
use crate::resp::command::ConnectionCommand;
use crate::resp::command::connection::{
    ClientCommand, ClientKill, ClientTracking, ClientType, Hello, ReplySwitch,
};
use crate::resp::command::exec::{container_help, error};
use crate::resp::command::is;
use crate::resp::connection::{Connection, Flow};
use crate::resp::info;
use crate::resp::session::Tracking;
use quiver_core::pubsub::TrackingMode;
use quiver_resp::num::parse_i64;

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
        ConnectionCommand::Hello(hello) => hello_command(conn, *hello, out),
        ConnectionCommand::Auth {
            username,
            password,
            command,
        } => match authenticate(conn, &command, username.as_deref(), &password) {
            Ok(()) => write::write_simple(out, b"OK"),
            Err(err) => error(out, &err),
        },
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
            for watched in conn.session.watched.drain(..) {
                conn.shared.cache.unwatch(&watched);
            }
            if conn.session.monitor.is_some() {
                conn.shared.monitors.remove(conn.session.id);
            }
            conn.session.reset(&conn.shared.acl);
            conn.handle.update(&conn.session);
            set_limits(conn);
            write::write_simple(out, b"RESET");
        }
        ConnectionCommand::Client(command) => return client(conn, command, out, protocol),
    }
    Flow::Continue
}

/// Logs the client in as `username` (`default` without one) if `password` is one of
/// its passwords (any, for a `nopass` user); a failure is logged (ACL LOG) under
/// `command`, the name of the command as sent, as Redis logs it.
fn authenticate(
    conn: &mut Connection,
    command: &[u8],
    username: Option<&[u8]>,
    password: &[u8],
) -> Result<(), CommandError> {
    let acl = &conn.shared.acl;
    // Redis refuses the one-argument form with its own message when `default` needs no
    // password.
    if username.is_none() && acl.default_user().nopass {
        return Err(CommandError::AuthNotConfigured);
    }
    let name = username.unwrap_or(b"default");
    let Some(user) = acl.authenticate(name, password) else {
        // The client as it is now (its command is this one).
        conn.handle.update(&conn.session);
        let refusal = crate::resp::acl::log::Refusal {
            reason: "auth",
            context: if conn.session.in_exec {
                "multi"
            } else {
                "toplevel"
            },
            object: String::from_utf8_lossy(command).into_owned(),
            username: String::from_utf8_lossy(name).into_owned(),
            client_info: conn.handle.line(),
        };
        conn.shared.log_refusal(refusal);
        return Err(CommandError::WrongPass);
    };
    conn.session.user = user;
    conn.session.acl_generation = acl.generation();
    conn.session.authenticated = true;
    conn.handle.update(&conn.session);
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
        && let Err(err) = authenticate(conn, &hello.command, Some(user), pass)
    {
        return error(out, &err);
    }
    if !conn.session.authenticated {
        let refused = CommandError::Other {
            code: quiver_resp::error::ErrorCode::NoAuth,
            message: "HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time".into(),
        };
        return error(out, &refused);
    }
    if let Some(name) = hello.setname {
        conn.session.name = (!name.is_empty()).then_some(name);
    }
    conn.session.protocol = protocol;
    let reply = Hello::reply(info::REDIS_VERSION, protocol, conn.session.id);
    reply.encode(protocol, out);
}

fn client(
    conn: &mut Connection,
    command: ClientCommand,
    out: &mut BytesMut,
    protocol: Protocol,
) -> Flow {
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
            // With ids, a line per id given, in their order (repeats too), as Redis.
            let clients = if ids.is_empty() {
                conn.shared.clients.all()
            } else {
                let known = |id: &i64| {
                    u64::try_from(*id)
                        .ok()
                        .and_then(|id| conn.shared.clients.get(id))
                };
                ids.iter().filter_map(known).collect()
            };
            let mut text = String::new();
            for client in clients.iter().filter(|client| of_type(client, client_type)) {
                text.push_str(&client.line());
                text.push('\n');
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
        // A client that killed itself reads nothing more; its reply goes out first.
        ClientCommand::Kill(filter) => {
            if kill(conn, &filter, out) {
                return Flow::Close;
            }
        }
        ClientCommand::Pause { timeout_ms, all } => {
            // Redis's end of the pause is the time in milliseconds plus the timeout: one
            // that passes the largest time it can hold has already passed (no pause),
            // rather than one no command could ever end.
            let overflows = i64::try_from(crate::clock::unix_ms())
                .ok()
                .and_then(|now| now.checked_add(i64::try_from(timeout_ms).ok()?))
                .is_none();
            let until = std::time::Instant::now()
                .checked_add(std::time::Duration::from_millis(timeout_ms))
                .filter(|_| !overflows);
            if let Some(until) = until {
                conn.shared.pause.pause(until, all);
            }
            write::write_simple(out, b"OK");
        }
        ClientCommand::Unpause => {
            conn.shared.pause.unpause();
            write::write_simple(out, b"OK");
        }
        ClientCommand::Unblock { id, error } => {
            let unblocked = u64::try_from(id)
                .ok()
                .and_then(|id| conn.shared.clients.get(id))
                .is_some_and(|client| client.unblock(error));
            write::write_integer(out, i64::from(unblocked));
        }
        ClientCommand::Tracking(tracking) => match track(conn, tracking) {
            Ok(()) => write::write_simple(out, b"OK"),
            Err(message) => write::write_error(out, message.as_bytes()),
        },
        ClientCommand::Caching { yes } => match caching(conn, yes) {
            Ok(()) => write::write_simple(out, b"OK"),
            Err(message) => write::write_error(out, message.as_bytes()),
        },
        ClientCommand::GetRedir => {
            let redirect = conn.session.tracking.as_ref().map_or(-1, redirect_id);
            write::write_integer(out, redirect);
        }
        ClientCommand::TrackingInfo => tracking_info(conn, protocol, out),
        ClientCommand::NoEvict(on) => {
            conn.session.no_evict = on;
            conn.handle.update(&conn.session);
            write::write_simple(out, b"OK");
        }
        // OFF and SKIP are not answered (the connection leaves out the replies).
        ClientCommand::Reply(switch) => {
            conn.session.replies.switch(switch);
            if switch == ReplySwitch::On {
                write::write_simple(out, b"OK");
            }
        }
        ClientCommand::Help => container_help("client", protocol, out),
    }
    Flow::Continue
}

/// `CLIENT TRACKING`, checked in Redis's order: the options left to right (a REDIRECT
/// to a client that does not exist first), then ON or OFF, then the mode's rules.
fn track(conn: &mut Connection, given: ClientTracking) -> Result<(), String> {
    let mut redirect = None;
    for raw in &given.redirects {
        if redirect.is_some() {
            return Err("ERR A client can only redirect to a single other client".into());
        }
        let id = parse_i64(raw).ok_or_else(|| CommandError::NotInteger.to_string())?;
        let target = u64::try_from(id)
            .ok()
            .and_then(|id| conn.shared.clients.get(id))
            .ok_or("ERR The client ID you want redirect to does not exist")?;
        redirect = Some(target);
    }
    if given.bad_option {
        return Err(CommandError::Syntax.to_string());
    }
    if is(&given.switch, "off") {
        if let Some(subscriber) = &conn.session.subscriber {
            subscriber.untrack();
        }
        conn.session.tracking = None;
        return Ok(());
    }
    if !is(&given.switch, "on") {
        return Err(CommandError::Syntax.to_string());
    }
    let mode = TrackingMode {
        bcast: given.bcast,
        prefixes: given.prefixes,
        optin: given.optin,
        optout: given.optout,
        noloop: given.noloop,
    };
    let now = conn.session.tracking.as_ref().map(|t| &t.mode);
    if !mode.bcast && !mode.prefixes.is_empty() {
        return Err("ERR PREFIX option requires BCAST mode to be enabled".into());
    }
    if now.is_some_and(|now| now.bcast != mode.bcast) {
        return Err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.".into());
    }
    if mode.bcast && (mode.optin || mode.optout) {
        return Err("ERR OPTIN and OPTOUT are not compatible with BCAST".into());
    }
    if mode.optin && mode.optout {
        return Err("ERR You can't specify both OPTIN mode and OPTOUT mode".into());
    }
    if now.is_some_and(|now| (mode.optin && now.optout) || (mode.optout && now.optin)) {
        return Err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.".into());
    }
    let redirect_to = redirect.as_ref().map_or(0, |target| target.id);
    let target = redirect.map(|target| {
        // A client that never subscribed starts reading its inbox now.
        target.wake_inbox();
        (target.id, target.inbox.clone())
    });
    conn.subscriber().track(mode.clone(), target)?;
    conn.session.tracking = Some(Tracking {
        mode,
        redirect: redirect_to,
        caching: false,
    });
    Ok(())
}

/// `CLIENT CACHING YES|NO`: applies to the next command.
fn caching(conn: &mut Connection, yes: Option<bool>) -> Result<(), String> {
    let Some(tracking) = &mut conn.session.tracking else {
        return Err("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled".into());
    };
    match yes {
        Some(true) if tracking.mode.optin => tracking.caching = true,
        Some(true) => {
            return Err(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
                    .into(),
            );
        }
        Some(false) if tracking.mode.optout => tracking.caching = true,
        Some(false) => {
            return Err(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
                    .into(),
            );
        }
        None => return Err(CommandError::Syntax.to_string()),
    }
    Ok(())
}

fn redirect_id(tracking: &Tracking) -> i64 {
    i64::try_from(tracking.redirect).unwrap_or(i64::MAX)
}

/// `CLIENT TRACKINGINFO`: flags, redirect and prefixes, as Redis shapes them.
fn tracking_info(conn: &Connection, protocol: Protocol, out: &mut BytesMut) {
    let tracking = conn.session.tracking.as_ref();
    let core = conn
        .session
        .subscriber
        .as_ref()
        .and_then(|s| s.tracking_info());
    let mut flags = vec![Reply::bulk_static(if tracking.is_some() {
        "on"
    } else {
        "off"
    })];
    if let Some(tracking) = tracking {
        let mode = &tracking.mode;
        let caching = tracking.caching;
        let named = [
            (mode.bcast, "bcast"),
            (mode.optin, "optin"),
            (mode.optin && caching, "caching-yes"),
            (mode.optout, "optout"),
            (mode.optout && caching, "caching-no"),
            (mode.noloop, "noloop"),
            (
                core.as_ref().is_some_and(|(_, broken)| *broken),
                "broken_redirect",
            ),
        ];
        flags.extend(
            named
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, name)| Reply::bulk_static(name)),
        );
    }
    let prefixes = core
        .map(|(prefixes, _)| prefixes.iter().map(Reply::bulk).collect())
        .unwrap_or_default();
    Reply::Map(vec![
        (Reply::bulk_static("flags"), Reply::Set(flags)),
        (
            Reply::bulk_static("redirect"),
            Reply::Integer(tracking.map_or(-1, redirect_id)),
        ),
        (Reply::bulk_static("prefixes"), Reply::Array(prefixes)),
    ])
    .encode(protocol, out);
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

/// CLIENT KILL; true when it closed the caller's own connection.
fn kill(conn: &mut Connection, filter: &ClientKill, out: &mut BytesMut) -> bool {
    if let Some(user) = &filter.user
        && conn.shared.acl.user(user).is_none()
    {
        let message = format!("ERR No such user '{}'", String::from_utf8_lossy(user));
        write::write_error(out, message.as_bytes());
        return false;
    }
    let (mut killed, mut me) = (0, false);
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
                .is_none_or(|user| user.as_ref() == client.view().user.as_bytes())
            && of_type(&client, filter.client_type)
            && !(is_me && filter.skip_me);
        if matches {
            client.kill();
            killed += 1;
            me |= is_me;
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
    me
}
