//! The HyperLogLog commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{ADMIN, DENYOOM, FAST, READONLY, WRITE};
use crate::resp::table::{CommandSpec, Group};

pub(crate) const SPECS: &[CommandSpec] = &[
    CommandSpec::new(
        Group::HyperLogLog,
        "pfadd",
        -2,
        WRITE | DENYOOM | FAST,
        (1, 1, 1),
        "2.8.9",
        "Adds the specified elements to the specified HyperLogLog.",
        parse_pfadd,
    )
    .with_syntax("key [element...]")
    .with_key_flags(&[&["RW", "insert"]]),
    CommandSpec::new(
        Group::HyperLogLog,
        "pfcount",
        -2,
        READONLY,
        (1, -1, 1),
        "2.8.9",
        "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
        parse_pfcount,
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RW", "access"]])
    .with_key_note(
        "RW because it may change the internal representation of the key, and propagate to replicas",
    ),
    CommandSpec::new(
        Group::HyperLogLog,
        "pfmerge",
        -2,
        WRITE | DENYOOM,
        (1, -1, 1),
        "2.8.9",
        "Merge N different HyperLogLogs into a single one.",
        parse_pfmerge,
    )
    .with_first_key_apart()
    .with_syntax("destkey [sourcekey...]")
    .with_key_flags(&[&["RW", "access", "insert"], &["RO", "access"]]),
    CommandSpec::new(
        Group::HyperLogLog,
        "pfdebug",
        3,
        WRITE | DENYOOM | ADMIN,
        (2, 2, 1),
        "2.8.9",
        "Internal commands for debugging HyperLogLog values",
        parse_pfdebug,
    )
    .with_syntax("subcommand key")
    .with_key_flags(&[&["RW", "access"]]),
    CommandSpec::new(
        Group::HyperLogLog,
        "pfselftest",
        1,
        ADMIN,
        (0, 0, 0),
        "2.8.9",
        "An internal command for testing HyperLogLog values",
        parse_pfselftest,
    ),
];
