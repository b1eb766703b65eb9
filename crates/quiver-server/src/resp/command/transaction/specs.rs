//! The transaction commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{ALLOW_BUSY, FAST, LOADING, NOSCRIPT, SKIP_SLOWLOG, STALE};
use crate::resp::table::{CommandSpec, Group, Parser};

const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    keys: (i32, i32, i32),
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Transactions,
        name,
        arity,
        flags,
        keys,
        since,
        summary,
        parser,
    )
}

const QUEUE_SAFE: u32 = NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY;

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "multi",
        1,
        QUEUE_SAFE,
        (0, 0, 0),
        "1.2.0",
        "Starts a transaction.",
        |_| wrap(TransactionCommand::Multi),
    ),
    c(
        "exec",
        1,
        NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG,
        (0, 0, 0),
        "1.2.0",
        "Executes all commands in a transaction.",
        |_| wrap(TransactionCommand::Exec),
    ),
    c(
        "discard",
        1,
        QUEUE_SAFE,
        (0, 0, 0),
        "2.0.0",
        "Discards a transaction.",
        |_| wrap(TransactionCommand::Discard),
    ),
    c(
        "watch",
        -2,
        QUEUE_SAFE,
        (1, -1, 1),
        "2.2.0",
        "Monitors changes to keys to determine the execution of a transaction.",
        |a| wrap(TransactionCommand::Watch { keys: a.rest() }),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO"]]),
    c(
        "unwatch",
        1,
        QUEUE_SAFE,
        (0, 0, 0),
        "2.2.0",
        "Forgets about watched keys of a transaction.",
        |_| wrap(TransactionCommand::Unwatch),
    ),
];
