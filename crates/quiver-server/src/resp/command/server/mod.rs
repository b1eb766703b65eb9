//! Server commands: INFO, CONFIG (GET SET RESETSTAT HELP), COMMAND (COUNT
//! INFO DOCS LIST HELP), TIME, ROLE, REPLICAOF/SLAVEOF and SHUTDOWN. `DBSIZE`, `FLUSHDB` and `FLUSHALL` act on
//! the keyspace and live with the key commands.

pub(crate) mod acl;
pub(crate) mod config;
pub(crate) mod exec;
mod memory;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: ServerCommand) -> Result<Command, CommandError> {
    Ok(Command::Server(command))
}

fn config(command: ConfigCommand) -> Result<Command, CommandError> {
    wrap(ServerCommand::Config(command))
}

fn command(command: CommandCommand) -> Result<Command, CommandError> {
    wrap(ServerCommand::Command(command))
}

/// A server command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerCommand {
    /// `INFO [section...]` (none: the default sections).
    Info { sections: Vec<Bytes> },
    /// `MIGRATE`: keys sent to another server (a keys command the connection runs, as
    /// it awaits the target).
    Migrate(Box<crate::resp::command::keys::migrate::Migrate>),
    /// `CONFIG` subcommands.
    Config(ConfigCommand),
    /// `COMMAND` and its subcommands.
    Command(CommandCommand),
    /// `TIME`.
    Time,
    /// `ROLE`: a primary without replicas.
    Role,
    /// `REPLICAOF`/`SLAVEOF`: `NO ONE` (`None`), or a primary to follow (refused: the
    /// node does not replicate).
    ReplicaOf { primary: Option<(Bytes, u16)> },
    /// `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]`.
    Shutdown { save: Option<bool>, abort: bool },
    /// CLUSTER's subcommands, READONLY, READWRITE, ASKING: cluster support is disabled.
    ClusterDisabled,
    /// `LOLWUT [VERSION version]`.
    Lolwut,
    /// `SLOWLOG GET [count]` (`None`: all, with -1).
    SlowLogGet { count: Option<usize> },
    /// `SLOWLOG LEN`.
    SlowLogLen,
    /// `SLOWLOG RESET`.
    SlowLogReset,
    /// `SLOWLOG HELP`.
    SlowLogHelp,
    /// `MODULE LIST`: no module is loaded.
    ModuleList,
    /// `MODULE LOAD|LOADEX path ...` (`Some(path)`) or `MODULE UNLOAD name` (`None`):
    /// Quiver does not load Redis modules.
    ModuleLoad { path: Option<Bytes> },
    /// `MODULE HELP`.
    ModuleHelp,
    /// `DEBUG subcommand ...`.
    Debug(DebugCommand),
    /// `SAVE`.
    Save,
    /// `BGSAVE [SCHEDULE]`.
    BgSave { schedule: bool },
    /// `LASTSAVE`.
    LastSave,
    /// `BGREWRITEAOF`.
    BgRewriteAof,
    /// `LATENCY LATEST`.
    LatencyLatest,
    /// `LATENCY HISTORY event`.
    LatencyHistory { event: Bytes },
    /// `LATENCY RESET [event...]`.
    LatencyReset { events: Vec<Bytes> },
    /// `LATENCY GRAPH event`.
    LatencyGraph { event: Bytes },
    /// `LATENCY DOCTOR`.
    LatencyDoctor,
    /// `LATENCY HISTOGRAM [command...]`.
    LatencyHistogram { commands: Vec<Bytes> },
    /// `LATENCY HELP`.
    LatencyHelp,
    /// `MONITOR`.
    Monitor,
    /// `ACL` subcommands.
    Acl(acl::AclCommand),
    /// `MEMORY STATS`.
    MemoryStats,
    /// `MEMORY DOCTOR`.
    MemoryDoctor,
    /// `MEMORY MALLOC-STATS`.
    MemoryMallocStats,
    /// `MEMORY PURGE`.
    MemoryPurge,
}

/// DEBUG's subcommands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DebugCommand {
    /// `DEBUG SLEEP seconds` (decimals allowed, at most an hour): the connection's thread
    /// sleeps, as Redis's whole server does.
    Sleep(std::time::Duration),
    /// `DEBUG SET-ACTIVE-EXPIRE 0|1`.
    SetActiveExpire(bool),
    /// `DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]`.
    Reload {
        merge: bool,
        flush: bool,
        save: bool,
    },
    /// `DEBUG OBJECT key`.
    Object(Bytes),
    /// `DEBUG PROTOCOL type`: a reply of that RESP type, for client libraries' tests.
    Protocol(Bytes),
    /// `DEBUG ERROR text`: the text as an error reply.
    Error(Bytes),
    /// `DEBUG HELP`.
    Help,
    /// A subcommand of Redis's DEBUG that Quiver does not have.
    Unsupported(Bytes),
    /// Not a subcommand of DEBUG, or one given the wrong number of arguments.
    Unknown(Bytes),
}

/// The DEBUG subcommands of Redis 7.0 that Quiver answers with an error saying so.
const REDIS_DEBUG_SUBCOMMANDS: [&str; 28] = [
    "structsize",
    "pause-cron",
    "mallctl",
    "mallctl-str",
    "segfault",
    "panic",
    "restart",
    "crash-and-recover",
    "assert",
    "log",
    "leak",
    "loadaof",
    "drop-cluster-packet-filter",
    "sdslen",
    "ziplist",
    "listpack",
    "quicklist",
    "quicklist-packed-threshold",
    "populate",
    "digest",
    "digest-value",
    "jmap",
    "change-repl-id",
    "stringmatch-len",
    "set-skip-checksum-validation",
    "aof-flush-sleep",
    "replybuffer",
    "set-disable-deny-scripts",
];

fn parse_debug(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let name = a.next()?;
    let command = if is(&name, "help") {
        DebugCommand::Help
    } else if is(&name, "sleep") && a.remaining() == 1 {
        // Redis reads the number with `strtod` and no check: what is not one sleeps 0.
        let seconds = quiver_resp::num::parse_f64(a.next_slice()?).unwrap_or(0.0);
        DebugCommand::Sleep(std::time::Duration::from_secs_f64(
            seconds.clamp(0.0, 3600.0),
        ))
    } else if is(&name, "set-active-expire") && a.remaining() == 1 {
        DebugCommand::SetActiveExpire(a.i64()? != 0)
    } else if is(&name, "error") && a.remaining() == 1 {
        DebugCommand::Error(a.next()?)
    } else if is(&name, "protocol") && a.remaining() == 1 {
        DebugCommand::Protocol(a.next()?)
    } else if is(&name, "object") && a.remaining() == 1 {
        DebugCommand::Object(a.next()?)
    } else if is(&name, "reload") {
        let (mut merge, mut flush, mut save) = (false, true, true);
        for option in a.rest() {
            if is(&option, "merge") {
                merge = true;
            } else if is(&option, "noflush") {
                flush = false;
            } else if is(&option, "nosave") {
                save = false;
            } else {
                return Err(CommandError::Message(
                    "DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.",
                ));
            }
        }
        DebugCommand::Reload { merge, flush, save }
    } else if REDIS_DEBUG_SUBCOMMANDS.iter().any(|sub| is(&name, sub)) {
        DebugCommand::Unsupported(name)
    } else {
        DebugCommand::Unknown(name)
    };
    a.rest();
    wrap(ServerCommand::Debug(command))
}

/// `SLOWLOG GET [count]`: 10 by default, -1 for all.
fn parse_slowlog_get(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let count = match a.remaining() {
        0 => Some(10),
        _ => match quiver_resp::num::parse_i64(a.next_slice()?) {
            Some(-1) => None,
            Some(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => {
                return Err(CommandError::Message(
                    "count should be greater than or equal to -1",
                ));
            }
        },
    };
    wrap(ServerCommand::SlowLogGet { count })
}

/// `LOLWUT [VERSION version] [...]`: the version must be an integer, as in Redis; the
/// rest (the parameters of Redis's drawings) is not read.
fn parse_lolwut(a: &mut Args<'_>) -> Result<Command, CommandError> {
    if a.remaining() >= 2 && is(a.peek().unwrap_or_default(), "version") {
        a.next_slice()?;
        a.i64()?;
    }
    a.rest();
    wrap(ServerCommand::Lolwut)
}

/// `BGSAVE [SCHEDULE]`.
fn parse_bgsave(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let schedule = match a.rest().as_slice() {
        [] => false,
        [word] if is(word, "schedule") => true,
        _ => return Err(CommandError::Syntax),
    };
    wrap(ServerCommand::BgSave { schedule })
}

/// SHUTDOWN's options, with Redis's syntax error for anything else.
fn parse_shutdown(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let (mut save, mut abort, mut other) = (None, false, false);
    while a.remaining() > 0 {
        let word = a.next_slice()?;
        if is(word, "nosave") && save.is_none() {
            save = Some(false);
        } else if is(word, "save") && save.is_none() {
            save = Some(true);
        } else if is(word, "now") || is(word, "force") {
            other = true;
        } else if is(word, "abort") {
            abort = true;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    if abort && (save.is_some() || other) {
        return Err(CommandError::Syntax);
    }
    wrap(ServerCommand::Shutdown { save, abort })
}

/// `CONFIG` subcommands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigCommand {
    /// `CONFIG GET pattern...`.
    Get { patterns: Vec<Bytes> },
    /// `CONFIG SET name value...`.
    Set { pairs: Vec<(Bytes, Bytes)> },
    /// `CONFIG RESETSTAT`.
    ResetStat,
    /// `CONFIG REWRITE`.
    Rewrite,
    /// `CONFIG HELP`.
    Help,
}

/// `COMMAND` subcommands; answered from [`crate::resp::table`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandCommand {
    /// `COMMAND`: every command's info.
    All,
    /// `COMMAND COUNT`.
    Count,
    /// `COMMAND INFO [name...]` (none: all).
    Info { names: Vec<Bytes> },
    /// `COMMAND DOCS [name...]` (none: all).
    Docs { names: Vec<Bytes> },
    /// `COMMAND GETKEYS command [arg...]`: the command and its arguments.
    GetKeys { args: Vec<Bytes> },
    /// `COMMAND GETKEYSANDFLAGS command [arg...]`.
    GetKeysAndFlags { args: Vec<Bytes> },
    /// `COMMAND LIST [FILTERBY ...]`.
    List { filter: Option<ListFilter> },
    /// `COMMAND HELP`.
    Help,
}

/// `COMMAND LIST FILTERBY` filters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListFilter {
    /// `MODULE name`.
    Module(Bytes),
    /// `ACLCAT category`.
    AclCat(Bytes),
    /// `PATTERN glob`.
    Pattern(Bytes),
}

fn parse_command_list(args: &mut Args<'_>) -> Result<Command, CommandError> {
    if args.remaining() == 0 {
        return command(CommandCommand::List { filter: None });
    }
    if args.remaining() != 3 || !args.peek().is_some_and(|w| is(w, "filterby")) {
        return Err(CommandError::Syntax);
    }
    args.next_slice()?;
    let kind = args.next_slice()?;
    let value = args.next()?;
    let filter = match () {
        _ if is(kind, "module") => ListFilter::Module(value),
        _ if is(kind, "aclcat") => ListFilter::AclCat(value),
        _ if is(kind, "pattern") => ListFilter::Pattern(value),
        _ => return Err(CommandError::Syntax),
    };
    command(CommandCommand::List {
        filter: Some(filter),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn server_commands() {
        assert_eq!(
            parse("COMMAND").unwrap(),
            Command::Server(ServerCommand::Command(CommandCommand::All))
        );
        assert_eq!(
            parse("command count").unwrap(),
            Command::Server(ServerCommand::Command(CommandCommand::Count))
        );
        assert_eq!(
            parse("COMMAND DOCS get set").unwrap(),
            Command::Server(ServerCommand::Command(CommandCommand::Docs {
                names: vec![b("get"), b("set")]
            }))
        );
        assert_eq!(
            parse("CONFIG SET maxmemory 1mb maxmemory-policy allkeys-lru").unwrap(),
            Command::Server(ServerCommand::Config(ConfigCommand::Set {
                pairs: vec![
                    (b("maxmemory"), b("1mb")),
                    (b("maxmemory-policy"), b("allkeys-lru"))
                ]
            }))
        );
        assert_eq!(error("CONFIG SET a b c"), "ERR syntax error");
        assert_eq!(
            error("CONFIG GET"),
            "ERR wrong number of arguments for 'config|get' command"
        );
        assert_eq!(
            error("CONFIG FOO"),
            "ERR unknown subcommand 'FOO'. Try CONFIG HELP."
        );
        assert_eq!(error("COMMAND LIST FILTERBY x y"), "ERR syntax error");
        assert_eq!(
            parse("COMMAND LIST FILTERBY PATTERN z*").unwrap(),
            Command::Server(ServerCommand::Command(CommandCommand::List {
                filter: Some(ListFilter::Pattern(b("z*")))
            }))
        );
        assert_eq!(
            parse("INFO memory").unwrap(),
            Command::Server(ServerCommand::Info {
                sections: vec![b("memory")]
            })
        );
    }
}
