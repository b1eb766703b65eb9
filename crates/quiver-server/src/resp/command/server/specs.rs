//! The server commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{
    ADMIN, ALLOW_BUSY, FAST, LOADING, NO_ASYNC_LOADING, NO_MULTI, NOSCRIPT, STALE,
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
        Group::Server,
        name,
        arity,
        flags,
        (0, 0, 0),
        since,
        summary,
        parser,
    )
}

const ADMIN_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "info",
        -1,
        LOADING | STALE,
        "1.0.0",
        "Returns information and statistics about the server.",
        |a| wrap(ServerCommand::Info { sections: a.rest() }),
    )
    .with_syntax("[section...]")
    .dangerous()
    .with_tips(&[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ]),
    c(
        "config",
        -2,
        0,
        "2.0.0",
        "A container for server configuration commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(CONFIG_SUBCOMMANDS),
    c(
        "command",
        -1,
        LOADING | STALE,
        "2.8.13",
        "Returns detailed information about all commands.",
        |_| wrap(ServerCommand::Command(CommandCommand::All)),
    )
    .with_subcommands(COMMAND_SUBCOMMANDS)
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "time",
        1,
        LOADING | STALE | FAST,
        "2.6.0",
        "Returns the server time.",
        |_| wrap(ServerCommand::Time),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "shutdown",
        -1,
        ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY,
        "1.0.0",
        "Synchronously save the dataset to disk and then shut down the server",
        parse_shutdown,
    )
    .with_syntax("[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]"),
    c(
        "role",
        1,
        NOSCRIPT | LOADING | STALE | FAST,
        "2.8.12",
        "Returns the replication role.",
        |_| wrap(ServerCommand::Role),
    )
    .with_acl_category("@admin")
    .dangerous(),
    c(
        "replicaof",
        3,
        ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING,
        "5.0.0",
        "Configures a server as replica of another, or promotes it to a master.",
        replicaof,
    )
    .with_syntax("host port"),
    c(
        "slaveof",
        3,
        ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING,
        "1.0.0",
        "Sets a Redis server as a replica of another, or promotes it to being a master.",
        replicaof,
    )
    .with_syntax("host port"),
];

/// `REPLICAOF host port` / `REPLICAOF NO ONE`, with Redis's port check.
fn replicaof(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let host = args.next()?;
    let port = args.next()?;
    if is(&host, "no") && is(&port, "one") {
        return wrap(ServerCommand::ReplicaOf { primary: None });
    }
    let port = quiver_resp::num::parse_i64(&port)
        .and_then(|p| u16::try_from(p).ok())
        .ok_or(CommandError::Message("Invalid master port"))?;
    wrap(ServerCommand::ReplicaOf {
        primary: Some((host, port)),
    })
}

const CONFIG_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "config|get",
        -3,
        ADMIN_FLAGS,
        "2.0.0",
        "Returns the effective values of configuration parameters.",
        |a| config(ConfigCommand::Get { patterns: a.rest() }),
    )
    .with_syntax("parameter..."),
    c(
        "config|set",
        -4,
        ADMIN_FLAGS,
        "2.0.0",
        "Sets configuration parameters in-flight.",
        |a| {
            // Redis answers an odd name/value list with a syntax error.
            if !a.remaining().is_multiple_of(2) {
                return Err(CommandError::Syntax);
            }
            config(ConfigCommand::Set { pairs: a.pairs()? })
        },
    )
    .with_syntax("(parameter value)...")
    .with_tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    c(
        "config|resetstat",
        2,
        ADMIN_FLAGS,
        "2.0.0",
        "Resets the server's statistics.",
        |_| config(ConfigCommand::ResetStat),
    ),
    c(
        "config|rewrite",
        2,
        ADMIN_FLAGS,
        "2.8.0",
        "Persists the effective configuration to file.",
        |_| config(ConfigCommand::Rewrite),
    ),
    c(
        "config|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| config(ConfigCommand::Help),
    ),
];

const COMMAND_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "command|count",
        2,
        LOADING | STALE,
        "2.8.13",
        "Returns a count of commands.",
        |_| command(CommandCommand::Count),
    )
    .with_acl_category("@connection"),
    c(
        "command|info",
        -2,
        LOADING | STALE,
        "2.8.13",
        "Returns information about one, multiple or all commands.",
        |a| command(CommandCommand::Info { names: a.rest() }),
    )
    .with_syntax("[command-name...]")
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "command|docs",
        -2,
        LOADING | STALE,
        "7.0.0",
        "Returns documentary information about one, multiple or all commands.",
        |a| command(CommandCommand::Docs { names: a.rest() }),
    )
    .with_syntax("[command-name...]")
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "command|getkeys",
        -4,
        LOADING | STALE,
        "2.8.13",
        "Extracts the key names from an arbitrary command.",
        |a| command(CommandCommand::GetKeys { args: a.rest() }),
    )
    .with_syntax("command [arg...]")
    .with_acl_category("@connection"),
    c(
        "command|getkeysandflags",
        -4,
        LOADING | STALE,
        "7.0.0",
        "Extracts the key names and access flags for an arbitrary command.",
        |a| command(CommandCommand::GetKeysAndFlags { args: a.rest() }),
    )
    .with_syntax("command [arg...]")
    .with_acl_category("@connection"),
    c(
        "command|list",
        -2,
        LOADING | STALE,
        "7.0.0",
        "Returns a list of command names.",
        parse_command_list,
    )
    .with_syntax("[FILTERBY (MODULE module-name|ACLCAT category|PATTERN pattern)]")
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "command|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| command(CommandCommand::Help),
    )
    .with_acl_category("@connection"),
];
