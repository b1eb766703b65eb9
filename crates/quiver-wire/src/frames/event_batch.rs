//! EventBatch: deliveries to a subscription, laid out so that a broker encodes a stream's
//! batch once (the *body*) and sends the same bytes to every subscriber behind a 20-byte
//! per-subscriber prefix (header + subscription id).

use bytes::{BufMut, Bytes, BytesMut};

use crate::frames::payload::{FramePayload, put_name, read_stream, read_subscription_id};
use crate::frames::publish::{no_headers_in_batch, read_batch_count};
use crate::header::{FLAG_HEADERS, FrameHeader, FrameType, VERSION};
use crate::headers::{HeaderIter, Headers};
use crate::limits::{HEADER_LEN, MAX_BATCH_COUNT, MAX_FRAME_LEN, MAX_MESSAGE_LEN, MAX_NAME_LEN};
use crate::name::StreamName;
use crate::reader::{DecodeError, Reader};
use crate::writer::{self, EncodeError};

/// Bytes before the shared body: the frame header and the subscription id.
pub const EVENT_BATCH_PREFIX_LEN: usize = HEADER_LEN + 4;

/// Largest body: the frame payload limit less the subscription id.
const MAX_BODY_LEN: usize = MAX_FRAME_LEN - 4;

/// One delivered message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The stream's sequence number (offset for a durable stream).
    pub sequence: u64,
    /// When the broker accepted the message, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// Headers; empty for none.
    pub headers: Headers,
    /// The message, at most [`MAX_MESSAGE_LEN`] bytes.
    pub payload: Bytes,
}

/// The shared part of an EventBatch: stream, count and events, encoded once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventBatchBody {
    encoded: Bytes,
    stream: StreamName,
    count: u16,
    has_headers: bool,
}

impl EventBatchBody {
    /// Encodes `events` of `stream` into `scratch` and takes the bytes out as a shared body;
    /// `scratch` keeps its spare capacity, so a reused buffer does not allocate per batch.
    pub fn encode(
        stream: &StreamName,
        events: &[Event],
        scratch: &mut BytesMut,
    ) -> Result<Self, EncodeError> {
        let with_headers = events.iter().any(|e| !e.headers.is_empty());
        // One reservation up front, so a reused buffer is reclaimed (or grown) before the
        // body is written rather than copied part-way through it.
        let headers_len: usize = if with_headers {
            events.iter().map(|e| e.headers.encoded_len()).sum()
        } else {
            0
        };
        let payloads_len: usize = events.iter().map(|e| 20 + e.payload.len()).sum();
        scratch.reserve((3 + MAX_NAME_LEN + headers_len + payloads_len).min(MAX_BODY_LEN));
        let mut encoder = EventBatchEncoder::new(scratch, stream, with_headers);
        for event in events {
            encoder.push(
                event.sequence,
                event.timestamp_ms,
                &event.headers,
                &event.payload,
            )?;
        }
        encoder.finish()
    }

    /// The stream the events come from.
    pub fn stream(&self) -> &StreamName {
        &self.stream
    }

    /// Number of events (1 to [`MAX_BATCH_COUNT`]).
    pub fn count(&self) -> usize {
        usize::from(self.count)
    }

    /// Whether events carry header blocks (the frame's HEADERS flag).
    pub fn has_headers(&self) -> bool {
        self.has_headers
    }

    /// The encoded body, shared by every subscriber.
    pub fn as_bytes(&self) -> &Bytes {
        &self.encoded
    }

    /// The 20 bytes that turn this body into subscription `subscription_id`'s EventBatch:
    /// write them, then [`Self::as_bytes`]. Nothing is allocated. Subscription ids are
    /// never 0 (the ones Subscribed hands out).
    pub fn prefix(&self, subscription_id: u32) -> [u8; EVENT_BATCH_PREFIX_LEN] {
        debug_assert_ne!(subscription_id, 0, "subscription ids are never 0");
        let header = FrameHeader {
            version: VERSION,
            frame_type: FrameType::EventBatch,
            flags: if self.has_headers { FLAG_HEADERS } else { 0 },
            request_id: 0,
            payload_len: (self.encoded.len() + 4) as u32,
        };
        let mut out = [0u8; EVENT_BATCH_PREFIX_LEN];
        out[..HEADER_LEN].copy_from_slice(&header.to_bytes());
        out[HEADER_LEN..].copy_from_slice(&subscription_id.to_le_bytes());
        out
    }

    /// The events, decoded lazily from the shared bytes (payloads are refcounted slices,
    /// not copies).
    pub fn events(&self) -> Events<'_> {
        Events {
            body: &self.encoded,
            refs: self.event_refs(),
        }
    }

    /// The events, borrowed: the cheapest way to read a batch (no refcount per event).
    pub fn event_refs(&self) -> EventRefs<'_> {
        let start = 1 + self.stream.as_bytes().len() + 2;
        EventRefs {
            rest: self.encoded.get(start..).unwrap_or_default(),
            remaining: self.count,
            has_headers: self.has_headers,
        }
    }

    /// Validates a received body.
    fn read(encoded: Bytes, has_headers: bool) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(&encoded, 0);
        let stream = read_stream(&mut reader, "stream")?;
        let count = read_batch_count(&mut reader, "event count")?;
        let mut any_headers = false;
        for _ in 0..count {
            reader.u64("sequence")?;
            reader.u64("timestamp")?;
            if has_headers {
                any_headers |= Headers::validate(&mut reader)? > 0;
            }
            reader.ref32("payload", MAX_MESSAGE_LEN)?;
        }
        if has_headers && !any_headers {
            return Err(no_headers_in_batch());
        }
        reader.finish(FrameType::EventBatch)?;
        Ok(Self {
            encoded,
            stream,
            count: count as u16,
            has_headers,
        })
    }
}

/// Appends an EventBatch body to a buffer one event at a time, for a broker that holds its
/// messages in its own type (reserve the batch's size in the buffer first when it is
/// known). Create, [`push`](Self::push) 1 to [`MAX_BATCH_COUNT`] events,
/// then [`finish`](Self::finish); an encoder dropped unfinished leaves its partial body at
/// the end of the buffer (truncate it to the length it had).
pub struct EventBatchEncoder<'a> {
    dst: &'a mut BytesMut,
    start: usize,
    count: usize,
    with_headers: bool,
    any_headers: bool,
}

impl<'a> EventBatchEncoder<'a> {
    /// Starts a body for `stream` at the end of `dst`. `with_headers` must be true exactly
    /// when at least one event will have headers (the encoding is canonical).
    pub fn new(dst: &'a mut BytesMut, stream: &StreamName, with_headers: bool) -> Self {
        let start = dst.len();
        put_name(dst, stream.as_bytes());
        dst.put_u16_le(0);
        Self {
            dst,
            start,
            count: 0,
            with_headers,
            any_headers: false,
        }
    }

    /// Appends one event; on error nothing of it is written.
    pub fn push(
        &mut self,
        sequence: u64,
        timestamp_ms: u64,
        headers: &Headers,
        payload: &[u8],
    ) -> Result<(), EncodeError> {
        writer::limit("event count", self.count + 1, MAX_BATCH_COUNT)?;
        writer::limit("payload", payload.len(), MAX_MESSAGE_LEN)?;
        if !self.with_headers && !headers.is_empty() {
            return Err(EncodeError::HeadersNotEnabled);
        }
        let event_len = 16
            + 4
            + payload.len()
            + if self.with_headers {
                headers.encoded_len()
            } else {
                0
            };
        let body_len = self.dst.len() - self.start + event_len;
        writer::limit("event batch body", body_len, MAX_BODY_LEN)?;
        self.dst.reserve(event_len);
        let mut fixed = [0u8; 20];
        fixed[..8].copy_from_slice(&sequence.to_le_bytes());
        fixed[8..16].copy_from_slice(&timestamp_ms.to_le_bytes());
        fixed[16..].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        if self.with_headers {
            self.dst.extend_from_slice(&fixed[..16]);
            headers.write(self.dst);
            self.any_headers |= !headers.is_empty();
            self.dst.extend_from_slice(&fixed[16..]);
        } else {
            self.dst.extend_from_slice(&fixed);
        }
        self.dst.extend_from_slice(payload);
        self.count += 1;
        Ok(())
    }

    /// Events pushed so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Completes the body and takes it out of the buffer as shared bytes. On error the
    /// buffer is restored to its length before [`Self::new`].
    pub fn finish(self) -> Result<EventBatchBody, EncodeError> {
        let failure = if self.count == 0 {
            Some(EncodeError::Empty { field: "events" })
        } else if self.with_headers && !self.any_headers {
            Some(EncodeError::NonCanonical {
                field: "headers",
                reason: "the batch was started with headers but no event has one",
            })
        } else {
            None
        };
        if let Some(error) = failure {
            self.dst.truncate(self.start);
            return Err(error);
        }
        let name_len = usize::from(self.dst[self.start]);
        let count_at = self.start + 1 + name_len;
        self.dst[count_at..count_at + 2].copy_from_slice(&(self.count as u16).to_le_bytes());
        let encoded = if self.start == 0 {
            self.dst.split()
        } else {
            self.dst.split_off(self.start)
        }
        .freeze();
        let stream = StreamName::from_validated(encoded.slice(1..1 + name_len));
        Ok(EventBatchBody {
            encoded,
            stream,
            count: self.count as u16,
            has_headers: self.with_headers,
        })
    }
}

/// Deliveries to one subscription: the subscription id, then the shared body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventBatch {
    /// The subscription, as numbered by Subscribed (never 0).
    pub subscription_id: u32,
    /// The stream's batch, shared with every other subscriber.
    pub body: EventBatchBody,
}

impl FramePayload for EventBatch {
    const TYPE: FrameType = FrameType::EventBatch;
    const KNOWN_FLAGS: u16 = FLAG_HEADERS;

    fn flags(&self) -> u16 {
        if self.body.has_headers {
            FLAG_HEADERS
        } else {
            0
        }
    }

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_subscription_id(dst, self.subscription_id)?;
        dst.put_slice(&self.body.encoded);
        Ok(())
    }

    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let subscription_id = read_subscription_id(reader)?;
        let encoded = reader.slice("body", reader.remaining())?;
        let body = EventBatchBody::read(encoded, flags & FLAG_HEADERS != 0)?;
        Ok(Self {
            subscription_id,
            body,
        })
    }
}

/// One event borrowed from a body: no reference count is taken, nothing is copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventRef<'a> {
    /// The stream's sequence number (offset for a durable stream).
    pub sequence: u64,
    /// When the broker accepted the message, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// The encoded header block (count byte first); empty when the event has none.
    headers: &'a [u8],
    /// The message.
    pub payload: &'a [u8],
}

impl<'a> EventRef<'a> {
    /// The event's headers, in wire order.
    pub fn headers(&self) -> HeaderIter<'a> {
        HeaderIter::over_block(self.headers)
    }
}

/// Iterator over a validated body's events, borrowed.
#[derive(Clone)]
pub struct EventRefs<'a> {
    rest: &'a [u8],
    remaining: u16,
    has_headers: bool,
}

impl<'a> Iterator for EventRefs<'a> {
    type Item = EventRef<'a>;

    fn next(&mut self) -> Option<EventRef<'a>> {
        // The body was validated when decoded or encoded, so every `get` succeeds; were it
        // otherwise, iteration would end rather than panic.
        self.remaining = self.remaining.checked_sub(1)?;
        let sequence = u64::from_le_bytes(self.rest.get(..8)?.try_into().ok()?);
        let timestamp_ms = u64::from_le_bytes(self.rest.get(8..16)?.try_into().ok()?);
        let mut at = 16;
        let mut headers: &[u8] = &[];
        if self.has_headers {
            let block_len = headers_block_len(self.rest.get(at..)?)?;
            let block = self.rest.get(at..at + block_len)?;
            if block_len > 1 {
                headers = block;
            }
            at += block_len;
        }
        let len = u32::from_le_bytes(self.rest.get(at..at + 4)?.try_into().ok()?) as usize;
        let payload = self.rest.get(at + 4..at + 4 + len)?;
        self.rest = &self.rest[at + 4 + len..];
        Some(EventRef {
            sequence,
            timestamp_ms,
            headers,
            payload,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (
            usize::from(self.remaining),
            Some(usize::from(self.remaining)),
        )
    }
}

/// Iterator over a validated body's events as owned [`Event`]s whose payloads are
/// refcounted slices of the body.
#[derive(Clone)]
pub struct Events<'a> {
    body: &'a Bytes,
    refs: EventRefs<'a>,
}

impl Iterator for Events<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        let event = self.refs.next()?;
        let headers = if event.headers.is_empty() {
            Headers::new()
        } else {
            Headers::from_validated(self.body.slice_ref(event.headers))
        };
        Some(Event {
            sequence: event.sequence,
            timestamp_ms: event.timestamp_ms,
            headers,
            payload: self.body.slice_ref(event.payload),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.refs.size_hint()
    }
}

/// Length of the header block at the start of `bytes` (validated).
fn headers_block_len(bytes: &[u8]) -> Option<usize> {
    let count = *bytes.first()?;
    let mut at = 1;
    for _ in 0..count {
        at += 1 + usize::from(*bytes.get(at)?);
        at += 2 + usize::from(u16::from_le_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> StreamName {
        StreamName::new("acme/orders/created").expect("valid name")
    }

    #[test]
    fn encoder_errors_leave_the_buffer_as_it_was() {
        let mut buf = BytesMut::from(&b"xy"[..]);
        let encoder = EventBatchEncoder::new(&mut buf, &stream(), false);
        assert_eq!(
            encoder.finish(),
            Err(EncodeError::Empty { field: "events" })
        );
        assert_eq!(&buf[..], b"xy");

        let mut encoder = EventBatchEncoder::new(&mut buf, &stream(), true);
        encoder
            .push(1, 2, &Headers::new(), b"p")
            .expect("within limits");
        assert!(matches!(
            encoder.finish(),
            Err(EncodeError::NonCanonical { .. })
        ));
        assert_eq!(&buf[..], b"xy");

        let headers = Headers::from_pairs([("k", &b"v"[..])]).expect("within limits");
        let mut encoder = EventBatchEncoder::new(&mut buf, &stream(), false);
        assert_eq!(
            encoder.push(1, 2, &headers, b"p"),
            Err(EncodeError::HeadersNotEnabled)
        );
        let too_big = vec![0u8; MAX_MESSAGE_LEN + 1];
        assert!(matches!(
            encoder.push(1, 2, &Headers::new(), &too_big),
            Err(EncodeError::LimitExceeded {
                field: "payload",
                ..
            })
        ));
        assert_eq!(encoder.count(), 0);
    }

    #[test]
    fn body_after_other_bytes_is_taken_alone() {
        let mut buf = BytesMut::from(&b"earlier"[..]);
        let mut encoder = EventBatchEncoder::new(&mut buf, &stream(), false);
        encoder
            .push(5, 6, &Headers::new(), b"payload")
            .expect("within limits");
        let body = encoder.finish().expect("one event");
        assert_eq!(&buf[..], b"earlier");
        assert_eq!(body.stream(), &stream());
        assert_eq!(body.count(), 1);
        let events: Vec<Event> = body.events().collect();
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].sequence, events[0].timestamp_ms), (5, 6));
        assert_eq!(&events[0].payload[..], b"payload");
        let prefix = body.prefix(9);
        assert_eq!(&prefix[..2], b"QV");
        assert_eq!(
            u32::from_le_bytes([prefix[12], prefix[13], prefix[14], prefix[15]]) as usize,
            body.as_bytes().len() + 4
        );
        assert_eq!(&prefix[16..], &9u32.to_le_bytes());
    }

    #[test]
    fn batch_count_limit() {
        let mut buf = BytesMut::new();
        let mut encoder = EventBatchEncoder::new(&mut buf, &stream(), false);
        for i in 0..MAX_BATCH_COUNT as u64 {
            encoder
                .push(i, i, &Headers::new(), b"")
                .expect("within the count limit");
        }
        assert!(matches!(
            encoder.push(0, 0, &Headers::new(), b""),
            Err(EncodeError::LimitExceeded {
                field: "event count",
                ..
            })
        ));
        assert_eq!(
            encoder.finish().expect("full batch").count(),
            MAX_BATCH_COUNT
        );
    }
}
