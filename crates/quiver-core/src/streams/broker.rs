//! The streams broker: the API transports call.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use quiver_log::RetentionPolicy;
use thiserror::Error;
use tokio::time::Instant;

use crate::streams::batch::Message;
use crate::streams::budget::{Budget, BudgetScope};
use crate::streams::clock::{Clock, SystemClock};
use crate::streams::config::{BrokerConfig, StreamConfig};
use crate::streams::durable::history::{CatchUp, HistoryError, Page};
use crate::streams::durable::{self, DurableStats, StorageConfig, Store, StoreError};
use crate::streams::flush::FlushQueue;
use crate::streams::groups::{
    self, GroupConfig, GroupError, GroupInfo, GroupMember, JoinOptions, validate_group_name,
};
use crate::streams::metrics::{BrokerStats, StreamStats};
use crate::streams::name::StreamName;
use crate::streams::pattern::{Pattern, PatternKind};
use crate::streams::publish::{self, Ack, PublishContext, PublishError, Receipt, Submitted};
use crate::streams::registry::{CreateStreamError, DeleteStreamError, Registry, SubscribeError};
use crate::streams::stream::Stream;
use crate::streams::subscriber::{
    EndReason, StartAt, SubShared, SubscribeOptions, Subscription, SubscriptionId,
};

/// How long closing or deleting a durable stream waits for its append round in progress.
const APPEND_DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

struct Shared {
    config: BrokerConfig,
    registry: Arc<Registry>,
    flush: Arc<FlushQueue>,
    process_budget: Budget,
    next_subscription: AtomicU64,
}

/// The streams broker. Cloning is cheap and shares the broker.
///
/// Delivery by delay needs a driver: spawn [`run_flusher`](Self::run_flusher) once, or call
/// [`flush_due`](Self::flush_due) with your own clock. Streams whose `max_delay` is zero
/// need no driver. A broker opened on a data directory ([`Broker::open`]) also has durable
/// streams; spawn [`run_retention`](Self::run_retention) to apply their retention.
#[derive(Clone)]
pub struct Broker {
    shared: Arc<Shared>,
}

impl fmt::Debug for Broker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

/// Opening a broker on a data directory failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The storage directories or the catalog.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stream of the catalog could not be made again.
    #[error("{0}")]
    Stream(CreateStreamError),
}

/// What opening a broker on a data directory found.
#[derive(Debug, Clone, Default)]
pub struct OpenReport {
    /// Streams made again from the catalog.
    pub streams: usize,
    /// Of them, durable (with a log).
    pub durable: usize,
    /// Stream directories no catalog entry claimed, moved aside: (from, to).
    pub orphaned: Vec<(PathBuf, PathBuf)>,
    /// Logs whose torn tail was cut at start-up (a crash mid-write): stream and what was cut.
    pub repaired: Vec<(StreamName, String)>,
}

/// A stream's settings and counters.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// The name.
    pub name: StreamName,
    /// Its settings (durable ones included).
    pub config: StreamConfig,
    /// When it was created, ms since the Unix epoch.
    pub created_ms: u64,
    /// Live-delivery counters.
    pub live: StreamStats,
    /// Its log, when durable.
    pub durable: Option<DurableStats>,
}

impl Broker {
    /// A broker reading the system clock, without durable streams.
    pub fn new(config: BrokerConfig) -> Self {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// A broker reading `clock`, without durable streams.
    pub fn with_clock(config: BrokerConfig, clock: Arc<dyn Clock>) -> Self {
        Self::build(config, None, clock)
    }

    /// A broker that keeps durable streams in `storage.dir`: opens the catalog, makes every
    /// stream it lists again (recovering each durable stream's log), and moves aside
    /// stream directories no catalog entry claims. Blocks on disk I/O.
    pub fn open(
        config: BrokerConfig,
        storage: StorageConfig,
    ) -> Result<(Broker, OpenReport), OpenError> {
        Self::open_with_clock(config, storage, Arc::new(SystemClock))
    }

    /// [`open`](Self::open) reading `clock`.
    pub fn open_with_clock(
        config: BrokerConfig,
        storage: StorageConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<(Broker, OpenReport), OpenError> {
        let (store, defs) = Store::open(storage)?;
        let broker = Self::build(config, Some(store), clock);
        let registry = &broker.shared.registry;
        let mut report = OpenReport::default();
        for def in &defs {
            registry.load(def).map_err(OpenError::Stream)?;
        }
        let store = registry.store.as_ref().expect("opened with a store");
        let mut known = std::collections::HashSet::new();
        for stream in registry.streams() {
            report.streams += 1;
            let Some(durable) = &stream.durable else {
                continue;
            };
            report.durable += 1;
            known.insert(store.log_dir(&stream.name));
            let recovery = durable.log.recovery_report();
            if !recovery.truncations.is_empty() {
                report
                    .repaired
                    .push((stream.name.clone(), format!("{recovery:?}")));
            }
        }
        report.orphaned = store.sweep_orphans(&known)?;
        Ok((broker, report))
    }

    fn build(config: BrokerConfig, store: Option<Store>, clock: Arc<dyn Clock>) -> Self {
        let flush = Arc::new(FlushQueue::default());
        let shared = Shared {
            registry: Registry::new(config, Arc::clone(&flush), store, clock),
            process_budget: Budget::new(BudgetScope::Process, config.inflight.process_bytes),
            config,
            flush,
            next_subscription: AtomicU64::new(1),
        };
        Self {
            shared: Arc::new(shared),
        }
    }

    /// Sets the listener every stream offers its sealed batches to; false if one was set.
    pub(crate) fn set_tap(&self, tap: Arc<dyn crate::streams::BatchTap>) -> bool {
        self.shared.registry.tap.set(tap)
    }

    /// The number of subscriptions attached to stream `name` now (0 if it does not exist).
    pub fn subscribers(&self, name: &StreamName) -> u64 {
        self.shared.registry.stream(name).map_or(0, |stream| {
            stream.metrics.subscribers.load(Ordering::Relaxed)
        })
    }

    /// The configuration.
    pub fn config(&self) -> &BrokerConfig {
        &self.shared.config
    }

    /// Whether this broker keeps durable streams (it was opened on a data directory).
    pub fn has_storage(&self) -> bool {
        self.shared.registry.store.is_some()
    }

    /// A fresh in-flight budget for one connection (bound: `inflight.connection_bytes`).
    pub fn connection_budget(&self) -> Budget {
        Budget::new(
            BudgetScope::Connection,
            self.shared.config.inflight.connection_bytes,
        )
    }

    /// The process-wide in-flight budget.
    pub fn process_budget(&self) -> &Budget {
        &self.shared.process_budget
    }

    /// Creates `name` with explicit settings (policy, batching, queues, durability). On a
    /// broker with a data directory the definition survives a restart; a durable stream
    /// creates its log (disk I/O).
    pub fn create_stream(
        &self,
        name: &StreamName,
        config: StreamConfig,
    ) -> Result<StreamHandle, CreateStreamError> {
        let stream = self.shared.registry.create(name, config, true)?;
        Ok(self.handle(stream))
    }

    /// Deletes `name`: live subscriptions to exactly this stream end, wildcard ones stay
    /// subscribed to their pattern, and a durable stream's messages and definition are
    /// removed from disk (disk I/O). Handles on it refuse publishes from now on.
    pub fn delete_stream(&self, name: &StreamName) -> Result<(), DeleteStreamError> {
        let registry = &self.shared.registry;
        let (stream, groups) = registry.remove(name)?;
        let Some(store) = &registry.store else {
            return Ok(());
        };
        let failed = |message: String| DeleteStreamError::Storage {
            stream: name.clone(),
            message,
        };
        let Some(durable) = &stream.durable else {
            return store
                .catalog
                .remove_stream(name)
                .map_err(|e| failed(e.to_string()));
        };
        durable::stop(&stream, "the stream was deleted", APPEND_DRAIN_TIMEOUT);
        let _ = durable.log.close();
        // The definition first: from then on the stream does not exist, groups or not.
        store.remove(name).map_err(|e| failed(e.to_string()))?;
        for group in groups {
            group
                .remove_file(&store.catalog)
                .map_err(|e| failed(e.to_string()))?;
        }
        Ok(())
    }

    /// A handle on `name`, creating the stream if needed (durable when a durable rule
    /// matches its name, with the default settings otherwise). A transport keeps handles
    /// of the streams a connection publishes to, so that its publishes skip the registry
    /// lookup.
    pub fn stream(&self, name: &StreamName) -> Result<StreamHandle, PublishError> {
        let stream = self.shared.registry.stream_or_create(name)?;
        Ok(self.handle(stream))
    }

    /// A handle on `name` if the stream exists.
    pub fn existing(&self, name: &StreamName) -> Option<StreamHandle> {
        self.shared
            .registry
            .stream(name)
            .map(|stream| self.handle(stream))
    }

    fn handle(&self, stream: Arc<Stream>) -> StreamHandle {
        StreamHandle {
            stream,
            broker: self.clone(),
        }
    }

    /// Settings and counters of `name`, if it exists.
    pub fn describe(&self, name: &StreamName) -> Option<StreamInfo> {
        self.existing(name).map(|handle| handle.info())
    }

    /// Settings and counters of every stream, in name order.
    pub fn list_streams(&self) -> Vec<StreamInfo> {
        self.shared
            .registry
            .streams()
            .into_iter()
            .map(|stream| self.handle(stream).info())
            .collect()
    }

    /// Publishes `messages` to `name` as one unit (see [`StreamHandle::publish`]).
    pub async fn publish(
        &self,
        name: &StreamName,
        messages: Vec<Message>,
        ack: Ack,
        budget: Option<&Budget>,
    ) -> Result<Receipt, PublishError> {
        self.stream(name)?.publish(messages, ack, budget).await
    }

    /// Subscribes to every stream `pattern` matches, existing or future, from where
    /// `options.start` says.
    ///
    /// Without queue bounds in `options`, an exact-name subscription to an existing stream
    /// takes that stream's `queue` settings; any other takes the default stream config's.
    pub fn subscribe(
        &self,
        pattern: Pattern,
        options: SubscribeOptions,
    ) -> Result<Subscription, SubscribeError> {
        let id = SubscriptionId(
            self.shared
                .next_subscription
                .fetch_add(1, Ordering::Relaxed),
        );
        let stream_queue = match pattern.kind() {
            PatternKind::Exact(name) => self
                .shared
                .registry
                .stream(name)
                .map(|stream| stream.config.queue),
            _ => None,
        };
        let limits = options
            .queue
            .or(stream_queue)
            .unwrap_or(self.shared.config.default_stream.queue);
        let mut sub = SubShared::new(id, pattern, limits);
        sub.group = options.group.as_deref().map(Arc::from);
        let sub = Arc::new(sub);
        let cursors = self
            .shared
            .registry
            .subscribe(&sub, options.start, &options.resume)?;
        let catchup = (!cursors.is_empty()).then(|| CatchUp::new(cursors));
        Ok(Subscription::new(
            sub,
            Arc::clone(&self.shared.registry),
            catchup,
        ))
    }

    /// Ids of the subscriptions that match `name` (as the registry's index finds them).
    pub fn matching(&self, name: &StreamName) -> Vec<SubscriptionId> {
        self.shared.registry.matching(name)
    }

    /// Delivers every pending batch whose deadline is at or before `now`; returns the next
    /// deadline, if any. The sans-IO face of batching by delay.
    pub fn flush_due(&self, now: Instant) -> Option<Instant> {
        let (due, next) = self.shared.flush.take_due(now);
        for stream in due {
            stream.flush_if_due(now);
        }
        next
    }

    /// Drives batching by delay until the future is dropped: sleeps until the earliest
    /// pending deadline, delivers what is due, repeats. Spawn it once per broker.
    pub async fn run_flusher(self) {
        loop {
            let earlier = self.shared.flush.earlier.notified();
            match self.flush_due(self.shared.registry.clock.now()) {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = earlier => {}
                    }
                }
                None => earlier.await,
            }
        }
    }

    /// Applies every durable stream's retention now (on the blocking pool); returns the
    /// segments deleted.
    pub async fn apply_retention(&self) -> usize {
        let mut deleted = 0;
        for stream in self.shared.registry.streams() {
            let Some(durable) = &stream.durable else {
                continue;
            };
            let retention = durable.config.retention;
            let policy = RetentionPolicy {
                max_age_ms: retention
                    .max_age
                    .map(|age| u64::try_from(age.as_millis()).unwrap_or(u64::MAX)),
                max_bytes: retention.max_bytes,
                max_records: retention.max_messages,
                protect_unacked: false,
                protect_offset: retention
                    .keep_unacked
                    .then(|| durable.group_floor())
                    .flatten(),
                hard_max_bytes: None,
            };
            if policy.max_age_ms.is_none()
                && policy.max_bytes.is_none()
                && policy.max_records.is_none()
            {
                continue;
            }
            let log = Arc::clone(&durable.log);
            let applied = tokio::task::spawn_blocking(move || log.apply_retention(&policy)).await;
            if let Ok(Ok(report)) = applied {
                deleted += report.deleted_segments.len();
            }
        }
        deleted
    }

    /// Applies retention every `retention_interval` until the future is dropped (a broker
    /// without a data directory has nothing to do and returns at once).
    pub async fn run_retention(self) {
        let Some(store) = &self.shared.registry.store else {
            return;
        };
        let every = store.config.retention_interval;
        loop {
            tokio::time::sleep(every).await;
            self.apply_retention().await;
        }
    }

    /// Delivers every pending batch now, then ends every subscription after what it has
    /// queued ([`EndReason::Shutdown`]).
    pub fn shutdown(&self) {
        for stream in self.shared.registry.streams() {
            stream.flush();
        }
        for sub in self.shared.registry.subscriptions() {
            sub.end(EndReason::Shutdown);
        }
        for member in self.shared.registry.group_members() {
            member.end(EndReason::Shutdown);
        }
    }

    /// Stops durable streams for good: waits for the appends in progress, then syncs and
    /// closes every log and writes every consumer group's state. Publishes to durable
    /// streams fail afterwards. Blocks on disk I/O.
    pub fn close(&self) {
        let registry = &self.shared.registry;
        for stream in registry.streams() {
            if let Some(durable) = &stream.durable {
                durable::stop(&stream, "the broker is closed", APPEND_DRAIN_TIMEOUT);
                let _ = durable.log.close();
                let all: Vec<_> = crate::streams::lock(&durable.groups)
                    .values()
                    .cloned()
                    .collect();
                for group in all {
                    group.stop(&EndReason::Shutdown);
                    let _ = groups::save_now(registry, &group);
                }
            }
        }
    }

    /// Joins consumer group `group` on every durable stream `pattern` matches, now and
    /// created later (an exact name that does not exist is created by the durable rules).
    /// The group is created where it does not exist, with `options.create` (or the
    /// defaults) starting at `options.start`.
    pub fn join_group(
        &self,
        pattern: Pattern,
        group: &str,
        options: JoinOptions,
    ) -> Result<GroupMember, GroupError> {
        validate_group_name(group)?;
        if let Some(max_in_flight) = options
            .max_in_flight
            .filter(|n| !(1..=groups::MAX_IN_FLIGHT).contains(n))
        {
            return Err(GroupError::MemberInFlight { max_in_flight });
        }
        let registry = &self.shared.registry;
        let (member, shared) =
            GroupMember::new(Arc::clone(registry), pattern, group.to_owned(), options);
        registry.join_group(&shared)?;
        Ok(member)
    }

    /// Creates group `group` on durable stream `stream` (with `config`, or the defaults)
    /// starting at `start`; a group that exists is left as it is. Returns its information.
    pub fn create_group(
        &self,
        stream: &StreamName,
        group: &str,
        config: Option<GroupConfig>,
        start: StartAt,
    ) -> Result<GroupInfo, GroupError> {
        validate_group_name(group)?;
        let registry = &self.shared.registry;
        let handle = registry.durable_stream(stream)?;
        let created = groups::group_of(registry, &handle, group, config.as_ref(), start)?;
        Ok(groups::info(&handle, &created))
    }

    fn group(
        &self,
        stream: &StreamName,
        group: &str,
    ) -> Result<(Arc<Stream>, Arc<groups::group::Group>), GroupError> {
        let handle = self.shared.registry.durable_stream(stream)?;
        let durable = handle.durable.as_ref().expect("checked durable");
        let found = crate::streams::lock(&durable.groups).get(group).cloned();
        let found = found.ok_or_else(|| GroupError::NoGroup {
            stream: stream.clone(),
            group: group.to_owned(),
        })?;
        Ok((handle, found))
    }

    /// Information on one group.
    pub fn group_info(&self, stream: &StreamName, group: &str) -> Result<GroupInfo, GroupError> {
        let (handle, found) = self.group(stream, group)?;
        Ok(groups::info(&handle, &found))
    }

    /// Information on every group of `stream`, by name.
    pub fn groups(&self, stream: &StreamName) -> Result<Vec<GroupInfo>, GroupError> {
        let handle = self.shared.registry.durable_stream(stream)?;
        let durable = handle.durable.as_ref().expect("checked durable");
        let all: Vec<_> = crate::streams::lock(&durable.groups)
            .values()
            .cloned()
            .collect();
        Ok(all
            .iter()
            .map(|group| groups::info(&handle, group))
            .collect())
    }

    /// Moves group `group` to `to` (earlier or later): nothing is pending any more, the
    /// next delivery is there. Written to the catalog at once.
    pub fn reset_group(
        &self,
        stream: &StreamName,
        group: &str,
        to: StartAt,
    ) -> Result<GroupInfo, GroupError> {
        let (handle, found) = self.group(stream, group)?;
        let offset = groups::start_offset(&handle, to)?;
        found.reset(offset);
        groups::save_now(&self.shared.registry, &found)?;
        Ok(groups::info(&handle, &found))
    }

    /// Deletes group `group`: its members are told, its state is removed.
    pub fn delete_group(&self, stream: &StreamName, group: &str) -> Result<(), GroupError> {
        let (handle, found) = self.group(stream, group)?;
        let durable = handle.durable.as_ref().expect("checked durable");
        crate::streams::lock(&durable.groups).remove(group);
        found.stop(&EndReason::GroupDeleted {
            stream: stream.clone(),
            group: group.to_owned(),
        });
        if let Some(store) = &self.shared.registry.store {
            found
                .remove_file(&store.catalog)
                .map_err(|error| GroupError::Storage {
                    stream: stream.clone(),
                    group: group.to_owned(),
                    message: error.to_string(),
                })?;
        }
        Ok(())
    }

    /// Every stream's counters and the totals.
    pub fn stats(&self) -> BrokerStats {
        let registry = &self.shared.registry;
        let mut stats = BrokerStats {
            totals: registry.retired(),
            ..BrokerStats::default()
        };
        stats.totals.subscribers = 0;
        for stream in registry.streams() {
            let snapshot = stream.metrics.snapshot();
            stats.totals.accumulate(&snapshot);
            stats.streams.push((stream.name.clone(), snapshot));
        }
        stats.subscriptions = registry.subscription_count() as u64;
        stats
    }

    fn publish_context<'a>(&'a self, budget: Option<&'a Budget>) -> PublishContext<'a> {
        PublishContext {
            budgets: [budget, Some(&self.shared.process_budget)],
            inflight_wait: self.shared.config.inflight.wait,
            clock: &self.shared.registry.clock,
        }
    }
}

/// A stream, resolved once. Publishing through it takes no registry lock.
#[derive(Clone)]
pub struct StreamHandle {
    stream: Arc<Stream>,
    broker: Broker,
}

impl fmt::Debug for StreamHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamHandle")
            .field("name", &self.stream.name)
            .finish()
    }
}

impl StreamHandle {
    /// The stream's name.
    pub fn name(&self) -> &StreamName {
        &self.stream.name
    }

    /// The stream's settings.
    pub fn config(&self) -> &StreamConfig {
        &self.stream.config
    }

    /// Whether the stream is durable (backed by a log).
    pub fn is_durable(&self) -> bool {
        self.stream.durable.is_some()
    }

    /// Subscriptions attached to the stream now.
    pub fn subscribers(&self) -> u64 {
        self.stream.metrics.subscribers.load(Ordering::Relaxed)
    }

    /// Whether the stream was deleted since this handle was made (publishes through it
    /// fail; get a new handle from the broker).
    pub fn is_deleted(&self) -> bool {
        self.stream.is_deleted()
    }

    /// Publishes `messages` (1 to [`MAX_PUBLISH_EVENTS`](crate::streams::MAX_PUBLISH_EVENTS))
    /// as one unit: consecutive sequence numbers, one timestamp, nothing of another
    /// publisher in between. Their bytes are charged to `budget` (the connection's) and to
    /// the process budget until every subscription is done with them; a full budget makes
    /// the publish wait up to `inflight.wait`, then fail. Under `block`, it waits for room
    /// up to the stream's `block_timeout`, then fails. A failed publish took nothing.
    /// With [`Ack::Committed`] it returns once the messages are in the stream's log.
    pub async fn publish(
        &self,
        messages: Vec<Message>,
        ack: Ack,
        budget: Option<&Budget>,
    ) -> Result<Receipt, PublishError> {
        publish::publish(
            &self.stream,
            messages,
            ack,
            self.broker.publish_context(budget),
        )
        .await
    }

    /// Like [`publish`](Self::publish), but returns as soon as the messages are taken
    /// (sequenced, in order with every other publish to the stream); for
    /// [`Ack::Committed`], [`Submitted::committed`] then waits for the log. A transport
    /// that takes a connection's publishes in order and acknowledges them as they commit
    /// uses this.
    pub async fn submit(
        &self,
        messages: Vec<Message>,
        ack: Ack,
        budget: Option<&Budget>,
    ) -> Result<Submitted, PublishError> {
        publish::submit(
            &self.stream,
            messages,
            ack,
            self.broker.publish_context(budget),
        )
        .await
    }

    /// Reads up to `limit` stored messages (at most `max_bytes` of them, but at least one)
    /// from `start`, up to what subscribers have been handed: a durable stream's log read
    /// by position, for a client that pages through it. Blocks on disk I/O.
    pub fn read(
        &self,
        start: StartAt,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Page, HistoryError> {
        durable::history::read_page(&self.stream, start, limit, max_bytes)
    }

    /// Delivers the stream's pending batch now, whatever its deadline.
    pub fn flush(&self) {
        self.stream.flush();
    }

    /// The stream's counters now.
    pub fn stats(&self) -> StreamStats {
        self.stream.metrics.snapshot()
    }

    /// The stream's settings and counters.
    pub fn info(&self) -> StreamInfo {
        let stream = &self.stream;
        StreamInfo {
            name: stream.name.clone(),
            config: stream.config,
            created_ms: stream.created_ms,
            live: stream.metrics.snapshot(),
            durable: stream.durable.as_ref().map(durable::Durable::stats),
        }
    }
}
