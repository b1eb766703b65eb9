//! The client commands' arguments: clap definitions and their parsing into
//! [`ClientCommand`]s.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};
use quiver_client::{Policy, Storage, StreamOptions};
use quiver_core::streams::durable::{Durability, parse_durability};

use super::publish::PublishArgs;
use super::subscribe::SubscribeArgs;
use super::time::{POSITION_HELP, now_ms, parse_position};
use super::{ClientCommand, Common};
use crate::config::Inputs;
use crate::config::value::{parse_duration, parse_size};

const CONNECTION_HELP: &str = "\
The server is --server, or else the native.addr of the effective configuration (the same
QUIVER_* variables and --config file as `quiver serve`). Exit status: 0 done, 1 refused by
the server, 2 bad input, 3 server not reachable.";

/// The `stream`, `pub`, `sub` and `group` commands.
pub fn client_commands() -> Vec<Command> {
    let name = || {
        Arg::new("name")
            .value_name("STREAM")
            .required(true)
            .help("tenant/namespace/stream")
    };
    let stream_arg = || {
        Arg::new("stream")
            .value_name("STREAM")
            .required(true)
            .help("tenant/namespace/stream")
    };
    let group_arg = || {
        Arg::new("group")
            .value_name("GROUP")
            .required(true)
            .help("The group's name")
    };
    let stream = Command::new("stream")
        .about("List, describe, create and delete streams on a running server")
        .subcommand_required(true)
        .subcommand(connected(Command::new("ls").about(
            "List every stream: durability, stored messages and bytes, subscribers",
        )))
        .subcommand(connected(
            Command::new("info")
                .about("Show one stream's settings, offsets, storage and groups")
                .arg(name()),
        ))
        .subcommand(connected(
            Command::new("rm")
                .about("Delete a stream, its stored messages and its groups")
                .arg(name()),
        ))
        .subcommand(connected(create_command().arg(name())));
    let publish = connected(
        Command::new("pub")
            .about("Publish a message, or one per line of standard input with `-`")
            .arg(stream_arg())
            .arg(Arg::new("message").value_name("MESSAGE|-").help("The payload; `-` (the default) reads one message per line from standard input"))
            .arg(Arg::new("ack").long("ack").value_name("MODE").value_parser(["none", "accepted", "committed"]).default_value("accepted").help("What to wait for: none, accepted (taken by the broker) or committed (in the stream's log)"))
            .arg(Arg::new("header").long("header").value_name("KEY=VALUE").action(ArgAction::Append).help("A header; repeat for more")),
    );
    let subscribe = connected(
        Command::new("sub")
            .about("Print the messages of the streams a pattern matches")
            .arg(Arg::new("pattern").value_name("PATTERN").required(true).help("A stream name or pattern: acme/orders/created, acme/orders/*, acme/>"))
            .arg(Arg::new("from").long("from").value_name("POSITION").allow_hyphen_values(true).help(format!("Where to start: {POSITION_HELP} [default: latest; with --group, where a new group starts: earliest]")))
            .arg(Arg::new("count").long("count").value_name("N").allow_negative_numbers(true).value_parser(clap::value_parser!(u64)).default_value("0").help("Stop after N messages; 0 runs until interrupted"))
            .arg(Arg::new("group").long("group").value_name("GROUP").help("Consume as a member of this consumer group (durable streams; each message is acked once printed), or of a queue group (live streams)")),
    );
    let group = Command::new("group")
        .about("Consumer groups of a durable stream: list, inspect, move, delete")
        .subcommand_required(true)
        .subcommand(connected(
            Command::new("ls")
                .about("Every group of a stream with its position and lag")
                .arg(stream_arg()),
        ))
        .subcommand(connected(
            Command::new("info")
                .about("One group: settings, position, pending, redeliveries, members")
                .arg(stream_arg())
                .arg(group_arg()),
        ))
        .subcommand(connected(
            Command::new("reset")
                .about("Move a group: its next delivery is there and nothing is pending")
                .arg(stream_arg())
                .arg(group_arg())
                .arg(
                    Arg::new("to")
                        .allow_hyphen_values(true)
                        .long("to")
                        .value_name("POSITION")
                        .required(true)
                        .help(format!("Where to: {POSITION_HELP}")),
                ),
        ))
        .subcommand(connected(
            Command::new("rm")
                .about("Delete a group; its members are told")
                .arg(stream_arg())
                .arg(group_arg()),
        ));
    let status = connected(
        Command::new("status")
            .about("Show a running server's figures: admission, connections, streams, groups, cache (its /api/metrics)")
            .arg(
                Arg::new("http")
                    .long("http")
                    .value_name("HOST:PORT")
                    .help("The server's HTTP listener [default: http.addr of the configuration]"),
            ),
    );
    vec![stream, publish, subscribe, group, status]
}

fn create_command() -> Command {
    Command::new("create")
        .about("Create a stream: durable (stored, with retention) or live")
        .arg(
            Arg::new("durability")
                .long("durability")
                .value_name("MODE")
                .default_value("os")
                .help("live (not stored), buffered, os, interval:MS or sync"),
        )
        .arg(
            Arg::new("max-age")
                .allow_hyphen_values(true)
                .long("max-age")
                .value_name("DURATION")
                .help("Delete messages older than this (168h, 30m)"),
        )
        .arg(
            Arg::new("max-bytes")
                .allow_hyphen_values(true)
                .long("max-bytes")
                .value_name("SIZE")
                .help("Keep about this much (10GiB)"),
        )
        .arg(
            Arg::new("max-messages")
                .allow_hyphen_values(true)
                .long("max-messages")
                .value_name("N")
                .value_parser(clap::value_parser!(u64))
                .help("Keep at most the newest N messages"),
        )
        .arg(
            Arg::new("keep-unacked")
                .long("keep-unacked")
                .action(ArgAction::SetTrue)
                .help("Keep what a consumer group has not acknowledged, whatever the bounds say"),
        )
        .arg(
            Arg::new("dedupe-window")
                .allow_hyphen_values(true)
                .long("dedupe-window")
                .value_name("DURATION")
                .default_value("2m")
                .help(
                    "How long message ids (header Quiver-Msg-Id) are remembered; 0s turns it off",
                ),
        )
        .arg(
            Arg::new("policy")
                .long("policy")
                .value_name("POLICY")
                .value_parser(["drop_old", "drop_new", "block", "disconnect"])
                .help("Slow-subscriber policy (default: the server's)"),
        )
}

/// Adds the connection and output arguments every client command takes.
fn connected(command: Command) -> Command {
    command
        .after_help(CONNECTION_HELP)
        .arg(Arg::new("server").long("server").value_name("URL").help("quiver://HOST:PORT or quiver+quic://HOST:PORT?fingerprint=HEX [default: native.addr of the configuration]"))
        .arg(Arg::new("token").long("token").value_name("TOKEN").help("The server's native.auth_token [default: the configuration's, when the server is the configured native.addr]"))
        .arg(Arg::new("config").long("config").value_name("FILE").value_parser(clap::value_parser!(PathBuf)).help("TOML config file [env: QUIVER_CONFIG]"))
        .arg(Arg::new("json").long("json").action(ArgAction::SetTrue).help("JSON output (one object per line where there are many)"))
        .arg(Arg::new("timeout").long("timeout").value_name("DURATION").default_value("5s").help("Longest wait for the connection and for each reply"))
}

/// Parses one client command (`name` is the top-level subcommand).
pub fn parse(
    name: &str,
    matches: &ArgMatches,
    env: Vec<(String, String)>,
) -> Result<(Common, ClientCommand), String> {
    let (leaf, sub) = match name {
        "stream" | "group" => matches.subcommand().expect("clap requires a subcommand"),
        _ => (name, matches),
    };
    let common = common(sub, env)?;
    let text = |id: &str| sub.get_one::<String>(id).cloned();
    let required = |id: &str| text(id).expect("clap requires it");
    let command = match (name, leaf) {
        ("status", _) => ClientCommand::Status { http: text("http") },
        ("stream", "ls") => ClientCommand::StreamList,
        ("stream", "info") => ClientCommand::StreamInfo {
            name: required("name"),
        },
        ("stream", "rm") => ClientCommand::StreamRemove {
            name: required("name"),
        },
        ("stream", "create") => ClientCommand::StreamCreate {
            name: required("name"),
            options: stream_options(sub)?,
        },
        ("pub", _) => ClientCommand::Publish(PublishArgs {
            stream: required("stream"),
            message: text("message").filter(|m| m != "-"),
            ack: required("ack"),
            headers: headers(sub)?,
        }),
        ("sub", _) => ClientCommand::Subscribe(SubscribeArgs {
            pattern: required("pattern"),
            from: text("from")
                .map(|from| parse_position(&from, now_ms()))
                .transpose()?,
            count: *sub.get_one::<u64>("count").expect("has a default"),
            group: text("group"),
        }),
        ("group", "ls") => ClientCommand::GroupList {
            stream: required("stream"),
        },
        ("group", "info") => ClientCommand::GroupInfo {
            stream: required("stream"),
            group: required("group"),
        },
        ("group", "reset") => ClientCommand::GroupReset {
            stream: required("stream"),
            group: required("group"),
            to: parse_position(&required("to"), now_ms())?,
        },
        ("group", "rm") => ClientCommand::GroupRemove {
            stream: required("stream"),
            group: required("group"),
        },
        (name, leaf) => unreachable!("undeclared client command {name} {leaf}"),
    };
    Ok((common, command))
}

fn common(matches: &ArgMatches, env: Vec<(String, String)>) -> Result<Common, String> {
    let timeout_text = matches.get_one::<String>("timeout").expect("has a default");
    let timeout = parse_duration(timeout_text)
        .filter(|t| !t.is_zero())
        .ok_or_else(|| {
            format!("--timeout {timeout_text:?} is not a duration above 0 (5s, 500ms)")
        })?;
    Ok(Common {
        server: matches.get_one::<String>("server").cloned(),
        token: matches.get_one::<String>("token").cloned(),
        inputs: Inputs {
            config_file: matches.get_one::<PathBuf>("config").cloned(),
            env,
            flags: Vec::new(),
        },
        json: matches.get_flag("json"),
        timeout,
    })
}

fn headers(matches: &ArgMatches) -> Result<Vec<(String, String)>, String> {
    matches
        .get_many::<String>("header")
        .into_iter()
        .flatten()
        .map(|pair| {
            pair.split_once('=')
                .filter(|(key, _)| !key.is_empty())
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| format!("--header {pair:?} is not KEY=VALUE"))
        })
        .collect()
}

fn stream_options(matches: &ArgMatches) -> Result<StreamOptions, String> {
    let durability = matches
        .get_one::<String>("durability")
        .expect("has a default");
    let mut options = if durability == "live" {
        if matches.value_source("dedupe-window") == Some(clap::parser::ValueSource::CommandLine) {
            return Err(
                "--dedupe-window applies to durable streams; a live stream stores nothing to compare with"
                    .to_owned(),
            );
        }
        StreamOptions::live()
    } else {
        let storage = parse_storage(durability).map_err(|e| format!("--durability: {e}"))?;
        let window = matches
            .get_one::<String>("dedupe-window")
            .expect("has a default");
        StreamOptions::durable(storage).dedupe_window(duration("--dedupe-window", window, true)?)
    };
    if let Some(age) = matches.get_one::<String>("max-age") {
        options = options.max_age(duration("--max-age", age, false)?);
    }
    if let Some(size) = matches.get_one::<String>("max-bytes") {
        let bytes = parse_size(size)
            .filter(|b| *b > 0)
            .ok_or_else(|| format!("--max-bytes {size:?} is not a size above 0 (10GiB, 500MB)"))?;
        options = options.max_bytes(bytes);
    }
    if let Some(count) = matches.get_one::<u64>("max-messages") {
        if *count == 0 {
            return Err("--max-messages 0 keeps no message; give a count above 0, or leave it out for no bound".to_owned());
        }
        options = options.max_messages(*count);
    }
    if matches.get_flag("keep-unacked") {
        options = options.keep_unacked(true);
    }
    if let Some(policy) = matches.get_one::<String>("policy") {
        options = options.policy(parse_policy(policy)?);
    }
    Ok(options)
}

/// A durability as people write it (`live`, `buffered`, `os`, `interval:MS`, `sync`).
pub fn parse_storage(text: &str) -> Result<Storage, String> {
    if text.trim() == "live" {
        return Ok(Storage::Live);
    }
    let stored = parse_durability(text).map_err(|e| format!("{e}, or live (not stored)"))?;
    Ok(match stored {
        Durability::Buffered => Storage::Buffered,
        Durability::Os => Storage::Os,
        Durability::Interval { interval_ms } => Storage::Interval {
            interval_ms: u32::try_from(interval_ms).unwrap_or(u32::MAX),
        },
        Durability::Sync => Storage::Sync,
    })
}

/// A slow-subscriber policy by name.
pub fn parse_policy(text: &str) -> Result<Policy, String> {
    Ok(match text {
        "drop_new" => Policy::DropNew,
        "drop_old" => Policy::DropOld,
        "block" => Policy::Block,
        "disconnect" => Policy::Disconnect,
        "default" => Policy::Default,
        other => {
            return Err(format!(
                "{other:?} is not a policy; use drop_new, drop_old, block or disconnect"
            ));
        }
    })
}

fn duration(flag: &str, text: &str, zero_ok: bool) -> Result<Duration, String> {
    parse_duration(text)
        .filter(|d| zero_ok || !d.is_zero())
        .ok_or_else(|| format!("{flag} {text:?} is not a duration (168h, 30m, 10s)"))
}
