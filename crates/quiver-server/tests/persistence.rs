//! Cache snapshots through real processes: RDB files exchanged with redis-server 7.0 both
//! ways with every type and encoding (Quiver's checked by `redis-check-rdb`), SAVE,
//! BGSAVE and LASTSAVE, a BGSAVE while a client writes, the final snapshot at SHUTDOWN, a
//! restart that keeps the keys, and a damaged snapshot refused at start-up with a clear
//! message.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::{Connection, Value};

use crate::support::{Server, Started, info_field, redis_connection};

/// A redis-server on a Unix socket saving into `dir`, killed on drop.
struct RedisServer {
    child: Child,
    socket: PathBuf,
}

impl RedisServer {
    /// Starts redis-server on `dir` (loading `dir/dump.rdb` if there is one), or `None`
    /// when it is not installed and not required (CI requires it).
    fn start(dir: &Path) -> Option<RedisServer> {
        let socket = dir.join("redis.sock");
        let spawned = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--loglevel",
                "warning",
                "--dir",
            ])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(error) if std::env::var_os("DIFFERENTIAL_REQUIRE_REDIS").is_none() => {
                eprintln!("snapshot exchange skipped: cannot start redis-server: {error}");
                return None;
            }
            Err(error) => panic!("cannot start redis-server: {error}"),
        };
        let server = RedisServer { child, socket };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&server.socket).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    fn connection(&self) -> Connection {
        redis::Client::open(format!("unix://{}", self.socket.display()))
            .expect("redis url")
            .get_connection_with_timeout(Duration::from_secs(10))
            .expect("connect to redis-server")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cmd(con: &mut Connection, args: &[&[u8]]) -> Value {
    let mut c = redis::cmd(std::str::from_utf8(args[0]).expect("a command name"));
    for arg in &args[1..] {
        c.arg(*arg);
    }
    c.query(con)
        .unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(args[0])))
}

/// Runs a command written as words separated by spaces (`\x20` is a space inside a
/// word, `\n` a newline).
fn run(con: &mut Connection, line: &str) -> Value {
    let words: Vec<String> = line
        .split(' ')
        .map(|w| w.replace("\\x20", " ").replace("\\n", "\n"))
        .collect();
    let words: Vec<&[u8]> = words.iter().map(String::as_bytes).collect();
    cmd(con, &words)
}

/// The function library `populate` loads answers.
fn answers(con: &mut Connection) {
    assert_eq!(run(con, "FCALL answer 0"), Value::Int(42));
}

/// Every type in every encoding Redis 7.0 writes, TTLs, and a second database.
fn populate(con: &mut Connection) {
    for line in [
        "SET s:int 12345",
        "SET s:neg -7",
        "SET s:wide 9223372036854775807",
        "SET s:short hello",
        "SET s:ttl expiring",
        "PEXPIRE s:ttl 100000000",
        "RPUSH l:small a 1 -5000 hello 70000",
        "HSET h:small a 1 b hello",
        "SADD set:ints 1 5 -70000",
        "SADD set:strings x y z",
        "ZADD z:small 1 a 2.5 b -3 c",
        "ZADD z:big 1 m -inf n inf o",
        "PFADD hll a b c d e f g",
        r"FUNCTION LOAD #!lua\x20name=lib\nredis.register_function('answer',function()return\x2042\x20end)",
        "SELECT 2",
        "SET other db2",
        "SELECT 0",
    ] {
        run(con, line);
    }
    let long: Vec<u8> = b"compressible text ".repeat(20);
    cmd(con, &[b"SET", b"s:long", &long]);
    let binary: Vec<u8> = (0..=255).collect();
    cmd(con, &[b"SET", b"s:binary", &binary]);
    cmd(con, &[b"RPUSH", b"l:big", &vec![b'x'; 10_000]]);
    for i in 0..2000 {
        let item = if i % 3 == 0 {
            i.to_string()
        } else {
            format!("item-{i}")
        };
        cmd(con, &[b"RPUSH", b"l:big", item.as_bytes()]);
    }
    for i in 0..600 {
        let (f, v) = (format!("f{i}"), format!("v{i}"));
        cmd(con, &[b"HSET", b"h:big", f.as_bytes(), v.as_bytes()]);
        cmd(con, &[b"SADD", b"set:big", i.to_string().as_bytes()]);
    }
    for i in 0..300 {
        let (score, member) = (format!("{}.25", i), format!("member-{i}"));
        cmd(
            con,
            &[b"ZADD", b"z:big", score.as_bytes(), member.as_bytes()],
        );
    }
    for i in 1..=250 {
        let id = format!("1-{i}");
        let fields: Vec<String> = if i % 7 == 0 {
            vec!["other".into(), i.to_string()]
        } else {
            vec!["f".into(), i.to_string(), "g".into(), "v".into()]
        };
        let mut args: Vec<&[u8]> = vec![b"XADD", b"x", id.as_bytes()];
        args.extend(fields.iter().map(String::as_bytes));
        cmd(con, &args);
    }
    for line in [
        "XDEL x 1-3 1-4",
        "XGROUP CREATE x g1 0",
        "XGROUP CREATE x g2 $",
        "XREADGROUP GROUP g1 alice COUNT 5 STREAMS x >",
        "XREADGROUP GROUP g1 bob COUNT 3 STREAMS x >",
        "XACK x g1 1-1",
        "XGROUP CREATECONSUMER x g2 carol",
    ] {
        run(con, line);
    }
}

/// What every key of database `db` holds, in a form both servers give alike.
fn digest(con: &mut Connection, db: u32) -> BTreeMap<String, String> {
    run(con, &format!("SELECT {db}"));
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(con).expect("KEYS");
    let mut out = BTreeMap::new();
    for key in keys {
        let t: String = redis::cmd("TYPE").arg(&key).query(con).expect("TYPE");
        let sorted = |mut v: Vec<Vec<u8>>| {
            v.sort();
            v
        };
        let contents = match t.as_str() {
            "string" => format!("{:?}", cmd(con, &[b"GET", &key])),
            "list" => format!("{:?}", cmd(con, &[b"LRANGE", &key, b"0", b"-1"])),
            "set" => {
                let members: Vec<Vec<u8>> = redis::cmd("SMEMBERS").arg(&key).query(con).unwrap();
                format!("{:?}", sorted(members))
            }
            "hash" => {
                let fields: BTreeMap<Vec<u8>, Vec<u8>> =
                    redis::cmd("HGETALL").arg(&key).query(con).unwrap();
                format!("{fields:?}")
            }
            "zset" => format!(
                "{:?}",
                cmd(con, &[b"ZRANGE", &key, b"0", b"-1", b"WITHSCORES"])
            ),
            "stream" => format!(
                "{:?} {:?} {:?} {:?}",
                cmd(con, &[b"XRANGE", &key, b"-", b"+"]),
                cmd(con, &[b"XPENDING", &key, b"g1"]),
                cmd(
                    con,
                    &[b"XPENDING", &key, b"g1", b"-", b"+", b"100", b"alice"]
                )
                .clone_ids(),
                groups(con, &key),
            ),
            other => panic!("unexpected type {other}"),
        };
        let ttl: i64 = redis::cmd("PTTL").arg(&key).query(con).unwrap();
        out.insert(
            String::from_utf8_lossy(&key).into_owned(),
            format!("{t} ttl:{} {contents}", ttl > 0),
        );
    }
    run(con, "SELECT 0");
    out
}

/// XINFO GROUPS without the idle times that depend on when it is asked.
fn groups(con: &mut Connection, key: &[u8]) -> String {
    let Value::Array(groups) = cmd(con, &[b"XINFO", b"GROUPS", key]) else {
        panic!("XINFO GROUPS");
    };
    let mut out = String::new();
    for g in groups {
        out.push_str(&format!("{g:?};"));
    }
    out
}

trait CloneIds {
    /// The IDs and delivery counts of an extended XPENDING reply (not the idle times).
    fn clone_ids(&self) -> String;
}

impl CloneIds for Value {
    fn clone_ids(&self) -> String {
        let Value::Array(rows) = self else {
            return format!("{self:?}");
        };
        rows.iter()
            .map(|row| match row {
                Value::Array(f) => format!("{:?}/{:?}/{:?}", f[0], f[1], f[3]),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn snapshot_path(data_dir: &Path) -> PathBuf {
    data_dir.join("cache").join("dump.rdb")
}

#[test]
fn snapshots_move_between_redis_and_quiver_both_ways() {
    let redis_dir = tempfile::tempdir().expect("temp dir");
    let Some(redis) = RedisServer::start(redis_dir.path()) else {
        return;
    };
    let mut rcon = redis.connection();
    populate(&mut rcon);
    run(&mut rcon, "SAVE");
    let expected = (digest(&mut rcon, 0), digest(&mut rcon, 2));
    assert!(expected.0.len() > 15, "{:?}", expected.0.keys());
    drop(redis);

    // Redis's file loads into Quiver.
    let data = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(data.path().join("cache")).unwrap();
    std::fs::copy(
        redis_dir.path().join("dump.rdb"),
        snapshot_path(data.path()),
    )
    .unwrap();
    let quiver = Server::start(data.path(), &["--cache-save", ""]);
    let mut qcon = redis_connection(&quiver);
    assert_eq!((digest(&mut qcon, 0), digest(&mut qcon, 2)), expected);
    answers(&mut qcon);

    // Quiver's file passes redis-check-rdb and loads into Redis.
    std::fs::remove_file(snapshot_path(data.path())).unwrap();
    assert_eq!(run(&mut qcon, "SAVE"), Value::Okay);
    let check = Command::new("redis-check-rdb")
        .arg(snapshot_path(data.path()))
        .output()
        .expect("run redis-check-rdb");
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success() && report.contains("RDB looks OK"),
        "{report}"
    );
    let back = tempfile::tempdir().expect("temp dir");
    std::fs::copy(snapshot_path(data.path()), back.path().join("dump.rdb")).unwrap();
    let redis = RedisServer::start(back.path()).expect("redis-server started before");
    let mut rcon = redis.connection();
    assert_eq!((digest(&mut rcon, 0), digest(&mut rcon, 2)), expected);
    answers(&mut rcon);
}

#[test]
fn bgsave_and_shutdown_keep_the_keys_across_restarts() {
    let data = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(data.path(), &[]);
    let mut con = redis_connection(&server);
    for i in 0..5000 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut con)
            .unwrap();
    }
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_changes_since_last_save"),
        "5000"
    );
    let before: u64 = redis::cmd("LASTSAVE").query(&mut con).unwrap();
    let started: String = redis::cmd("BGSAVE").query(&mut con).unwrap();
    assert_eq!(started, "Background saving started");
    let deadline = Instant::now() + Duration::from_secs(30);
    while info_field(&mut con, "persistence", "rdb_bgsave_in_progress") != "0" {
        assert!(Instant::now() < deadline, "BGSAVE did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_last_save_keys"),
        "5000"
    );
    let after: u64 = redis::cmd("LASTSAVE").query(&mut con).unwrap();
    assert!(after >= before);

    // kill -9: what BGSAVE wrote is what comes back.
    let _: () = redis::cmd("SET")
        .arg("late")
        .arg("x")
        .query(&mut con)
        .unwrap();
    server.signal("KILL");
    server.wait_exit(Duration::from_secs(10)).expect("killed");
    let mut server = Server::start(data.path(), &[]);
    let mut con = redis_connection(&server);
    assert_eq!(redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(), 5000);
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_last_load_keys_loaded"),
        "5000"
    );

    // SHUTDOWN with `save` rules set writes a last snapshot.
    let _: () = redis::cmd("SET")
        .arg("late")
        .arg("y")
        .query(&mut con)
        .unwrap();
    let _ = redis::cmd("SHUTDOWN").query::<Value>(&mut con);
    server.wait_exit(Duration::from_secs(30)).expect("stopped");
    let server = Server::start(data.path(), &[]);
    let mut con = redis_connection(&server);
    let late: String = redis::cmd("GET").arg("late").query(&mut con).unwrap();
    assert_eq!(late, "y");
    assert_eq!(redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(), 5001);
}

/// Function libraries survive a stop by SIGTERM (its final snapshot) and a move to the
/// append-only file (the base written at start-up), then a kill -9; start-up removes the
/// temporary files of saves cut short.
#[test]
fn libraries_survive_sigterm_and_the_first_append_only_base_and_stale_temp_files_go() {
    let library = "#!lua name=keep\nredis.register_function('eight', function() return 8 end)";
    let eight = |con: &mut Connection| -> i64 {
        redis::cmd("FCALL").arg("eight").arg(0).query(con).unwrap()
    };
    let data = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(data.path(), &[]);
    let mut con = redis_connection(&server);
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(library)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    server.signal("TERM");
    server.wait_exit(Duration::from_secs(30)).expect("stopped");
    // The temporary file of a save cut short is removed at start-up; one of a process
    // still running (this test's) is left alone.
    let cache_dir = data.path().join("cache");
    let stale = cache_dir.join("temp-4194300-1-0.rdb");
    let live = cache_dir.join(format!("temp-{}-1-0.rdb", std::process::id()));
    std::fs::write(&stale, b"cut short").unwrap();
    std::fs::write(&live, b"in progress").unwrap();

    let mut server = Server::start(data.path(), &["--cache-appendonly", "true"]);
    assert!(!stale.exists() && live.exists());
    let mut con = redis_connection(&server);
    assert_eq!(eight(&mut con), 8);
    server.signal("KILL");
    server.wait_exit(Duration::from_secs(10)).expect("killed");

    let server = Server::start(data.path(), &["--cache-appendonly", "true"]);
    let mut con = redis_connection(&server);
    assert_eq!(eight(&mut con), 8);
    let value: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
    assert_eq!(value, "v");
}

/// While a BGSAVE runs, a client overwrites, deletes and adds keys all over each shard; the
/// file holds every key that was there when it began, exactly once (loading fails on a
/// key written twice), each as it was or as a write made it, and none that was never
/// written.
#[test]
fn writes_during_a_bgsave_leave_each_key_once_in_the_file() {
    const KEYS: usize = 99_999;
    const BATCH: usize = 200;
    let data = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(data.path(), &["--cache-save", ""]);
    let mut con = redis_connection(&server);
    for start in (0..KEYS).step_by(10_000) {
        let mut fill = redis::pipe();
        for i in start..(start + 10_000).min(KEYS) {
            fill.cmd("SET").arg(format!("k{i}")).arg("old").ignore();
        }
        let () = fill.query(&mut con).unwrap();
    }
    let started: String = redis::cmd("BGSAVE").query(&mut con).unwrap();
    assert_eq!(started, "Background saving started");
    // Until the save is over, batches of writes to keys spread over the keyspace (a
    // shard's keys lie in the order they were added): for i a multiple of 3, overwrite
    // k{i}, delete k{i+1}, add n{i}; k{i+2} is never written.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut j = 0;
    while info_field(&mut con, "persistence", "rdb_bgsave_in_progress") != "0" {
        assert!(Instant::now() < deadline, "BGSAVE did not finish");
        let mut writes = redis::pipe();
        for _ in 0..BATCH {
            let i = 3 * (j * 7919 % (KEYS / 3));
            j += 1;
            writes.cmd("SET").arg(format!("k{i}")).arg("new").ignore();
            writes.cmd("DEL").arg(format!("k{}", i + 1)).ignore();
            writes.cmd("SET").arg(format!("n{i}")).arg("added").ignore();
        }
        let () = writes.query(&mut con).unwrap();
    }
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    server.signal("KILL");
    server.wait_exit(Duration::from_secs(10)).expect("killed");

    let server = Server::start(data.path(), &["--cache-save", ""]);
    let mut con = redis_connection(&server);
    let mut loaded = 0;
    for start in (0..KEYS).step_by(10_000) {
        let mut get = redis::pipe();
        for i in start..(start + 10_000).min(KEYS) {
            get.cmd("GET").arg(format!("k{i}"));
            get.cmd("GET").arg(format!("n{i}"));
        }
        let values: Vec<Option<String>> = get.query(&mut con).unwrap();
        for (pair, i) in values.chunks(2).zip(start..) {
            let (k, n) = (pair[0].as_deref(), pair[1].as_deref());
            let ok = match i % 3 {
                0 => matches!(k, Some("old" | "new")) && matches!(n, None | Some("added")),
                1 => matches!(k, None | Some("old")) && n.is_none(),
                _ => k == Some("old") && n.is_none(),
            };
            assert!(ok, "key {i}: k = {k:?}, n = {n:?}");
            loaded += usize::from(k.is_some()) + usize::from(n.is_some());
        }
    }
    assert_eq!(
        redis::cmd("DBSIZE").query::<usize>(&mut con).unwrap(),
        loaded
    );
}

#[test]
fn a_damaged_snapshot_stops_start_up_with_its_place() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &[]);
    let mut con = redis_connection(&server);
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    assert_eq!(run(&mut con, "SAVE"), Value::Okay);
    drop(con);
    drop(server);
    let path = snapshot_path(data.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    match Server::try_start(data.path(), &[]) {
        Started::Exited { stderr, .. } => {
            assert!(stderr.contains("checksum mismatch"), "{stderr}");
            assert!(stderr.contains("dump.rdb"), "{stderr}");
        }
        Started::Running(_) => panic!("a damaged snapshot was loaded"),
    }
    bytes.truncate(bytes.len() - 12);
    std::fs::write(&path, &bytes).unwrap();
    match Server::try_start(data.path(), &[]) {
        Started::Exited { stderr, .. } => assert!(stderr.contains("ends at byte"), "{stderr}"),
        Started::Running(_) => panic!("a truncated snapshot was loaded"),
    }
}

#[test]
fn a_failed_snapshot_refuses_writes_until_one_succeeds() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &[]);
    let mut con = redis_connection(&server);
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("before")
        .query(&mut con)
        .unwrap();
    assert_eq!(run(&mut con, "SAVE"), Value::Okay);
    let previous = std::fs::read(snapshot_path(data.path())).unwrap();

    // The snapshot's name is taken by a directory the rename cannot replace.
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("after")
        .query(&mut con)
        .unwrap();
    std::fs::remove_file(snapshot_path(data.path())).unwrap();
    std::fs::create_dir_all(snapshot_path(data.path()).join("in-the-way")).unwrap();
    let failed = redis::cmd("SAVE").query::<Value>(&mut con).unwrap_err();
    assert_eq!(failed.code(), Some("ERR"), "{failed}");
    assert_eq!(
        info_field(&mut con, "persistence", "rdb_last_bgsave_status"),
        "err"
    );
    let leftovers: Vec<_> = std::fs::read_dir(data.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    for refused in [
        redis::cmd("SET").arg("k").arg("x").query::<Value>(&mut con),
        redis::cmd("PING").query::<Value>(&mut con),
    ] {
        let error = refused.unwrap_err();
        assert_eq!(error.code(), Some("MISCONF"), "{error}");
    }
    let read: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
    assert_eq!(read, "after", "reads go on");

    // Without rules, or with stop-writes-on-bgsave-error off, writes go on.
    assert_eq!(
        run(&mut con, "CONFIG SET stop-writes-on-bgsave-error no"),
        Value::Okay
    );
    let _: () = redis::cmd("SET").arg("k").arg("y").query(&mut con).unwrap();
    assert_eq!(
        run(&mut con, "CONFIG SET stop-writes-on-bgsave-error yes"),
        Value::Okay
    );
    assert!(
        redis::cmd("SET")
            .arg("k")
            .arg("z")
            .query::<Value>(&mut con)
            .is_err()
    );

    // A snapshot that succeeds lifts the refusal.
    std::fs::remove_dir_all(snapshot_path(data.path())).unwrap();
    assert_eq!(run(&mut con, "SAVE"), Value::Okay);
    let _: () = redis::cmd("SET").arg("k").arg("z").query(&mut con).unwrap();
    assert_ne!(std::fs::read(snapshot_path(data.path())).unwrap(), previous);
}
