//! Data commands of every family through the RESP listener with the `redis` crate.

use std::collections::{BTreeSet, HashMap};
use std::thread;
use std::time::{Duration, Instant};

use redis::{Commands, RedisResult};

use crate::support::{Server, raw_exchange, redis_connection};

fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    (dir, server)
}

#[test]
fn strings_with_ttl_and_counters() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    let _: () = con.set("greeting", "hello").expect("SET");
    let value: String = con.get("greeting").expect("GET");
    assert_eq!(value, "hello");
    let missing: Option<String> = con.get("nope").expect("GET missing");
    assert_eq!(missing, None);
    let _: () = redis::cmd("SET")
        .arg("temp")
        .arg("x")
        .arg("PX")
        .arg(60_000)
        .query(&mut con)
        .expect("SET PX");
    let pttl: i64 = con.pttl("temp").expect("PTTL");
    assert!((59_000..=60_000).contains(&pttl), "{pttl}");
    let n: i64 = con.incr("counter", 5).expect("INCRBY");
    assert_eq!(n, 5);
    let error = con
        .incr::<_, _, i64>("greeting", 1)
        .expect_err("INCR on text");
    assert_eq!(
        error.detail(),
        Some("value is not an integer or out of range")
    );
    let _: () = con.mset(&[("a", "1"), ("b", "2")]).expect("MSET");
    let values: Vec<Option<String>> = con.mget(&["a", "b", "zz"]).expect("MGET");
    assert_eq!(
        values,
        vec![Some("1".to_owned()), Some("2".to_owned()), None]
    );
    let len: usize = con.append("greeting", " world").expect("APPEND");
    assert_eq!(len, 11);
    let range: String = con.getrange("greeting", 0, 4).expect("GETRANGE");
    assert_eq!(range, "hello");
}

#[test]
fn keys_expire_scan_and_wrongtype() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    for i in 0..300 {
        let _: () = con.set(format!("key:{i}"), i).expect("SET");
    }
    let _: () = con.lpush("list", "x").expect("LPUSH");
    let error: RedisResult<String> = con.get("list");
    let error = error.expect_err("GET on a list");
    assert_eq!(error.code(), Some("WRONGTYPE"));
    let found: BTreeSet<String> = con
        .scan_match::<_, String>("key:*")
        .expect("SCAN")
        .collect::<Result<_, _>>()
        .expect("SCAN pages");
    assert_eq!(found.len(), 300);
    let kind: String = redis::cmd("TYPE")
        .arg("list")
        .query(&mut con)
        .expect("TYPE");
    assert_eq!(kind, "list");
    let set: bool = con.expire("key:1", 100).expect("EXPIRE");
    assert!(set);
    let ttl: i64 = con.ttl("key:1").expect("TTL");
    assert!((99..=100).contains(&ttl));
    let ttl: i64 = con.ttl("key:2").expect("TTL without expiry");
    assert_eq!(ttl, -1);
    let ttl: i64 = con.ttl("missing").expect("TTL missing");
    assert_eq!(ttl, -2);
    let _: () = con.rename("key:3", "renamed").expect("RENAME");
    let exists: usize = con
        .exists(&["renamed", "renamed", "key:3"])
        .expect("EXISTS");
    assert_eq!(exists, 2);
    let size: usize = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(size, 301);
}

#[test]
fn scan_returns_every_key_present_throughout_despite_concurrent_writes() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    for i in 0..2_000 {
        let _: () = con.set(format!("stable:{i}"), i).expect("SET");
    }
    let mut writer = redis_connection(&server);
    let churn = thread::spawn(move || {
        for i in 0..4_000 {
            let _: () = writer.set(format!("churn:{i}"), i).expect("SET churn");
            if i % 3 == 0 {
                let _: () = writer.del(format!("churn:{}", i / 2)).expect("DEL churn");
            }
        }
    });
    let mut seen = BTreeSet::new();
    let mut cursor = 0u64;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(50)
            .query(&mut con)
            .expect("SCAN");
        seen.extend(keys.into_iter().filter(|key| key.starts_with("stable:")));
        if next == 0 {
            break;
        }
        cursor = next;
    }
    churn.join().expect("writer thread");
    assert_eq!(seen.len(), 2_000);
}

#[test]
fn hashes_sets_and_sorted_sets() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    let added: usize = redis::cmd("HSET")
        .arg("h")
        .arg("f1")
        .arg("a")
        .arg("f2")
        .arg("b")
        .query(&mut con)
        .expect("HSET");
    assert_eq!(added, 2);
    let all: HashMap<String, String> = con.hgetall("h").expect("HGETALL");
    assert_eq!(all.len(), 2);
    let n: i64 = con.hincr("h", "n", 3).expect("HINCRBY");
    assert_eq!(n, 3);

    let _: usize = con.sadd("s1", &["a", "b", "c"]).expect("SADD");
    let _: usize = con.sadd("s2", &["b", "c", "d"]).expect("SADD");
    let inter: BTreeSet<String> = con.sinter(&["s1", "s2"]).expect("SINTER");
    assert_eq!(inter, ["b", "c"].iter().map(|s| (*s).to_owned()).collect());
    let stored: usize = con.sunionstore("s3", &["s1", "s2"]).expect("SUNIONSTORE");
    assert_eq!(stored, 4);

    let _: usize = con
        .zadd_multiple("z", &[(1.5, "a"), (0.5, "b"), (3.0, "c")])
        .expect("ZADD");
    let ranked: Vec<(String, f64)> = con
        .zrange_withscores("z", 0, -1)
        .expect("ZRANGE WITHSCORES");
    assert_eq!(
        ranked,
        vec![
            ("b".to_owned(), 0.5),
            ("a".to_owned(), 1.5),
            ("c".to_owned(), 3.0)
        ]
    );
    let by_score: Vec<String> = con
        .zrangebyscore("z", "(0.5", "+inf")
        .expect("ZRANGEBYSCORE");
    assert_eq!(by_score, vec!["a".to_owned(), "c".to_owned()]);
    let rank: Option<usize> = con.zrank("z", "c").expect("ZRANK");
    assert_eq!(rank, Some(2));

    // Picks with repeats past what one reply holds are refused, never attempted.
    for (command, key) in [
        ("SRANDMEMBER", "s1"),
        ("HRANDFIELD", "h"),
        ("ZRANDMEMBER", "z"),
    ] {
        for count in [
            "-10000000000",
            "-9223372036854775807",
            "-9223372036854775808",
        ] {
            let refused = redis::cmd(command)
                .arg(key)
                .arg(count)
                .query::<redis::Value>(&mut con)
                .expect_err("too many picks");
            assert!(
                refused.to_string().contains("out of range"),
                "{command} {count}: {refused}"
            );
        }
        let picks: Vec<String> = redis::cmd(command)
            .arg(key)
            .arg(-5)
            .query(&mut con)
            .expect("five picks");
        assert_eq!(picks.len(), 5);
    }
}

/// Polls `INFO section` until `field` reaches `at_least`.
fn wait_for_info(con: &mut redis::Connection, section: &str, field: &str, at_least: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info: String = redis::cmd("INFO").arg(section).query(con).expect("INFO");
        let value = info
            .lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {field} in INFO {section}: {info}"));
        if value >= at_least {
            return;
        }
        assert!(Instant::now() < deadline, "{field} stayed at {value}");
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn unlink_and_flush_async_free_big_values_in_the_background() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    let members: Vec<String> = (0..1_000).map(|i| format!("m{i}")).collect();
    let _: i64 = con.sadd("big", &members).expect("SADD");
    let _: () = con.set("small", "v").expect("SET");
    let removed: i64 = redis::cmd("UNLINK")
        .arg("big")
        .arg("small")
        .arg("none")
        .query(&mut con)
        .expect("UNLINK");
    assert_eq!(removed, 2);
    let exists: i64 = con.exists("big").expect("EXISTS");
    assert_eq!(exists, 0);
    // The set went to the background thread; the lone string was freed in place.
    wait_for_info(&mut con, "stats", "lazyfreed_objects", 1);
    for i in 0..100 {
        let _: () = con.set(format!("k{i}"), i).expect("SET");
    }
    let _: () = redis::cmd("FLUSHALL")
        .arg("ASYNC")
        .query(&mut con)
        .expect("FLUSHALL ASYNC");
    let size: i64 = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(size, 0);
    wait_for_info(&mut con, "stats", "lazyfreed_objects", 101);
    wait_for_info(&mut con, "memory", "lazyfree_pending_objects", 0);
}

#[test]
fn resp3_replies_use_resp3_types() {
    let (_dir, server) = start();
    let request = b"HELLO 3\r\nHSET h f v\r\nHGETALL h\r\nZADD z 1.5 m\r\nZSCORE z m\r\nGET missing\r\nQUIT\r\n";
    let reply = raw_exchange(server.resp, request, usize::MAX);
    let text = String::from_utf8_lossy(&reply);
    let end_of_hello = "$7\r\nmodules\r\n*0\r\n";
    let tail = &text[text.find(end_of_hello).expect("HELLO reply") + end_of_hello.len()..];
    assert_eq!(
        tail, ":1\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n:1\r\n,1.5\r\n_\r\n+OK\r\n",
        "{text}"
    );
}

#[test]
fn lists_and_blocking_pops_wake_up_or_time_out() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    let _: usize = con.rpush("l", &["a", "b", "c"]).expect("RPUSH");
    let range: Vec<String> = con.lrange("l", 0, -1).expect("LRANGE");
    assert_eq!(range, vec!["a", "b", "c"]);
    let popped: Vec<String> = redis::cmd("LPOP")
        .arg("l")
        .arg(2)
        .query(&mut con)
        .expect("LPOP count");
    assert_eq!(popped, vec!["a", "b"]);

    // a timeout with nothing pushed answers null after about the timeout
    let started = Instant::now();
    let none: Option<(String, String)> = con.blpop("empty", 0.2).expect("BLPOP timeout");
    assert_eq!(none, None);
    assert!(started.elapsed() >= Duration::from_millis(150));

    // a push from another client wakes the blocked one
    let mut pusher = redis_connection(&server);
    let waiter = thread::spawn(move || {
        let got: Option<(String, String)> = con.brpop("jobs", 10.0).expect("BRPOP");
        got
    });
    thread::sleep(Duration::from_millis(200));
    let _: usize = pusher.lpush("jobs", "job-1").expect("LPUSH");
    let got = waiter.join().expect("waiter thread");
    assert_eq!(got, Some(("jobs".to_owned(), "job-1".to_owned())));
}

#[test]
fn watch_conflict_aborts_exec() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    let mut other = redis_connection(&server);
    let _: () = con.set("balance", 10).expect("SET");
    let _: () = redis::cmd("WATCH")
        .arg("balance")
        .query(&mut con)
        .expect("WATCH");
    let _: () = other.set("balance", 20).expect("SET from another client");
    let result: Option<(i64,)> = redis::pipe()
        .atomic()
        .incr("balance", 1)
        .query(&mut con)
        .expect("EXEC");
    assert_eq!(result, None, "EXEC must fail after a watched key changed");
    let balance: i64 = con.get("balance").expect("GET");
    assert_eq!(balance, 20);
    // without interference the same transaction commits
    let _: () = redis::cmd("WATCH")
        .arg("balance")
        .query(&mut con)
        .expect("WATCH");
    let result: Option<(i64,)> = redis::pipe()
        .atomic()
        .incr("balance", 1)
        .query(&mut con)
        .expect("EXEC");
    assert_eq!(result, Some((21,)));
}

#[test]
fn noeviction_answers_oom_and_lru_evicts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &["--cache-max-memory", "1MiB"]);
    let mut con = redis_connection(&server);
    let value = "x".repeat(1024);
    let mut oom = None;
    for i in 0..4_000 {
        if let Err(error) = con.set::<_, _, ()>(format!("k{i}"), &value) {
            oom = Some(error);
            break;
        }
    }
    let oom = oom.expect("writes past max_memory must fail under noeviction");
    assert_eq!(oom.code(), Some("OOM"), "{oom}");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut con)
        .expect("CONFIG SET");
    for i in 0..4_000 {
        let _: () = con
            .set(format!("n{i}"), &value)
            .expect("SET under allkeys-lru");
    }
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut con)
        .expect("INFO");
    let evicted: u64 = info
        .lines()
        .find_map(|line| line.strip_prefix("evicted_keys:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("evicted_keys in INFO");
    assert!(evicted > 0, "{info}");
}

/// The value under `name` in a RESP2 reply of alternating names and values.
fn field<'v>(pairs: &'v redis::Value, name: &str) -> &'v redis::Value {
    let redis::Value::Array(items) = pairs else {
        panic!("not an array: {pairs:?}")
    };
    items
        .chunks(2)
        .find(|pair| matches!(&pair[0], redis::Value::BulkString(key) if key == name.as_bytes()))
        .map(|pair| &pair[1])
        .unwrap_or_else(|| panic!("no {name} in {pairs:?}"))
}

fn len(value: &redis::Value) -> usize {
    match value {
        redis::Value::Array(items) => items.len(),
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn xinfo_stream_full_count_bounds_every_pending_list() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    for id in ["1-1", "2-1", "3-1"] {
        let _: String = redis::cmd("XADD")
            .arg("s")
            .arg(id)
            .arg("f")
            .arg("v")
            .query(&mut con)
            .unwrap();
    }
    let _: () = redis::cmd("XGROUP")
        .arg(&["CREATE", "s", "g", "0"][..])
        .query(&mut con)
        .unwrap();
    let _: redis::Value = redis::cmd("XREADGROUP")
        .arg(&["GROUP", "g", "c1", "STREAMS", "s", ">"][..])
        .query(&mut con)
        .unwrap();
    let info: redis::Value = redis::cmd("XINFO")
        .arg(&["STREAM", "s", "FULL", "COUNT", "1"][..])
        .query(&mut con)
        .unwrap();
    assert_eq!(len(field(&info, "entries")), 1);
    let redis::Value::Array(groups) = field(&info, "groups") else {
        panic!("groups: {info:?}")
    };
    let group = &groups[0];
    assert_eq!(field(group, "pel-count"), &redis::Value::Int(3));
    assert_eq!(len(field(group, "pending")), 1, "{group:?}");
    let redis::Value::Array(consumers) = field(group, "consumers") else {
        panic!("consumers: {group:?}")
    };
    assert_eq!(field(&consumers[0], "pel-count"), &redis::Value::Int(3));
    assert_eq!(len(field(&consumers[0], "pending")), 1);
    // COUNT 0 lists everything.
    let all: redis::Value = redis::cmd("XINFO")
        .arg(&["STREAM", "s", "FULL", "COUNT", "0"][..])
        .query(&mut con)
        .unwrap();
    let redis::Value::Array(groups) = field(&all, "groups") else {
        panic!("groups: {all:?}")
    };
    assert_eq!(len(field(&groups[0], "pending")), 3);
}
