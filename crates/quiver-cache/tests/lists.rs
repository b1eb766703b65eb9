use quiver_cache::{ExpireCondition, ListEnd, OpError, SetOptions};

use crate::{T0, ks};

fn strs(v: Vec<bytes::Bytes>) -> Vec<String> {
    v.into_iter()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect()
}

#[test]
fn push_pop_range() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(
        db.push(b"l", &[b"a", b"b"], ListEnd::Left, false, T0),
        Ok(2)
    );
    assert_eq!(db.push(b"l", &[b"c"], ListEnd::Right, false, T0), Ok(3));
    assert_eq!(strs(db.lrange(b"l", 0, -1, T0).unwrap()), ["b", "a", "c"]);
    assert_eq!(db.push(b"none", &[b"x"], ListEnd::Left, true, T0), Ok(0));
    assert_eq!(db.exists(&[b"none"], T0), 0);
    assert_eq!(
        strs(db.pop(b"l", ListEnd::Left, None, T0).unwrap().unwrap()),
        ["b"]
    );
    assert_eq!(
        strs(db.pop(b"l", ListEnd::Right, Some(5), T0).unwrap().unwrap()),
        ["c", "a"]
    );
    assert_eq!(db.pop(b"l", ListEnd::Right, None, T0), Ok(None));
    assert_eq!(db.exists(&[b"l"], T0), 0);
    db.set(b"s", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(
        db.push(b"s", &[b"x"], ListEnd::Left, false, T0),
        Err(OpError::WrongType)
    );
}

#[test]
fn index_set_insert_rem_trim() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.push(
        b"l",
        &[b"a", b"b", b"a", b"c", b"a"],
        ListEnd::Right,
        false,
        T0,
    )
    .unwrap();
    assert_eq!(
        db.lindex(b"l", Some(-1), T0).unwrap().as_deref(),
        Some(&b"a"[..])
    );
    assert_eq!(db.lindex(b"l", Some(10), T0).unwrap(), None);
    assert_eq!(db.lset(b"l", Some(1), b"B", T0), Ok(()));
    assert_eq!(
        db.lset(b"l", Some(9), b"B", T0),
        Err(OpError::IndexOutOfRange)
    );
    assert_eq!(
        db.lset(b"nokey", Some(0), b"B", T0),
        Err(OpError::NoSuchKey)
    );
    assert_eq!(db.linsert(b"l", true, b"c", b"X", T0), Ok(6));
    assert_eq!(db.linsert(b"l", false, b"zz", b"X", T0), Ok(-1));
    assert_eq!(db.linsert(b"nokey", false, b"zz", b"X", T0), Ok(0));
    assert_eq!(
        strs(db.lrange(b"l", 0, -1, T0).unwrap()),
        ["a", "B", "a", "X", "c", "a"]
    );
    assert_eq!(db.lrem(b"l", -1, b"a", T0), Ok(1));
    assert_eq!(
        strs(db.lrange(b"l", 0, -1, T0).unwrap()),
        ["a", "B", "a", "X", "c"]
    );
    assert_eq!(db.lrem(b"l", 1, b"a", T0), Ok(1));
    assert_eq!(
        strs(db.lrange(b"l", 0, -1, T0).unwrap()),
        ["B", "a", "X", "c"]
    );
    assert_eq!(db.lrem(b"l", 0, b"a", T0), Ok(1));
    db.ltrim(b"l", 1, -1, T0).unwrap();
    assert_eq!(strs(db.lrange(b"l", 0, -1, T0).unwrap()), ["X", "c"]);
    db.ltrim(b"l", 5, 10, T0).unwrap();
    assert_eq!(db.exists(&[b"l"], T0), 0);
}

#[test]
fn lpos_options() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    // The example from the Redis docs: a b c d 1 2 3 4 3 3 3
    let items: Vec<&[u8]> = vec![
        b"a", b"b", b"c", b"d", b"1", b"2", b"3", b"4", b"3", b"3", b"3",
    ];
    db.push(b"l", &items, ListEnd::Right, false, T0).unwrap();
    assert_eq!(db.lpos(b"l", b"3", 1, None, 0, T0), Ok(vec![6]));
    assert_eq!(
        db.lpos(b"l", b"3", 1, Some(0), 0, T0),
        Ok(vec![6, 8, 9, 10])
    );
    assert_eq!(db.lpos(b"l", b"3", 2, None, 0, T0), Ok(vec![8]));
    assert_eq!(db.lpos(b"l", b"3", -1, Some(2), 0, T0), Ok(vec![10, 9]));
    assert_eq!(db.lpos(b"l", b"3", 1, Some(0), 7, T0), Ok(vec![6]));
    assert_eq!(db.lpos(b"l", b"zz", 1, None, 0, T0), Ok(vec![]));
}

#[test]
fn lmove_and_ready_keys() {
    let ks = ks();
    ks.block_on(0, b"dst").unwrap();
    let mut db = ks.db(0).unwrap();
    db.push(b"src", &[b"a", b"b", b"c"], ListEnd::Right, false, T0)
        .unwrap();
    assert!(ks.take_ready_keys().is_empty(), "nobody waits on src");
    assert_eq!(
        db.lmove(b"src", b"dst", ListEnd::Right, ListEnd::Left, T0)
            .unwrap()
            .as_deref(),
        Some(&b"c"[..])
    );
    assert_eq!(ks.take_ready_keys(), vec![(0, b"dst".to_vec())]);
    assert!(ks.take_ready_keys().is_empty());
    // Rotation on one list.
    assert_eq!(
        db.lmove(b"src", b"src", ListEnd::Left, ListEnd::Right, T0)
            .unwrap()
            .as_deref(),
        Some(&b"a"[..])
    );
    assert_eq!(strs(db.lrange(b"src", 0, -1, T0).unwrap()), ["b", "a"]);
    // A rotation of a one-element list keeps the key, and its TTL.
    db.push(b"one", &[b"x"], ListEnd::Right, false, T0).unwrap();
    db.expire_at(b"one", (T0 + 100_000) as i64, ExpireCondition::Always, T0)
        .unwrap();
    assert_eq!(
        db.lmove(b"one", b"one", ListEnd::Left, ListEnd::Right, T0)
            .unwrap()
            .as_deref(),
        Some(&b"x"[..])
    );
    assert_eq!(db.pttl(b"one", T0), 100_000);
    assert_eq!(
        db.lmove(b"none", b"dst", ListEnd::Left, ListEnd::Left, T0),
        Ok(None)
    );
    db.set(b"str", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(
        db.lmove(b"src", b"str", ListEnd::Left, ListEnd::Left, T0),
        Err(OpError::WrongType)
    );
    assert_eq!(db.llen(b"src", T0), Ok(2), "a refused move pops nothing");
    ks.unblock(0, b"dst").unwrap();
    db.push(b"dst", &[b"x"], ListEnd::Left, false, T0).unwrap();
    assert!(ks.take_ready_keys().is_empty());
}

#[test]
fn pop_first_serves_blpop() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.pop_first(&[b"a", b"b"], ListEnd::Left, T0), Ok(None));
    db.push(b"b", &[b"x", b"y"], ListEnd::Right, false, T0)
        .unwrap();
    let (key, v) = db
        .pop_first(&[b"a", b"b"], ListEnd::Left, T0)
        .unwrap()
        .unwrap();
    assert_eq!((key.as_slice(), &v[..]), (&b"b"[..], &b"x"[..]));
    let (_, v) = db
        .pop_first(&[b"a", b"b"], ListEnd::Right, T0)
        .unwrap()
        .unwrap();
    assert_eq!(&v[..], b"y");
    assert_eq!(db.exists(&[b"b"], T0), 0);
    db.set(b"a", b"str", SetOptions::default(), T0).unwrap();
    assert_eq!(
        db.pop_first(&[b"a", b"b"], ListEnd::Left, T0),
        Err(OpError::WrongType)
    );
}

#[test]
fn sort_by_numbers_patterns_and_store() {
    use quiver_cache::{SortOptions, SortOutput};
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.push(b"l", &[b"3", b"1", b"2"], ListEnd::Right, false, T0)
        .unwrap();
    db.set(b"w_1", b"30", Default::default(), T0).unwrap();
    db.set(b"w_3", b"10", Default::default(), T0).unwrap();
    let items = |output| match output {
        SortOutput::Items(items) => items
            .into_iter()
            .map(|item: Option<bytes::Bytes>| item.map(|b| String::from_utf8(b.to_vec()).unwrap()))
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let plain = db.sort(b"l", &SortOptions::default(), T0).unwrap();
    assert_eq!(
        items(plain),
        [Some("1".into()), Some("2".into()), Some("3".into())]
    );
    // By weights: 2 has none (0), 3 weighs 10, 1 weighs 30; GET # and a missing key.
    let by = SortOptions {
        by: Some("w_*".into()),
        get: vec!["#".into(), "w_*".into()],
        ..SortOptions::default()
    };
    assert_eq!(
        items(db.sort(b"l", &by, T0).unwrap()),
        [
            Some("2".into()),
            None,
            Some("3".into()),
            Some("10".into()),
            Some("1".into()),
            Some("30".into())
        ]
    );
    let stored = SortOptions {
        desc: true,
        store: Some("dst".into()),
        ..SortOptions::default()
    };
    assert_eq!(db.sort(b"l", &stored, T0), Ok(SortOutput::Stored(3)));
    assert_eq!(db.lrange(b"dst", 0, -1, T0).unwrap(), ["3", "2", "1"]);
    db.push(b"bad", &[b"x"], ListEnd::Right, false, T0).unwrap();
    assert_eq!(
        db.sort(b"bad", &SortOptions::default(), T0),
        Err(OpError::SortNotNumber)
    );
}
