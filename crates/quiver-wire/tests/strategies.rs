//! Proptest strategies for every frame type.

use bytes::{Bytes, BytesMut};
use proptest::collection::vec;
use proptest::prelude::*;
use quiver_wire::*;

pub fn stream_name() -> impl Strategy<Value = StreamName> {
    vec("[A-Za-z0-9_.-]{1,12}", 3..=6)
        .prop_map(|levels| StreamName::new(&levels.join("/")).expect("generated names are valid"))
}

pub fn stream_pattern() -> impl Strategy<Value = StreamPattern> {
    (
        vec("[A-Za-z0-9_.-]{1,12}", 2..=5),
        prop_oneof![Just(""), Just("*"), Just(">")],
    )
        .prop_map(|(mut levels, wildcard)| {
            if wildcard.is_empty() {
                levels.push("last".to_owned());
            } else {
                levels.push(wildcard.to_owned());
            }
            StreamPattern::new(&levels.join("/")).expect("generated patterns are valid")
        })
}

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    vec(any::<u8>(), 0..=max).prop_map(Bytes::from)
}

pub fn headers() -> impl Strategy<Value = Headers> {
    vec(("[a-z-]{1,8}", vec(any::<u8>(), 0..8)), 0..3).prop_map(|pairs| {
        Headers::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_slice())))
            .expect("within limits")
    })
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,20}"
}

fn ack() -> impl Strategy<Value = AckMode> {
    prop_oneof![
        Just(AckMode::None),
        Just(AckMode::Accepted),
        Just(AckMode::Committed)
    ]
}

fn start() -> impl Strategy<Value = StartPosition> {
    prop_oneof![
        Just(StartPosition::Latest),
        Just(StartPosition::Earliest),
        any::<u64>().prop_map(StartPosition::Offset),
        any::<u64>().prop_map(StartPosition::TimestampMs),
    ]
}

fn sub_id() -> impl Strategy<Value = u32> {
    1..=u32::MAX
}

fn message() -> impl Strategy<Value = Message> {
    (headers(), bytes(48)).prop_map(|(headers, payload)| Message { headers, payload })
}

fn event() -> impl Strategy<Value = Event> {
    (any::<u64>(), any::<u64>(), headers(), bytes(48)).prop_map(
        |(sequence, timestamp_ms, headers, payload)| Event {
            sequence,
            timestamp_ms,
            headers,
            payload,
        },
    )
}

pub fn event_batch_body() -> impl Strategy<Value = EventBatchBody> {
    (stream_name(), vec(event(), 1..6)).prop_map(|(stream, events)| {
        EventBatchBody::encode(&stream, &events, &mut BytesMut::new()).expect("within limits")
    })
}

fn connection_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (1..=10u8, 0..=5u8, any::<u64>(), text(), bytes(32)).prop_map(
            |(min, extra, caps, name, token)| {
                Frame::from(Hello {
                    min_version: min,
                    max_version: min + extra,
                    capabilities: Capabilities(caps),
                    client_name: name,
                    auth_token: token,
                })
            }
        ),
        (
            1..=u8::MAX,
            any::<u64>(),
            0..=limits::MAX_FRAME_LEN as u32,
            text()
        )
            .prop_map(|(version, caps, max, name)| {
                Frame::from(HelloOk {
                    version,
                    capabilities: Capabilities(caps),
                    max_frame_len: max,
                    server_name: name,
                })
            }),
        Just(Frame::from(Ping)),
        Just(Frame::from(Pong)),
        (any::<u16>(), text()).prop_map(|(code, message)| Frame::from(ErrorFrame {
            code: ErrorCode(code),
            message
        })),
        (any::<u16>(), text()).prop_map(|(code, message)| Frame::from(Goodbye {
            code: ErrorCode(code),
            message
        })),
    ]
}

fn stream_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (stream_name(), ack(), headers(), bytes(64)).prop_map(|(stream, ack, headers, payload)| {
            Frame::from(Publish {
                stream,
                ack,
                headers,
                payload,
            })
        }),
        (stream_name(), ack(), vec(message(), 1..6)).prop_map(|(stream, ack, messages)| {
            Frame::from(PublishBatch {
                stream,
                ack,
                messages,
            })
        }),
        (any::<u64>(), any::<u32>()).prop_map(|(first_sequence, count)| Frame::from(PublishAck {
            first_sequence,
            count
        })),
        (
            stream_pattern(),
            start(),
            proptest::option::of("[a-z0-9_.-]{1,16}"),
            any::<u32>(),
            0..=4096u16
        )
            .prop_map(
                |(pattern, start, group, queue_capacity, max_batch_events)| {
                    Frame::from(Subscribe {
                        pattern,
                        start,
                        group,
                        queue_capacity,
                        max_batch_events,
                    })
                }
            ),
        sub_id().prop_map(|subscription_id| Frame::from(Subscribed { subscription_id })),
        sub_id().prop_map(|subscription_id| Frame::from(Unsubscribe { subscription_id })),
        sub_id().prop_map(|subscription_id| Frame::from(Unsubscribed { subscription_id })),
        (sub_id(), event_batch_body()).prop_map(|(subscription_id, body)| Frame::from(
            EventBatch {
                subscription_id,
                body
            }
        )),
        (sub_id(), any::<u64>()).prop_map(|(subscription_id, missed)| Frame::from(Lag {
            subscription_id,
            missed
        })),
        (sub_id(), any::<u16>(), text()).prop_map(|(subscription_id, code, message)| {
            Frame::from(SubscriptionEnded {
                subscription_id,
                code: ErrorCode(code),
                message,
            })
        }),
    ]
}

fn cache_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        bytes(32).prop_map(|key| Frame::from(CacheGet { key })),
        (bytes(32), any::<u64>(), bytes(64))
            .prop_map(|(key, ttl_ms, value)| Frame::from(CacheSet { key, ttl_ms, value })),
        vec(bytes(16), 1..5).prop_map(|keys| Frame::from(CacheDelete { keys })),
        bytes(64).prop_map(|value| Frame::from(CacheValue { value })),
        Just(Frame::from(CacheNotFound)),
        Just(Frame::from(CacheOk)),
        any::<u32>().prop_map(|count| Frame::from(CacheDeleted { count })),
    ]
}

pub fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![connection_frame(), stream_frame(), cache_frame()]
}
