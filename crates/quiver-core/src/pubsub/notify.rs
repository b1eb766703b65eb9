//! Keyspace notifications (Redis's `notify-keyspace-events`): the cache's change feed
//! turned into messages on `__keyspace@<db>__:<key>` (the event name) and
//! `__keyevent@<db>__:<event>` (the key), delivered like any publish to channel and
//! pattern subscribers, in the order the commands made them, before the command that made
//! them answers.
//!
//! The same events go to the node's stream [`KEYSPACE_STREAM`] for native and QUIC
//! subscribers while it has any: one message per event, the key as payload, headers
//! `event` and `db`. That stream is fed by one task in order; a burst beyond
//! [`NATIVE_BACKLOG`] batches waiting for it is dropped and counted.
//!
//! The feed is subscribed to only while the selected classes publish something, so that
//! writes pay nothing otherwise.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::mpsc;

use super::Inner;
use super::mailbox::Published;
use crate::cache::{Cache, Change, ChangeKind, ChangeSubscription, EventClasses};
use crate::streams::{Ack, Header, MAX_PUBLISH_EVENTS, Message, StreamHandle, StreamName, lock};

/// The stream native subscribers watch keyspace events on.
pub const KEYSPACE_STREAM: &str = "quiver/cache/keyspace";

/// Batches of events (one per command) waiting for the native stream before more are
/// dropped.
pub const NATIVE_BACKLOG: usize = 4096;

pub(crate) struct Notifier {
    cache: Arc<Cache>,
    /// Where the native stream's feeding task runs (none: no native stream).
    runtime: Option<tokio::runtime::Handle>,
    feed: Mutex<Option<ChangeSubscription>>,
    /// Events not sent to the native stream because its backlog was full.
    pub(crate) native_dropped: Arc<AtomicU64>,
}

impl Notifier {
    pub(crate) fn new(cache: Arc<Cache>) -> Notifier {
        Notifier {
            cache,
            runtime: tokio::runtime::Handle::try_current().ok(),
            feed: Mutex::new(None),
            native_dropped: Arc::default(),
        }
    }

    /// Selects the classes notified; the feed is on while they publish something.
    pub(crate) fn set(&self, inner: &Arc<Inner>, classes: EventClasses) {
        let mut feed = lock(&self.feed);
        self.cache.set_notify_events(classes);
        if !classes.publishes() {
            drop(feed.take());
            return;
        }
        if feed.is_some() {
            return;
        }
        let native = self.native(inner);
        let inner = Arc::downgrade(inner);
        let cache = Arc::downgrade(&self.cache);
        let dropped = Arc::clone(&self.native_dropped);
        *feed = Some(self.cache.subscribe(move |changes| {
            if let (Some(inner), Some(cache)) = (inner.upgrade(), cache.upgrade()) {
                publish(
                    &inner,
                    cache.notify_events(),
                    changes,
                    native.as_ref(),
                    &dropped,
                );
            }
        }));
    }

    /// The native stream and the sender of its feeding task.
    fn native(&self, inner: &Arc<Inner>) -> Option<Native> {
        let runtime = self.runtime.as_ref()?;
        let name = StreamName::new(KEYSPACE_STREAM).expect("a valid stream name");
        let stream = match inner.broker.stream(&name) {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%error, "keyspace events go to Redis channels only");
                return None;
            }
        };
        let (sender, mut receiver) = mpsc::channel::<Vec<Message>>(NATIVE_BACKLOG);
        let publisher = stream.clone();
        runtime.spawn(async move {
            while let Some(messages) = receiver.recv().await {
                if let Err(error) = publisher.publish(messages, Ack::None, None).await {
                    tracing::warn!(%error, "a keyspace event was not published");
                }
            }
        });
        Some(Native { stream, sender })
    }
}

struct Native {
    stream: StreamHandle,
    sender: mpsc::Sender<Vec<Message>>,
}

/// The name of the event `change` publishes under `classes`, if it publishes one.
fn event_of(change: &Change, classes: EventClasses) -> Option<&'static str> {
    match change.kind {
        ChangeKind::Event(event) => Some(event.name),
        ChangeKind::Expired if classes.contains(EventClasses::EXPIRED) => Some("expired"),
        ChangeKind::Evicted if classes.contains(EventClasses::EVICTED) => Some("evicted"),
        _ => None,
    }
}

fn publish(
    inner: &Inner,
    classes: EventClasses,
    changes: &[Change],
    native: Option<&Native>,
    dropped: &AtomicU64,
) {
    let keyspace = classes.contains(EventClasses::KEYSPACE);
    let keyevent = classes.contains(EventClasses::KEYEVENT);
    let watched = native.filter(|n| n.stream.subscribers() > 0);
    let mut messages = Vec::new();
    for change in changes {
        let Some(event) = event_of(change, classes) else {
            continue;
        };
        let key = Bytes::copy_from_slice(&change.key);
        if keyspace {
            let mut channel = format!("__keyspace@{}__:", change.db).into_bytes();
            channel.extend_from_slice(&key);
            deliver(inner, channel.into(), Bytes::from_static(event.as_bytes()));
        }
        if keyevent {
            let channel = format!("__keyevent@{}__:{event}", change.db).into_bytes();
            deliver(inner, channel.into(), key.clone());
        }
        if watched.is_some() {
            messages.push(Message {
                payload: key,
                headers: vec![
                    Header {
                        key: Bytes::from_static(b"event"),
                        value: Bytes::from_static(event.as_bytes()),
                    },
                    Header {
                        key: Bytes::from_static(b"db"),
                        value: change.db.to_string().into(),
                    },
                ],
            });
        }
    }
    let Some(native) = watched else {
        return;
    };
    while !messages.is_empty() {
        let rest = messages.split_off(messages.len().min(MAX_PUBLISH_EVENTS));
        let count = messages.len() as u64;
        if native.sender.try_send(messages).is_err() {
            dropped.fetch_add(count, Ordering::Relaxed);
        }
        messages = rest;
    }
}

fn deliver(inner: &Inner, channel: Bytes, payload: Bytes) {
    inner.deliver(&channel, || Published::one(channel.clone(), payload, false));
}
