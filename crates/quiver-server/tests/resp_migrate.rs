//! MIGRATE through real sockets: between two Quiver servers (TTLs, the KEYS form, COPY,
//! REPLACE, the target's errors, AUTH, unreachable and silent targets), against a
//! scripted target that lets the test write a key while it is in transit, and with
//! redis-server both ways when it is installed (required where
//! `DIFFERENTIAL_REQUIRE_REDIS` is set, as in CI).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use redis::RedisResult;

use crate::support::{Server, error_text, redis_connection};

fn start(extra: &[&str]) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), extra);
    (dir, server)
}

fn migrate(
    con: &mut redis::Connection,
    to: SocketAddr,
    key: &str,
    db: u32,
    options: &[&str],
) -> RedisResult<String> {
    redis::cmd("MIGRATE")
        .arg(to.ip().to_string())
        .arg(to.port())
        .arg(key)
        .arg(db)
        .arg(5000)
        .arg(options)
        .query(con)
}

#[test]
fn migrate_moves_keys_between_quiver_servers() {
    let (_a, source) = start(&[]);
    let (_b, target) = start(&["--resp-requirepass", "secret"]);
    let mut from = redis_connection(&source);
    let client = redis::Client::open(format!("redis://:secret@{}/", target.resp)).unwrap();
    let mut to = client.get_connection().unwrap();

    let _: () = redis::cmd("SET")
        .arg("s")
        .arg("v")
        .arg("PX")
        .arg(100_000)
        .query(&mut from)
        .unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg("l")
        .arg(&["a", "b", "c"])
        .query(&mut from)
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg("h")
        .arg("f")
        .arg("1")
        .query(&mut from)
        .unwrap();

    // Without the password, the target's refusal is the reply, and nothing moves.
    let refused = error_text(migrate(&mut from, target.resp, "s", 0, &[]));
    assert!(
        refused.starts_with("ERR Target instance replied with error: NOAUTH"),
        "{refused}"
    );
    assert_eq!(
        migrate(&mut from, target.resp, "s", 2, &["AUTH", "secret"]).unwrap(),
        "OK"
    );
    let _: () = redis::cmd("SELECT").arg(2).query(&mut to).unwrap();
    let value: String = redis::cmd("GET").arg("s").query(&mut to).unwrap();
    assert_eq!(value, "v");
    let ttl: i64 = redis::cmd("PTTL").arg("s").query(&mut to).unwrap();
    assert!(ttl > 90_000 && ttl <= 100_000, "the TTL travels: {ttl}");
    let left: i64 = redis::cmd("EXISTS").arg("s").query(&mut from).unwrap();
    assert_eq!(left, 0);

    // KEYS with COPY and AUTH2: the keys present go, the source keeps them.
    let moved = migrate(
        &mut from,
        target.resp,
        "",
        2,
        &[
            "COPY", "AUTH2", "default", "secret", "KEYS", "l", "missing", "h",
        ],
    );
    assert_eq!(moved.unwrap(), "OK");
    let list: Vec<String> = redis::cmd("LRANGE")
        .arg("l")
        .arg(0)
        .arg(-1)
        .query(&mut to)
        .unwrap();
    assert_eq!(list, ["a", "b", "c"]);
    let kept: i64 = redis::cmd("EXISTS")
        .arg(&["l", "h"])
        .query(&mut from)
        .unwrap();
    assert_eq!(kept, 2);

    // An existing key is refused without REPLACE and replaced with it.
    let _: () = redis::cmd("RPUSH")
        .arg("l")
        .arg("d")
        .query(&mut from)
        .unwrap();
    let busy = error_text(migrate(&mut from, target.resp, "l", 2, &["AUTH", "secret"]));
    assert_eq!(
        busy,
        "ERR Target instance replied with error: BUSYKEY Target key name already exists."
    );
    let kept: i64 = redis::cmd("LLEN").arg("l").query(&mut from).unwrap();
    assert_eq!(kept, 4, "a refused key stays");
    let replaced = migrate(
        &mut from,
        target.resp,
        "l",
        2,
        &["REPLACE", "AUTH", "secret"],
    );
    assert_eq!(replaced.unwrap(), "OK");
    let list: i64 = redis::cmd("LLEN").arg("l").query(&mut to).unwrap();
    assert_eq!(list, 4);

    // A key named twice goes once, as in Redis.
    let _: () = redis::cmd("SET")
        .arg("twice")
        .arg("1")
        .query(&mut from)
        .unwrap();
    let twice = migrate(
        &mut from,
        target.resp,
        "",
        2,
        &["REPLACE", "AUTH", "secret", "KEYS", "twice", "twice"],
    );
    assert_eq!(twice.unwrap(), "OK");
    let gone: i64 = redis::cmd("EXISTS").arg("twice").query(&mut from).unwrap();
    assert_eq!(gone, 0);
    assert_eq!(
        migrate(&mut from, target.resp, "nothing", 0, &[]).unwrap(),
        "NOKEY"
    );
    let syntax = error_text(migrate(&mut from, target.resp, "h", 0, &["KEYS", "h"]));
    assert_eq!(
        syntax,
        "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
    );
    // Inside MULTI it is refused at EXEC, and the key stays.
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("MIGRATE")
        .arg(target.resp.ip().to_string())
        .arg(target.resp.port())
        .arg("h")
        .arg(0)
        .arg(1000);
    let result: RedisResult<redis::Value> = pipe.query(&mut from);
    assert!(
        format!("{result:?}").contains("inside a transaction"),
        "{result:?}"
    );
    let kept: i64 = redis::cmd("EXISTS").arg("h").query(&mut from).unwrap();
    assert_eq!(kept, 1);
}

#[test]
fn migrate_reports_unreachable_and_silent_targets() {
    let (_a, source) = start(&[]);
    let mut from = redis_connection(&source);
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query(&mut from)
        .unwrap();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    assert_eq!(
        error_text(migrate(&mut from, closed_addr, "k", 0, &[])),
        "IOERR error or timeout connecting to the client"
    );
    // A target that accepts and never answers: the timeout (here 200 ms) ends it.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let holder = std::thread::spawn(move || silent.accept().map(|(stream, _)| stream));
    let started = Instant::now();
    let result: RedisResult<String> = redis::cmd("MIGRATE")
        .arg(addr.ip().to_string())
        .arg(addr.port())
        .arg("k")
        .arg(0)
        .arg(200)
        .query(&mut from);
    assert_eq!(
        error_text(result),
        "IOERR error or timeout reading to target instance"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(holder.join());
    let kept: String = redis::cmd("GET").arg("k").query(&mut from).unwrap();
    assert_eq!(kept, "v", "a key whose transfer failed stays");
}

/// A target that reads one request, tells the test, waits for its go, then answers
/// `replies` for each of `count` replies.
fn scripted_target(
    count: usize,
    replies: &'static [&'static str],
) -> (
    SocketAddr,
    mpsc::Receiver<()>,
    mpsc::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (read_tx, read_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        // Everything the source sends comes in one burst: read until it stops.
        loop {
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => request.extend_from_slice(&chunk[..n]),
                Err(_) if !request.is_empty() => break,
                Err(_) => {}
            }
        }
        read_tx.send(()).unwrap();
        go_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        for i in 0..count {
            let reply = replies[i.min(replies.len() - 1)];
            stream.write_all(reply.as_bytes()).unwrap();
        }
    });
    (addr, read_rx, go_tx, worker)
}

#[test]
fn a_key_written_while_in_transit_is_kept() {
    let (_a, source) = start(&[]);
    let mut from = redis_connection(&source);
    let mut other = redis_connection(&source);
    let _: () = redis::cmd("MSET")
        .arg(&["a", "1", "b", "2"])
        .query(&mut from)
        .unwrap();
    // SELECT, then one RESTORE per key.
    let (addr, read, go, worker) = scripted_target(3, &["+OK\r\n"]);
    let caller = std::thread::spawn(move || {
        let result = migrate(&mut from, addr, "", 0, &["KEYS", "a", "b"]);
        (result, from)
    });
    read.recv_timeout(Duration::from_secs(10)).unwrap();
    let _: () = redis::cmd("SET")
        .arg("b")
        .arg("new")
        .query(&mut other)
        .unwrap();
    go.send(()).unwrap();
    let (result, _) = caller.join().unwrap();
    worker.join().unwrap();
    let error = error_text(result);
    assert!(
        error.starts_with("ERR 1 of the keys were written while MIGRATE sent them"),
        "{error}"
    );
    let a: i64 = redis::cmd("EXISTS").arg("a").query(&mut other).unwrap();
    assert_eq!(a, 0, "the unchanged key moved");
    let b: String = redis::cmd("GET").arg("b").query(&mut other).unwrap();
    assert_eq!(b, "new", "the new value is not lost");
}

#[test]
fn keys_the_target_took_go_even_after_another_key_failed() {
    let (_a, source) = start(&[]);
    let mut from = redis_connection(&source);
    let _: () = redis::cmd("MSET")
        .arg(&["a", "1", "b", "2"])
        .query(&mut from)
        .unwrap();
    let (addr, read, go, worker) = scripted_target(
        3,
        &[
            "+OK\r\n",
            "-BUSYKEY Target key name already exists.\r\n",
            "+OK\r\n",
        ],
    );
    let caller = std::thread::spawn(move || {
        let result = migrate(&mut from, addr, "", 0, &["KEYS", "a", "b"]);
        (result, from)
    });
    read.recv_timeout(Duration::from_secs(10)).unwrap();
    go.send(()).unwrap();
    let (result, mut from) = caller.join().unwrap();
    worker.join().unwrap();
    assert_eq!(
        error_text(result),
        "ERR Target instance replied with error: BUSYKEY Target key name already exists."
    );
    let left: Vec<Option<String>> = redis::cmd("MGET")
        .arg(&["a", "b"])
        .query(&mut from)
        .unwrap();
    assert_eq!(left, [Some("1".to_owned()), None]);
}

/// redis-server on a TCP port of its own, killed on drop.
struct RedisServer {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    fn start() -> Option<RedisServer> {
        let required = std::env::var_os("DIFFERENTIAL_REQUIRE_REDIS").is_some();
        let dir = tempfile::tempdir().unwrap();
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let spawned = Command::new("redis-server")
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                ])
                .arg("--dir")
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let mut child = match spawned {
                Ok(child) => child,
                Err(_) if !required => return None,
                Err(error) => panic!("redis-server is required: {error}"),
            };
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                if std::net::TcpStream::connect(addr).is_ok() {
                    return Some(RedisServer {
                        child,
                        addr,
                        _dir: dir,
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn migrate_goes_both_ways_with_redis_server() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let (_a, quiver) = start(&[]);
    let mut q = redis_connection(&quiver);
    let mut r = redis::Client::open(format!("redis://{}/", redis_server.addr))
        .unwrap()
        .get_connection()
        .unwrap();
    let _: () = redis::cmd("ZADD")
        .arg("z")
        .arg(&["1", "a", "2", "b"])
        .query(&mut q)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("s")
        .arg("v")
        .arg("EX")
        .arg(100)
        .query(&mut q)
        .unwrap();
    assert_eq!(
        migrate(&mut q, redis_server.addr, "", 0, &["KEYS", "z", "s"]).unwrap(),
        "OK"
    );
    let z: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg("z")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut r)
        .unwrap();
    assert_eq!(z, [("a".to_owned(), 1.0), ("b".to_owned(), 2.0)]);
    let ttl: i64 = redis::cmd("TTL").arg("s").query(&mut r).unwrap();
    assert!(ttl > 90 && ttl <= 100, "{ttl}");
    // And back: redis-server's MIGRATE restores into Quiver.
    assert_eq!(migrate(&mut r, quiver.resp, "z", 1, &[]).unwrap(), "OK");
    let _: () = redis::cmd("SELECT").arg(1).query(&mut q).unwrap();
    let count: i64 = redis::cmd("ZCARD").arg("z").query(&mut q).unwrap();
    assert_eq!(count, 2);
}
