//! String commands. GET writes the bulk reply straight from the value's bytes
//! under the shard lock, and SET and INCR reply without allocating: the hot
//! path costs no more than the keyspace call itself.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{GetExExpiry, SetCondition, SetExpiry, SetOptions, lcs};
use quiver_resp::CommandError;
use quiver_resp::encode::{write_array_len, write_bulk, write_integer, write_map_len, write_null};

use crate::resp::command::StringCommand;
use crate::resp::command::exec::DataCtx;
use crate::resp::command::exec::{
    bulk_or_null, count, error, flag, ok, optional_bulks, pair_refs, refs, reply, to_usize,
};
use crate::resp::command::string::{Condition, Expiry, LcsOptions, Set, TtlChange};

/// Runs a string command and writes its reply.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: StringCommand, out: &mut BytesMut) {
    let now_ms = ctx.now_ms;
    match command {
        StringCommand::Get { key } => {
            let protocol = ctx.protocol;
            let result = ctx.db.get_with(&key, now_ms, |value| match value {
                Some(value) => write_bulk(out, value),
                None => write_null(out, protocol),
            });
            if let Err(e) = result {
                error(out, &e);
            }
        }
        StringCommand::Set(set) => run_set(ctx, set, out),
        StringCommand::SetNx { key, value } => {
            let opts = SetOptions {
                condition: SetCondition::IfAbsent,
                ..SetOptions::default()
            };
            let result = ctx.db.set(&key, &value, opts, now_ms);
            reply(out, result, |out, outcome| flag(out, outcome.written));
        }
        StringCommand::SetEx {
            key,
            expiry,
            value,
            command,
        } => {
            let Some(at_ms) = deadline_ms(expiry, now_ms) else {
                error(out, &CommandError::InvalidExpireTime { command });
                return;
            };
            let opts = SetOptions {
                expiry: SetExpiry::AtMs(at_ms),
                ..SetOptions::default()
            };
            let result = ctx.db.set(&key, &value, opts, now_ms);
            reply(out, result, |out, _| ok(out));
        }
        StringCommand::MGet { keys } => {
            let values = ctx.db.mget(&refs(&keys), now_ms);
            optional_bulks(out, ctx, &values);
        }
        StringCommand::MSet { pairs } => {
            let result = ctx.db.mset(&pair_refs(&pairs), now_ms);
            reply(out, result, |out, ()| ok(out));
        }
        StringCommand::MSetNx { pairs } => {
            let result = ctx.db.msetnx(&pair_refs(&pairs), now_ms);
            reply(out, result, flag);
        }
        StringCommand::GetSet { key, value } => {
            let opts = SetOptions {
                get: true,
                ..SetOptions::default()
            };
            let result = ctx.db.set(&key, &value, opts, now_ms);
            reply(out, result, |out, outcome| {
                bulk_or_null(out, ctx, outcome.old.as_deref());
            });
        }
        StringCommand::Lcs { keys, options } => run_lcs(ctx, &keys, options, out),
        StringCommand::GetDel { key } => {
            let result = ctx.db.getdel(&key, now_ms);
            reply(out, result, |out, v| bulk_or_null(out, ctx, v.as_deref()));
        }
        StringCommand::GetEx { key, ttl } => {
            let expiry = match ttl {
                None | Some(TtlChange::Keep) => GetExExpiry::Unchanged,
                Some(TtlChange::Persist) => GetExExpiry::Persist,
                Some(TtlChange::Expire(expiry)) => match deadline_ms(expiry, now_ms) {
                    Some(at_ms) => GetExExpiry::AtMs(at_ms),
                    None => {
                        let e = CommandError::InvalidExpireTime { command: "getex" };
                        error(out, &e);
                        return;
                    }
                },
            };
            let result = ctx.db.getex(&key, expiry, now_ms);
            reply(out, result, |out, v| bulk_or_null(out, ctx, v.as_deref()));
        }
        StringCommand::Append { key, value } => {
            let result = ctx.db.append(&key, &value, now_ms);
            reply(out, result, count);
        }
        StringCommand::StrLen { key } => {
            let result = ctx.db.strlen(&key, now_ms);
            reply(out, result, count);
        }
        StringCommand::GetRange { key, start, end } => {
            let result = ctx.db.getrange(&key, start, end, now_ms);
            reply(out, result, |out, v| write_bulk(out, &v));
        }
        StringCommand::SetRange { key, offset, value } => {
            let result = ctx.db.setrange(&key, to_usize(offset), &value, now_ms);
            reply(out, result, count);
        }
        StringCommand::IncrBy { key, delta } => {
            let result = ctx.db.incr_by(&key, delta, now_ms);
            reply(out, result, write_integer);
        }
        StringCommand::IncrByFloat { key, delta } => {
            let result = ctx.db.incr_by_float(&key, delta, now_ms);
            reply(out, result, |out, v| write_bulk(out, &v));
        }
    }
}

/// `SET` with its options: `OK`, or the null reply when `NX`/`XX` refused,
/// or with `GET` the old value whether or not it was written.
fn run_set(ctx: &mut DataCtx<'_, '_>, set: Set, out: &mut BytesMut) {
    let expiry = match set.ttl {
        TtlChange::Persist => SetExpiry::Clear,
        TtlChange::Keep => SetExpiry::Keep,
        TtlChange::Expire(expiry) => match deadline_ms(expiry, ctx.now_ms) {
            Some(at_ms) => SetExpiry::AtMs(at_ms),
            None => return error(out, &CommandError::InvalidExpireTime { command: "set" }),
        },
    };
    let opts = SetOptions {
        condition: match set.condition {
            None => SetCondition::Always,
            Some(Condition::Nx) => SetCondition::IfAbsent,
            Some(Condition::Xx) => SetCondition::IfPresent,
        },
        expiry,
        get: set.get,
    };
    let result = ctx.db.set(&set.key, &set.value, opts, ctx.now_ms);
    reply(out, result, |out, outcome| {
        if set.get {
            bulk_or_null(out, ctx, outcome.old.as_deref());
        } else if outcome.written {
            ok(out);
        } else {
            write_null(out, ctx.protocol);
        }
    });
}

/// An expiry as absolute Unix milliseconds; `None` when it overflows (Redis:
/// invalid expire time). Parsed expiries are positive, so the result is too.
pub(super) fn deadline_ms(expiry: Expiry, now_ms: u64) -> Option<u64> {
    let now = i64::try_from(now_ms).ok()?;
    let at = expiry.deadline_unix_ms(now)?;
    u64::try_from(at).ok()
}

/// `LCS`: the subsequence, its length (`LEN`), or its ranges and length (`IDX`: a map in
/// RESP3, a flat array in RESP2).
fn run_lcs(
    ctx: &mut DataCtx<'_, '_>,
    keys: &[Bytes; 2],
    options: Result<LcsOptions, CommandError>,
    out: &mut BytesMut,
) {
    let (a, b) = match ctx.db.lcs_strings(&keys[0], &keys[1], ctx.now_ms) {
        Ok(strings) => strings,
        Err(e) => return error(out, &e),
    };
    let options = match options {
        Ok(options) => options,
        Err(e) => return error(out, &e),
    };
    let min = if options.idx {
        options.min_match_len
    } else {
        0
    };
    let found = match lcs(&a, &b, min, ctx.max_bulk_len) {
        Ok(found) => found,
        Err(e) => return error(out, &e),
    };
    if options.len {
        return write_integer(out, found.text.len() as i64);
    }
    if !options.idx {
        return write_bulk(out, &found.text);
    }
    write_map_len(out, ctx.protocol, 2);
    write_bulk(out, b"matches");
    write_array_len(out, found.matches.len());
    for m in &found.matches {
        write_array_len(out, 2 + usize::from(options.with_match_len));
        for (start, end) in [m.a, m.b] {
            write_array_len(out, 2);
            write_integer(out, start as i64);
            write_integer(out, end as i64);
        }
        if options.with_match_len {
            write_integer(out, m.len as i64);
        }
    }
    write_bulk(out, b"len");
    write_integer(out, found.text.len() as i64);
}

#[cfg(test)]
mod tests {
    use quiver_resp::Protocol;

    use crate::resp::command::exec::test_support::{
        NOT_INTEGER, NOW_MS, SYNTAX, Tester, WRONGTYPE,
    };

    #[test]
    fn get_set_and_nulls() {
        let t = Tester::new();
        assert_eq!(t.r2("GET k"), "$-1\r\n");
        assert_eq!(t.r3("GET k"), "_\r\n");
        assert_eq!(t.r2("SET k hello"), "+OK\r\n");
        assert_eq!(t.r2("GET k"), "$5\r\nhello\r\n");
        assert_eq!(t.r2("SET k other NX"), "$-1\r\n");
        assert_eq!(t.r3("SET k other NX"), "_\r\n");
        assert_eq!(t.r2("SET k2 v XX"), "$-1\r\n");
        assert_eq!(t.r2("SET k world GET"), "$5\r\nhello\r\n");
        assert_eq!(t.r2("SET k again NX GET"), "$5\r\nworld\r\n");
        assert_eq!(t.r2("GET k"), "$5\r\nworld\r\n");
        assert_eq!(t.r2("SET fresh v GET"), "$-1\r\n");
        assert_eq!(t.r2("SETNX k x"), ":0\r\n");
        assert_eq!(t.r2("SETNX n x"), ":1\r\n");
        assert_eq!(t.r2("GETSET n y"), "$1\r\nx\r\n");
        assert_eq!(t.r2("GETDEL n"), "$1\r\ny\r\n");
        assert_eq!(t.r2("GETDEL n"), "$-1\r\n");
        assert_eq!(t.r2("SET k v FOO"), SYNTAX);
    }

    #[test]
    fn expiry_options() {
        let mut t = Tester::new();
        assert_eq!(t.r2("SET k v EX 10"), "+OK\r\n");
        assert_eq!(t.r2("PTTL k"), ":10000\r\n");
        assert_eq!(t.r2("SET k v2 KEEPTTL"), "+OK\r\n");
        assert_eq!(t.r2("PTTL k"), ":10000\r\n");
        assert_eq!(t.r2("SET k v3"), "+OK\r\n");
        assert_eq!(t.r2("PTTL k"), ":-1\r\n");
        let at = NOW_MS + 5000;
        assert_eq!(t.r2(&format!("SET k v PXAT {at}")), "+OK\r\n");
        assert_eq!(t.r2("PTTL k"), ":5000\r\n");
        assert_eq!(t.r2("SETEX s 2 v"), "+OK\r\n");
        assert_eq!(t.r2("PSETEX p 1500 v"), "+OK\r\n");
        assert_eq!(t.r2("PTTL p"), ":1500\r\n");
        assert_eq!(t.r2("GETEX s PX 100"), "$1\r\nv\r\n");
        assert_eq!(t.r2("PTTL s"), ":100\r\n");
        assert_eq!(t.r2("GETEX s PERSIST"), "$1\r\nv\r\n");
        assert_eq!(t.r2("PTTL s"), ":-1\r\n");
        assert_eq!(t.r2("GETEX missing EX 1"), "$-1\r\n");
        assert_eq!(
            t.r2("SET k v EX 0"),
            "-ERR invalid expire time in 'set' command\r\n"
        );
        t.now_ms += 1501;
        assert_eq!(t.r2("GET p"), "$-1\r\n");
        assert_eq!(
            t.r2("PSETEX p 9223372036854775001 v"),
            "-ERR invalid expire time in 'psetex' command\r\n"
        );
    }

    #[test]
    fn multi_key_strings() {
        let t = Tester::new();
        assert_eq!(t.r2("MSET a 1 b 2"), "+OK\r\n");
        assert_eq!(t.r2("MGET a nope b"), "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n");
        assert_eq!(t.r3("MGET a nope"), "*2\r\n$1\r\n1\r\n_\r\n");
        assert_eq!(t.r2("MSETNX a 3 c 4"), ":0\r\n");
        assert_eq!(t.r2("MSETNX c 3 d 4"), ":1\r\n");
        assert_eq!(t.r2("LPUSH l x"), ":1\r\n");
        assert_eq!(t.r2("MGET l c"), "*2\r\n$-1\r\n$1\r\n3\r\n");
    }

    #[test]
    fn ranges_and_appends() {
        let t = Tester::new();
        assert_eq!(t.r2("APPEND k Hello"), ":5\r\n");
        assert_eq!(t.r2("APPEND k World"), ":10\r\n");
        assert_eq!(t.r2("STRLEN k"), ":10\r\n");
        assert_eq!(t.r2("STRLEN none"), ":0\r\n");
        assert_eq!(t.r2("GETRANGE k 0 4"), "$5\r\nHello\r\n");
        assert_eq!(t.r2("GETRANGE k -5 -1"), "$5\r\nWorld\r\n");
        assert_eq!(t.r2("GETRANGE none 0 -1"), "$0\r\n\r\n");
        assert_eq!(t.r2("SETRANGE k 5 Redis"), ":10\r\n");
        assert_eq!(t.r2("GET k"), "$10\r\nHelloRedis\r\n");
        assert_eq!(t.r2("SETRANGE z 2 ab"), ":4\r\n");
        assert_eq!(t.r2("GET z"), "$4\r\n\0\0ab\r\n");
        assert_eq!(t.r2("SETRANGE k -1 v"), "-ERR offset is out of range\r\n");
    }

    #[test]
    fn counters() {
        let t = Tester::new();
        assert_eq!(t.r2("INCR c"), ":1\r\n");
        assert_eq!(t.r2("INCRBY c 41"), ":42\r\n");
        assert_eq!(t.r2("DECR c"), ":41\r\n");
        assert_eq!(t.r2("DECRBY c 50"), ":-9\r\n");
        assert_eq!(t.r2("GET c"), "$2\r\n-9\r\n");
        assert_eq!(t.r2("INCRBYFLOAT f 10.5"), "$4\r\n10.5\r\n");
        assert_eq!(t.r3("INCRBYFLOAT f 0.1"), "$4\r\n10.6\r\n");
        assert_eq!(t.r2("SET s abc"), "+OK\r\n");
        assert_eq!(t.r2("INCR s"), NOT_INTEGER);
        assert_eq!(
            t.r2("INCRBYFLOAT s 1"),
            "-ERR value is not a valid float\r\n"
        );
        assert_eq!(t.r2("INCRBY c x"), NOT_INTEGER);
        assert_eq!(t.r2("SET m 9223372036854775807"), "+OK\r\n");
        assert_eq!(
            t.r2("INCR m"),
            "-ERR increment or decrement would overflow\r\n"
        );
    }

    #[test]
    fn out_of_memory_under_noeviction() {
        let t = Tester::with_config(quiver_core::cache::CacheConfig {
            shards: 8,
            max_memory_bytes: 1,
            ..quiver_core::cache::CacheConfig::default()
        });
        assert_eq!(t.r2("SET a 1"), "+OK\r\n");
        let oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
        assert_eq!(t.r2("SET b 1"), oom);
        assert_eq!(t.r2("INCR c"), oom);
        assert_eq!(t.r2("GET a"), "$1\r\n1\r\n");
        assert_eq!(t.r2("DEL a"), ":1\r\n");
    }

    #[test]
    fn wrong_type() {
        let t = Tester::new();
        assert_eq!(t.r2("RPUSH l a"), ":1\r\n");
        for line in [
            "GET l",
            "GETDEL l",
            "GETEX l",
            "APPEND l x",
            "STRLEN l",
            "GETRANGE l 0 1",
            "SETRANGE l 0 x",
            "INCR l",
            "INCRBYFLOAT l 1",
            "GETSET l x",
            "SET l x GET",
        ] {
            assert_eq!(t.r2(line), WRONGTYPE, "{line}");
        }
        // A plain SET replaces a value of any type.
        assert_eq!(t.r2("SET l x"), "+OK\r\n");
        let (_, reply) = t.exec(Protocol::Resp3, true, "GET l");
        assert_eq!(reply, "$1\r\nx\r\n");
    }
}
