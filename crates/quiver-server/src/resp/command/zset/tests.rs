//! Sorted set command parsing.

use super::*;
use crate::resp::command::test_support::{b, error, parse};

fn zrange(line: &str) -> ZRange {
    match parse(line).unwrap() {
        Command::SortedSet(SortedSetCommand::ZRange(range)) => range,
        other => panic!("{other:?}"),
    }
}

fn incl(value: f64) -> ScoreBound {
    ScoreBound {
        value,
        exclusive: false,
    }
}

#[test]
fn zadd_flags_and_conflicts() {
    let zadd = match parse("ZADD z XX GT CH 1 a 2.5 b").unwrap() {
        Command::SortedSet(SortedSetCommand::ZAdd(zadd)) => zadd,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        zadd.condition,
        Some(crate::resp::command::string::Condition::Xx)
    );
    assert_eq!(zadd.comparison, Some(Comparison::Gt));
    assert!(zadd.changed && !zadd.incr);
    assert_eq!(zadd.members, vec![(1.0, b("a")), (2.5, b("b"))]);
    assert_eq!(
        error("ZADD z NX XX 1 a"),
        "ERR XX and NX options at the same time are not compatible"
    );
    assert_eq!(
        error("ZADD z NX GT 1 a"),
        "ERR GT, LT, and/or NX options at the same time are not compatible"
    );
    assert_eq!(
        error("ZADD z GT LT 1 a"),
        "ERR GT, LT, and/or NX options at the same time are not compatible"
    );
    assert_eq!(
        error("ZADD z INCR 1 a 2 b"),
        "ERR INCR option supports a single increment-element pair"
    );
    assert_eq!(error("ZADD z 1 a 2"), "ERR syntax error");
    assert_eq!(error("ZADD z NX 1"), "ERR syntax error");
    assert_eq!(error("ZADD z x a"), "ERR value is not a valid float");
    assert_eq!(error("ZADD z nan a"), "ERR value is not a valid float");
}

#[test]
fn zrange_forms() {
    let r = zrange("ZRANGE z 0 -1 WITHSCORES");
    assert_eq!(r.range, ZRangeBy::Rank { start: 0, stop: -1 });
    assert!(r.with_scores && !r.rev);
    let r = zrange("ZRANGE z (5 -inf BYSCORE REV LIMIT 1 2");
    assert_eq!(
        r.range,
        ZRangeBy::Score {
            min: ScoreBound {
                value: f64::NEG_INFINITY,
                exclusive: false
            },
            max: ScoreBound {
                value: 5.0,
                exclusive: true
            }
        }
    );
    assert!(r.rev);
    assert_eq!(r.limit, Some((1, 2)));
    let r = zrange("ZRANGEBYLEX z [a (c");
    assert_eq!(
        r.range,
        ZRangeBy::Lex {
            min: LexBound::Inclusive(b("a")),
            max: LexBound::Exclusive(b("c"))
        }
    );
    let r = zrange("ZREVRANGEBYLEX z + -");
    assert_eq!(
        r.range,
        ZRangeBy::Lex {
            min: LexBound::Min,
            max: LexBound::Max
        }
    );
    let r = zrange("ZREVRANGEBYSCORE z 10 1");
    assert_eq!(
        r.range,
        ZRangeBy::Score {
            min: incl(1.0),
            max: incl(10.0)
        }
    );
    let r = zrange("ZRANGESTORE dst src 0 1");
    assert_eq!(r.destination, Some(b("dst")));
    assert_eq!(
        zrange("ZREVRANGE z 0 1").range,
        ZRangeBy::Rank { start: 0, stop: 1 }
    );
}

#[test]
fn zrange_errors() {
    assert_eq!(
        error("ZRANGE z 0 1 LIMIT 0 1"),
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
    );
    assert_eq!(
        error("ZRANGE z a b BYLEX WITHSCORES"),
        "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
    );
    assert_eq!(
        error("ZRANGE z a b BYSCORE"),
        "ERR min or max is not a float"
    );
    assert_eq!(
        error("ZRANGE z a b BYLEX"),
        "ERR min or max not valid string range item"
    );
    assert_eq!(
        error("ZRANGE z a b"),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(error("ZRANGEBYSCORE z 0 1 BYLEX"), "ERR syntax error");
    assert_eq!(error("ZRANGE z 0 1 REV REV"), "ERR syntax error");
    assert_eq!(error("ZRANGESTORE d s 0 1 WITHSCORES"), "ERR syntax error");
    assert_eq!(error("ZCOUNT z (x 1"), "ERR min or max is not a float");
    assert_eq!(
        error("ZLEXCOUNT z a b"),
        "ERR min or max not valid string range item"
    );
    assert_eq!(error("ZRANGE z 0 1 LIMIT 0"), "ERR syntax error");
}

#[test]
fn zstore_and_pops() {
    let store = match parse("ZUNIONSTORE d 2 a b WEIGHTS 1 2.5 AGGREGATE max").unwrap() {
        Command::SortedSet(SortedSetCommand::ZStore(store)) => store,
        other => panic!("{other:?}"),
    };
    assert_eq!(store.keys, vec![b("a"), b("b")]);
    assert_eq!(store.weights, Some(vec![1.0, 2.5]));
    assert_eq!(store.aggregate, Aggregate::Max);
    assert_eq!(
        error("ZUNIONSTORE d 0 a"),
        "ERR at least 1 input key is needed for 'zunionstore' command"
    );
    assert_eq!(error("ZINTERSTORE d 3 a b"), "ERR syntax error");
    // Option errors wait until the keys' types are checked.
    let option_error = |line: &str| match parse(line).expect(line) {
        Command::SortedSet(SortedSetCommand::ZStore(store)) => {
            store.option_error.map(|error| error.to_string())
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(
        option_error("ZINTERSTORE d 1 a WEIGHTS x").as_deref(),
        Some("ERR weight value is not a float")
    );
    assert_eq!(
        option_error("ZINTERSTORE d 1 a AGGREGATE avg").as_deref(),
        Some("ERR syntax error")
    );
    assert_eq!(option_error("ZINTERSTORE d 1 a AGGREGATE max"), None);
    assert_eq!(
        error("ZINTERSTORE d x a"),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        error("ZPOPMIN z -1"),
        "ERR value is out of range, must be positive"
    );
    assert_eq!(error("ZPOPMAX z 1 2"), "ERR syntax error");
}
