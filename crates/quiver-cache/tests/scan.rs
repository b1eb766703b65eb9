use std::collections::HashSet;

use quiver_cache::{SetOptions, ValueType};

use crate::{T0, ks};

#[test]
fn scan_returns_everything_once_when_quiet() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    for i in 0..1000 {
        db.set(format!("k{i}").as_bytes(), b"v", SetOptions::default(), T0)
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor = 0;
    loop {
        let (next, keys) = db.scan(cursor, None, 10, None, T0);
        seen.extend(keys);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), 1000);
    assert_eq!(seen.len(), 1000, "no duplicates without resizes");
}

#[test]
fn scan_guarantee_under_concurrent_inserts_and_deletes() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    for i in 0..500 {
        db.set(
            format!("stable{i}").as_bytes(),
            b"v",
            SetOptions::default(),
            T0,
        )
        .unwrap();
    }
    let mut seen = HashSet::new();
    let mut cursor = 0;
    let mut step = 0u32;
    loop {
        let (next, keys) = db.scan(cursor, None, 20, None, T0);
        seen.extend(keys);
        // Between calls: grow hard, then shrink hard, forcing table resizes.
        if step < 10 {
            for j in 0..400 {
                db.set(
                    format!("churn{step}_{j}").as_bytes(),
                    b"v",
                    SetOptions::default(),
                    T0,
                )
                .unwrap();
            }
        } else if step < 20 {
            let victims: Vec<Vec<u8>> = (0..400)
                .map(|j| format!("churn{}_{j}", step - 10).into_bytes())
                .collect();
            let refs: Vec<&[u8]> = victims.iter().map(|v| &v[..]).collect();
            db.del(&refs, T0);
        }
        step += 1;
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    for i in 0..500 {
        assert!(
            seen.contains(format!("stable{i}").as_bytes()),
            "stable{i} missed"
        );
    }
}

#[test]
fn scan_match_and_type() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    for i in 0..50 {
        db.set(
            format!("user:{i}").as_bytes(),
            b"v",
            SetOptions::default(),
            T0,
        )
        .unwrap();
        db.sadd(format!("set:{i}").as_bytes(), &[b"m"], T0).unwrap();
    }
    let collect = |db: &mut quiver_cache::Db<'_>, pat: Option<&[u8]>, t: Option<ValueType>| {
        let mut out = HashSet::new();
        let mut c = 0;
        loop {
            let (n, keys) = db.scan(c, pat, 7, t, T0);
            out.extend(keys);
            c = n;
            if c == 0 {
                return out;
            }
        }
    };
    assert_eq!(collect(&mut db, Some(b"user:*"), None).len(), 50);
    assert_eq!(collect(&mut db, None, Some(ValueType::Set)).len(), 50);
    assert_eq!(
        collect(&mut db, Some(b"user:1?"), Some(ValueType::String)).len(),
        10
    );
    assert!(collect(&mut db, None, Some(ValueType::Hash)).is_empty());
}

#[test]
fn collection_scans() {
    let ks = ks();
    let mut db = ks.db(0).unwrap();
    let names: Vec<Vec<u8>> = (0..300).map(|i| format!("f{i}").into_bytes()).collect();
    let pairs: Vec<(&[u8], &[u8])> = names.iter().map(|n| (&n[..], &b"v"[..])).collect();
    db.hset(b"h", &pairs, T0).unwrap();
    let refs: Vec<&[u8]> = names.iter().map(|n| &n[..]).collect();
    db.sadd(b"s", &refs, T0).unwrap();
    let members: Vec<(f64, &[u8])> = refs
        .iter()
        .enumerate()
        .map(|(i, n)| (i as f64, *n))
        .collect();
    db.zadd(b"z", &members, Default::default(), T0).unwrap();
    let (mut h, mut s, mut z) = (HashSet::new(), HashSet::new(), HashSet::new());
    let mut c = 0;
    loop {
        let (n, items) = db.hscan(b"h", c, None, 10, T0).unwrap();
        h.extend(items.into_iter().map(|p| p.0));
        c = n;
        if c == 0 {
            break;
        }
    }
    loop {
        let (n, items) = db.sscan(b"s", c, Some(b"f1*"), 10, T0).unwrap();
        s.extend(items);
        c = n;
        if c == 0 {
            break;
        }
    }
    loop {
        let (n, items) = db.zscan(b"z", c, None, 10, T0).unwrap();
        z.extend(items.into_iter().map(|p| p.0));
        c = n;
        if c == 0 {
            break;
        }
    }
    assert_eq!(h.len(), 300);
    assert_eq!(s.len(), 111, "f1, f10..f19, f100..f199");
    assert_eq!(z.len(), 300);
}
