//! The RESP listener through real sockets: the `redis` crate and raw bytes.

use std::io::{Read, Write};
use std::time::Duration;

use redis::{RedisResult, Value};

use crate::support::{
    Server, Started, connect, error_text, raw_exchange, read_up_to, redis_connection,
};

fn start(extra: &[&str]) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), extra);
    (dir, server)
}

#[test]
fn ping_echo_and_exact_error_replies() {
    let (_dir, server) = start(&[]);
    let mut con = redis_connection(&server);
    let pong: String = redis::cmd("PING").query(&mut con).expect("PING");
    assert_eq!(pong, "PONG");
    let echo: String = redis::cmd("ECHO")
        .arg("hello world")
        .query(&mut con)
        .expect("ECHO");
    assert_eq!(echo, "hello world");
    let unknown = error_text(
        redis::cmd("NOSUCHCMD")
            .arg("a")
            .arg("b")
            .query::<Value>(&mut con),
    );
    assert_eq!(
        unknown,
        "ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' 'b' "
    );
    let arity = error_text(redis::cmd("ECHO").query::<Value>(&mut con));
    assert_eq!(arity, "ERR wrong number of arguments for 'echo' command");
}

#[test]
fn inline_commands_and_deep_pipelines() {
    let (_dir, server) = start(&[]);
    assert_eq!(raw_exchange(server.resp, b"PING\r\n", 7), b"+PONG\r\n");
    let request = b"*1\r\n$4\r\nPING\r\n".repeat(2000);
    let reply = raw_exchange(server.resp, &request, 7 * 2000);
    assert_eq!(reply, b"+PONG\r\n".repeat(2000));
}

#[test]
fn protocol_errors_are_answered_then_the_connection_closes() {
    let (_dir, server) = start(&[]);
    let reply = raw_exchange(server.resp, b"*abc\r\n", usize::MAX);
    assert_eq!(reply, b"-ERR Protocol error: invalid multibulk length\r\n");
    let reply = raw_exchange(server.resp, b"*1\r\nfoo\r\n", usize::MAX);
    assert_eq!(reply, b"-ERR Protocol error: expected '$', got 'f'\r\n");
    // other connections are unaffected
    let mut con = redis_connection(&server);
    let pong: String = redis::cmd("PING").query(&mut con).expect("PING");
    assert_eq!(pong, "PONG");
}

#[test]
fn pipelined_replies_keep_their_order_around_a_protocol_error() {
    let (_dir, server) = start(&[]);
    let mut request = Vec::new();
    for i in 0..40 {
        request.extend_from_slice(
            format!("*3\r\n$3\r\nSET\r\n$5\r\nkey{i:02}\r\n$1\r\n{}\r\n", i % 10).as_bytes(),
        );
    }
    request.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$5\r\nkey07\r\n");
    request.extend_from_slice(b"*4\r\n$4\r\nMGET\r\n$5\r\nkey07\r\n$5\r\nkey13\r\n$4\r\nnone\r\n");
    request.extend_from_slice(b"*abc\r\n*1\r\n$4\r\nPING\r\n");
    let reply = raw_exchange(server.resp, &request, usize::MAX);
    let mut expected = b"+OK\r\n".repeat(40);
    expected.extend_from_slice(b":8\r\n*3\r\n$1\r\n8\r\n$1\r\n3\r\n$-1\r\n");
    expected.extend_from_slice(b"-ERR Protocol error: invalid multibulk length\r\n");
    assert_eq!(
        String::from_utf8_lossy(&reply),
        String::from_utf8_lossy(&expected)
    );
}

#[test]
fn requests_pipelined_after_a_blocking_pop_wait_for_it() {
    let (_dir, server) = start(&[]);
    let mut blocked = connect(server.resp);
    blocked
        .write_all(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$2\r\n10\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n*2\r\n$3\r\nGET\r\n$5\r\nafter\r\n")
        .expect("send");
    let mut con = redis_connection(&server);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("clients")
            .query(&mut con)
            .expect("INFO");
        if info.contains("blocked_clients:1\r\n") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the BLPOP never blocked: {info}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let after: Option<String> = redis::cmd("GET").arg("after").query(&mut con).expect("GET");
    assert_eq!(after, None, "the SET behind the BLPOP ran before it");
    let _: i64 = redis::cmd("RPUSH")
        .arg("q")
        .arg("x")
        .query(&mut con)
        .expect("RPUSH");
    let expected = b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n+OK\r\n$1\r\n1\r\n";
    let reply = read_up_to(&mut blocked, expected.len());
    assert_eq!(
        String::from_utf8_lossy(&reply),
        String::from_utf8_lossy(expected)
    );
    let info: String = redis::cmd("INFO")
        .arg("clients")
        .query(&mut con)
        .expect("INFO");
    assert!(info.contains("blocked_clients:0\r\n"), "{info}");
}

#[test]
fn hello_switches_to_resp3() {
    let (_dir, server) = start(&[]);
    let reply = raw_exchange(server.resp, b"HELLO 3\r\n", 1);
    assert!(
        reply.starts_with(b"%7\r\n"),
        "{}",
        String::from_utf8_lossy(&reply)
    );
    let text = String::from_utf8_lossy(&reply).into_owned();
    assert!(text.contains("$5\r\nproto\r\n:3\r\n"), "{text}");
    let reply = raw_exchange(server.resp, b"HELLO 4\r\n", 1);
    assert_eq!(reply, b"-NOPROTO unsupported protocol version\r\n");
}

#[test]
fn requirepass_gates_every_command_until_auth() {
    let (_dir, server) = start(&["--resp-requirepass", "s3cret"]);
    let mut stream = connect(server.resp);
    let mut exchange = |request: &[u8]| {
        stream.write_all(request).expect("send");
        let mut buf = [0u8; 256];
        let n = stream.read(&mut buf).expect("read");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    assert_eq!(
        exchange(b"PING\r\n"),
        "-NOAUTH Authentication required.\r\n"
    );
    assert_eq!(
        exchange(b"HELLO 3\r\n"),
        "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"
    );
    assert_eq!(
        exchange(b"AUTH wrong\r\n"),
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    );
    assert_eq!(exchange(b"AUTH s3cret\r\n"), "+OK\r\n");
    assert_eq!(exchange(b"PING\r\n"), "+PONG\r\n");
    assert_eq!(exchange(b"AUTH default s3cret\r\n"), "+OK\r\n");
}

#[test]
fn auth_without_a_password_configured_is_refused_like_redis() {
    let (_dir, server) = start(&[]);
    let reply = raw_exchange(server.resp, b"AUTH x\r\n", 1);
    assert!(reply.starts_with(b"-ERR AUTH <password> called without any password configured"));
}

#[test]
fn select_checks_the_database_count() {
    let (_dir, server) = start(&["--cache-databases", "4"]);
    let mut con = redis_connection(&server);
    let ok: String = redis::cmd("SELECT")
        .arg(3)
        .query(&mut con)
        .expect("SELECT 3");
    assert_eq!(ok, "OK");
    let error = error_text(redis::cmd("SELECT").arg(4).query::<Value>(&mut con));
    assert_eq!(error, "ERR DB index is out of range");
}

#[test]
fn client_commands_name_list_and_kill() {
    let (_dir, server) = start(&[]);
    let mut first = redis_connection(&server);
    let mut second = redis_connection(&server);
    let _: () = redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg("worker-1")
        .query(&mut first)
        .expect("SETNAME");
    let name: String = redis::cmd("CLIENT")
        .arg("GETNAME")
        .query(&mut first)
        .expect("GETNAME");
    assert_eq!(name, "worker-1");
    let first_id: i64 = redis::cmd("CLIENT")
        .arg("ID")
        .query(&mut first)
        .expect("ID");
    let _: () = redis::cmd("CLIENT")
        .arg("NO-EVICT")
        .arg("ON")
        .query(&mut first)
        .expect("NO-EVICT");
    let _: () = redis::cmd("CLIENT")
        .arg("TRACKING")
        .arg("ON")
        .arg("BCAST")
        .query(&mut first)
        .expect("TRACKING");
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut second)
        .expect("LIST");
    assert_eq!(list.lines().count(), 2, "{list}");
    assert!(
        list.contains(&format!("id={first_id} ")) && list.contains("name=worker-1"),
        "{list}"
    );
    assert!(
        list.contains("name=worker-1 ") && list.contains(" flags=tBe "),
        "{list}"
    );
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(first_id)
        .query(&mut second)
        .expect("KILL");
    assert_eq!(killed, 1);
    let after: RedisResult<String> = redis::cmd("PING").query(&mut first);
    assert!(after.is_err(), "a killed client must be disconnected");
}

#[test]
fn info_config_and_command_answer() {
    let (_dir, server) = start(&[]);
    let mut con = redis_connection(&server);
    let info: String = redis::cmd("INFO").query(&mut con).expect("INFO");
    for needle in [
        "# Server",
        "redis_version:",
        "# Clients",
        "connected_clients:1",
        "# Memory",
        "used_memory:",
        "# Stats",
        "\r\nhz:10\r\nconfigured_hz:10\r\nexecutable:/",
        "\r\nmem_allocator:libc\r\n",
        "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n",
        "# CPU\r\nused_cpu_sys:",
        "# Modules\r\n",
        "# Cluster\r\ncluster_enabled:0\r\n",
        "# Keyspace",
    ] {
        assert!(info.contains(needle), "missing {needle} in {info}");
    }
    let run_id = info
        .lines()
        .find_map(|line| line.strip_prefix("run_id:"))
        .expect("run_id");
    assert!(run_id.len() == 40 && run_id.bytes().all(|b| b.is_ascii_hexdigit()));
    let _: () = redis::cmd("PING").query(&mut con).expect("PING");
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut con)
        .expect("INFO commandstats");
    assert!(stats.contains("cmdstat_ping:calls=1,"), "{stats}");

    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut con)
        .expect("CONFIG SET");
    let policy: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxmemory-p*")
        .query(&mut con)
        .expect("CONFIG GET");
    assert_eq!(
        policy,
        vec!["maxmemory-policy".to_owned(), "allkeys-lru".to_owned()]
    );
    let error = error_text(
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory-policy")
            .arg("sometimes")
            .query::<Value>(&mut con),
    );
    assert!(error.starts_with("ERR CONFIG SET failed"), "{error}");

    let count: i64 = redis::cmd("COMMAND")
        .arg("COUNT")
        .query(&mut con)
        .expect("COMMAND COUNT");
    assert!(count > 100, "{count}");
}

#[test]
fn multi_exec_discard_rules() {
    let (_dir, server) = start(&[]);
    let mut con = redis_connection(&server);
    let error = error_text(redis::cmd("EXEC").query::<Value>(&mut con));
    assert_eq!(error, "ERR EXEC without MULTI");
    let replies: Vec<String> = redis::pipe()
        .atomic()
        .cmd("PING")
        .cmd("ECHO")
        .arg("x")
        .query(&mut con)
        .expect("MULTI/EXEC");
    assert_eq!(replies, vec!["PONG".to_owned(), "x".to_owned()]);
    // a command that fails to queue aborts the transaction
    let mut stream = connect(server.resp);
    stream
        .write_all(b"MULTI\r\nECHO\r\nPING\r\nEXEC\r\n")
        .expect("send");
    let mut reply = Vec::new();
    let expected = b"+OK\r\n-ERR wrong number of arguments for 'echo' command\r\n+QUEUED\r\n-EXECABORT Transaction discarded because of previous errors.\r\n";
    let mut chunk = [0u8; 512];
    while reply.len() < expected.len() {
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&reply));
        reply.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(
        String::from_utf8_lossy(&reply),
        String::from_utf8_lossy(expected)
    );
}

#[test]
fn connections_over_maxclients_get_redis_refusal() {
    let (_dir, server) = start(&["--resp-max-connections", "1"]);
    let mut holder = redis_connection(&server);
    let _: String = redis::cmd("PING").query(&mut holder).expect("PING");
    let reply = raw_exchange(server.resp, b"PING\r\n", usize::MAX);
    assert_eq!(reply, b"-ERR max number of clients reached\r\n");
}

#[test]
fn quit_replies_ok_and_closes() {
    let (_dir, server) = start(&[]);
    let reply = raw_exchange(server.resp, b"QUIT\r\nPING\r\n", usize::MAX);
    assert_eq!(reply, b"+OK\r\n");
}

/// Redis parameters in the configuration file apply at start; CONFIG REWRITE writes what
/// was set back into the file's `[resp.redis_config]` table, keeping the rest, and the
/// next start reads it; a parameter Quiver sets with a key of its own is refused.
#[test]
fn redis_parameters_come_from_the_file_and_config_rewrite_writes_them_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("quiver.toml");
    std::fs::write(
        &file,
        "# kept as written\n[resp.redis_config]\nhz = 20\nhash-max-listpack-entries = 1\n\n[log]\nlevel = \"info\"\n",
    )
    .expect("write config");
    let path = file.to_str().expect("utf-8 path");
    let data = dir.path().join("data");
    let server = Server::start(&data, &["--config", path]);
    let mut redis = redis_connection(&server);
    let hz: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("hz")
        .query(&mut redis)
        .unwrap();
    assert_eq!(hz, ["hz", "20"]);
    let _: () = redis::cmd("HSET")
        .arg("h")
        .arg("a")
        .arg(1)
        .arg("b")
        .arg(2)
        .query(&mut redis)
        .unwrap();
    let encoding: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg("h")
        .query(&mut redis)
        .unwrap();
    assert_eq!(encoding, "hashtable", "the threshold from the file applies");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-clients")
        .arg("5%")
        .query(&mut redis)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("REWRITE")
        .query(&mut redis)
        .unwrap();
    let text = std::fs::read_to_string(&file).expect("read config");
    assert!(text.starts_with("# kept as written\n"), "{text}");
    assert!(text.contains("maxmemory-clients = \"5%\""), "{text}");
    assert!(text.contains("hz = \"20\""), "{text}");
    assert!(text.contains("[log]\nlevel = \"info\""), "{text}");
    drop(server);

    let server = Server::start(&data, &["--config", path]);
    let mut redis = redis_connection(&server);
    let value: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxmemory-clients")
        .query(&mut redis)
        .unwrap();
    assert_eq!(value, ["maxmemory-clients", "5%"]);
    drop(server);

    std::fs::write(&file, "[resp.redis_config]\ntimeout = 5\n").expect("write config");
    match Server::try_start(&data, &["--config", path]) {
        Started::Exited { stderr, .. } => {
            assert!(
                stderr.contains("set timeout with resp.idle_timeout"),
                "{stderr}"
            );
        }
        Started::Running(_) => panic!("a parameter with a Quiver key was accepted"),
    }
}

/// Without a configuration file CONFIG REWRITE answers as Redis does.
#[test]
fn config_rewrite_without_a_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut redis = redis_connection(&server);
    let error = redis::cmd("CONFIG")
        .arg("REWRITE")
        .query::<()>(&mut redis)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("The server is running without a config file"),
        "{error}"
    );
}

/// SLOWLOG keeps what Redis keeps: every command at `slowlog-log-slower-than 0`, newest
/// first, at most 32 arguments and 128 bytes each, secrets redacted, the client's address
/// and name; `slowlog-max-len` bounds it; RESET empties it.
#[test]
fn slowlog_records_commands_as_redis_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut redis = redis_connection(&server);
    let query = |redis: &mut redis::Connection, args: &[&str]| -> RedisResult<Value> {
        let mut cmd = redis::cmd(args[0]);
        for arg in &args[1..] {
            cmd.arg(*arg);
        }
        cmd.query(redis)
    };
    query(
        &mut redis,
        &["CONFIG", "SET", "slowlog-log-slower-than", "0"],
    )
    .unwrap();
    query(&mut redis, &["SLOWLOG", "RESET"]).unwrap();
    query(&mut redis, &["CLIENT", "SETNAME", "slow"]).unwrap();
    let long = "x".repeat(130);
    query(&mut redis, &["SET", "k", &long]).unwrap();
    let items: Vec<String> = (1..=35).map(|i| i.to_string()).collect();
    let mut rpush = vec!["RPUSH", "l"];
    rpush.extend(items.iter().map(String::as_str));
    query(&mut redis, &rpush).unwrap();
    query(&mut redis, &["CONFIG", "SET", "requirepass", "secret"]).unwrap();
    query(&mut redis, &["AUTH", "secret"]).unwrap();
    query(&mut redis, &["CONFIG", "SET", "requirepass", ""]).unwrap();
    query(&mut redis, &["ACL", "SETUSER", "zed", "on", ">pw"]).unwrap();

    let entries: Vec<(i64, i64, i64, Vec<String>, String, String)> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(6)
        .query(&mut redis)
        .unwrap();
    assert_eq!(entries.len(), 6);
    let args: Vec<&Vec<String>> = entries.iter().map(|entry| &entry.3).collect();
    assert_eq!(
        args[0],
        &["ACL", "SETUSER", "(redacted)", "(redacted)", "(redacted)"]
    );
    assert_eq!(args[1], &["CONFIG", "SET", "requirepass", "(redacted)"]);
    assert_eq!(args[2], &["AUTH", "(redacted)"]);
    assert_eq!(args[3], &["CONFIG", "SET", "requirepass", "(redacted)"]);
    assert_eq!(args[4].len(), 32);
    assert_eq!(args[4][31], "... (6 more arguments)");
    assert_eq!(args[5][2], format!("{}... (2 more bytes)", "x".repeat(128)));
    for entry in &entries {
        assert_eq!(entry.5, "slow");
        assert!(entry.4.starts_with("127.0.0.1:"), "{}", entry.4);
    }
    assert!(
        entries.windows(2).all(|w| w[0].0 == w[1].0 + 1),
        "newest first"
    );

    query(&mut redis, &["CONFIG", "SET", "slowlog-max-len", "3"]).unwrap();
    let len: i64 = redis::cmd("SLOWLOG").arg("LEN").query(&mut redis).unwrap();
    assert_eq!(len, 3);
    query(&mut redis, &["SLOWLOG", "RESET"]).unwrap();
    query(
        &mut redis,
        &["CONFIG", "SET", "slowlog-log-slower-than", "-1"],
    )
    .unwrap();
    query(&mut redis, &["PING"]).unwrap();
    let len: i64 = redis::cmd("SLOWLOG").arg("LEN").query(&mut redis).unwrap();
    assert_eq!(len, 1, "only the SLOWLOG RESET, logged as it ended");
}

/// With `enable-debug-command yes` in the configuration, DEBUG SLEEP pauses, DEBUG
/// SET-ACTIVE-EXPIRE stops and restarts the background reclaiming of expired keys, and
/// DEBUG OBJECT describes a value as redis-server 7.0 does.
#[test]
fn debug_runs_when_the_configuration_allows_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(
        dir.path(),
        &["--resp-redis-config", "enable-debug-command yes"],
    );
    let mut redis = redis_connection(&server);
    let started = std::time::Instant::now();
    let _: () = redis::cmd("DEBUG")
        .arg("SLEEP")
        .arg("0.2")
        .query(&mut redis)
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    let _: () = redis::cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query(&mut redis)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .arg("PX")
        .arg(20)
        .query(&mut redis)
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let keys: i64 = redis::cmd("DBSIZE").query(&mut redis).unwrap();
    assert_eq!(
        keys, 1,
        "an expired key stays until it is read or reclaimed"
    );
    let _: () = redis::cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(1)
        .query(&mut redis)
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let keys: i64 = redis::cmd("DBSIZE").query(&mut redis).unwrap();
        if keys == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never reclaimed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let error = redis::cmd("DEBUG")
        .arg("OBJECT")
        .arg("k")
        .query::<()>(&mut redis)
        .unwrap_err();
    assert!(error.to_string().contains("no such key"), "{error}");
    let _: () = redis::cmd("RPUSH")
        .arg("list")
        .arg(&["a", "b", "c"])
        .query(&mut redis)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("n")
        .arg(12)
        .query(&mut redis)
        .unwrap();
    let debug_object = |redis: &mut redis::Connection, key: &str| -> String {
        redis::cmd("DEBUG")
            .arg("OBJECT")
            .arg(key)
            .query(redis)
            .unwrap()
    };
    // Redis's fields; the sizes are those of the value in a snapshot (as DUMP's body).
    let list = debug_object(&mut redis, "list");
    assert!(list.starts_with("Value at:0x"), "{list}");
    for field in [
        "refcount:1",
        "encoding:quicklist",
        "serializedlength:19",
        "lru_seconds_idle:0",
        "ql_nodes:1",
        "ql_avg_node:3.00",
        "ql_listpack_max:-2",
        "ql_compressed:0",
        "ql_uncompressed_size:16",
    ] {
        assert!(list.split(' ').any(|f| f == field), "{field} in {list}");
    }
    let number = debug_object(&mut redis, "n");
    assert!(
        number.contains(" encoding:int serializedlength:2 lru:"),
        "{number}"
    );
}

/// CLIENT LIST shows a client's last command as it was looked up: NULL when there was no
/// such command, the command when only its arguments were wrong, as Redis shows them.
#[test]
fn client_list_shows_the_command_looked_up() {
    let (_dir, server) = start(&[]);
    let mut admin = redis_connection(&server);
    let mut other = redis_connection(&server);
    for (words, shown) in [
        (&["NOSUCH"][..], "NULL"),
        (&["GET"][..], "get"),
        (&["CONFIG", "NOSUCH"][..], "NULL"),
        (&["CONFIG", "GET"][..], "config|get"),
        (&["SET", "a", "b", "c", "d"][..], "set"),
    ] {
        let _ = redis::cmd(words[0])
            .arg(&words[1..])
            .query::<redis::Value>(&mut other);
        client_running(&mut admin, shown);
    }
    // CLIENT LIST ID: a line per id given, repeats too, unknown ones left out.
    let id: u64 = redis::cmd("CLIENT").arg("ID").query(&mut other).unwrap();
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .arg("ID")
        .arg(id)
        .arg(999_999)
        .arg(id)
        .query(&mut admin)
        .unwrap();
    let ids: Vec<&str> = list
        .lines()
        .filter_map(|line| line.strip_prefix("id=")?.split(' ').next())
        .collect();
    assert_eq!(ids, [id.to_string(), id.to_string()]);
}

/// The id of the client whose `CLIENT LIST` line shows `cmd`, once one does.
fn client_running(con: &mut redis::Connection, cmd: &str) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(con).unwrap();
        let found = list.lines().find_map(|line| {
            line.split(' ')
                .any(|field| field == format!("cmd={cmd}"))
                .then(|| line.strip_prefix("id=")?.split(' ').next()?.parse().ok())
                .flatten()
        });
        if let Some(id) = found {
            return id;
        }
        assert!(std::time::Instant::now() < deadline, "no client runs {cmd}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn client_unblock_ends_a_wait_as_a_timeout_or_an_error() {
    let (_dir, server) = start(&[]);
    let mut admin = redis_connection(&server);
    let mut waiting = redis_connection(&server);
    let popped = std::thread::spawn(move || {
        redis::cmd("BLPOP")
            .arg("queue")
            .arg(0)
            .query::<Value>(&mut waiting)
    });
    let id = client_running(&mut admin, "blpop");
    let unblocked: i64 = redis::cmd("CLIENT")
        .arg("UNBLOCK")
        .arg(id)
        .query(&mut admin)
        .unwrap();
    assert_eq!(unblocked, 1);
    assert_eq!(popped.join().unwrap().unwrap(), Value::Nil);

    let mut waiting = redis_connection(&server);
    let read = std::thread::spawn(move || {
        redis::cmd("XREAD")
            .arg("BLOCK")
            .arg(0)
            .arg("STREAMS")
            .arg("s")
            .arg("$")
            .query::<Value>(&mut waiting)
    });
    let id = client_running(&mut admin, "xread");
    let unblocked: i64 = redis::cmd("CLIENT")
        .arg("UNBLOCK")
        .arg(id)
        .arg("ERROR")
        .query(&mut admin)
        .unwrap();
    assert_eq!(unblocked, 1);
    let error = read.join().unwrap().unwrap_err();
    assert_eq!(error.code(), Some("UNBLOCKED"), "{error}");
    // Not blocked (any more): nothing to do.
    let again: i64 = redis::cmd("CLIENT")
        .arg("UNBLOCK")
        .arg(id)
        .query(&mut admin)
        .unwrap();
    assert_eq!(again, 0);
}

#[test]
fn client_pause_holds_writes_or_everything_until_it_ends() {
    let (_dir, server) = start(&[]);
    let mut admin = redis_connection(&server);
    let mut other = redis_connection(&server);
    let library = "#!lua name=paused\n\
        redis.register_function{function_name='reader', callback=function() return 1 end, flags={'no-writes'}}";
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(library)
        .query(&mut admin)
        .unwrap();
    let reader = "#!lua flags=no-writes\nreturn 1";
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(reader)
        .query(&mut admin)
        .unwrap();
    let ok: String = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(60_000)
        .arg("WRITE")
        .query(&mut admin)
        .unwrap();
    assert_eq!(ok, "OK");
    // Reads go on, and script calls that declare `no-writes`, and SCRIPT LOAD (were they
    // held, the read would time out); a write waits until CLIENT UNPAUSE.
    other
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let read: Option<String> = redis::cmd("GET").arg("k").query(&mut other).unwrap();
    assert_eq!(read, None);
    for call in [
        redis::cmd("EVAL").arg(reader).arg(0).clone(),
        redis::cmd("EVALSHA").arg(&sha).arg(0).clone(),
        redis::cmd("FCALL").arg("reader").arg(0).clone(),
    ] {
        assert_eq!(call.query::<i64>(&mut other).unwrap(), 1);
    }
    let _: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return 2")
        .query(&mut other)
        .unwrap();
    // Also while another script that declares `no-writes` runs (for a second).
    let slow = "#!lua flags=no-writes\n\
        local s = tonumber(redis.call('time')[1]) \
        while tonumber(redis.call('time')[1]) - s < 1 do end return 1";
    let mut third = redis_connection(&server);
    let running =
        std::thread::spawn(move || redis::cmd("EVAL").arg(slow).arg(0).query::<i64>(&mut third));
    std::thread::sleep(Duration::from_millis(200));
    let during = redis::cmd("EVALSHA")
        .arg(&sha)
        .arg(0)
        .query::<i64>(&mut other);
    assert_eq!(during.unwrap(), 1);
    assert_eq!(running.join().unwrap().unwrap(), 1);
    // An EXEC that queued only such calls goes through too.
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("EVALSHA").arg(&sha).arg(0);
    let (exec,): (i64,) = pipe.query(&mut other).unwrap();
    assert_eq!(exec, 1);
    // A pipeline of such a call and a write: the call's reply comes at once, the write's
    // after the pause.
    let mut raw = connect(server.resp);
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let pipelined = format!("EVALSHA {sha} 0\r\nSET raw 1\r\n");
    raw.write_all(pipelined.as_bytes()).unwrap();
    let mut first = [0u8; 4];
    raw.read_exact(&mut first).unwrap();
    assert_eq!(&first, b":1\r\n");
    let written = std::thread::spawn(move || {
        redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query::<()>(&mut other)
            .unwrap();
    });
    // CLIENT LIST shows the command that waits.
    client_running(&mut admin, "set");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!written.is_finished(), "the write waits");
    let _: String = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query(&mut admin)
        .unwrap();
    written.join().unwrap();
    let mut second = [0u8; 5];
    raw.read_exact(&mut second).unwrap();
    assert_eq!(&second, b"+OK\r\n");

    // ALL holds every command, CLIENT UNPAUSE too, until the time passes.
    let _: String = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(300)
        .query(&mut admin)
        .unwrap();
    let started = std::time::Instant::now();
    let read: String = redis::cmd("GET").arg("k").query(&mut admin).unwrap();
    assert_eq!(read, "v");
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[test]
fn latency_records_slow_commands_and_histograms() {
    let (_dir, server) = start(&["--resp-redis-config", "enable-debug-command yes"]);
    let mut con = redis_connection(&server);
    let doctor: String = redis::cmd("LATENCY").arg("DOCTOR").query(&mut con).unwrap();
    assert!(doctor.contains("disabled"), "{doctor}");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("latency-monitor-threshold")
        .arg(20)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("DEBUG")
        .arg("SLEEP")
        .arg("0.05")
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    let latest: Vec<(String, i64, i64, i64)> =
        redis::cmd("LATENCY").arg("LATEST").query(&mut con).unwrap();
    assert_eq!(latest.len(), 1, "{latest:?}");
    assert_eq!(latest[0].0, "command");
    assert!(latest[0].2 >= 50 && latest[0].3 >= 50, "{latest:?}");
    let history: Vec<(i64, i64)> = redis::cmd("LATENCY")
        .arg("HISTORY")
        .arg("command")
        .query(&mut con)
        .unwrap();
    assert_eq!(history.len(), 1);
    let graph: String = redis::cmd("LATENCY")
        .arg("GRAPH")
        .arg("command")
        .query(&mut con)
        .unwrap();
    assert!(graph.starts_with("command - high "), "{graph}");
    let doctor: String = redis::cmd("LATENCY").arg("DOCTOR").query(&mut con).unwrap();
    assert!(doctor.contains("1. command: 1 latency spikes"), "{doctor}");
    let histogram: Value = redis::cmd("LATENCY")
        .arg("HISTOGRAM")
        .arg("set")
        .query(&mut con)
        .unwrap();
    let text = format!("{histogram:?}");
    assert!(
        text.contains("calls") && text.contains("histogram_usec"),
        "{text}"
    );
    let reset: i64 = redis::cmd("LATENCY")
        .arg("RESET")
        .arg("command")
        .arg("nosuch")
        .query(&mut con)
        .unwrap();
    assert_eq!(reset, 1);
    let latest: Vec<Value> = redis::cmd("LATENCY").arg("LATEST").query(&mut con).unwrap();
    assert!(latest.is_empty());
}

#[test]
fn debug_reload_saves_flushes_and_loads_back() {
    let (_dir, server) = start(&[
        "--resp-redis-config",
        "enable-debug-command yes",
        "--cache-save",
        "",
    ]);
    let mut con = redis_connection(&server);
    let reload = |con: &mut redis::Connection, options: &[&str]| {
        redis::cmd("DEBUG")
            .arg("RELOAD")
            .arg(options)
            .query::<Value>(con)
    };
    let _: () = redis::cmd("SET").arg("a").arg(1).query(&mut con).unwrap();
    let _: () = redis::cmd("SET")
        .arg("t")
        .arg("v")
        .arg("PX")
        .arg(100_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(reload(&mut con, &[]).unwrap(), Value::Okay);
    let ttl: i64 = redis::cmd("PTTL").arg("t").query(&mut con).unwrap();
    assert!(ttl > 90_000, "{ttl}");
    // NOSAVE: what the file holds replaces what is in memory.
    let _: () = redis::cmd("SET").arg("a").arg(2).query(&mut con).unwrap();
    let _: () = redis::cmd("SET").arg("b").arg(3).query(&mut con).unwrap();
    assert_eq!(reload(&mut con, &["NOSAVE"]).unwrap(), Value::Okay);
    let values: (Option<i64>, Option<i64>) = redis::cmd("MGET")
        .arg("a")
        .arg("b")
        .query(&mut con)
        .unwrap();
    assert_eq!(values, (Some(1), None));
    // NOFLUSH MERGE: the file's keys win; NOFLUSH alone fails on a key already there.
    let _: () = redis::cmd("SET").arg("a").arg(5).query(&mut con).unwrap();
    let _: () = redis::cmd("SET").arg("c").arg(6).query(&mut con).unwrap();
    assert_eq!(
        reload(&mut con, &["NOSAVE", "NOFLUSH", "MERGE"]).unwrap(),
        Value::Okay
    );
    let values: (i64, i64) = redis::cmd("MGET")
        .arg("a")
        .arg("c")
        .query(&mut con)
        .unwrap();
    assert_eq!(values, (1, 6));
    let conflict = reload(&mut con, &["NOSAVE", "NOFLUSH"]).unwrap_err();
    assert!(
        conflict.to_string().contains("Error trying to load"),
        "{conflict}"
    );
    let bad = reload(&mut con, &["FOO"]).unwrap_err();
    assert!(bad.to_string().contains("only supports the MERGE"), "{bad}");
}

/// The names of the server process's threads that start with `prefix`.
fn threads_named(server: &Server, prefix: &str) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", server.pid())).expect("/proc tasks");
    let mut names: Vec<String> = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| name.starts_with(prefix))
        .collect();
    names.sort();
    names
}

#[test]
fn a_fixed_thread_count_starts_exactly_those_threads_and_no_balancer() {
    let (_dir, server) = start(&["--resp-io-threads", "3"]);
    let mut cons: Vec<_> = (0..4).map(|_| redis_connection(&server)).collect();
    for con in &mut cons {
        let pong: String = redis::cmd("PING").query(con).expect("PING");
        assert_eq!(pong, "PONG");
    }
    assert_eq!(
        threads_named(&server, "resp-io-"),
        ["resp-io-0", "resp-io-1", "resp-io-2"]
    );
    assert!(threads_named(&server, "resp-balance").is_empty());
}

#[test]
fn auto_threads_write_the_balancers_trace() {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("balance.trace");
    let data = dir.path().join("data");
    let server = Server::start(
        &data,
        &["--resp-balance-trace", trace.to_str().expect("utf-8 path")],
    );
    assert_eq!(threads_named(&server, "resp-io-").len(), cores);
    if cores == 1 {
        // One core: no balancer runs, and none writes.
        return;
    }
    let mut con = redis_connection(&server);
    let _: String = redis::cmd("PING").query(&mut con).expect("PING");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let text = loop {
        let text = std::fs::read_to_string(&trace).unwrap_or_default();
        if text.lines().count() >= 3 || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut lines = text.lines();
    let header = lines.next().expect("a header line");
    assert!(
        header.starts_with(&format!("# quiver resp balance trace, threads {cores}:")),
        "{header}"
    );
    let ticks: Vec<&str> = lines.collect();
    assert!(ticks.len() >= 2, "{text}");
    for tick in ticks {
        let fields: Vec<&str> = tick.split(' ').collect();
        assert_eq!(fields.len(), 6, "{tick}");
        assert_eq!(fields[4].split(',').count(), cores, "{tick}");
        assert_eq!(
            fields[5], "1",
            "one thread serves a client of a few PINGs: {tick}"
        );
    }
}

/// DEBUG PROTOCOL answers each RESP type with the bytes redis-server 7.0 sends, in RESP2
/// and in RESP3 (recorded from redis-server 7.0.15).
#[test]
fn debug_protocol_answers_each_type_as_redis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(
        dir.path(),
        &["--resp-redis-config", "enable-debug-command yes"],
    );
    let cases: [(&str, &[u8], &[u8]); 14] = [
        ("string", b"$11\r\nHello World\r\n", b"$11\r\nHello World\r\n"),
        ("integer", b":12345\r\n", b":12345\r\n"),
        ("double", b"$5\r\n3.141\r\n", b",3.141\r\n"),
        (
            "bignum",
            b"$37\r\n1234567999999999999999999999999999999\r\n",
            b"(1234567999999999999999999999999999999\r\n",
        ),
        ("null", b"$-1\r\n", b"_\r\n"),
        ("array", b"*3\r\n:0\r\n:1\r\n:2\r\n", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
        ("set", b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
        (
            "map",
            b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
            b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
        ),
        (
            "attrib",
            b"$39\r\nSome real reply following the attribute\r\n",
            b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n",
        ),
        (
            "push",
            b"-ERR RESP2 is not supported by this command\r\n",
            b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n",
        ),
        (
            "verbatim",
            b"$25\r\nThis is a verbatim\nstring\r\n",
            b"=29\r\ntxt:This is a verbatim\nstring\r\n",
        ),
        ("true", b":1\r\n", b"#t\r\n"),
        ("false", b":0\r\n", b"#f\r\n"),
        (
            "bogus",
            b"-ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n",
            b"-ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n",
        ),
    ];
    for (kind, resp2, resp3) in cases {
        let request = format!("DEBUG PROTOCOL {kind}\r\n");
        let reply = raw_exchange(server.resp, request.as_bytes(), resp2.len());
        assert_eq!(
            reply,
            resp2,
            "RESP2 {kind}: {}",
            String::from_utf8_lossy(&reply)
        );
        let mut stream = connect(server.resp);
        stream.write_all(b"HELLO 3\r\n").unwrap();
        let mut hello = read_up_to(&mut stream, 1);
        while !hello.ends_with(b"modules\r\n*0\r\n") {
            hello.extend(read_up_to(&mut stream, 1));
        }
        stream.write_all(request.as_bytes()).unwrap();
        let reply = read_up_to(&mut stream, resp3.len());
        assert_eq!(
            reply,
            resp3,
            "RESP3 {kind}: {}",
            String::from_utf8_lossy(&reply)
        );
    }
    // DEBUG ERROR answers its text as an error, line breaks made spaces.
    let request = b"*3\r\n$5\r\nDEBUG\r\n$5\r\nERROR\r\n$11\r\nERR bad\nnow\r\n";
    let expected = b"-ERR bad now\r\n";
    assert_eq!(raw_exchange(server.resp, request, expected.len()), expected);
}

/// `CLIENT KILL addr:port` naming the caller's own connection answers OK and closes it:
/// what the client pipelined after it is not run.
#[test]
fn client_kill_by_address_closes_the_callers_own_connection() {
    let (_dir, server) = start(&[]);
    let mut stream = connect(server.resp);
    let own = stream.local_addr().expect("local address").to_string();
    let request = format!(
        "*3\r\n$6\r\nCLIENT\r\n$4\r\nKILL\r\n${}\r\n{own}\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n",
        own.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let reply = read_up_to(&mut stream, 1024);
    assert_eq!(reply, b"+OK\r\n", "{}", String::from_utf8_lossy(&reply));
    let mut con = redis_connection(&server);
    let after: Option<String> = redis::cmd("GET").arg("after").query(&mut con).unwrap();
    assert_eq!(after, None, "the SET after the kill ran");
}

/// Inside a transaction, a client that kills itself has the rest of EXEC run, its reply
/// sent, and the connection closed after it, as in Redis.
#[test]
fn client_kill_of_itself_inside_exec_closes_after_the_reply() {
    let (_dir, server) = start(&[]);
    let mut stream = connect(server.resp);
    let own = stream.local_addr().expect("local address").to_string();
    let request = format!("MULTI\r\nCLIENT KILL {own}\r\nSET after 1\r\nEXEC\r\nSET later 1\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let reply = read_up_to(&mut stream, 1024);
    assert_eq!(
        String::from_utf8_lossy(&reply),
        "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n"
    );
    let mut con = redis_connection(&server);
    let after: Option<String> = redis::cmd("GET").arg("after").query(&mut con).unwrap();
    let later: Option<String> = redis::cmd("GET").arg("later").query(&mut con).unwrap();
    assert_eq!((after.as_deref(), later), (Some("1"), None));
}
