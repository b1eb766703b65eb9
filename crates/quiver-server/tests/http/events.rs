//! Server-Sent Events: delivery, resume with `Last-Event-ID` across a restart, resync
//! when the resume point is gone, and the end of the stream at shutdown.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::{Http, Version};
use crate::support::Server;

/// One parsed event: (id, event type, data).
type Event = (Option<String>, String, String);

/// Reads a body's event stream.
struct Events {
    body: Incoming,
    text: String,
}

impl Events {
    fn new(response: hyper::Response<Incoming>) -> Events {
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Events {
            body: response.into_body(),
            text: String::new(),
        }
    }

    /// The next event (comments and `retry:` skipped); `None` when the body ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, "message".to_owned(), Vec::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push(v.to_owned());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((id, event, data.join("\n")));
            }
            let frame = tokio::time::timeout(Duration::from_secs(20), self.body.frame())
                .await
                .expect("an event within 20 s")?
                .expect("body frame");
            if let Ok(data) = frame.into_data() {
                self.text
                    .push_str(std::str::from_utf8(&data).expect("UTF-8"));
            }
        }
    }

    async fn take(&mut self, n: usize) -> Vec<Event> {
        let mut out = Vec::new();
        while out.len() < n {
            out.push(self.next().await.expect("the stream goes on"));
        }
        out
    }
}

async fn publish(http: &mut Http, stream: &str, payload: &str) {
    let reply = http
        .send(
            "POST",
            &format!("/v1/streams/{stream}/messages?ack=committed"),
            &[],
            payload.to_owned(),
        )
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
}

#[tokio::test]
async fn resume_with_last_event_id_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--cache-save", "", "--streams-durable", "acme/>"];
    let server = Server::start(dir.path(), &args);
    let mut http = Http::connect(server.http, Version::H1).await;
    for i in 0..5 {
        publish(&mut http, "acme/sse/orders", &format!("m{i}")).await;
    }
    let mut sse = Http::connect(server.http, Version::H2).await;
    let mut events = Events::new(
        sse.start(
            "GET",
            "/v1/streams/acme/sse/orders/events?from=earliest",
            &[],
            "",
        )
        .await,
    );
    let first = events.take(3).await;
    assert_eq!(
        first,
        (0..3)
            .map(|i| (
                Some(format!("acme/sse/orders@{i}")),
                "message".to_owned(),
                format!("m{i}")
            ))
            .collect::<Vec<_>>()
    );
    // Live messages follow the history with no gap; a multi-line payload is data lines.
    publish(&mut http, "acme/sse/orders", "line one\nline two").await;
    let next = events.take(3).await;
    assert_eq!(next[2].2, "line one\nline two");
    let last_id = next[1].0.clone().unwrap();
    assert_eq!(last_id, "acme/sse/orders@4");
    drop(events);
    drop(sse);
    drop(http);

    // The client saw up to offset 4; the server restarts; more is published.
    drop(server);
    let server = Server::start(dir.path(), &args);
    let mut http = Http::connect(server.http, Version::H1).await;
    publish(&mut http, "acme/sse/orders", "after restart").await;
    let mut sse = Http::connect(server.http, Version::H1).await;
    let mut events = Events::new(
        sse.start(
            "GET",
            "/v1/streams/acme/sse/orders/events",
            &[("last-event-id", &last_id)],
            "",
        )
        .await,
    );
    let resumed = events.take(2).await;
    assert_eq!(resumed[0].0.as_deref(), Some("acme/sse/orders@5"));
    assert_eq!(resumed[0].2, "line one\nline two");
    assert_eq!(resumed[1].0.as_deref(), Some("acme/sse/orders@6"));
    assert_eq!(resumed[1].2, "after restart");

    // Shutdown ends the stream with an end event.
    server.signal("TERM");
    let end = events.next().await.expect("an end event");
    assert_eq!(end.1, "end");
    assert!(end.2.contains("\"reason\":\"shutdown\""), "{}", end.2);
}

#[tokio::test]
async fn a_resume_point_out_of_retention_gets_a_resync_event() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--cache-save", ""]);
    let mut http = Http::connect(server.http, Version::H1).await;
    let created = http
        .send(
            "PUT",
            "/v1/streams/acme/sse/short",
            &[],
            r#"{"durability":"os","max_messages":3}"#,
        )
        .await;
    assert_eq!(created.status, 201);
    for i in 0..10 {
        publish(&mut http, "acme/sse/short", &format!("m{i}")).await;
    }
    let mut sse = Http::connect(server.http, Version::H1).await;
    let mut events = Events::new(
        sse.start(
            "GET",
            "/v1/streams/acme/sse/short/events",
            &[("last-event-id", "acme/sse/short@1")],
            "",
        )
        .await,
    );
    let resync = events.next().await.unwrap();
    assert_eq!(resync.1, "resync");
    assert_eq!(resync.2, r#"{"missed":5}"#);
    let rest = events.take(3).await;
    assert_eq!(rest[0].0.as_deref(), Some("acme/sse/short@7"));

    // A resume point past the end (the stream was made again): a resync, then what
    // comes next.
    let mut ahead_conn = Http::connect(server.http, Version::H1).await;
    let mut ahead = Events::new(
        ahead_conn
            .start(
                "GET",
                "/v1/streams/acme/sse/short/events",
                &[("last-event-id", "acme/sse/short@50")],
                "",
            )
            .await,
    );
    let resync = ahead.next().await.unwrap();
    assert_eq!(resync.1, "resync");
    assert!(resync.2.contains(r#""end":10"#), "{}", resync.2);
    publish(&mut http, "acme/sse/short", "m10").await;
    let next = ahead.next().await.unwrap();
    assert_eq!(next.0.as_deref(), Some("acme/sse/short@10"));

    let bad = http
        .send(
            "GET",
            "/v1/streams/acme/sse/short/events",
            &[("last-event-id", "nonsense")],
            "",
        )
        .await;
    assert_eq!(
        (bad.status, bad.error_code().as_str()),
        (400, "invalid_last_event_id")
    );
}

#[tokio::test]
async fn event_streams_have_their_own_bound() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "--cache-save",
            "",
            "--http-max-event-streams",
            "2",
            "--http-max-ccu",
            "1",
        ],
    );
    let mut a = Http::connect(server.http, Version::H1).await;
    let mut b = Http::connect(server.http, Version::H1).await;
    let _first = Events::new(
        a.start("GET", "/v1/streams/acme/x/%3E/events", &[], "")
            .await,
    );
    let _second = Events::new(
        b.start("GET", "/v1/streams/acme/x/%3E/events", &[], "")
            .await,
    );
    let mut c = Http::connect(server.http, Version::H1).await;
    let third = c.get("/v1/streams/acme/x/%3E/events").await;
    assert_eq!(
        (third.status, third.error_code().as_str()),
        (503, "too_many_event_streams")
    );
    assert_eq!(third.header("retry-after"), Some("1"));
    // Two open event streams do not take the one request place.
    let request = c.get("/v1/streams").await;
    assert_eq!(request.status, 200);
}
