//! Hash commands. HGETALL is a map in RESP3 (a flat array in RESP2);
//! HRANDFIELD WITHVALUES pairs fields with values as nested arrays in RESP3.

use bytes::{Bytes, BytesMut};
use quiver_resp::encode::{write_array_len, write_bulk, write_integer, write_map_len};

use crate::resp::command::HashCommand;
use crate::resp::command::exec::DataCtx;
use crate::resp::command::exec::{
    bulk_or_null, bulks, count, flag, ok, optional_bulks, pair_refs, refs, reply, scan_count,
    scan_head,
};

/// Runs a hash command and writes its reply.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: HashCommand, out: &mut BytesMut) {
    let now_ms = ctx.now_ms;
    match command {
        HashCommand::HSet {
            key,
            pairs,
            legacy_reply,
        } => {
            let result = ctx.db.hset(&key, &pair_refs(&pairs), now_ms);
            reply(out, result, |out, added| {
                if legacy_reply {
                    ok(out);
                } else {
                    count(out, added);
                }
            });
        }
        HashCommand::HSetNx { key, field, value } => {
            let result = ctx.db.hsetnx(&key, &field, &value, now_ms);
            reply(out, result, flag);
        }
        HashCommand::HGet { key, field } => {
            let result = ctx.db.hget(&key, &field, now_ms);
            reply(out, result, |out, v| bulk_or_null(out, ctx, v.as_deref()));
        }
        HashCommand::HMGet { key, fields } => {
            let result = ctx.db.hmget(&key, &refs(&fields), now_ms);
            reply(out, result, |out, values| optional_bulks(out, ctx, &values));
        }
        HashCommand::HDel { key, fields } => {
            let result = ctx.db.hdel(&key, &refs(&fields), now_ms);
            reply(out, result, count);
        }
        HashCommand::HExists { key, field } => {
            let result = ctx.db.hexists(&key, &field, now_ms);
            reply(out, result, flag);
        }
        HashCommand::HLen { key } => {
            let result = ctx.db.hlen(&key, now_ms);
            reply(out, result, count);
        }
        HashCommand::HGetAll { key } => {
            let result = ctx.db.hgetall(&key, now_ms);
            reply(out, result, |out, pairs| {
                write_map_len(out, ctx.protocol, pairs.len());
                write_pairs(out, &pairs);
            });
        }
        HashCommand::HKeys { key } => {
            let result = ctx.db.hkeys(&key, now_ms);
            reply(out, result, |out, keys| bulks(out, &keys));
        }
        HashCommand::HVals { key } => {
            let result = ctx.db.hvals(&key, now_ms);
            reply(out, result, |out, values| bulks(out, &values));
        }
        HashCommand::HIncrBy { key, field, delta } => {
            let result = ctx.db.hincrby(&key, &field, delta, now_ms);
            reply(out, result, write_integer);
        }
        HashCommand::HIncrByFloat { key, field, delta } => {
            let result = ctx.db.hincrbyfloat(&key, &field, delta, now_ms);
            reply(out, result, |out, v| write_bulk(out, &v));
        }
        HashCommand::HStrLen { key, field } => {
            let result = ctx.db.hstrlen(&key, &field, now_ms);
            reply(out, result, count);
        }
        HashCommand::HRandField {
            key,
            count,
            with_values,
        } => {
            let result = ctx.db.hrandfield(&key, count, now_ms);
            reply(out, result, |out, picks| {
                write_random_fields(out, ctx, &picks, count.is_some(), with_values);
            });
        }
        HashCommand::HScan { key, scan } => {
            let pattern = scan.pattern.as_deref();
            let result = ctx
                .db
                .hscan(&key, scan.cursor, pattern, scan_count(scan.count), now_ms);
            reply(out, result, |out, (cursor, pairs)| {
                scan_head(out, cursor, pairs.len() * 2);
                write_pairs(out, &pairs);
            });
        }
    }
}

/// Field and value bulk strings, one after the other.
fn write_pairs(out: &mut BytesMut, pairs: &[(Bytes, Bytes)]) {
    for (field, value) in pairs {
        write_bulk(out, field);
        write_bulk(out, value);
    }
}

/// `HRANDFIELD`'s replies: without a count one field or null; with a count an
/// array of fields, or of field/value pairs (nested in RESP3, flat in RESP2).
fn write_random_fields(
    out: &mut BytesMut,
    ctx: &DataCtx<'_, '_>,
    picks: &[(Bytes, Bytes)],
    counted: bool,
    with_values: bool,
) {
    if !counted {
        return bulk_or_null(out, ctx, picks.first().map(|(field, _)| &field[..]));
    }
    if !with_values {
        write_array_len(out, picks.len());
        picks.iter().for_each(|(field, _)| write_bulk(out, field));
        return;
    }
    match ctx.protocol {
        quiver_resp::Protocol::Resp2 => {
            write_array_len(out, picks.len() * 2);
            write_pairs(out, picks);
        }
        quiver_resp::Protocol::Resp3 => {
            write_array_len(out, picks.len());
            for pair in picks {
                write_array_len(out, 2);
                write_pairs(out, std::slice::from_ref(pair));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::resp::command::exec::test_support::{NOT_INTEGER, SYNTAX, Tester, WRONGTYPE};

    #[test]
    fn set_get_delete() {
        let t = Tester::new();
        assert_eq!(t.r2("HSET h a 1 b 2"), ":2\r\n");
        assert_eq!(t.r2("HSET h a 9 c 3"), ":1\r\n");
        assert_eq!(t.r2("HMSET h d 4"), "+OK\r\n");
        assert_eq!(t.r2("HSETNX h a x"), ":0\r\n");
        assert_eq!(t.r2("HSETNX h e 5"), ":1\r\n");
        assert_eq!(t.r2("HGET h a"), "$1\r\n9\r\n");
        assert_eq!(t.r2("HGET h nope"), "$-1\r\n");
        assert_eq!(t.r3("HGET h nope"), "_\r\n");
        assert_eq!(t.r2("HGET nope a"), "$-1\r\n");
        assert_eq!(
            t.r2("HMGET h a nope b"),
            "*3\r\n$1\r\n9\r\n$-1\r\n$1\r\n2\r\n"
        );
        assert_eq!(t.r3("HMGET nope a"), "*1\r\n_\r\n");
        assert_eq!(t.r2("HEXISTS h a"), ":1\r\n");
        assert_eq!(t.r2("HEXISTS h z"), ":0\r\n");
        assert_eq!(t.r2("HLEN h"), ":5\r\n");
        assert_eq!(t.r2("HSTRLEN h a"), ":1\r\n");
        assert_eq!(t.r2("HSTRLEN h z"), ":0\r\n");
        assert_eq!(t.r2("HDEL h a b nope"), ":2\r\n");
        assert_eq!(t.r2("HDEL h c d e"), ":3\r\n");
        assert_eq!(t.r2("EXISTS h"), ":0\r\n");
    }

    #[test]
    fn whole_hash_replies() {
        let t = Tester::new();
        assert_eq!(t.r2("HSET h f v"), ":1\r\n");
        assert_eq!(t.r2("HGETALL h"), "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
        assert_eq!(t.r3("HGETALL h"), "%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
        assert_eq!(t.r2("HGETALL nope"), "*0\r\n");
        assert_eq!(t.r3("HGETALL nope"), "%0\r\n");
        assert_eq!(t.r2("HKEYS h"), "*1\r\n$1\r\nf\r\n");
        assert_eq!(t.r3("HVALS h"), "*1\r\n$1\r\nv\r\n");
        assert_eq!(t.r2("HKEYS nope"), "*0\r\n");
    }

    #[test]
    fn increments() {
        let t = Tester::new();
        assert_eq!(t.r2("HINCRBY h n 5"), ":5\r\n");
        assert_eq!(t.r2("HINCRBY h n -7"), ":-2\r\n");
        assert_eq!(t.r2("HINCRBYFLOAT h f 1.5"), "$3\r\n1.5\r\n");
        assert_eq!(t.r3("HINCRBYFLOAT h f 1"), "$3\r\n2.5\r\n");
        assert_eq!(t.r2("HSET h s abc"), ":1\r\n");
        assert_eq!(
            t.r2("HINCRBY h s 1"),
            "-ERR hash value is not an integer\r\n"
        );
        assert_eq!(
            t.r2("HINCRBYFLOAT h s 1"),
            "-ERR hash value is not a float\r\n"
        );
        assert_eq!(t.r2("HINCRBY h n x"), NOT_INTEGER);
    }

    #[test]
    fn random_fields() {
        let t = Tester::new();
        assert_eq!(t.r2("HRANDFIELD nope"), "$-1\r\n");
        assert_eq!(t.r3("HRANDFIELD nope"), "_\r\n");
        assert_eq!(t.r2("HRANDFIELD nope 3"), "*0\r\n");
        assert_eq!(t.r2("HSET h f v"), ":1\r\n");
        assert_eq!(t.r2("HRANDFIELD h"), "$1\r\nf\r\n");
        assert_eq!(t.r2("HRANDFIELD h 5"), "*1\r\n$1\r\nf\r\n");
        assert_eq!(t.r2("HRANDFIELD h 0"), "*0\r\n");
        assert_eq!(t.r2("HRANDFIELD h -2"), "*2\r\n$1\r\nf\r\n$1\r\nf\r\n");
        assert_eq!(
            t.r2("HRANDFIELD h 1 WITHVALUES"),
            "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        );
        assert_eq!(
            t.r3("HRANDFIELD h 1 WITHVALUES"),
            "*1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        );
        assert_eq!(t.r2("HRANDFIELD h 1 FOO"), SYNTAX);
    }

    #[test]
    fn hscan() {
        let t = Tester::new();
        assert_eq!(t.r2("HSCAN nope 0"), "*2\r\n$1\r\n0\r\n*0\r\n");
        assert_eq!(t.r2("HSET h a 1 b 2"), ":2\r\n");
        let reply = t.r2("HSCAN h 0 COUNT 100");
        assert!(reply.starts_with("*2\r\n$1\r\n0\r\n*4\r\n"), "{reply}");
        assert!(reply.contains("$1\r\na\r\n$1\r\n1\r\n"));
        assert_eq!(
            t.r2("HSCAN h 0 MATCH a*"),
            "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
        );
        assert_eq!(t.r2("HSCAN h 0 TYPE string"), SYNTAX);
    }

    #[test]
    fn wrong_type() {
        let t = Tester::new();
        assert_eq!(t.r2("SET s v"), "+OK\r\n");
        for line in [
            "HSET s f v",
            "HSETNX s f v",
            "HGET s f",
            "HMGET s f",
            "HDEL s f",
            "HEXISTS s f",
            "HLEN s",
            "HGETALL s",
            "HKEYS s",
            "HVALS s",
            "HINCRBY s f 1",
            "HINCRBYFLOAT s f 1",
            "HSTRLEN s f",
            "HRANDFIELD s",
            "HSCAN s 0",
        ] {
            assert_eq!(t.r2(line), WRONGTYPE, "{line}");
        }
    }
}
