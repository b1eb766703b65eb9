//! The durable systems `quiver-bench durable` and `group` drive, with the same load shape:
//! Quiver's durable streams and consumer groups through `quiver-client`, and NATS
//! JetStream (file storage) through `async-nats`: asynchronous publishes with acks, an
//! ordered consumer for reading a stream, a durable pull consumer with explicit acks for
//! a group.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use async_nats::jetstream::{self, consumer, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use quiver_client::{
    AckMode, Client, ClientOptions, ConsumerEvent, GroupConsumer, GroupOptions, StartPosition,
    Storage, StreamOptions, SubscribeOptions, Subscription, SubscriptionEvent,
};

/// Longest one request (a publish batch, an ack) may wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Events a Quiver subscription may have queued on the server (as in `pubsub`).
const QUIVER_QUEUE_EVENTS: u32 = 32 * 1024;
/// Messages one NATS pull request asks for.
const NATS_PULL_BATCH: usize = 256;

/// Which system a `--target` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Quiver,
    Nats,
}

impl Kind {
    pub fn of(url: &str) -> anyhow::Result<Kind> {
        if url.starts_with("quiver://") || url.starts_with("quiver+quic://") {
            Ok(Kind::Quiver)
        } else if url.starts_with("nats://") {
            Ok(Kind::Nats)
        } else {
            bail!("unsupported --target {url:?}: expected quiver://host:port or nats://host:port")
        }
    }
}

/// The stream (NATS: stream and subject) of one run.
#[derive(Debug, Clone)]
pub struct Names {
    /// Quiver stream name.
    pub quiver: String,
    /// JetStream stream name.
    pub nats_stream: String,
    /// JetStream subject.
    pub nats_subject: String,
}

impl Names {
    /// Fresh names, so that runs never share state.
    pub fn fresh(what: &str) -> Names {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Names {
            quiver: format!("bench/{what}/r{nanos}"),
            nats_stream: format!("BENCH_{}_{nanos}", what.to_uppercase()),
            nats_subject: format!("bench.{what}.r{nanos}"),
        }
    }
}

/// A connection to the target.
#[derive(Clone)]
pub enum Conn {
    Quiver(Client),
    Nats(Box<jetstream::Context>),
}

impl Conn {
    pub async fn connect(kind: Kind, url: &str) -> anyhow::Result<Conn> {
        Ok(match kind {
            Kind::Quiver => {
                let options = ClientOptions::default()
                    .reconnect(false)
                    .request_timeout(REQUEST_TIMEOUT);
                Conn::Quiver(
                    Client::connect_with(url, options)
                        .await
                        .context("connect to Quiver")?,
                )
            }
            Kind::Nats => {
                let client = async_nats::ConnectOptions::new()
                    .request_timeout(Some(REQUEST_TIMEOUT))
                    .connect(url.trim_start_matches("nats://"))
                    .await
                    .context("connect to nats-server")?;
                // Room for every ack a run keeps in flight (the prefill's 16 x 1024 among
                // them): past the context's bound a publish would wait for acks that only
                // the caller's later awaits release.
                let context = jetstream::context::ContextBuilder::new()
                    .max_ack_inflight(1 << 20)
                    .timeout(REQUEST_TIMEOUT)
                    .build(client);
                Conn::Nats(Box::new(context))
            }
        })
    }

    /// Creates the run's durable stream (Quiver: with `storage`; JetStream: file storage,
    /// whose sync is the server's `sync_interval`).
    pub async fn create(&self, names: &Names, storage: Storage) -> anyhow::Result<()> {
        match self {
            Conn::Quiver(client) => {
                client
                    .create_stream(&names.quiver, StreamOptions::durable(storage))
                    .await
                    .context("create the Quiver stream")?;
            }
            Conn::Nats(js) => {
                js.create_stream(stream::Config {
                    name: names.nats_stream.clone(),
                    subjects: vec![names.nats_subject.clone()],
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .context("create the JetStream stream")?;
            }
        }
        Ok(())
    }

    /// Deletes the run's stream (frees the disk).
    pub async fn delete(&self, names: &Names) {
        match self {
            Conn::Quiver(client) => {
                let _ = client.delete_stream(&names.quiver).await;
            }
            Conn::Nats(js) => {
                let _ = js.delete_stream(&names.nats_stream).await;
            }
        }
    }
}

/// A publisher keeping up to `window` publishes unacknowledged, each a batch of messages.
pub struct Publisher {
    conn: Conn,
    names: Names,
    ack: AckMode,
    /// Batches in flight at most.
    window: usize,
    /// NATS: messages in flight at most (`window` batches of the run's batch size).
    window_messages: usize,
    /// Acks in flight, oldest first: each task waits for one ack (a Quiver batch's, a
    /// NATS message's) and returns how long it took from the send, measured when it
    /// arrived.
    acks: VecDeque<tokio::task::JoinHandle<anyhow::Result<Duration>>>,
}

impl Publisher {
    pub fn new(conn: Conn, names: &Names, ack: AckMode, window: usize, batch: usize) -> Publisher {
        Publisher {
            conn,
            names: names.clone(),
            ack,
            window,
            window_messages: window * batch,
            acks: VecDeque::new(),
        }
    }

    /// Sends one batch, first waiting for the oldest acks while the window is full;
    /// returns the ack latencies (one per Quiver batch, one per NATS message) of what
    /// completed.
    pub async fn send(&mut self, batch: Vec<Bytes>) -> anyhow::Result<Vec<Duration>> {
        let mut done = Vec::new();
        match self.conn.clone() {
            Conn::Quiver(client) => {
                while self.acks.len() >= self.window {
                    done.push(self.wait_oldest().await?);
                }
                // Latency counts from the send, not from the wait for room in the window.
                let sent = Instant::now();
                if self.ack == AckMode::None {
                    // Nothing to wait for: queued for the socket is sent.
                    client
                        .publish_batch_with(&self.names.quiver, batch, AckMode::None)
                        .await?;
                    done.push(sent.elapsed());
                    return Ok(done);
                }
                // Queued on the connection here, in order; the task only waits.
                let pending = client
                    .publish_batch_queued(&self.names.quiver, batch, self.ack)
                    .await?;
                self.acks.push_back(tokio::spawn(async move {
                    pending.wait().await.context("Quiver publish ack")?;
                    Ok(sent.elapsed())
                }));
            }
            Conn::Nats(js) => {
                while !self.acks.is_empty() && self.acks.len() + batch.len() > self.window_messages
                {
                    done.push(self.wait_oldest().await?);
                }
                let sent = Instant::now();
                for payload in batch {
                    let future = js
                        .publish(self.names.nats_subject.clone(), payload)
                        .await
                        .context("JetStream publish")?;
                    self.acks.push_back(tokio::spawn(async move {
                        future.await.context("JetStream publish ack")?;
                        Ok(sent.elapsed())
                    }));
                }
            }
        }
        Ok(done)
    }

    async fn wait_oldest(&mut self) -> anyhow::Result<Duration> {
        let task = self.acks.pop_front().expect("called with acks in flight");
        task.await.context("ack task")?
    }

    /// Waits for every ack still outstanding.
    pub async fn finish(mut self) -> anyhow::Result<Vec<Duration>> {
        let mut done = Vec::new();
        while !self.acks.is_empty() {
            done.push(self.wait_oldest().await?);
        }
        Ok(done)
    }
}

/// A reader of the whole stream, from the start or from now.
pub enum Reader {
    Quiver(Subscription),
    Nats(Box<consumer::pull::Ordered>),
}

impl Reader {
    pub async fn open(conn: &Conn, names: &Names, from_start: bool) -> anyhow::Result<Reader> {
        Ok(match conn {
            Conn::Quiver(client) => {
                let start = if from_start {
                    StartPosition::Earliest
                } else {
                    StartPosition::Latest
                };
                let options = SubscribeOptions::default()
                    .start(start)
                    .queue_capacity(QUIVER_QUEUE_EVENTS);
                Reader::Quiver(client.subscribe(&names.quiver, options).await?)
            }
            Conn::Nats(js) => {
                let stream = js.get_stream(&names.nats_stream).await?;
                let deliver_policy = if from_start {
                    consumer::DeliverPolicy::All
                } else {
                    consumer::DeliverPolicy::New
                };
                let ordered = stream
                    .create_consumer(consumer::pull::OrderedConfig {
                        deliver_policy,
                        ..Default::default()
                    })
                    .await?;
                Reader::Nats(Box::new(ordered.messages().await?))
            }
        })
    }

    /// The next payload, `None` when the reading ended.
    pub async fn next(&mut self) -> Option<Bytes> {
        match self {
            Reader::Quiver(sub) => loop {
                match sub.next().await? {
                    SubscriptionEvent::Event(event) => return Some(event.payload),
                    SubscriptionEvent::Ended { .. } => return None,
                    _ => {}
                }
            },
            Reader::Nats(messages) => match messages.next().await? {
                Ok(message) => Some(message.payload.clone()),
                Err(_) => None,
            },
        }
    }
}

/// A member of a consumer group: receives, then acks what it received.
pub enum Member {
    Quiver(GroupConsumer),
    Nats(Box<consumer::pull::Stream>),
}

/// What a member got in one step: payloads with their delivery counts.
pub struct Received {
    pub messages: Vec<(Bytes, u32)>,
}

impl Member {
    pub async fn join(
        conn: &Conn,
        names: &Names,
        group: &str,
        in_flight: u32,
    ) -> anyhow::Result<Member> {
        Ok(match conn {
            Conn::Quiver(client) => {
                let options = GroupOptions::default()
                    .create_with(Duration::from_secs(30), 0, in_flight)
                    .max_in_flight(in_flight);
                Member::Quiver(client.join_group(&names.quiver, group, options).await?)
            }
            Conn::Nats(js) => {
                let stream = js.get_stream(&names.nats_stream).await?;
                let consumer: consumer::PullConsumer = stream
                    .get_or_create_consumer(
                        group,
                        consumer::pull::Config {
                            durable_name: Some(group.to_owned()),
                            ack_policy: consumer::AckPolicy::Explicit,
                            max_ack_pending: i64::from(in_flight),
                            ack_wait: Duration::from_secs(30),
                            ..Default::default()
                        },
                    )
                    .await?;
                let messages = consumer
                    .stream()
                    .max_messages_per_batch(NATS_PULL_BATCH)
                    .messages()
                    .await?;
                Member::Nats(Box::new(messages))
            }
        })
    }

    /// Receives what is there (at least one message), acks it, and returns it.
    pub async fn step(&mut self, stream: &Names) -> anyhow::Result<Option<Received>> {
        match self {
            Member::Quiver(consumer) => {
                let mut messages = Vec::new();
                let mut offsets = Vec::new();
                // One delivered batch: the first message, then whatever came with it.
                let first = match consumer.next().await {
                    Some(ConsumerEvent::Message(message)) => message,
                    Some(_) => return Ok(Some(Received { messages })),
                    None => return Ok(None),
                };
                offsets.push(first.offset);
                messages.push((first.payload, first.deliveries));
                while let Some(message) = consumer.try_next() {
                    offsets.push(message.offset);
                    messages.push((message.payload, message.deliveries));
                }
                consumer.ack_offsets(&stream.quiver, &offsets).await?;
                Ok(Some(Received { messages }))
            }
            Member::Nats(pull) => {
                let Some(message) = pull.next().await else {
                    return Ok(None);
                };
                let message = message.map_err(|e| anyhow::anyhow!("pull: {e}"))?;
                let delivered = message.info().map_or(1, |info| info.delivered);
                message
                    .ack()
                    .await
                    .map_err(|e| anyhow::anyhow!("ack: {e}"))?;
                Ok(Some(Received {
                    messages: vec![(
                        message.payload.clone(),
                        u32::try_from(delivered).unwrap_or(u32::MAX),
                    )],
                }))
            }
        }
    }
}
