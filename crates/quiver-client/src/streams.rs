//! Stream administration: create durable (or live) streams with their retention, describe,
//! list and delete them, and publish with a `committed` ack.

use std::time::Duration;

use bytes::Bytes;
use quiver_wire::{
    CreateStream, DeleteStream, DescribeStream, Frame, ListStreams, Policy, PublishAck, Storage,
    StreamInfo, StreamSettings,
};
use tokio::sync::oneshot;

use crate::error::RequestError;
use crate::{AckMode, Client, plain_batch, publish_ack, stream_name, unexpected};

/// The ack of a batch queued with [`Client::publish_batch_queued`]: a future that ends
/// with the ack, or with [`RequestError::Timeout`] once the client's request timeout has
/// passed since the batch was queued.
#[derive(Debug)]
pub struct PendingAck {
    receiver: oneshot::Receiver<Result<PublishAck, RequestError>>,
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    timeout: Duration,
}

impl std::future::Future for PendingAck {
    type Output = Result<PublishAck, RequestError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let std::task::Poll::Ready(reply) = std::pin::Pin::new(&mut self.receiver).poll(cx) {
            return std::task::Poll::Ready(reply.unwrap_or(Err(RequestError::Disconnected {
                reason: "the connection ended before the ack".to_owned(),
            })));
        }
        let after = self.timeout;
        self.deadline
            .as_mut()
            .poll(cx)
            .map(|()| Err(RequestError::Timeout { after }))
    }
}

impl PendingAck {
    /// The ack (the future itself, which ends at the request timeout).
    pub async fn wait(self) -> Result<PublishAck, RequestError> {
        self.await
    }
}

/// Streams asked for per ListStreams page.
const LIST_PAGE: u16 = 1024;

/// How a stream is created: [`StreamOptions::durable`] stores it, [`StreamOptions::live`]
/// does not; the retention and de-duplication settings apply to durable streams.
///
/// ```
/// use std::time::Duration;
/// use quiver_client::{Storage, StreamOptions};
///
/// let orders = StreamOptions::durable(Storage::Sync)
///     .max_age(Duration::from_secs(7 * 24 * 3600))
///     .max_bytes(10 << 30)
///     .keep_unacked(true);
/// assert_eq!(orders.settings().max_bytes, 10 << 30);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOptions(StreamSettings);

impl StreamOptions {
    /// A live stream: nothing stored.
    pub fn live() -> Self {
        Self(StreamSettings {
            storage: Storage::Live,
            max_age_ms: 0,
            max_bytes: 0,
            max_messages: 0,
            keep_unacked: false,
            dedupe_window_ms: 0,
            policy: Policy::Default,
        })
    }

    /// A durable stream stored with `storage` (`Buffered`, `Os`, `Interval`, `Sync`), no
    /// retention bound, message ids remembered for 2 minutes.
    pub fn durable(storage: Storage) -> Self {
        Self(StreamSettings {
            storage,
            dedupe_window_ms: 120_000,
            ..Self::live().0
        })
    }

    /// Messages older than this may be deleted.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.0.max_age_ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// Keep about this many bytes.
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.0.max_bytes = bytes;
        self
    }

    /// Keep at most the newest this many messages.
    pub fn max_messages(mut self, messages: u64) -> Self {
        self.0.max_messages = messages;
        self
    }

    /// Keep what a consumer group has not acknowledged, whatever the bounds say.
    pub fn keep_unacked(mut self, keep: bool) -> Self {
        self.0.keep_unacked = keep;
        self
    }

    /// How long message ids (header `Quiver-Msg-Id`) are remembered to drop retried
    /// publishes; zero turns that off.
    pub fn dedupe_window(mut self, window: Duration) -> Self {
        self.0.dedupe_window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The slow-subscriber policy (default: the server's).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.0.policy = policy;
        self
    }

    /// The settings as sent.
    pub fn settings(&self) -> StreamSettings {
        self.0
    }
}

impl Client {
    /// Creates `stream` with `options`; fails with `ALREADY_EXISTS` when it exists (its
    /// settings are fixed when it is created).
    ///
    /// ```no_run
    /// use quiver_client::{AckMode, Client, Storage, StreamOptions};
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::connect("quiver://127.0.0.1:7070").await?;
    /// client.create_stream("acme/orders/created", StreamOptions::durable(Storage::Sync)).await?;
    /// // Returns once the message is in the stream's log, fsynced.
    /// let ack = client.publish_committed("acme/orders/created", "order 1").await?;
    /// println!("stored at offset {}", ack.first_sequence);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn create_stream(
        &self,
        stream: &str,
        options: StreamOptions,
    ) -> Result<StreamInfo, RequestError> {
        let create = CreateStream {
            stream: stream_name(stream)?,
            settings: options.0,
        };
        match self.shared.connection().request(&create).await? {
            Frame::StreamInfo(info) => Ok(info),
            other => Err(unexpected("CreateStream", &other)),
        }
    }

    /// The settings and state of `stream`.
    pub async fn describe_stream(&self, stream: &str) -> Result<StreamInfo, RequestError> {
        let describe = DescribeStream {
            stream: stream_name(stream)?,
        };
        match self.shared.connection().request(&describe).await? {
            Frame::StreamInfo(info) => Ok(info),
            other => Err(unexpected("DescribeStream", &other)),
        }
    }

    /// Deletes `stream`, its stored messages and its consumer groups.
    pub async fn delete_stream(&self, stream: &str) -> Result<(), RequestError> {
        let delete = DeleteStream {
            stream: stream_name(stream)?,
        };
        match self.shared.connection().request(&delete).await? {
            Frame::StreamDeleted(_) => Ok(()),
            other => Err(unexpected("DeleteStream", &other)),
        }
    }

    /// Every stream, in name order (page by page).
    pub async fn list_streams(&self) -> Result<Vec<StreamInfo>, RequestError> {
        let mut all = Vec::new();
        let mut after = None;
        loop {
            let list = ListStreams {
                after: after.clone(),
                limit: LIST_PAGE,
            };
            let page = match self.shared.connection().request(&list).await? {
                Frame::StreamList(page) => page,
                other => return Err(unexpected("ListStreams", &other)),
            };
            after = page.streams.last().map(|info| info.stream.clone());
            all.extend(page.streams);
            if !page.more || after.is_none() {
                return Ok(all);
            }
        }
    }

    /// Queues `payloads` as one PublishBatch on the connection and returns the future of
    /// its ack, so that a caller keeps many batches in flight, each acknowledged as `ack`
    /// says, in the order it queued them (the server takes a connection's publishes in
    /// order). The future fails with [`RequestError::Timeout`] after the request timeout;
    /// ack `none`, which has no ack, is refused ([`RequestError::Unsupported`]).
    ///
    /// ```no_run
    /// use quiver_client::{AckMode, Client};
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::connect("quiver://127.0.0.1:7070").await?;
    /// let mut acks = Vec::new();
    /// for n in 0..8 {
    ///     let batch = (0..64).map(|i| format!("event {n}.{i}"));
    ///     acks.push(client.publish_batch_queued("acme/metrics/cpu", batch, AckMode::Committed).await?);
    /// }
    /// for ack in acks {
    ///     println!("stored from offset {}", ack.await?.first_sequence);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn publish_batch_queued<P: Into<Bytes>>(
        &self,
        stream: &str,
        payloads: impl IntoIterator<Item = P>,
        ack: AckMode,
    ) -> Result<PendingAck, RequestError> {
        if ack == AckMode::None {
            return Err(RequestError::Unsupported(
                "a batch with ack none has no ack to wait for: use publish_batch_with",
            ));
        }
        let batch = plain_batch(stream, payloads, ack)?;
        let (sender, receiver) = oneshot::channel();
        let connection = self.shared.connection();
        let timeout = connection.request_timeout();
        let deadline = Box::pin(tokio::time::sleep(timeout));
        let callback = Box::new(move |reply: Result<Frame, RequestError>| {
            let _ = sender.send(reply.and_then(|frame| publish_ack(frame, "PublishBatch")));
        });
        connection.request_then(&batch, callback).await;
        Ok(PendingAck {
            receiver,
            deadline,
            timeout,
        })
    }

    /// Publishes one message to a durable stream and waits until it is in the stream's log
    /// with the stream's durability (ack `committed`); the ack carries its offset.
    pub async fn publish_committed(
        &self,
        stream: &str,
        payload: impl Into<Bytes>,
    ) -> Result<PublishAck, RequestError> {
        let ack = self
            .publish_with(stream, &[], payload, AckMode::Committed)
            .await?;
        Ok(ack.expect("a `committed` publish is answered with an ack"))
    }
}
