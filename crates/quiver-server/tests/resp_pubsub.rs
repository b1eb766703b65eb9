//! Pub/sub over RESP through the `quiver` binary: the `redis` crate as a subscriber,
//! messages crossing between RESP, the native protocol and QUIC, pattern subscriptions,
//! and the `client-output-buffer-limit pubsub` limits. (Reply-level equality with
//! redis-server, RESP3 pushes included, is the differential test's part.)

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use quiver_client::{Client, ClientOptions, SubscribeOptions};

use crate::native::payloads;
use crate::support::{Server, connect, http_get, logged_fingerprint, redis_connection};

/// Longest a test waits for one message.
const WAIT: Duration = Duration::from_secs(10);

fn subscriber(server: &Server) -> redis::Connection {
    let connection = redis_connection(server);
    connection
        .set_read_timeout(Some(WAIT))
        .expect("read timeout");
    connection
}

fn publish(server: &Server, channel: &str, message: &str) -> i64 {
    let mut connection = redis_connection(server);
    redis::cmd("PUBLISH")
        .arg(channel)
        .arg(message)
        .query(&mut connection)
        .expect("PUBLISH")
}

/// (pattern, channel, payload) of the next message.
fn next(pubsub: &mut redis::PubSub<'_>) -> (Option<String>, String, String) {
    let message = pubsub.get_message().expect("a message");
    let pattern = message.get_pattern::<Option<String>>().expect("pattern");
    let payload: String = message.get_payload().expect("payload");
    (pattern, message.get_channel_name().to_owned(), payload)
}

fn owned(pattern: Option<&str>, channel: &str, payload: &str) -> (Option<String>, String, String) {
    (
        pattern.map(str::to_owned),
        channel.to_owned(),
        payload.to_owned(),
    )
}

#[test]
fn the_redis_crate_subscribes_to_channels_and_patterns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut connection = subscriber(&server);
    let mut pubsub = connection.as_pubsub();
    pubsub.subscribe("news").expect("SUBSCRIBE");
    pubsub.psubscribe("sport.*").expect("PSUBSCRIBE");

    assert_eq!(publish(&server, "news", "one"), 1);
    assert_eq!(publish(&server, "sport.tennis", "two"), 1);
    assert_eq!(publish(&server, "weather", "nobody"), 0);
    assert_eq!(next(&mut pubsub), owned(None, "news", "one"));
    assert_eq!(
        next(&mut pubsub),
        owned(Some("sport.*"), "sport.tennis", "two")
    );

    // Binary-safe payloads, in publish order.
    for i in 0..100 {
        publish(&server, "news", &format!("m{i}\r\n\0"));
    }
    for i in 0..100 {
        assert_eq!(next(&mut pubsub).2, format!("m{i}\r\n\0"));
    }

    pubsub.unsubscribe("news").expect("UNSUBSCRIBE");
    pubsub.punsubscribe("sport.*").expect("PUNSUBSCRIBE");
    assert_eq!(publish(&server, "news", "after"), 0);
    drop(pubsub);
    // Out of the subscribed context, the connection runs commands again.
    let pong: String = redis::cmd("PING").query(&mut connection).expect("PING");
    assert_eq!(pong, "PONG");
}

#[tokio::test]
async fn messages_cross_between_resp_native_and_quic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let stream = "acme/chat/room";
    let native = Client::connect(&format!("quiver://{}", server.native))
        .await
        .expect("native connect");
    let mut native_sub = native
        .subscribe(stream, SubscribeOptions::default())
        .await
        .expect("native subscribe");

    let resp = subscriber_thread(
        &server,
        |pubsub| {
            pubsub.subscribe("acme/chat/room").expect("SUBSCRIBE");
            pubsub.psubscribe("acme/*").expect("PSUBSCRIBE");
        },
        6,
    );
    wait_for_subscribers(&server, stream, 2);

    // RESP to native and RESP: two RESP subscriptions and one native subscription.
    assert_eq!(publish(&server, stream, "from resp"), 3);
    assert_eq!(payloads(&mut native_sub, 1).await, ["from resp"]);
    // Native to RESP.
    native
        .publish(stream, "from native")
        .await
        .expect("publish");
    // QUIC to RESP.
    let quic = Client::connect_with(
        &format!("quiver+quic://{}", server.quic),
        ClientOptions::default().pin_server_fingerprint(logged_fingerprint(&server)),
    )
    .await
    .expect("QUIC connect");
    quic.publish(stream, "from quic").await.expect("publish");
    assert_eq!(
        payloads(&mut native_sub, 2).await,
        ["from native", "from quic"]
    );

    let received = tokio::task::spawn_blocking(move || resp.join().expect("RESP thread"))
        .await
        .expect("join");
    let mut received = received;
    received.sort();
    let mut expected: Vec<_> = ["from native", "from quic", "from resp"]
        .iter()
        .flat_map(|p| [owned(None, stream, p), owned(Some("acme/*"), stream, p)])
        .collect();
    expected.sort();
    assert_eq!(received, expected);
}

/// Waits until `channel` has `count` subscribers, by channel or pattern (pattern
/// subscriptions counted whatever they match).
fn wait_for_subscribers(server: &Server, channel: &str, count: i64) {
    let mut connection = redis_connection(server);
    let deadline = Instant::now() + WAIT;
    loop {
        let numsub: Vec<redis::Value> = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(channel)
            .query(&mut connection)
            .expect("NUMSUB");
        let channels = match numsub.get(1) {
            Some(redis::Value::Int(n)) => *n,
            other => panic!("NUMSUB: {other:?}"),
        };
        let patterns: i64 = redis::cmd("PUBSUB")
            .arg("NUMPAT")
            .query(&mut connection)
            .expect("NUMPAT");
        if channels + patterns >= count {
            return;
        }
        assert!(Instant::now() < deadline, "subscriptions did not arrive");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A raw connection subscribed to `channel` that never reads what it is sent.
fn stalled_subscriber(server: &Server, channel: &str) -> std::net::TcpStream {
    let mut stream = connect(server.resp);
    write!(
        stream,
        "*2\r\n$9\r\nSUBSCRIBE\r\n${}\r\n{channel}\r\n",
        channel.len()
    )
    .expect("send");
    let mut confirmation = vec![0u8; 64];
    let n = stream.read(&mut confirmation).expect("confirmation");
    assert!(
        confirmation[..n].starts_with(b"*3\r\n$9\r\nsubscribe"),
        "{:?}",
        String::from_utf8_lossy(&confirmation[..n])
    );
    stream
}

fn metric(server: &Server, line_start: &str) -> u64 {
    let (_, body) = http_get(server.http, "/metrics");
    body.lines()
        .find_map(|line| line.strip_prefix(line_start))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {line_start} in {body}"))
}

/// Whether the server closed `stream` (reading what it was sent until the end).
fn closed_by_server(stream: &mut std::net::TcpStream) -> bool {
    stream.set_read_timeout(Some(WAIT)).expect("read timeout");
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
}

#[test]
fn a_stalled_subscriber_meets_the_hard_limit_while_others_keep_receiving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--resp-pubsub-output-hard", "256KiB"]);
    let mut stalled = stalled_subscriber(&server, "feed");
    let mut connection = subscriber(&server);

    // Far more than the socket buffers and the limit hold: the stalled one is cut off.
    // The publisher waits for the live subscriber every few messages, so that it never
    // lags by as much as the limit itself.
    let payload = "x".repeat(4096);
    let total = 8_000;
    let received = Arc::new(AtomicUsize::new(0));
    let reader = std::thread::spawn({
        let received = Arc::clone(&received);
        move || {
            let mut live = connection.as_pubsub();
            live.subscribe("feed").expect("SUBSCRIBE");
            while received.load(Ordering::Acquire) < total {
                let (_, channel, message) = next(&mut live);
                assert_eq!((channel.as_str(), message.len()), ("feed", 4096));
                received.fetch_add(1, Ordering::Release);
            }
        }
    });
    wait_for_subscribers(&server, "feed", 2);
    let mut publisher = redis_connection(&server);
    for sent in 1..=total {
        let _: i64 = redis::cmd("PUBLISH")
            .arg("feed")
            .arg(&payload)
            .query(&mut publisher)
            .expect("PUBLISH");
        let deadline = Instant::now() + WAIT;
        while sent - received.load(Ordering::Acquire) > 16 {
            assert!(
                Instant::now() < deadline,
                "the live subscriber stopped receiving at {}: {}",
                received.load(Ordering::Acquire),
                http_get(server.http, "/metrics").1
            );
            std::thread::yield_now();
        }
    }
    reader.join().expect("live subscriber");
    assert!(
        closed_by_server(&mut stalled),
        "the stalled subscriber is closed"
    );
    assert_eq!(
        metric(&server, "quiver_pubsub_disconnected_total{limit=\"hard\"}"),
        1
    );
    assert_eq!(
        metric(&server, "quiver_pubsub_disconnected_total{limit=\"soft\"}"),
        0
    );
    let left: Vec<redis::Value> = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg("feed")
        .query(&mut publisher)
        .expect("NUMSUB");
    // The cut subscriber left the channel with its connection; the live one
    // unsubscribed when it was done.
    assert_eq!(left.get(1), Some(&redis::Value::Int(0)), "{left:?}");
}

#[test]
fn a_subscriber_above_the_soft_limit_for_its_period_is_disconnected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut publisher = redis_connection(&server);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("client-output-buffer-limit")
        .arg("pubsub 0 64kb 1")
        .query(&mut publisher)
        .expect("CONFIG SET");
    let limits: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("client-output-buffer-limit")
        .query(&mut publisher)
        .expect("CONFIG GET");
    assert!(limits[1].ends_with("pubsub 0 65536 1"), "{limits:?}");
    let mut stalled = stalled_subscriber(&server, "slow");

    // Over the soft limit (beyond what the socket buffers take), then still over it
    // more than a second later.
    let payload = "y".repeat(16 * 1024);
    let publish_burst = |publisher: &mut redis::Connection| {
        for _ in 0..1_000 {
            let _: i64 = redis::cmd("PUBLISH")
                .arg("slow")
                .arg(&payload)
                .query(publisher)
                .expect("PUBLISH");
        }
    };
    publish_burst(&mut publisher);
    assert_eq!(
        metric(&server, "quiver_pubsub_disconnected_total{limit=\"soft\"}"),
        0
    );
    std::thread::sleep(Duration::from_millis(1_200));
    publish_burst(&mut publisher);
    assert!(
        closed_by_server(&mut stalled),
        "the slow subscriber is closed"
    );
    assert_eq!(
        metric(&server, "quiver_pubsub_disconnected_total{limit=\"soft\"}"),
        1
    );

    let error = redis::cmd("CONFIG")
        .arg("SET")
        .arg("client-output-buffer-limit")
        .arg("normal 1mb 0 0")
        .query::<()>(&mut publisher)
        .expect_err("only the pubsub class changes at run time");
    assert!(error.to_string().contains("pubsub class"), "{error}");
}

/// A connection for invalidations, and one whose tracking redirects to it.
fn tracking_pair(server: &Server) -> (redis::Connection, redis::Connection) {
    let mut listener = subscriber(server);
    let listener_id: i64 = redis::cmd("CLIENT")
        .arg("ID")
        .query(&mut listener)
        .expect("CLIENT ID");
    let mut reader = redis_connection(server);
    let _: () = redis::cmd("CLIENT")
        .arg(&["TRACKING", "ON", "REDIRECT"])
        .arg(listener_id)
        .query(&mut reader)
        .expect("CLIENT TRACKING");
    (listener, reader)
}

#[test]
fn tracking_invalidations_reach_a_redirect_subscriber_after_a_write_elsewhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let (mut listener, mut reader) = tracking_pair(&server);
    let mut pubsub = listener.as_pubsub();
    pubsub.subscribe("__redis__:invalidate").expect("SUBSCRIBE");
    let _: Option<String> = redis::cmd("GET")
        .arg("user:1")
        .query(&mut reader)
        .expect("GET");

    let mut writer = redis_connection(&server);
    let _: () = redis::cmd("SET")
        .arg("user:1")
        .arg("changed")
        .query(&mut writer)
        .expect("SET");
    let message = pubsub.get_message().expect("an invalidation");
    assert_eq!(message.get_channel_name(), "__redis__:invalidate");
    let keys: Vec<String> = message.get_payload().expect("the keys");
    assert_eq!(keys, ["user:1"]);

    // Told once: the key must be read again to be tracked again.
    let _: () = redis::cmd("SET")
        .arg("user:1")
        .arg("again")
        .query(&mut writer)
        .expect("SET");
    let _: () = redis::cmd("FLUSHALL").query(&mut writer).expect("FLUSHALL");
    let message = pubsub.get_message().expect("the flush");
    let everything: Option<Vec<String>> = message.get_payload().expect("null");
    assert_eq!(everything, None, "a flush invalidates everything");
}

/// `redis-cli`, if installed (CI installs it: `DIFFERENTIAL_REQUIRE_REDIS` makes it required).
fn redis_cli() -> Option<&'static str> {
    let found = std::process::Command::new("redis-cli")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        assert!(
            std::env::var_os("DIFFERENTIAL_REQUIRE_REDIS").is_none(),
            "redis-cli is required (DIFFERENTIAL_REQUIRE_REDIS is set)"
        );
        eprintln!("skipped: redis-cli is not installed");
        return None;
    }
    Some("redis-cli")
}

#[test]
fn redis_cli_in_resp3_receives_what_the_quiver_cli_publishes() {
    let Some(cli) = redis_cli() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let stream = "acme/chat/cli";
    let mut subscriber = std::process::Command::new(cli)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &server.resp.port().to_string(),
            "-3",
        ])
        .args(["subscribe", stream])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start redis-cli");
    let stdout = subscriber.stdout.take().expect("stdout");
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    wait_for_subscribers(&server, stream, 1);
    let published = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args([
            "pub",
            "--server",
            &format!("quiver://{}", server.native),
            stream,
            "from the cli",
        ])
        .output()
        .expect("quiver pub");
    assert!(published.status.success(), "{published:?}");
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    let found = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(line) if line == "from the cli" => break true,
            Ok(line) => seen.push(line),
            Err(_) => break false,
        }
    };
    let _ = subscriber.kill();
    let _ = subscriber.wait();
    assert!(found, "redis-cli printed {seen:?}");
    assert!(seen.iter().any(|line| line == "message"), "{seen:?}");
}

fn command(connection: &mut redis::Connection, args: &[&str]) -> redis::RedisResult<()> {
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command.exec(connection)
}

/// A `redis` crate subscriber on its own thread: it subscribes with `subscribe`, then
/// returns the next `count` messages as (pattern, channel, payload).
fn subscriber_thread(
    server: &Server,
    subscribe: impl FnOnce(&mut redis::PubSub<'_>) + Send + 'static,
    count: usize,
) -> std::thread::JoinHandle<Vec<(Option<String>, String, String)>> {
    let addr = server.resp;
    std::thread::spawn(move || {
        let client = redis::Client::open(format!("redis://{addr}/")).expect("url");
        let mut connection = client.get_connection().expect("connect");
        connection.set_read_timeout(Some(WAIT)).expect("timeout");
        let mut pubsub = connection.as_pubsub();
        subscribe(&mut pubsub);
        (0..count).map(|_| next(&mut pubsub)).collect()
    })
}

fn pair(channel: &str, payload: &str) -> (String, String) {
    (channel.to_owned(), payload.to_owned())
}

#[tokio::test]
async fn keyspace_events_reach_redis_and_native_subscribers_with_expiries_and_evictions() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Selected in the configuration: keyspace and keyevent channels, generic, string,
    // expired and evicted events.
    let server = Server::start(dir.path(), &["--resp-notify-keyspace-events", "KEg$xe"]);
    let native = Client::connect(&format!("quiver://{}", server.native))
        .await
        .expect("native connect");
    let mut native_sub = native
        .subscribe("quiver/cache/keyspace", SubscribeOptions::default())
        .await
        .expect("native subscribe");

    let resp = subscriber_thread(
        &server,
        |pubsub| pubsub.psubscribe("__keyevent@0__:*").expect("PSUBSCRIBE"),
        4,
    );
    wait_for_subscribers(&server, "__keyevent@0__:set", 1);

    let mut connection = redis_connection(&server);
    let mut run = |args: &[&str]| command(&mut connection, args);
    run(&["SET", "short", "lived", "PX", "50"]).expect("SET");
    run(&["RPUSH", "list", "not", "selected"]).expect("RPUSH");
    // Active expiry removes the key within a few of its 100 ms cycles.
    std::thread::sleep(Duration::from_millis(400));
    run(&["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]).expect("CONFIG");
    run(&["CONFIG", "SET", "maxmemory", "1"]).expect("CONFIG");
    // A write evicts down to the limit first: `list` goes (and the write is refused).
    let _ = run(&["SET", "after", "limit"]);
    run(&["CONFIG", "SET", "maxmemory", "0"]).expect("CONFIG");

    let received: Vec<_> = tokio::task::spawn_blocking(move || resp.join().expect("RESP thread"))
        .await
        .expect("join")
        .into_iter()
        .map(|(_, channel, payload)| (channel, payload))
        .collect();
    assert_eq!(
        received[..3],
        [
            pair("__keyevent@0__:set", "short"),
            pair("__keyevent@0__:expire", "short"),
            pair("__keyevent@0__:expired", "short"),
        ]
    );
    assert_eq!(received[3], pair("__keyevent@0__:evicted", "list"));

    let mut events = Vec::new();
    while events.len() < 4 {
        match crate::native::next(&mut native_sub).await {
            quiver_client::SubscriptionEvent::Event(event) => {
                let header = |name: &str| {
                    event
                        .headers
                        .iter()
                        .find(|(key, _)| key == name)
                        .map(|(_, value)| String::from_utf8_lossy(value).into_owned())
                };
                assert_eq!(header("db").as_deref(), Some("0"));
                events.push((
                    header("event").expect("an event header"),
                    String::from_utf8_lossy(&event.payload).into_owned(),
                ));
            }
            other => panic!("expected an event, got {other:?}"),
        }
    }
    assert_eq!(
        events,
        [
            pair("set", "short"),
            pair("expire", "short"),
            pair("expired", "short"),
            pair("evicted", "list"),
        ]
    );
}

#[test]
fn keys_a_script_reads_are_tracked_for_its_caller() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let (mut listener, mut reader) = tracking_pair(&server);
    let mut pubsub = listener.as_pubsub();
    pubsub.subscribe("__redis__:invalidate").expect("SUBSCRIBE");
    // The script's declared key is not what counts: the keys its commands read are.
    let _: Option<String> = redis::cmd("EVAL")
        .arg("return redis.call('get', ARGV[1])")
        .arg(1)
        .arg("declared")
        .arg("read:1")
        .query(&mut reader)
        .expect("EVAL");
    let mut writer = redis_connection(&server);
    for key in ["declared", "read:1"] {
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg("changed")
            .query(&mut writer)
            .expect("SET");
    }
    let message = pubsub.get_message().expect("an invalidation");
    let keys: Vec<String> = message.get_payload().expect("the keys");
    assert_eq!(keys, ["read:1"]);
}
