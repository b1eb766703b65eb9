//! How a [`Publisher`](super::Publisher) batches, and the bounds of each setting.

use std::time::Duration;

use quiver_wire::AckMode;
use quiver_wire::limits::MAX_BATCH_COUNT;

use crate::error::PublisherError;

/// Largest `max_batch_bytes`: half a frame (`MAX_FRAME_LEN` is 8 MiB), so a full batch plus
/// the per-message framing always fits one PublishBatch; the broker seals its own delivery
/// batches at 4 MiB too.
pub const MAX_PUBLISHER_BATCH_BYTES: usize = 4 << 20;

/// Most batches one publisher may have unacknowledged: each holds a slot in the
/// connection's table of pending requests and its messages in memory.
pub const MAX_IN_FLIGHT_BATCHES: usize = 1024;

/// Longest `linger`: past a second, batching costs more latency than any live stream wants
/// (the broker's own delivery delay has the same bound).
pub const MAX_LINGER: Duration = Duration::from_secs(1);

/// How a [`Publisher`](super::Publisher) batches and how many batches it keeps in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublisherOptions {
    /// How long a batch may wait for more messages after its first before it is sent.
    /// Zero: sent as soon as an in-flight slot is free (batches still form while every
    /// slot is taken).
    pub linger: Duration,
    /// Most messages per batch (1 to `MAX_BATCH_COUNT`, 4096).
    pub max_batch_events: usize,
    /// Most bytes per batch, payloads and header keys and values (1 to
    /// [`MAX_PUBLISHER_BATCH_BYTES`]); a single larger message is sent as a batch of its
    /// own.
    pub max_batch_bytes: usize,
    /// Most batches sent and not yet acknowledged (1 to [`MAX_IN_FLIGHT_BATCHES`]). With
    /// ack `none` a batch counts until it is queued for the socket.
    pub max_in_flight_batches: usize,
    /// What the server promises before it acks a batch.
    pub ack: AckMode,
}

impl Default for PublisherOptions {
    /// No linger, batches of at most 256 messages and 1 MiB (the broker's default delivery
    /// batch), 8 batches in flight, ack `accepted`.
    fn default() -> Self {
        PublisherOptions {
            linger: Duration::ZERO,
            max_batch_events: 256,
            max_batch_bytes: 1 << 20,
            max_in_flight_batches: 8,
            ack: AckMode::Accepted,
        }
    }
}

impl PublisherOptions {
    /// Sets [`Self::linger`].
    pub fn linger(mut self, linger: Duration) -> Self {
        self.linger = linger;
        self
    }

    /// Sets [`Self::max_batch_events`].
    pub fn max_batch_events(mut self, events: usize) -> Self {
        self.max_batch_events = events;
        self
    }

    /// Sets [`Self::max_batch_bytes`].
    pub fn max_batch_bytes(mut self, bytes: usize) -> Self {
        self.max_batch_bytes = bytes;
        self
    }

    /// Sets [`Self::max_in_flight_batches`].
    pub fn max_in_flight_batches(mut self, batches: usize) -> Self {
        self.max_in_flight_batches = batches;
        self
    }

    /// Sets [`Self::ack`].
    pub fn ack(mut self, ack: AckMode) -> Self {
        self.ack = ack;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), PublisherError> {
        let check = |option, value: u64, min: u64, max: u64| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(PublisherError::InvalidOption {
                    option,
                    value,
                    min,
                    max,
                })
            }
        };
        let linger_us = u64::try_from(self.linger.as_micros()).unwrap_or(u64::MAX);
        check("linger_us", linger_us, 0, MAX_LINGER.as_micros() as u64)?;
        check(
            "max_batch_events",
            self.max_batch_events as u64,
            1,
            MAX_BATCH_COUNT as u64,
        )?;
        check(
            "max_batch_bytes",
            self.max_batch_bytes as u64,
            1,
            MAX_PUBLISHER_BATCH_BYTES as u64,
        )?;
        check(
            "max_in_flight_batches",
            self.max_in_flight_batches as u64,
            1,
            MAX_IN_FLIGHT_BATCHES as u64,
        )
    }
}

/// A full batch fits one frame: its counted bytes, plus per message the payload length and
/// the header block's framing (count, and key and value lengths), plus the stream name.
const _: () = assert!(
    MAX_PUBLISHER_BATCH_BYTES
        + MAX_BATCH_COUNT * (4 + 1 + 3 * quiver_wire::limits::MAX_HEADER_COUNT)
        + 512
        <= quiver_wire::limits::MAX_FRAME_LEN
);
