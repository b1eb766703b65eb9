//! Connection commands: PING ECHO HELLO AUTH SELECT QUIT RESET and CLIENT
//! (ID SETNAME GETNAME LIST KILL INFO HELP).

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::encode::{Protocol, Reply};
use quiver_resp::error::{CommandError, ErrorCode};
use quiver_resp::num::parse_i64;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: ConnectionCommand) -> Result<Command, CommandError> {
    Ok(Command::Connection(command))
}

fn client(command: ClientCommand) -> Result<Command, CommandError> {
    wrap(ConnectionCommand::Client(command))
}

/// A connection command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectionCommand {
    /// `PING [message]`.
    Ping { message: Option<Bytes> },
    /// `ECHO message`.
    Echo { message: Bytes },
    /// `HELLO [protover [AUTH user pass] [SETNAME name]]`.
    Hello(Box<Hello>),
    /// `AUTH [username] password`; `command` is the name as sent (ACL LOG shows it).
    Auth {
        username: Option<Bytes>,
        password: Bytes,
        command: Bytes,
    },
    /// `SELECT db` (range checked against `databases` by the server).
    Select { db: i32 },
    /// `QUIT`.
    Quit,
    /// `RESET`.
    Reset,
    /// `CLIENT` subcommands.
    Client(ClientCommand),
}

/// `HELLO` with its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// 2 or 3; `None` keeps the current protocol.
    pub protover: Option<i64>,
    /// `AUTH username password`.
    pub auth: Option<(Bytes, Bytes)>,
    /// The command's name as sent (ACL LOG shows it for a failed login).
    pub command: Bytes,
    /// `SETNAME name` (validated).
    pub setname: Option<Bytes>,
}

impl Hello {
    /// The map `HELLO` answers with, as Redis 7 shapes it: `server`,
    /// `version`, `proto`, `id`, `mode`, `role`, `modules`. `server` is
    /// reported as `redis` because client libraries check it.
    pub fn reply(version: &str, protocol: Protocol, client_id: u64) -> Reply {
        let text = Reply::bulk_static;
        Reply::Map(vec![
            (text("server"), text("redis")),
            (text("version"), Reply::bulk(version)),
            (text("proto"), Reply::Integer(protocol.version())),
            (
                text("id"),
                Reply::Integer(i64::try_from(client_id).unwrap_or(i64::MAX)),
            ),
            (text("mode"), text("standalone")),
            (text("role"), text("master")),
            (text("modules"), Reply::Array(Vec::new())),
        ])
    }
}

/// `CLIENT` subcommands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientCommand {
    /// `CLIENT ID`.
    Id,
    /// `CLIENT SETNAME name` (empty clears the name).
    SetName { name: Bytes },
    /// `CLIENT GETNAME`.
    GetName,
    /// `CLIENT LIST [TYPE type] [ID id...]`.
    List {
        client_type: Option<ClientType>,
        ids: Vec<i64>,
    },
    /// `CLIENT KILL addr` or `CLIENT KILL filter value...`.
    Kill(ClientKill),
    /// `CLIENT INFO`.
    Info,
    /// `CLIENT TRACKING ON|OFF [options]`: checked by the server in Redis's order.
    Tracking(ClientTracking),
    /// `CLIENT CACHING YES|NO` (anything else: `None`, a syntax error once the
    /// tracking state is checked).
    Caching { yes: Option<bool> },
    /// `CLIENT GETREDIR`.
    GetRedir,
    /// `CLIENT TRACKINGINFO`.
    TrackingInfo,
    /// `CLIENT NO-EVICT ON|OFF`.
    NoEvict(bool),
    /// `CLIENT UNBLOCK client-id [TIMEOUT|ERROR]`.
    Unblock { id: i64, error: bool },
    /// `CLIENT PAUSE timeout [WRITE|ALL]` (milliseconds).
    Pause { timeout_ms: u64, all: bool },
    /// `CLIENT UNPAUSE`.
    Unpause,
    /// `CLIENT REPLY ON|OFF|SKIP`.
    Reply(ReplySwitch),
    /// `CLIENT HELP`.
    Help,
}

/// `CLIENT REPLY`'s argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplySwitch {
    On,
    Off,
    Skip,
}

/// `CLIENT TRACKING`, as given. Redis checks the options left to right (a REDIRECT to a
/// client that does not exist is refused before a later bad option), then ON or OFF.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientTracking {
    /// ON, OFF, or anything else (a syntax error after the options).
    pub switch: Bytes,
    /// The REDIRECT ids, in order (a second one is an error).
    pub redirects: Vec<Bytes>,
    /// BCAST.
    pub bcast: bool,
    /// The PREFIX arguments.
    pub prefixes: Vec<Bytes>,
    /// OPTIN.
    pub optin: bool,
    /// OPTOUT.
    pub optout: bool,
    /// NOLOOP.
    pub noloop: bool,
    /// The first option that is not one: a syntax error after the REDIRECTs before it.
    pub bad_option: bool,
}

fn parse_client_tracking(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let mut tracking = ClientTracking {
        switch: args.next()?,
        ..ClientTracking::default()
    };
    while let Ok(option) = args.next_slice() {
        let more = args.remaining() > 0;
        match option {
            o if is(o, "redirect") && more => tracking.redirects.push(args.next()?),
            o if is(o, "bcast") => tracking.bcast = true,
            o if is(o, "optin") => tracking.optin = true,
            o if is(o, "optout") => tracking.optout = true,
            o if is(o, "noloop") => tracking.noloop = true,
            o if is(o, "prefix") && more => tracking.prefixes.push(args.next()?),
            _ => {
                tracking.bad_option = true;
                break;
            }
        }
    }
    client(ClientCommand::Tracking(tracking))
}

/// A client's type, as `CLIENT LIST TYPE` and `CLIENT KILL TYPE` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientType {
    /// Ordinary clients.
    Normal,
    /// Replicas (`replica` or `slave`).
    Replica,
    /// The primary (`master`).
    Master,
    /// Clients in pub/sub mode.
    PubSub,
}

impl ClientType {
    fn parse(name: &[u8]) -> Result<ClientType, CommandError> {
        match () {
            _ if is(name, "normal") => Ok(ClientType::Normal),
            _ if is(name, "replica") || is(name, "slave") => Ok(ClientType::Replica),
            _ if is(name, "master") => Ok(ClientType::Master),
            _ if is(name, "pubsub") => Ok(ClientType::PubSub),
            _ => Err(CommandError::Other {
                code: ErrorCode::Err,
                message: format!("Unknown client type '{}'", String::from_utf8_lossy(name)).into(),
            }),
        }
    }
}

/// `CLIENT KILL`: the old form (one address) or filters, all of which must
/// match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientKill {
    /// Old form `CLIENT KILL ip:port`: kill exactly this client and reply `OK`
    /// (or `ERR No such client`); the new form replies a count.
    pub legacy: bool,
    /// `ID id`.
    pub id: Option<u64>,
    /// `TYPE type`.
    pub client_type: Option<ClientType>,
    /// `USER name`.
    pub user: Option<Bytes>,
    /// `ADDR ip:port` (or the old form's address).
    pub addr: Option<Bytes>,
    /// `LADDR ip:port`.
    pub laddr: Option<Bytes>,
    /// `SKIPME yes|no`: spare the calling client (default yes).
    pub skip_me: bool,
}

/// Redis's rule for client names: printable ASCII without spaces.
fn validate_client_name(name: &[u8]) -> Result<(), CommandError> {
    if name.iter().all(|b| (b'!'..=b'~').contains(b)) {
        Ok(())
    } else {
        Err(CommandError::Message(
            "Client names cannot contain spaces, newlines or special characters.",
        ))
    }
}

fn parse_hello(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let mut hello = Hello {
        protover: None,
        auth: None,
        setname: None,
        command: Bytes::copy_from_slice(args.name_as_sent()),
    };
    if args.remaining() > 0 {
        let version = parse_i64(args.next_slice()?).ok_or(CommandError::Message(
            "Protocol version is not an integer or out of range",
        ))?;
        if !(2..=3).contains(&version) {
            return Err(CommandError::NoProto);
        }
        hello.protover = Some(version);
    }
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if is(word, "auth") && args.remaining() >= 2 {
            hello.auth = Some((args.next()?, args.next()?));
        } else if is(word, "setname") && args.remaining() >= 1 {
            let name = args.next()?;
            validate_client_name(&name)?;
            hello.setname = Some(name);
        } else {
            let message = format!(
                "Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(word)
            );
            return Err(CommandError::Other {
                code: ErrorCode::Err,
                message: message.into(),
            });
        }
    }
    wrap(ConnectionCommand::Hello(Box::new(hello)))
}

fn parse_client_list(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let argc = args.argc();
    let first = args.peek();
    if argc == 2 {
        return client(ClientCommand::List {
            client_type: None,
            ids: Vec::new(),
        });
    }
    if argc == 4 && first.is_some_and(|w| is(w, "type")) {
        args.next_slice()?;
        let client_type = ClientType::parse(args.next_slice()?)?;
        return client(ClientCommand::List {
            client_type: Some(client_type),
            ids: Vec::new(),
        });
    }
    if argc > 3 && first.is_some_and(|w| is(w, "id")) {
        args.next_slice()?;
        let mut ids = Vec::with_capacity(args.remaining());
        while args.remaining() > 0 {
            let id =
                parse_i64(args.next_slice()?).ok_or(CommandError::Message("Invalid client ID"))?;
            ids.push(id);
        }
        return client(ClientCommand::List {
            client_type: None,
            ids,
        });
    }
    Err(CommandError::Syntax)
}

/// Redis's answer to a CLIENT subcommand with more arguments than it takes.
fn too_many(args: &Args<'_>) -> CommandError {
    CommandError::Other {
        code: ErrorCode::Err,
        message: format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(args.subcommand_as_sent())
        )
        .into(),
    }
}

fn message(text: &'static str) -> CommandError {
    CommandError::Other {
        code: ErrorCode::Err,
        message: text.into(),
    }
}

/// `CLIENT PAUSE timeout [WRITE|ALL]`: Redis checks the mode before the timeout.
pub(super) fn parse_client_pause(args: &mut Args<'_>) -> Result<Command, CommandError> {
    if args.remaining() > 2 {
        return Err(too_many(args));
    }
    let timeout = args.next_slice()?;
    let all = match args.peek() {
        None => true,
        Some(mode) if is(mode, "all") => true,
        Some(mode) if is(mode, "write") => false,
        Some(_) => return Err(message("CLIENT PAUSE mode must be WRITE or ALL")),
    };
    let timeout_ms =
        parse_i64(timeout).ok_or_else(|| message("timeout is not an integer or out of range"))?;
    let timeout_ms = u64::try_from(timeout_ms).map_err(|_| message("timeout is negative"))?;
    client(ClientCommand::Pause { timeout_ms, all })
}

/// `CLIENT UNBLOCK client-id [TIMEOUT|ERROR]`: Redis checks the reason before the id.
pub(super) fn parse_client_unblock(args: &mut Args<'_>) -> Result<Command, CommandError> {
    if args.remaining() > 2 {
        return Err(too_many(args));
    }
    let id = args.next_slice()?;
    let error = match args.peek() {
        None => false,
        Some(reason) if is(reason, "timeout") => false,
        Some(reason) if is(reason, "error") => true,
        Some(_) => return Err(message("CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
    };
    let id = parse_i64(id).ok_or(CommandError::NotInteger)?;
    client(ClientCommand::Unblock { id, error })
}

fn parse_client_kill(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let mut kill = ClientKill {
        skip_me: true,
        ..ClientKill::default()
    };
    if args.argc() == 3 {
        // The old form may close the caller's own connection too, as in Redis.
        kill.legacy = true;
        kill.skip_me = false;
        kill.addr = Some(args.next()?);
        return client(ClientCommand::Kill(kill));
    }
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if args.remaining() == 0 {
            return Err(CommandError::Syntax);
        }
        match () {
            _ if is(word, "id") => {
                let id = parse_i64(args.next_slice()?)
                    .filter(|id| *id >= 1)
                    .ok_or(CommandError::Message("client-id should be greater than 0"))?;
                kill.id = Some(id as u64);
            }
            _ if is(word, "type") => {
                kill.client_type = Some(ClientType::parse(args.next_slice()?)?)
            }
            _ if is(word, "addr") => kill.addr = Some(args.next()?),
            _ if is(word, "laddr") => kill.laddr = Some(args.next()?),
            _ if is(word, "user") => kill.user = Some(args.next()?),
            _ if is(word, "skipme") => {
                let value = args.next_slice()?;
                kill.skip_me = match () {
                    _ if is(value, "yes") => true,
                    _ if is(value, "no") => false,
                    _ => return Err(CommandError::Syntax),
                };
            }
            _ => return Err(CommandError::Syntax),
        }
    }
    client(ClientCommand::Kill(kill))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn hello_options() {
        assert_eq!(
            parse("HELLO 3 AUTH default secret SETNAME app").unwrap(),
            Command::Connection(ConnectionCommand::Hello(Box::new(Hello {
                protover: Some(3),
                auth: Some((b("default"), b("secret"))),
                setname: Some(b("app")),
                command: b("HELLO"),
            })))
        );
        assert_eq!(error("HELLO 4"), "NOPROTO unsupported protocol version");
        assert_eq!(
            error("HELLO x"),
            "ERR Protocol version is not an integer or out of range"
        );
        assert_eq!(
            error("HELLO 3 AUTH u"),
            "ERR Syntax error in HELLO option 'AUTH'"
        );
        assert_eq!(
            error("HELLO 3 FOO"),
            "ERR Syntax error in HELLO option 'FOO'"
        );
    }

    #[test]
    fn hello_reply_shape() {
        let reply = Hello::reply("7.0.15", Protocol::Resp3, 7).to_vec(Protocol::Resp3);
        assert_eq!(
            String::from_utf8(reply).unwrap(),
            "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n\
             $2\r\nid\r\n:7\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
             $7\r\nmodules\r\n*0\r\n"
        );
    }

    #[test]
    fn client_subcommands() {
        assert_eq!(
            parse("CLIENT id").unwrap(),
            Command::Connection(ConnectionCommand::Client(ClientCommand::Id))
        );
        assert_eq!(
            error("CLIENT SETNAME a\u{7f}b"),
            "ERR Client names cannot contain spaces, newlines or special characters."
        );
        assert_eq!(
            error("CLIENT FOO"),
            "ERR unknown subcommand 'FOO'. Try CLIENT HELP."
        );
        assert_eq!(
            error("CLIENT SETNAME"),
            "ERR wrong number of arguments for 'client|setname' command"
        );
        assert_eq!(
            error("CLIENT"),
            "ERR wrong number of arguments for 'client' command"
        );
        assert_eq!(
            parse("CLIENT LIST TYPE pubsub").unwrap(),
            Command::Connection(ConnectionCommand::Client(ClientCommand::List {
                client_type: Some(ClientType::PubSub),
                ids: vec![]
            }))
        );
        assert_eq!(error("CLIENT LIST TYPE x"), "ERR Unknown client type 'x'");
        assert_eq!(error("CLIENT LIST ID x"), "ERR Invalid client ID");
        assert_eq!(error("CLIENT LIST FOO"), "ERR syntax error");
        let kill = match parse("CLIENT KILL ID 7 TYPE normal SKIPME no").unwrap() {
            Command::Connection(ConnectionCommand::Client(ClientCommand::Kill(kill))) => kill,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            (kill.id, kill.client_type, kill.skip_me, kill.legacy),
            (Some(7), Some(ClientType::Normal), false, false)
        );
        let legacy = match parse("CLIENT KILL 127.0.0.1:5000").unwrap() {
            Command::Connection(ConnectionCommand::Client(ClientCommand::Kill(kill))) => kill,
            other => panic!("{other:?}"),
        };
        assert!(legacy.legacy && !legacy.skip_me);
        assert_eq!(legacy.addr, Some(b("127.0.0.1:5000")));
        assert_eq!(
            error("CLIENT KILL ID 0"),
            "ERR client-id should be greater than 0"
        );
        assert_eq!(error("CLIENT KILL SKIPME maybe"), "ERR syntax error");
        assert_eq!(error("CLIENT KILL ID 5 TYPE"), "ERR syntax error");
    }

    #[test]
    fn other_connection_commands() {
        assert_eq!(
            error("PING a b"),
            "ERR wrong number of arguments for 'ping' command"
        );
        assert_eq!(error("AUTH a b c"), "ERR syntax error");
        assert_eq!(
            error("SELECT 99999999999"),
            "ERR value is out of range, value must between -2147483648 and 2147483647"
        );
        assert_eq!(
            error("SELECT x"),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse("SELECT 3").unwrap(),
            Command::Connection(ConnectionCommand::Select { db: 3 })
        );
        assert_eq!(
            parse("AUTH pw").unwrap(),
            Command::Connection(ConnectionCommand::Auth {
                username: None,
                password: b("pw"),
                command: b("AUTH"),
            })
        );
    }
}
