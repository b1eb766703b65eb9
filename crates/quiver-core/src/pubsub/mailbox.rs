//! One subscriber's mailbox: what the channels delivered and its connection has not taken
//! yet, bounded the way Redis bounds a pub/sub client's output buffer.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::Notify;

use crate::streams::{Batch, lock};

/// Encodings one [`Published`] caches: a transport picks one slot per encoding (RESP: one
/// per protocol version).
pub const PUBLISHED_SLOTS: usize = 2;

/// Framing a message costs beyond its channel and payload bytes, counted against the
/// output limits (a RESP push of a short message is about this much).
const FRAMING_BYTES: u64 = 32;

/// Redis's `client-output-buffer-limit pubsub`: a subscriber whose undelivered messages
/// reach `hard_bytes`, or stay above `soft_bytes` for longer than `soft_period`, is
/// disconnected. A zero byte limit is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Disconnect at once at this many bytes.
    pub hard_bytes: u64,
    /// Disconnect when above this many bytes for longer than `soft_period`.
    pub soft_bytes: u64,
    /// How long a subscriber may stay above `soft_bytes`.
    pub soft_period: Duration,
}

impl Default for OutputLimits {
    /// Redis 7.0's defaults: `pubsub 32mb 8mb 60`.
    fn default() -> Self {
        Self {
            hard_bytes: 32 << 20,
            soft_bytes: 8 << 20,
            soft_period: Duration::from_secs(60),
        }
    }
}

/// The limits, readable without a lock on every publish.
#[derive(Debug)]
pub(crate) struct SharedLimits {
    hard: AtomicU64,
    soft: AtomicU64,
    soft_ms: AtomicU64,
}

impl SharedLimits {
    pub(crate) fn new(limits: OutputLimits) -> Self {
        let shared = Self {
            hard: AtomicU64::new(0),
            soft: AtomicU64::new(0),
            soft_ms: AtomicU64::new(0),
        };
        shared.set(limits);
        shared
    }

    pub(crate) fn set(&self, limits: OutputLimits) {
        let ms = u64::try_from(limits.soft_period.as_millis()).unwrap_or(u64::MAX);
        self.hard.store(limits.hard_bytes, Ordering::Relaxed);
        self.soft.store(limits.soft_bytes, Ordering::Relaxed);
        self.soft_ms.store(ms, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> OutputLimits {
        OutputLimits {
            hard_bytes: self.hard.load(Ordering::Relaxed),
            soft_bytes: self.soft.load(Ordering::Relaxed),
            soft_period: Duration::from_millis(self.soft_ms.load(Ordering::Relaxed)),
        }
    }
}

/// Why a subscriber was disconnected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// Its undelivered messages reached the hard limit.
    HardLimit { limit: u64, bytes: u64 },
    /// Its undelivered messages stayed above the soft limit for longer than its period.
    SoftLimit { limit: u64, period: Duration },
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HardLimit { limit, bytes } => write!(
                f,
                "pub/sub output limit: {bytes} bytes undelivered, the hard limit is {limit} (client-output-buffer-limit pubsub)"
            ),
            Self::SoftLimit { limit, period } => write!(
                f,
                "pub/sub output limit: more than {limit} bytes undelivered for {period:?} (client-output-buffer-limit pubsub soft limit)"
            ),
        }
    }
}

/// The messages of one publish to one channel, shared by every subscriber it reaches and
/// encoded once per transport encoding (see [`Published::write_encoded`]).
pub struct Published {
    channel: Bytes,
    payload: Payload,
    shard: bool,
    encodings: [OnceLock<Bytes>; PUBLISHED_SLOTS],
}

enum Payload {
    One(Bytes),
    /// A batch a stream sealed: one message per event.
    Batch(Arc<Batch>),
}

impl Published {
    pub(crate) fn one(channel: Bytes, payload: Bytes, shard: bool) -> Self {
        Self::new(channel, Payload::One(payload), shard)
    }

    pub(crate) fn batch(channel: Bytes, batch: Arc<Batch>) -> Self {
        Self::new(channel, Payload::Batch(batch), false)
    }

    fn new(channel: Bytes, payload: Payload, shard: bool) -> Self {
        debug_assert!(!matches!(&payload, Payload::Batch(batch) if batch.is_empty()));
        Self {
            channel,
            payload,
            shard,
            encodings: Default::default(),
        }
    }

    /// The channel.
    pub fn channel(&self) -> &Bytes {
        &self.channel
    }

    /// Whether it was published to a shard channel (SPUBLISH).
    pub fn is_shard(&self) -> bool {
        self.shard
    }

    /// Number of messages (1, or a stream batch's events).
    pub fn len(&self) -> usize {
        match &self.payload {
            Payload::One(_) => 1,
            Payload::Batch(batch) => batch.len(),
        }
    }

    /// Always false: a publish carries at least one message.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Every message's payload, in order.
    pub fn payloads(&self) -> impl Iterator<Item = &Bytes> {
        let (one, batch) = match &self.payload {
            Payload::One(payload) => (Some(payload), None),
            Payload::Batch(batch) => (None, Some(batch.events().iter().map(|e| &e.payload))),
        };
        one.into_iter().chain(batch.into_iter().flatten())
    }

    /// Appends the encoding in `slot` (below [`PUBLISHED_SLOTS`]) to `out`. While another
    /// subscriber still holds the message, `encode` makes it once, into a buffer of its own
    /// that every subscriber copies afterwards; the last holder with none made encodes
    /// straight into `out`, as nobody else can need it.
    pub fn write_encoded(
        self: &Arc<Self>,
        slot: usize,
        out: &mut BytesMut,
        encode: impl FnOnce(&Published, &mut BytesMut),
    ) {
        let cell = &self.encodings[slot];
        if cell.get().is_none() && Arc::strong_count(self) == 1 {
            return encode(self, out);
        }
        out.extend_from_slice(cell.get_or_init(|| {
            let mut own = BytesMut::with_capacity(self.bytes(None) as usize);
            encode(self, &mut own);
            own.freeze()
        }));
    }

    /// What it counts for against a subscriber's output limits.
    fn bytes(&self, pattern: Option<&Bytes>) -> u64 {
        let payloads: usize = self.payloads().map(Bytes::len).sum();
        let per_message =
            (self.channel.len() + pattern.map_or(0, Bytes::len)) as u64 + FRAMING_BYTES;
        payloads as u64 + per_message * self.len() as u64
    }
}

impl fmt::Debug for Published {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Published")
            .field("channel", &self.channel)
            .field("messages", &self.len())
            .field("shard", &self.shard)
            .finish()
    }
}

/// One delivery.
#[derive(Debug, Clone)]
pub enum Entry {
    /// What was published, and the pattern it matched (for a pattern subscription;
    /// `None` for a channel or shard-channel subscription).
    Message {
        pattern: Option<Bytes>,
        published: Arc<Published>,
    },
    /// Client-side caching: these keys may have changed (every key, `None`, after a
    /// flush). `redirected`: sent on behalf of another client that redirects here.
    Invalidate {
        keys: Option<Arc<[Bytes]>>,
        redirected: bool,
    },
    /// The client this one redirects its invalidations to is gone.
    RedirectBroken { client: u64 },
}

impl Entry {
    /// What it counts for against the output limits.
    fn bytes(&self) -> u64 {
        match self {
            Entry::Message { pattern, published } => published.bytes(pattern.as_ref()),
            Entry::Invalidate { keys, .. } => {
                let keys: usize = keys.iter().flat_map(|k| k.iter()).map(Bytes::len).sum();
                keys as u64 + FRAMING_BYTES
            }
            Entry::RedirectBroken { .. } => FRAMING_BYTES,
        }
    }
}

/// A client's mailbox, before and after it subscribes: what invalidations are sent to.
/// Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Inbox(pub(crate) Arc<Mailbox>);

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Entry>,
    bytes: u64,
    above_soft_since: Option<Instant>,
    closed: Option<Closed>,
}

/// The result of offering an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    Queued,
    /// This push closed the mailbox (a limit).
    ClosedNow,
    /// Closed before.
    Closed,
}

/// A subscriber's queue of deliveries.
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    state: Mutex<State>,
    ready: Notify,
    /// Notified once when a limit closes the mailbox, so that a connection stuck
    /// writing to a client that does not read stops at once.
    cut: Notify,
}

impl Mailbox {
    /// Queues `entry` unless that breaks `limits`, which closes the mailbox instead. The
    /// consumer is woken when its queue was empty (once per batch it drains).
    pub(crate) fn push(&self, entry: Entry, limits: &OutputLimits) -> Pushed {
        let bytes = entry.bytes();
        let mut state = lock(&self.state);
        if state.closed.is_some() {
            return Pushed::Closed;
        }
        let total = state.bytes + bytes;
        let closed = if limits.hard_bytes > 0 && total >= limits.hard_bytes {
            Some(Closed::HardLimit {
                limit: limits.hard_bytes,
                bytes: total,
            })
        } else if limits.soft_bytes > 0 && total > limits.soft_bytes {
            let now = Instant::now();
            let since = *state.above_soft_since.get_or_insert(now);
            (now.saturating_duration_since(since) > limits.soft_period).then_some(
                Closed::SoftLimit {
                    limit: limits.soft_bytes,
                    period: limits.soft_period,
                },
            )
        } else {
            None
        };
        if let Some(closed) = closed {
            state.queue.clear();
            state.bytes = 0;
            state.closed = Some(closed);
            drop(state);
            self.cut.notify_one();
            self.ready.notify_one();
            return Pushed::ClosedNow;
        }
        let was_idle = state.queue.is_empty();
        state.queue.push_back(entry);
        state.bytes = total;
        drop(state);
        if was_idle {
            self.ready.notify_one();
        }
        Pushed::Queued
    }

    /// Moves every queued entry to `out`; the reason if the mailbox was closed.
    pub(crate) fn drain(&self, out: &mut Vec<Entry>) -> Result<(), Closed> {
        let mut state = lock(&self.state);
        if let Some(closed) = &state.closed {
            return Err(closed.clone());
        }
        out.extend(state.queue.drain(..));
        state.bytes = 0;
        state.above_soft_since = None;
        Ok(())
    }

    /// Waits until something is queued or the mailbox is closed (may wake spuriously).
    pub(crate) async fn ready(&self) {
        self.ready.notified().await;
    }

    /// Waits until a limit closes the mailbox; why.
    pub(crate) async fn cut(&self) -> Closed {
        loop {
            if let Some(closed) = self.closed() {
                return closed;
            }
            self.cut.notified().await;
        }
    }

    /// Why it was closed, if it was.
    pub(crate) fn closed(&self) -> Option<Closed> {
        lock(&self.state).closed.clone()
    }
}
