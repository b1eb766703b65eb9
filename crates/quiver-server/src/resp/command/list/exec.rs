//! List commands, with the blocking pops: BLPOP, BRPOP and BLMOVE serve a
//! non-empty key at once; when every key is empty they ask the connection to
//! wait ([`Outcome::Block`]), except inside a transaction, where Redis answers
//! at once as if the timeout had passed.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{ListEnd, ValueType};
use quiver_resp::encode::{write_array_len, write_bulk, write_integer, write_null_array};

use crate::resp::command::ListCommand;
use crate::resp::command::exec::{DataCtx, Outcome};
use crate::resp::command::exec::{bulk_or_null, bulks, count, error, ok, reply, to_usize};
use crate::resp::command::list::{End, LPos};

/// Runs a list command and writes its reply.
pub(crate) fn execute(
    ctx: &mut DataCtx<'_, '_>,
    command: ListCommand,
    out: &mut BytesMut,
) -> Outcome {
    let now_ms = ctx.now_ms;
    match command {
        ListCommand::Push {
            key,
            end,
            only_if_exists,
            elements,
        } => {
            let elements: Vec<&[u8]> = elements.iter().map(|e| &e[..]).collect();
            let result = ctx
                .db
                .push(&key, &elements, list_end(end), only_if_exists, now_ms);
            reply(out, result, count);
        }
        ListCommand::Pop { key, end, count } => {
            let result = ctx.db.pop(&key, list_end(end), count.map(to_usize), now_ms);
            reply(out, result, |out, popped| match (count, popped) {
                (None, popped) => {
                    let first = popped.as_ref().and_then(|items| items.first());
                    bulk_or_null(out, ctx, first.map(|item| &item[..]));
                }
                (Some(_), Some(items)) => bulks(out, &items),
                (Some(_), None) => write_null_array(out, ctx.protocol),
            });
        }
        ListCommand::LLen { key } => {
            let result = ctx.db.llen(&key, now_ms);
            reply(out, result, count);
        }
        ListCommand::LRange { key, start, stop } => {
            let result = ctx.db.lrange(&key, start, stop, now_ms);
            reply(out, result, |out, items| bulks(out, &items));
        }
        ListCommand::LIndex { key, index } => {
            let result = ctx.db.lindex(&key, index, now_ms);
            reply(out, result, |out, v| bulk_or_null(out, ctx, v.as_deref()));
        }
        ListCommand::LSet {
            key,
            index,
            element,
        } => {
            let result = ctx.db.lset(&key, index, &element, now_ms);
            reply(out, result, |out, ()| ok(out));
        }
        ListCommand::LInsert {
            key,
            before,
            pivot,
            element,
        } => {
            let result = ctx.db.linsert(&key, before, &pivot, &element, now_ms);
            reply(out, result, write_integer);
        }
        ListCommand::LRem {
            key,
            count: n,
            element,
        } => {
            let result = ctx.db.lrem(&key, n, &element, now_ms);
            reply(out, result, count);
        }
        ListCommand::LTrim { key, start, stop } => {
            let result = ctx.db.ltrim(&key, start, stop, now_ms);
            reply(out, result, |out, ()| ok(out));
        }
        ListCommand::LPos(lpos) => run_lpos(ctx, &lpos, out),
        ListCommand::LMove {
            source,
            destination,
            from,
            to,
        } => {
            let (from, to) = (list_end(from), list_end(to));
            let result = ctx.db.lmove(&source, &destination, from, to, now_ms);
            reply(out, result, |out, v| bulk_or_null(out, ctx, v.as_deref()));
        }
        ListCommand::BlockingPop {
            keys,
            end,
            timeout_ms,
        } => return blocking_pop(ctx, keys, list_end(end), timeout_ms, out),
        ListCommand::MultiPop {
            keys,
            end,
            count,
            timeout_ms,
        } => return multi_pop(ctx, keys, list_end(end), count, timeout_ms, out),
        ListCommand::BlMove {
            source,
            destination,
            from,
            to,
            timeout_ms,
        } => {
            let (from, to) = (list_end(from), list_end(to));
            if ctx
                .servable(std::slice::from_ref(&source), ValueType::List)
                .is_empty()
            {
                return block(vec![source], timeout_ms);
            }
            match ctx.db.lmove(&source, &destination, from, to, now_ms) {
                Err(e) => error(out, &e),
                Ok(Some(element)) => write_bulk(out, &element),
                // Redis answers an empty source inside MULTI with the null
                // bulk string (a real timeout is the null array).
                Ok(None) if ctx.in_transaction => bulk_or_null(out, ctx, None),
                Ok(None) => return block(vec![source], timeout_ms),
            }
        }
    }
    Outcome::Done
}

/// `BLPOP`/`BRPOP`: pops from the first non-empty key (checking each key's
/// type in order, as Redis does) and replies `[key, element]`.
fn blocking_pop(
    ctx: &mut DataCtx<'_, '_>,
    keys: Vec<Bytes>,
    end: ListEnd,
    timeout_ms: i64,
    out: &mut BytesMut,
) -> Outcome {
    for key in ctx.servable(&keys, ValueType::List) {
        match ctx.db.pop(key, end, None, ctx.now_ms) {
            Err(e) => {
                error(out, &e);
                return Outcome::Done;
            }
            Ok(Some(items)) => {
                if let Some(element) = items.first() {
                    write_array_len(out, 2);
                    write_bulk(out, key);
                    write_bulk(out, element);
                    return Outcome::Done;
                }
            }
            Ok(None) => {}
        }
    }
    if ctx.in_transaction {
        write_null_array(out, ctx.protocol);
        return Outcome::Done;
    }
    block(keys, timeout_ms)
}

/// `LMPOP`/`BLMPOP`: up to `count` elements of the first non-empty key (each key's type
/// checked in order), replied `[key, [element...]]`; null, or a wait with a timeout.
fn multi_pop(
    ctx: &mut DataCtx<'_, '_>,
    keys: Vec<Bytes>,
    end: ListEnd,
    count: usize,
    timeout_ms: Option<i64>,
    out: &mut BytesMut,
) -> Outcome {
    for key in ctx.servable(&keys, ValueType::List) {
        match ctx.db.pop(key, end, Some(count), ctx.now_ms) {
            Err(e) => {
                error(out, &e);
                return Outcome::Done;
            }
            Ok(Some(items)) if !items.is_empty() => {
                write_array_len(out, 2);
                write_bulk(out, key);
                write_array_len(out, items.len());
                for item in &items {
                    write_bulk(out, item);
                }
                return Outcome::Done;
            }
            Ok(_) => {}
        }
    }
    match timeout_ms {
        Some(timeout_ms) if !ctx.in_transaction => block(keys, timeout_ms),
        _ => {
            write_null_array(out, ctx.protocol);
            Outcome::Done
        }
    }
}

/// Waiting on `keys`; a timeout of 0 waits forever.
pub(crate) fn block(keys: Vec<Bytes>, timeout_ms: i64) -> Outcome {
    Outcome::Block {
        keys,
        timeout_ms: u64::try_from(timeout_ms).ok().filter(|ms| *ms > 0),
        retry: None,
    }
}

/// `LPOS`: one index or null without `COUNT`, an array with it.
fn run_lpos(ctx: &mut DataCtx<'_, '_>, lpos: &LPos, out: &mut BytesMut) {
    let result = ctx.db.lpos(
        &lpos.key,
        &lpos.element,
        lpos.rank,
        lpos.count.map(to_usize),
        to_usize(lpos.max_len),
        ctx.now_ms,
    );
    reply(out, result, |out, positions| match lpos.count {
        None => match positions.first() {
            Some(&i) => count(out, i),
            None => bulk_or_null(out, ctx, None),
        },
        Some(_) => {
            write_array_len(out, positions.len());
            positions.iter().for_each(|&i| count(out, i));
        }
    });
}

fn list_end(end: End) -> ListEnd {
    match end {
        End::Left => ListEnd::Left,
        End::Right => ListEnd::Right,
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use quiver_resp::Protocol;

    use crate::resp::command::exec::Outcome;
    use crate::resp::command::exec::test_support::{NOT_INTEGER, SYNTAX, Tester, WRONGTYPE};

    #[test]
    fn push_pop_length() {
        let t = Tester::new();
        assert_eq!(t.r2("LPUSHX l a"), ":0\r\n");
        assert_eq!(t.r2("RPUSH l a b c"), ":3\r\n");
        assert_eq!(t.r2("LPUSH l z"), ":4\r\n");
        assert_eq!(t.r2("RPUSHX l d"), ":5\r\n");
        assert_eq!(t.r2("LLEN l"), ":5\r\n");
        assert_eq!(t.r2("LPOP l"), "$1\r\nz\r\n");
        assert_eq!(t.r2("RPOP l"), "$1\r\nd\r\n");
        assert_eq!(t.r2("LPOP l 2"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
        assert_eq!(t.r2("RPOP l 0"), "*0\r\n");
        assert_eq!(t.r2("RPOP l 5"), "*1\r\n$1\r\nc\r\n");
        assert_eq!(t.r2("LPOP l"), "$-1\r\n");
        assert_eq!(t.r3("LPOP l"), "_\r\n");
        assert_eq!(t.r2("LPOP l 2"), "*-1\r\n");
        assert_eq!(t.r3("LPOP l 2"), "_\r\n");
        assert_eq!(
            t.r2("LPOP l -1"),
            "-ERR value is out of range, must be positive\r\n"
        );
        assert_eq!(t.r2("LLEN l"), ":0\r\n");
    }

    #[test]
    fn index_and_ranges() {
        let t = Tester::new();
        assert_eq!(t.r2("RPUSH l a b c b"), ":4\r\n");
        assert_eq!(
            t.r2("LRANGE l 0 -1"),
            "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nb\r\n"
        );
        assert_eq!(t.r2("LRANGE l 5 10"), "*0\r\n");
        assert_eq!(t.r2("LRANGE nope 0 -1"), "*0\r\n");
        assert_eq!(t.r2("LINDEX l -1"), "$1\r\nb\r\n");
        assert_eq!(t.r2("LINDEX l 9"), "$-1\r\n");
        assert_eq!(t.r2("LSET l 0 A"), "+OK\r\n");
        assert_eq!(t.r2("LSET l 9 A"), "-ERR index out of range\r\n");
        assert_eq!(t.r2("LSET nope 0 A"), "-ERR no such key\r\n");
        assert_eq!(t.r2("LINSERT l BEFORE c x"), ":5\r\n");
        assert_eq!(t.r2("LINSERT l AFTER nope x"), ":-1\r\n");
        assert_eq!(t.r2("LINSERT nope AFTER a x"), ":0\r\n");
        assert_eq!(t.r2("LPOS l b"), ":1\r\n");
        assert_eq!(t.r2("LPOS l b RANK -1"), ":4\r\n");
        assert_eq!(t.r2("LPOS l b COUNT 0"), "*2\r\n:1\r\n:4\r\n");
        assert_eq!(t.r2("LPOS l nope"), "$-1\r\n");
        assert_eq!(t.r3("LPOS l nope"), "_\r\n");
        assert_eq!(t.r2("LPOS l nope COUNT 2"), "*0\r\n");
        assert_eq!(t.r2("LREM l 0 b"), ":2\r\n");
        assert_eq!(t.r2("LTRIM l 0 1"), "+OK\r\n");
        assert_eq!(t.r2("LRANGE l 0 -1"), "*2\r\n$1\r\nA\r\n$1\r\nx\r\n");
        assert_eq!(t.r2("LINDEX l x"), NOT_INTEGER);
        assert_eq!(t.r2("LINSERT l MIDDLE a b"), SYNTAX);
    }

    #[test]
    fn moves() {
        let t = Tester::new();
        assert_eq!(t.r2("RPUSH src a b"), ":2\r\n");
        assert_eq!(t.r2("LMOVE src dst LEFT RIGHT"), "$1\r\na\r\n");
        assert_eq!(t.r2("RPOPLPUSH src dst"), "$1\r\nb\r\n");
        assert_eq!(t.r2("LRANGE dst 0 -1"), "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
        assert_eq!(t.r2("LMOVE src dst LEFT RIGHT"), "$-1\r\n");
        assert_eq!(t.r2("SET s v"), "+OK\r\n");
        assert_eq!(t.r2("LMOVE dst s LEFT LEFT"), WRONGTYPE);
    }

    #[test]
    fn blocking_pops_serve_or_block() {
        let t = Tester::new();
        let (outcome, reply) = t.exec(Protocol::Resp2, false, "BLPOP a b 1.5");
        assert_eq!(reply, "");
        assert_eq!(
            outcome,
            Outcome::Block {
                keys: vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")],
                timeout_ms: Some(1500),
                retry: None,
            }
        );
        let (outcome, _) = t.exec(Protocol::Resp2, false, "BRPOP a 0");
        assert_eq!(
            outcome,
            Outcome::Block {
                keys: vec![Bytes::from_static(b"a")],
                timeout_ms: None,
                retry: None,
            }
        );
        assert_eq!(t.r2("RPUSH b x y"), ":2\r\n");
        assert_eq!(t.r2("BLPOP a b 0"), "*2\r\n$1\r\nb\r\n$1\r\nx\r\n");
        assert_eq!(t.r3("BRPOP a b 0"), "*2\r\n$1\r\nb\r\n$1\r\ny\r\n");
        assert_eq!(t.r2("SET s v"), "+OK\r\n");
        assert_eq!(t.r2("BLPOP a s 0"), WRONGTYPE);
        assert_eq!(
            t.r2("BLPOP a 1 x"),
            "-ERR timeout is not a float or out of range\r\n"
        );
        assert_eq!(t.r2("BLPOP a -1"), "-ERR timeout is negative\r\n");
    }

    #[test]
    fn blocking_inside_a_transaction_times_out_at_once() {
        let t = Tester::new();
        let (outcome, reply) = t.exec(Protocol::Resp2, true, "BLPOP a 0");
        assert_eq!((outcome, reply.as_str()), (Outcome::Done, "*-1\r\n"));
        let (_, reply) = t.exec(Protocol::Resp3, true, "BRPOP a 0");
        assert_eq!(reply, "_\r\n");
        let (outcome, reply) = t.exec(Protocol::Resp2, true, "BLMOVE a b LEFT LEFT 0");
        assert_eq!((outcome, reply.as_str()), (Outcome::Done, "$-1\r\n"));
        assert_eq!(t.r2("RPUSH a x"), ":1\r\n");
        let (_, reply) = t.exec(Protocol::Resp2, true, "BLPOP a 0");
        assert_eq!(reply, "*2\r\n$1\r\na\r\n$1\r\nx\r\n");
    }

    #[test]
    fn blmove_serves_or_blocks() {
        let t = Tester::new();
        let (outcome, reply) = t.exec(Protocol::Resp2, false, "BLMOVE a b LEFT RIGHT 0.001");
        assert_eq!(reply, "");
        assert_eq!(
            outcome,
            Outcome::Block {
                keys: vec![Bytes::from_static(b"a")],
                timeout_ms: Some(1),
                retry: None,
            }
        );
        assert_eq!(t.r2("RPUSH a x"), ":1\r\n");
        assert_eq!(t.r2("BLMOVE a b LEFT RIGHT 0"), "$1\r\nx\r\n");
        assert_eq!(t.r2("LRANGE b 0 -1"), "*1\r\n$1\r\nx\r\n");
        assert_eq!(t.r2("SET s v"), "+OK\r\n");
        assert_eq!(t.r2("BLMOVE s b LEFT RIGHT 0"), WRONGTYPE);
        assert_eq!(t.r2("BLMOVE b s LEFT RIGHT 0"), WRONGTYPE);
    }

    #[test]
    fn wrong_type() {
        let t = Tester::new();
        assert_eq!(t.r2("SET s v"), "+OK\r\n");
        for line in [
            "LPUSH s a",
            "RPUSHX s a",
            "LPOP s",
            "RPOP s 2",
            "LLEN s",
            "LRANGE s 0 1",
            "LINDEX s 0",
            "LSET s 0 a",
            "LINSERT s BEFORE a b",
            "LREM s 0 a",
            "LTRIM s 0 1",
            "LPOS s a",
            "LMOVE s d LEFT LEFT",
        ] {
            assert_eq!(t.r2(line), WRONGTYPE, "{line}");
        }
    }
}
