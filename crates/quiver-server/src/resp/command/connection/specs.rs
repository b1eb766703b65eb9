//! The connection commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{
    ADMIN, ALLOW_BUSY, FAST, LOADING, NO_AUTH, NOSCRIPT, STALE, SUBSCRIBED_OK,
};
use crate::resp::table::{CommandSpec, Group, Parser};

const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Connection,
        name,
        arity,
        flags,
        (0, 0, 0),
        since,
        summary,
        parser,
    )
}

const ANYTIME: u32 = NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY;
const CLIENT_FLAGS: u32 = NOSCRIPT | LOADING | STALE;

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "ping",
        -1,
        FAST | SUBSCRIBED_OK,
        "1.0.0",
        "Returns the server's liveliness response.",
        |a| {
            if a.remaining() > 1 {
                return Err(a.arity_error());
            }
            let message = if a.remaining() == 1 {
                Some(a.next()?)
            } else {
                None
            };
            wrap(ConnectionCommand::Ping { message })
        },
    )
    .with_syntax("[message]")
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    c(
        "echo",
        2,
        LOADING | STALE | FAST,
        "1.0.0",
        "Returns the given string.",
        |a| wrap(ConnectionCommand::Echo { message: a.next()? }),
    )
    .with_syntax("message"),
    c(
        "hello",
        -1,
        ANYTIME,
        "6.0.0",
        "Handshakes with the Redis server.",
        parse_hello,
    )
    .with_syntax("[protover [AUTH username password] [SETNAME clientname]]"),
    c(
        "auth",
        -2,
        ANYTIME,
        "1.0.0",
        "Authenticates the connection.",
        |a| {
            let (username, password) = match a.remaining() {
                1 => (None, a.next()?),
                2 => (Some(a.next()?), a.next()?),
                _ => return Err(CommandError::Syntax),
            };
            let command = Bytes::copy_from_slice(a.name_as_sent());
            wrap(ConnectionCommand::Auth {
                username,
                password,
                command,
            })
        },
    )
    .with_syntax("[username] password"),
    c(
        "select",
        2,
        LOADING | STALE | FAST,
        "1.0.0",
        "Changes the selected database.",
        |a| {
            let db = a.i64()?;
            let db = i32::try_from(db).map_err(|_| CommandError::OutOfRangeBetween {
                min: i64::from(i32::MIN),
                max: i64::from(i32::MAX),
            })?;
            wrap(ConnectionCommand::Select { db })
        },
    )
    .with_syntax("index"),
    c(
        "quit",
        -1,
        ANYTIME | SUBSCRIBED_OK,
        "1.0.0",
        "Closes the connection.",
        |_| wrap(ConnectionCommand::Quit),
    ),
    c(
        "reset",
        1,
        ANYTIME | SUBSCRIBED_OK,
        "6.2.0",
        "Resets the connection.",
        |_| wrap(ConnectionCommand::Reset),
    ),
    c(
        "client",
        -2,
        0,
        "2.4.0",
        "A container for client connection commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(CLIENT_SUBCOMMANDS),
];

const CLIENT_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "client|id",
        2,
        CLIENT_FLAGS,
        "5.0.0",
        "Returns the unique client ID of the connection.",
        |_| client(ClientCommand::Id),
    ),
    c(
        "client|setname",
        3,
        CLIENT_FLAGS,
        "2.6.9",
        "Sets the connection name.",
        |a| {
            let name = a.next()?;
            validate_client_name(&name)?;
            client(ClientCommand::SetName { name })
        },
    )
    .with_syntax("connection-name"),
    c(
        "client|getname",
        2,
        CLIENT_FLAGS,
        "2.6.9",
        "Returns the name of the connection.",
        |_| client(ClientCommand::GetName),
    ),
    c(
        "client|list",
        -2,
        ADMIN | CLIENT_FLAGS,
        "2.4.0",
        "Lists open connections.",
        parse_client_list,
    )
    .with_syntax("[TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID client-id...]")
    .with_tips(&["nondeterministic_output"]),
    c(
        "client|kill",
        -3,
        ADMIN | CLIENT_FLAGS,
        "2.4.0",
        "Terminates open connections.",
        parse_client_kill,
    )
    .with_syntax("(ip:port|[ID client-id] [TYPE (NORMAL|MASTER|SLAVE|REPLICA|PUBSUB)] [USER username] [ADDR ip:port] [LADDR ip:port] [SKIPME (YES|NO)])"),
    c(
        "client|info",
        2,
        CLIENT_FLAGS,
        "6.2.0",
        "Returns information about the connection.",
        |_| client(ClientCommand::Info),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "client|tracking",
        -3,
        CLIENT_FLAGS,
        "6.0.0",
        "Controls server-assisted client-side caching for the connection.",
        parse_client_tracking,
    )
    .with_syntax("(ON|OFF) [REDIRECT client-id] [PREFIX prefix...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]"),
    c(
        "client|caching",
        3,
        CLIENT_FLAGS,
        "6.0.0",
        "Instructs the server whether to track the keys in the next request.",
        |a| {
            let answer = a.next_slice()?;
            let yes = if is(answer, "yes") {
                Some(true)
            } else if is(answer, "no") {
                Some(false)
            } else {
                None
            };
            client(ClientCommand::Caching { yes })
        },
    )
    .with_syntax("(YES|NO)"),
    c(
        "client|getredir",
        2,
        CLIENT_FLAGS,
        "6.0.0",
        "Returns the client ID to which the connection's tracking notifications are redirected.",
        |_| client(ClientCommand::GetRedir),
    ),
    c(
        "client|no-evict",
        3,
        ADMIN | CLIENT_FLAGS,
        "7.0.0",
        "Sets the client eviction mode of the connection.",
        |a| {
            let word = a.next_slice()?;
            let on = if is(word, "on") {
                true
            } else if is(word, "off") {
                false
            } else {
                return Err(CommandError::Syntax);
            };
            client(ClientCommand::NoEvict(on))
        },
    )
    .with_syntax("ON|OFF")
    .with_acl_category("@connection"),
    c(
        "client|unblock",
        -3,
        ADMIN | CLIENT_FLAGS,
        "5.0.0",
        "Unblocks a client blocked by a blocking command from a different connection.",
        parse_client_unblock,
    )
    .with_syntax("client-id [TIMEOUT|ERROR]"),
    c(
        "client|pause",
        -3,
        ADMIN | CLIENT_FLAGS,
        "3.0.0",
        "Suspends commands processing.",
        parse_client_pause,
    )
    .with_syntax("timeout [WRITE|ALL]"),
    c(
        "client|unpause",
        2,
        ADMIN | CLIENT_FLAGS,
        "6.2.0",
        "Resumes processing of clients that were paused.",
        |_| client(ClientCommand::Unpause),
    ),
    c(
        "client|reply",
        3,
        CLIENT_FLAGS,
        "3.2.0",
        "Instructs the server whether to reply to commands.",
        |a| {
            let word = a.next_slice()?;
            let switch = if is(word, "on") {
                ReplySwitch::On
            } else if is(word, "off") {
                ReplySwitch::Off
            } else if is(word, "skip") {
                ReplySwitch::Skip
            } else {
                return Err(CommandError::Syntax);
            };
            client(ClientCommand::Reply(switch))
        },
    )
    .with_syntax("ON|OFF|SKIP"),
    c(
        "client|trackinginfo",
        2,
        CLIENT_FLAGS,
        "6.2.0",
        "Returns information about server-assisted client-side caching for the connection.",
        |_| client(ClientCommand::TrackingInfo),
    ),
    c(
        "client|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| client(ClientCommand::Help),
    ),
];
