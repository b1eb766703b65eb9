use quiver_cache::{GetExExpiry, OpError, SetCondition, SetExpiry, SetOptions};

use crate::{T0, b, ks};

#[test]
fn set_get_and_options() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.get(b"k", T0).unwrap(), None);
    let o = db.set(b"k", b"v1", SetOptions::default(), T0).unwrap();
    assert!(o.written);
    assert_eq!(db.get(b"k", T0).unwrap().as_deref(), Some(&b"v1"[..]));
    let nx = SetOptions {
        condition: SetCondition::IfAbsent,
        ..Default::default()
    };
    assert!(!db.set(b"k", b"v2", nx, T0).unwrap().written);
    let xx = SetOptions {
        condition: SetCondition::IfPresent,
        get: true,
        ..Default::default()
    };
    let o = db.set(b"k", b"v3", xx, T0).unwrap();
    assert!(o.written);
    assert_eq!(o.old.as_deref(), Some(&b"v1"[..]));
    assert!(!db.set(b"absent", b"x", xx, T0).unwrap().written);
    // SET GET against a non-string is WRONGTYPE; plain SET overwrites any type.
    db.push(b"list", &[b"a"], quiver_cache::ListEnd::Left, false, T0)
        .unwrap();
    let get = SetOptions {
        get: true,
        ..Default::default()
    };
    assert_eq!(db.set(b"list", b"x", get, T0), Err(OpError::WrongType));
    assert!(
        db.set(b"list", b"x", SetOptions::default(), T0)
            .unwrap()
            .written
    );
    assert_eq!(db.get(b"list", T0).unwrap().as_deref(), Some(&b"x"[..]));
}

#[test]
fn set_expiry_options() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    let ex = SetOptions {
        expiry: SetExpiry::AtMs(T0 + 10_000),
        ..Default::default()
    };
    db.set(b"k", b"v", ex, T0).unwrap();
    assert_eq!(db.pttl(b"k", T0), 10_000);
    let keep = SetOptions {
        expiry: SetExpiry::Keep,
        ..Default::default()
    };
    db.set(b"k", b"v2", keep, T0).unwrap();
    assert_eq!(db.pttl(b"k", T0), 10_000);
    db.set(b"k", b"v3", SetOptions::default(), T0).unwrap();
    assert_eq!(db.pttl(b"k", T0), -1);
}

#[test]
fn incr_family() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.incr_by(b"n", 1, T0), Ok(1));
    assert_eq!(db.incr_by(b"n", 10, T0), Ok(11));
    assert_eq!(db.incr_by(b"n", -20, T0), Ok(-9));
    assert_eq!(db.get(b"n", T0).unwrap().as_deref(), Some(&b"-9"[..]));
    assert_eq!(db.object_encoding(b"n", T0), Some("int"));
    db.set(b"max", b"9223372036854775807", SetOptions::default(), T0)
        .unwrap();
    assert_eq!(db.incr_by(b"max", 1, T0), Err(OpError::Overflow));
    db.set(b"s", b"abc", SetOptions::default(), T0).unwrap();
    assert_eq!(db.incr_by(b"s", 1, T0), Err(OpError::NotAnInteger));
    db.set(b"sp", b" 1", SetOptions::default(), T0).unwrap();
    assert_eq!(db.incr_by(b"sp", 1, T0), Err(OpError::NotAnInteger));
    assert_eq!(
        db.incr_by_float(b"f", Some(10.5), T0).unwrap(),
        &b"10.5"[..]
    );
    assert_eq!(db.incr_by_float(b"f", Some(0.1), T0).unwrap(), &b"10.6"[..]);
    db.set(b"e", b"5.0e3", SetOptions::default(), T0).unwrap();
    assert_eq!(
        db.incr_by_float(b"e", Some(2.0e2), T0).unwrap(),
        &b"5200"[..]
    );
    assert_eq!(
        db.incr_by_float(b"e", Some(f64::INFINITY), T0),
        Err(OpError::NanOrInfinity)
    );
    assert_eq!(
        db.incr_by_float(b"s", Some(1.0), T0),
        Err(OpError::NotAFloat)
    );
    // A delta that is not a float is refused after the stored value's type.
    assert_eq!(db.incr_by_float(b"f", None, T0), Err(OpError::NotAFloat));
}

#[test]
fn append_strlen_ranges() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    assert_eq!(db.append(b"k", b"Hello ", T0), Ok(6));
    assert_eq!(db.append(b"k", b"World", T0), Ok(11));
    assert_eq!(db.strlen(b"k", T0), Ok(11));
    assert_eq!(db.getrange(b"k", 0, 4, T0).unwrap(), &b"Hello"[..]);
    assert_eq!(db.getrange(b"k", -5, -1, T0).unwrap(), &b"World"[..]);
    assert_eq!(db.getrange(b"k", 5, 1, T0).unwrap(), &b""[..]);
    assert_eq!(db.setrange(b"k", 6, b"Redis", T0), Ok(11));
    assert_eq!(db.get(b"k", T0).unwrap().unwrap(), &b"Hello Redis"[..]);
    assert_eq!(db.setrange(b"pad", 5, b"x", T0), Ok(6));
    assert_eq!(db.get(b"pad", T0).unwrap().unwrap(), &b"\0\0\0\0\0x"[..]);
    assert_eq!(db.setrange(b"none", 3, b"", T0), Ok(0));
    assert_eq!(db.exists(&[b"none"], T0), 0);
    assert_eq!(
        db.setrange(b"big", quiver_cache::MAX_STRING_BYTES, b"x", T0),
        Err(OpError::StringTooLong)
    );
    // Integers append as text.
    db.set(b"i", b"12", SetOptions::default(), T0).unwrap();
    assert_eq!(db.append(b"i", b"3", T0), Ok(3));
    assert_eq!(db.incr_by(b"i", 1, T0), Ok(124));
}

#[test]
fn multi_key_strings() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.mset(&[(b"a", b"1"), (b"b", b"2"), (b"a", b"3")], T0)
        .unwrap();
    let got = db.mget(&[b"a", b"b", b"c"], T0);
    assert_eq!(got[0].as_deref(), Some(&b"3"[..]));
    assert_eq!(got[1].as_deref(), Some(&b"2"[..]));
    assert_eq!(got[2], None);
    assert_eq!(db.msetnx(&[(b"c", b"1"), (b"a", b"x")], T0), Ok(false));
    assert_eq!(db.exists(&[b"c"], T0), 0);
    assert_eq!(db.msetnx(&[(b"c", b"1"), (b"d", b"x")], T0), Ok(true));
    assert_eq!(db.getdel(b"c", T0).unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.getdel(b"c", T0).unwrap(), None);
}

#[test]
fn getex_changes_ttl() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    db.set(b"k", b"v", SetOptions::default(), T0).unwrap();
    db.getex(b"k", GetExExpiry::AtMs(T0 + 5000), T0).unwrap();
    assert_eq!(db.pttl(b"k", T0), 5000);
    db.getex(b"k", GetExExpiry::Unchanged, T0).unwrap();
    assert_eq!(db.pttl(b"k", T0), 5000);
    db.getex(b"k", GetExExpiry::Persist, T0).unwrap();
    assert_eq!(db.pttl(b"k", T0), -1);
    assert_eq!(db.get_with(b"k", T0, |v| v.map(<[u8]>::len)), Ok(Some(1)));
    let _ = b("");
}
