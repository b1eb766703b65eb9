//! The set commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{DENYOOM, FAST, MOVABLE_KEYS, READONLY, WRITE};
use crate::resp::table::{CommandSpec, Group, MemberAt, Parser};

const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    keys: (i32, i32, i32),
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(Group::Set, name, arity, flags, keys, since, summary, parser)
}

const ONE: (i32, i32, i32) = (1, 1, 1);
const ALL: (i32, i32, i32) = (1, -1, 1);

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "sadd",
        -3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Adds one or more members to a set. Creates the key if it doesn't exist.",
        |a| {
            wrap(SetCommand::SAdd {
                key: a.next()?,
                members: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member...")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "srem",
        -3,
        WRITE | FAST,
        ONE,
        "1.0.0",
        "Removes one or more members from a set. Deletes the set if the last member was removed.",
        |a| {
            wrap(SetCommand::SRem {
                key: a.next()?,
                members: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member...")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "smembers",
        2,
        READONLY,
        ONE,
        "1.0.0",
        "Returns all members of a set.",
        |a| wrap(SetCommand::SMembers { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "sismember",
        3,
        READONLY | FAST,
        ONE,
        "1.0.0",
        "Determines whether a member belongs to a set.",
        |a| {
            wrap(SetCommand::SIsMember {
                key: a.next()?,
                member: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member")
    .with_key_flags(&[&["RO"]]),
    c(
        "smismember",
        -3,
        READONLY | FAST,
        ONE,
        "6.2.0",
        "Determines whether multiple members belong to a set.",
        |a| {
            wrap(SetCommand::SMIsMember {
                key: a.next()?,
                members: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member...")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "scard",
        2,
        READONLY | FAST,
        ONE,
        "1.0.0",
        "Returns the number of members in a set.",
        |a| wrap(SetCommand::SCard { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "spop",
        -2,
        WRITE | FAST,
        ONE,
        "1.0.0",
        "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.",
        |a| {
            let key = a.next()?;
            let count = match a.remaining() {
                0 => None,
                1 => Some(a.non_negative(CommandError::NotPositive)?),
                _ => return Err(CommandError::Syntax),
            };
            wrap(SetCommand::SPop { key, count })
        },
    )
    .with_syntax("key [count]")
    .with_key_flags(&[&["RW", "access", "delete"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "srandmember",
        -2,
        READONLY,
        ONE,
        "1.0.0",
        "Get one or multiple random members from a set",
        |a| {
            let key = a.next()?;
            let count = match a.remaining() {
                0 => None,
                1 => Some(random_count(a.next_slice()?)?),
                _ => return Err(CommandError::Syntax),
            };
            wrap(SetCommand::SRandMember { key, count })
        },
    )
    .with_syntax("key [count]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "smove",
        4,
        WRITE | FAST,
        (1, 2, 1),
        "1.0.0",
        "Moves a member from one set to another.",
        |a| {
            wrap(SetCommand::SMove {
                source: a.next()?,
                destination: a.next()?,
                member: a.next()?,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("source destination member")
    .with_key_flags(&[&["RW", "access", "delete"], &["RW", "insert"]]),
    c(
        "sinter",
        -2,
        READONLY,
        ALL,
        "1.0.0",
        "Returns the intersect of multiple sets.",
        |a| combine(a, SetOp::Inter, false),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "sunion",
        -2,
        READONLY,
        ALL,
        "1.0.0",
        "Returns the union of multiple sets.",
        |a| combine(a, SetOp::Union, false),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "sdiff",
        -2,
        READONLY,
        ALL,
        "1.0.0",
        "Returns the difference of multiple sets.",
        |a| combine(a, SetOp::Diff, false),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "sinterstore",
        -3,
        WRITE | DENYOOM,
        ALL,
        "1.0.0",
        "Stores the intersect of multiple sets in a key.",
        |a| combine(a, SetOp::Inter, true),
    )
    .with_first_key_apart()
    .with_syntax("destination key...")
    .with_key_flags(&[&["RW", "update"], &["RO", "access"]]),
    c(
        "sunionstore",
        -3,
        WRITE | DENYOOM,
        ALL,
        "1.0.0",
        "Stores the union of multiple sets in a key.",
        |a| combine(a, SetOp::Union, true),
    )
    .with_first_key_apart()
    .with_syntax("destination key...")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
    c(
        "sdiffstore",
        -3,
        WRITE | DENYOOM,
        ALL,
        "1.0.0",
        "Stores the difference of multiple sets in a key.",
        |a| combine(a, SetOp::Diff, true),
    )
    .with_first_key_apart()
    .with_syntax("destination key...")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
    c(
        "sintercard",
        -3,
        READONLY | MOVABLE_KEYS,
        (0, 0, 0),
        "7.0.0",
        "Returns the number of members of the intersect of multiple sets.",
        parse_sintercard,
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... [LIMIT limit]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "sscan",
        -3,
        READONLY,
        ONE,
        "2.8.0",
        "Iterates over members of a set.",
        |a| {
            let key = a.next()?;
            parse_key_scan(key, a, ValueType::Set, |key, scan| {
                Command::Set(SetCommand::SScan { key, scan })
            })
        },
    )
    .with_syntax("key cursor [MATCH pattern] [COUNT count]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
];
