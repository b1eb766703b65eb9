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
    "CacheOk": 0x25, "CacheDeleted": 0x26,
}
FLAG_HEADERS = 0x0001


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
    frame("error_subscription_id_zero", "Unsubscribe subscription 0 (ids are never 0).",
          "Unsubscribe", [u32(0, "subscription id")], request_id=5,
          expect="error MALFORMED_FRAME")


if __name__ == "__main__":
    main()
