#!/usr/bin/env python3
"""Writes the byte-exact test vectors of Quiver's native protocol (docs/wire-protocol.md).

This is a second, independent encoder of the format, written from the specification with
nothing but the standard library: the Rust codec must decode every `expect: ok` vector and
re-encode it byte for byte, and must reject every error vector with the documented code.
Run it from anywhere: `python3 generate.py` rewrites the `*.vec` files next to it.
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

TYPES = {
    "Hello": 0x01, "HelloOk": 0x02, "Ping": 0x03, "Pong": 0x04, "Error": 0x05,
    "Goodbye": 0x06, "Publish": 0x10, "PublishBatch": 0x11, "PublishAck": 0x12,
    "Subscribe": 0x13, "Subscribed": 0x14, "Unsubscribe": 0x15, "Unsubscribed": 0x16,
    "EventBatch": 0x17, "Lag": 0x18, "SubscriptionEnded": 0x19, "CacheGet": 0x20,
    "CacheSet": 0x21, "CacheDelete": 0x22, "CacheValue": 0x23, "CacheNotFound": 0x24,
    "CacheOk": 0x25, "CacheDeleted": 0x26, "CreateStream": 0x30, "StreamInfo": 0x31,
    "DescribeStream": 0x32, "DeleteStream": 0x33, "StreamDeleted": 0x34, "ListStreams": 0x35,
    "StreamList": 0x36, "JoinGroup": 0x40, "GroupEventBatch": 0x41, "GroupAck": 0x42,
    "GroupNack": 0x43, "GroupAcked": 0x44, "DescribeGroups": 0x45, "GroupList": 0x46,
    "ResetGroup": 0x47, "DeleteGroup": 0x48, "GroupDeleted": 0x49,
}
FLAG_HEADERS = 0x0001
FLAG_RESUME = 0x0100
FLAG_LIMIT = 0x0200


# Each field is (bytes, comment).
def u8(v, what):
    return (struct.pack("<B", v), f"{what}: u8 {v}")


def u16(v, what):
    return (struct.pack("<H", v), f"{what}: u16 {v}")


def u32(v, what):
    return (struct.pack("<I", v), f"{what}: u32 {v}")


def u64(v, what):
    return (struct.pack("<Q", v), f"{what}: u64 {v}")


def show(b):
    try:
        text = b.decode("ascii")
        if text.isprintable():
            return repr(text)
    except UnicodeDecodeError:
        pass
    return f"{len(b)} bytes"


def pre8(b, what):
    return (struct.pack("<B", len(b)) + b, f"{what}: u8 length {len(b)} + {show(b)}")


def pre16(b, what):
    return (struct.pack("<H", len(b)) + b, f"{what}: u16 length {len(b)} + {show(b)}")


def pre32(b, what):
    return (struct.pack("<I", len(b)) + b, f"{what}: u32 length {len(b)} + {show(b)}")


def headers(pairs, what="headers"):
    fields = [u8(len(pairs), f"{what} count")]
    for k, v in pairs:
        fields.append(pre8(k, "  header key"))
        fields.append(pre16(v, "  header value"))
    return fields


def header(frame_type, flags, request_id, length, version=1, magic=b"QV", reserved=0):
    type_byte = TYPES.get(frame_type, frame_type) if isinstance(frame_type, str) else frame_type
    return [
        (magic, "magic \"QV\""),
        (bytes([version]), f"version {version}"),
        (bytes([type_byte]), f"type {frame_type} ({type_byte:#04x})" if isinstance(frame_type, str)
         else f"type {type_byte:#04x}"),
        (struct.pack("<H", flags), f"flags {flags:#06x}"),
        (struct.pack("<H", reserved), "reserved"),
        (struct.pack("<I", request_id), f"request id {request_id}"),
        (struct.pack("<I", length), f"payload length {length}"),
    ]


def write(name, description, expect, fields):
    # Vectors that must be rejected are named reject_*; every other one is a valid frame.
    if expect.startswith("error") and name.startswith("error_"):
        name = "reject_" + name[len("error_"):]
    lines = [f"# {line}".rstrip() for line in description.strip().splitlines()]
    lines.append(f"expect: {expect}")
    for data, comment in fields:
        hexed = " ".join(f"{b:02x}" for b in data)
        lines.append(f"{hexed:<48} # {comment}" if hexed else f"# (empty) {comment}")
    with open(os.path.join(HERE, f"{name}.vec"), "w") as out:
        out.write("\n".join(lines) + "\n")


def frame(name, description, frame_type, payload, flags=0, request_id=0, expect="ok",
          length=None, **header_overrides):
    size = sum(len(d) for d, _ in payload)
    fields = header(frame_type, flags, request_id, size if length is None else length,
                    **header_overrides) + payload
    write(name, description, expect, fields)


STREAM = b"acme/orders/created"


def settings(kind, interval=0, max_age=0, max_bytes=0, max_messages=0, keep_unacked=0,
             dedupe=0, policy=0):
    names = ["live", "buffered", "os", "interval", "sync"]
    return [u8(kind, f"durability {names[kind] if kind < 5 else '?'}"),
            u32(interval, "interval ms"), u64(max_age, "max age ms (0: none)"),
            u64(max_bytes, "max bytes (0: none)"), u64(max_messages, "max messages (0: none)"),
            u8(keep_unacked, "retention flags (bit 0 keep_unacked)"),
            u64(dedupe, "dedupe window ms (0: off)"), u8(policy, "policy")]


def stream_info(stream, groups):
    fields = [pre8(stream, "stream"), u64(1700000000000, "created ms")]
    fields += settings(4, max_messages=1000000, keep_unacked=1, dedupe=120000, policy=2)
    fields += [u64(10, "first offset"), u64(5000, "next offset"), u64(1048576, "stored bytes"),
               u32(2, "subscribers"), u64(4990, "published"), u16(len(groups), "group count")]
    fields += [pre8(g, "  group") for g in groups]
    return fields


def main():
    for old in os.listdir(HERE):
        if old.endswith(".vec"):
            os.remove(os.path.join(HERE, old))

    # Connection frames.
    frame("hello", "Hello: versions 1..1, capabilities HEADERS|CACHE, client name, token.",
          "Hello", [u8(1, "min version"), u8(1, "max version"), u64(3, "capabilities"),
                    pre8(b"quiver-client 0.1", "client name"), pre16(b"s3cret", "auth token")],
          request_id=1)
    frame("hello_no_auth", "Hello without a token and with an unknown capability bit (40).",
          "Hello", [u8(1, "min version"), u8(2, "max version"), u64(1 << 40 | 1, "capabilities"),
                    pre8(b"", "client name"), pre16(b"", "auth token")], request_id=1)
    frame("hello_ok", "HelloOk: version 1, capabilities HEADERS|CACHE, 8 MiB frames.",
          "HelloOk", [u8(1, "version"), u64(3, "capabilities"), u32(8 << 20, "max frame length"),
                      pre8(b"quiver 0.1.0", "server name")], request_id=1)
    frame("ping", "Ping with an empty payload.", "Ping", [], request_id=42)
    frame("pong", "Pong answering Ping 42.", "Pong", [], request_id=42)
    frame("error_frame_invalid_name", "Error INVALID_NAME (100) answering request 9.", "Error",
          [u16(100, "code INVALID_NAME"), pre16(b"bad stream name", "message")], request_id=9)
    frame("error_frame_connection", "Connection-level Error BAD_MAGIC (1), request id 0.", "Error",
          [u16(1, "code BAD_MAGIC"), pre16(b"bad magic", "message")])
    frame("goodbye", "Goodbye SHUTTING_DOWN (9) pushed by a draining server.", "Goodbye",
          [u16(9, "code SHUTTING_DOWN"), pre16("server draining \u2014 bye".encode(), "message (UTF-8)")])

    # Publishing.
    frame("publish_basic", "Publish 5 bytes to acme/orders/created, ack none, no headers.",
          "Publish", [pre8(STREAM, "stream"), u8(0, "ack none"), pre32(b"hello", "payload")],
          request_id=7)
    frame("publish_headers", "Publish with ack accepted and two headers (flag HEADERS).",
          "Publish", [pre8(STREAM, "stream"), u8(1, "ack accepted")]
          + headers([(b"content-type", b"json"), (b"trace", b"\x01\x02")])
          + [pre32(b"{}", "payload")], flags=FLAG_HEADERS, request_id=8)
    frame("publish_empty_payload", "Publish an empty payload, ack committed, to a 4-level name.",
          "Publish", [pre8(b"acme/orders/eu/created", "stream"), u8(2, "ack committed"),
                      pre32(b"", "payload")], request_id=0xFFFFFFFF)
    frame("publish_batch", "PublishBatch of 3 messages, ack accepted.", "PublishBatch",
          [pre8(STREAM, "stream"), u8(1, "ack accepted"), u16(3, "count"),
           pre32(b"a", "payload 1"), pre32(b"bb", "payload 2"), pre32(b"", "payload 3")],
          request_id=10)
    frame("publish_batch_headers", "PublishBatch of 2, only the second has a header.",
          "PublishBatch", [pre8(STREAM, "stream"), u8(1, "ack accepted"), u16(2, "count")]
          + headers([], "message 1 headers") + [pre32(b"x", "payload 1")]
          + headers([(b"k", b"v")], "message 2 headers") + [pre32(b"y", "payload 2")],
          flags=FLAG_HEADERS, request_id=11)
    frame("publish_ack", "PublishAck: first sequence 1000, count 3, answering request 10.",
          "PublishAck", [u64(1000, "first sequence"), u32(3, "count")], request_id=10)

    # Subscriptions.
    frame("subscribe_latest", "Subscribe to acme/orders/* from latest, defaults.", "Subscribe",
          [pre8(b"acme/orders/*", "pattern"), u8(0, "start latest"), u64(0, "start value"),
           pre8(b"", "group (none)"), u32(0, "queue capacity (default)"),
           u16(0, "max batch events (default)")], request_id=20)
    frame("subscribe_offset_group", "Subscribe to acme/orders/> from offset 5000 in group workers.",
          "Subscribe", [pre8(b"acme/orders/>", "pattern"), u8(2, "start offset"),
                        u64(5000, "start value"), pre8(b"workers", "group"),
                        u32(1024, "queue capacity"), u16(64, "max batch events")], request_id=21)
    frame("subscribe_timestamp", "Subscribe to one stream from a timestamp in ms.", "Subscribe",
          [pre8(STREAM, "pattern"), u8(3, "start timestamp"), u64(1700000000000, "start value (ms)"),
           pre8(b"", "group (none)"), u32(0, "queue capacity"), u16(0, "max batch events")],
          request_id=22)
    frame("subscribed", "Subscribed: subscription id 3 answering request 20.", "Subscribed",
          [u32(3, "subscription id")], request_id=20)
    frame("unsubscribe", "Unsubscribe subscription 3.", "Unsubscribe",
          [u32(3, "subscription id")], request_id=23)
    frame("unsubscribed", "Unsubscribed subscription 3.", "Unsubscribed",
          [u32(3, "subscription id")], request_id=23)
    frame("event_batch", """EventBatch for subscription 3: two events of acme/orders/created.
Everything after the subscription id is the body shared by every subscriber.""",
          "EventBatch", [u32(3, "subscription id (per subscriber)"), pre8(STREAM, "stream"),
                         u16(2, "count"), u64(1000, "sequence"), u64(1700000000123, "timestamp ms"),
                         pre32(b"first", "payload"), u64(1001, "sequence"),
                         u64(1700000000124, "timestamp ms"), pre32(b"second", "payload")])
    frame("event_batch_headers", "EventBatch with headers (flag HEADERS): one event, one header.",
          "EventBatch", [u32(7, "subscription id"), pre8(b"acme/orders/eu/created", "stream"),
                         u16(1, "count"), u64(1, "sequence"), u64(2, "timestamp ms")]
          + headers([(b"h", b"v")]) + [pre32(b"p", "payload")], flags=FLAG_HEADERS)
    frame("lag", "Lag: subscription 3 missed 17 messages.", "Lag",
          [u32(3, "subscription id"), u64(17, "missed")])
    frame("subscription_ended", "SubscriptionEnded: subscription 3, SLOW_CONSUMER (106).",
          "SubscriptionEnded", [u32(3, "subscription id"), u16(106, "code SLOW_CONSUMER"),
                                pre16(b"queue full", "message")])

    # Cache.
    frame("cache_get", "CacheGet key user:1.", "CacheGet", [pre16(b"user:1", "key")], request_id=30)
    frame("cache_set", "CacheSet key user:1 = alice with a TTL of 60000 ms.", "CacheSet",
          [pre16(b"user:1", "key"), u64(60000, "ttl ms"), pre32(b"alice", "value")], request_id=31)
    frame("cache_set_binary_key", "CacheSet with a binary key, no TTL (0), empty value.",
          "CacheSet", [pre16(b"\x00\xff", "key"), u64(0, "ttl ms (none)"), pre32(b"", "value")],
          request_id=32)
    frame("cache_delete", "CacheDelete of two keys.", "CacheDelete",
          [u16(2, "key count"), pre16(b"a", "key"), pre16(b"b", "key")], request_id=33)
    frame("cache_value", "CacheValue answering request 30.", "CacheValue",
          [pre32(b"alice", "value")], request_id=30)
    frame("cache_not_found", "CacheNotFound answering request 30.", "CacheNotFound", [],
          request_id=30)
    frame("cache_ok", "CacheOk answering request 31.", "CacheOk", [], request_id=31)
    frame("cache_deleted", "CacheDeleted: 1 key deleted, answering request 33.", "CacheDeleted",
          [u32(1, "count")], request_id=33)

    # Subscribe that resumes streams at their own offsets (flag RESUME, a required bit).
    frame("subscribe_resume", """Subscribe to acme/orders/> from earliest, resuming one stream at offset 42
(flag RESUME: a count and (stream, offset) pairs follow the fixed fields).""", "Subscribe",
          [pre8(b"acme/orders/>", "pattern"), u8(1, "start earliest"), u64(0, "start value"),
           pre8(b"", "group (none)"), u32(0, "queue capacity"), u16(0, "max batch events"),
           u16(1, "resume count"), pre8(STREAM, "  stream"), u64(42, "  next offset")],
          flags=FLAG_RESUME, request_id=24)

    # Stream administration.
    frame("create_stream", """CreateStream: durable with sync, keep 7 days and 1 GiB, de-duplicate for
2 minutes, the server's default policy.""", "CreateStream",
          [pre8(STREAM, "stream")] + settings(4, max_age=604800000, max_bytes=1 << 30,
                                               dedupe=120000), request_id=40)
    frame("create_stream_interval", "CreateStream: durable with interval:50, keep unacked.",
          "CreateStream", [pre8(b"acme/audit/log", "stream")] + settings(
              3, interval=50, max_messages=1000, keep_unacked=1, policy=3), request_id=41)
    frame("stream_info", "StreamInfo answering request 40, with one group.", "StreamInfo",
          stream_info(STREAM, [b"billing"]), request_id=40)
    frame("describe_stream", "DescribeStream acme/orders/created.", "DescribeStream",
          [pre8(STREAM, "stream")], request_id=42)
    frame("delete_stream", "DeleteStream acme/orders/created.", "DeleteStream",
          [pre8(STREAM, "stream")], request_id=43)
    frame("stream_deleted", "StreamDeleted answering request 43.", "StreamDeleted", [],
          request_id=43)
    frame("list_streams", "ListStreams from the first, 100 per page.", "ListStreams",
          [pre8(b"", "after (none)"), u16(100, "limit")], request_id=44)
    frame("stream_list", "StreamList with one stream and more to come.", "StreamList",
          [u16(1, "stream count")] + stream_info(STREAM, []) + [u8(1, "more")], request_id=44)

    # Consumer groups.
    frame("join_group", """JoinGroup: group billing on acme/orders/>, member w1, 100 in flight; a group it
creates starts at earliest with a 30 s ack wait, 5 deliveries, 1000 in flight per member and
the default dead-letter stream.""", "JoinGroup",
          [pre8(b"acme/orders/>", "pattern"), pre8(b"billing", "group"), pre8(b"w1", "member"),
           u32(100, "max in flight (this member)"), u8(1, "start earliest"),
           u64(0, "start value"), u8(1, "has settings"), u32(30000, "ack wait ms"),
           u32(5, "max deliveries"), u32(1000, "max in flight (group)"),
           pre8(b"", "dead letter (default)")], request_id=50)
    frame("join_group_defaults", "JoinGroup with the server's defaults and no member name.",
          "JoinGroup", [pre8(STREAM, "pattern"), pre8(b"jobs", "group"), pre8(b"", "member"),
                        u32(0, "max in flight (the group's)"), u8(0, "start latest"),
                        u64(0, "start value"), u8(0, "has settings")], request_id=51)
    frame("join_group_limit", """JoinGroup of a member that takes 5 messages in all (flag LIMIT: the limit
follows the fixed fields).""", "JoinGroup",
          [pre8(STREAM, "pattern"), pre8(b"jobs", "group"), pre8(b"", "member"),
           u32(5, "max in flight (this member)"), u8(0, "start latest"),
           u64(0, "start value"), u8(0, "has settings"), u32(5, "limit")],
          flags=FLAG_LIMIT, request_id=52)
    frame("error_join_group_limit_zero", "JoinGroup with flag LIMIT and a limit of 0.",
          "JoinGroup",
          [pre8(STREAM, "pattern"), pre8(b"jobs", "group"), pre8(b"", "member"),
           u32(0, "max in flight (the group's)"), u8(0, "start latest"),
           u64(0, "start value"), u8(0, "has settings"), u32(0, "limit")],
          flags=FLAG_LIMIT, request_id=53, expect="error MALFORMED_FRAME")
    frame("group_event_batch", """GroupEventBatch for membership 4: two messages of acme/orders/created, the
second delivered for the third time.""", "GroupEventBatch",
          [u32(4, "subscription id"), pre8(STREAM, "stream"), u16(2, "count"),
           u64(7, "offset"), u64(1700000000001, "timestamp ms"), u32(1, "deliveries"),
           pre32(b"a", "payload"), u64(3, "offset"), u64(1700000000000, "timestamp ms"),
           u32(3, "deliveries"), pre32(b"b", "payload")])
    frame("group_event_batch_headers", "GroupEventBatch with a header (flag HEADERS).",
          "GroupEventBatch", [u32(4, "subscription id"), pre8(STREAM, "stream"), u16(1, "count"),
                              u64(9, "offset"), u64(1, "timestamp ms"), u32(1, "deliveries")]
          + headers([(b"k", b"v")]) + [pre32(b"x", "payload")], flags=FLAG_HEADERS)
    frame("group_ack", "GroupAck of offsets 7..=9 and 12 of acme/orders/created.", "GroupAck",
          [u32(4, "subscription id"), pre8(STREAM, "stream"), u16(2, "range count"),
           u64(7, "  first"), u32(3, "  length"), u64(12, "  first"), u32(1, "  length")],
          request_id=52)
    frame("group_nack", "GroupNack of offset 3, delivered again after 5 s.", "GroupNack",
          [u32(4, "subscription id"), pre8(STREAM, "stream"), u32(5000, "delay ms"),
           u16(1, "range count"), u64(3, "  first"), u32(1, "  length")], request_id=53)
    frame("group_acked", "GroupAcked: 4 messages, answering request 52.", "GroupAcked",
          [u64(4, "count")], request_id=52)
    frame("describe_groups", "DescribeGroups: every group of acme/orders/created.",
          "DescribeGroups", [pre8(STREAM, "stream"), pre8(b"", "group (all)")], request_id=54)
    frame("group_list", "GroupList: group billing with one member.", "GroupList",
          [pre8(STREAM, "stream"), u16(1, "group count"), pre8(b"billing", "  group"),
           u32(30000, "  ack wait ms"), u32(5, "  max deliveries"), u32(1000, "  max in flight"),
           pre8(b"acme/orders/created.dead", "  dead letter"), u64(120, "  next"),
           u64(100, "  floor"), u64(150, "  end"), u64(20, "  pending"), u64(2, "  ready"),
           u64(50, "  lag"), u64(100, "  acked"), u64(7, "  redelivered"),
           u64(1, "  dead lettered"), u64(0, "  lost to retention"), u32(1, "  member count"),
           u16(1, "  members listed"), pre8(b"w1", "    member"), u32(20, "    pending"),
           u64(120, "    delivered"), u64(100, "    acked")], request_id=54)
    frame("reset_group", "ResetGroup billing to offset 100.", "ResetGroup",
          [pre8(STREAM, "stream"), pre8(b"billing", "group"), u8(2, "start offset"),
           u64(100, "start value")], request_id=55)
    frame("delete_group", "DeleteGroup billing.", "DeleteGroup",
          [pre8(STREAM, "stream"), pre8(b"billing", "group")], request_id=56)
    frame("group_deleted", "GroupDeleted answering request 56.", "GroupDeleted", [],
          request_id=56)

    # Incomplete input: the decoder asks for more bytes.
    write("incomplete_header", "Only 10 of the 16 header bytes.", "incomplete",
          header("Ping", 0, 1, 0)[:5])
    write("incomplete_payload", "A whole header announcing 11 payload bytes, 4 present.",
          "incomplete", header("Publish", 0, 1, 11) + [(b"\x05acm", "first 4 payload bytes")])

    # Errors found by the header check: answer with request id 0 and close.
    frame("error_bad_magic", "Wrong magic: an HTTP request on the native port.", "Ping", [],
          expect="error BAD_MAGIC", magic=b"GE")
    frame("error_unsupported_version", "Header version 2.", "Ping", [],
          expect="error UNSUPPORTED_VERSION", version=2)
    frame("error_unknown_type", "Type byte 0x7f.", 0x7F, [], expect="error UNKNOWN_FRAME_TYPE")
    frame("error_reserved_not_zero", "Reserved header bytes not zero.", "Ping", [],
          expect="error MALFORMED_FRAME", reserved=1)
    write("error_frame_too_large", """A header announcing 8 MiB + 1 payload bytes: rejected from the
header alone, before any payload is buffered.""", "error FRAME_TOO_LARGE",
          header("Publish", 0, 1, (8 << 20) + 1))

    # Errors in the payload: the frame is consumed; closing codes close.
    frame("error_truncated_field", "Publish whose payload length runs past the frame.",
          "Publish", [pre8(STREAM, "stream"), u8(0, "ack"), (struct.pack("<I", 10) + b"abc",
                                                            "payload: u32 length 10 but 3 bytes")],
          request_id=5, expect="error MALFORMED_FRAME")
    frame("error_trailing_bytes", "Ping with a 1-byte payload (Ping's payload is empty).", "Ping",
          [(b"\x00", "unexpected byte")], request_id=5, expect="error MALFORMED_FRAME")
    frame("error_bad_utf8", "Hello whose client name is not UTF-8.", "Hello",
          [u8(1, "min version"), u8(1, "max version"), u64(0, "capabilities"),
           pre8(b"\xff\xfe", "client name (invalid UTF-8)"), pre16(b"", "auth token")],
          request_id=1, expect="error MALFORMED_FRAME")
    frame("error_unknown_ack", "Publish with ack mode 9.", "Publish",
          [pre8(STREAM, "stream"), u8(9, "ack (undefined)"), pre32(b"x", "payload")],
          request_id=5, expect="error MALFORMED_FRAME")
    frame("error_invalid_stream_name", "Publish to a 2-level name.", "Publish",
          [pre8(b"acme/orders", "stream (2 levels)"), u8(0, "ack"), pre32(b"x", "payload")],
          request_id=5, expect="error INVALID_NAME")
    frame("error_wildcard_in_publish", "Publish to a pattern.", "Publish",
          [pre8(b"acme/orders/*", "stream (wildcard)"), u8(0, "ack"), pre32(b"x", "payload")],
          request_id=5, expect="error INVALID_NAME")
    frame("error_misplaced_wildcard", "Subscribe with a wildcard before the last level.",
          "Subscribe", [pre8(b"acme/*/created", "pattern"), u8(0, "start latest"),
                        u64(0, "start value"), pre8(b"", "group"), u32(0, "queue capacity"),
                        u16(0, "max batch events")], request_id=5, expect="error INVALID_NAME")
    frame("error_too_many_headers", "Publish declaring 33 headers (limit 32).", "Publish",
          [pre8(STREAM, "stream"), u8(0, "ack"), u8(33, "header count")], flags=FLAG_HEADERS,
          request_id=5, expect="error LIMIT_EXCEEDED")
    frame("error_message_too_long", "Publish declaring a 1 MiB + 1 payload (limit 1 MiB).",
          "Publish", [pre8(STREAM, "stream"), u8(0, "ack"),
                      u32((1 << 20) + 1, "payload length")], request_id=5,
          expect="error LIMIT_EXCEEDED")
    frame("error_unknown_required_flag", "Ping with required flag bit 8 set.", "Ping", [],
          flags=0x0100, request_id=5, expect="error UNSUPPORTED_FLAGS")
    frame("error_empty_batch", "PublishBatch with count 0.", "PublishBatch",
          [pre8(STREAM, "stream"), u8(1, "ack"), u16(0, "count")], request_id=5,
          expect="error MALFORMED_FRAME")
    frame("error_headers_flag_without_headers", "Publish with flag HEADERS and 0 headers.",
          "Publish", [pre8(STREAM, "stream"), u8(0, "ack"), u8(0, "header count"),
                      pre32(b"x", "payload")], flags=FLAG_HEADERS, request_id=5,
          expect="error MALFORMED_FRAME")
    frame("error_start_value_not_zero", "Subscribe from latest with a non-zero start value.",
          "Subscribe", [pre8(STREAM, "pattern"), u8(0, "start latest"), u64(5, "start value"),
                        pre8(b"", "group"), u32(0, "queue capacity"), u16(0, "max batch events")],
          request_id=5, expect="error MALFORMED_FRAME")
    frame("error_unknown_durability", "CreateStream with durability 7.", "CreateStream",
          [pre8(STREAM, "stream")] + settings(7), request_id=5, expect="error MALFORMED_FRAME")
    frame("error_interval_zero", "CreateStream with durability interval and 0 ms.",
          "CreateStream", [pre8(STREAM, "stream")] + settings(3, interval=0), request_id=5,
          expect="error INVALID_ARGUMENT")
    frame("error_ack_empty_range", "GroupAck with a range of length 0.", "GroupAck",
          [u32(4, "subscription id"), pre8(STREAM, "stream"), u16(1, "range count"),
           u64(7, "  first"), u32(0, "  length")], request_id=5, expect="error MALFORMED_FRAME")
    frame("error_resume_flag_without_streams", "Subscribe with flag RESUME and a count of 0.",
          "Subscribe", [pre8(STREAM, "pattern"), u8(0, "start latest"), u64(0, "start value"),
                        pre8(b"", "group"), u32(0, "queue capacity"), u16(0, "max batch events"),
                        u16(0, "resume count")], flags=FLAG_RESUME, request_id=5,
          expect="error MALFORMED_FRAME")
    frame("error_group_name", "JoinGroup with a group name holding a slash.", "JoinGroup",
          [pre8(STREAM, "pattern"), pre8(b"a/b", "group"), pre8(b"", "member"),
           u32(0, "max in flight"), u8(0, "start latest"), u64(0, "start value"),
           u8(0, "has settings")], request_id=5, expect="error INVALID_NAME")
    frame("error_subscription_id_zero", "Unsubscribe subscription 0 (ids are never 0).",
          "Unsubscribe", [u32(0, "subscription id")], request_id=5,
          expect="error MALFORMED_FRAME")


if __name__ == "__main__":
    main()
