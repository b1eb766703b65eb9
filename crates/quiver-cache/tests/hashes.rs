use quiver_cache::{OpError, SetOptions};

use crate::{T0, ks};

#[test]
fn hash_basics() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.hset(b"h", &[(b"a", b"1"), (b"b", b"2")], T0), Ok(2));
    assert_eq!(db.hset(b"h", &[(b"a", b"10"), (b"c", b"3")], T0), Ok(1));
    assert_eq!(
        db.hget(b"h", b"a", T0).unwrap().as_deref(),
        Some(&b"10"[..])
    );
    assert_eq!(db.hsetnx(b"h", b"a", b"x", T0), Ok(false));
    assert_eq!(db.hsetnx(b"h", b"d", b"4", T0), Ok(true));
    assert_eq!(db.hlen(b"h", T0), Ok(4));
    assert_eq!(db.hstrlen(b"h", b"a", T0), Ok(2));
    assert_eq!(db.hexists(b"h", b"zz", T0), Ok(false));
    let got = db.hmget(b"h", &[b"a", b"zz"], T0).unwrap();
    assert_eq!(got[1], None);
    let mut all = db.hgetall(b"h", T0).unwrap();
    all.sort();
    assert_eq!(all.len(), 4);
    assert_eq!(db.hkeys(b"h", T0).unwrap().len(), 4);
    assert_eq!(db.hvals(b"h", T0).unwrap().len(), 4);
    assert_eq!(db.hdel(b"h", &[b"a", b"b", b"zz"], T0), Ok(2));
    assert_eq!(db.hdel(b"h", &[b"c", b"d"], T0), Ok(2));
    assert_eq!(db.exists(&[b"h"], T0), 0, "an emptied hash is deleted");
}

#[test]
fn hash_increments() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.hincrby(b"h", b"n", 5, T0), Ok(5));
    assert_eq!(db.hincrby(b"h", b"n", -7, T0), Ok(-2));
    db.hset(b"h", &[(b"s", b"x")], T0).unwrap();
    assert_eq!(
        db.hincrby(b"h", b"s", 1, T0),
        Err(OpError::HashNotAnInteger)
    );
    assert_eq!(db.hincrbyfloat(b"h", b"f", 1.5, T0).unwrap(), &b"1.5"[..]);
    assert_eq!(
        db.hincrbyfloat(b"h", b"s", 1.5, T0),
        Err(OpError::HashNotAFloat)
    );
    db.hset(b"h", &[(b"m", b"9223372036854775807")], T0)
        .unwrap();
    assert_eq!(db.hincrby(b"h", b"m", 1, T0), Err(OpError::Overflow));
    db.set(b"str", b"v", SetOptions::default(), T0).unwrap();
    assert_eq!(
        db.hset(b"str", &[(b"a", b"1")], T0),
        Err(OpError::WrongType)
    );
    assert_eq!(db.hget(b"str", b"a", T0), Err(OpError::WrongType));
}

#[test]
fn hrandfield_counts() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    let fields: Vec<(Vec<u8>, Vec<u8>)> = (0..10)
        .map(|i| (format!("f{i}").into_bytes(), format!("v{i}").into_bytes()))
        .collect();
    let pairs: Vec<(&[u8], &[u8])> = fields.iter().map(|(f, v)| (&f[..], &v[..])).collect();
    db.hset(b"h", &pairs, T0).unwrap();
    assert_eq!(db.hrandfield(b"h", None, T0).unwrap().len(), 1);
    let distinct = db.hrandfield(b"h", Some(5), T0).unwrap();
    let mut names: Vec<_> = distinct.iter().map(|p| p.0.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 5);
    assert_eq!(db.hrandfield(b"h", Some(50), T0).unwrap().len(), 10);
    assert_eq!(db.hrandfield(b"h", Some(-30), T0).unwrap().len(), 30);
    assert!(db.hrandfield(b"none", Some(3), T0).unwrap().is_empty());
}
