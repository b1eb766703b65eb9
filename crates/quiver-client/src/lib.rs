//! `quiver-client`: the async Rust SDK for Quiver's native protocol.
//!
//! Speaks only the frames of `quiver-wire`; it never links the broker, the log or the
//! cache. One [`Client`] is one connection that carries every request, reply and
//! subscription delivery: `quiver://host:port` is TCP, `quiver+quic://host:port` is QUIC,
//! where a control stream carries requests and replies and each subscription's
//! deliveries come on their own stream, so a subscription that is not read does not hold
//! up the others. Requests carry ids, so many are in flight at once and replies
//! may come back in any order (clone the client and call it from many tasks). A reader
//! task routes replies to their callers and deliveries to their [`Subscription`]s; a
//! writer task coalesces queued frames into few writes.
//!
//! The key design decision is that the reader never allocates per event: a delivered
//! batch is handed to its subscription as the received bytes, and events are sliced out
//! of them only when the subscriber reads.
//!
//! ```no_run
//! use quiver_client::{Client, SubscribeOptions, SubscriptionEvent};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::connect("quiver://127.0.0.1:7070").await?;
//! let mut orders = client.subscribe("acme/orders/>", SubscribeOptions::default()).await?;
//! client.publish("acme/orders/created", "order 1").await?;
//! while let Some(event) = orders.next().await {
//!     match event {
//!         SubscriptionEvent::Event(event) => println!("{} #{}: {:?}", event.stream, event.sequence, event.payload),
//!         SubscriptionEvent::Lag { missed } => println!("missed {missed} events"),
//!         SubscriptionEvent::Ended { message, .. } => println!("ended: {message}"),
//!         _ => {}
//!     }
//! }
//! client.cache_set("greeting", "hello", Some(std::time::Duration::from_secs(60))).await?;
//! assert_eq!(client.cache_get("greeting").await?.as_deref(), Some(&b"hello"[..]));
//! # Ok(())
//! # }
//! ```
//!
//! When the connection ends, the client reconnects with exponential backoff and makes
//! every live subscription again ([`ClientOptions::reconnect`]).
//!
//! Over QUIC the server certificate must be trusted explicitly: pin the SHA-256
//! fingerprint a self-signed server logs, or name a CA file, in the options or in the URL
//! (`quiver+quic://127.0.0.1:7071?fingerprint=<hex>`, `?ca=<path>`).
//!
//! ```no_run
//! use quiver_client::{Client, ClientOptions};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let options = ClientOptions::default()
//!     .pin_server_fingerprint("3f5a0c1d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e");
//! let client = Client::connect_with("quiver+quic://127.0.0.1:7071", options).await?;
//! client.publish("acme/orders/created", "order 1").await?;
//! # Ok(())
//! # }
//! ```
//!
//! For throughput, a [`Publisher`] batches on the client (by count, bytes and a linger
//! delay) and keeps several batches in flight, so one publisher is not held to one batch
//! per round trip:
//!
//! ```no_run
//! use quiver_client::{Client, PublisherOptions};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::connect("quiver://127.0.0.1:7070").await?;
//! let publisher = client.publisher("acme/metrics/cpu", PublisherOptions::default())?;
//! for i in 0..100_000 {
//!     publisher.publish(format!("sample {i}")).await?;
//! }
//! publisher.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Dropping the last handle on a client (the client, its clones, its subscriptions and
//! publishers) writes what was queued for the server, then closes the connection.

#![forbid(unsafe_code)]

mod connection;
mod error;
mod groups;
mod publisher;
mod quic;
mod reconnect;
mod streams;
mod subscription;
mod tls;
mod url;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use quiver_wire::{
    CacheDelete, CacheGet, CacheSet, Frame, Headers, Message, Ping, Publish, PublishBatch,
    StreamName, StreamPattern, Subscribe,
};
use tokio::sync::mpsc;

pub use error::{ConnectError, PublisherError, RequestError};
pub use groups::{ConsumerEvent, GroupConsumer, GroupMessage, GroupOptions};
pub use publisher::{
    MAX_IN_FLIGHT_BATCHES, MAX_LINGER, MAX_PUBLISHER_BATCH_BYTES, Publisher, PublisherOptions,
};
pub use quiver_wire::{
    AckMode, Capabilities, ErrorCode, GroupSettings, GroupSummary, MemberSummary, Policy,
    PublishAck, StartPosition, Storage, StreamInfo, StreamSettings,
};
pub use streams::{PendingAck, StreamOptions};
pub use subscription::{Event, SubscribeOptions, Subscription, SubscriptionEvent};
pub use tls::ServerTrust;
pub use url::{DEFAULT_PORT, DEFAULT_QUIC_PORT};

use reconnect::{RECONNECT_DELAY_MAX, RECONNECT_DELAY_MIN, Shared};
use subscription::SUBSCRIPTION_BUFFER_BATCHES;

/// How a client connects and how long it waits.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Longest wait for the connection (TCP, or the QUIC and TLS handshakes) and the
    /// Hello exchange.
    pub connect_timeout: Duration,
    /// Longest wait for the reply to one request.
    pub request_timeout: Duration,
    /// The server's `native.auth_token`, if it has one.
    pub auth_token: Option<Bytes>,
    /// Shown in the server's logs.
    pub client_name: String,
    /// Reconnect when the connection ends, and make every live subscription again
    /// (subscribers see [`SubscriptionEvent::Resubscribed`]). Requests made while
    /// disconnected fail at once with [`RequestError::Disconnected`].
    pub reconnect: bool,
    /// First wait before reconnecting; doubled after each failed attempt.
    pub reconnect_delay_min: Duration,
    /// Longest wait between reconnect attempts.
    pub reconnect_delay_max: Duration,
    /// How a `quiver+quic://` server's certificate is trusted (see
    /// [`Self::pin_server_fingerprint`], [`Self::trust_ca_file`]); QUIC needs it here or in
    /// the URL (`?fingerprint=<hex>`, `?ca=<path>`); unused over TCP.
    pub server_trust: Option<ServerTrust>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            auth_token: None,
            client_name: format!("quiver-client {}", env!("CARGO_PKG_VERSION")),
            reconnect: true,
            reconnect_delay_min: RECONNECT_DELAY_MIN,
            reconnect_delay_max: RECONNECT_DELAY_MAX,
            server_trust: None,
        }
    }
}

impl ClientOptions {
    /// Sets [`Self::request_timeout`].
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`Self::reconnect`].
    pub fn reconnect(mut self, reconnect: bool) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// Sets [`Self::auth_token`].
    pub fn auth_token(mut self, token: impl Into<Bytes>) -> Self {
        self.auth_token = Some(token.into());
        self
    }

    /// Over QUIC, accepts only the server certificate whose SHA-256 is `fingerprint` (64
    /// hex digits, colons allowed): what a server with a self-signed certificate logs at
    /// start-up. The server name is not checked; the handshake signature is.
    pub fn pin_server_fingerprint(mut self, fingerprint: impl Into<String>) -> Self {
        self.server_trust = Some(ServerTrust::Fingerprint(fingerprint.into()));
        self
    }

    /// Over QUIC, trusts the CA (or self-signed) certificates in the PEM file at `path`
    /// and checks that the server certificate names the URL's host.
    pub fn trust_ca_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.server_trust = Some(ServerTrust::CaFile(path.into()));
        self
    }
}

/// A connection to a Quiver server. Cloning is cheap and shares the connection.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to `quiver://host:port` (TCP) or `quiver+quic://host:port?fingerprint=<hex>`
    /// (QUIC; the URL says how to trust the server, or use [`Client::connect_with`]) with
    /// the default options.
    pub async fn connect(url: &str) -> Result<Client, ConnectError> {
        Client::connect_with(url, ClientOptions::default()).await
    }

    /// Connects to `quiver://host:port` (TCP) or `quiver+quic://host:port` (QUIC) with
    /// `options`; [`ClientOptions::server_trust`], when set, wins over the URL's
    /// `?fingerprint=` or `?ca=`.
    pub async fn connect_with(url: &str, options: ClientOptions) -> Result<Client, ConnectError> {
        let target = url::parse(url)?;
        let mut options = options;
        if options.server_trust.is_none() {
            options.server_trust = target.trust.clone();
        }
        let shared = Shared::connect(target, options).await?;
        Ok(Client { shared })
    }

    /// The capabilities the server granted in Hello (`HEADERS`, `CACHE`).
    pub fn capabilities(&self) -> Capabilities {
        self.shared.connection().granted
    }

    /// Whether the current connection has closed (requests fail until a reconnect).
    pub fn is_closed(&self) -> bool {
        self.shared.connection().is_closed()
    }

    /// Publishes one message and waits until the broker accepted it (ack `accepted`).
    pub async fn publish(
        &self,
        stream: &str,
        payload: impl Into<Bytes>,
    ) -> Result<PublishAck, RequestError> {
        let publish = Publish {
            stream: stream_name(stream)?,
            ack: AckMode::Accepted,
            headers: Headers::new(),
            payload: payload.into(),
        };
        let reply = self.shared.connection().request(&publish).await?;
        publish_ack(reply, "Publish")
    }

    /// Publishes one message with headers and the given ack mode; `Ok(None)` for
    /// [`AckMode::None`], which sends without waiting (a refusal is only logged).
    pub async fn publish_with(
        &self,
        stream: &str,
        headers: &[(&str, &[u8])],
        payload: impl Into<Bytes>,
        ack: AckMode,
    ) -> Result<Option<PublishAck>, RequestError> {
        let publish = Publish {
            stream: stream_name(stream)?,
            ack,
            headers: Headers::from_pairs(headers.iter().copied()).map_err(RequestError::Encode)?,
            payload: payload.into(),
        };
        if ack == AckMode::None {
            return self.shared.connection().send(&publish).await.map(|()| None);
        }
        let reply = self.shared.connection().request(&publish).await?;
        publish_ack(reply, "Publish").map(Some)
    }

    /// Publishes `payloads` as one unit (consecutive sequence numbers, nothing of another
    /// publisher in between) and waits until the broker accepted them.
    pub async fn publish_batch<P: Into<Bytes>>(
        &self,
        stream: &str,
        payloads: impl IntoIterator<Item = P>,
    ) -> Result<PublishAck, RequestError> {
        let ack = self
            .publish_batch_with(stream, payloads, AckMode::Accepted)
            .await?;
        Ok(ack.expect("an `accepted` publish is answered with an ack"))
    }

    /// Publishes `payloads` as one unit with the given ack mode. With
    /// [`AckMode::None`] it returns once the batch is queued for the socket (`None`);
    /// otherwise it waits for the ack the mode promises.
    pub async fn publish_batch_with<P: Into<Bytes>>(
        &self,
        stream: &str,
        payloads: impl IntoIterator<Item = P>,
        ack: AckMode,
    ) -> Result<Option<PublishAck>, RequestError> {
        let batch = plain_batch(stream, payloads, ack)?;
        if ack == AckMode::None {
            return self.shared.connection().send(&batch).await.map(|()| None);
        }
        let reply = self.shared.connection().request(&batch).await?;
        publish_ack(reply, "PublishBatch").map(Some)
    }

    /// A [`Publisher`] to `stream`: client-side batching with several batches in flight
    /// on this connection. Call it from within the tokio runtime (it starts the
    /// publisher's linger task).
    pub fn publisher(
        &self,
        stream: &str,
        options: PublisherOptions,
    ) -> Result<Publisher, PublisherError> {
        Publisher::new(self, stream, options)
    }

    /// Subscribes to every stream `pattern` matches (`acme/orders/created`,
    /// `acme/orders/*`, `acme/orders/>`, `acme/>`), from where `options.start` says
    /// (`latest` by default: what is published from now on).
    ///
    /// ```no_run
    /// use quiver_client::{Client, StartPosition, SubscribeOptions, SubscriptionEvent};
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::connect("quiver://127.0.0.1:7070").await?;
    /// // Everything the durable stream holds, then live: no gap, no duplicate.
    /// let options = SubscribeOptions::default().start(StartPosition::Earliest);
    /// let mut orders = client.subscribe("acme/orders/created", options).await?;
    /// while let Some(SubscriptionEvent::Event(event)) = orders.next().await {
    ///     println!("offset {}: {:?}", event.sequence, event.payload);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn subscribe(
        &self,
        pattern: &str,
        options: SubscribeOptions,
    ) -> Result<Subscription, RequestError> {
        let subscribe = Subscribe {
            pattern: StreamPattern::new(pattern).map_err(RequestError::InvalidName)?,
            start: options.start,
            group: options.queue_group.clone(),
            queue_capacity: options.queue_capacity,
            max_batch_events: options.max_batch_events,
            resume: Vec::new(),
        };
        let (deliveries, receiver) = mpsc::channel(SUBSCRIPTION_BUFFER_BATCHES);
        let local = self
            .shared
            .subscribe(reconnect::Request::Subscribe(subscribe), deliveries)
            .await?;
        Ok(Subscription::new(
            local,
            pattern.to_owned(),
            receiver,
            Arc::clone(&self.shared),
        ))
    }

    /// The value of `key`, or `None` when it does not exist.
    pub async fn cache_get(&self, key: impl Into<Bytes>) -> Result<Option<Bytes>, RequestError> {
        match self
            .shared
            .connection()
            .request(&CacheGet { key: key.into() })
            .await?
        {
            Frame::CacheValue(value) => Ok(Some(value.value)),
            Frame::CacheNotFound(_) => Ok(None),
            other => Err(unexpected("CacheGet", &other)),
        }
    }

    /// Sets `key` to `value`, expiring after `ttl` (millisecond resolution) when given.
    pub async fn cache_set(
        &self,
        key: impl Into<Bytes>,
        value: impl Into<Bytes>,
        ttl: Option<Duration>,
    ) -> Result<(), RequestError> {
        let ttl_ms = ttl.map_or(0, |ttl| {
            u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
        });
        let set = CacheSet {
            key: key.into(),
            ttl_ms,
            value: value.into(),
        };
        match self.shared.connection().request(&set).await? {
            Frame::CacheOk(_) => Ok(()),
            other => Err(unexpected("CacheSet", &other)),
        }
    }

    /// Deletes `keys`; returns how many existed.
    pub async fn cache_delete<K: Into<Bytes>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<u32, RequestError> {
        let delete = CacheDelete {
            keys: keys.into_iter().map(Into::into).collect(),
        };
        match self.shared.connection().request(&delete).await? {
            Frame::CacheDeleted(deleted) => Ok(deleted.count),
            other => Err(unexpected("CacheDelete", &other)),
        }
    }

    /// Sends a Ping and waits for the Pong.
    pub async fn ping(&self) -> Result<(), RequestError> {
        match self.shared.connection().request(&Ping).await? {
            Frame::Pong(_) => Ok(()),
            other => Err(unexpected("Ping", &other)),
        }
    }
}

/// `payloads`, without headers, as one PublishBatch to `stream`.
fn plain_batch<P: Into<Bytes>>(
    stream: &str,
    payloads: impl IntoIterator<Item = P>,
    ack: AckMode,
) -> Result<PublishBatch, RequestError> {
    Ok(PublishBatch {
        stream: stream_name(stream)?,
        ack,
        messages: payloads
            .into_iter()
            .map(|payload| Message {
                headers: Headers::new(),
                payload: payload.into(),
            })
            .collect(),
    })
}

fn stream_name(stream: &str) -> Result<StreamName, RequestError> {
    StreamName::new(stream).map_err(RequestError::InvalidName)
}

fn publish_ack(reply: Frame, request: &'static str) -> Result<PublishAck, RequestError> {
    match reply {
        Frame::PublishAck(ack) => Ok(ack),
        other => Err(unexpected(request, &other)),
    }
}

fn unexpected(request: &'static str, got: &Frame) -> RequestError {
    RequestError::UnexpectedReply {
        request,
        got: format!("{:?}", got.frame_type()),
    }
}
