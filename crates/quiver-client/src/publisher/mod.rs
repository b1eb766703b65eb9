//! [`Publisher`]: publishes to one stream with client-side batching and several batches in
//! flight on the client's one connection.
//!
//! `publish` only buffers. A batch is sealed when it holds `max_batch_events` messages or
//! `max_batch_bytes` bytes, or when `linger` has passed since its first message, and only
//! while fewer than `max_in_flight_batches` sealed batches are unacknowledged; a sealed
//! batch is sent at once. When every in-flight slot is taken, messages keep collecting
//! (batches grow under load) until the buffer is full, and only then does `publish` wait.
//!
//! Order: batches are sealed in publish order and sent in seal order (one send at a time,
//! under `sending`), and the server handles one connection's frames in arrival order, so a
//! publisher's messages get increasing sequence numbers however many batches are in
//! flight. Acks come back to a callback on the connection's reader, which frees the slot,
//! seals what became due, and records failures, reported by the next `publish` or `flush`.

mod options;
mod tracker;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use quiver_wire::limits::MAX_MESSAGE_LEN;
use quiver_wire::{AckMode, Frame, Headers, Message, Ping, PublishBatch, StreamName};
use tokio::sync::Notify;
use tokio::time::Instant;

pub use options::{MAX_IN_FLIGHT_BATCHES, MAX_LINGER, MAX_PUBLISHER_BATCH_BYTES, PublisherOptions};

use crate::Client;
use crate::error::{PublisherError, RequestError};
use tracker::Tracker;

/// What [`Publisher::buffer`] did with a payload.
enum Buffered {
    /// Buffered; `sealed`: batches wait to be sent; `wake`: the linger task must set a
    /// timer.
    Taken { sealed: bool, wake: bool },
    /// Not taken: the buffer is full and every slot is in flight.
    NoRoom { in_flight: usize },
}

/// What a publisher and its linger task share.
struct Inner {
    client: Client,
    stream: StreamName,
    tracker: Arc<Tracker>,
    /// Held while sealed batches are handed to the connection, so they go in seal order.
    sending: tokio::sync::Mutex<()>,
}

impl Inner {
    /// Hands every sealed batch to the connection, in order.
    async fn send_sealed(&self) {
        let _sending = self.sending.lock().await;
        loop {
            let Some(messages) = self.tracker.lock().sealed.pop_front() else {
                return;
            };
            self.send(messages).await;
        }
    }

    async fn send(&self, messages: Vec<Message>) {
        let count = messages.len();
        let ack = self.tracker.options.ack;
        let batch = PublishBatch {
            stream: self.stream.clone(),
            ack,
            messages,
        };
        let connection = self.client.shared.connection();
        if ack == AckMode::None {
            let result = connection.send(&batch).await;
            self.tracker.complete(count, result);
            return;
        }
        let tracker = Arc::clone(&self.tracker);
        let callback = Box::new(move |reply: Result<Frame, RequestError>| {
            let result = reply.and_then(|frame| match frame {
                // Fewer when the stream dropped repeats (de-duplication): all stored.
                Frame::PublishAck(ack) if ack.count as usize <= count => Ok(()),
                other => Err(RequestError::UnexpectedReply {
                    request: "PublishBatch",
                    got: format!("{:?}", other.frame_type()),
                }),
            });
            tracker.complete(count, result);
        });
        connection.request_then(&batch, callback).await;
    }

    /// Seals what is buffered (waiting for a free slot), sends it, and waits until no
    /// batch is in flight, at most the client's request timeout.
    async fn flush(&self) -> Result<(), PublisherError> {
        let timeout = self.client.shared.connection().request_timeout();
        let deadline = Instant::now() + timeout;
        loop {
            let progress = self.tracker.progress.notified();
            tokio::pin!(progress);
            progress.as_mut().enable();
            let (empty, sealed, outstanding) = {
                let mut state = self.tracker.lock();
                state.urgent = true;
                let sealed = self.tracker.seal_due(&mut state, None);
                (state.buffer.is_empty(), sealed, state.outstanding)
            };
            if sealed {
                self.send_sealed().await;
                continue;
            }
            if empty && outstanding == 0 {
                break;
            }
            if tokio::time::timeout_at(deadline, progress).await.is_err() {
                self.tracker.lock().urgent = false;
                return Err(PublisherError::Timeout {
                    after: timeout,
                    in_flight: outstanding,
                });
            }
        }
        let failures = {
            let mut state = self.tracker.lock();
            state.urgent = false;
            Tracker::take_failures(&mut state)
        };
        if let Some(error) = failures {
            return Err(error);
        }
        if self.tracker.options.ack == AckMode::None {
            // The server handles a connection's frames in order: once the Ping is
            // answered, every batch sent before it has been taken (or refused, which only
            // the server's log and this client's debug log say with ack `none`).
            match self.client.shared.connection().request(&Ping).await {
                Ok(_) => {}
                Err(source) => {
                    return Err(PublisherError::Unconfirmed { source });
                }
            }
        }
        Ok(())
    }
}

/// Publishes to one stream in batches, with several batches in flight on the client's
/// connection. Made by [`Client::publisher`].
///
/// [`publish`](Self::publish) returns once the message is buffered; it waits only when
/// `max_in_flight_batches` batches are unacknowledged and the buffer is full
/// (backpressure). Messages reach the stream in the order they were published, however
/// many batches are in flight. A batch the server refuses (or that the connection lost) is
/// reported by the next `publish` or [`flush`](Self::flush) as
/// [`PublisherError::NotPublished`], which says how many messages it concerned; messages
/// published before and after it are unaffected.
///
/// [`close`](Self::close) flushes and reports. Dropping a publisher sends what it buffered
/// (from a task of its own, without waiting for acks; failures are then only logged at
/// debug level), so call `close` or `flush` to know the outcome. Batches sent on a
/// connection that is then lost are reported as not published; the publisher goes on over
/// the reconnected connection.
///
/// ```no_run
/// use std::time::Duration;
///
/// use quiver_client::{AckMode, Client, PublisherOptions};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::connect("quiver://127.0.0.1:7070").await?;
/// let options = PublisherOptions::default()
///     .linger(Duration::from_millis(1))
///     .max_batch_events(64)
///     .max_batch_bytes(256 << 10)
///     .max_in_flight_batches(8)
///     .ack(AckMode::Accepted);
/// let publisher = client.publisher("acme/orders/created", options)?;
/// for i in 0..10_000 {
///     publisher.publish(format!("order {i}")).await?;
/// }
/// // Sends the rest and waits until every batch is acknowledged.
/// publisher.close().await?;
/// # Ok(())
/// # }
/// ```
pub struct Publisher {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("stream", &self.inner.stream.as_str())
            .field("options", &self.inner.tracker.options)
            .finish_non_exhaustive()
    }
}

impl Publisher {
    pub(crate) fn new(
        client: &Client,
        stream: &str,
        options: PublisherOptions,
    ) -> Result<Publisher, PublisherError> {
        options.validate()?;
        let stream = StreamName::new(stream).map_err(PublisherError::InvalidName)?;
        let tracker = Arc::new(Tracker {
            options,
            state: Mutex::default(),
            progress: Notify::new(),
            work: Notify::new(),
        });
        let inner = Arc::new(Inner {
            client: client.clone(),
            stream,
            tracker,
            sending: tokio::sync::Mutex::new(()),
        });
        tokio::spawn(linger(Arc::clone(&inner)));
        Ok(Publisher { inner })
    }

    /// The stream this publisher writes to.
    pub fn stream(&self) -> &str {
        self.inner.stream.as_str()
    }

    /// Buffers `payload` for the next batch; waits only while the buffer is full and
    /// every in-flight slot is taken (at most the client's request timeout, then
    /// [`PublisherError::Timeout`]). An earlier batch's failure is returned instead, and
    /// this payload is then not taken.
    pub async fn publish(&self, payload: impl Into<Bytes>) -> Result<(), PublisherError> {
        self.publish_message(Headers::new(), 0, payload.into())
            .await
    }

    /// Like [`publish`](Self::publish), with headers (keys and values within the
    /// protocol's header limits, else [`PublisherError::InvalidHeaders`]).
    pub async fn publish_with_headers(
        &self,
        headers: &[(&str, &[u8])],
        payload: impl Into<Bytes>,
    ) -> Result<(), PublisherError> {
        let encoded =
            Headers::from_pairs(headers.iter().copied()).map_err(PublisherError::InvalidHeaders)?;
        let header_bytes = headers
            .iter()
            .map(|(key, value)| key.len() + value.len())
            .sum();
        self.publish_message(encoded, header_bytes, payload.into())
            .await
    }

    async fn publish_message(
        &self,
        headers: Headers,
        header_bytes: usize,
        payload: Bytes,
    ) -> Result<(), PublisherError> {
        if payload.len() > MAX_MESSAGE_LEN {
            return Err(PublisherError::MessageTooLarge {
                bytes: payload.len(),
                max: MAX_MESSAGE_LEN,
            });
        }
        let size = payload.len() + header_bytes;
        let message = Message { headers, payload };
        let tracker = &self.inner.tracker;
        let mut message = Some(message);
        let mut deadline = None;
        loop {
            let mut buffered = self.buffer(&mut message, size)?;
            if let Buffered::NoRoom { in_flight } = buffered {
                // Registered before looking again, so a slot freed in between is not missed.
                let progress = tracker.progress.notified();
                tokio::pin!(progress);
                progress.as_mut().enable();
                buffered = self.buffer(&mut message, size)?;
                if let Buffered::NoRoom { .. } = buffered {
                    let timeout = self.inner.client.shared.connection().request_timeout();
                    let at = *deadline.get_or_insert_with(|| Instant::now() + timeout);
                    if tokio::time::timeout_at(at, progress).await.is_err() {
                        return Err(PublisherError::Timeout {
                            after: timeout,
                            in_flight,
                        });
                    }
                    continue;
                }
            }
            if let Buffered::Taken { sealed, wake } = buffered {
                if wake {
                    tracker.work.notify_one();
                }
                if sealed {
                    self.inner.send_sealed().await;
                }
            }
            return Ok(());
        }
    }

    /// Takes `message` (of `size` bytes) into the buffer (sealing the buffer first when it
    /// has no room for it and a slot is free), or says there is no room.
    fn buffer(
        &self,
        message: &mut Option<Message>,
        size: usize,
    ) -> Result<Buffered, PublisherError> {
        let tracker = &self.inner.tracker;
        let options = tracker.options;
        let mut state = tracker.lock();
        if let Some(error) = Tracker::take_failures(&mut state) {
            return Err(error);
        }
        let fits = state.buffer.is_empty()
            || (state.buffer.len() < options.max_batch_events
                && state.buffer_bytes + size <= options.max_batch_bytes);
        if !fits {
            if state.outstanding >= options.max_in_flight_batches {
                return Ok(Buffered::NoRoom {
                    in_flight: state.outstanding,
                });
            }
            tracker.seal(&mut state);
        }
        if state.buffer.is_empty() {
            state.first_at = Some(Instant::now());
        }
        state.buffer_bytes += size;
        state.buffer.push(
            message
                .take()
                .expect("taken only once, then the caller returns"),
        );
        tracker.seal_due(&mut state, None);
        // A lingering buffer needs the linger task's timer.
        let wake = !state.buffer.is_empty() && !state.armed;
        state.armed |= wake;
        Ok(Buffered::Taken {
            sealed: !state.sealed.is_empty(),
            wake,
        })
    }

    /// Sends what is buffered and waits until every sent batch is acknowledged (with ack
    /// `none`: taken by the server, as a Ping round trip shows), at most the client's
    /// request timeout. Returns the first failure not yet reported, naming how many
    /// messages failed.
    pub async fn flush(&self) -> Result<(), PublisherError> {
        self.inner.flush().await
    }

    /// Flushes, then stops the publisher.
    pub async fn close(self) -> Result<(), PublisherError> {
        self.inner.flush().await
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.inner.tracker.lock().closing = true;
        self.inner.tracker.work.notify_one();
    }
}

/// The linger task: seals a buffer whose linger has passed, sends what acks sealed, and
/// once the publisher is dropped sends what is left and ends.
async fn linger(inner: Arc<Inner>) {
    let tracker = &inner.tracker;
    loop {
        let work = tracker.work.notified();
        tokio::pin!(work);
        work.as_mut().enable();
        let (has_sealed, timer, done) = {
            let mut state = tracker.lock();
            let now = Instant::now();
            tracker.seal_due(&mut state, Some(now));
            let deadline = state.first_at.map(|first| first + tracker.options.linger);
            // A buffer still there past its deadline waits for a slot: an ack seals it.
            let timer = deadline.filter(|at| *at > now);
            state.armed = deadline.is_some();
            state.waiting_for_slot = deadline.is_some() && timer.is_none();
            let done = state.closing && state.buffer.is_empty() && state.sealed.is_empty();
            (!state.sealed.is_empty(), timer, done)
        };
        if has_sealed {
            inner.send_sealed().await;
            continue;
        }
        if done {
            break;
        }
        match timer {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = &mut work => {}
                }
            }
            None => work.await,
        }
    }
    let failures = Tracker::take_failures(&mut tracker.lock());
    if let Some(error) = failures {
        tracing::debug!(%error, stream = %inner.stream.as_str(), "a dropped publisher's batches were not all published");
    }
}
