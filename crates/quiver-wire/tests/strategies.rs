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
            0..=4096u16,
            vec((stream_name(), any::<u64>()), 0..3),
        )
            .prop_map(
                |(pattern, start, group, queue_capacity, max_batch_events, resume)| {
                    Frame::from(Subscribe {
                        pattern,
                        start,
                        group,
                        queue_capacity,
                        max_batch_events,
                        resume,
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

fn group_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.-]{1,16}"
}

fn settings() -> impl Strategy<Value = StreamSettings> {
    (
        prop_oneof![
            Just(Storage::Live),
            Just(Storage::Buffered),
            Just(Storage::Os),
            (1..=60_000u32).prop_map(|interval_ms| Storage::Interval { interval_ms }),
            Just(Storage::Sync),
        ],
        (any::<u64>(), any::<u64>(), any::<u64>()),
        any::<bool>(),
        any::<u64>(),
        prop_oneof![
            Just(Policy::Default),
            Just(Policy::DropNew),
            Just(Policy::DropOld),
            Just(Policy::Block),
            Just(Policy::Disconnect),
        ],
    )
        .prop_map(
            |(
                storage,
                (max_age_ms, max_bytes, max_messages),
                keep_unacked,
                dedupe_window_ms,
                policy,
            )| {
                StreamSettings {
                    storage,
                    max_age_ms,
                    max_bytes,
                    max_messages,
                    keep_unacked,
                    dedupe_window_ms,
                    policy,
                }
            },
        )
}

fn stream_info() -> impl Strategy<Value = StreamInfo> {
    (
        stream_name(),
        any::<u64>(),
        settings(),
        (any::<u64>(), any::<u64>(), any::<u64>()),
        any::<u32>(),
        any::<u64>(),
        vec(group_name(), 0..3),
    )
        .prop_map(
            |(
                stream,
                created_ms,
                settings,
                (first_offset, next_offset, stored_bytes),
                subscribers,
                published,
                groups,
            )| {
                StreamInfo {
                    stream,
                    created_ms,
                    settings,
                    first_offset,
                    next_offset,
                    stored_bytes,
                    subscribers,
                    published,
                    groups,
                }
            },
        )
}

fn group_settings() -> impl Strategy<Value = GroupSettings> {
    (
        1..=u32::MAX,
        any::<u32>(),
        1..=u32::MAX,
        proptest::option::of(stream_name()),
    )
        .prop_map(
            |(ack_wait_ms, max_deliveries, max_in_flight, dead_letter)| GroupSettings {
                ack_wait_ms,
                max_deliveries,
                max_in_flight,
                dead_letter,
            },
        )
}

fn ranges() -> impl Strategy<Value = Vec<OffsetRange>> {
    vec(
        (any::<u64>(), 1..=u32::MAX).prop_map(|(first, len)| OffsetRange { first, len }),
        1..5,
    )
}

fn group_summary() -> impl Strategy<Value = GroupSummary> {
    (
        group_name(),
        group_settings(),
        vec(any::<u64>(), 10),
        any::<u32>(),
        vec(
            ("\\PC{0,10}", any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
                |(name, pending, delivered, acked)| MemberSummary {
                    name,
                    pending,
                    delivered,
                    acked,
                },
            ),
            0..3,
        ),
    )
        .prop_map(|(name, settings, n, member_count, members)| GroupSummary {
            name,
            settings,
            next: n[0],
            floor: n[1],
            end: n[2],
            pending: n[3],
            ready: n[4],
            lag: n[5],
            acked: n[6],
            redelivered: n[7],
            dead_lettered: n[8],
            lost_to_retention: n[9],
            member_count,
            members,
        })
}

fn group_event() -> impl Strategy<Value = GroupEvent> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u32>(),
        headers(),
        bytes(48),
    )
        .prop_map(
            |(offset, timestamp_ms, deliveries, headers, payload)| GroupEvent {
                offset,
                timestamp_ms,
                deliveries,
                headers,
                payload,
            },
        )
}

fn admin_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (stream_name(), settings())
            .prop_map(|(stream, settings)| Frame::from(CreateStream { stream, settings })),
        stream_info().prop_map(Frame::from),
        stream_name().prop_map(|stream| Frame::from(DescribeStream { stream })),
        stream_name().prop_map(|stream| Frame::from(DeleteStream { stream })),
        Just(Frame::from(StreamDeleted)),
        (proptest::option::of(stream_name()), 1..=1024u16)
            .prop_map(|(after, limit)| Frame::from(ListStreams { after, limit })),
        (vec(stream_info(), 0..3), any::<bool>())
            .prop_map(|(streams, more)| Frame::from(StreamList { streams, more })),
    ]
}

fn group_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (
            stream_pattern(),
            group_name(),
            "\\PC{0,10}",
            any::<u32>(),
            start(),
            proptest::option::of(group_settings()),
            prop_oneof![Just(0u32), any::<u32>()],
        )
            .prop_map(
                |(pattern, group, member, max_in_flight, start, settings, limit)| {
                    Frame::from(JoinGroup {
                        pattern,
                        group,
                        member,
                        max_in_flight,
                        start,
                        settings,
                        limit,
                    })
                }
            ),
        (sub_id(), stream_name(), vec(group_event(), 1..5)).prop_map(
            |(subscription_id, stream, events)| Frame::from(GroupEventBatch {
                subscription_id,
                stream,
                events
            })
        ),
        (sub_id(), stream_name(), ranges()).prop_map(|(subscription_id, stream, ranges)| {
            Frame::from(GroupAck {
                subscription_id,
                stream,
                ranges,
            })
        }),
        (sub_id(), stream_name(), any::<u32>(), ranges()).prop_map(
            |(subscription_id, stream, delay_ms, ranges)| Frame::from(GroupNack {
                subscription_id,
                stream,
                delay_ms,
                ranges
            })
        ),
        any::<u64>().prop_map(|count| Frame::from(GroupAcked { count })),
        (stream_name(), proptest::option::of(group_name()))
            .prop_map(|(stream, group)| Frame::from(DescribeGroups { stream, group })),
        (stream_name(), vec(group_summary(), 0..3))
            .prop_map(|(stream, groups)| Frame::from(GroupList { stream, groups })),
        (stream_name(), group_name(), start())
            .prop_map(|(stream, group, to)| Frame::from(ResetGroup { stream, group, to })),
        (stream_name(), group_name())
            .prop_map(|(stream, group)| Frame::from(DeleteGroup { stream, group })),
        Just(Frame::from(GroupDeleted)),
    ]
}

pub fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        connection_frame(),
        stream_frame(),
        cache_frame(),
        admin_frame(),
        group_frame()
    ]
}
