//! The `quiver stream|pub|sub|group` commands end to end against a `quiver serve` child:
//! create, publish, read from the earliest message, consume as a group, restart the server,
//! resume the group; and the exit status of each kind of failure.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::Server;

/// Runs `quiver ARGS --server <server>` with `stdin`, bounded in time.
fn quiver(server: &Server, args: &[&str], stdin: impl AsRef<[u8]>) -> Output {
    let url = format!("quiver://{}", server.native);
    quiver_at(&url, args, stdin)
}

fn quiver_at(url: &str, args: &[&str], stdin: impl AsRef<[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .args(["--server", url, "--timeout", "10s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn quiver");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_ref())
        .expect("write stdin");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("quiver {args:?} did not finish within 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn json_lines(output: &Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone())
        .expect("utf-8")
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect()
}

#[test]
fn create_publish_read_consume_restart_and_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let created = json_lines(&quiver(
        &server,
        &[
            "stream",
            "create",
            "acme/orders/created",
            "--durability",
            "sync",
            "--max-messages",
            "1000",
            "--json",
        ],
        "",
    ));
    assert_eq!(created[0]["durability"], "sync");
    assert_eq!(created[0]["max_messages"], 1000);
    let published = json_lines(&quiver(
        &server,
        &[
            "pub",
            "acme/orders/created",
            "-",
            "--ack",
            "committed",
            "--json",
        ],
        "first\nsecond\nthird\n",
    ));
    assert_eq!(offsets(&published), [0, 1, 2]);
    let with_header = quiver(
        &server,
        &[
            "pub",
            "acme/orders/created",
            "fourth",
            "--header",
            "kind=late",
        ],
        "",
    );
    assert!(with_header.status.success());
    assert!(String::from_utf8_lossy(&with_header.stdout).contains("at offset 3"));

    let read = json_lines(&quiver(
        &server,
        &[
            "sub",
            "acme/orders/created",
            "--from",
            "earliest",
            "--count",
            "4",
            "--json",
        ],
        "",
    ));
    let payloads: Vec<&str> = read
        .iter()
        .map(|v| v["payload"].as_str().unwrap())
        .collect();
    assert_eq!(payloads, ["first", "second", "third", "fourth"]);
    assert_eq!(read[3]["headers"]["kind"], "late");
    assert_eq!(read[3]["stream"], "acme/orders/created");
    assert_eq!(read[3]["offset"], 3);
    let human = quiver(
        &server,
        &["sub", "acme/orders/created", "--from", "2", "--count", "1"],
        "",
    );
    let line = String::from_utf8_lossy(&human.stdout);
    assert!(
        line.starts_with("[acme/orders/created #2 ") && line.trim_end().ends_with("third"),
        "{line}"
    );

    let consumed = consume_billing(&server);
    assert_eq!(offsets(&consumed), [0, 1]);
    assert_eq!(consumed[0]["deliveries"], 1);

    let mut server = server;
    server.signal("TERM");
    assert!(
        server.wait_exit(Duration::from_secs(20)).is_some(),
        "a clean stop"
    );
    drop(server);
    let server = Server::start(dir.path(), &[]);
    let listed = json_lines(&quiver(&server, &["stream", "ls", "--json"], ""));
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["next_offset"], 4);
    let resumed = consume_billing(&server);
    assert_eq!(offsets(&resumed), [2, 3], "the group goes on where it was");
    // The first run leased only the two it printed: these are first deliveries.
    assert_eq!(resumed[0]["deliveries"], 1, "{resumed:?}");
    let info = json_lines(&quiver(
        &server,
        &["group", "info", "acme/orders/created", "billing", "--json"],
        "",
    ));
    assert_eq!(info[0]["acked"], 4);
    assert_eq!(info[0]["lag"], 0);
    let (status, metrics) = crate::support::http_get(server.http, "/metrics");
    assert_eq!(status, 200);
    for line in [
        "quiver_stream_stored_messages{stream=\"acme/orders/created\"} 4",
        "quiver_stream_next_offset{stream=\"acme/orders/created\"} 4",
        "quiver_group_lag{stream=\"acme/orders/created\",group=\"billing\"} 0",
        "quiver_group_acked_total{stream=\"acme/orders/created\",group=\"billing\"} 4",
        "# TYPE quiver_stream_fsync_seconds histogram",
    ] {
        assert!(metrics.contains(line), "{line} missing from:\n{metrics}");
    }
    // The fsync histogram's buckets grow, up to +Inf, which is its count.
    let fsync: Vec<u64> = metrics
        .lines()
        .filter(|l| {
            l.starts_with("quiver_stream_fsync_seconds_bucket{stream=\"acme/orders/created\"")
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(fsync.windows(2).all(|w| w[0] <= w[1]), "{fsync:?}");
    let count = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix("quiver_stream_fsync_seconds_count{stream=\"acme/orders/created\"} ")
        })
        .expect("the count");
    assert_eq!(fsync.last().unwrap().to_string(), count);
    let reset = json_lines(&quiver(
        &server,
        &[
            "group",
            "reset",
            "acme/orders/created",
            "billing",
            "--to",
            "earliest",
            "--json",
        ],
        "",
    ));
    assert_eq!(reset[0]["next"], 0);
    let groups = json_lines(&quiver(
        &server,
        &["group", "ls", "acme/orders/created", "--json"],
        "",
    ));
    assert_eq!(groups[0]["group"], "billing");
    let removed = quiver(&server, &["stream", "rm", "acme/orders/created"], "");
    assert!(removed.status.success());
    assert!(json_lines(&quiver(&server, &["stream", "ls", "--json"], "")).is_empty());
}

/// Lines of standard input are messages whatever their bytes (not only text).
#[test]
fn lines_that_are_not_text_are_published_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let published = json_lines(&quiver(
        &server,
        &["pub", "acme/bin/lines", "-", "--json"],
        b"first\r\n\xff\xfe binary\nthird\n",
    ));
    assert_eq!(published.len(), 3, "{published:?}");
}

#[test]
fn failures_have_their_exit_status_and_say_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let missing = quiver(&server, &["stream", "info", "acme/no/such"], "");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("does not exist"));
    let bad_name = quiver(&server, &["pub", "acme/*/x", "hello"], "");
    assert_eq!(bad_name.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_name.stderr).contains("wildcard"));
    let bad_value = quiver(
        &server,
        &["stream", "create", "a/b/c", "--durability", "fsync"],
        "",
    );
    assert_eq!(bad_value.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_value.stderr).contains("fsync"));
    for (args, says) in [
        (&["--max-messages", "0"][..], "--max-messages 0"),
        (
            &["--durability", "live", "--dedupe-window", "5m"][..],
            "--dedupe-window",
        ),
    ] {
        let mut all = vec!["stream", "create", "a/b/c"];
        all.extend_from_slice(args);
        let refused = quiver(&server, &all, "");
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains(says),
            "{args:?}"
        );
    }
    let unreachable = quiver_at("quiver://127.0.0.1:1", &["stream", "ls"], "");
    assert_eq!(unreachable.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("quiver serve"));
    let live = quiver(
        &server,
        &["pub", "acme/live/x", "m", "--ack", "committed"],
        "",
    );
    assert_eq!(live.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&live.stderr).contains("not durable"));
    // Refused before it is sent: bad input, and what went before it is said.
    let mut lines = b"one\ntwo\n".to_vec();
    lines.extend(vec![b'x'; 2 << 20]);
    lines.extend_from_slice(b"\nfour\n");
    let too_long = quiver(&server, &["pub", "acme/many/lines", "-"], lines);
    let said = String::from_utf8_lossy(&too_long.stderr);
    assert_eq!(too_long.status.code(), Some(2), "{said}");
    assert!(
        said.contains("line 3") && said.contains("2 lines before it were published"),
        "{said}"
    );
    let nothing = quiver(
        &server,
        &["sub", "acme/none/here", "--from", "0", "--count", "1"],
        "",
    );
    let said = String::from_utf8_lossy(&nothing.stderr);
    assert_eq!(nothing.status.code(), Some(1), "{said}");
    assert!(
        said.contains("at offset 0") && said.contains("no such stream"),
        "{said}"
    );
    // `status` pointed at a listener that is not HTTP.
    let native = server.native.to_string();
    let not_http = quiver(&server, &["status", "--http", &native], "");
    let said = String::from_utf8_lossy(&not_http.stderr);
    assert_eq!(not_http.status.code(), Some(3), "{said}");
    assert!(said.contains("does not speak HTTP"), "{said}");
}

/// Two messages of `acme/orders/created` consumed by group `billing`, as JSON lines.
fn consume_billing(server: &Server) -> Vec<Value> {
    let args = [
        "sub",
        "acme/orders/created",
        "--group",
        "billing",
        "--count",
        "2",
        "--json",
    ];
    json_lines(&quiver(server, &args, ""))
}

/// The `offset` of each line.
fn offsets(lines: &[Value]) -> Vec<u64> {
    lines
        .iter()
        .map(|v| v["offset"].as_u64().unwrap())
        .collect()
}
