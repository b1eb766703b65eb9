//! Admission control under a burst larger than capacity, readiness under load, and
//! per-client rate limits.

use serde_json::json;

use super::{Http, Version};
use crate::support::{Server, http_get};

/// A request that holds its admission place for `wait_ms`: a fetch on a group with nothing
/// to deliver, which waits that long for a first message.
async fn slow_fetch(addr: std::net::SocketAddr, consumer: usize, wait_ms: u64) -> super::Reply {
    let mut http = Http::connect(addr, Version::H1).await;
    http.post_json(
        "/v1/streams/acme/adm/jobs/groups/g/fetch",
        json!({"consumer": format!("c{consumer}"), "wait_ms": wait_ms}),
    )
    .await
}

/// A server whose `acme/` streams are durable, with `limits` added.
fn start(dir: &std::path::Path, limits: &[&str]) -> Server {
    let mut args = vec!["--cache-save", "", "--streams-durable", "acme/>"];
    args.extend_from_slice(limits);
    Server::start(dir, &args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_max_ccu_gets_exactly_the_excess_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        &[
            "--http-max-ccu",
            "4",
            "--http-utilization",
            "50",
            "--http-queue-timeout",
            "30s",
            "--http-ready-utilization",
            "75",
        ],
    );
    // The group exists before the burst (joining creates it once).
    let warm = slow_fetch(server.http, 0, 0).await;
    assert_eq!(warm.status, 200, "{:?}", warm.body);

    const BURST: usize = 24;
    let tasks: Vec<_> = (1..=BURST)
        .map(|i| tokio::spawn(slow_fetch(server.http, i, 2000)))
        .collect();
    // While the burst is inside: /ready says the gateway is saturated.
    let mut saw_saturated = false;
    for _ in 0..100 {
        let (status, body) = http_get(server.http, "/ready");
        if status == 503 && body.contains("\"saturated\":true") {
            saw_saturated = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let mut admitted = 0;
    let mut refused = 0;
    for task in tasks {
        let reply = task.await.unwrap();
        match reply.status {
            200 => admitted += 1,
            503 => {
                refused += 1;
                assert_eq!(reply.error_code(), "overloaded");
                assert_eq!(reply.header("retry-after"), Some("30"));
            }
            other => panic!("unexpected status {other}: {:?}", reply.body),
        }
    }
    assert_eq!((admitted, refused), (4, BURST - 4));
    assert!(
        saw_saturated,
        "/ready turned 503 while 4 of 4 places were taken"
    );
    let figures = Http::connect(server.http, Version::H1)
        .await
        .get("/api/metrics")
        .await
        .json();
    assert_eq!(figures["admission"]["refused_full"], (BURST - 4) as u64);
    assert_eq!(figures["admission"]["ccu"], 0, "every place was given back");
    let (_, metrics) = http_get(server.http, "/metrics");
    assert!(
        metrics.contains(&format!("quiver_http_refused_full_total {}", BURST - 4)),
        "{metrics}"
    );
    assert!(
        metrics.contains("quiver_http_requests_total{route=\"group_fetch\",status=\"503\"}"),
        "{metrics}"
    );
    assert_eq!(http_get(server.http, "/ready").0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_on_one_connection_are_paced_and_admitted_requests_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        &[
            "--http-max-ccu",
            "1",
            "--http-utilization",
            "100",
            "--http-queue-timeout",
            "0s",
            "--http-refusal-pause",
            "2s",
        ],
    );
    assert_eq!(slow_fetch(server.http, 0, 0).await.status, 200);
    // The only place, held for 3 s: until after the second pause below has begun.
    let holder = tokio::spawn(slow_fetch(server.http, 1, 3000));
    for _ in 0..200 {
        let (_, body) = http_get(server.http, "/api/metrics");
        if body.contains("\"ccu\":1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let fetch = json!({"consumer": "c2", "wait_ms": 0});
    let path = "/v1/streams/acme/adm/jobs/groups/g/fetch";
    let mut http = Http::connect(server.http, Version::H1).await;
    let timed = async |http: &mut Http| {
        let started = std::time::Instant::now();
        let reply = http.post_json(path, fetch.clone()).await;
        assert_eq!(
            (reply.status, reply.error_code().as_str()),
            (503, "overloaded")
        );
        assert_eq!(reply.header("retry-after"), Some("1"));
        started.elapsed()
    };
    let pause = std::time::Duration::from_millis(1500);
    assert!(
        timed(&mut http).await < pause,
        "the first refusal is sent at once"
    );
    assert!(
        timed(&mut http).await >= pause,
        "a retry during the pause is answered when it ends"
    );
    assert!(
        timed(&mut http).await < pause,
        "the next one opens a new pause"
    );
    // Another connection has a pace of its own.
    let mut other = Http::connect(server.http, Version::H1).await;
    assert!(timed(&mut other).await < pause);
    assert_eq!(holder.await.unwrap().status, 200);
    // With the place free, and while its pause lasts, the paced connection is served at
    // once: only refusals wait.
    let started = std::time::Instant::now();
    assert_eq!(http.post_json(path, fetch.clone()).await.status, 200);
    assert!(started.elapsed() < pause);
}

#[tokio::test]
async fn a_client_over_its_rate_gets_429() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "--cache-save",
            "",
            "--http-rate-limit",
            "1",
            "--http-rate-burst",
            "3",
        ],
    );
    let mut http = Http::connect(server.http, Version::H2).await;
    for remaining in ["2", "1", "0"] {
        let reply = http.get("/v1/streams").await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("ratelimit-limit"), Some("3"));
        assert_eq!(reply.header("ratelimit-remaining"), Some(remaining));
    }
    let refused = http.get("/v1/streams").await;
    assert_eq!(
        (refused.status, refused.error_code().as_str()),
        (429, "rate_limited")
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    // A token of its own does not make a client another one.
    let other = http
        .send(
            "GET",
            "/v1/streams",
            &[("authorization", "Bearer other")],
            "",
        )
        .await;
    assert_eq!(other.status, 429);
    // A second later the bucket has a token again.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(http.get("/v1/streams").await.status, 200);
    assert_eq!(
        http.get("/health").await.status,
        200,
        "operations routes are not limited"
    );
}
