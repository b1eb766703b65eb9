//! Redis channels on the node's streams: channel, pattern and shard-channel subscriptions,
//! publishing, and the bridge to the broker.
//!
//! **The mapping.** A channel whose name is a valid stream name (`tenant/namespace/stream`)
//! *is* that stream: a publish to it goes into the broker like any native publish (durable
//! when the stream is), and every batch the stream seals reaches the channel's and the
//! matching patterns' subscribers through the broker's tap, whoever published it (RESP,
//! native TCP, QUIC). Any other channel name (binary-safe, any length the protocol
//! allows) is delivered here directly, among the subscribers of this module. Either way a
//! subscriber receives [`Published`] values shared by every subscriber they reach and
//! encoded once per transport encoding, in its own bounded [`Subscriber`] mailbox; Redis's
//! `client-output-buffer-limit pubsub` bounds it ([`OutputLimits`]), and every disconnect
//! is counted ([`PubSubStats`]).
//!
//! Patterns are Redis globs, matched against the channel name at publish time (as Redis
//! does), so a pattern subscriber also sees stream-named channels that native clients
//! publish to. Shard channels (SSUBSCRIBE, SPUBLISH) are a separate name space, never
//! bridged: Redis keeps them apart too.
//!
//! Locks: the index (`RwLock`; write only to subscribe and unsubscribe), then one
//! mailbox's queue. The tap runs under a stream's lock and takes only these two; nothing
//! here takes a stream's lock while holding them.

mod mailbox;
mod notify;
mod tracking;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use bytes::Bytes;
use quiver_cache::glob_match;

pub use mailbox::{Closed, Entry, Inbox, OutputLimits, PUBLISHED_SLOTS, Published};
pub use notify::{KEYSPACE_STREAM, NATIVE_BACKLOG};
pub use tracking::{MAX_TRACKED_KEYS, TrackingMode};

use crate::cache::{Cache, EventClasses};
use crate::streams::{
    Batch, BatchTap, Broker, Message, PublishError, StreamHandle, StreamName, read, write,
};
use mailbox::{Mailbox, Pushed, SharedLimits};
use notify::Notifier;
use tracking::Tracking;

/// The three kinds of subscription a client holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// SUBSCRIBE: one channel.
    Channel,
    /// PSUBSCRIBE: a glob over channel names.
    Pattern,
    /// SSUBSCRIBE: one shard channel.
    Shard,
}

/// Counters of the channels, for `/metrics` and INFO.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PubSubStats {
    /// Channels with at least one subscriber.
    pub channels: u64,
    /// Distinct patterns subscribed to.
    pub patterns: u64,
    /// Shard channels with at least one subscriber.
    pub shard_channels: u64,
    /// Messages published to channels (stream-named channels included) since start.
    pub published: u64,
    /// Messages queued for subscribers (one per subscriber reached) since start.
    pub delivered: u64,
    /// Subscribers disconnected at the hard output limit.
    pub disconnected_hard: u64,
    /// Subscribers disconnected at the soft output limit.
    pub disconnected_soft: u64,
    /// Keyspace events not sent to [`KEYSPACE_STREAM`] because its backlog was full.
    pub keyspace_events_dropped: u64,
}

type Subscribers = HashMap<Bytes, Vec<Arc<Mailbox>>>;

#[derive(Default)]
struct Index {
    channels: Subscribers,
    patterns: Subscribers,
    shard: Subscribers,
}

impl Index {
    fn get(&self, space: Space) -> &Subscribers {
        match space {
            Space::Channel => &self.channels,
            Space::Pattern => &self.patterns,
            Space::Shard => &self.shard,
        }
    }

    fn space(&mut self, space: Space) -> &mut Subscribers {
        match space {
            Space::Channel => &mut self.channels,
            Space::Pattern => &mut self.patterns,
            Space::Shard => &mut self.shard,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    published: AtomicU64,
    delivered: AtomicU64,
    disconnected_hard: AtomicU64,
    disconnected_soft: AtomicU64,
    /// Subscriptions of every kind, so that the tap skips the index while there are none.
    subscriptions: AtomicU64,
}

struct Inner {
    broker: Broker,
    index: RwLock<Index>,
    limits: Arc<SharedLimits>,
    counters: Arc<Counters>,
    tracking: Arc<Tracking>,
    notifier: Notifier,
}

/// The node's Redis channels. Cloning is cheap and shares them.
#[derive(Clone)]
pub struct PubSub {
    inner: Arc<Inner>,
}

impl fmt::Debug for PubSub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PubSub").finish_non_exhaustive()
    }
}

/// Where a publish goes.
#[derive(Debug)]
pub enum Route {
    /// Delivered to this many subscribers.
    Delivered(u64),
    /// A stream-named channel: publish `message` to `stream` (which delivers it to every
    /// subscriber, native and RESP); `receivers` subscribers are attached now.
    Stream {
        stream: StreamHandle,
        message: Message,
        receivers: u64,
    },
}

/// The stream a channel name names, if it is a valid stream name.
pub fn stream_of(channel: &[u8]) -> Option<StreamName> {
    if !channel.contains(&b'/') {
        return None;
    }
    StreamName::new(std::str::from_utf8(channel).ok()?).ok()
}

impl PubSub {
    /// Channels bridged to `broker`'s streams (and a tap installed on it: one per
    /// broker), and client-side caching of `cache`'s keys.
    pub fn new(broker: Broker, cache: Arc<Cache>, limits: OutputLimits) -> PubSub {
        let limits = Arc::new(SharedLimits::new(limits));
        let counters = Arc::new(Counters::default());
        let inner = Arc::new(Inner {
            broker,
            index: RwLock::default(),
            tracking: Arc::new(Tracking::new(
                Arc::clone(&cache),
                Arc::clone(&limits),
                Arc::clone(&counters),
            )),
            notifier: Notifier::new(cache),
            limits,
            counters,
        });
        let tap = Arc::new(Tap(Arc::downgrade(&inner)));
        assert!(
            inner.broker.set_tap(tap),
            "a broker carries the channels of one PubSub"
        );
        PubSub { inner }
    }

    /// A mailbox for a client (what it is sent before it subscribes or tracks, too).
    pub fn inbox(&self) -> Inbox {
        Inbox::default()
    }

    /// Client-side caching's figures: clients tracking, keys remembered, (key, client)
    /// pairs, and distinct broadcast prefixes.
    pub fn tracking_figures(&self) -> [usize; 4] {
        self.inner.tracking.figures()
    }

    /// Remembers that `client` read `keys` (its tracking in the default mode), for reads
    /// made on its behalf elsewhere (the commands of its scripts).
    pub fn remember<'k>(&self, client: u64, keys: impl Iterator<Item = &'k [u8]>) {
        self.inner.tracking.remember(client, keys);
    }

    /// Client `client`'s subscriptions and tracking, delivering to `inbox`; dropping it
    /// ends both.
    pub fn subscriber(&self, client: u64, inbox: Inbox) -> Subscriber {
        Subscriber {
            inner: Arc::clone(&self.inner),
            client,
            mailbox: inbox.0,
            subscribed: Default::default(),
        }
    }

    /// The output limits.
    pub fn limits(&self) -> OutputLimits {
        self.inner.limits.get()
    }

    /// Changes the output limits (applies to the next delivery).
    pub fn set_limits(&self, limits: OutputLimits) {
        self.inner.limits.set(limits);
    }

    /// Selects the keyspace events published (`notify-keyspace-events`; see
    /// [`notify`](self) for the channels and [`KEYSPACE_STREAM`]).
    pub fn set_notify_events(&self, classes: EventClasses) {
        self.inner.notifier.set(&self.inner, classes);
    }

    /// Publishes `payload` to `channel` (PUBLISH). A stream-named channel routes to its
    /// stream (created as a native publish would create it); any other is delivered now.
    pub fn publish(&self, channel: Bytes, payload: Bytes) -> Result<Route, PublishError> {
        let inner = &self.inner;
        inner.counters.published.fetch_add(1, Ordering::Relaxed);
        let Some(name) = stream_of(&channel) else {
            let make = || Published::one(channel.clone(), payload, false);
            return Ok(Route::Delivered(inner.deliver(&channel, make)));
        };
        let stream = inner.broker.stream(&name)?;
        let receivers = inner.broker.subscribers(&name) + inner.receivers(&channel);
        Ok(Route::Stream {
            stream,
            message: Message::new(payload),
            receivers,
        })
    }

    /// Publishes `payload` to shard channel `channel` (SPUBLISH); returns the receivers.
    pub fn spublish(&self, channel: Bytes, payload: Bytes) -> u64 {
        let inner = &self.inner;
        inner.counters.published.fetch_add(1, Ordering::Relaxed);
        let published = Arc::new(Published::one(channel, payload, true));
        let index = read(&inner.index);
        let Some(list) = index.shard.get(published.channel()) else {
            return 0;
        };
        inner.push_all(list, None, &published)
    }

    /// Channels (or shard channels) with subscribers whose name matches `pattern` (all
    /// without one). `Space::Pattern` lists the patterns.
    pub fn channels(&self, space: Space, pattern: Option<&[u8]>) -> Vec<Bytes> {
        read(&self.inner.index)
            .get(space)
            .keys()
            .filter(|name| pattern.is_none_or(|p| glob_match(p, name)))
            .cloned()
            .collect()
    }

    /// Subscribers of `channel` in `space` (patterns not counted, as PUBSUB NUMSUB).
    pub fn numsub(&self, space: Space, channel: &[u8]) -> u64 {
        read(&self.inner.index)
            .get(space)
            .get(channel)
            .map_or(0, |list| list.len() as u64)
    }

    /// The counters now.
    pub fn stats(&self) -> PubSubStats {
        let inner = &self.inner;
        let index = read(&inner.index);
        let c = &inner.counters;
        PubSubStats {
            channels: index.channels.len() as u64,
            patterns: index.patterns.len() as u64,
            shard_channels: index.shard.len() as u64,
            published: c.published.load(Ordering::Relaxed),
            delivered: c.delivered.load(Ordering::Relaxed),
            disconnected_hard: c.disconnected_hard.load(Ordering::Relaxed),
            disconnected_soft: c.disconnected_soft.load(Ordering::Relaxed),
            keyspace_events_dropped: inner.notifier.native_dropped.load(Ordering::Relaxed),
        }
    }
}

impl Inner {
    /// Subscribers `channel` reaches now: its own and every matching pattern's.
    fn receivers(&self, channel: &[u8]) -> u64 {
        if self.counters.subscriptions.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let index = read(&self.index);
        let direct = index.channels.get(channel).map_or(0, Vec::len);
        let patterns: usize = index
            .patterns
            .iter()
            .filter(|(pattern, _)| glob_match(pattern, channel))
            .map(|(_, list)| list.len())
            .sum();
        (direct + patterns) as u64
    }

    /// Queues what `make` publishes on `channel` for the channel's subscribers, then the
    /// matching patterns'; returns how many it reached. `make` runs only when someone is
    /// reached, once.
    fn deliver(&self, channel: &[u8], make: impl FnOnce() -> Published) -> u64 {
        if self.counters.subscriptions.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let index = read(&self.index);
        let direct = index.channels.get(channel);
        let mut patterns = index
            .patterns
            .iter()
            .filter(|(pattern, _)| glob_match(pattern, channel))
            .peekable();
        if direct.is_none() && patterns.peek().is_none() {
            return 0;
        }
        let published = Arc::new(make());
        let mut reached = 0;
        if let Some(list) = direct {
            reached += self.push_all(list, None, &published);
        }
        for (pattern, list) in patterns {
            reached += self.push_all(list, Some(pattern), &published);
        }
        reached
    }

    fn push_all(
        &self,
        list: &[Arc<Mailbox>],
        pattern: Option<&Bytes>,
        published: &Arc<Published>,
    ) -> u64 {
        let limits = self.limits.get();
        let mut queued = 0;
        for mailbox in list {
            let entry = Entry::Message {
                pattern: pattern.cloned(),
                published: Arc::clone(published),
            };
            match mailbox.push(entry, &limits) {
                Pushed::Closed => {}
                Pushed::Queued => queued += 1,
                Pushed::ClosedNow => self.counters.count_close(mailbox),
            }
        }
        let messages = (queued * published.len()) as u64;
        self.counters
            .delivered
            .fetch_add(messages, Ordering::Relaxed);
        // Redis counts a receiver it is about to disconnect too.
        list.len() as u64
    }
}

impl Counters {
    /// Counts a mailbox a limit just closed.
    pub(crate) fn count_close(&self, mailbox: &Mailbox) {
        let counter = match mailbox.closed() {
            Some(Closed::SoftLimit { .. }) => &self.disconnected_soft,
            _ => &self.disconnected_hard,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The broker's tap: every batch a stream seals reaches the channel of the stream's name.
struct Tap(Weak<Inner>);

impl BatchTap for Tap {
    fn offer(&self, batch: &Arc<Batch>) {
        let Some(inner) = self.0.upgrade() else {
            return;
        };
        let channel = batch.stream().as_str().as_bytes();
        inner.deliver(channel, || {
            Published::batch(Bytes::copy_from_slice(channel), Arc::clone(batch))
        });
    }
}

/// One client's subscriptions, its tracking, and the mailbox they deliver to. Dropping it
/// unsubscribes from everything and ends the tracking.
pub struct Subscriber {
    inner: Arc<Inner>,
    client: u64,
    mailbox: Arc<Mailbox>,
    subscribed: [HashSet<Bytes>; 3],
}

impl fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscriber")
            .field("channels", &self.count(Space::Channel))
            .field("patterns", &self.count(Space::Pattern))
            .field("shard_channels", &self.count(Space::Shard))
            .finish()
    }
}

fn slot(space: Space) -> usize {
    match space {
        Space::Channel => 0,
        Space::Pattern => 1,
        Space::Shard => 2,
    }
}

impl Subscriber {
    /// Subscribes to `name` in `space`; false if it was subscribed already.
    pub fn subscribe(&mut self, space: Space, name: Bytes) -> bool {
        if !self.subscribed[slot(space)].insert(name.clone()) {
            return false;
        }
        let mut index = write(&self.inner.index);
        index
            .space(space)
            .entry(name)
            .or_default()
            .push(Arc::clone(&self.mailbox));
        self.inner
            .counters
            .subscriptions
            .fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Unsubscribes from `name` in `space`; false if it was not subscribed.
    pub fn unsubscribe(&mut self, space: Space, name: &[u8]) -> bool {
        if !self.subscribed[slot(space)].remove(name) {
            return false;
        }
        let mut index = write(&self.inner.index);
        let map = index.space(space);
        if let Some(list) = map.get_mut(name) {
            list.retain(|m| !Arc::ptr_eq(m, &self.mailbox));
            if list.is_empty() {
                map.remove(name);
            }
        }
        self.inner
            .counters
            .subscriptions
            .fetch_sub(1, Ordering::Relaxed);
        true
    }

    /// Every name subscribed to in `space`.
    pub fn names(&self, space: Space) -> Vec<Bytes> {
        self.subscribed[slot(space)].iter().cloned().collect()
    }

    /// Subscriptions in `space`.
    pub fn count(&self, space: Space) -> usize {
        self.subscribed[slot(space)].len()
    }

    /// Whether it has no subscription at all.
    pub fn is_idle(&self) -> bool {
        self.subscribed.iter().all(HashSet::is_empty)
    }

    /// Moves every delivery queued to `out`; the reason if a limit disconnected it.
    pub fn drain(&self, out: &mut Vec<Entry>) -> Result<(), Closed> {
        self.mailbox.drain(out)
    }

    /// Waits until a delivery is queued or a limit disconnected it (may wake spuriously:
    /// drain after).
    pub async fn ready(&self) {
        self.mailbox.ready().await;
    }

    /// Waits until an output limit disconnects it (the connection must close then,
    /// even in the middle of a write the client does not read).
    pub async fn cut(&self) -> Closed {
        self.mailbox.cut().await
    }

    /// Turns client-side caching on (or changes its mode) with invalidations sent here,
    /// or to `redirect` (a client id and its inbox). Fails with Redis's message when a
    /// broadcast prefix overlaps another.
    pub fn track(&self, mode: TrackingMode, redirect: Option<(u64, Inbox)>) -> Result<(), String> {
        let own = Inbox(Arc::clone(&self.mailbox));
        self.inner.tracking.enable(self.client, own, redirect, mode)
    }

    /// Turns client-side caching off.
    pub fn untrack(&self) {
        self.inner.tracking.disable(self.client);
    }

    /// Remembers that this client read `keys` (default tracking mode).
    pub fn remember<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) {
        self.inner.tracking.remember(self.client, keys);
    }

    /// The broadcast prefixes tracked and whether the redirect target is gone; `None`
    /// while not tracking.
    pub fn tracking_info(&self) -> Option<(Vec<Bytes>, bool)> {
        self.inner.tracking.info(self.client)
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.untrack();
        for space in [Space::Channel, Space::Pattern, Space::Shard] {
            for name in self.names(space) {
                self.unsubscribe(space, &name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;
    use crate::streams::{Ack, BrokerConfig, Delivery, Pattern, SubscribeOptions};

    fn cache() -> Arc<Cache> {
        Arc::new(Cache::new(crate::cache::CacheConfig::default()).unwrap())
    }

    fn bus() -> PubSub {
        PubSub::new(
            Broker::new(BrokerConfig::default()),
            cache(),
            OutputLimits::default(),
        )
    }

    fn subscriber(bus: &PubSub) -> Subscriber {
        bus.subscriber(7, bus.inbox())
    }

    /// (pattern, channel, payloads) of everything queued for `subscriber`.
    fn taken(subscriber: &Subscriber) -> Vec<(Option<Bytes>, Bytes, Vec<Bytes>)> {
        let mut entries = Vec::new();
        subscriber.drain(&mut entries).expect("open");
        entries
            .into_iter()
            .map(|entry| {
                let Entry::Message { pattern, published } = entry else {
                    panic!("a message");
                };
                let payloads = published.payloads().cloned().collect();
                (pattern, published.channel().clone(), payloads)
            })
            .collect()
    }

    fn b(text: &'static str) -> Bytes {
        Bytes::from_static(text.as_bytes())
    }

    #[test]
    fn channels_patterns_and_shards_reach_their_subscribers() {
        let bus = bus();
        let mut one = subscriber(&bus);
        let mut two = subscriber(&bus);
        assert!(one.subscribe(Space::Channel, b("news")));
        assert!(
            !one.subscribe(Space::Channel, b("news")),
            "already subscribed"
        );
        assert!(two.subscribe(Space::Pattern, b("n*")));
        assert!(two.subscribe(Space::Shard, b("news")));
        let Route::Delivered(reached) = bus.publish(b("news"), b("hi")).unwrap() else {
            panic!("not a stream name");
        };
        assert_eq!(reached, 2);
        assert_eq!(bus.spublish(b("news"), b("shard")), 1);
        assert_eq!(taken(&one), [(None, b("news"), vec![b("hi")])]);
        let two_got = taken(&two);
        assert_eq!(two_got[0], (Some(b("n*")), b("news"), vec![b("hi")]));
        assert_eq!(two_got[1], (None, b("news"), vec![b("shard")]));
        assert_eq!(bus.numsub(Space::Channel, b"news"), 1);
        assert_eq!(bus.channels(Space::Pattern, None), [b("n*")]);
        drop(two);
        let stats = bus.stats();
        assert_eq!(
            (stats.channels, stats.patterns, stats.shard_channels),
            (1, 0, 0)
        );
        assert!(one.unsubscribe(Space::Channel, b"news"));
        assert!(one.is_idle());
        assert_eq!(bus.stats().channels, 0, "an empty channel is forgotten");
    }

    #[tokio::test]
    async fn stream_named_channels_are_the_streams() {
        let broker = Broker::new(BrokerConfig::default());
        let bus = PubSub::new(broker.clone(), cache(), OutputLimits::default());
        let mut resp = subscriber(&bus);
        resp.subscribe(Space::Channel, b("acme/orders/new"));
        resp.subscribe(Space::Pattern, b("acme/*"));
        let mut native = broker
            .subscribe(
                Pattern::new("acme/orders/new").unwrap(),
                SubscribeOptions::default(),
            )
            .unwrap();
        // A RESP publish is the stream's publish: native subscribers get it, and the RESP
        // ones through the tap.
        let Route::Stream {
            stream,
            message,
            receivers,
        } = bus.publish(b("acme/orders/new"), b("from resp")).unwrap()
        else {
            panic!("a stream name");
        };
        assert_eq!(receivers, 3);
        stream
            .publish(vec![message], Ack::Accepted, None)
            .await
            .unwrap();
        let Delivery::Batch(batch) = native.recv().await else {
            panic!("a batch");
        };
        assert_eq!(batch.events()[0].payload, b("from resp"));
        // A native publish reaches RESP subscribers too.
        broker
            .publish(
                &StreamName::new("acme/orders/new").unwrap(),
                vec![Message::new("from native")],
                Ack::Accepted,
                None,
            )
            .await
            .unwrap();
        let got = taken(&resp);
        let mut payloads: Vec<_> = got
            .iter()
            .map(|(pattern, _, p)| (pattern.is_some(), p[0].clone()))
            .collect();
        payloads.sort();
        assert_eq!(
            payloads,
            [
                (false, b("from native")),
                (false, b("from resp")),
                (true, b("from native")),
                (true, b("from resp")),
            ]
        );
    }

    #[test]
    fn the_hard_limit_closes_a_mailbox_and_is_counted() {
        let limits = OutputLimits {
            hard_bytes: 1000,
            soft_bytes: 0,
            soft_period: std::time::Duration::ZERO,
        };
        let bus = PubSub::new(Broker::new(BrokerConfig::default()), cache(), limits);
        let mut slow = subscriber(&bus);
        let mut fast = subscriber(&bus);
        slow.subscribe(Space::Channel, b("c"));
        fast.subscribe(Space::Channel, b("c"));
        // Each message counts 100 payload + 1 channel + 32 framing bytes: the eighth
        // reaches the limit.
        for _ in 0..10 {
            bus.publish(b("c"), Bytes::from(vec![b'x'; 100])).unwrap();
            taken(&fast);
        }
        let Err(Closed::HardLimit { limit: 1000, .. }) = slow.drain(&mut Vec::new()) else {
            panic!("closed by the hard limit");
        };
        assert_eq!(bus.stats().disconnected_hard, 1);
        assert_eq!(bus.stats().delivered, 10 + 7);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Subscribe(usize, Space, usize),
        Unsubscribe(usize, Space, usize),
        Publish(usize),
        SPublish(usize),
    }

    const NAMES: [&str; 4] = ["a", "ab", "b", "ba"];
    const PATTERNS: [&str; 3] = ["a*", "?", "*b*"];

    fn op() -> impl Strategy<Value = Op> {
        let space = prop_oneof![
            Just(Space::Channel),
            Just(Space::Pattern),
            Just(Space::Shard)
        ];
        prop_oneof![
            (0..3usize, space.clone(), 0..4usize).prop_map(|(s, sp, n)| Op::Subscribe(s, sp, n)),
            (0..3usize, space, 0..4usize).prop_map(|(s, sp, n)| Op::Unsubscribe(s, sp, n)),
            (0..4usize).prop_map(Op::Publish),
            (0..4usize).prop_map(Op::SPublish),
        ]
    }

    fn name(space: Space, n: usize) -> Bytes {
        let text = match space {
            Space::Pattern => PATTERNS[n % PATTERNS.len()],
            Space::Channel | Space::Shard => NAMES[n],
        };
        Bytes::from_static(text.as_bytes())
    }

    proptest! {
        /// Against a model of who is subscribed to what: every publish reaches exactly
        /// the subscriptions that match it, counted as Redis counts them.
        #[test]
        fn deliveries_follow_a_model_of_the_subscriptions(ops in proptest::collection::vec(op(), 1..60)) {
            let bus = bus();
                let mut subscribers: Vec<Subscriber> = (0..3).map(|_| subscriber(&bus)).collect();
            let mut model: Vec<[BTreeSet<Bytes>; 3]> = vec![Default::default(); 3];
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Subscribe(s, space, n) => {
                        let added = subscribers[s].subscribe(space, name(space, n));
                        prop_assert_eq!(added, model[s][slot(space)].insert(name(space, n)));
                    }
                    Op::Unsubscribe(s, space, n) => {
                        let removed = subscribers[s].unsubscribe(space, &name(space, n));
                        prop_assert_eq!(removed, model[s][slot(space)].remove(&name(space, n)));
                    }
                    Op::Publish(n) | Op::SPublish(n) => {
                        let shard = matches!(op, Op::SPublish(_));
                        let channel = name(Space::Channel, n);
                        let payload = Bytes::from(step.to_string());
                        let reached = if shard {
                            bus.spublish(channel.clone(), payload.clone())
                        } else {
                            let Route::Delivered(reached) =
                                bus.publish(channel.clone(), payload.clone()).unwrap()
                            else {
                                panic!("not a stream name");
                            };
                            reached
                        };
                        let mut expected_total = 0;
                        for (s, subscriber) in subscribers.iter().enumerate() {
                            let mut expected = Vec::new();
                            if shard {
                                if model[s][slot(Space::Shard)].contains(&channel) {
                                    expected.push((None, channel.clone(), vec![payload.clone()]));
                                }
                            } else {
                                if model[s][slot(Space::Channel)].contains(&channel) {
                                    expected.push((None, channel.clone(), vec![payload.clone()]));
                                }
                                for pattern in &model[s][slot(Space::Pattern)] {
                                    if glob_match(pattern, &channel) {
                                        expected.push((Some(pattern.clone()), channel.clone(), vec![payload.clone()]));
                                    }
                                }
                            }
                            expected_total += expected.len() as u64;
                            let mut got = taken(subscriber);
                            got.sort();
                            expected.sort();
                            prop_assert_eq!(got, expected);
                        }
                        prop_assert_eq!(reached, expected_total);
                    }
                }
                for space in [Space::Channel, Space::Pattern, Space::Shard] {
                    let mut listed = bus.channels(space, None);
                    listed.sort();
                    let modeled: BTreeSet<Bytes> = model.iter().flat_map(|m| m[slot(space)].iter().cloned()).collect();
                    prop_assert_eq!(listed, modeled.into_iter().collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn an_encoding_is_shared_while_held_twice_and_written_in_place_by_the_last_holder() {
        fn encode(
            calls: &std::cell::Cell<u32>,
        ) -> impl FnOnce(&Published, &mut bytes::BytesMut) + '_ {
            move |p, out| {
                calls.set(calls.get() + 1);
                out.extend_from_slice(p.channel());
                for payload in p.payloads() {
                    out.extend_from_slice(payload);
                }
            }
        }
        let calls = std::cell::Cell::new(0);
        let published = Arc::new(Published::one(
            Bytes::from_static(b"ch:"),
            Bytes::from_static(b"hello"),
            false,
        ));
        let other = Arc::clone(&published);
        let (mut first, mut second) = (bytes::BytesMut::from(&b">"[..]), bytes::BytesMut::new());
        published.write_encoded(0, &mut first, encode(&calls));
        other.write_encoded(0, &mut second, encode(&calls));
        assert_eq!(
            (&first[..], &second[..], calls.get()),
            (&b">ch:hello"[..], &b"ch:hello"[..], 1)
        );
        // The other slot, with one holder left: encoded into the output, never kept.
        drop(other);
        let mut out = bytes::BytesMut::new();
        published.write_encoded(1, &mut out, encode(&calls));
        published.write_encoded(1, &mut out, encode(&calls));
        assert_eq!((&out[..], calls.get()), (&b"ch:helloch:hello"[..], 3));
    }
}
