//! The string commands' entries in the command table.

use quiver_resp::num::parse_f64;

use super::*;
use crate::resp::table::flag::{DENYOOM, FAST, READONLY, WRITE};
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
        Group::String,
        name,
        arity,
        flags,
        keys,
        since,
        summary,
        parser,
    )
}

const ONE: (i32, i32, i32) = (1, 1, 1);

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "get",
        2,
        READONLY | FAST,
        ONE,
        "1.0.0",
        "Returns the string value of a key.",
        |a| wrap(StringCommand::Get { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "set",
        -3,
        WRITE | DENYOOM,
        ONE,
        "1.0.0",
        "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
        parse_set,
    )
    .with_syntax("key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]")
    .with_key_flags(&[&["RW", "access", "update", "variable_flags"]])
    .with_key_note("RW and ACCESS due to the optional `GET` argument")
    .with_variable_key_flags(set_key_flags),
    c(
        "setnx",
        3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Set the string value of a key only when the key doesn't exist.",
        |a| {
            wrap(StringCommand::SetNx {
                key: a.next()?,
                value: a.next()?,
            })
        },
    )
    .with_syntax("key value")
    .with_key_flags(&[&["OW", "insert"]]),
    c(
        "setex",
        4,
        WRITE | DENYOOM,
        ONE,
        "2.0.0",
        "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
        |a| parse_setex(a, Unit::Seconds),
    )
    .with_syntax("key seconds value")
    .with_key_flags(&[&["OW", "update"]]),
    c(
        "psetex",
        4,
        WRITE | DENYOOM,
        ONE,
        "2.6.0",
        "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.",
        |a| parse_setex(a, Unit::Milliseconds),
    )
    .with_syntax("key milliseconds value")
    .with_key_flags(&[&["OW", "update"]]),
    c(
        "mget",
        -2,
        READONLY | FAST,
        (1, -1, 1),
        "1.0.0",
        "Atomically returns the string values of one or more keys.",
        |a| wrap(StringCommand::MGet { keys: a.rest() }),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["request_policy:multi_shard"]),
    c(
        "mset",
        -3,
        WRITE | DENYOOM,
        (1, -1, 2),
        "1.0.1",
        "Atomically creates or modifies the string values of one or more keys.",
        |a| wrap(StringCommand::MSet { pairs: a.pairs()? }),
    )
    .with_syntax("(key value)...")
    .with_key_flags(&[&["OW", "update"]])
    .with_tips(&["request_policy:multi_shard", "response_policy:all_succeeded"]),
    c(
        "msetnx",
        -3,
        WRITE | DENYOOM,
        (1, -1, 2),
        "1.0.1",
        "Atomically modifies the string values of one or more keys only when all keys don't exist.",
        |a| wrap(StringCommand::MSetNx { pairs: a.pairs()? }),
    )
    .with_syntax("(key value)...")
    .with_key_flags(&[&["OW", "insert"]])
    .with_tips(&["request_policy:multi_shard", "response_policy:agg_min"]),
    c(
        "getset",
        3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Returns the previous string value of a key after setting it to a new value.",
        |a| {
            wrap(StringCommand::GetSet {
                key: a.next()?,
                value: a.next()?,
            })
        },
    )
    .with_syntax("key value")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "lcs",
        -3,
        READONLY,
        (1, 2, 1),
        "7.0.0",
        "Finds the longest common substring.",
        parse_lcs,
    )
    .with_syntax("key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "getdel",
        2,
        WRITE | FAST,
        ONE,
        "6.2.0",
        "Returns the string value of a key after deleting the key.",
        |a| wrap(StringCommand::GetDel { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "getex",
        -2,
        WRITE | FAST,
        ONE,
        "6.2.0",
        "Returns the string value of a key after setting its expiration time.",
        parse_getex,
    )
    .with_syntax("key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|PERSIST]")
    .with_key_flags(&[&["RW", "access", "update"]])
    .with_key_note("RW and UPDATE because it changes the TTL"),
    c(
        "append",
        3,
        WRITE | DENYOOM | FAST,
        ONE,
        "2.0.0",
        "Appends a string to the value of a key. Creates the key if it doesn't exist.",
        |a| {
            wrap(StringCommand::Append {
                key: a.next()?,
                value: a.next()?,
            })
        },
    )
    .with_syntax("key value")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "strlen",
        2,
        READONLY | FAST,
        ONE,
        "2.2.0",
        "Returns the length of a string value.",
        |a| wrap(StringCommand::StrLen { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "getrange",
        4,
        READONLY,
        ONE,
        "2.4.0",
        "Returns a substring of the string stored at a key.",
        parse_getrange,
    )
    .with_syntax("key start end")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "substr",
        4,
        READONLY,
        ONE,
        "1.0.0",
        "Returns a substring from a string value.",
        parse_getrange,
    )
    .with_syntax("key start end")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "setrange",
        4,
        WRITE | DENYOOM,
        ONE,
        "2.2.0",
        "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.",
        |a| {
            let key = a.next()?;
            let offset = a.i64()?;
            if offset < 0 {
                return Err(CommandError::Message("offset is out of range"));
            }
            wrap(StringCommand::SetRange {
                key,
                offset,
                value: a.next()?,
            })
        },
    )
    .with_syntax("key offset value")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "incr",
        2,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
        |a| {
            wrap(StringCommand::IncrBy {
                key: a.next()?,
                delta: 1,
            })
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "decr",
        2,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
        |a| {
            wrap(StringCommand::IncrBy {
                key: a.next()?,
                delta: -1,
            })
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "incrby",
        3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
        |a| {
            wrap(StringCommand::IncrBy {
                key: a.next()?,
                delta: a.i64()?,
            })
        },
    )
    .with_syntax("key increment")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "decrby",
        3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.",
        |a| {
            let key = a.next()?;
            let delta = a
                .i64()?
                .checked_neg()
                .ok_or(CommandError::Message("decrement would overflow"))?;
            wrap(StringCommand::IncrBy { key, delta })
        },
    )
    .with_syntax("key decrement")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "incrbyfloat",
        3,
        WRITE | DENYOOM | FAST,
        ONE,
        "2.6.0",
        "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
        |a| {
            wrap(StringCommand::IncrByFloat {
                key: a.next()?,
                delta: parse_f64(a.next_slice()?),
            })
        },
    )
    .with_syntax("key increment")
    .with_key_flags(&[&["RW", "access", "update"]]),
];
