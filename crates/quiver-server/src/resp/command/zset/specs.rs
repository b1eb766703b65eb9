//! The zset commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{BLOCKING, DENYOOM, FAST, MOVABLE_KEYS, NOSCRIPT, READONLY, WRITE};
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
    CommandSpec::new(
        Group::SortedSet,
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
const NONE: (i32, i32, i32) = (0, 0, 0);

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "zadd",
        -4,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.2.0",
        "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.",
        parse_zadd,
    )
    .with_member(MemberAt::Find(zadd_member))
    .with_syntax("key [NX|XX] [GT|LT] [CH] [INCR] (score member)...")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "zrem",
        -3,
        WRITE | FAST,
        ONE,
        "1.2.0",
        "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.",
        |a| {
            wrap(SortedSetCommand::ZRem {
                key: a.next()?,
                members: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member...")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "zscore",
        3,
        READONLY | FAST,
        ONE,
        "1.2.0",
        "Returns the score of a member in a sorted set.",
        |a| {
            wrap(SortedSetCommand::ZScore {
                key: a.next()?,
                member: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zmscore",
        -3,
        READONLY | FAST,
        ONE,
        "6.2.0",
        "Returns the score of one or more members in a sorted set.",
        |a| {
            wrap(SortedSetCommand::ZMScore {
                key: a.next()?,
                members: a.rest(),
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member...")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zincrby",
        4,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.2.0",
        "Increments the score of a member in a sorted set.",
        |a| {
            wrap(SortedSetCommand::ZIncrBy {
                key: a.next()?,
                increment: a.f64()?,
                member: a.next()?,
            })
        },
    )
    .with_member(MemberAt::At(3))
    .with_syntax("key increment member")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "zcard",
        2,
        READONLY | FAST,
        ONE,
        "1.2.0",
        "Returns the number of members in a sorted set.",
        |a| wrap(SortedSetCommand::ZCard { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "zcount",
        4,
        READONLY | FAST,
        ONE,
        "2.0.0",
        "Returns the count of members in a sorted set that have scores within a range.",
        |a| {
            let key = a.next()?;
            let (min, max) = score_range(a.next_slice()?, a.next_slice()?)?;
            wrap(SortedSetCommand::ZCount { key, min, max })
        },
    )
    .with_syntax("key min max")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zlexcount",
        4,
        READONLY | FAST,
        ONE,
        "2.8.9",
        "Returns the number of members in a sorted set within a lexicographical range.",
        |a| {
            let key = a.next()?;
            let (min, max) = lex_range(a.next()?, a.next()?)?;
            wrap(SortedSetCommand::ZLexCount { key, min, max })
        },
    )
    .with_syntax("key min max")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrange",
        -4,
        READONLY,
        ONE,
        "1.2.0",
        "Returns members in a sorted set within a range of indexes.",
        |a| zrange(a, false, None),
    )
    .with_syntax("key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrangebyscore",
        -4,
        READONLY,
        ONE,
        "1.0.5",
        "Returns members in a sorted set within a range of scores.",
        |a| zrange(a, false, Some((RangeKind::Score, false))),
    )
    .with_syntax("key min max [WITHSCORES] [LIMIT offset count]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrevrangebyscore",
        -4,
        READONLY,
        ONE,
        "2.2.0",
        "Returns members in a sorted set within a range of scores in reverse order.",
        |a| zrange(a, false, Some((RangeKind::Score, true))),
    )
    .with_syntax("key max min [WITHSCORES] [LIMIT offset count]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrangebylex",
        -4,
        READONLY,
        ONE,
        "2.8.9",
        "Returns members in a sorted set within a lexicographical range.",
        |a| zrange(a, false, Some((RangeKind::Lex, false))),
    )
    .with_syntax("key min max [LIMIT offset count]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrevrangebylex",
        -4,
        READONLY,
        ONE,
        "2.8.9",
        "Returns members in a sorted set within a lexicographical range in reverse order.",
        |a| zrange(a, false, Some((RangeKind::Lex, true))),
    )
    .with_syntax("key max min [LIMIT offset count]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrevrange",
        -4,
        READONLY,
        ONE,
        "1.2.0",
        "Returns members in a sorted set within a range of indexes in reverse order.",
        |a| zrange(a, false, Some((RangeKind::Rank, true))),
    )
    .with_syntax("key start stop [WITHSCORES]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrangestore",
        -5,
        WRITE | DENYOOM,
        (1, 2, 1),
        "6.2.0",
        "Stores a range of members from sorted set in a key.",
        |a| zrange(a, true, None),
    )
    .with_first_key_apart()
    .with_syntax("dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
    c(
        "zrank",
        3,
        READONLY | FAST,
        ONE,
        "2.0.0",
        "Returns the index of a member in a sorted set ordered by ascending scores.",
        |a| {
            wrap(SortedSetCommand::ZRank {
                key: a.next()?,
                member: a.next()?,
                rev: false,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zrevrank",
        3,
        READONLY | FAST,
        ONE,
        "2.0.0",
        "Returns the index of a member in a sorted set ordered by descending scores.",
        |a| {
            wrap(SortedSetCommand::ZRank {
                key: a.next()?,
                member: a.next()?,
                rev: true,
            })
        },
    )
    .with_member(MemberAt::At(2))
    .with_syntax("key member")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zpopmin",
        -2,
        WRITE | FAST,
        ONE,
        "5.0.0",
        "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.",
        |a| zpop(a, false),
    )
    .with_syntax("key [count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "zpopmax",
        -2,
        WRITE | FAST,
        ONE,
        "5.0.0",
        "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.",
        |a| zpop(a, true),
    )
    .with_syntax("key [count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "zunionstore",
        -4,
        WRITE | DENYOOM | MOVABLE_KEYS,
        ONE,
        "2.0.0",
        "Stores the union of multiple sorted sets in a key.",
        |a| zstore(a, ZSetOp::Union, true),
    )
    .with_numkeys(2)
    .with_syntax("destination numkeys key... [WEIGHTS weight...] [AGGREGATE (SUM|MIN|MAX)]")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
    c(
        "zinterstore",
        -4,
        WRITE | DENYOOM | MOVABLE_KEYS,
        ONE,
        "2.0.0",
        "Stores the intersect of multiple sorted sets in a key.",
        |a| zstore(a, ZSetOp::Inter, true),
    )
    .with_numkeys(2)
    .with_syntax("destination numkeys key... [WEIGHTS weight...] [AGGREGATE (SUM|MIN|MAX)]")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
    c(
        "zdiffstore",
        -4,
        WRITE | DENYOOM | MOVABLE_KEYS,
        ONE,
        "6.2.0",
        "Stores the difference of multiple sorted sets in a key.",
        |a| zstore(a, ZSetOp::Diff, true),
    )
    .with_numkeys(2)
    .with_syntax("destination numkeys key...")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
    c(
        "bzpopmin",
        -3,
        WRITE | NOSCRIPT | BLOCKING | FAST,
        (1, -2, 1),
        "5.0.0",
        "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
        |a| blocking_pop(a, false),
    )
    .with_syntax("key... timeout")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "bzpopmax",
        -3,
        WRITE | NOSCRIPT | BLOCKING | FAST,
        (1, -2, 1),
        "5.0.0",
        "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.",
        |a| blocking_pop(a, true),
    )
    .with_syntax("key... timeout")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "zmpop",
        -4,
        WRITE | MOVABLE_KEYS,
        NONE,
        "7.0.0",
        "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.",
        |a| multi_pop(a, false),
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... (MIN|MAX) [COUNT count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "bzmpop",
        -5,
        WRITE | BLOCKING | MOVABLE_KEYS,
        NONE,
        "7.0.0",
        "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
        |a| multi_pop(a, true),
    )
    .with_numkeys(2)
    .with_syntax("timeout numkeys key... (MIN|MAX) [COUNT count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "zrandmember",
        -2,
        READONLY,
        ONE,
        "6.2.0",
        "Returns one or more random members from a sorted set.",
        zrandmember,
    )
    .with_syntax("key [count [WITHSCORES]]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "zunion",
        -3,
        READONLY | MOVABLE_KEYS,
        NONE,
        "6.2.0",
        "Returns the union of multiple sorted sets.",
        |a| zstore(a, ZSetOp::Union, false),
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... [WEIGHTS weight...] [AGGREGATE (SUM|MIN|MAX)] [WITHSCORES]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zinter",
        -3,
        READONLY | MOVABLE_KEYS,
        NONE,
        "6.2.0",
        "Returns the intersect of multiple sorted sets.",
        |a| zstore(a, ZSetOp::Inter, false),
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... [WEIGHTS weight...] [AGGREGATE (SUM|MIN|MAX)] [WITHSCORES]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zdiff",
        -3,
        READONLY | MOVABLE_KEYS,
        NONE,
        "6.2.0",
        "Returns the difference between multiple sorted sets.",
        |a| zstore(a, ZSetOp::Diff, false),
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... [WITHSCORES]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zintercard",
        -3,
        READONLY | MOVABLE_KEYS,
        NONE,
        "7.0.0",
        "Returns the number of members of the intersect of multiple sorted sets.",
        zintercard,
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... [LIMIT limit]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "zremrangebyscore",
        4,
        WRITE,
        ONE,
        "1.2.0",
        "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.",
        |a| {
            let key = a.next()?;
            let (min, max) = score_range(a.next_slice()?, a.next_slice()?)?;
            wrap(SortedSetCommand::ZRemRange {
                key,
                range: ZRangeBy::Score { min, max },
            })
        },
    )
    .with_syntax("key min max")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "zremrangebyrank",
        4,
        WRITE,
        ONE,
        "2.0.0",
        "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.",
        |a| {
            let key = a.next()?;
            let (start, stop) = (a.i64()?, a.i64()?);
            wrap(SortedSetCommand::ZRemRange {
                key,
                range: ZRangeBy::Rank { start, stop },
            })
        },
    )
    .with_syntax("key start stop")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "zremrangebylex",
        4,
        WRITE,
        ONE,
        "2.8.9",
        "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.",
        |a| {
            let key = a.next()?;
            let (min, max) = lex_range(a.next()?, a.next()?)?;
            wrap(SortedSetCommand::ZRemRange {
                key,
                range: ZRangeBy::Lex { min, max },
            })
        },
    )
    .with_syntax("key min max")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "zscan",
        -3,
        READONLY,
        ONE,
        "2.8.0",
        "Iterates over members and scores of a sorted set.",
        |a| {
            let key = a.next()?;
            parse_key_scan(key, a, ValueType::ZSet, |key, scan| {
                Command::SortedSet(SortedSetCommand::ZScan { key, scan })
            })
        },
    )
    .with_syntax("key cursor [MATCH pattern] [COUNT count]")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
];
