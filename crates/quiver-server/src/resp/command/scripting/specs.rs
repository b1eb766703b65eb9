//! The scripting commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{
    ALLOW_BUSY, DENYOOM, LOADING, MOVABLE_KEYS, NO_MANDATORY_KEYS, NOSCRIPT, READONLY,
    SKIP_MONITOR, STALE, WRITE,
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
        Group::Scripting,
        name,
        arity,
        flags,
        (0, 0, 0),
        since,
        summary,
        parser,
    )
}

/// EVAL, EVALSHA, FCALL and their read-only forms: `numkeys` at 2, keys after it.
const RUN: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLE_KEYS;
const WORST_RW: &str =
    "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE";
const WORST_RO: &str =
    "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS";
const RW: &[&[&str]] = &[&["RW", "access", "update"]];
const RO: &[&[&str]] = &[&["RO", "access"]];

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "eval",
        -3,
        RUN,
        "2.6.0",
        "Execute a Lua script server side",
        |a| parse_run(a, Callee::Body, false),
    )
    .with_numkeys(2)
    .with_syntax("script numkeys [key...] [arg...]")
    .with_key_flags(RW)
    .with_key_note(WORST_RW),
    c(
        "evalsha",
        -3,
        RUN,
        "2.6.0",
        "Execute a Lua script server side",
        |a| parse_run(a, Callee::Sha, false),
    )
    .with_numkeys(2)
    .with_syntax("sha1 numkeys [key...] [arg...]")
    .with_key_flags(RW),
    c(
        "eval_ro",
        -3,
        RUN | READONLY,
        "7.0.0",
        "Execute a read-only Lua script server side",
        |a| parse_run(a, Callee::Body, true),
    )
    .with_numkeys(2)
    .with_syntax("script numkeys [key...] [arg...]")
    .with_key_flags(RO)
    .with_key_note(WORST_RO),
    c(
        "evalsha_ro",
        -3,
        RUN | READONLY,
        "7.0.0",
        "Execute a read-only Lua script server side",
        |a| parse_run(a, Callee::Sha, true),
    )
    .with_numkeys(2)
    .with_syntax("sha1 numkeys [key...] [arg...]")
    .with_key_flags(RO),
    c("fcall", -3, RUN, "7.0.0", "Invoke a function", |a| {
        parse_run(a, Callee::Function, false)
    })
    .with_numkeys(2)
    .with_syntax("function numkeys [key...] [arg...]")
    .with_key_flags(RW)
    .with_key_note(WORST_RW),
    c(
        "fcall_ro",
        -3,
        RUN | READONLY,
        "7.0.0",
        "Invoke a read-only function",
        |a| parse_run(a, Callee::Function, true),
    )
    .with_numkeys(2)
    .with_syntax("function numkeys [key...] [arg...]")
    .with_key_flags(RO)
    .with_key_note(WORST_RO),
    c(
        "script",
        -2,
        0,
        "2.6.0",
        "A container for Lua scripts management commands",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(SCRIPT_SUBCOMMANDS),
    c(
        "function",
        -2,
        0,
        "7.0.0",
        "A container for function commands",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(FUNCTION_SUBCOMMANDS),
];

const HELP: &str = "Show helpful text about the different subcommands";

const SCRIPT_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "script|debug",
        3,
        NOSCRIPT,
        "3.2.0",
        "Set the debug mode for executed scripts.",
        |_| wrap(ScriptingCommand::ScriptDebug),
    )
    .with_syntax("(YES|SYNC|NO)"),
    c(
        "script|exists",
        -3,
        NOSCRIPT,
        "2.6.0",
        "Check existence of scripts in the script cache.",
        |a| wrap(ScriptingCommand::ScriptExists { shas: a.rest() }),
    )
    .with_syntax("sha1...")
    .with_tips(&[
        "request_policy:all_shards",
        "response_policy:agg_logical_and",
    ]),
    c(
        "script|flush",
        -2,
        NOSCRIPT,
        "2.6.0",
        "Remove all the scripts from the script cache.",
        |a| {
            parse_flush(a, "SCRIPT FLUSH only support SYNC|ASYNC option")?;
            wrap(ScriptingCommand::ScriptFlush)
        },
    )
    .with_syntax("[ASYNC|SYNC]")
    .with_tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    c("script|help", 2, LOADING | STALE, "5.0.0", HELP, |_| {
        wrap(ScriptingCommand::ScriptHelp)
    }),
    c(
        "script|kill",
        2,
        NOSCRIPT | ALLOW_BUSY,
        "2.6.0",
        "Kill the script currently in execution.",
        |_| wrap(ScriptingCommand::ScriptKill),
    )
    .with_tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
    c(
        "script|load",
        3,
        NOSCRIPT | STALE,
        "2.6.0",
        "Load the specified Lua script into the script cache.",
        |a| wrap(ScriptingCommand::ScriptLoad { body: a.next()? }),
    )
    .with_syntax("script")
    .with_tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
];

const FUNCTION_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "function|delete",
        3,
        WRITE | NOSCRIPT,
        "7.0.0",
        "Delete a function by name",
        |a| wrap(ScriptingCommand::FunctionDelete { library: a.next()? }),
    )
    .with_syntax("library-name")
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    c(
        "function|dump",
        2,
        NOSCRIPT,
        "7.0.0",
        "Dump all functions into a serialized binary payload",
        |_| wrap(ScriptingCommand::FunctionDump),
    ),
    c(
        "function|flush",
        -2,
        WRITE | NOSCRIPT,
        "7.0.0",
        "Deleting all functions",
        |a| {
            parse_flush(a, "FUNCTION FLUSH only supports SYNC|ASYNC option")?;
            wrap(ScriptingCommand::FunctionFlush)
        },
    )
    .with_syntax("[ASYNC|SYNC]")
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    c("function|help", 2, LOADING | STALE, "7.0.0", HELP, |_| {
        wrap(ScriptingCommand::FunctionHelp)
    }),
    c(
        "function|kill",
        2,
        NOSCRIPT | ALLOW_BUSY,
        "7.0.0",
        "Kill the function currently in execution.",
        |_| wrap(ScriptingCommand::FunctionKill),
    )
    .with_tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
    c(
        "function|list",
        -2,
        NOSCRIPT,
        "7.0.0",
        "List information about all the functions",
        parse_function_list,
    )
    .with_syntax("[LIBRARYNAME library-name-pattern] [WITHCODE]")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "function|load",
        -3,
        WRITE | DENYOOM | NOSCRIPT,
        "7.0.0",
        "Create a function with the given arguments (name, code, description)",
        parse_function_load,
    )
    .with_syntax("[REPLACE] function-code")
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    c(
        "function|restore",
        -3,
        WRITE | DENYOOM | NOSCRIPT,
        "7.0.0",
        "Restore all the functions on the given payload",
        parse_function_restore,
    )
    .with_syntax("serialized-value [FLUSH|APPEND|REPLACE]")
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    c(
        "function|stats",
        2,
        NOSCRIPT | ALLOW_BUSY,
        "7.0.0",
        "Return information about the function currently running (name, description, duration)",
        |_| wrap(ScriptingCommand::FunctionStats),
    )
    .with_tips(&[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ]),
];
