//! The stream commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{BLOCKING, DENYOOM, FAST, MOVABLE_KEYS, READONLY, WRITE};
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
        Group::Stream,
        name,
        arity,
        flags,
        (1, 1, 1),
        since,
        summary,
        parser,
    )
}

/// A command whose keys are not at fixed positions.
const fn movable(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Stream,
        name,
        arity,
        flags | MOVABLE_KEYS,
        (0, 0, 0),
        since,
        summary,
        parser,
    )
}

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "xadd",
        -5,
        WRITE | DENYOOM | FAST,
        "5.0.0",
        "Appends a new message to a stream. Creates the key if it doesn't exist.",
        parse_xadd,
    )
    .with_syntax(
        "key [NOMKSTREAM] [(MAXLEN|MINID) [=|~] threshold [LIMIT count]] (*|id) field value...",
    )
    .with_key_flags(&[&["RW", "update"]])
    .with_key_note("UPDATE instead of INSERT because of the optional trimming feature")
    .with_tips(&["nondeterministic_output"]),
    c(
        "xlen",
        2,
        READONLY | FAST,
        "5.0.0",
        "Return the number of messages in a stream.",
        |a| wrap(StreamCommand::Len { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "xrange",
        -4,
        READONLY,
        "5.0.0",
        "Returns the messages from a stream within a range of IDs.",
        |a| parse_range(a, false),
    )
    .with_syntax("key start end [COUNT count]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "xrevrange",
        -4,
        READONLY,
        "5.0.0",
        "Returns the messages from a stream within a range of IDs in reverse order.",
        |a| parse_range(a, true),
    )
    .with_syntax("key end start [COUNT count]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "xdel",
        -3,
        WRITE | FAST,
        "5.0.0",
        "Returns the number of messages after removing them from a stream.",
        parse_xdel,
    )
    .with_syntax("key id...")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "xtrim",
        -4,
        WRITE,
        "5.0.0",
        "Deletes messages from the beginning of a stream.",
        parse_xtrim,
    )
    .with_syntax("key (MAXLEN|MINID) [=|~] threshold [LIMIT count]")
    .with_key_flags(&[&["RW", "delete"]])
    .with_tips(&["nondeterministic_output"]),
    movable(
        "xread",
        -4,
        READONLY | BLOCKING,
        "5.0.0",
        "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.",
        parse_xread,
    )
    .with_syntax("[COUNT count] [BLOCK milliseconds] STREAMS key... id...")
    .with_keys_after("STREAMS")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "xsetid",
        -3,
        WRITE | DENYOOM | FAST,
        "5.0.0",
        "An internal command for replicating stream values.",
        parse_xsetid,
    )
    .with_syntax("key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]")
    .with_key_flags(&[&["RW", "update"]]),
];
