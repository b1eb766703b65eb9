//! The hash commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{DENYOOM, FAST, READONLY, WRITE};
use crate::resp::table::{CommandSpec, Group, MemberAt, Parser};

const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Hash,
        name,
        arity,
        flags,
        (1, 1, 1),
        since,
        summary,
        parser,
    )
}

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "hset",
        -4,
        WRITE | DENYOOM | FAST,
        "2.0.0",
        "Creates or modifies the value of a field in a hash.",
        |a| {
            wrap(HashCommand::HSet {
                key: a.next()?,
                pairs: a.pairs()?,
                legacy_reply: false,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key (field value)...")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "hmset",
        -4,
        WRITE | DENYOOM | FAST,
        "2.0.0",
        "Sets the values of multiple fields.",
        |a| {
            wrap(HashCommand::HSet {
                key: a.next()?,
                pairs: a.pairs()?,
                legacy_reply: true,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key (field value)...")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "hsetnx",
        4,
        WRITE | DENYOOM | FAST,
        "2.0.0",
        "Sets the value of a field in a hash only when the field doesn't exist.",
        |a| {
            wrap(HashCommand::HSetNx {
                key: a.next()?,
                field: a.next()?,
                value: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field value")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "hget",
        3,
        READONLY | FAST,
        "2.0.0",
        "Returns the value of a field in a hash.",
        |a| {
            wrap(HashCommand::HGet {
                key: a.next()?,
                field: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "hmget",
        -3,
        READONLY | FAST,
        "2.0.0",
        "Returns the values of all fields in a hash.",
        |a| {
            wrap(HashCommand::HMGet {
                key: a.next()?,
                fields: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field...")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "hdel",
        -3,
        WRITE | FAST,
        "2.0.0",
        "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.",
        |a| {
            wrap(HashCommand::HDel {
                key: a.next()?,
                fields: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field...")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "hexists",
        3,
        READONLY | FAST,
        "2.0.0",
        "Determines whether a field exists in a hash.",
        |a| {
            wrap(HashCommand::HExists {
                key: a.next()?,
                field: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field")
    .with_key_flags(&[&["RO"]]),
    c(
        "hlen",
        2,
        READONLY | FAST,
        "2.0.0",
        "Returns the number of fields in a hash.",
        |a| wrap(HashCommand::HLen { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "hgetall",
        2,
        READONLY,
        "2.0.0",
        "Returns all fields and values in a hash.",
        |a| wrap(HashCommand::HGetAll { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "hkeys",
        2,
        READONLY,
        "2.0.0",
        "Returns all fields in a hash.",
        |a| wrap(HashCommand::HKeys { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "hvals",
        2,
        READONLY,
        "2.0.0",
        "Returns all values in a hash.",
        |a| wrap(HashCommand::HVals { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "hincrby",
        4,
        WRITE | DENYOOM | FAST,
        "2.0.0",
        "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.",
        |a| {
            wrap(HashCommand::HIncrBy {
                key: a.next()?,
                field: a.next()?,
                delta: a.i64()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field increment")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "hincrbyfloat",
        4,
        WRITE | DENYOOM | FAST,
        "2.6.0",
        "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.",
        |a| {
            let (key, field, delta) = (a.next()?, a.next()?, a.f64()?);
            if !delta.is_finite() {
                return Err(CommandError::NanOrInfinityArgument);
            }
            wrap(HashCommand::HIncrByFloat { key, field, delta })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field increment")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "hstrlen",
        3,
        READONLY | FAST,
        "3.2.0",
        "Returns the length of the value of a field.",
        |a| {
            wrap(HashCommand::HStrLen {
                key: a.next()?,
                field: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key field")
    .with_key_flags(&[&["RO"]]),
    c(
        "hrandfield",
        -2,
        READONLY,
        "6.2.0",
        "Returns one or more random fields from a hash.",
        parse_hrandfield,
    )
    .with_syntax("key [count [WITHVALUES]]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "hscan",
        -3,
        READONLY,
        "2.8.0",
        "Iterates over fields and values of a hash.",
        |a| {
            let key = a.next()?;
            parse_key_scan(key, a, ValueType::Hash, |key, scan| {
                Command::Hash(HashCommand::HScan { key, scan })
            })
        },
    )
    .with_syntax("key cursor [MATCH pattern] [COUNT count]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
];
