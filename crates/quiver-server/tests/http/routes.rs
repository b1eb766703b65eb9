//! Every REST route, over HTTP/1.1 and HTTP/2, with its errors.

use bytes::Bytes;
use serde_json::json;

use super::{Http, Version};
use crate::support::Server;

fn start(dir: &tempfile::TempDir, extra: &[&str]) -> Server {
    let mut args = vec!["--cache-save", "", "--streams-durable", "acme/durable/>"];
    args.extend_from_slice(extra);
    Server::start(dir.path(), &args)
}

#[tokio::test]
async fn every_route_over_http1_and_http2() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir, &[]);
    for version in [Version::H1, Version::H2] {
        let mut http = Http::connect(server.http, version).await;
        let tag = format!("{version:?}").to_lowercase();
        streams(&mut http, &tag).await;
        publish_and_read(&mut http, &tag).await;
        groups(&mut http, &tag).await;
        cache(&mut http, &tag).await;
        errors(&mut http).await;
    }
}

async fn streams(http: &mut Http, tag: &str) {
    let path = format!("/v1/streams/acme/{tag}/orders");
    let created = http
        .send(
            "PUT",
            &path,
            &[],
            json!({"durability": "sync", "max_messages": 1000, "policy": "block"}).to_string(),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let body = created.json();
    assert_eq!(body["stream"], format!("acme/{tag}/orders"));
    assert_eq!(body["durability"], "sync");
    assert_eq!(body["max_messages"], 1000);
    assert_eq!(body["policy"], "block");

    let again = http.send("PUT", &path, &[], "{}").await;
    assert_eq!(
        (again.status, again.error_code().as_str()),
        (409, "stream_exists")
    );
    let unknown = http
        .send(
            "PUT",
            &format!("/v1/streams/acme/{tag}/x"),
            &[],
            r#"{"durabilty":"sync"}"#,
        )
        .await;
    assert_eq!(
        (unknown.status, unknown.error_code().as_str()),
        (400, "unknown_field")
    );
    assert_eq!(unknown.json()["value"], "durabilty");
    let bad = http
        .send(
            "PUT",
            &format!("/v1/streams/acme/{tag}/x"),
            &[],
            r#"{"durability":"fast"}"#,
        )
        .await;
    assert_eq!(
        (bad.status, bad.error_code().as_str()),
        (400, "invalid_settings")
    );
    let wrong_type = http
        .send(
            "PUT",
            &format!("/v1/streams/acme/{tag}/x"),
            &[("content-type", "text/plain")],
            "{}",
        )
        .await;
    assert_eq!(
        (wrong_type.status, wrong_type.error_code().as_str()),
        (415, "unsupported_media_type")
    );

    let described = http.get(&path).await;
    assert_eq!(described.status, 200);
    assert_eq!(described.json()["durability"], "sync");
    let listed = http.get(&format!("/v1/streams?prefix=acme/{tag}/")).await;
    assert_eq!(listed.status, 200);
    let names: Vec<String> = listed.json()["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stream"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, [format!("acme/{tag}/orders")]);

    let live = http
        .send("PUT", &format!("/v1/streams/acme/{tag}/live"), &[], "")
        .await;
    assert_eq!(live.status, 201);
    assert_eq!(live.json()["durability"], "live");
    let deleted = http
        .send("DELETE", &format!("/v1/streams/acme/{tag}/live"), &[], "")
        .await;
    assert_eq!(deleted.status, 200);
    let gone = http.get(&format!("/v1/streams/acme/{tag}/live")).await;
    assert_eq!(
        (gone.status, gone.error_code().as_str()),
        (404, "stream_not_found")
    );
    let again = http
        .send("DELETE", &format!("/v1/streams/acme/{tag}/live"), &[], "")
        .await;
    assert_eq!(again.status, 404);
}

async fn publish_and_read(http: &mut Http, tag: &str) {
    let messages = format!("/v1/streams/acme/{tag}/orders/messages");
    let raw = http
        .send(
            "POST",
            &format!("{messages}?ack=committed"),
            &[
                ("content-type", "application/octet-stream"),
                ("quiver-header-kind", "raw"),
            ],
            Bytes::from_static(b"\xff\x00binary"),
        )
        .await;
    assert_eq!(raw.status, 200, "{:?}", raw.body);
    assert_eq!(
        raw.json(),
        json!({"stream": format!("acme/{tag}/orders"), "ack": "committed",
               "first_offset": 0, "last_offset": 0, "count": 1, "duplicates": 0})
    );
    let doc = http
        .send(
            "POST",
            &messages,
            &[("content-type", "application/json")],
            r#"{"order": 7}"#,
        )
        .await;
    assert_eq!(
        (doc.status, doc.json()["first_offset"].as_u64()),
        (200, Some(1))
    );
    let not_json = http
        .send(
            "POST",
            &messages,
            &[("content-type", "application/json")],
            "{oops",
        )
        .await;
    assert_eq!(
        (not_json.status, not_json.error_code().as_str()),
        (400, "invalid_json")
    );

    // A batch with a bad line publishes nothing.
    let bad_batch = "{\"payload\":\"a\"}\n{\"payload\":\"b\"\n";
    let refused = http
        .send(
            "POST",
            &messages,
            &[("content-type", "application/x-ndjson")],
            bad_batch,
        )
        .await;
    assert_eq!(
        (refused.status, refused.error_code().as_str()),
        (400, "invalid_ndjson")
    );
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("line 2")
    );
    let batch = "{\"payload\":\"a\"}\n\n{\"payload\":{\"n\":1},\"headers\":{\"k\":\"v\"}}\n{\"payload_base64\":\"/wA=\"}\n";
    let published = http
        .send(
            "POST",
            &format!("{messages}?ack=none"),
            &[("content-type", "application/x-ndjson")],
            batch,
        )
        .await;
    assert_eq!(published.status, 202, "{:?}", published.body);
    assert_eq!(
        (
            published.json()["first_offset"].as_u64(),
            published.json()["count"].as_u64()
        ),
        (Some(2), Some(3)),
        "offsets follow on from the first publishes: nothing of the refused batch was taken"
    );
    // Quiver-Msg-Id names one message: a batch carries one per line.
    let one_id = http
        .send(
            "POST",
            &messages,
            &[
                ("content-type", "application/x-ndjson"),
                ("quiver-msg-id", "batch-1"),
            ],
            "{\"payload\":\"a\"}\n",
        )
        .await;
    assert_eq!(
        (one_id.status, one_id.error_code().as_str()),
        (400, "invalid_header")
    );
    assert_eq!(one_id.json()["value"], "batch-1");
    // De-duplication needs a window; this stream has none, so both are stored.
    let bad_ack = http
        .send("POST", &format!("{messages}?ack=maybe"), &[], "x")
        .await;
    assert_eq!(
        (bad_ack.status, bad_ack.error_code().as_str()),
        (400, "invalid_ack")
    );

    let page = http.get(&format!("{messages}?from=earliest&limit=3")).await;
    assert_eq!(page.status, 200);
    let body = page.json();
    assert_eq!(
        (body["next"].as_u64(), body["end_offset"].as_u64()),
        (Some(3), Some(5))
    );
    let first = &body["messages"][0];
    assert_eq!(first["offset"], 0);
    assert_eq!(first["payload_base64"], "/wBiaW5hcnk=");
    assert_eq!(first["headers"]["kind"], "raw");
    assert_eq!(body["messages"][1]["payload"], r#"{"order": 7}"#);
    let link = page.header("link").expect("a Link to the next page");
    assert!(link.contains("from=3&limit=3"), "{link}");
    let rest = http.get(&format!("{messages}?from=3")).await.json();
    assert_eq!(rest["messages"][0]["payload"], r#"{"n":1}"#);
    assert_eq!(rest["messages"][0]["headers"]["k"], "v");
    assert_eq!(rest["messages"][1]["payload_base64"], "/wA=");
    assert_eq!(rest["messages"].as_array().unwrap().len(), 2);
    let empty = http.get(&format!("{messages}?from=latest")).await.json();
    assert_eq!(empty["messages"], json!([]));
    let bad_from = http.get(&format!("{messages}?from=yesterday")).await;
    assert_eq!(
        (bad_from.status, bad_from.error_code().as_str()),
        (400, "invalid_position")
    );
    let bad_limit = http.get(&format!("{messages}?limit=0")).await;
    assert_eq!(bad_limit.status, 400);

    // A live stream has no history to read.
    http.send(
        "POST",
        &format!("/v1/streams/acme/{tag}/ticks/messages"),
        &[],
        "t",
    )
    .await;
    let live = http
        .get(&format!("/v1/streams/acme/{tag}/ticks/messages"))
        .await;
    assert_eq!(
        (live.status, live.error_code().as_str()),
        (409, "not_durable")
    );
    let missing = http.get("/v1/streams/acme/none/such/messages").await;
    assert_eq!(missing.status, 404);
}

async fn groups(http: &mut Http, tag: &str) {
    // Fetches that expect messages wait for them: under load the group's dispatcher may
    // lease them later than a fetch without `wait_ms` waits.
    let group = format!("/v1/streams/acme/{tag}/orders/groups/billing");
    // A misspelt field is refused, not ignored.
    let typo = http
        .post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "c1", "maxx": 2}),
        )
        .await;
    assert_eq!(
        (typo.status, typo.error_code().as_str()),
        (400, "unknown_field")
    );
    assert_eq!(typo.json()["value"], "maxx");
    let fetched = http
        .post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "c1", "max": 2, "wait_ms": 10000}),
        )
        .await;
    assert_eq!(fetched.status, 200, "{:?}", fetched.body);
    let offsets: Vec<u64> = fetched.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [0, 1]);
    assert_eq!(fetched.json()["messages"][0]["deliveries"], 1);
    // Another consumer gets the next ones, not these.
    let other = http
        .post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "c2", "max": 10, "wait_ms": 10000}),
        )
        .await
        .json();
    let other: Vec<u64> = other["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(other, [2, 3, 4]);

    let acked = http
        .post_json(
            &format!("{group}/ack"),
            json!({"consumer": "c1", "offsets": [0]}),
        )
        .await;
    assert_eq!(
        (acked.status, acked.json()["acked"].as_u64()),
        (200, Some(1))
    );
    let not_held = http
        .post_json(
            &format!("{group}/ack"),
            json!({"consumer": "c1", "offsets": [1, 2]}),
        )
        .await;
    assert_eq!(
        (not_held.status, not_held.error_code().as_str()),
        (409, "not_held")
    );
    let nacked = http
        .post_json(
            &format!("{group}/nack"),
            json!({"consumer": "c1", "offsets": [1]}),
        )
        .await;
    assert_eq!(
        (nacked.status, nacked.json()["released"].as_u64()),
        (200, Some(1))
    );
    let again = http
        .post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "c1", "max": 5, "wait_ms": 10000}),
        )
        .await
        .json();
    assert_eq!(again["messages"][0]["offset"], 1);
    assert_eq!(again["messages"][0]["deliveries"], 2);
    // Nothing new: a fetch that waits returns empty when its wait is over.
    let waited = http
        .post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "c1", "wait_ms": 50}),
        )
        .await
        .json();
    assert_eq!(waited["messages"], json!([]));

    let described = http.get(&group).await;
    assert_eq!(described.status, 200);
    let body = described.json();
    assert_eq!(body["group"], "billing");
    assert_eq!(body["acked"], 1);
    assert_eq!(body["member_count"], 2);

    let stranger = http
        .post_json(
            &format!("{group}/ack"),
            json!({"consumer": "nobody", "offsets": [1]}),
        )
        .await;
    assert_eq!(
        (stranger.status, stranger.error_code().as_str()),
        (404, "consumer_not_found")
    );
    let no_group = http
        .get(&format!("/v1/streams/acme/{tag}/orders/groups/none"))
        .await;
    assert_eq!(
        (no_group.status, no_group.error_code().as_str()),
        (404, "group_not_found")
    );
    let bad_offsets = http
        .post_json(
            &format!("{group}/ack"),
            json!({"consumer": "c1", "offsets": "1"}),
        )
        .await;
    assert_eq!(bad_offsets.status, 400);
    let live = http
        .post_json(
            &format!("/v1/streams/acme/{tag}/ticks/groups/g/fetch"),
            json!({}),
        )
        .await;
    assert_eq!(
        (live.status, live.error_code().as_str()),
        (409, "not_durable")
    );
    let wrong = http.get(&format!("{group}/fetch")).await;
    assert_eq!((wrong.status, wrong.header("allow")), (405, Some("POST")));
}

async fn cache(http: &mut Http, tag: &str) {
    let key = format!("/v1/cache/0/{tag}%2Fkey%FF");
    let put = http
        .send(
            "PUT",
            &format!("{key}?ttl_ms=60000"),
            &[],
            Bytes::from_static(b"\x00value"),
        )
        .await;
    assert_eq!(put.status, 200, "{:?}", put.body);
    let got = http.get(&key).await;
    assert_eq!(got.status, 200);
    assert_eq!(&got.body[..], b"\x00value");
    assert_eq!(got.header("content-type"), Some("application/octet-stream"));
    let ttl: u64 = got.header("quiver-ttl-ms").unwrap().parse().unwrap();
    assert!((1..=60_000).contains(&ttl), "{ttl}");
    http.send("PUT", &key, &[], "forever").await;
    let got = http.get(&key).await;
    assert_eq!(
        (&got.body[..], got.header("quiver-ttl-ms")),
        (&b"forever"[..], None)
    );
    let deleted = http.send("DELETE", &key, &[], "").await;
    assert_eq!(
        (deleted.status, deleted.json()["deleted"].as_u64()),
        (200, Some(1))
    );
    let missing = http.get(&key).await;
    assert_eq!(
        (missing.status, missing.error_code().as_str()),
        (404, "key_not_found")
    );
    let bad_db = http.get("/v1/cache/99/k").await;
    assert_eq!(
        (bad_db.status, bad_db.error_code().as_str()),
        (400, "invalid_db")
    );
    for (ttl, value) in [
        ("0", "0"),
        ("-1", "-1"),
        ("abc", "abc"),
        ("99999999999999999999", "99999999999999999999"),
    ] {
        let path = format!("/v1/cache/0/k?ttl_ms={ttl}");
        let refused = http.send("PUT", &path, &[], "v").await;
        assert_eq!(
            (refused.status, refused.error_code().as_str()),
            (400, "invalid_ttl"),
            "{ttl}"
        );
        assert_eq!(refused.json()["value"], value);
    }
    for path in ["/v1/cache/0/k?x=1", "/v1/streams/acme/a/b?x=1"] {
        let refused = http.get(path).await;
        assert_eq!(
            (refused.status, refused.error_code().as_str()),
            (400, "invalid_query"),
            "{path}"
        );
    }
    let limit = http.get("/v1/streams?limit=abc").await;
    assert_eq!(
        (limit.status, limit.error_code().as_str()),
        (400, "invalid_limit")
    );
    let typo = http.send("PUT", "/v1/cache/0/k?ttl=5000", &[], "v").await;
    assert_eq!(
        (typo.status, typo.error_code().as_str()),
        (400, "invalid_query")
    );
    // An expiry past 63 bits of milliseconds is refused (as SET … PX is), never stored.
    for ttl in ["9223372036854775807", "18446744073709551615"] {
        let path = format!("/v1/cache/0/far?ttl_ms={ttl}");
        let refused = http.send("PUT", &path, &[], "v").await;
        assert_eq!(
            (refused.status, refused.error_code().as_str()),
            (400, "invalid_ttl")
        );
        assert_eq!(refused.json()["value"], ttl);
    }
    assert_eq!(http.get("/v1/cache/0/far").await.status, 404);
}

async fn errors(http: &mut Http) {
    let unknown = http.get("/v2/anything").await;
    assert_eq!(
        (unknown.status, unknown.error_code().as_str()),
        (404, "no_route")
    );
    let bad_name = http.get("/v1/streams/Acme!/x/y").await;
    assert_eq!(
        (bad_name.status, bad_name.error_code().as_str()),
        (400, "invalid_stream_name")
    );
    assert_eq!(bad_name.json()["value"], "Acme!/x/y");
    let method = http.send("PATCH", "/v1/streams/acme/a/b", &[], "").await;
    assert_eq!(
        (method.status, method.error_code().as_str()),
        (405, "method_not_allowed")
    );
    assert_eq!(method.header("allow"), Some("GET, HEAD, PUT, DELETE"));
    // A 405 of a fixed route is JSON too, with its Allow header.
    let posted = http.send("POST", "/health", &[], "").await;
    assert_eq!(
        (posted.status, posted.error_code().as_str()),
        (405, "method_not_allowed")
    );
    assert!(posted.header("allow").is_some_and(|a| a.contains("GET")));
    let openapi = http.get("/v1/openapi.json").await;
    assert_eq!(openapi.status, 200);
    assert_eq!(openapi.json()["openapi"], "3.1.0");
    let metrics = http.get("/api/metrics").await.json();
    assert!(metrics["admission"]["admitted"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn body_limits_and_timeouts() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let server = start(
        &dir,
        &[
            "--http-max-body",
            "1KiB",
            "--http-header-timeout",
            "300ms",
            "--http-body-timeout",
            "300ms",
        ],
    );
    let mut http = Http::connect(server.http, Version::H1).await;
    let big = http
        .send(
            "POST",
            "/v1/streams/acme/x/y/messages",
            &[],
            vec![b'x'; 2048],
        )
        .await;
    assert_eq!(
        (big.status, big.error_code().as_str()),
        (413, "body_too_large")
    );

    // Slow headers (slowloris): the connection is closed.
    let addr = server.http;
    tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n").unwrap();
        let started = Instant::now();
        let mut buf = [0u8; 256];
        let read = stream.read(&mut buf);
        assert!(
            matches!(read, Ok(0)) || matches!(read, Ok(n) if buf[..n].starts_with(b"HTTP/1.1 408")) || read.is_err(),
            "{read:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));

        // A slow body: 408 with a JSON error.
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"POST /v1/streams/acme/x/y/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b")
            .unwrap();
        let mut reply = String::new();
        let _ = stream.read_to_string(&mut reply);
        assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
        assert!(reply.contains("\"error\":\"body_timeout\""), "{reply}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_configured_token_guards_the_data_routes() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir, &["--native-auth-token", "s3cret"]);
    let mut http = Http::connect(server.http, Version::H2).await;
    let missing = http.get("/v1/streams").await;
    assert_eq!(
        (missing.status, missing.error_code().as_str()),
        (401, "unauthorized")
    );
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    // Another scheme: named, its credential never echoed.
    let basic = http
        .send(
            "GET",
            "/v1/streams",
            &[("authorization", "Basic czNjcmV0")],
            "",
        )
        .await;
    assert_eq!(
        (basic.status, basic.json()["value"].as_str()),
        (401, Some("Basic"))
    );
    let bare = http
        .send("GET", "/v1/streams", &[("authorization", "s3cret")], "")
        .await;
    assert_eq!(bare.json()["value"], "(no scheme)");
    let wrong = http
        .send(
            "GET",
            "/v1/streams",
            &[("authorization", "Bearer nope")],
            "",
        )
        .await;
    assert_eq!(
        (wrong.status, wrong.error_code().as_str()),
        (403, "invalid_token")
    );
    let right = http
        .send(
            "GET",
            "/v1/streams",
            &[("authorization", "BEARER s3cret")],
            "",
        )
        .await;
    assert_eq!(right.status, 200, "the scheme's case does not matter");
    assert_eq!(
        http.get("/health").await.status,
        200,
        "operations routes stay open"
    );
}

/// A fetch waiting for work when the server stops is answered at once (with nothing),
/// not cut at the drain's deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_fetch_is_answered_when_the_drain_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(&dir, &["--shutdown-drain-timeout", "20s"]);
    let group = "/v1/streams/acme/durable/idle/groups/workers";
    let mut http = Http::connect(server.http, Version::H1).await;
    let created = http.post_json(&format!("{group}/fetch"), json!({})).await;
    assert_eq!(created.status, 200, "{:?}", created.body);
    let addr = server.http;
    let waiting = tokio::spawn(async move {
        let mut http = Http::connect(addr, Version::H1).await;
        http.post_json(&format!("{group}/fetch"), json!({"wait_ms": 60000}))
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    server.signal("TERM");
    let answered = tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
        .await
        .expect("answered before the drain's deadline")
        .unwrap();
    assert_eq!(answered.status, 200);
    assert_eq!(answered.json()["messages"], json!([]));
    let exited =
        tokio::task::spawn_blocking(move || server.wait_exit(std::time::Duration::from_secs(10)));
    assert!(exited.await.unwrap().is_some_and(|s| s.success()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_whose_client_hangs_up_leases_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir, &[]);
    let group = "/v1/streams/acme/durable/jobs/groups/workers";
    let mut http = Http::connect(server.http, Version::H1).await;
    // The group exists, empty; a consumer waits for work, then its client goes away.
    let first = http
        .post_json(&format!("{group}/fetch"), json!({"consumer": "gone"}))
        .await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    let addr = server.http;
    let waiting = tokio::spawn(async move {
        let mut http = Http::connect(addr, Version::H1).await;
        http.post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "gone", "wait_ms": 30000}),
        )
        .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    waiting.abort();
    let _ = waiting.await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    // Work arrives: the consumer that hung up is not leased any of it.
    for i in 0..3 {
        let published = http
            .send(
                "POST",
                "/v1/streams/acme/durable/jobs/messages?ack=committed",
                &[],
                format!("job{i}"),
            )
            .await;
        assert_eq!(published.status, 200);
    }
    let taken = http
        .post_json(
            &format!("{group}/fetch"),
            json!({"consumer": "worker", "max": 10, "wait_ms": 2000}),
        )
        .await
        .json();
    let offsets: Vec<u64> = taken["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [0, 1, 2], "{taken}");
    let described = http.get(group).await.json();
    let gone = described["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "gone")
        .cloned()
        .expect("the consumer is still a member");
    assert_eq!(gone["pending"], 0, "{described}");
}

#[tokio::test]
async fn quiver_status_prints_the_figures() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir, &[]);
    let mut http = Http::connect(server.http, Version::H1).await;
    http.send("POST", "/v1/streams/acme/durable/seen/messages", &[], "x")
        .await;
    let status = |json: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"));
        command
            .args(["status", "--http", &server.http.to_string()])
            .env_remove("RUST_LOG");
        if json {
            command.arg("--json");
        }
        command.output().expect("run quiver status")
    };
    let readable = status(false);
    assert!(readable.status.success(), "{readable:?}");
    let text = String::from_utf8(readable.stdout).unwrap();
    assert!(text.contains("admission: 0.0 %"), "{text}");
    assert!(text.contains("acme/durable/seen  durable"), "{text}");
    let json = status(true);
    let figures: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(figures["listeners"].as_array().unwrap().len(), 4);
    let unreachable = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["status", "--http", "127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(unreachable.status.code(), Some(3));
}
