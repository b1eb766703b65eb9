//! The cache's append-only file through real processes: kill -9 of a `quiver serve` child
//! while clients write, round after round, under each `appendfsync` mode, with rewrites
//! in between (every acknowledged write is there after the restart); turning it on with
//! CONFIG SET; BGREWRITEAOF deleting what the new base covers; a torn tail cut and
//! reported; damage inside the log refused at start-up, and the recovery option.
//!
//! `AOF_CRASH_ROUNDS` sets the number of kill -9 rounds (12 by default, as CI runs it;
//! the recorded long run is in docs/benchmarks.md) and `AOF_CRASH_SEED` the seed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::{Connection, Value};

use crate::support::{Server, Started, http_get, info_field, redis_connection};

const WRITERS: usize = 4;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn aof_args(fsync: &'static str) -> [&'static str; 6] {
    [
        "--cache-appendonly",
        "true",
        "--cache-appendfsync",
        fsync,
        "--cache-save",
        "",
    ]
}

fn log_dir(data: &Path) -> PathBuf {
    data.join("cache/appendonlydir/log")
}

/// Kills `server` with SIGKILL and starts a new one on `data` with `args`.
fn killed_and_restarted(server: Server, data: &Path, args: &[&str]) -> (Server, Connection) {
    server.signal("KILL");
    drop(server);
    let server = Server::start(data, args);
    let con = redis_connection(&server);
    (server, con)
}

/// SET k{i} i for every i of `keys`, in one pipeline.
fn set_keys(con: &mut Connection, keys: std::ops::Range<u32>) {
    let mut pipe = redis::pipe();
    for i in keys {
        pipe.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
    }
    pipe.query::<()>(con).unwrap();
}

/// Fsyncs of the append-only log so far, from `/metrics`.
fn fsyncs(server: &Server) -> u64 {
    let (status, metrics) = http_get(server.http, "/metrics");
    assert_eq!(status, 200);
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("quiver_cache_aof_fsyncs_total "))
        .expect("the fsync counter")
        .parse()
        .unwrap()
}

fn wait_rewrite(con: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while info_field(con, "persistence", "aof_rewrite_in_progress") != "0" {
        assert!(Instant::now() < deadline, "the rewrite did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        info_field(con, "persistence", "aof_last_bgrewrite_status"),
        "ok"
    );
}

/// What one writer had acknowledged: its counter, list and last string.
#[derive(Debug, Default, Clone, Copy)]
struct Acked {
    incr: i64,
    pushed: i64,
}

/// Writes until the connection breaks: INCR, RPUSH of a sequence number, SET with a
/// TTL, HSET, and a key created and deleted, recording what was acknowledged.
fn write_until_killed(server_resp: std::net::SocketAddr, writer: usize, start: Acked) -> Acked {
    let client = redis::Client::open(format!("redis://{server_resp}")).unwrap();
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(10))
        .unwrap();
    let mut acked = start;
    let (counter, list) = (format!("w{writer}:n"), format!("w{writer}:list"));
    loop {
        let mut pipe = redis::pipe();
        pipe.cmd("INCR")
            .arg(&counter)
            .cmd("RPUSH")
            .arg(&list)
            .arg(acked.pushed)
            .cmd("SET")
            .arg(format!("w{writer}:last"))
            .arg(acked.pushed)
            .arg("EX")
            .arg(10_000)
            .cmd("HSET")
            .arg(format!("w{writer}:h"))
            .arg(acked.pushed % 50)
            .arg(acked.pushed)
            .cmd("SET")
            .arg("gone")
            .arg(1)
            .cmd("DEL")
            .arg("gone");
        match pipe.query::<(i64, i64, Value, i64, Value, i64)>(&mut con) {
            Ok((n, len, ..)) => {
                acked.incr = n;
                assert_eq!(len, acked.pushed + 1, "writer {writer} list length");
                acked.pushed += 1;
            }
            Err(_) => return acked,
        }
    }
}

/// After a restart: every acknowledged write of each writer is there, in order, and at
/// most the one pipeline in flight beyond it.
fn check(con: &mut Connection, acked: &[Acked]) -> Vec<Acked> {
    acked
        .iter()
        .enumerate()
        .map(|(w, a)| {
            let n: i64 = redis::cmd("GET")
                .arg(format!("w{w}:n"))
                .query::<Option<i64>>(con)
                .unwrap()
                .unwrap_or(0);
            assert!(
                (a.incr..=a.incr + 1).contains(&n),
                "writer {w}: counter {n}, acknowledged {}",
                a.incr
            );
            let list: Vec<i64> = redis::cmd("LRANGE")
                .arg(format!("w{w}:list"))
                .arg(0)
                .arg(-1)
                .query(con)
                .unwrap();
            let len = list.len() as i64;
            assert!(
                (a.pushed..=a.pushed + 1).contains(&len),
                "writer {w}: {len} pushed, acknowledged {}",
                a.pushed
            );
            assert!(list.iter().copied().eq(0..len), "writer {w}: list in order");
            if len > 0 {
                let last: i64 = redis::cmd("GET")
                    .arg(format!("w{w}:last"))
                    .query(con)
                    .unwrap();
                assert!(last >= a.pushed - 1, "writer {w}: last {last}");
                let ttl: i64 = redis::cmd("TTL")
                    .arg(format!("w{w}:last"))
                    .query(con)
                    .unwrap();
                assert!(ttl > 0, "writer {w}: the TTL is kept ({ttl})");
            }
            let exists: i64 = redis::cmd("EXISTS").arg("gone").query(con).unwrap();
            assert!(exists <= 1);
            Acked {
                incr: n,
                pushed: len,
            }
        })
        .collect()
}

#[test]
fn kill_9_loses_no_acknowledged_write_in_any_fsync_mode() {
    let rounds = env_number("AOF_CRASH_ROUNDS", 12);
    let mut seed = env_number("AOF_CRASH_SEED", 0x5eed_a0f1) | 1;
    let data = tempfile::tempdir().expect("temp dir");
    let mut acked = vec![Acked::default(); WRITERS];
    for round in 0..rounds {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let fsync = ["always", "everysec", "no"][(round % 3) as usize];
        let mut server = Server::start(data.path(), &aof_args(fsync));
        let mut con = redis_connection(&server);
        acked = check(&mut con, &acked);
        let writers: Vec<_> = acked
            .iter()
            .enumerate()
            .map(|(w, &a)| {
                let addr = server.resp;
                std::thread::spawn(move || write_until_killed(addr, w, a))
            })
            .collect();
        let run_ms = 50 + seed % 400;
        if round % 4 == 1 {
            let _: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
        }
        std::thread::sleep(Duration::from_millis(run_ms));
        server.signal("KILL");
        server.wait_exit(Duration::from_secs(10)).expect("killed");
        acked = writers.into_iter().map(|w| w.join().unwrap()).collect();
        assert!(
            acked.iter().all(|a| a.pushed > 0),
            "round {round} ({fsync}): every writer got acknowledgements"
        );
    }
    let server = Server::start(data.path(), &aof_args("always"));
    let mut con = redis_connection(&server);
    check(&mut con, &acked);
    let verify = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["log", "verify"])
        .arg(log_dir(data.path()))
        .output()
        .unwrap();
    assert!(verify.status.success(), "{verify:?}");
}

#[test]
fn config_set_turns_it_on_and_rewrites_free_what_the_base_covers() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &["--cache-save", ""]);
    let mut con = redis_connection(&server);
    set_keys(&mut con, 0..1000);
    assert_eq!(info_field(&mut con, "persistence", "aof_enabled"), "0");
    let refused = redis::cmd("BGREWRITEAOF")
        .query::<Value>(&mut con)
        .unwrap_err();
    assert!(refused.to_string().contains("appendonly no"), "{refused}");
    let on: Value = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendonly")
        .arg("yes")
        .query(&mut con)
        .unwrap();
    assert_eq!(on, Value::Okay);
    wait_rewrite(&mut con);
    let fsync: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("appendfsync")
        .query(&mut con)
        .unwrap();
    assert_eq!(fsync, ["appendfsync", "everysec"]);
    let _: Value = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendfsync")
        .arg("always")
        .query(&mut con)
        .unwrap();
    let library = "#!lua name=aoflib\nredis.register_function('seven', function() return 7 end)";
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(library)
        .query(&mut con)
        .unwrap();

    // 24 MiB of values: three log segments, freed by the next rewrite.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let big: Vec<u8> = (0..512 << 10)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect();
    for i in 0..48 {
        let _: () = redis::cmd("SET")
            .arg("big")
            .arg(&big[..])
            .query(&mut con)
            .unwrap();
        let _: () = redis::cmd("SET")
            .arg(format!("after{i}"))
            .arg(i)
            .query(&mut con)
            .unwrap();
    }
    let before: u64 = info_field(&mut con, "persistence", "aof_current_size")
        .parse()
        .unwrap();
    assert!(before > 24 << 20, "{before}");
    let started: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
    assert_eq!(started, "Background append only file rewriting started");
    wait_rewrite(&mut con);
    let after: u64 = info_field(&mut con, "persistence", "aof_current_size")
        .parse()
        .unwrap();
    assert!(
        after < 10 << 20,
        "the covered segments are gone: {before} -> {after}"
    );
    let _: () = redis::cmd("SET")
        .arg("last")
        .arg("1")
        .query(&mut con)
        .unwrap();
    let (_server, mut con) = killed_and_restarted(server, data.path(), &aof_args("everysec"));
    assert_eq!(
        redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(),
        1000 + 48 + 2
    );
    let big_back: Vec<u8> = redis::cmd("GET").arg("big").query(&mut con).unwrap();
    assert_eq!(big_back, big);
    let seven: i64 = redis::cmd("FCALL")
        .arg("seven")
        .arg(0)
        .query(&mut con)
        .unwrap();
    assert_eq!(seven, 7);
    assert_eq!(info_field(&mut con, "persistence", "aof_enabled"), "1");
}

/// Off and on again at run time with no change in between: the files of the first period
/// stay until the new base replaces them, so a crash right after `appendonly yes` loses
/// nothing they held. With a change in between they no longer describe the keys: a crash
/// before the new base must not bring back what was deleted while off.
#[test]
fn turning_it_off_and_on_keeps_the_old_files_until_the_new_base() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &aof_args("always"));
    let mut con = redis_connection(&server);
    for start in (0..200_000).step_by(20_000) {
        set_keys(&mut con, start..start + 20_000);
    }
    for value in ["no", "yes"] {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("appendonly")
            .arg(value)
            .query(&mut con)
            .unwrap();
    }
    let _: () = redis::cmd("SET")
        .arg("after")
        .arg("1")
        .query(&mut con)
        .unwrap();
    let (server, mut con) = killed_and_restarted(server, data.path(), &aof_args("always"));
    assert_eq!(
        redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(),
        200_001
    );
    wait_rewrite(&mut con);
    let config_set = |con: &mut Connection, value: &str| {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("appendonly")
            .arg(value)
            .query(con)
            .unwrap();
    };
    config_set(&mut con, "no");
    let _: () = redis::cmd("DEL").arg("k7").query(&mut con).unwrap();
    config_set(&mut con, "yes");
    let (_server, mut con) = killed_and_restarted(server, data.path(), &aof_args("always"));
    let k7: Option<String> = redis::cmd("GET").arg("k7").query(&mut con).unwrap();
    assert_eq!(k7, None, "deleted while off, not brought back");
}

#[test]
fn changes_larger_than_a_log_batch_are_journaled_in_parts() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &aof_args("always"));
    let mut con = redis_connection(&server);
    // One value over the log's 16 MiB batch limit, and a pipeline whose changes add up
    // to more than one batch.
    let big: Vec<u8> = (0..17u32 << 20).map(|i| (i % 251) as u8).collect();
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&big[..])
        .query(&mut con)
        .unwrap();
    let appended: u64 = redis::cmd("APPEND")
        .arg("big")
        .arg("!")
        .query(&mut con)
        .unwrap();
    assert_eq!(appended, big.len() as u64 + 1);
    let chunk = vec![b'v'; 1 << 20];
    let mut pipe = redis::pipe();
    for i in 0..20 {
        pipe.cmd("SET")
            .arg(format!("mid{i}"))
            .arg(&chunk[..])
            .ignore();
    }
    pipe.query::<()>(&mut con).unwrap();
    assert_eq!(
        info_field(&mut con, "persistence", "aof_last_write_status"),
        "ok"
    );
    let (_server, mut con) = killed_and_restarted(server, data.path(), &aof_args("always"));
    let back: Vec<u8> = redis::cmd("GET").arg("big").query(&mut con).unwrap();
    assert_eq!(back.len(), big.len() + 1);
    assert!(back.starts_with(&big) && back.ends_with(b"!"));
    assert_eq!(redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(), 21);
    let mid: Vec<u8> = redis::cmd("GET").arg("mid19").query(&mut con).unwrap();
    assert_eq!(mid, chunk);
}

#[test]
fn a_torn_tail_is_cut_and_damage_inside_stops_start_up() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &aof_args("always"));
    let mut con = redis_connection(&server);
    set_keys(&mut con, 0..200);
    server.signal("KILL");
    drop(server);
    let segment = log_dir(data.path()).join("00000000000000000000.log");
    let mut bytes = std::fs::read(&segment).unwrap();

    // A torn write at the end: cut, reported, every whole record kept.
    let mut torn = bytes.clone();
    torn.extend_from_slice(&[0x51, 0x56, 0x00, 0x13, 0x37]);
    std::fs::write(&segment, &torn).unwrap();
    let server = Server::start(data.path(), &aof_args("always"));
    assert!(
        server
            .startup_log
            .iter()
            .any(|l| l.contains("append-only log repaired")),
        "{:#?}",
        server.startup_log
    );
    let mut con = redis_connection(&server);
    assert_eq!(redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(), 200);
    drop(con);
    drop(server);

    // Damage inside (among records written after the base the restart wrote): start-up
    // stops naming the file and the way out.
    let server = Server::start(data.path(), &aof_args("always"));
    let mut con = redis_connection(&server);
    // One batch each: the damage falls among whole batches, not in the last one.
    for i in 200..300 {
        set_keys(&mut con, i..i + 1);
    }
    server.signal("KILL");
    drop(server);
    bytes = std::fs::read(&segment).unwrap();
    // The data ends where the zeros the log writes ahead of it begin.
    let end = bytes
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |last| last + 1);
    let at = end - 2000;
    bytes[at] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    match Server::try_start(data.path(), &aof_args("always")) {
        Started::Exited { stderr, .. } => {
            assert!(stderr.contains("00000000000000000000.log"), "{stderr}");
            assert!(stderr.contains("aof_recover"), "{stderr}");
        }
        Started::Running(_) => panic!("a damaged log was replayed"),
    }
    let mut args = aof_args("always").to_vec();
    args.extend(["--cache-aof-recover", "true"]);
    let server = Server::start(data.path(), &args);
    let mut con = redis_connection(&server);
    let kept = redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap();
    assert!(
        (200..300).contains(&kept),
        "what is before the damage is kept: {kept}"
    );
    assert_eq!(
        redis::cmd("GET")
            .arg("k0")
            .query::<Option<i64>>(&mut con)
            .unwrap(),
        Some(0)
    );
    // Journaling goes on after the recovery, from a new base.
    let _: () = redis::cmd("SET").arg("new").arg(1).query(&mut con).unwrap();
    let (_server, mut con) = killed_and_restarted(server, data.path(), &aof_args("always"));
    assert_eq!(
        redis::cmd("DBSIZE").query::<u64>(&mut con).unwrap(),
        kept + 1
    );
}

#[test]
fn concurrent_writes_share_fsyncs_under_always() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &aof_args("always"));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let addr = server.resp;
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let client = redis::Client::open(format!("redis://{addr}")).unwrap();
                let mut con = client.get_connection().unwrap();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) && n < 300 {
                    let _: () = redis::cmd("SET")
                        .arg(format!("c{c}:{n}"))
                        .arg(n)
                        .query(&mut con)
                        .unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let writes: u64 = clients.into_iter().map(|c| c.join().unwrap()).sum();
    let mut con = redis_connection(&server);
    assert_eq!(
        info_field(&mut con, "persistence", "aof_pending_bio_fsync"),
        "0"
    );
    let fsyncs = fsyncs(&server);
    // Eight clients each waiting for its fsync: one fsync serves several of them.
    assert!(
        fsyncs > 0 && fsyncs < writes,
        "{fsyncs} fsyncs for {writes} writes"
    );
}

/// `prlimit` sets the server's soft file-size limit (RLIMIT_FSIZE) in bytes; `false` when the
/// tool is missing.
fn set_file_size_limit(server: &Server, limit: &str) -> bool {
    match Command::new("prlimit")
        .arg("--pid")
        .arg(server.pid().to_string())
        .arg(format!("--fsize={limit}:"))
        .status()
    {
        Ok(status) => {
            assert!(status.success(), "prlimit failed");
            true
        }
        Err(error) => {
            eprintln!("write-failure test skipped: cannot run prlimit: {error}");
            false
        }
    }
}

#[test]
fn a_failed_append_refuses_writes_until_a_rewrite_succeeds() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &aof_args("always"));
    let mut con = redis_connection(&server);
    set_keys(&mut con, 0..10);
    // Appends past 256 KiB now fail (EFBIG): the journal fails, writes are refused.
    if !set_file_size_limit(&server, "262144") {
        return;
    }
    let value = vec![b'v'; 4096];
    let mut acknowledged = 0;
    for i in 0..200 {
        let set = redis::cmd("SET")
            .arg(format!("big{i}"))
            .arg(&value[..])
            .query::<()>(&mut con);
        if set.is_err() {
            break;
        }
        acknowledged += 1;
    }
    assert!(acknowledged < 200, "an append failed");
    let mut con = redis_connection(&server);
    let refused = redis::cmd("SET")
        .arg("k")
        .arg("x")
        .query::<Value>(&mut con)
        .unwrap_err();
    assert_eq!(refused.code(), Some("MISCONF"), "{refused}");
    assert_eq!(
        info_field(&mut con, "persistence", "aof_last_write_status"),
        "err"
    );
    let get: Option<String> = redis::cmd("GET").arg("k0").query(&mut con).unwrap();
    assert_eq!(get.as_deref(), Some("0"), "reads go on");

    // Room again: a rewrite reopens the log and writes a base; writes resume.
    assert!(set_file_size_limit(&server, "unlimited"));
    let _: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
    wait_rewrite(&mut con);
    assert_eq!(
        info_field(&mut con, "persistence", "aof_last_write_status"),
        "ok"
    );
    let _: () = redis::cmd("SET")
        .arg("after")
        .arg(1)
        .query(&mut con)
        .unwrap();
    let (_server, mut con) = killed_and_restarted(server, data.path(), &aof_args("always"));
    for i in 0..acknowledged {
        let exists: i64 = redis::cmd("EXISTS")
            .arg(format!("big{i}"))
            .query(&mut con)
            .unwrap();
        assert_eq!(exists, 1, "acknowledged big{i} is kept");
    }
    let after: Option<i64> = redis::cmd("GET").arg("after").query(&mut con).unwrap();
    assert_eq!(after, Some(1));
}

#[test]
fn everysec_fsyncs_once_a_second() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = Server::start(data.path(), &aof_args("everysec"));
    let mut con = redis_connection(&server);
    set_keys(&mut con, 0..100);
    let deadline = Instant::now() + Duration::from_secs(10);
    while fsyncs(&server) == 0 {
        assert!(Instant::now() < deadline, "no fsync within 10 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        info_field(&mut con, "persistence", "aof_pending_bio_fsync"),
        "0"
    );
}
