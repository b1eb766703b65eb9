//! `quiver serve` as a real process: endpoints, limits, data dir lock, shutdown.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::support::{Server, Started, connect, http_get, read_response};

#[test]
fn health_ready_and_metrics_answer_over_a_real_socket() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    let (status, body) = http_get(server.http, "/health");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"status\":\"ok\""), "{body}");

    let (status, body) = http_get(server.http, "/ready");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"draining\":false"), "{body}");

    let (status, body) = http_get(server.http, "/metrics");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("text/plain; version=0.0.4"), "{body}");
    for needle in [
        "quiver_build_info{version=\"",
        "quiver_uptime_seconds ",
        "process_resident_memory_bytes ",
        "quiver_listener_open_connections{listener=\"http\"",
        "quiver_listener_refused_connections_total{listener=\"http\"",
    ] {
        assert!(body.contains(needle), "missing {needle} in {body}");
    }
    // the connection asking for /metrics is itself open while it is answered
    let open_line = format!(
        "quiver_listener_open_connections{{listener=\"http\",addr=\"{}\"}} ",
        server.http
    );
    let open: u64 = body
        .lines()
        .find_map(|line| line.strip_prefix(&open_line))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no open-connections sample in {body}"));
    assert!(open >= 1, "{body}");

    let (status, _) = http_get(server.http, "/nope");
    assert_eq!(status, 404);
}

#[test]
fn startup_logs_one_line_per_listener() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &[]);
    let listening: Vec<_> = server
        .startup_log
        .iter()
        .filter(|line| line.contains("\"listening\""))
        .collect();
    // http, resp, native and quic.
    assert_eq!(listening.len(), 4, "{:?}", server.startup_log);
    assert!(
        listening[0].contains(&format!("\"addr\":\"{}\"", server.http)),
        "{}",
        listening[0]
    );
    assert!(
        server
            .startup_log
            .iter()
            .any(|line| line.contains("data directory opened"))
    );
    let ready = server.wait_for_log("quiver ready", Duration::from_secs(10));
    assert!(ready.is_some_and(|line| line.contains("\"profile\":\"balanced\"")));
}

#[test]
fn sighup_is_ignored_and_sigterm_with_an_open_connection_drains_then_exits_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path(), &["--shutdown-drain-timeout", "5s"]);
    // A request that is half sent is in-flight work: it must be allowed to finish.
    let mut stream = connect(server.http);
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: test\r\n")
        .expect("send half");
    std::thread::sleep(Duration::from_millis(100));
    // SIGHUP is ignored (the terminal that started the server went away).
    server.signal("HUP");
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        server.wait_exit(Duration::ZERO).is_none(),
        "SIGHUP stopped it"
    );
    server.signal("TERM");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        server.wait_exit(Duration::ZERO).is_none(),
        "exited before the in-flight request finished"
    );
    stream
        .write_all(b"Connection: close\r\n\r\n")
        .expect("send rest");
    let (status, body) = read_response(&mut stream);
    assert_eq!(status, 200, "{body}");
    let status = server
        .wait_exit(Duration::from_secs(5))
        .expect("exits after the drain");
    assert!(status.success(), "exit status {status}");
}

#[test]
fn sigterm_exits_zero_within_the_drain_timeout_when_a_client_stalls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path(), &["--shutdown-drain-timeout", "500ms"]);
    let mut stream = TcpStream::connect(server.http).expect("connect");
    stream
        .write_all(b"GET /health HTTP/1.1\r\n")
        .expect("send half");
    std::thread::sleep(Duration::from_millis(100));
    let signalled = Instant::now();
    server.signal("TERM");
    let status = server.wait_exit(Duration::from_secs(10)).expect("exits");
    assert!(status.success(), "exit status {status}");
    let took = signalled.elapsed();
    assert!(
        took >= Duration::from_millis(400),
        "did not wait for the stalled request: {took:?}"
    );
}

#[test]
fn second_signal_exits_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path(), &["--shutdown-drain-timeout", "1h"]);
    let mut stream = TcpStream::connect(server.http).expect("connect");
    stream
        .write_all(b"GET /health HTTP/1.1\r\n")
        .expect("send half");
    std::thread::sleep(Duration::from_millis(100));
    server.signal("INT");
    std::thread::sleep(Duration::from_millis(200));
    server.signal("INT");
    let status = server
        .wait_exit(Duration::from_secs(10))
        .expect("exits at once");
    assert_eq!(status.code(), Some(130));
}

#[test]
fn second_server_on_the_same_data_dir_is_refused_with_the_pid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = Server::start(dir.path(), &[]);
    match Server::try_start(dir.path(), &[]) {
        Started::Running(_) => panic!("a second server started on a locked data dir"),
        Started::Exited { status, stderr } => {
            assert_eq!(status.code(), Some(2), "{stderr}");
            assert!(stderr.contains(&format!("pid {}", first.pid())), "{stderr}");
            assert!(
                stderr.contains(&dir.path().display().to_string()),
                "{stderr}"
            );
        }
    }
}

#[test]
fn connections_over_the_limit_are_refused_with_503() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), &["--http-max-connections", "1"]);
    let mut holder = TcpStream::connect(server.http).expect("connect");
    holder
        .write_all(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        .expect("send");
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = http_get(server.http, "/health");
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("too_many_connections") && body.contains("at most 1"),
        "{body}"
    );
    drop(holder);
    // the slot frees once the holder goes away
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, _) = http_get(server.http, "/health");
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "slot never freed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bad_configuration_stops_startup_with_one_clear_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    match Server::try_start(dir.path(), &["--net-backlog", "0"]) {
        Started::Running(_) => panic!("started with an invalid backlog"),
        Started::Exited { status, stderr } => {
            assert_eq!(status.code(), Some(2));
            assert!(
                stderr.contains("invalid value for `net.backlog` (from flag --net-backlog): \"0\""),
                "{stderr}"
            );
        }
    }
}

#[test]
fn quiver_config_prints_sources_and_version_works() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["config", "--profile", "low-memory"])
        .env("QUIVER_HTTP_ADDR", "127.0.0.1:9000")
        .output()
        .expect("run quiver config");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert!(
        text.contains("profile = \"low-memory\"  # flag --profile"),
        "{text}"
    );
    assert!(
        text.contains("addr = \"127.0.0.1:9000\"  # env QUIVER_HTTP_ADDR"),
        "{text}"
    );
    assert!(
        text.contains("max_connections = 128  # profile low-memory"),
        "{text}"
    );

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .arg("--version")
        .output()
        .expect("run quiver --version");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains(env!("CARGO_PKG_VERSION")));
}
