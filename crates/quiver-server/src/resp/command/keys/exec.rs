//! Commands on keys of any type: deletion, existence, expiry, type, KEYS and
//! SCAN, renames and copies, RANDOMKEY, DBSIZE, the flushes, OBJECT and
//! MEMORY USAGE.

use bytes::BytesMut;
use quiver_core::cache::{Cache, Garbage, SortOutput};
use quiver_core::cache::{ExpireCondition as CacheCondition, OpError, ValueType};
use quiver_resp::CommandError;
use quiver_resp::encode::{write_bulk, write_integer, write_simple};

use crate::resp::command::KeysCommand;
use crate::resp::command::exec::{DataCtx, Outcome};
use crate::resp::command::exec::{
    bulk_or_null, count, error, flag, help, ok, refs, reply, scan_count, scan_head,
};
use crate::resp::command::keys::{
    Expire, ExpireCondition, FlushMode, ObjectCommand, Scan, TimeUnit,
};

/// `OBJECT HELP`, Redis 7's text for the subcommands served here.
const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access logarithmic access frequency counter of a <key>.",
    "IDLETIME <key>",
    "    Return the idle time of a <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Print this help.",
];

/// `MEMORY HELP`, Redis 7's text.
const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// Runs a keys command and writes its reply.
/// `WAIT`: there are no replicas, so none acknowledges. Asked for none (or inside a
/// transaction) it answers 0 at once; asked for some, it answers 0 when the timeout
/// passes, as Redis does with no replica connected.
fn wait(ctx: &mut DataCtx<'_, '_>, replicas: i64, timeout_ms: i64, out: &mut BytesMut) -> Outcome {
    if replicas <= 0 || ctx.in_transaction {
        write_integer(out, 0);
        return Outcome::Done;
    }
    Outcome::Wait {
        timeout_ms: u64::try_from(timeout_ms).ok().filter(|ms| *ms > 0),
    }
}

pub(crate) fn execute(
    ctx: &mut DataCtx<'_, '_>,
    command: KeysCommand,
    out: &mut BytesMut,
) -> Outcome {
    let now_ms = ctx.now_ms;
    match command {
        KeysCommand::Wait {
            replicas,
            timeout_ms,
        } => return wait(ctx, replicas, timeout_ms, out),
        KeysCommand::ScanRefused { key, kind, error } => match ctx.db.key_type(&key, now_ms) {
            None => scan_head(out, 0, 0),
            Some(found) if found != kind => self::error(out, &OpError::WrongType),
            Some(_) => self::error(out, &error),
        },
        KeysCommand::Del { keys } => count(out, ctx.db.del(&refs(&keys), now_ms)),
        KeysCommand::Unlink { keys } => {
            let (removed, garbage) = ctx.db.unlink(&refs(&keys), now_ms);
            ctx.cache.free_later(garbage);
            count(out, removed);
        }
        KeysCommand::Exists { keys } => count(out, ctx.db.exists(&refs(&keys), now_ms)),
        KeysCommand::Touch { keys } => count(out, ctx.db.touch(&refs(&keys), now_ms)),
        KeysCommand::Expire(expire) => run_expire(ctx, &expire, out),
        KeysCommand::Ttl {
            key,
            unit,
            absolute,
        } => {
            let value = match (absolute, unit) {
                (false, TimeUnit::Seconds) => ctx.db.ttl(&key, now_ms),
                (false, TimeUnit::Milliseconds) => ctx.db.pttl(&key, now_ms),
                (true, TimeUnit::Milliseconds) => ctx.db.expire_time_ms(&key, now_ms),
                (true, TimeUnit::Seconds) => match ctx.db.expire_time_ms(&key, now_ms) {
                    ms if ms < 0 => ms,
                    ms => (ms + 500) / 1000,
                },
            };
            write_integer(out, value);
        }
        KeysCommand::Persist { key } => flag(out, ctx.db.persist(&key, now_ms)),
        KeysCommand::Type { key } => {
            let name = ctx.db.type_of(&key, now_ms).map_or("none", ValueType::name);
            write_simple(out, name.as_bytes());
        }
        KeysCommand::Keys { pattern } => {
            let keys = ctx.db.keys(&pattern, now_ms);
            quiver_resp::encode::write_array_len(out, keys.len());
            keys.iter().for_each(|key| write_bulk(out, key));
        }
        KeysCommand::Scan(scan) => run_scan(ctx, &scan, out),
        KeysCommand::Rename {
            key,
            new_key,
            only_if_new,
        } => {
            let result = ctx.db.rename(&key, &new_key, only_if_new, now_ms);
            reply(out, result, |out, renamed| {
                if only_if_new {
                    flag(out, renamed);
                } else {
                    ok(out);
                }
            });
        }
        KeysCommand::Move { key, db } => match usize::try_from(db) {
            Ok(db) => reply(out, ctx.db.move_key(&key, db, now_ms), flag),
            Err(_) => error(out, &OpError::DbOutOfRange),
        },
        KeysCommand::Dump { key } => {
            let payload = ctx.db.dump(&key, now_ms);
            bulk_or_null(out, ctx, payload.as_deref());
        }
        KeysCommand::Restore {
            key,
            ttl,
            payload,
            options,
        } => {
            let result = ctx.db.restore(&key, &ttl, &payload, options, now_ms);
            reply(out, result, |out, ()| ok(out));
        }
        KeysCommand::Copy {
            source,
            destination,
            db,
            replace,
        } => {
            let db = match db.map(usize::try_from) {
                None => None,
                Some(Ok(db)) => Some(db),
                Some(Err(_)) => {
                    error(out, &OpError::DbOutOfRange);
                    return Outcome::Done;
                }
            };
            let result = ctx.db.copy(&source, &destination, db, replace, now_ms);
            reply(out, result, flag);
        }
        KeysCommand::RandomKey => {
            let key = ctx.db.random_key(now_ms);
            bulk_or_null(out, ctx, key.as_deref());
        }
        KeysCommand::DbSize => count(out, ctx.db.dbsize()),
        KeysCommand::FlushDb { mode } => {
            flushed(ctx.cache, ctx.db.flushdb(), mode);
            ok(out);
        }
        KeysCommand::Sort { key, options } => {
            let result = ctx.db.sort(&key, &options, now_ms);
            let protocol = ctx.protocol;
            reply(out, result, |out, output| match output {
                SortOutput::Stored(n) => write_integer(out, n as i64),
                SortOutput::Items(items) => {
                    quiver_resp::encode::write_array_len(out, items.len());
                    for item in &items {
                        match item {
                            Some(value) => write_bulk(out, value),
                            None => quiver_resp::encode::write_null(out, protocol),
                        }
                    }
                }
            });
        }
        KeysCommand::SwapDb { first, second } => {
            let index = |n: i32| usize::try_from(n).unwrap_or(usize::MAX);
            let result = ctx.db.swapdb(index(first), index(second));
            reply(out, result, |out, ()| ok(out));
        }
        KeysCommand::FlushAll { mode } => {
            // Through the database handle, so it also works inside EXEC,
            // whose transaction already holds every shard lock.
            flushed(ctx.cache, ctx.db.flushall(), mode);
            ok(out);
        }
        KeysCommand::Object(object) => run_object(ctx, object, out),
        KeysCommand::MemoryUsage { key, .. } => match ctx.db.memory_usage(&key, now_ms) {
            Some(bytes) => count(out, bytes),
            None => quiver_resp::encode::write_null(out, ctx.protocol),
        },
        KeysCommand::MemoryHelp => help(out, MEMORY_HELP),
    }
    Outcome::Done
}

/// `EXPIRE`, `PEXPIRE`, `EXPIREAT`, `PEXPIREAT`: `1` when the time was set
/// (or the key deleted by a time in the past), `0` otherwise.
fn run_expire(ctx: &mut DataCtx<'_, '_>, expire: &Expire, out: &mut BytesMut) {
    let now = i64::try_from(ctx.now_ms).unwrap_or(i64::MAX);
    let Some(at_ms) = expire.deadline_unix_ms(now) else {
        let command = expire.command;
        return error(out, &CommandError::InvalidExpireTime { command });
    };
    let condition = match expire.condition {
        None => CacheCondition::Always,
        Some(ExpireCondition::Nx) => CacheCondition::IfNoTtl,
        Some(ExpireCondition::Xx) => CacheCondition::IfTtl,
        Some(ExpireCondition::Gt) => CacheCondition::IfGreater,
        Some(ExpireCondition::Lt) => CacheCondition::IfLess,
        Some(ExpireCondition::XxLt) => CacheCondition::IfTtlAndLess,
    };
    let result = ctx.db.expire_at(&expire.key, at_ms, condition, ctx.now_ms);
    reply(out, result, flag);
}

/// `SCAN cursor [MATCH p] [COUNT n] [TYPE t]`. An unknown type name matches
/// no key, as in Redis 7.0.
fn run_scan(ctx: &mut DataCtx<'_, '_>, scan: &Scan, out: &mut BytesMut) {
    let kind = scan.type_name.as_deref().map(ValueType::from_name);
    let pattern = scan.pattern.as_deref();
    let count = scan_count(scan.count);
    let (cursor, mut keys) = ctx
        .db
        .scan(scan.cursor, pattern, count, kind.flatten(), ctx.now_ms);
    if kind == Some(None) {
        keys.clear();
    }
    scan_head(out, cursor, keys.len());
    keys.iter().for_each(|key| write_bulk(out, key));
}

/// `OBJECT` subcommands; a missing key gets the null reply.
fn run_object(ctx: &mut DataCtx<'_, '_>, object: ObjectCommand, out: &mut BytesMut) {
    let now_ms = ctx.now_ms;
    let missing = |out: &mut BytesMut, ctx: &DataCtx<'_, '_>| bulk_or_null(out, ctx, None);
    match object {
        ObjectCommand::Encoding { key } => {
            let encoding = ctx.db.object_encoding(&key, now_ms);
            bulk_or_null(out, ctx, encoding.map(str::as_bytes));
        }
        // A missing key is null before the policy is checked, as in Redis.
        ObjectCommand::Freq { key } | ObjectCommand::IdleTime { key }
            if ctx.db.key_type(&key, now_ms).is_none() =>
        {
            missing(out, ctx);
        }
        ObjectCommand::Freq { key } => {
            let result = ctx.db.object_freq(&key, now_ms);
            reply(out, result, |out, freq| match freq {
                Some(freq) => write_integer(out, i64::from(freq)),
                None => missing(out, ctx),
            });
        }
        ObjectCommand::IdleTime { key } => {
            let result = ctx.db.object_idletime(&key, now_ms);
            reply(out, result, |out, idle| match idle {
                Some(seconds) => write_integer(out, i64::try_from(seconds).unwrap_or(i64::MAX)),
                None => missing(out, ctx),
            });
        }
        ObjectCommand::RefCount { key } => match ctx.db.object_refcount(&key, now_ms) {
            Some(count) => write_integer(out, count),
            None => missing(out, ctx),
        },
        ObjectCommand::Help => help(out, OBJECT_HELP),
    }
}

/// Frees what FLUSHDB or FLUSHALL removed: in the background with `ASYNC`,
/// here otherwise (Redis's default, `lazyfree-lazy-user-flush no`).
fn flushed(cache: &Cache, garbage: Garbage, mode: FlushMode) {
    match mode {
        FlushMode::Async => cache.free_later(garbage),
        FlushMode::Default | FlushMode::Sync => drop(garbage),
    }
}

#[cfg(test)]
mod tests {
    use quiver_resp::Protocol;

    use crate::resp::command::exec::Outcome;
    use crate::resp::command::exec::test_support::{
        NOT_INTEGER, NOW_MS, SYNTAX, Tester, WRONGTYPE,
    };

    #[test]
    fn delete_exists_touch() {
        let t = Tester::new();
        assert_eq!(t.r2("MSET a 1 b 2 c 3"), "+OK\r\n");
        assert_eq!(t.r2("EXISTS a a nope"), ":2\r\n");
        assert_eq!(t.r2("TOUCH a b nope"), ":2\r\n");
        assert_eq!(t.r2("DEL a nope"), ":1\r\n");
        assert_eq!(t.r2("UNLINK b c"), ":2\r\n");
        assert_eq!(t.r2("DBSIZE"), ":0\r\n");
    }

    #[test]
    fn expiry_family() {
        let mut t = Tester::new();
        assert_eq!(t.r2("SET k v"), "+OK\r\n");
        assert_eq!(t.r2("TTL k"), ":-1\r\n");
        assert_eq!(t.r2("TTL nope"), ":-2\r\n");
        assert_eq!(t.r2("EXPIRETIME k"), ":-1\r\n");
        assert_eq!(t.r2("EXPIRE k 100 XX"), ":0\r\n");
        assert_eq!(t.r2("EXPIRE k 100 NX"), ":1\r\n");
        assert_eq!(t.r2("EXPIRE k 50 GT"), ":0\r\n");
        assert_eq!(t.r2("EXPIRE k 50 LT"), ":1\r\n");
        assert_eq!(t.r2("TTL k"), ":50\r\n");
        assert_eq!(t.r2("PEXPIRE k 1500"), ":1\r\n");
        assert_eq!(t.r2("PTTL k"), ":1500\r\n");
        assert_eq!(t.r2("TTL k"), ":2\r\n");
        let at = NOW_MS / 1000 + 10;
        assert_eq!(t.r2(&format!("EXPIREAT k {at}")), ":1\r\n");
        assert_eq!(t.r2("EXPIRETIME k"), format!(":{at}\r\n"));
        assert_eq!(t.r2("PEXPIRETIME k"), format!(":{}\r\n", at * 1000));
        assert_eq!(t.r2(&format!("PEXPIREAT k {}", NOW_MS + 20)), ":1\r\n");
        assert_eq!(t.r2("PERSIST k"), ":1\r\n");
        assert_eq!(t.r2("PERSIST k"), ":0\r\n");
        assert_eq!(t.r2("EXPIRE nope 10"), ":0\r\n");
        assert_eq!(t.r2("EXPIRE k -1"), ":1\r\n");
        assert_eq!(t.r2("EXISTS k"), ":0\r\n");
        assert_eq!(t.r2("SET k v PX 10"), "+OK\r\n");
        t.now_ms += 10;
        assert_eq!(t.r2("TTL k"), ":-2\r\n");
        assert_eq!(t.r2("EXPIRE k x"), NOT_INTEGER);
        assert_eq!(t.r2("EXPIRE k 10 FOO"), "-ERR Unsupported option FOO\r\n");
        assert_eq!(
            t.r2("EXPIRE k 10 NX XX"),
            "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"
        );
        assert_eq!(
            t.r2("PEXPIRE k 9223372036854775001"),
            "-ERR invalid expire time in 'pexpire' command\r\n"
        );
    }

    #[test]
    fn type_keys_scan() {
        let t = Tester::new();
        assert_eq!(t.r2("MSET one 1 two 2 three 3"), "+OK\r\n");
        assert_eq!(t.r2("RPUSH list x"), ":1\r\n");
        assert_eq!(t.r2("TYPE one"), "+string\r\n");
        assert_eq!(t.r2("TYPE list"), "+list\r\n");
        assert_eq!(t.r2("TYPE nope"), "+none\r\n");
        assert_eq!(
            t.r2("KEYS t*"),
            keys_reply(&t.r2("KEYS t*"), &["three", "two"])
        );
        assert_eq!(t.r2("KEYS nomatch*"), "*0\r\n");
        let all = scan_all(&t, "");
        assert_eq!(all, ["list", "one", "three", "two"]);
        assert_eq!(scan_all(&t, " MATCH t*"), ["three", "two"]);
        assert_eq!(scan_all(&t, " TYPE list"), ["list"]);
        assert_eq!(scan_all(&t, " TYPE stream"), Vec::<String>::new());
        assert_eq!(t.r2("SCAN x"), "-ERR invalid cursor\r\n");
        assert_eq!(t.r2("SCAN 0 COUNT 0"), SYNTAX);
    }

    /// `reply` if it is an array of exactly `expected` in any order.
    fn keys_reply(reply: &str, expected: &[&str]) -> String {
        let mut got: Vec<&str> = reply
            .split("\r\n")
            .skip(1)
            .filter(|l| !l.starts_with('$') && !l.is_empty())
            .collect();
        got.sort_unstable();
        assert_eq!(got, expected);
        reply.to_owned()
    }

    /// Every key a full SCAN returns, sorted.
    fn scan_all(t: &Tester, options: &str) -> Vec<String> {
        let mut cursor = "0".to_owned();
        let mut keys = Vec::new();
        loop {
            let reply = t.r2(&format!("SCAN {cursor} COUNT 2{options}"));
            let lines: Vec<&str> = reply.split("\r\n").collect();
            assert_eq!(lines[0], "*2");
            cursor = lines[2].to_owned();
            keys.extend(
                lines[4..]
                    .iter()
                    .filter(|l| !l.starts_with('$') && !l.is_empty())
                    .map(|l| (*l).to_owned()),
            );
            if cursor == "0" {
                break;
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    #[test]
    fn rename_copy_randomkey() {
        let t = Tester::new();
        assert_eq!(t.r2("RENAME nope x"), "-ERR no such key\r\n");
        assert_eq!(t.r2("SET a 1 EX 100"), "+OK\r\n");
        assert_eq!(t.r2("RENAME a b"), "+OK\r\n");
        assert_eq!(t.r2("TTL b"), ":100\r\n");
        assert_eq!(t.r2("SET c 3"), "+OK\r\n");
        assert_eq!(t.r2("RENAMENX b c"), ":0\r\n");
        assert_eq!(t.r2("RENAMENX b d"), ":1\r\n");
        assert_eq!(t.r2("COPY d c"), ":0\r\n");
        assert_eq!(t.r2("COPY d c REPLACE"), ":1\r\n");
        assert_eq!(t.r2("GET c"), "$1\r\n1\r\n");
        assert_eq!(
            t.r2("COPY d d"),
            "-ERR source and destination objects are the same\r\n"
        );
        assert_eq!(t.r2("COPY d e DB 99"), "-ERR DB index is out of range\r\n");
        assert_eq!(t.r2("COPY d e DB -1"), "-ERR DB index is out of range\r\n");
        assert_eq!(t.r2("COPY d d DB 1"), ":1\r\n");
        let args: [&[u8]; 2] = [b"GET", b"d"];
        let (_, reply) = t.exec_args(1, Protocol::Resp2, false, &args);
        assert_eq!(reply, "$1\r\n1\r\n");
        assert_eq!(t.r2("COPY nope e"), ":0\r\n");
        assert_eq!(t.r2("DEL c"), ":1\r\n");
        assert_eq!(t.r2("RANDOMKEY"), "$1\r\nd\r\n");
        assert_eq!(t.r2("FLUSHDB"), "+OK\r\n");
        assert_eq!(t.r2("RANDOMKEY"), "$-1\r\n");
        assert_eq!(t.r3("RANDOMKEY"), "_\r\n");
    }

    #[test]
    fn flushes_and_transactions() {
        let t = Tester::new();
        let set1: [&[u8]; 3] = [b"SET", b"k", b"v"];
        let dbsize: [&[u8]; 1] = [b"DBSIZE"];
        let (_, reply) = t.exec_args(1, Protocol::Resp2, false, &set1);
        assert_eq!(reply, "+OK\r\n");
        assert_eq!(t.r2("SET k v"), "+OK\r\n");
        assert_eq!(t.r2("FLUSHDB ASYNC"), "+OK\r\n");
        assert_eq!(t.exec_args(1, Protocol::Resp2, false, &dbsize).1, ":1\r\n");
        let (outcome, reply) = t.exec(Protocol::Resp2, true, "FLUSHALL");
        assert_eq!(outcome, Outcome::Done);
        assert_eq!(reply, "+OK\r\n");
        assert_eq!(t.exec_args(1, Protocol::Resp2, false, &dbsize).1, ":0\r\n");
        assert_eq!(t.exec_args(1, Protocol::Resp2, false, &set1).1, "+OK\r\n");
        let (_, reply) = t.exec(Protocol::Resp2, true, "FLUSHDB");
        assert_eq!(reply, "+OK\r\n");
        assert_eq!(t.r2("FLUSHALL"), "+OK\r\n");
        assert_eq!(t.exec_args(1, Protocol::Resp2, false, &dbsize).1, ":0\r\n");
        assert_eq!(t.r2("FLUSHALL SYNC"), "+OK\r\n");
    }

    #[test]
    fn object_and_memory() {
        let t = Tester::new();
        assert_eq!(t.r2("SET n 12"), "+OK\r\n");
        assert_eq!(t.r2("SET s hello"), "+OK\r\n");
        assert_eq!(t.r2("OBJECT ENCODING n"), "$3\r\nint\r\n");
        assert_eq!(t.r2("OBJECT ENCODING s"), "$6\r\nembstr\r\n");
        assert_eq!(t.r2("OBJECT ENCODING nope"), "$-1\r\n");
        assert_eq!(t.r3("OBJECT ENCODING nope"), "_\r\n");
        assert_eq!(t.r2("OBJECT IDLETIME s"), ":0\r\n");
        assert_eq!(t.r2("OBJECT REFCOUNT s"), ":1\r\n");
        assert!(
            t.r2("OBJECT FREQ s")
                .starts_with("-ERR An LFU maxmemory policy is not")
        );
        assert!(
            t.r2("OBJECT HELP")
                .starts_with("*14\r\n+OBJECT <subcommand>")
        );
        let usage = t.r2("MEMORY USAGE s");
        assert!(usage.starts_with(':') && usage != ":0\r\n", "{usage}");
        assert_eq!(t.r2("MEMORY USAGE nope"), "$-1\r\n");
        assert!(t.r2("MEMORY HELP").starts_with("*14\r\n+MEMORY"));
        assert_eq!(t.r2("RPUSH l x"), ":1\r\n");
        assert_eq!(t.r2("OBJECT ENCODING l"), "$9\r\nquicklist\r\n");
        // Key commands work on values of every type.
        assert_eq!(t.r2("EXPIRE l 10"), ":1\r\n");
        assert_ne!(t.r2("TYPE l"), WRONGTYPE);
    }
}
