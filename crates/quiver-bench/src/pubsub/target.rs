//! The systems `quiver-bench pubsub` can drive, behind two small enums: a publisher
//! connection and a subscriber connection. Each target maps the same load shape onto its
//! own client: Quiver through `quiver-client`'s batching [`quiver_client::Publisher`] (one
//! PublishBatch of K messages per batch, several of them unacknowledged at once, see
//! [`in_flight_batches`]), NATS through `async-nats` (K publishes, then a flush), Redis
//! through a lean RESP client ([`super::resp`]: K `PUBLISH` in one pipeline, waiting for
//! the replies).
//! `quiver://` is Quiver over TCP, `quiver+quic://host:port?fingerprint=<hex>` over QUIC.

use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use futures_util::StreamExt;
use quiver_client::{
    AckMode, Client, ClientOptions, MAX_IN_FLIGHT_BATCHES, MAX_PUBLISHER_BATCH_BYTES,
    PublisherOptions, SubscribeOptions, Subscription, SubscriptionEvent,
};

use super::report::QuiverAck;
use super::resp::{RespPublisher, RespSubscriber};

/// Stream every Quiver publisher writes and every subscriber reads.
const QUIVER_STREAM: &str = "bench/pubsub/events";
/// Subject every NATS publisher writes and every subscriber reads.
const NATS_SUBJECT: &str = "bench.pubsub.events";
/// Channel every Redis publisher writes and every subscriber reads.
const REDIS_CHANNEL: &str = "bench.pubsub.events";
/// Longest a Quiver request (a publish batch) may wait for its ack: longer than any
/// `block` timeout the server may apply, shorter than the whole run.
const QUIVER_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Messages `async-nats` buffers per subscription before it drops (its slow-consumer
/// limit); large so a burst of fan-out is not cut by the client, the same order as the
/// Quiver client's buffering.
const NATS_SUBSCRIPTION_CAPACITY: usize = 1 << 20;
/// Events each Quiver subscription may have queued on the server before its stream's
/// slow-subscriber policy applies. The server's default (8192 events) is a quarter of
/// what its default byte bound (8 MiB) holds at 256 B; a run with several batches in
/// flight per publisher fills that in ~7 ms of a subscriber not being scheduled on a busy
/// machine. nats-server lets a subscriber's connection have 64 MiB pending, so asking for
/// 32768 events (the byte bound still applies) keeps the two comparable.
const QUIVER_QUEUE_EVENTS: u32 = 32 * 1024;
/// Batches one Quiver publisher keeps unacknowledged at least. One would hold a publisher
/// to one batch per round trip (client and server then take turns idling); a few keep the
/// server's read loop busy while acks travel back. On the 2-core development machine
/// (fan-out 1, 256 B, batches of 64) 2 reached 0.73-0.89 M msgs/s, 8 1.0-1.56 M, and 32 no
/// more but let the publisher outrun the subscriber until its queue overflowed (events
/// lost under `drop_old`). NATS publishers, which never wait for acks, are bounded by
/// their client's write buffer instead.
const QUIVER_IN_FLIGHT_BATCHES: usize = 8;
/// Messages one Quiver publisher keeps unacknowledged when its batches are small: what 8
/// batches of 64 hold, so `--batch 1` (each message its own acked publish, as each NATS
/// message is flushed on its own) is not held to 8 messages per round trip.
const QUIVER_IN_FLIGHT_MESSAGES: usize = QUIVER_IN_FLIGHT_BATCHES * 64;
/// How long a Quiver batch that is not full may wait for more messages: only the last
/// batch of a phase is ever partial (each publish call hands over a whole batch), so this
/// only bounds how long that one waits.
const QUIVER_LINGER: Duration = Duration::from_millis(1);

/// Batches in flight for batches of `batch` messages: at least [`QUIVER_IN_FLIGHT_BATCHES`],
/// and enough to keep [`QUIVER_IN_FLIGHT_MESSAGES`] messages unacknowledged.
fn in_flight_batches(batch: usize) -> usize {
    (QUIVER_IN_FLIGHT_MESSAGES / batch.max(1))
        .clamp(QUIVER_IN_FLIGHT_BATCHES, MAX_IN_FLIGHT_BATCHES)
}

/// Which system a `--target` URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Quiver,
    Nats,
    Redis,
}

impl Kind {
    /// The kind of `url`, from its scheme.
    pub fn of(url: &str) -> anyhow::Result<Kind> {
        if url.starts_with("quiver://") || url.starts_with("quiver+quic://") {
            Ok(Kind::Quiver)
        } else if url.starts_with("nats://") {
            Ok(Kind::Nats)
        } else if url.starts_with("redis://") {
            Ok(Kind::Redis)
        } else {
            bail!(
                "unsupported --target {url:?}: expected quiver://host:port, quiver+quic://host:port?fingerprint=<hex>, nats://host:port or redis://host:port"
            )
        }
    }
}

/// A Quiver publishing connection: the batching publisher is made on the first publish,
/// whose batch size is the run's `--batch` (every call but a phase's last hands over
/// that many messages).
pub struct QuiverPublisher {
    client: Client,
    ack: AckMode,
    publisher: OnceLock<quiver_client::Publisher>,
}

impl QuiverPublisher {
    fn publisher(&self, batch: usize) -> anyhow::Result<&quiver_client::Publisher> {
        if let Some(publisher) = self.publisher.get() {
            return Ok(publisher);
        }
        let options = PublisherOptions::default()
            .max_batch_events(batch)
            .max_batch_bytes(MAX_PUBLISHER_BATCH_BYTES)
            .max_in_flight_batches(in_flight_batches(batch))
            .linger(QUIVER_LINGER)
            .ack(self.ack);
        let publisher = self.client.publisher(QUIVER_STREAM, options)?;
        Ok(self.publisher.get_or_init(|| publisher))
    }
}

/// One publishing connection.
pub enum Publisher {
    Quiver(QuiverPublisher),
    Nats(async_nats::Client),
    Redis(tokio::sync::Mutex<RespPublisher>),
}

impl Publisher {
    pub async fn connect(
        kind: Kind,
        url: &str,
        quiver_ack: QuiverAck,
    ) -> anyhow::Result<Publisher> {
        Ok(match kind {
            Kind::Quiver => Publisher::Quiver(QuiverPublisher {
                client: connect_quiver(url).await?,
                ack: match quiver_ack {
                    QuiverAck::Accepted => AckMode::Accepted,
                    QuiverAck::None => AckMode::None,
                },
                publisher: OnceLock::new(),
            }),
            Kind::Nats => Publisher::Nats(connect_nats(url).await?),
            Kind::Redis => Publisher::Redis(tokio::sync::Mutex::new(
                RespPublisher::connect(url, REDIS_CHANNEL).await?,
            )),
        })
    }

    /// Publishes `payloads` as one batch: for Quiver into the batching publisher, whose
    /// batch is full (and sent) once it holds them, returning without waiting for the ack
    /// unless [`in_flight_batches`] batches are unacknowledged (a refused batch is
    /// reported by a later call); for NATS one publish each, then a flush.
    pub async fn publish(&self, payloads: Vec<Bytes>) -> anyhow::Result<()> {
        match self {
            Publisher::Quiver(quiver) => {
                let publisher = quiver.publisher(payloads.len())?;
                for payload in payloads {
                    publisher.publish(payload).await?;
                }
            }
            Publisher::Nats(client) => {
                for payload in payloads {
                    client.publish(NATS_SUBJECT, payload).await?;
                }
                client.flush().await?;
            }
            Publisher::Redis(connection) => connection.lock().await.publish(&payloads).await?,
        }
        Ok(())
    }

    /// Ends publishing: a Quiver publisher sends what it still buffers and waits for
    /// every ack, so a refused final batch is an error here rather than lost silently.
    pub async fn finish(self) -> anyhow::Result<()> {
        match self {
            Publisher::Quiver(quiver) => {
                if let Some(publisher) = quiver.publisher.into_inner() {
                    publisher.close().await?;
                }
            }
            Publisher::Nats(client) => client.flush().await?,
            Publisher::Redis(_) => {}
        }
        Ok(())
    }
}

/// What a subscriber receives next.
pub enum Delivery {
    Payload(Bytes),
    /// The server says this many messages were not delivered to this subscriber.
    Lag(u64),
    /// Nothing more will come; why.
    Ended(String),
}

/// One subscribing connection with its live subscription.
pub enum Subscriber {
    Quiver {
        _client: Client,
        subscription: Subscription,
    },
    Nats {
        _client: async_nats::Client,
        subscriber: async_nats::Subscriber,
    },
    Redis(RespSubscriber),
}

impl Subscriber {
    /// Connects and subscribes; returns once the server has the subscription.
    pub async fn connect(kind: Kind, url: &str) -> anyhow::Result<Subscriber> {
        Ok(match kind {
            Kind::Quiver => {
                let client = connect_quiver(url).await?;
                let subscription = client
                    .subscribe(
                        QUIVER_STREAM,
                        SubscribeOptions::default().queue_capacity(QUIVER_QUEUE_EVENTS),
                    )
                    .await
                    .with_context(|| format!("subscribing to {QUIVER_STREAM}"))?;
                Subscriber::Quiver {
                    _client: client,
                    subscription,
                }
            }
            Kind::Nats => {
                let client = connect_nats(url).await?;
                let subscriber = client.subscribe(NATS_SUBJECT).await?;
                // A flush round trip: the SUB is on the wire before anyone publishes.
                client.flush().await?;
                Subscriber::Nats {
                    _client: client,
                    subscriber,
                }
            }
            Kind::Redis => Subscriber::Redis(RespSubscriber::connect(url, REDIS_CHANNEL).await?),
        })
    }

    pub async fn next(&mut self) -> Delivery {
        match self {
            Subscriber::Quiver { subscription, .. } => loop {
                match subscription.next().await {
                    Some(SubscriptionEvent::Event(event)) => {
                        return Delivery::Payload(event.payload);
                    }
                    Some(SubscriptionEvent::Lag { missed }) => return Delivery::Lag(missed),
                    Some(SubscriptionEvent::Ended { message, .. }) => {
                        return Delivery::Ended(message);
                    }
                    Some(SubscriptionEvent::Resubscribed) => {
                        return Delivery::Ended("connection lost and made again".to_owned());
                    }
                    Some(_) => {}
                    None => return Delivery::Ended("subscription closed".to_owned()),
                }
            },
            Subscriber::Nats { subscriber, .. } => match subscriber.next().await {
                Some(message) => Delivery::Payload(message.payload),
                None => Delivery::Ended("subscription closed".to_owned()),
            },
            Subscriber::Redis(subscriber) => match subscriber.next().await {
                Ok(payload) => Delivery::Payload(payload),
                Err(error) => Delivery::Ended(format!("{error:#}")),
            },
        }
    }
}

async fn connect_quiver(url: &str) -> anyhow::Result<Client> {
    let options = ClientOptions::default()
        .reconnect(false)
        .request_timeout(QUIVER_REQUEST_TIMEOUT);
    Client::connect_with(url, options)
        .await
        .with_context(|| format!("connecting to {url}"))
}

async fn connect_nats(url: &str) -> anyhow::Result<async_nats::Client> {
    async_nats::ConnectOptions::new()
        .subscription_capacity(NATS_SUBSCRIPTION_CAPACITY)
        .connect(url)
        .await
        .with_context(|| format!("connecting to {url}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_batches_keep_as_many_messages_in_flight_as_eight_batches_of_64() {
        assert_eq!(in_flight_batches(1), 512);
        assert_eq!(in_flight_batches(16), 32);
        assert_eq!(in_flight_batches(64), 8);
        assert_eq!(in_flight_batches(4096), 8);
        assert_eq!(in_flight_batches(0), 512);
    }
}
