//! The command line: `quiver serve`, `quiver config`, `--version`. Every
//! configuration key is also a flag on both commands, generated from the key
//! registry so that `http.addr` is always `--http-addr`.

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::config::Inputs;
use crate::config::keys::{KEYS, Key, Kind};

const ABOUT: &str = "Quiver: live pub/sub streams, a Redis-compatible cache, a durable log and an HTTP gateway in one binary.";

const AFTER_HELP: &str = "\
Start with `quiver serve`: it runs with built-in defaults (data in ./quiver-data,
operations endpoint on http://127.0.0.1:8080/health). `quiver config` prints every
setting, its value and where the value came from.";

const SETTINGS_HELP: &str = "\
Settings come from, lowest to highest precedence: built-in defaults, the profile,
the config file (--config or QUIVER_CONFIG), QUIVER_* environment variables, and
these flags. The key `http.addr` is the env var QUIVER_HTTP_ADDR and the flag
--http-addr; see docs/configuration.md for every key.";

/// What the user asked for.
#[derive(Debug)]
pub enum Invocation {
    /// Run the server.
    Serve(Inputs),
    /// Print the effective configuration.
    Config(Inputs),
    /// Offline tools for a log directory.
    /// `--json`: one JSON object per line instead of text.
    Log(LogCommand, bool),
    /// A command to a running server (`stream`, `pub`, `sub`, `group`).
    Client(Box<(crate::client_cmd::Common, crate::client_cmd::ClientCommand)>),
    /// Bad arguments a client command found after clap (exit status 2).
    Invalid(String),
}

/// `quiver log ...`: offline tools for one log directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogCommand {
    /// Check every CRC and index entry; stop at the first fault.
    Verify { dir: PathBuf },
    /// Segments, offsets, sizes and consumer groups.
    Inspect { dir: PathBuf },
    /// Print `count` records starting at offset `from`.
    Dump { dir: PathBuf, from: u64, count: u64 },
}

/// The whole command-line interface.
pub fn command() -> Command {
    Command::new("quiver")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .after_help(AFTER_HELP)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(with_settings(Command::new("serve").about(
            "Run the server until SIGINT or SIGTERM (then drain and exit 0)",
        )))
        .subcommand(with_settings(Command::new("config").about(
            "Print the effective configuration as TOML, with where each value came from",
        )))
        .subcommand(log_command())
        .subcommands(crate::client_cmd::client_commands())
}

fn log_command() -> Command {
    let dir = || {
        Arg::new("dir")
            .value_name("DIR")
            .required(true)
            .value_parser(clap::value_parser!(PathBuf))
            .help("The log's directory (one log, holding its segment files)")
    };
    let json = || {
        Arg::new("json")
            .long("json")
            .action(clap::ArgAction::SetTrue)
            .help("JSON output (one object per line where there are many)")
    };
    let number = |name: &'static str,
                  value_name: &'static str,
                  default: &'static str,
                  help: &'static str| {
        Arg::new(name)
            .long(name)
            .value_name(value_name)
            .default_value(default)
            .value_parser(clap::value_parser!(u64))
            .help(help)
    };
    Command::new("log")
        .about("Offline tools for a log directory (read-only; safe while a server appends)")
        .subcommand_required(true)
        .subcommand(
            Command::new("verify")
                .about("Check every batch CRC and index entry; exit 1 at the first fault, naming file and byte")
                .arg(dir())
                .arg(json()),
        )
        .subcommand(Command::new("inspect").about("List segments, offsets, sizes and consumer groups").arg(dir()).arg(json()))
        .subcommand(
            Command::new("dump")
                .about("Print records: offset, timestamp, length, headers and payload (escaped)")
                .arg(dir())
                .arg(json())
                .arg(number("from", "OFFSET", "0", "First offset to print"))
                .arg(number("count", "N", "100", "Most records to print")),
        )
}

/// Parses the process arguments (any bytes: a path need not be UTF-8); `env` is the
/// process environment.
pub fn parse<T: Into<std::ffi::OsString> + Clone>(
    args: impl IntoIterator<Item = T>,
    env: Vec<(String, String)>,
) -> Result<Invocation, clap::Error> {
    let matches = command().try_get_matches_from(args)?;
    Ok(match matches.subcommand() {
        Some(("serve", sub)) => Invocation::Serve(inputs(sub, env)),
        Some(("config", sub)) => Invocation::Config(inputs(sub, env)),
        Some(("log", sub)) => {
            let json = sub
                .subcommand()
                .is_some_and(|(_, tool)| tool.get_flag("json"));
            Invocation::Log(log_invocation(sub), json)
        }
        Some((name, sub)) if ["stream", "pub", "sub", "group", "status"].contains(&name) => {
            match crate::client_cmd::parse(name, sub, env) {
                Ok(parsed) => Invocation::Client(Box::new(parsed)),
                Err(message) => Invocation::Invalid(message),
            }
        }
        _ => unreachable!("clap requires one of the declared subcommands"),
    })
}

fn log_invocation(matches: &ArgMatches) -> LogCommand {
    let (name, sub) = matches
        .subcommand()
        .expect("clap requires a log subcommand");
    let dir = sub
        .get_one::<PathBuf>("dir")
        .expect("DIR is required")
        .clone();
    match name {
        "verify" => LogCommand::Verify { dir },
        "inspect" => LogCommand::Inspect { dir },
        "dump" => LogCommand::Dump {
            dir,
            from: *sub.get_one::<u64>("from").expect("has a default"),
            count: *sub.get_one::<u64>("count").expect("has a default"),
        },
        other => unreachable!("undeclared log subcommand {other}"),
    }
}

fn with_settings(command: Command) -> Command {
    let command = command.after_help(SETTINGS_HELP).arg(
        Arg::new("config")
            .long("config")
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .help("TOML config file [env: QUIVER_CONFIG]"),
    );
    KEYS.iter()
        .fold(command, |command, key| command.arg(key_arg(key)))
}

fn key_arg(key: &'static Key) -> Arg {
    Arg::new(key.name)
        .long(flag_name(key))
        .value_name(value_name(key.kind))
        .action(ArgAction::Set)
        .help(format!(
            "{} [default: {}] [env: {}]",
            key.doc,
            key.default,
            key.env_var()
        ))
        .help_heading("Settings")
}

/// `key.flag()` as a `&'static str`, computed once for the whole registry.
fn flag_name(key: &Key) -> &'static str {
    static FLAGS: OnceLock<Vec<String>> = OnceLock::new();
    let flags = FLAGS.get_or_init(|| KEYS.iter().map(Key::flag).collect());
    let index = KEYS
        .iter()
        .position(|known| known.name == key.name)
        .expect("flags are only made for registry keys");
    &flags[index]
}

fn value_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Choice(_) => "NAME",
        Kind::Path => "PATH",
        Kind::SocketAddr => "ADDR",
        Kind::Integer { .. } => "N",
        Kind::Threads { .. } => "N|auto",
        Kind::Size { .. } => "SIZE",
        Kind::Duration { .. } => "DURATION",
        Kind::Bool => "BOOL",
        Kind::LogFilter => "FILTER",
        Kind::DurableRules => "RULES",
        Kind::RedisParams => "PARAMS",
        Kind::KeyspaceEvents => "CLASSES",
        Kind::Text { .. } => "TEXT",
    }
}

fn inputs(matches: &ArgMatches, env: Vec<(String, String)>) -> Inputs {
    Inputs {
        config_file: matches.get_one::<PathBuf>("config").cloned(),
        env,
        flags: KEYS
            .iter()
            .filter_map(|key| {
                matches
                    .get_one::<String>(key.name)
                    .map(|value| (key.name, value.clone()))
            })
            .collect(),
    }
}
