//! Messages, events and delivery batches.
//!
//! A [`Batch`] is sealed once and then immutable; the broker hands the same `Arc<Batch>` to
//! every subscription of the stream, so a batch costs one allocation (plus its event vector)
//! whatever the fan-out. It carries [`ENCODING_SLOTS`] write-once slots in which a transport
//! stores its encoding of the batch, so that the bytes are produced once and shared by every
//! connection (see the crate docs for why slots rather than a cache).

use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::streams::budget::Charge;
use crate::streams::metrics::StreamMetrics;
use crate::streams::name::StreamName;

/// One message header: opaque key and value bytes (transports check their own grammar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The key.
    pub key: Bytes,
    /// The value.
    pub value: Bytes,
}

/// What a publisher sends: a payload and optional headers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    /// The payload; refcounted, never copied by the broker.
    pub payload: Bytes,
    /// Headers; empty for most messages (an empty `Vec` does not allocate).
    pub headers: Vec<Header>,
}

impl Message {
    /// A message without headers.
    pub fn new(payload: impl Into<Bytes>) -> Self {
        Self {
            payload: payload.into(),
            headers: Vec::new(),
        }
    }

    /// Bytes the message counts for in batches, queues and budgets: payload plus header keys
    /// and values.
    pub fn size_bytes(&self) -> u64 {
        content_bytes(&self.payload, &self.headers)
    }
}

/// Payload plus header keys and values: what a message or event counts for.
pub(crate) fn content_bytes(payload: &[u8], headers: &[Header]) -> u64 {
    let headers: usize = headers.iter().map(|h| h.key.len() + h.value.len()).sum();
    (payload.len() + headers) as u64
}

/// A message as delivered: its publish timestamp and content. Its sequence number is the
/// batch's first sequence plus its index (a batch holds consecutive sequence numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Milliseconds since the Unix epoch when the broker took the message.
    pub timestamp_ms: u64,
    /// The payload.
    pub payload: Bytes,
    /// The headers.
    pub headers: Vec<Header>,
}

impl Event {
    /// A record read from a stream's log, as delivered (its offset is the caller's).
    pub(crate) fn from_record(record: quiver_log::Record) -> Event {
        Event {
            timestamp_ms: u64::try_from(record.timestamp_ms).unwrap_or(0),
            payload: record.value,
            headers: record
                .headers
                .into_iter()
                .map(|h| Header {
                    key: h.key,
                    value: h.value,
                })
                .collect(),
        }
    }
}

/// How many transport encodings one batch can cache. Version 1 of the native protocol needs
/// at most two (with and without headers); the others are spare for a later version or
/// front end.
pub const ENCODING_SLOTS: usize = 4;

/// Which of a batch's encoding slots a transport uses. Each transport encoding picks one
/// slot for good and never shares it with a different encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EncodingSlot {
    /// Slot 0.
    S0 = 0,
    /// Slot 1.
    S1 = 1,
    /// Slot 2.
    S2 = 2,
    /// Slot 3.
    S3 = 3,
}

/// Consecutive events of one stream, delivered together and shared by all its subscribers.
pub struct Batch {
    stream: StreamName,
    first_sequence: u64,
    events: Vec<Event>,
    bytes: u64,
    encodings: [OnceLock<Bytes>; ENCODING_SLOTS],
    pub(crate) metrics: Arc<StreamMetrics>,
    /// Released when the last holder drops the batch.
    _charge: Charge,
}

impl Batch {
    pub(crate) fn new(
        stream: StreamName,
        first_sequence: u64,
        events: Vec<Event>,
        bytes: u64,
        metrics: Arc<StreamMetrics>,
        charge: Charge,
    ) -> Self {
        debug_assert!(
            !events.is_empty(),
            "a batch is sealed only with at least one event"
        );
        let encodings = Default::default();
        Self {
            stream,
            first_sequence,
            events,
            bytes,
            encodings,
            metrics,
            _charge: charge,
        }
    }

    /// The stream the events come from.
    pub fn stream(&self) -> &StreamName {
        &self.stream
    }

    /// Sequence number of the first event.
    pub fn first_sequence(&self) -> u64 {
        self.first_sequence
    }

    /// Sequence number of the last event.
    pub fn last_sequence(&self) -> u64 {
        self.first_sequence + self.events.len() as u64 - 1
    }

    /// Number of events (at least 1).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Always false: a batch is never empty. (Present for API symmetry with `len`.)
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Payload and header bytes of all events.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The events, in sequence order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The events with their sequence numbers.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, &Event)> {
        let first = self.first_sequence;
        self.events
            .iter()
            .enumerate()
            .map(move |(i, event)| (first + i as u64, event))
    }

    /// The encoding in `slot`, computed by `encode` on first use and shared afterwards.
    /// Concurrent first callers wait for one `encode` rather than running it twice.
    pub fn encoded(&self, slot: EncodingSlot, encode: impl FnOnce(&Batch) -> Bytes) -> Bytes {
        self.encodings[slot as usize]
            .get_or_init(|| encode(self))
            .clone()
    }

    /// The encoding in `slot`, if a transport has made it.
    pub fn encoded_if_present(&self, slot: EncodingSlot) -> Option<&Bytes> {
        self.encodings[slot as usize].get()
    }
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("stream", &self.stream)
            .field("first_sequence", &self.first_sequence)
            .field("events", &self.events.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The batch a stream is filling: consecutive events and the budget charge for their bytes.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub(crate) first_sequence: u64,
    pub(crate) events: Vec<Event>,
    pub(crate) bytes: u64,
    pub(crate) charge: Charge,
    /// When the batch must be delivered at the latest (set by its first event).
    pub(crate) deadline: Option<tokio::time::Instant>,
}

impl Pending {
    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Takes the pending events out as a batch, leaving an empty pending batch.
    pub(crate) fn seal(&mut self, stream: &StreamName, metrics: &Arc<StreamMetrics>) -> Arc<Batch> {
        let taken = std::mem::take(self);
        Arc::new(Batch::new(
            stream.clone(),
            taken.first_sequence,
            taken.events,
            taken.bytes,
            Arc::clone(metrics),
            taken.charge,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_once_per_slot() {
        let metrics = Arc::new(StreamMetrics::default());
        let event = Event {
            timestamp_ms: 7,
            payload: Bytes::from_static(b"hi"),
            headers: Vec::new(),
        };
        let batch = Batch::new(
            StreamName::new("a/b/c").unwrap(),
            10,
            vec![event.clone(), event],
            4,
            metrics,
            Charge::default(),
        );
        assert_eq!(
            (batch.first_sequence(), batch.last_sequence(), batch.len()),
            (10, 11, 2)
        );
        assert_eq!(
            batch.iter().map(|(seq, _)| seq).collect::<Vec<_>>(),
            [10, 11]
        );
        let mut calls = 0;
        let first = batch.encoded(EncodingSlot::S0, |b| {
            calls += 1;
            Bytes::from(format!("{}", b.len()))
        });
        let again = batch.encoded(EncodingSlot::S0, |_| unreachable!("slot 0 is filled"));
        assert_eq!(calls, 1);
        assert_eq!(first.as_ptr(), again.as_ptr());
        assert!(batch.encoded_if_present(EncodingSlot::S1).is_none());
    }

    #[test]
    fn message_size_counts_headers() {
        let mut message = Message::new(Bytes::from_static(b"12345"));
        message.headers.push(Header {
            key: Bytes::from_static(b"k"),
            value: Bytes::from_static(b"vv"),
        });
        assert_eq!(message.size_bytes(), 8);
    }
}
