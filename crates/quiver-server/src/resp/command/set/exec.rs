//! Set commands. Whole-set replies (SMEMBERS, SINTER, SUNION, SDIFF, SPOP
//! with a count) are RESP3 sets; SRANDMEMBER with a count, which may repeat
//! members, and SMISMEMBER are arrays, as in Redis 7.

use bytes::BytesMut;
use quiver_resp::encode::{write_array_len, write_bulk};

use crate::resp::command::SetCommand;
use crate::resp::command::exec::DataCtx;
use crate::resp::command::exec::{
    bulk_or_null, bulks, count, flag, refs, reply, scan_count, scan_head, set_of, to_usize,
};
use crate::resp::command::set::SetOp;

/// Runs a set command and writes its reply.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: SetCommand, out: &mut BytesMut) {
    let now_ms = ctx.now_ms;
    match command {
        SetCommand::SAdd { key, members } => {
            let result = ctx.db.sadd(&key, &refs(&members), now_ms);
            reply(out, result, count);
        }
        SetCommand::SRem { key, members } => {
            let result = ctx.db.srem(&key, &refs(&members), now_ms);
            reply(out, result, count);
        }
        SetCommand::SMembers { key } => {
            let result = ctx.db.smembers(&key, now_ms);
            reply(out, result, |out, members| set_of(out, ctx, &members));
        }
        SetCommand::SIsMember { key, member } => {
            let result = ctx.db.sismember(&key, &member, now_ms);
            reply(out, result, flag);
        }
        SetCommand::SMIsMember { key, members } => {
            let result = ctx.db.smismember(&key, &refs(&members), now_ms);
            reply(out, result, |out, found| {
                write_array_len(out, found.len());
                found.iter().for_each(|&f| flag(out, f));
            });
        }
        SetCommand::SCard { key } => {
            let result = ctx.db.scard(&key, now_ms);
            reply(out, result, count);
        }
        SetCommand::SPop { key, count: n } => {
            let result = ctx.db.spop(&key, n.map(to_usize), now_ms);
            reply(out, result, |out, popped| match n {
                None => bulk_or_null(out, ctx, popped.first().map(|m| &m[..])),
                Some(_) => set_of(out, ctx, &popped),
            });
        }
        SetCommand::SRandMember { key, count: n } => {
            let result = ctx.db.srandmember(&key, n, now_ms);
            reply(out, result, |out, picks| match n {
                None => bulk_or_null(out, ctx, picks.first().map(|m| &m[..])),
                Some(_) => bulks(out, &picks),
            });
        }
        SetCommand::SMove {
            source,
            destination,
            member,
        } => {
            let result = ctx.db.smove(&source, &destination, &member, now_ms);
            reply(out, result, flag);
        }
        SetCommand::Combine {
            op,
            destination,
            keys,
        } => {
            let keys = refs(&keys);
            match destination {
                None => {
                    let result = match op {
                        SetOp::Inter => ctx.db.sinter(&keys, now_ms),
                        SetOp::Union => ctx.db.sunion(&keys, now_ms),
                        SetOp::Diff => ctx.db.sdiff(&keys, now_ms),
                    };
                    reply(out, result, |out, members| set_of(out, ctx, &members));
                }
                Some(destination) => {
                    let result = match op {
                        SetOp::Inter => ctx.db.sinterstore(&destination, &keys, now_ms),
                        SetOp::Union => ctx.db.sunionstore(&destination, &keys, now_ms),
                        SetOp::Diff => ctx.db.sdiffstore(&destination, &keys, now_ms),
                    };
                    reply(out, result, count);
                }
            }
        }
        SetCommand::SInterCard { keys, limit } => {
            let result = ctx.db.sintercard(&refs(&keys), to_usize(limit), now_ms);
            reply(out, result, count);
        }
        SetCommand::SScan { key, scan } => {
            let pattern = scan.pattern.as_deref();
            let result = ctx
                .db
                .sscan(&key, scan.cursor, pattern, scan_count(scan.count), now_ms);
            reply(out, result, |out, (cursor, members)| {
                scan_head(out, cursor, members.len());
                members.iter().for_each(|m| write_bulk(out, m));
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::resp::command::exec::test_support::{NOT_INTEGER, Tester, WRONGTYPE};

    /// The members of a one-line-per-element array or set reply, sorted.
    fn members(reply: &str) -> Vec<String> {
        let mut items: Vec<String> = reply
            .split("\r\n")
            .skip(1)
            .filter(|l| !l.starts_with('$') && !l.is_empty())
            .map(str::to_owned)
            .collect();
        items.sort_unstable();
        items
    }

    #[test]
    fn add_remove_query() {
        let t = Tester::new();
        assert_eq!(t.r2("SADD s a b c a"), ":3\r\n");
        assert_eq!(t.r2("SREM s c nope"), ":1\r\n");
        assert_eq!(t.r2("SCARD s"), ":2\r\n");
        assert_eq!(t.r2("SCARD nope"), ":0\r\n");
        assert_eq!(t.r2("SISMEMBER s a"), ":1\r\n");
        assert_eq!(t.r3("SISMEMBER s z"), ":0\r\n");
        assert_eq!(t.r2("SMISMEMBER s a z"), "*2\r\n:1\r\n:0\r\n");
        assert_eq!(t.r2("SMISMEMBER nope a"), "*1\r\n:0\r\n");
        let reply = t.r2("SMEMBERS s");
        assert!(reply.starts_with("*2\r\n"));
        assert_eq!(members(&reply), ["a", "b"]);
        assert!(t.r3("SMEMBERS s").starts_with("~2\r\n"));
        assert_eq!(t.r2("SMEMBERS nope"), "*0\r\n");
        assert_eq!(t.r3("SMEMBERS nope"), "~0\r\n");
    }

    #[test]
    fn pops_and_random_members() {
        let t = Tester::new();
        assert_eq!(t.r2("SPOP nope"), "$-1\r\n");
        assert_eq!(t.r3("SPOP nope"), "_\r\n");
        assert_eq!(t.r2("SPOP nope 2"), "*0\r\n");
        assert_eq!(t.r3("SPOP nope 2"), "~0\r\n");
        assert_eq!(t.r2("SRANDMEMBER nope"), "$-1\r\n");
        assert_eq!(t.r3("SRANDMEMBER nope 2"), "*0\r\n");
        assert_eq!(t.r2("SADD s a"), ":1\r\n");
        assert_eq!(t.r2("SRANDMEMBER s"), "$1\r\na\r\n");
        assert_eq!(t.r3("SRANDMEMBER s 5"), "*1\r\n$1\r\na\r\n");
        assert_eq!(
            t.r2("SRANDMEMBER s -3"),
            "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n"
        );
        assert_eq!(t.r2("SRANDMEMBER s 0"), "*0\r\n");
        assert_eq!(t.r2("SPOP s 0"), "*0\r\n");
        assert_eq!(t.r2("SPOP s"), "$1\r\na\r\n");
        assert_eq!(t.r2("SADD s a b"), ":2\r\n");
        let reply = t.r3("SPOP s 5");
        assert!(reply.starts_with("~2\r\n"), "{reply}");
        assert_eq!(members(&reply), ["a", "b"]);
        assert_eq!(t.r2("EXISTS s"), ":0\r\n");
        assert_eq!(
            t.r2("SPOP s -1"),
            "-ERR value is out of range, must be positive\r\n"
        );
        assert_eq!(t.r2("SRANDMEMBER s x"), NOT_INTEGER);
    }

    #[test]
    fn moves_and_algebra() {
        let t = Tester::new();
        assert_eq!(t.r2("SADD a 1 2 3"), ":3\r\n");
        assert_eq!(t.r2("SADD b 2 3 4"), ":3\r\n");
        assert_eq!(members(&t.r2("SINTER a b")), ["2", "3"]);
        assert!(t.r3("SINTER a b").starts_with("~2\r\n"));
        assert_eq!(members(&t.r2("SUNION a b")), ["1", "2", "3", "4"]);
        assert_eq!(t.r2("SDIFF a b"), "*1\r\n$1\r\n1\r\n");
        assert_eq!(t.r2("SINTER a nope"), "*0\r\n");
        assert_eq!(t.r2("SINTERSTORE d a b"), ":2\r\n");
        assert_eq!(t.r2("SUNIONSTORE d a b"), ":4\r\n");
        assert_eq!(t.r2("SDIFFSTORE d a b"), ":1\r\n");
        assert_eq!(t.r2("SINTERSTORE d a nope"), ":0\r\n");
        assert_eq!(t.r2("EXISTS d"), ":0\r\n");
        assert_eq!(t.r2("SINTERCARD 2 a b"), ":2\r\n");
        assert_eq!(t.r2("SINTERCARD 2 a b LIMIT 1"), ":1\r\n");
        assert_eq!(
            t.r2("SINTERCARD 0 a"),
            "-ERR numkeys should be greater than 0\r\n"
        );
        assert_eq!(t.r2("SMOVE a b 1"), ":1\r\n");
        assert_eq!(t.r2("SMOVE a b 1"), ":0\r\n");
        assert_eq!(t.r2("SISMEMBER b 1"), ":1\r\n");
    }

    #[test]
    fn sscan() {
        let t = Tester::new();
        assert_eq!(t.r2("SSCAN nope 0"), "*2\r\n$1\r\n0\r\n*0\r\n");
        assert_eq!(t.r2("SADD s apple banana"), ":2\r\n");
        assert_eq!(
            t.r2("SSCAN s 0 MATCH b*"),
            "*2\r\n$1\r\n0\r\n*1\r\n$6\r\nbanana\r\n"
        );
        assert_eq!(t.r2("SSCAN s abc"), "-ERR invalid cursor\r\n");
    }

    #[test]
    fn wrong_type() {
        let t = Tester::new();
        assert_eq!(t.r2("SET k v"), "+OK\r\n");
        assert_eq!(t.r2("SADD s a"), ":1\r\n");
        for line in [
            "SADD k a",
            "SREM k a",
            "SMEMBERS k",
            "SISMEMBER k a",
            "SMISMEMBER k a",
            "SCARD k",
            "SPOP k",
            "SRANDMEMBER k 2",
            "SMOVE k s a",
            "SMOVE s k a",
            "SINTER s k",
            "SUNIONSTORE d s k",
            "SINTERCARD 2 s k",
            "SSCAN k 0",
        ] {
            assert_eq!(t.r2(line), WRONGTYPE, "{line}");
        }
    }
}
