//! Lua scripting through real sockets with the `redis` crate: the lock-release pattern
//! clients use (EVALSHA, NOSCRIPT, then EVAL), atomicity against concurrent clients,
//! pipelined calls of clients on several databases and users sharing the script
//! thread's batches, and a long script answered BUSY and stopped by SCRIPT KILL from a
//! client on the same connection thread, while HTTP and native cache requests are refused.
//! (Replies and errors against redis-server are the differential test's part.)

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::support::{Server, http_get, redis_connection};

/// SCRIPT KILL, answered OK.
fn kill_script(admin: &mut redis::Connection) {
    let killed: String = redis::cmd("SCRIPT")
        .arg("KILL")
        .query(admin)
        .expect("SCRIPT KILL");
    assert_eq!(killed, "OK");
}

/// A connection to a RESP address (a `Server` stays on the test's thread).
fn connect(resp: SocketAddr) -> redis::Connection {
    let client = redis::Client::open(format!("redis://{resp}/")).expect("redis url");
    client
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("connect")
}

/// Sends `command` until it is answered with the error `code` (for at most 20 s).
fn until_error(
    conn: &mut redis::Connection,
    command: &redis::Cmd,
    code: &str,
) -> redis::RedisError {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "never answered {code}");
        match command.query::<redis::Value>(conn) {
            Err(error) if error.code() == Some(code) => return error,
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

#[test]
fn lock_release_script_with_evalsha_fallback() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    let mut conn = redis_connection(&server);
    let acquired: Option<String> = redis::cmd("SET")
        .arg("lock")
        .arg("token-1")
        .arg("NX")
        .arg("PX")
        .arg(30_000)
        .query(&mut conn)
        .expect("SET NX PX");
    assert_eq!(acquired.as_deref(), Some("OK"));
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(RELEASE)
        .query(&mut conn)
        .expect("SCRIPT LOAD");
    let cached = |conn: &mut redis::Connection| -> String {
        let info: String = redis::cmd("INFO").arg("memory").query(conn).unwrap();
        let line = info
            .lines()
            .find(|l| l.starts_with("number_of_cached_scripts:"));
        line.expect("number_of_cached_scripts").to_owned()
    };
    assert_eq!(cached(&mut conn), "number_of_cached_scripts:1");
    redis::cmd("SCRIPT")
        .arg("FLUSH")
        .exec(&mut conn)
        .expect("SCRIPT FLUSH");
    let missing = redis::cmd("EVALSHA")
        .arg(&sha)
        .arg(1)
        .arg("lock")
        .arg("token-1")
        .query::<i64>(&mut conn)
        .expect_err("flushed");
    assert_eq!(missing.code(), Some("NOSCRIPT"), "{missing}");
    assert_eq!(cached(&mut conn), "number_of_cached_scripts:0");
    // Someone else's token does not release the lock; the holder's does, once.
    let other: i64 = redis::cmd("EVAL")
        .arg(RELEASE)
        .arg(1)
        .arg("lock")
        .arg("token-2")
        .query(&mut conn)
        .expect("EVAL");
    assert_eq!(other, 0);
    for expected in [1, 0] {
        let released: i64 = redis::cmd("EVALSHA")
            .arg(&sha)
            .arg(1)
            .arg("lock")
            .arg("token-1")
            .query(&mut conn)
            .expect("EVALSHA after EVAL cached it");
        assert_eq!(released, expected);
    }
}

/// Scripts that read, compute and write run whole: concurrent increments through a
/// GET-then-SET script lose nothing.
#[test]
fn scripts_are_atomic_across_clients() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    let script = "local v = tonumber(redis.call('get', KEYS[1]) or '0') redis.call('set', KEYS[1], v + 1) return v + 1";
    let clients = 4;
    let rounds = 250;
    let resp = server.resp;
    std::thread::scope(|scope| {
        for _ in 0..clients {
            scope.spawn(move || {
                let mut conn = connect(resp);
                for _ in 0..rounds {
                    let _: i64 = redis::cmd("EVAL")
                        .arg(script)
                        .arg(1)
                        .arg("counter")
                        .query(&mut conn)
                        .expect("EVAL");
                }
            });
        }
    });
    let mut conn = redis_connection(&server);
    let total: i64 = redis::cmd("GET")
        .arg("counter")
        .query(&mut conn)
        .expect("GET");
    assert_eq!(total, clients * rounds);
}

/// Clients on different databases and users pipelining script calls at once: the script
/// thread runs their jobs in shared batches, each with its own caller, and each client
/// gets its replies in order.
#[test]
fn pipelined_script_calls_of_several_clients_keep_their_callers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    let resp = server.resp;
    let mut admin = redis_connection(&server);
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("counter")
        .arg("on")
        .arg(">pw")
        .arg("~count:*")
        .arg("+@all")
        .query(&mut admin)
        .expect("ACL SETUSER");
    let rounds = 200;
    std::thread::scope(|scope| {
        for db in [0, 3, 7] {
            scope.spawn(move || {
                let mut conn = connect(resp);
                if db == 7 {
                    let _: () = redis::cmd("AUTH")
                        .arg("counter")
                        .arg("pw")
                        .query(&mut conn)
                        .expect("AUTH");
                }
                let _: () = redis::cmd("SELECT")
                    .arg(db)
                    .query(&mut conn)
                    .expect("SELECT");
                let mut pipe = redis::pipe();
                for _ in 0..rounds {
                    pipe.cmd("EVAL")
                        .arg("return redis.call('incr', KEYS[1])")
                        .arg(1)
                        .arg("count:calls");
                }
                let replies: Vec<i64> = pipe.query(&mut conn).expect("pipelined EVALs");
                assert_eq!(replies, (1..=rounds).collect::<Vec<i64>>(), "db {db}");
                if db == 7 {
                    let refused = redis::cmd("EVAL")
                        .arg("return redis.call('incr', KEYS[1])")
                        .arg(1)
                        .arg("other")
                        .query::<i64>(&mut conn)
                        .expect_err("a key the user may not touch");
                    assert_eq!(refused.code(), Some("NOPERM"), "{refused}");
                }
            });
        }
    });
    for db in [0, 3, 7] {
        let _: () = redis::cmd("SELECT")
            .arg(db)
            .query(&mut admin)
            .expect("SELECT");
        let count: i64 = redis::cmd("GET")
            .arg("count:calls")
            .query(&mut admin)
            .expect("GET");
        assert_eq!(count, rounds, "db {db}");
    }
}

/// A server with one connection thread, whose scripts are busy after 100 ms.
fn one_thread_busy_after_100ms(dir: &std::path::Path) -> Server {
    let args = [
        "--resp-io-threads",
        "1",
        "--resp-busy-reply-threshold",
        "100ms",
    ];
    Server::start(dir, &args)
}

#[test]
fn busy_script_is_killed_from_the_same_connection_thread() {
    let dir = tempfile::tempdir().expect("temp dir");
    // One connection thread: the killer shares it with the client running the script.
    let server = one_thread_busy_after_100ms(dir.path());
    let mut admin = redis_connection(&server);
    let resp = server.resp;
    let runner = std::thread::scope(|scope| {
        let runner = scope.spawn(move || {
            let mut conn = connect(resp);
            redis::cmd("EVAL")
                .arg("local i = 0 while true do i = i + 1 end")
                .arg(0)
                .query::<i64>(&mut conn)
                .expect_err("killed")
                .to_string()
        });
        let busy = until_error(&mut admin, &redis::cmd("PING"), "BUSY").to_string();
        assert!(busy.contains("SCRIPT KILL"), "{busy}");
        let stats = redis::cmd("FUNCTION")
            .arg("KILL")
            .query::<String>(&mut admin)
            .expect_err("not a function");
        assert_eq!(stats.code(), Some("BUSY"));
        kill_script(&mut admin);
        runner.join().expect("runner")
    });
    assert!(
        runner.contains("Script killed by user with SCRIPT KILL"),
        "{runner}"
    );
    let pong: String = redis::cmd("PING")
        .query(&mut admin)
        .expect("PING after kill");
    assert_eq!(pong, "PONG");
    let not_busy = redis::cmd("SCRIPT")
        .arg("KILL")
        .query::<String>(&mut admin)
        .expect_err("nothing runs");
    assert_eq!(not_busy.code(), Some("NOTBUSY"));
}

/// While a script is busy, HTTP and native cache requests are refused instead of waiting on
/// the keyspace (which would hold their threads: `/health` still answers), and served
/// again once it is killed.
#[test]
fn busy_script_refuses_http_and_native_cache_requests() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &["--resp-busy-reply-threshold", "100ms"]);
    let mut admin = redis_connection(&server);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let native = runtime
        .block_on(quiver_client::Client::connect(&format!(
            "quiver://{}",
            server.native
        )))
        .expect("native client");
    let resp = server.resp;
    std::thread::scope(|scope| {
        let runner = scope.spawn(move || {
            redis::cmd("EVAL")
                .arg("while true do end")
                .arg(0)
                .query::<i64>(&mut connect(resp))
                .expect_err("killed")
        });
        until_error(&mut admin, &redis::cmd("PING"), "BUSY");
        for _ in 0..8 {
            let (status, body) = http_get(server.http, "/v1/cache/0/k");
            assert_eq!(status, 503, "{body}");
            assert!(body.contains("\"busy\""), "{body}");
        }
        assert_eq!(http_get(server.http, "/health").0, 200);
        let refused = runtime
            .block_on(native.cache_get("k"))
            .expect_err("refused while busy")
            .to_string();
        assert!(refused.contains("OVERLOADED"), "{refused}");
        kill_script(&mut admin);
        runner.join().expect("runner");
    });
    let (status, body) = http_get(server.http, "/v1/cache/0/k");
    assert_eq!(status, 404, "{body}");
    let value = runtime.block_on(native.cache_get("k")).expect("served");
    assert_eq!(value, None);
}

/// While a script is busy, what is allowed then but takes shard locks never holds a
/// connection thread: a client closing with watched keys or tracking on, UNWATCH and
/// DISCARD (answered at once), WATCH (answered once the script is killed); PING is
/// answered BUSY and SCRIPT KILL works, on the same thread (one connection thread).
#[test]
fn busy_script_leaves_watches_and_tracking_to_later() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = one_thread_busy_after_100ms(dir.path());
    let resp = server.resp;
    let mut watcher = connect(resp);
    let mut tracker = connect(resp);
    let mut unwatcher = connect(resp);
    for con in [&mut watcher, &mut unwatcher] {
        let _: () = redis::cmd("WATCH").arg("w").query(con).expect("WATCH");
    }
    let _: () = redis::cmd("CLIENT")
        .arg("TRACKING")
        .arg("ON")
        .query(&mut tracker)
        .expect("TRACKING");
    let _: Option<String> = redis::cmd("GET").arg("t").query(&mut tracker).expect("GET");
    let mut admin = redis_connection(&server);
    // A thread held by a lock fails the test instead of hanging it.
    let limit = Some(Duration::from_secs(20));
    for con in [&mut admin, &mut unwatcher] {
        con.set_read_timeout(limit).expect("read timeout");
    }
    std::thread::scope(|scope| {
        let runner = scope.spawn(move || {
            let mut con = connect(resp);
            con.set_read_timeout(limit).expect("read timeout");
            redis::cmd("EVAL")
                .arg("while true do end")
                .arg(0)
                .query::<i64>(&mut con)
                .expect_err("killed")
        });
        until_error(&mut admin, &redis::cmd("PING"), "BUSY");
        drop(watcher);
        drop(tracker);
        let unwatched: String = redis::cmd("UNWATCH")
            .query(&mut unwatcher)
            .expect("UNWATCH");
        assert_eq!(unwatched, "OK");
        let late_watch = scope.spawn(move || {
            let mut con = connect(resp);
            con.set_read_timeout(limit).expect("read timeout");
            redis::cmd("WATCH").arg("x").query::<String>(&mut con)
        });
        std::thread::sleep(Duration::from_millis(200));
        let busy = redis::cmd("PING")
            .query::<String>(&mut admin)
            .expect_err("still busy");
        assert_eq!(busy.code(), Some("BUSY"));
        kill_script(&mut admin);
        runner.join().expect("runner");
        assert_eq!(late_watch.join().expect("watch").expect("WATCH"), "OK");
    });
    let pong: String = redis::cmd("PING").query(&mut admin).expect("PING");
    assert_eq!(pong, "PONG");
}

/// A script that wrote answers UNKILLABLE; SHUTDOWN and SHUTDOWN SAVE answer BUSY (a save
/// would wait for the keys it holds); SHUTDOWN NOSAVE, allowed while it is busy, stops the
/// server without waiting for the script's client to leave (the drain would last
/// two minutes).
#[test]
fn a_script_that_wrote_cannot_be_killed() {
    script_that_wrote(&[]);
}

/// The same with the append-only file on: its journal never waits on the keys the
/// script holds, so the server still answers and stops.
#[test]
fn a_script_that_wrote_cannot_be_killed_with_the_append_only_file() {
    script_that_wrote(&[
        "--cache-appendonly",
        "true",
        "--cache-appendfsync",
        "always",
    ]);
}

fn script_that_wrote(extra: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut args = vec![
        "--resp-busy-reply-threshold",
        "50ms",
        "--shutdown-drain-timeout",
        "120s",
    ];
    args.extend_from_slice(extra);
    let mut server = Server::start(dir.path(), &args);
    let mut admin = redis_connection(&server);
    let watcher = redis_connection(&server);
    let resp = server.resp;
    // The script never ends: its client is left behind; dropping the server ends it.
    std::thread::spawn(move || {
        let mut conn = connect(resp);
        let _ = redis::cmd("EVAL")
            .arg("redis.call('set', 'x', '1') while true do end")
            .arg(0)
            .query::<i64>(&mut conn);
    });
    let kill = redis::cmd("SCRIPT").arg("KILL").clone();
    until_error(&mut admin, &kill, "UNKILLABLE");
    // FUNCTION KILL too: that it wrote comes first, as in Redis.
    let function_kill = redis::cmd("FUNCTION")
        .arg("KILL")
        .query::<String>(&mut admin)
        .expect_err("unkillable");
    assert_eq!(function_kill.code(), Some("UNKILLABLE"));
    // A client whose WATCH waits for the keys the script holds does not hold the stop
    // up either.
    let mut watcher = watcher;
    let watching = std::thread::spawn(move || {
        let _ = redis::cmd("WATCH").arg("x").query::<String>(&mut watcher);
    });
    std::thread::sleep(Duration::from_millis(200));
    for save in [None, Some("SAVE")] {
        let refused = redis::cmd("SHUTDOWN")
            .arg(save)
            .exec(&mut admin)
            .expect_err("busy");
        assert_eq!(refused.code(), Some("BUSY"), "{refused}");
    }
    let _ = redis::cmd("SHUTDOWN").arg("NOSAVE").exec(&mut admin);
    let status = server.wait_exit(Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    watching.join().expect("the watching client");
    // The script never finished: what it wrote was not journaled, as Redis never
    // propagates a script that did not end.
    let server = Server::start(dir.path(), &args);
    let mut con = redis_connection(&server);
    let x: Option<String> = redis::cmd("GET").arg("x").query(&mut con).unwrap();
    assert_eq!(x, None);
}

/// Runs `body` as a script on a connection of its own, returning once it has started
/// (it publishes on a channel this waits on first); the thread ends with the script.
fn running_script(
    resp: SocketAddr,
    body: &str,
) -> std::thread::JoinHandle<redis::RedisResult<i64>> {
    let mut watcher = connect(resp);
    let _: redis::Value = redis::cmd("SUBSCRIBE")
        .arg("script:started")
        .query(&mut watcher)
        .unwrap();
    let script = format!("redis.call('publish', 'script:started', '1') {body}");
    let thread = std::thread::spawn(move || {
        let mut conn = connect(resp);
        redis::cmd("EVAL")
            .arg(script)
            .arg(0)
            .query::<i64>(&mut conn)
    });
    watcher
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started: redis::Value = watcher.recv_response().expect("the script started");
    assert!(matches!(started, redis::Value::Array(_)), "{started:?}");
    thread
}

/// SIGTERM while a script runs (before it counts as busy): the stop is bounded by the
/// drain, and the last snapshot, which would wait for the script's keys, is skipped.
#[test]
fn a_stop_while_a_script_runs_does_not_wait_for_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path(), &["--shutdown-drain-timeout", "1s"]);
    let _script = running_script(server.resp, "while true do end");
    server.signal("TERM");
    assert!(
        server
            .wait_for_log("a script is still running", Duration::from_secs(20))
            .is_some()
    );
    assert!(server.wait_exit(Duration::from_secs(20)).is_some());
}

/// Scrapes of /metrics while a script holds the keyspace wait for it on the side: the
/// connection threads go on answering /health.
#[test]
fn metrics_scrapes_during_a_script_leave_health_answering() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    let script = running_script(
        server.resp,
        "local t = redis.call('time') while redis.call('time')[1] - t[1] < 3 do end return 1",
    );
    let http = server.http;
    let scrapes: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || crate::support::http_get(http, "/metrics").0))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(crate::support::http_get(http, "/health").0, 200);
    assert!(!script.is_finished(), "/health waited for the script");
    for scrape in scrapes {
        assert_eq!(scrape.join().unwrap(), 200);
    }
    assert_eq!(script.join().unwrap().unwrap(), 1);
}

#[test]
fn big_replies_arguments_and_tables_do_not_stop_the_engine() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut con = redis_connection(&server);
    let items: Vec<String> = (0..20_000).map(|i| format!("item{i}")).collect();
    let _: () = redis::cmd("RPUSH")
        .arg("big")
        .arg(&items)
        .query(&mut con)
        .unwrap();
    let eval = |con: &mut redis::Connection, script: &str| -> redis::Value {
        redis::cmd("EVAL")
            .arg(script)
            .arg(0)
            .query(con)
            .expect(script)
    };
    // Each of these held a Lua reference per element and took the script thread down.
    // (The lengths are what redis-server 7.0 answers for the same data.)
    let list = eval(&mut con, "return redis.call('lrange', 'big', 0, -1)");
    assert!(matches!(&list, redis::Value::Array(items) if items.len() == 20_000));
    let made = eval(
        &mut con,
        "local t = {} for i = 1, 20000 do t[i] = 'v' .. i end return t",
    );
    assert!(matches!(&made, redis::Value::Array(items) if items.len() == 20_000));
    for (script, length) in [
        (
            "local t = {} for i = 1, 20000 do t['k' .. i] = 'v' .. i end return #cjson.encode(t)",
            337_789,
        ),
        (
            "return #cjson.encode(redis.call('lrange', 'big', 0, -1))",
            228_891,
        ),
        (
            "return #cmsgpack.pack(redis.call('lrange', 'big', 0, -1))",
            188_893,
        ),
        (
            "return #cjson.decode(cjson.encode(redis.call('lrange', 'big', 0, -1)))",
            20_000,
        ),
    ] {
        assert_eq!(
            eval(&mut con, script),
            redis::Value::Int(length),
            "{script}"
        );
    }
    // Arguments that are not text, more than a Lua stack holds.
    let binary: Vec<Vec<u8>> = (0..10_000u32)
        .map(|i| [&[0xff][..], &i.to_le_bytes()].concat())
        .collect();
    let count: i64 = redis::cmd("EVAL")
        .arg("return #ARGV")
        .arg(0)
        .arg(&binary)
        .query(&mut con)
        .unwrap();
    assert_eq!(count, 10_000);
    // Nesting past the engine's bound is refused with lua-cjson's error, and the engine
    // goes on.
    let deep = error_of(
        &mut con,
        "cjson.decode_max_depth(100000) local ok, e = pcall(cjson.decode, string.rep('[', 5000)) cjson.decode_max_depth(1000) error(e)",
    );
    assert!(
        deep.contains("Found too many nested data structures (3001) at character 3001"),
        "{deep}"
    );
    // A library whose loading passes more strings to a Rust function than the VM has
    // references fails to load; the engine goes on.
    let greedy = "#!lua name=greedy\nlocal function g(n, ...) if n == 0 then return redis.log(redis.LOG_WARNING, ...) end return g(n - 1, 'x', ...) end g(8000)";
    let refused = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(greedy)
        .query::<String>(&mut con)
        .expect_err("the load fails");
    assert!(
        refused.to_string().contains("Error registering functions"),
        "{refused}"
    );
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("#!lua name=fine\nredis.register_function('fine', function() return 7 end)")
        .query(&mut con)
        .unwrap();
    let seven: i64 = redis::cmd("FCALL")
        .arg("fine")
        .arg(0)
        .query(&mut con)
        .unwrap();
    assert_eq!(seven, 7);
    // More scripts cached than the VM has references (each EVAL of a new body caches one).
    let mut pipe = redis::pipe();
    for i in 0..9_000 {
        pipe.cmd("SCRIPT")
            .arg("LOAD")
            .arg(format!("return {i}"))
            .ignore();
    }
    let _: () = pipe.query(&mut con).expect("9,000 scripts load");
    assert_eq!(eval(&mut con, "return 8999"), redis::Value::Int(8999));
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
    assert_eq!(eval(&mut con, "return 1"), redis::Value::Int(1));
}

fn error_of(con: &mut redis::Connection, script: &str) -> String {
    let error = redis::cmd("EVAL")
        .arg(script)
        .arg(0)
        .query::<redis::Value>(con)
        .expect_err("an error");
    error.to_string()
}
