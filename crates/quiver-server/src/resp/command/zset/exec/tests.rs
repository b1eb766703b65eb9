//! Sorted set replies for RESP2 and RESP3.

use crate::resp::command::exec::test_support::{NOT_INTEGER, SYNTAX, Tester, WRONGTYPE};

fn seeded() -> Tester {
    let t = Tester::new();
    assert_eq!(t.r2("ZADD z 1 a 2 b 3 c"), ":3\r\n");
    t
}

#[test]
fn add_flags() {
    let t = seeded();
    assert_eq!(t.r2("ZADD z 1 a 4 d"), ":1\r\n");
    assert_eq!(t.r2("ZADD z CH 5 a 4 d"), ":1\r\n");
    assert_eq!(t.r2("ZADD z NX 9 a 6 e"), ":1\r\n");
    assert_eq!(t.r2("ZADD z XX 9 a 7 f"), ":0\r\n");
    assert_eq!(t.r2("ZADD z GT CH 1 a"), ":0\r\n");
    assert_eq!(t.r2("ZADD z LT CH 1 a"), ":1\r\n");
    assert_eq!(t.r2("ZADD z INCR 2.5 a"), "$3\r\n3.5\r\n");
    assert_eq!(t.r3("ZADD z INCR 1 a"), ",4.5\r\n");
    assert_eq!(t.r2("ZADD z NX INCR 1 a"), "$-1\r\n");
    assert_eq!(t.r3("ZADD z NX INCR 1 a"), "_\r\n");
    assert_eq!(t.r2("ZADD z 1 a 2"), SYNTAX);
    assert_eq!(t.r2("ZADD z x a"), "-ERR value is not a valid float\r\n");
    assert_eq!(
        t.r2("ZADD z NX XX 1 a"),
        "-ERR XX and NX options at the same time are not compatible\r\n"
    );
    assert_eq!(t.r2("ZADD i 1 m"), ":1\r\n");
    assert_eq!(t.r2("ZINCRBY i inf m"), "$3\r\ninf\r\n");
    assert_eq!(
        t.r2("ZINCRBY i -inf m"),
        "-ERR resulting score is not a number (NaN)\r\n"
    );
}

#[test]
fn scores_and_ranks() {
    let t = seeded();
    assert_eq!(t.r2("ZSCORE z b"), "$1\r\n2\r\n");
    assert_eq!(t.r3("ZSCORE z b"), ",2\r\n");
    assert_eq!(t.r2("ZSCORE z nope"), "$-1\r\n");
    assert_eq!(t.r3("ZSCORE nope b"), "_\r\n");
    assert_eq!(t.r2("ZMSCORE z a nope"), "*2\r\n$1\r\n1\r\n$-1\r\n");
    assert_eq!(t.r3("ZMSCORE z a nope"), "*2\r\n,1\r\n_\r\n");
    assert_eq!(t.r2("ZINCRBY z 0.5 a"), "$3\r\n1.5\r\n");
    assert_eq!(t.r3("ZINCRBY z -0.5 a"), ",1\r\n");
    assert_eq!(t.r2("ZCARD z"), ":3\r\n");
    assert_eq!(t.r2("ZCARD nope"), ":0\r\n");
    assert_eq!(t.r2("ZCOUNT z (1 +inf"), ":2\r\n");
    assert_eq!(t.r2("ZLEXCOUNT z [b +"), ":2\r\n");
    assert_eq!(t.r2("ZRANK z c"), ":2\r\n");
    assert_eq!(t.r2("ZREVRANK z c"), ":0\r\n");
    assert_eq!(t.r2("ZRANK z nope"), "$-1\r\n");
    assert_eq!(t.r3("ZRANK z nope"), "_\r\n");
    assert_eq!(t.r2("ZREM z a nope"), ":1\r\n");
    assert_eq!(t.r2("ZCOUNT z x 1"), "-ERR min or max is not a float\r\n");
    assert_eq!(
        t.r2("ZLEXCOUNT z a b"),
        "-ERR min or max not valid string range item\r\n"
    );
}

#[test]
fn ranges() {
    let t = seeded();
    assert_eq!(
        t.r2("ZRANGE z 0 -1"),
        "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    assert_eq!(
        t.r2("ZRANGE z 0 1 WITHSCORES"),
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    );
    assert_eq!(
        t.r3("ZRANGE z 0 1 WITHSCORES"),
        "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    );
    assert_eq!(t.r2("ZRANGE z 0 0 REV"), "*1\r\n$1\r\nc\r\n");
    assert_eq!(t.r2("ZRANGE z (1 3 BYSCORE LIMIT 1 5"), "*1\r\n$1\r\nc\r\n");
    assert_eq!(
        t.r2("ZRANGE z 3 (1 BYSCORE REV"),
        "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"
    );
    assert_eq!(t.r2("ZRANGE z [b + BYLEX"), "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
    assert_eq!(
        t.r2("ZRANGEBYSCORE z -inf 2 WITHSCORES"),
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    );
    assert_eq!(
        t.r3("ZREVRANGEBYSCORE z +inf 3 WITHSCORES"),
        "*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    );
    assert_eq!(t.r2("ZRANGEBYLEX z - (b"), "*1\r\n$1\r\na\r\n");
    assert_eq!(
        t.r2("ZRANGE z + [b BYLEX REV LIMIT 0 1"),
        "*1\r\n$1\r\nc\r\n"
    );
    assert_eq!(
        t.r2("ZREVRANGEBYLEX z + -"),
        "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"
    );
    assert_eq!(t.r2("ZREVRANGE z 0 0"), "*1\r\n$1\r\nc\r\n");
    assert_eq!(t.r2("ZRANGE nope 0 -1"), "*0\r\n");
    assert_eq!(
        t.r2("ZRANGE z 0 -1 LIMIT 0 1"),
        "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"
    );
    assert_eq!(t.r2("ZRANGE z a b"), NOT_INTEGER);
    assert_eq!(t.r2("ZRANGESTORE d z 1 -1"), ":2\r\n");
    assert_eq!(t.r2("ZRANGE d 0 -1"), "*2\r\n$1\r\nb\r\n$1\r\nc\r\n");
    assert_eq!(t.r2("ZRANGESTORE d z 5 9"), ":0\r\n");
    assert_eq!(t.r2("EXISTS d"), ":0\r\n");
}

#[test]
fn pops() {
    let t = seeded();
    assert_eq!(t.r2("ZPOPMIN z"), "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_eq!(t.r3("ZPOPMAX z"), "*2\r\n$1\r\nc\r\n,3\r\n");
    assert_eq!(t.r2("ZADD z 4 d"), ":1\r\n");
    assert_eq!(t.r3("ZPOPMIN z 1"), "*1\r\n*2\r\n$1\r\nb\r\n,2\r\n");
    assert_eq!(t.r2("ZPOPMAX z 5"), "*2\r\n$1\r\nd\r\n$1\r\n4\r\n");
    assert_eq!(t.r2("ZPOPMIN z"), "*0\r\n");
    assert_eq!(t.r3("ZPOPMIN z 2"), "*0\r\n");
    assert_eq!(
        t.r2("ZPOPMIN z -1"),
        "-ERR value is out of range, must be positive\r\n"
    );
}

#[test]
fn stores_and_removals() {
    let t = seeded();
    assert_eq!(t.r2("ZADD y 10 b 20 d"), ":2\r\n");
    assert_eq!(t.r2("ZUNIONSTORE u 2 z y"), ":4\r\n");
    assert_eq!(t.r2("ZSCORE u b"), "$2\r\n12\r\n");
    assert_eq!(
        t.r2("ZINTERSTORE i 2 z y WEIGHTS 2 1 AGGREGATE MAX"),
        ":1\r\n"
    );
    assert_eq!(t.r2("ZSCORE i b"), "$2\r\n10\r\n");
    assert_eq!(t.r2("SADD s b"), ":1\r\n");
    assert_eq!(t.r2("ZINTERSTORE i 2 z s"), ":1\r\n");
    assert_eq!(t.r2("ZSCORE i b"), "$1\r\n3\r\n");
    assert_eq!(
        t.r2("ZUNIONSTORE u 0 z"),
        "-ERR at least 1 input key is needed for 'zunionstore' command\r\n"
    );
    assert_eq!(t.r2("ZREMRANGEBYRANK u 0 0"), ":1\r\n");
    assert_eq!(t.r2("ZREMRANGEBYSCORE u 12 12"), ":1\r\n");
    assert_eq!(t.r2("ZREMRANGEBYLEX u [c [c"), ":1\r\n");
    assert_eq!(t.r2("ZRANGE u 0 -1"), "*1\r\n$1\r\nd\r\n");
}

#[test]
fn zscan() {
    let t = seeded();
    assert_eq!(t.r2("ZSCAN nope 0"), "*2\r\n$1\r\n0\r\n*0\r\n");
    assert_eq!(t.r2("ZADD f 1.5 x"), ":1\r\n");
    assert_eq!(
        t.r2("ZSCAN f 0"),
        "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nx\r\n$3\r\n1.5\r\n"
    );
    assert_eq!(
        t.r3("ZSCAN f 0 MATCH x"),
        "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nx\r\n$3\r\n1.5\r\n"
    );
    let reply = t.r2("ZSCAN z 0 COUNT 10");
    assert!(reply.starts_with("*2\r\n$1\r\n0\r\n*6\r\n"), "{reply}");
}

#[test]
fn wrong_type() {
    let t = seeded();
    assert_eq!(t.r2("SET k v"), "+OK\r\n");
    for line in [
        "ZADD k 1 a",
        "ZREM k a",
        "ZSCORE k a",
        "ZMSCORE k a",
        "ZINCRBY k 1 a",
        "ZCARD k",
        "ZCOUNT k 0 1",
        "ZLEXCOUNT k - +",
        "ZRANGE k 0 -1",
        "ZRANGESTORE d k 0 -1",
        "ZRANK k a",
        "ZPOPMIN k",
        "ZUNIONSTORE d 2 z k",
        "ZREMRANGEBYRANK k 0 1",
        "ZSCAN k 0",
    ] {
        assert_eq!(t.r2(line), WRONGTYPE, "{line}");
    }
}
