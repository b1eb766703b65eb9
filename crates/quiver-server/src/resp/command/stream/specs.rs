//! The stream commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{
    BLOCKING, DENYOOM, FAST, LOADING, MOVABLE_KEYS, READONLY, STALE, WRITE,
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
        |a| parse_read(a, false),
    )
    .with_syntax("[COUNT count] [BLOCK milliseconds] STREAMS key... id...")
    .with_keys_after("STREAMS", 1)
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "xgroup",
        -2,
        0,
        "5.0.0",
        "A container for consumer groups commands.",
        |a| Err(a.arity_error()),
    )
    .with_keys((0, 0, 0))
    .with_subcommands(XGROUP_SUBCOMMANDS),
    movable(
        "xreadgroup",
        -7,
        WRITE | BLOCKING,
        "5.0.0",
        "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.",
        |a| parse_read(a, true),
    )
    .with_syntax("GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key... id...")
    .with_keys_after("STREAMS", 4)
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "xack",
        -4,
        WRITE | FAST,
        "5.0.0",
        "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.",
        |a| {
            let (key, group) = (a.next()?, a.next()?);
            wrap(StreamCommand::Ack {
                key,
                group,
                ids: a.rest(),
            })
        },
    )
    .with_syntax("key group id...")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "xpending",
        -3,
        READONLY,
        "5.0.0",
        "Returns the information and entries from a stream consumer group's pending entries list.",
        parse_xpending,
    )
    .with_syntax("key group [[IDLE min-idle-time] start end count [consumer]]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "xclaim",
        -6,
        WRITE | FAST,
        "5.0.0",
        "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.",
        |a| {
            let (key, group, consumer) = (a.next()?, a.next()?, a.next()?);
            wrap(StreamCommand::Claim {
                key,
                group,
                consumer,
                args: a.rest(),
            })
        },
    )
    .with_syntax("key group consumer min-idle-time id... [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]")
    .with_key_flags(&[&["RW", "update"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "xautoclaim",
        -6,
        WRITE | FAST,
        "6.2.0",
        "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.",
        |a| {
            let (key, group, consumer) = (a.next()?, a.next()?, a.next()?);
            wrap(StreamCommand::AutoClaim {
                key,
                group,
                consumer,
                args: a.rest(),
            })
        },
    )
    .with_syntax("key group consumer min-idle-time start [COUNT count] [JUSTID]")
    .with_key_flags(&[&["RW", "delete"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "xinfo",
        -2,
        0,
        "5.0.0",
        "A container for stream introspection commands.",
        |a| Err(a.arity_error()),
    )
    .with_keys((0, 0, 0))
    .with_subcommands(XINFO_SUBCOMMANDS),
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

/// A subcommand of XGROUP: its key is the second argument.
const fn g(
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
        (2, 2, 1),
        since,
        summary,
        parser,
    )
}

const XGROUP_SUBCOMMANDS: &[CommandSpec] = &[
    g(
        "xgroup|delconsumer",
        5,
        WRITE,
        "5.0.0",
        "Deletes a consumer from a consumer group.",
        |a| {
            let (key, group, consumer) = (a.next()?, a.next()?, a.next()?);
            wrap(StreamCommand::Group(GroupCommand::DelConsumer {
                key,
                group,
                consumer,
            }))
        },
    )
    .with_syntax("key group consumer")
    .with_key_flags(&[&["RW", "delete"]]),
    g(
        "xgroup|create",
        -5,
        WRITE | DENYOOM,
        "5.0.0",
        "Creates a consumer group.",
        parse_xgroup_create,
    )
    .with_syntax("key group (id|$) [MKSTREAM] [ENTRIESREAD entries-read]")
    .with_key_flags(&[&["RW", "insert"]]),
    g(
        "xgroup|createconsumer",
        5,
        WRITE | DENYOOM,
        "6.2.0",
        "Creates a consumer in a consumer group.",
        |a| {
            let (key, group, consumer) = (a.next()?, a.next()?, a.next()?);
            wrap(StreamCommand::Group(GroupCommand::CreateConsumer {
                key,
                group,
                consumer,
            }))
        },
    )
    .with_syntax("key group consumer")
    .with_key_flags(&[&["RW", "insert"]]),
    g(
        "xgroup|setid",
        -5,
        WRITE,
        "5.0.0",
        "Sets the last-delivered ID of a consumer group.",
        parse_xgroup_setid,
    )
    .with_syntax("key group (id|$) [ENTRIESREAD entries-read]")
    .with_key_flags(&[&["RW", "update"]]),
    g(
        "xgroup|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(StreamCommand::Group(GroupCommand::Help)),
    )
    .with_keys((0, 0, 0)),
    g(
        "xgroup|destroy",
        4,
        WRITE,
        "5.0.0",
        "Destroys a consumer group.",
        |a| {
            let (key, group) = (a.next()?, a.next()?);
            wrap(StreamCommand::Group(GroupCommand::Destroy { key, group }))
        },
    )
    .with_syntax("key group")
    .with_key_flags(&[&["RW", "delete"]]),
];

const XINFO_SUBCOMMANDS: &[CommandSpec] = &[
    g(
        "xinfo|consumers",
        4,
        READONLY,
        "5.0.0",
        "Returns a list of the consumers in a consumer group.",
        |a| {
            let (key, group) = (a.next()?, a.next()?);
            wrap(StreamCommand::Info(InfoCommand::Consumers { key, group }))
        },
    )
    .with_syntax("key group")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    g(
        "xinfo|stream",
        -3,
        READONLY,
        "5.0.0",
        "Returns information about a stream.",
        parse_xinfo_stream,
    )
    .with_syntax("key [FULL [COUNT count]]")
    .with_key_flags(&[&["RO", "access"]]),
    g(
        "xinfo|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(StreamCommand::Info(InfoCommand::Help)),
    )
    .with_keys((0, 0, 0)),
    g(
        "xinfo|groups",
        3,
        READONLY,
        "5.0.0",
        "Returns a list of the consumer groups of a stream.",
        |a| {
            let key = a.next()?;
            wrap(StreamCommand::Info(InfoCommand::Groups { key }))
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]]),
];
