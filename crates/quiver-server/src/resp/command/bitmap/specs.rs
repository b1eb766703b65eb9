//! The bitmap commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{DENYOOM, FAST, READONLY, WRITE};
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
        Group::Bitmap,
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
        "setbit",
        4,
        WRITE | DENYOOM,
        "2.2.0",
        "Sets or clears the bit at offset in the string value stored at key",
        parse_setbit,
    )
    .with_syntax("key offset value")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "getbit",
        3,
        READONLY | FAST,
        "2.2.0",
        "Returns the bit value at offset in the string value stored at key",
        parse_getbit,
    )
    .with_syntax("key offset")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "bitcount",
        -2,
        READONLY,
        "2.6.0",
        "Count set bits in a string",
        parse_bitcount,
    )
    .with_syntax("key [start end [BYTE|BIT]]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "bitpos",
        -3,
        READONLY,
        "2.8.7",
        "Find first bit set or clear in a string",
        parse_bitpos,
    )
    .with_syntax("key bit [start [end [BYTE|BIT]]]")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "bitfield",
        -2,
        WRITE | DENYOOM,
        "3.2.0",
        "Perform arbitrary bitfield integer operations on strings",
        parse_bitfield,
    )
    .with_syntax("key [GET encoding offset|SET encoding offset value|INCRBY encoding offset increment|OVERFLOW (WRAP|SAT|FAIL)]...")
    .with_key_flags(&[&["RW", "access", "update", "variable_flags"]])
    .with_key_note("This command allows both access and modification of the key")
    .with_variable_key_flags(bitfield_key_flags),
    c(
        "bitfield_ro",
        -2,
        READONLY | FAST,
        "6.0.0",
        "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
        parse_bitfield_ro,
    )
    .with_syntax("key [GET encoding offset]...")
    .with_key_flags(&[&["RO", "access"]]),
    CommandSpec::new(
        Group::Bitmap,
        "bitop",
        -4,
        WRITE | DENYOOM,
        (2, -1, 1),
        "2.6.0",
        "Perform bitwise operations between strings",
        parse_bitop,
    )
    .with_first_key_apart()
    .with_syntax("(AND|OR|XOR|NOT) destkey key...")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
];
