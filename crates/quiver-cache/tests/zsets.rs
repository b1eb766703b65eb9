use quiver_cache::{
    Aggregate, LexBound, OpError, ScoreBound, ZAddCompare, ZAddCondition, ZAddOptions, ZAddReply,
    ZRangeBy, ZRangeSpec, ZSetOp,
};

use crate::{T0, ks};

fn names(v: Vec<(bytes::Bytes, f64)>) -> Vec<String> {
    v.into_iter()
        .map(|(m, _)| String::from_utf8(m.to_vec()).unwrap())
        .collect()
}

fn sb(s: &str) -> ScoreBound {
    ScoreBound::parse(s.as_bytes()).unwrap()
}

fn lb(s: &str) -> LexBound {
    LexBound::parse(s.as_bytes()).unwrap()
}

fn spec(by: ZRangeBy) -> ZRangeSpec {
    ZRangeSpec {
        by,
        rev: false,
        limit: None,
    }
}

fn seed(db: &mut quiver_cache::Db<'_>) {
    db.zadd(
        b"z",
        &[(1.0, b"a"), (2.0, b"b"), (3.0, b"c"), (4.0, b"d")],
        ZAddOptions::default(),
        T0,
    )
    .unwrap();
}

#[test]
fn zadd_options() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    seed(&mut db);
    let o = |condition, compare, ch, incr| ZAddOptions {
        condition,
        compare,
        ch,
        incr,
    };
    use ZAddCompare::*;
    use ZAddCondition::*;
    assert_eq!(
        db.zadd(
            b"z",
            &[(9.0, b"a"), (5.0, b"e")],
            o(IfAbsent, Any, false, false),
            T0
        ),
        Ok(ZAddReply::Count(1))
    );
    assert_eq!(db.zscore(b"z", b"a", T0), Ok(Some(1.0)));
    assert_eq!(
        db.zadd(
            b"z",
            &[(9.0, b"a"), (6.0, b"f")],
            o(IfPresent, Any, true, false),
            T0
        ),
        Ok(ZAddReply::Count(1))
    );
    assert_eq!(db.zscore(b"z", b"f", T0), Ok(None));
    assert_eq!(
        db.zadd(b"z", &[(1.0, b"a")], o(Always, Greater, true, false), T0),
        Ok(ZAddReply::Count(0))
    );
    assert_eq!(
        db.zadd(b"z", &[(1.0, b"a")], o(Always, Less, true, false), T0),
        Ok(ZAddReply::Count(1))
    );
    assert_eq!(
        db.zadd(b"z", &[(2.5, b"a")], o(Always, Any, false, true), T0),
        Ok(ZAddReply::Score(Some(3.5)))
    );
    assert_eq!(
        db.zadd(b"z", &[(-10.0, b"a")], o(Always, Greater, false, true), T0),
        Ok(ZAddReply::Score(None))
    );
    assert_eq!(
        db.zadd(b"new", &[(1.0, b"a")], o(IfPresent, Any, false, false), T0),
        Ok(ZAddReply::Count(0))
    );
    assert_eq!(db.exists(&[b"new"], T0), 0);
    assert_eq!(db.zincrby(b"z", 1.0, b"b", T0), Ok(3.0));
    db.zadd(b"inf", &[(f64::INFINITY, b"x")], ZAddOptions::default(), T0)
        .unwrap();
    assert_eq!(
        db.zincrby(b"inf", f64::NEG_INFINITY, b"x", T0),
        Err(OpError::ScoreNan)
    );
}

#[test]
fn ranges() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    seed(&mut db);
    assert_eq!(
        names(db.zrange(b"z", &spec(ZRangeBy::Rank(0, -1)), T0).unwrap()),
        ["a", "b", "c", "d"]
    );
    assert_eq!(
        names(db.zrange(b"z", &spec(ZRangeBy::Rank(-2, 10)), T0).unwrap()),
        ["c", "d"]
    );
    let mut rev = spec(ZRangeBy::Rank(0, 1));
    rev.rev = true;
    assert_eq!(names(db.zrange(b"z", &rev, T0).unwrap()), ["d", "c"]);
    assert_eq!(
        names(
            db.zrange(b"z", &spec(ZRangeBy::Score(sb("(1"), sb("3"))), T0)
                .unwrap()
        ),
        ["b", "c"]
    );
    assert_eq!(
        names(
            db.zrange(b"z", &spec(ZRangeBy::Score(sb("-inf"), sb("+inf"))), T0)
                .unwrap()
        )
        .len(),
        4
    );
    let mut lim = spec(ZRangeBy::Score(sb("-inf"), sb("+inf")));
    lim.limit = Some((1, 2));
    assert_eq!(names(db.zrange(b"z", &lim, T0).unwrap()), ["b", "c"]);
    lim.rev = true;
    assert_eq!(names(db.zrange(b"z", &lim, T0).unwrap()), ["c", "b"]);
    lim.limit = Some((-1, 2));
    assert!(db.zrange(b"z", &lim, T0).unwrap().is_empty());
    assert_eq!(db.zcount(b"z", &sb("2"), &sb("(4"), T0), Ok(2));
    assert_eq!(db.zrank(b"z", b"c", false, T0), Ok(Some(2)));
    assert_eq!(db.zrank(b"z", b"c", true, T0), Ok(Some(1)));
    assert_eq!(db.zrank(b"z", b"zz", false, T0), Ok(None));

    db.zadd(
        b"lex",
        &[(0.0, b"a"), (0.0, b"b"), (0.0, b"c"), (0.0, b"d")],
        ZAddOptions::default(),
        T0,
    )
    .unwrap();
    assert_eq!(
        names(
            db.zrange(b"lex", &spec(ZRangeBy::Lex(lb("-"), lb("[b"))), T0)
                .unwrap()
        ),
        ["a", "b"]
    );
    assert_eq!(
        names(
            db.zrange(b"lex", &spec(ZRangeBy::Lex(lb("(a"), lb("(d"))), T0)
                .unwrap()
        ),
        ["b", "c"]
    );
    assert_eq!(db.zlexcount(b"lex", &lb("[b"), &lb("+"), T0), Ok(3));
}

#[test]
fn pops_removes_and_stores() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    seed(&mut db);
    assert_eq!(names(db.zpop(b"z", 1, false, T0).unwrap()), ["a"]);
    assert_eq!(names(db.zpop(b"z", 2, true, T0).unwrap()), ["d", "c"]);
    assert_eq!(db.zcard(b"z", T0), Ok(1));
    seed(&mut db);
    assert_eq!(db.zremrange(b"z", &ZRangeBy::Rank(0, 0), T0), Ok(1));
    assert_eq!(
        db.zremrange(b"z", &ZRangeBy::Score(sb("(2"), sb("3")), T0),
        Ok(1)
    );
    assert_eq!(
        names(db.zrange(b"z", &spec(ZRangeBy::Rank(0, -1)), T0).unwrap()),
        ["b", "d"]
    );
    assert_eq!(db.zrem(b"z", &[b"b", b"d", b"x"], T0), Ok(2));
    assert_eq!(db.exists(&[b"z"], T0), 0);
    seed(&mut db);
    assert_eq!(
        db.zrangestore(b"dst", b"z", &spec(ZRangeBy::Rank(1, 2)), T0),
        Ok(2)
    );
    assert_eq!(
        db.zmscore(b"dst", &[b"b", b"a"], T0),
        Ok(vec![Some(2.0), None])
    );
}

#[test]
fn union_and_inter_store() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.zadd(
        b"z1",
        &[(1.0, b"a"), (2.0, b"b")],
        ZAddOptions::default(),
        T0,
    )
    .unwrap();
    db.zadd(
        b"z2",
        &[(10.0, b"b"), (20.0, b"c")],
        ZAddOptions::default(),
        T0,
    )
    .unwrap();
    db.sadd(b"s", &[b"b", b"c"], T0).unwrap();
    assert_eq!(
        db.zstore(
            b"u",
            &[b"z1", b"z2"],
            ZSetOp::Union,
            None,
            Aggregate::Sum,
            T0
        ),
        Ok(3)
    );
    assert_eq!(db.zscore(b"u", b"b", T0), Ok(Some(12.0)));
    assert_eq!(
        db.zstore(
            b"i",
            &[b"z1", b"z2"],
            ZSetOp::Inter,
            Some(&[2.0, 1.0]),
            Aggregate::Max,
            T0
        ),
        Ok(1)
    );
    assert_eq!(db.zscore(b"i", b"b", T0), Ok(Some(10.0)));
    assert_eq!(
        db.zstore(
            b"i",
            &[b"z1", b"z2"],
            ZSetOp::Inter,
            Some(&[2.0, 1.0]),
            Aggregate::Min,
            T0
        ),
        Ok(1)
    );
    assert_eq!(db.zscore(b"i", b"b", T0), Ok(Some(4.0)));
    assert_eq!(
        db.zstore(
            b"m",
            &[b"z2", b"s"],
            ZSetOp::Inter,
            None,
            Aggregate::Sum,
            T0
        ),
        Ok(2)
    );
    assert_eq!(db.zscore(b"m", b"c", T0), Ok(Some(21.0)));
    assert_eq!(
        db.zstore(
            b"m",
            &[b"z1", b"missing"],
            ZSetOp::Inter,
            None,
            Aggregate::Sum,
            T0
        ),
        Ok(0)
    );
    assert_eq!(db.exists(&[b"m"], T0), 0);
    // The difference keeps the first input's scores; the answered forms sort by score.
    assert_eq!(
        db.zstore(
            b"d",
            &[b"z2", b"z1"],
            ZSetOp::Diff,
            None,
            Aggregate::Sum,
            T0
        ),
        Ok(1)
    );
    let union = db
        .zcombine(&[b"z1", b"s"], ZSetOp::Union, None, Aggregate::Sum, T0)
        .unwrap();
    let scores: Vec<f64> = union.iter().map(|(_, s)| *s).collect();
    assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{union:?}");
    assert_eq!(db.zintercard(&[b"z1", b"z2"], 0, T0), Ok(1));
    assert_eq!(db.zintercard(&[b"z1", b"s"], 1, T0), Ok(1));
    db.push(b"l", &[b"x"], quiver_cache::ListEnd::Left, false, T0)
        .unwrap();
    assert_eq!(
        db.zstore(
            b"m",
            &[b"z1", b"l"],
            ZSetOp::Union,
            None,
            Aggregate::Sum,
            T0
        ),
        Err(OpError::WrongType)
    );
}

#[test]
fn pops_from_the_first_sorted_set_and_random_members() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    seed(&mut db);
    db.set(b"str", b"v", Default::default(), T0).unwrap();
    assert_eq!(db.zpop_first(&[b"none"], false, 1, T0), Ok(None));
    assert_eq!(
        db.zpop_first(&[b"none", b"str", b"z"], false, 1, T0),
        Err(OpError::WrongType)
    );
    let (key, items) = db
        .zpop_first(&[b"none", b"z"], true, 2, T0)
        .unwrap()
        .unwrap();
    assert_eq!(&key[..], b"z");
    assert_eq!(items.len(), 2);
    assert!(items[0].1 >= items[1].1, "highest first: {items:?}");
    let all = db.zrange(b"z", &spec(ZRangeBy::Rank(0, -1)), T0).unwrap();
    let picked = db.zrandmember(b"z", Some(100), T0).unwrap();
    assert_eq!(picked.len(), all.len(), "a positive count never repeats");
    let repeated = db.zrandmember(b"z", Some(-7), T0).unwrap();
    assert_eq!(repeated.len(), 7);
    assert!(repeated.iter().all(|item| all.contains(item)));
    assert_eq!(db.zrandmember(b"none", Some(3), T0), Ok(Vec::new()));
}
