//! The keys commands' entries in the command table.

use super::*;
use crate::resp::command::server::ServerCommand;
use crate::resp::table::flag::{
    DENYOOM, FAST, LOADING, MOVABLE_KEYS, NOSCRIPT, READONLY, STALE, WRITE,
};
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
        Group::Generic,
        name,
        arity,
        flags,
        keys,
        since,
        summary,
        parser,
    )
}

const fn server(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Server,
        name,
        arity,
        flags,
        (0, 0, 0),
        since,
        summary,
        parser,
    )
}

const ONE: (i32, i32, i32) = (1, 1, 1);
const ALL: (i32, i32, i32) = (1, -1, 1);
const NONE: (i32, i32, i32) = (0, 0, 0);
const TWO: (i32, i32, i32) = (1, 2, 1);

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "del",
        -2,
        WRITE,
        ALL,
        "1.0.0",
        "Deletes one or more keys.",
        |a| wrap(KeysCommand::Del { keys: a.rest() }),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RM", "delete"]])
    .with_tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    c(
        "unlink",
        -2,
        WRITE | FAST,
        ALL,
        "4.0.0",
        "Asynchronously deletes one or more keys.",
        |a| wrap(KeysCommand::Unlink { keys: a.rest() }),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RM", "delete"]])
    .with_tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    c(
        "exists",
        -2,
        READONLY | FAST,
        ALL,
        "1.0.0",
        "Determines whether one or more keys exist.",
        |a| wrap(KeysCommand::Exists { keys: a.rest() }),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO"]])
    .with_tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    c(
        "touch",
        -2,
        READONLY | FAST,
        ALL,
        "3.2.1",
        "Returns the number of existing keys out of those specified after updating the time they were last accessed.",
        |a| wrap(KeysCommand::Touch { keys: a.rest() }),
    )
    .with_syntax("key...")
    .with_key_flags(&[&["RO"]])
    .with_tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    c(
        "expire",
        -3,
        WRITE | FAST,
        ONE,
        "1.0.0",
        "Sets the expiration time of a key in seconds.",
        |a| parse_expire(a, 1000, false),
    )
    .with_syntax("key seconds [NX|XX|GT|LT]")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "pexpire",
        -3,
        WRITE | FAST,
        ONE,
        "2.6.0",
        "Sets the expiration time of a key in milliseconds.",
        |a| parse_expire(a, 1, false),
    )
    .with_syntax("key milliseconds [NX|XX|GT|LT]")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "expireat",
        -3,
        WRITE | FAST,
        ONE,
        "1.2.0",
        "Sets the expiration time of a key to a Unix timestamp.",
        |a| parse_expire(a, 1000, true),
    )
    .with_syntax("key unix-time-seconds [NX|XX|GT|LT]")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "pexpireat",
        -3,
        WRITE | FAST,
        ONE,
        "2.6.0",
        "Sets the expiration time of a key to a Unix milliseconds timestamp.",
        |a| parse_expire(a, 1, true),
    )
    .with_syntax("key unix-time-milliseconds [NX|XX|GT|LT]")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "ttl",
        2,
        READONLY | FAST,
        ONE,
        "1.0.0",
        "Returns the expiration time in seconds of a key.",
        |a| {
            wrap(KeysCommand::Ttl {
                key: a.next()?,
                unit: TimeUnit::Seconds,
                absolute: false,
            })
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "pttl",
        2,
        READONLY | FAST,
        ONE,
        "2.6.0",
        "Returns the expiration time in milliseconds of a key.",
        |a| {
            wrap(KeysCommand::Ttl {
                key: a.next()?,
                unit: TimeUnit::Milliseconds,
                absolute: false,
            })
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "expiretime",
        2,
        READONLY | FAST,
        ONE,
        "7.0.0",
        "Returns the expiration time of a key as a Unix timestamp.",
        |a| {
            wrap(KeysCommand::Ttl {
                key: a.next()?,
                unit: TimeUnit::Seconds,
                absolute: true,
            })
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "pexpiretime",
        2,
        READONLY | FAST,
        ONE,
        "7.0.0",
        "Returns the expiration time of a key as a Unix milliseconds timestamp.",
        |a| {
            wrap(KeysCommand::Ttl {
                key: a.next()?,
                unit: TimeUnit::Milliseconds,
                absolute: true,
            })
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]]),
    c(
        "persist",
        2,
        WRITE | FAST,
        ONE,
        "2.2.0",
        "Removes the expiration time of a key.",
        |a| wrap(KeysCommand::Persist { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "type",
        2,
        READONLY | FAST,
        ONE,
        "1.0.0",
        "Determines the type of value stored at a key.",
        |a| wrap(KeysCommand::Type { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]]),
    c(
        "keys",
        2,
        READONLY,
        NONE,
        "1.0.0",
        "Returns all key names that match a pattern.",
        |a| wrap(KeysCommand::Keys { pattern: a.next()? }),
    )
    .with_syntax("pattern")
    .dangerous()
    .with_tips(&["request_policy:all_shards", "nondeterministic_output_order"]),
    c(
        "scan",
        -2,
        READONLY,
        NONE,
        "2.8.0",
        "Iterates over the key names in the database.",
        |a| {
            let cursor = a.next_slice()?;
            wrap(KeysCommand::Scan(parse_scan(cursor, a, true)?))
        },
    )
    .with_syntax("cursor [MATCH pattern] [COUNT count] [TYPE type]")
    .with_tips(&["nondeterministic_output", "request_policy:special"]),
    c(
        "rename",
        3,
        WRITE,
        TWO,
        "1.0.0",
        "Renames a key and overwrites the destination.",
        |a| {
            wrap(KeysCommand::Rename {
                key: a.next()?,
                new_key: a.next()?,
                only_if_new: false,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("key newkey")
    .with_key_flags(&[&["RW", "access", "delete"], &["OW", "update"]]),
    c(
        "renamenx",
        3,
        WRITE | FAST,
        TWO,
        "1.0.0",
        "Renames a key only when the target key name doesn't exist.",
        |a| {
            wrap(KeysCommand::Rename {
                key: a.next()?,
                new_key: a.next()?,
                only_if_new: true,
            })
        },
    )
    .with_first_key_apart()
    .with_syntax("key newkey")
    .with_key_flags(&[&["RW", "access", "delete"], &["OW", "insert"]]),
    c(
        "copy",
        -3,
        WRITE | DENYOOM,
        TWO,
        "6.2.0",
        "Copies the value of a key to a new key.",
        parse_copy,
    )
    .with_first_key_apart()
    .with_syntax("source destination [DB destination-db] [REPLACE]")
    .with_key_flags(&[&["RO", "access"], &["OW", "update"]]),
    c(
        "dump",
        2,
        READONLY,
        ONE,
        "2.6.0",
        "Returns a serialized representation of the value stored at a key.",
        |a| wrap(KeysCommand::Dump { key: a.next()? }),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO", "access"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "migrate",
        -6,
        WRITE | MOVABLE_KEYS,
        (3, 3, 1),
        "2.6.0",
        "Atomically transfers a key from one Redis instance to another.",
        super::migrate::parse,
    )
    .with_syntax("host port key|\"\" destination-db timeout [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key...]")
    .dangerous()
    .with_key_flags(&[&["RW", "access", "delete"], &["RW", "access", "delete", "incomplete"]])
    .with_keys_instead("KEYS", 6, &[("AUTH", 1), ("AUTH2", 2)])
    .with_tips(&["nondeterministic_output"]),
    c(
        "restore",
        -4,
        WRITE | DENYOOM,
        ONE,
        "2.6.0",
        "Creates a key from the serialized representation of a value.",
        parse_restore,
    )
    .with_syntax("key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]")
    .dangerous()
    .with_key_flags(&[&["OW", "update"]]),
    c(
        "sort",
        -2,
        WRITE | DENYOOM | MOVABLE_KEYS,
        ONE,
        "1.0.0",
        "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
        |a| parse_sort(a, false),
    )
    .with_syntax("key [BY pattern] [LIMIT offset count] [GET pattern...] [ASC|DESC] [ALPHA] [STORE destination]")
    .with_acl_category("@set @sortedset @list")
    .dangerous()
    .with_key_flags(&[&["RO", "access"], &["RO", "access"], &["OW", "update"]])
    .with_unknown_keys(&["For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort", "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"], true),
    c(
        "sort_ro",
        -2,
        READONLY | MOVABLE_KEYS,
        ONE,
        "7.0.0",
        "Returns the sorted elements of a list, a set, or a sorted set.",
        |a| parse_sort(a, true),
    )
    .with_syntax("key [BY pattern] [LIMIT offset count] [GET pattern...] [ASC|DESC] [ALPHA]")
    .with_acl_category("@set @sortedset @list")
    .dangerous()
    .with_key_flags(&[&["RO", "access"], &["RO", "access"]])
    .with_unknown_keys(&["For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"], false),
    c(
        "wait",
        3,
        NOSCRIPT,
        (0, 0, 0),
        "3.0.0",
        "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.",
        |a| {
            let replicas = a.i64()?;
            let timeout = quiver_resp::num::parse_i64(a.next_slice()?)
                .ok_or(CommandError::Message("timeout is not an integer or out of range"))?;
            if timeout < 0 {
                return Err(CommandError::Message("timeout is negative"));
            }
            wrap(KeysCommand::Wait {
                replicas,
                timeout_ms: timeout,
            })
        },
    )
    .with_syntax("numreplicas timeout")
    .with_acl_category("@connection")
    .with_tips(&["request_policy:all_shards", "response_policy:agg_min"]),
    c(
        "move",
        3,
        WRITE | FAST,
        ONE,
        "1.0.0",
        "Moves a key to another database.",
        |a| {
            let key = a.next()?;
            // A database number is an `int` to Redis.
            let db = i32::try_from(a.i64()?).map_err(|_| CommandError::OutOfRangeBetween {
                min: i64::from(i32::MIN),
                max: i64::from(i32::MAX),
            })?;
            wrap(KeysCommand::Move {
                key,
                db: i64::from(db),
            })
        },
    )
    .with_syntax("key db")
    .with_key_flags(&[&["RW", "access", "update"]]),
    c(
        "randomkey",
        1,
        READONLY,
        NONE,
        "1.0.0",
        "Returns a random key name from the database.",
        |_| wrap(KeysCommand::RandomKey),
    )
    .with_tips(&["request_policy:all_shards", "nondeterministic_output"]),
    server(
        "dbsize",
        1,
        READONLY | FAST,
        "1.0.0",
        "Returns the number of keys in the database.",
        |_| wrap(KeysCommand::DbSize),
    )
    .with_acl_category("@keyspace")
    .with_tips(&["request_policy:all_shards", "response_policy:agg_sum"]),
    server(
        "flushdb",
        -1,
        WRITE,
        "1.0.0",
        "Removes all keys from the current database.",
        |a| {
            wrap(KeysCommand::FlushDb {
                mode: flush_mode(a)?,
            })
        },
    )
    .with_syntax("[ASYNC|SYNC]")
    .with_acl_category("@keyspace")
    .dangerous()
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    server(
        "swapdb",
        3,
        WRITE | FAST,
        "4.0.0",
        "Swaps two Redis databases.",
        |a| {
            // Database numbers are `int`s to Redis.
            let mut index = |what: &'static str| {
                let arg = a.next_slice()?;
                quiver_resp::num::parse_i64(arg)
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or(CommandError::Message(what))
            };
            let first = index("invalid first DB index")?;
            let second = index("invalid second DB index")?;
            wrap(KeysCommand::SwapDb { first, second })
        },
    )
    .with_syntax("index1 index2")
    .with_acl_category("@keyspace")
    .dangerous(),
    server(
        "flushall",
        -1,
        WRITE,
        "1.0.0",
        "Removes all keys from all databases.",
        |a| {
            wrap(KeysCommand::FlushAll {
                mode: flush_mode(a)?,
            })
        },
    )
    .with_syntax("[ASYNC|SYNC]")
    .with_acl_category("@keyspace")
    .dangerous()
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    c(
        "object",
        -2,
        0,
        NONE,
        "2.2.3",
        "A container for object introspection commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(OBJECT_SUBCOMMANDS),
    server(
        "memory",
        -2,
        0,
        "4.0.0",
        "A container for memory diagnostics commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(MEMORY_SUBCOMMANDS),
];

const OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "object|encoding",
        3,
        READONLY,
        (2, 2, 1),
        "2.2.3",
        "Returns the internal encoding of a Redis object.",
        |a| {
            wrap(KeysCommand::Object(ObjectCommand::Encoding {
                key: a.next()?,
            }))
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "object|freq",
        3,
        READONLY,
        (2, 2, 1),
        "4.0.0",
        "Returns the logarithmic access frequency counter of a Redis object.",
        |a| wrap(KeysCommand::Object(ObjectCommand::Freq { key: a.next()? })),
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "object|idletime",
        3,
        READONLY,
        (2, 2, 1),
        "2.2.3",
        "Returns the time since the last access to a Redis object.",
        |a| {
            wrap(KeysCommand::Object(ObjectCommand::IdleTime {
                key: a.next()?,
            }))
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "object|refcount",
        3,
        READONLY,
        (2, 2, 1),
        "2.2.3",
        "Returns the reference count of a value of a key.",
        |a| {
            wrap(KeysCommand::Object(ObjectCommand::RefCount {
                key: a.next()?,
            }))
        },
    )
    .with_syntax("key")
    .with_key_flags(&[&["RO"]])
    .with_tips(&["nondeterministic_output"]),
    c(
        "object|help",
        2,
        LOADING | STALE,
        NONE,
        "6.2.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(KeysCommand::Object(ObjectCommand::Help)),
    ),
];

const MEMORY_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new(
        Group::Server,
        "memory|usage",
        -3,
        READONLY,
        (2, 2, 1),
        "4.0.0",
        "Estimates the memory usage of a key.",
        parse_memory_usage,
    )
    .with_syntax("key [SAMPLES count]")
    .with_key_flags(&[&["RO"]]),
    server(
        "memory|stats",
        2,
        0,
        "4.0.0",
        "Returns details about memory usage.",
        |_| Ok(Command::Server(ServerCommand::MemoryStats)),
    )
    .with_tips(&[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ]),
    server(
        "memory|doctor",
        2,
        0,
        "4.0.0",
        "Outputs a memory problems report.",
        |_| Ok(Command::Server(ServerCommand::MemoryDoctor)),
    )
    .with_tips(&[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ]),
    server(
        "memory|malloc-stats",
        2,
        0,
        "4.0.0",
        "Returns the allocator statistics.",
        |_| Ok(Command::Server(ServerCommand::MemoryMallocStats)),
    )
    .with_tips(&[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ]),
    server(
        "memory|purge",
        2,
        0,
        "4.0.0",
        "Asks the allocator to release memory.",
        |_| Ok(Command::Server(ServerCommand::MemoryPurge)),
    )
    .with_tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    server(
        "memory|help",
        2,
        LOADING | STALE,
        "4.0.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(KeysCommand::MemoryHelp),
    ),
];
