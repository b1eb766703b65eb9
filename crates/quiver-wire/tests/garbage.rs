//! Hostile input: random bytes and corrupted frames never panic and never loop.

use bytes::BytesMut;
use proptest::collection::vec;
use proptest::prelude::*;
use quiver_wire::*;

use crate::strategies;

/// Decodes until the buffer is exhausted or broken; returns the number of steps taken.
fn drain(mut buf: BytesMut) -> usize {
    let limit = buf.len() / limits::HEADER_LEN + 1;
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps <= limit + 1, "decoding made no progress");
        match decode_next(&mut buf) {
            Ok(Some(_)) => {}
            Ok(None) | Err(WireError::Header(_)) => return steps,
            Err(error) => {
                // Every payload error maps to a code and a request id; the frame was consumed.
                let _ = (
                    error.code(),
                    error.request_id(),
                    error.closes_connection(),
                    error.to_string(),
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..512)) {
        drain(BytesMut::from(&bytes[..]));
    }

    #[test]
    fn random_payloads_behind_valid_headers_never_panic(
        type_index in any::<prop::sample::Index>(),
        flags in any::<u16>(),
        payload in vec(any::<u8>(), 0..256),
    ) {
        let header = FrameHeader {
            version: VERSION,
            frame_type: FrameType::ALL[type_index.index(FrameType::ALL.len())],
            flags,
            request_id: 9,
            payload_len: payload.len() as u32,
        };
        let mut buf = BytesMut::from(&header.to_bytes()[..]);
        buf.extend_from_slice(&payload);
        drain(buf);
    }

    #[test]
    fn corrupted_frames_never_panic(
        frame in strategies::frame(),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut buf = BytesMut::new();
        frame.encode(1, &mut buf).expect("encode");
        for (index, xor) in flips {
            let i = index.index(buf.len());
            buf[i] ^= xor;
        }
        drain(buf);
    }
}

#[test]
fn unknown_optional_flags_are_ignored() {
    let mut buf = BytesMut::new();
    encode(3, &Ping, &mut buf).expect("encode");
    buf[4] = 0x80;
    let envelope = decode_next(&mut buf)
        .expect("optional bits are ignored")
        .expect("whole frame");
    assert_eq!(envelope.frame, Frame::Ping(Ping));
}

#[test]
fn payload_errors_leave_the_next_frame_decodable() {
    let mut buf = BytesMut::new();
    encode(1, &Ping, &mut buf).expect("encode");
    buf[5] = 0x01; // required flag bit 8: UNSUPPORTED_FLAGS, does not close
    encode(2, &Pong, &mut buf).expect("encode");
    let error = decode_next(&mut buf).expect_err("unknown required flag");
    assert_eq!(error.code(), ErrorCode::UNSUPPORTED_FLAGS);
    assert_eq!(error.request_id(), 1);
    assert!(!error.closes_connection());
    assert_eq!(error.to_error_frame().code, ErrorCode::UNSUPPORTED_FLAGS);
    let next = decode_next(&mut buf)
        .expect("next frame is intact")
        .expect("whole frame");
    assert_eq!((next.request_id, next.frame), (2, Frame::Pong(Pong)));
}

#[test]
fn encode_refuses_what_the_peer_would_reject() {
    let stream = StreamName::new("acme/orders/created").expect("valid");
    let mut buf = BytesMut::from(&b"keep"[..]);
    let too_big = Publish {
        stream: stream.clone(),
        ack: AckMode::None,
        headers: Headers::new(),
        payload: vec![0; limits::MAX_MESSAGE_LEN + 1].into(),
    };
    assert!(matches!(
        encode(1, &too_big, &mut buf),
        Err(EncodeError::LimitExceeded {
            field: "payload",
            ..
        })
    ));
    let empty = PublishBatch {
        stream,
        ack: AckMode::None,
        messages: Vec::new(),
    };
    assert_eq!(
        encode(1, &empty, &mut buf),
        Err(EncodeError::Empty { field: "messages" })
    );
    assert_eq!(
        &buf[..],
        b"keep",
        "a failed encode leaves the buffer as it was"
    );
}

#[test]
fn an_interval_out_of_range_is_refused_without_closing() {
    let settings = |interval_ms| StreamSettings {
        storage: Storage::Interval { interval_ms },
        max_age_ms: 0,
        max_bytes: 0,
        max_messages: 0,
        keep_unacked: false,
        dedupe_window_ms: 0,
        policy: Policy::Default,
    };
    let create = |interval_ms| CreateStream {
        stream: StreamName::new("acme/orders/created").expect("valid"),
        settings: settings(interval_ms),
    };
    let mut buf = BytesMut::new();
    for interval_ms in [0, 60_001] {
        assert!(matches!(
            encode(1, &create(interval_ms), &mut buf),
            Err(EncodeError::Invalid {
                field: "interval ms",
                ..
            })
        ));
    }
    // A peer that sends one anyway: the frame is answered, the next one read.
    encode(1, &create(1), &mut buf).expect("in range");
    let at = buf
        .windows(5)
        .position(|w| w == [3, 1, 0, 0, 0])
        .expect("interval");
    buf[at + 1] = 0;
    encode(2, &Pong, &mut buf).expect("pong");
    let error = decode_next(&mut buf).expect_err("out of range");
    assert_eq!(error.code(), ErrorCode::INVALID_ARGUMENT);
    assert!(!error.closes_connection());
    assert!(error.to_string().contains("interval ms"), "{error}");
    let next = decode_next(&mut buf).expect("intact").expect("whole");
    assert_eq!((next.request_id, next.frame), (2, Frame::Pong(Pong)));
}

#[test]
fn the_largest_hello_fits_the_hello_limit() {
    let hello = Hello {
        min_version: 1,
        max_version: 1,
        capabilities: Capabilities(u64::MAX),
        client_name: "n".repeat(limits::MAX_CLIENT_NAME_LEN),
        auth_token: vec![7; limits::MAX_AUTH_TOKEN_LEN].into(),
    };
    let mut buf = BytesMut::new();
    encode(1, &hello, &mut buf).expect("largest hello");
    assert_eq!(buf.len(), limits::HEADER_LEN + limits::MAX_HELLO_LEN);
    let mut short = buf.clone();
    let error = decode_next_with_limit(&mut short, limits::MAX_HELLO_LEN - 1).expect_err("over");
    assert_eq!(error.code(), ErrorCode::FRAME_TOO_LARGE);
    let decoded = decode_next_with_limit(&mut buf, limits::MAX_HELLO_LEN)
        .expect("fits")
        .expect("whole");
    assert_eq!(decoded.frame, Frame::Hello(hello));
}
