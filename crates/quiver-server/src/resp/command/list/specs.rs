//! The list commands' entries in the command table.

use quiver_resp::num::parse_i64;

use super::*;
use crate::resp::table::flag::{BLOCKING, DENYOOM, FAST, MOVABLE_KEYS, NOSCRIPT, READONLY, WRITE};
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
        Group::List,
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
const TWO: (i32, i32, i32) = (1, 2, 1);

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "lpush",
        -3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Prepends one or more elements to a list. Creates the key if it doesn't exist.",
        |a| push(a, End::Left, false),
    )
    .with_syntax("key element...")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "rpush",
        -3,
        WRITE | DENYOOM | FAST,
        ONE,
        "1.0.0",
        "Appends one or more elements to a list. Creates the key if it doesn't exist.",
        |a| push(a, End::Right, false),
    )
    .with_syntax("key element...")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "lpushx",
        -3,
        WRITE | DENYOOM | FAST,
        ONE,
        "2.2.0",
        "Prepends one or more elements to a list only when the list exists.",
        |a| push(a, End::Left, true),
    )
    .with_syntax("key element...")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "rpushx",
        -3,
        WRITE | DENYOOM | FAST,
        ONE,
        "2.2.0",
        "Appends an element to a list only when the list exists.",
        |a| push(a, End::Right, true),
    )
    .with_syntax("key element...")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "lpop",
        -2,
        WRITE | FAST,
        ONE,
        "1.0.0",
        "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.",
        |a| pop(a, End::Left),
    )
    .with_syntax("key [count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "rpop",
        -2,
        WRITE | FAST,
        ONE,
        "1.0.0",
        "Returns and removes the last elements of a list. Deletes the list if the last element was popped.",
        |a| pop(a, End::Right),
    )
    .with_syntax("key [count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "llen",
        2,
        READONLY | FAST,
        ONE,
        "1.0.0",
        "Returns the length of a list.",
        |a| wrap(ListCommand::LLen { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "lrange",
        4,
        READONLY,
        ONE,
        "1.0.0",
        "Returns a range of elements from a list.",
        |a| {
            wrap(ListCommand::LRange {
                key: a.next()?,
                start: a.i64()?,
                stop: a.i64()?,
            })
        },
    )
    .with_syntax("key start stop")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "lindex",
        3,
        READONLY,
        ONE,
        "1.0.0",
        "Returns an element from a list by its index.",
        |a| {
            wrap(ListCommand::LIndex {
                key: a.next()?,
                index: parse_i64(a.next_slice()?),
            })
        },
    )
    .with_syntax("key index")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "lset",
        4,
        WRITE | DENYOOM,
        ONE,
        "1.0.0",
        "Sets the value of an element in a list by its index.",
        |a| {
            wrap(ListCommand::LSet {
                key: a.next()?,
                index: parse_i64(a.next_slice()?),
                element: a.next()?,
            })
        },
    )
    .with_syntax("key index element")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "linsert",
        5,
        WRITE | DENYOOM,
        ONE,
        "2.2.0",
        "Inserts an element before or after another element in a list.",
        |a| {
            let key = a.next()?;
            let place = a.next_slice()?;
            let before = if is(place, "before") {
                true
            } else if is(place, "after") {
                false
            } else {
                return Err(CommandError::Syntax);
            };
            wrap(ListCommand::LInsert {
                key,
                before,
                pivot: a.next()?,
                element: a.next()?,
            })
        },
    )
    .with_syntax("key (BEFORE|AFTER) pivot element")
    .with_key_flags(&[&["RW", "insert"]]),
    c(
        "lrem",
        4,
        WRITE,
        ONE,
        "1.0.0",
        "Removes elements from a list. Deletes the list if the last element was removed.",
        |a| {
            wrap(ListCommand::LRem {
                key: a.next()?,
                count: a.i64()?,
                element: a.next()?,
            })
        },
    )
    .with_syntax("key count element")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "ltrim",
        4,
        WRITE,
        ONE,
        "1.0.0",
        "Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
        |a| {
            wrap(ListCommand::LTrim {
                key: a.next()?,
                start: a.i64()?,
                stop: a.i64()?,
            })
        },
    )
    .with_syntax("key start stop")
    .with_key_flags(&[&["RW", "delete"]]),
    c(
        "lpos",
        -3,
        READONLY,
        ONE,
        "6.0.6",
        "Returns the index of matching elements in a list.",
        parse_lpos,
    )
    .with_syntax("key element [RANK rank] [COUNT num-matches] [MAXLEN len]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "lmove",
        5,
        WRITE | DENYOOM,
        TWO,
        "6.2.0",
        "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.",
        |a| {
            let (source, destination) = (a.next()?, a.next()?);
            let (from, to) = (end(a.next_slice()?)?, end(a.next_slice()?)?);
            wrap(ListCommand::LMove {
                source,
                destination,
                from,
                to,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("source destination (LEFT|RIGHT) (LEFT|RIGHT)")
    .with_key_flags(&[&["RW", "access", "delete"], &["RW", "insert"]]),
    c(
        "rpoplpush",
        3,
        WRITE | DENYOOM,
        TWO,
        "1.2.0",
        "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.",
        |a| {
            wrap(ListCommand::LMove {
                source: a.next()?,
                destination: a.next()?,
                from: End::Right,
                to: End::Left,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("source destination")
    .with_key_flags(&[&["RW", "access", "delete"], &["RW", "insert"]]),
    c(
        "lmpop",
        -4,
        WRITE | MOVABLE_KEYS,
        (0, 0, 0),
        "7.0.0",
        "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.",
        |a| multi_pop(a, false),
    )
    .with_numkeys(1)
    .with_syntax("numkeys key... (LEFT|RIGHT) [COUNT count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "blmpop",
        -5,
        WRITE | BLOCKING | MOVABLE_KEYS,
        (0, 0, 0),
        "7.0.0",
        "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
        |a| multi_pop(a, true),
    )
    .with_numkeys(2)
    .with_syntax("timeout numkeys key... (LEFT|RIGHT) [COUNT count]")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "blpop",
        -3,
        WRITE | NOSCRIPT | BLOCKING,
        (1, -2, 1),
        "2.0.0",
        "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
        |a| blocking_pop(a, End::Left),
    )
    .with_syntax("key... timeout")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "brpop",
        -3,
        WRITE | NOSCRIPT | BLOCKING,
        (1, -2, 1),
        "2.0.0",
        "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
        |a| blocking_pop(a, End::Right),
    )
    .with_syntax("key... timeout")
    .with_key_flags(&[&["RW", "access", "delete"]]),
    c(
        "blmove",
        6,
        WRITE | DENYOOM | NOSCRIPT | BLOCKING,
        TWO,
        "6.2.0",
        "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.",
        |a| {
            let (source, destination) = (a.next()?, a.next()?);
            let (from, to) = (end(a.next_slice()?)?, end(a.next_slice()?)?);
            let timeout_ms = timeout_ms(a.next_slice()?)?;
            wrap(ListCommand::BlMove {
                source,
                destination,
                from,
                to,
                timeout_ms,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("source destination (LEFT|RIGHT) (LEFT|RIGHT) timeout")
    .with_key_flags(&[&["RW", "access", "delete"], &["RW", "insert"]]),
    c(
        "brpoplpush",
        4,
        WRITE | DENYOOM | NOSCRIPT | BLOCKING,
        TWO,
        "2.2.0",
        "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.",
        |a| {
            let (source, destination) = (a.next()?, a.next()?);
            let timeout_ms = timeout_ms(a.next_slice()?)?;
            wrap(ListCommand::BlMove {
                source,
                destination,
                from: End::Right,
                to: End::Left,
                timeout_ms,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("source destination timeout")
    .with_key_flags(&[&["RW", "access", "delete"], &["RW", "insert"]]),
];
