//! Bad frames over raw sockets: an Error frame, then a closed connection; never a panic,
//! and other connections keep working.

use bytes::{BufMut, Bytes, BytesMut};
use quiver_core::streams::BrokerConfig;
use quiver_server::native::NativeSettings;
use quiver_wire::{Capabilities, Envelope, ErrorCode, Frame, Hello, limits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{NativeServer, Transport, WAIT};

fn hello(token: &'static [u8]) -> BytesMut {
    let hello = Hello {
        min_version: 1,
        max_version: 1,
        capabilities: Capabilities::ALL_V1,
        client_name: "raw".to_owned(),
        auth_token: Bytes::from_static(token),
    };
    let mut buf = BytesMut::new();
    quiver_wire::encode(1, &hello, &mut buf).expect("hello encodes");
    buf
}

fn header(frame_type: u8, request_id: u32, len: u32) -> BytesMut {
    let mut buf = BytesMut::new();
    buf.put_slice(b"QV");
    buf.put_u8(1);
    buf.put_u8(frame_type);
    buf.put_u16_le(0);
    buf.put_u16_le(0);
    buf.put_u32_le(request_id);
    buf.put_u32_le(len);
    buf
}

/// Sends `bytes`, reads until the server closes; the frames it sent.
async fn exchange(server: &NativeServer, bytes: &[u8]) -> Vec<Envelope> {
    let mut raw = server.raw().await;
    raw.writer.write_all(bytes).await.expect("send");
    raw.writer.flush().await.expect("flush");
    let mut received = BytesMut::new();
    loop {
        let read = tokio::time::timeout(WAIT, raw.reader.read_buf(&mut received))
            .await
            .expect("the server closes the connection");
        if read.expect("read") == 0 {
            break;
        }
    }
    let mut frames = Vec::new();
    while let Some(envelope) =
        quiver_wire::decode_next(&mut received).expect("server frames are valid")
    {
        frames.push(envelope);
    }
    assert!(received.is_empty(), "no partial frame from the server");
    frames
}

/// Reads until `frames` holds at least `count` frames.
async fn read_frames(
    raw: &mut super::Raw,
    received: &mut BytesMut,
    frames: &mut Vec<Envelope>,
    count: usize,
) {
    while frames.len() < count {
        tokio::time::timeout(WAIT, raw.reader.read_buf(received))
            .await
            .expect("replies")
            .expect("read");
        while let Some(envelope) = quiver_wire::decode_next(received).expect("valid") {
            frames.push(envelope);
        }
    }
}

fn last_error(frames: &[Envelope]) -> (u32, ErrorCode) {
    match frames.last() {
        Some(Envelope {
            request_id,
            frame: Frame::Error(error),
        }) => (*request_id, error.code),
        other => panic!("expected an Error frame last, got {other:?}"),
    }
}

async fn bad_frames_get_an_error_then_close_and_other_connections_carry_on(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let bystander = server.client().await;
    let mut watching = bystander
        .subscribe("acme/b/s", quiver_client::SubscribeOptions::default())
        .await
        .expect("subscribe");

    let mut wrong_magic = hello(b"");
    wrong_magic.put_slice(b"XV\x01\x03\0\0\0\0\x02\0\0\0\0\0\0\0");
    let mut oversize = hello(b"");
    oversize.put_slice(&header(0x03, 2, u32::MAX));
    let mut unknown_type = hello(b"");
    unknown_type.put_slice(&header(0x7f, 2, 0));
    // A Publish whose payload says the stream name is 200 bytes long but holds 3.
    let mut truncated = hello(b"");
    truncated.put_slice(&header(0x10, 9, 4));
    truncated.put_slice(&[200, b'a', b'b', b'c']);
    let no_hello = header(0x03, 5, 0);
    // Told from the header: the megabyte it announces is never waited for.
    let no_hello_large = header(0x10, 6, 1 << 20);
    let hello_too_long = header(0x01, 7, limits::MAX_HELLO_LEN as u32 + 1);
    let cases: [(&str, BytesMut, (u32, ErrorCode)); 7] = [
        ("wrong magic", wrong_magic, (0, ErrorCode::BAD_MAGIC)),
        ("oversize length", oversize, (0, ErrorCode::FRAME_TOO_LARGE)),
        (
            "unknown type",
            unknown_type,
            (0, ErrorCode::UNKNOWN_FRAME_TYPE),
        ),
        (
            "truncated payload",
            truncated,
            (9, ErrorCode::MALFORMED_FRAME),
        ),
        ("no hello", no_hello, (5, ErrorCode::HELLO_REQUIRED)),
        (
            "a large first frame that is not a Hello",
            no_hello_large,
            (6, ErrorCode::HELLO_REQUIRED),
        ),
        (
            "a Hello longer than any Hello",
            hello_too_long,
            (0, ErrorCode::FRAME_TOO_LARGE),
        ),
    ];
    for (name, bytes, expected) in cases {
        let frames = exchange(&server, &bytes).await;
        assert_eq!(last_error(&frames), expected, "{name}");
        // The other connection still publishes, subscribes and receives.
        bystander.publish("acme/b/s", name).await.expect("publish");
        assert_eq!(super::payloads(&mut watching, 1).await, [name]);
    }
}

async fn a_request_error_leaves_the_connection_open(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let mut raw = server.raw().await;
    let mut bytes = hello(b"");
    // Unsubscribe of an unknown id (NOT_FOUND, request-level), then a Ping.
    bytes.put_slice(&header(0x15, 3, 4));
    bytes.put_u32_le(77);
    bytes.put_slice(&header(0x03, 4, 0));
    raw.writer.write_all(&bytes).await.expect("send");
    raw.writer.flush().await.expect("flush");
    let mut received = BytesMut::new();
    let mut frames = Vec::new();
    read_frames(&mut raw, &mut received, &mut frames, 3).await;
    assert!(matches!(frames[0].frame, Frame::HelloOk(_)));
    assert_eq!(last_error(&frames[..2]), (3, ErrorCode::NOT_FOUND));
    assert!(matches!(
        frames[2],
        Envelope {
            request_id: 4,
            frame: Frame::Pong(_)
        }
    ));
}

async fn a_wrong_auth_token_is_refused_and_closed(transport: Transport) {
    let settings = NativeSettings {
        auth_token: Some(Bytes::from_static(b"sesame")),
    };
    let server = NativeServer::over_with(transport, BrokerConfig::default(), settings).await;
    let frames = exchange(&server, &hello(b"wrong")).await;
    assert_eq!(last_error(&frames), (1, ErrorCode::AUTH_FAILED));
    let options = server.options().auth_token("sesame");
    let client = quiver_client::Client::connect_with(&server.url(), options)
        .await
        .expect("the right token is accepted");
    client.ping().await.expect("ping");
    let refused = quiver_client::Client::connect_with(&server.url(), server.options())
        .await
        .expect_err("no token");
    assert!(refused.to_string().contains("AUTH_FAILED"), "{refused}");
}

/// A Hello, a publish to `stream` with `ack` (request id 20) and a Goodbye (21) in one
/// write: the publish's ack comes before the Goodbye, after which nothing is sent.
async fn publish_then_goodbye(server: &NativeServer, stream: &str, ack: quiver_wire::AckMode) {
    let mut bytes = hello(b"");
    let publish = quiver_wire::Publish {
        stream: quiver_wire::StreamName::new(stream).expect("name"),
        ack,
        headers: quiver_wire::Headers::new(),
        payload: Bytes::from_static(b"last"),
    };
    quiver_wire::encode(20, &publish, &mut bytes).expect("publish encodes");
    let goodbye = quiver_wire::Goodbye {
        code: ErrorCode::NORMAL_CLOSE,
        message: "bye".to_owned(),
    };
    quiver_wire::encode(21, &goodbye, &mut bytes).expect("goodbye encodes");
    let frames = exchange(server, &bytes).await;
    let ids: Vec<u32> = frames.iter().map(|f| f.request_id).collect();
    assert_eq!(ids, [1, 20, 21], "{frames:?}");
    assert!(matches!(frames[1].frame, Frame::PublishAck(_)));
    assert!(matches!(frames[2].frame, Frame::Goodbye(_)));
}

async fn replies_come_before_the_goodbye(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    publish_then_goodbye(&server, "acme/g/s", quiver_wire::AckMode::Accepted).await;
}

/// The same with a `committed` publish to a `sync` stream: its ack comes first, also when
/// it still waits for its fsync.
async fn a_pending_commit_is_acknowledged_before_the_goodbye(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = NativeServer::durable(transport, dir.path()).await;
    let options = quiver_client::StreamOptions::durable(quiver_client::Storage::Sync);
    let client = server.client().await;
    client
        .create_stream("acme/c/s", options)
        .await
        .expect("create");
    publish_then_goodbye(&server, "acme/c/s", quiver_wire::AckMode::Committed).await;
}

/// At shutdown a subscription delivers what it was sent and ends with SubscriptionEnded
/// (`SHUTTING_DOWN`) before the connection's Goodbye (over TCP, where both come on the
/// one byte stream).
#[tokio::test]
async fn shutdown_ends_subscriptions_before_the_goodbye() {
    let server = NativeServer::over(Transport::Tcp, BrokerConfig::default()).await;
    let subscribe = quiver_wire::Subscribe {
        pattern: quiver_wire::StreamPattern::new("acme/d/s").expect("pattern"),
        start: quiver_wire::StartPosition::Latest,
        group: None,
        queue_capacity: 0,
        max_batch_events: 0,
        resume: Vec::new(),
    };
    let mut bytes = hello(b"");
    quiver_wire::encode(2, &subscribe, &mut bytes).expect("subscribe encodes");
    ended_before_goodbye(&server, &bytes, 1).await;
}

/// The same for consumer-group memberships, of one stream and of a pattern.
#[tokio::test]
async fn shutdown_ends_group_memberships_before_the_goodbye() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = NativeServer::durable(Transport::Tcp, dir.path()).await;
    let options = quiver_client::StreamOptions::durable(quiver_client::Storage::Os);
    let client = server.client().await;
    client
        .create_stream("acme/d/s", options)
        .await
        .expect("create");
    let mut bytes = hello(b"");
    for (id, pattern) in [(2, "acme/d/s"), (3, "acme/d/*")] {
        let join = quiver_wire::JoinGroup {
            pattern: quiver_wire::StreamPattern::new(pattern).expect("pattern"),
            group: "workers".to_owned(),
            member: String::new(),
            max_in_flight: 0,
            start: quiver_wire::StartPosition::Earliest,
            settings: None,
            limit: 0,
        };
        quiver_wire::encode(id, &join, &mut bytes).expect("join encodes");
    }
    ended_before_goodbye(&server, &bytes, 2).await;
}

/// Sends `bytes` (a Hello and `subscriptions` subscribing requests), stops the server
/// once each is confirmed, and checks that each subscription ends (`SHUTTING_DOWN`)
/// before the Goodbye, which comes last.
async fn ended_before_goodbye(server: &NativeServer, bytes: &[u8], subscriptions: usize) {
    let mut raw = server.raw().await;
    raw.writer.write_all(bytes).await.expect("send");
    raw.writer.flush().await.expect("flush");
    let mut received = BytesMut::new();
    let mut frames = Vec::new();
    read_frames(&mut raw, &mut received, &mut frames, 1 + subscriptions).await;
    assert!(
        frames[1..]
            .iter()
            .all(|f| matches!(f.frame, Frame::Subscribed(_))),
        "{frames:?}"
    );
    server.stop();
    loop {
        let read = tokio::time::timeout(WAIT, raw.reader.read_buf(&mut received))
            .await
            .expect("the server closes the connection");
        if read.expect("read") == 0 {
            break;
        }
    }
    while let Some(envelope) = quiver_wire::decode_next(&mut received).expect("valid") {
        frames.push(envelope);
    }
    let ended: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            matches!(&f.frame, Frame::SubscriptionEnded(ended) if ended.code == ErrorCode::SHUTTING_DOWN)
        })
        .map(|(at, _)| at)
        .collect();
    let goodbye = frames
        .iter()
        .position(|f| matches!(f.frame, Frame::Goodbye(_)));
    assert!(
        ended.len() == subscriptions
            && goodbye == Some(frames.len() - 1)
            && ended.iter().all(|at| Some(*at) < goodbye),
        "{frames:?}"
    );
}

super::over_both!(
    a_pending_commit_is_acknowledged_before_the_goodbye,
    replies_come_before_the_goodbye,
    bad_frames_get_an_error_then_close_and_other_connections_carry_on,
    a_request_error_leaves_the_connection_open,
    a_wrong_auth_token_is_refused_and_closed,
);
