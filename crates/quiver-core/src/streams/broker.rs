//! The streams broker: the API transports call.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::Instant;

use crate::streams::batch::Message;
use crate::streams::budget::{Budget, BudgetScope};
use crate::streams::clock::{Clock, SystemClock};
use crate::streams::config::{BrokerConfig, StreamConfig};
use crate::streams::flush::FlushQueue;
use crate::streams::metrics::{BrokerStats, StreamStats};
use crate::streams::name::StreamName;
use crate::streams::pattern::{Pattern, PatternKind};
use crate::streams::publish::{self, Ack, PublishContext, PublishError, Receipt};
use crate::streams::registry::{CreateStreamError, Registry, SubscribeError};
use crate::streams::stream::Stream;
use crate::streams::subscriber::{
    EndReason, SubShared, SubscribeOptions, Subscription, SubscriptionId,
};

struct Shared {
    config: BrokerConfig,
    registry: Arc<Registry>,
    flush: Arc<FlushQueue>,
    process_budget: Budget,
    clock: Arc<dyn Clock>,
    next_subscription: AtomicU64,
}

/// The live-streams broker. Cloning is cheap and shares the broker.
///
/// Delivery by delay needs a driver: spawn [`run_flusher`](Self::run_flusher) once, or call
/// [`flush_due`](Self::flush_due) with your own clock. Streams whose `max_delay` is zero
/// need no driver.
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

impl Broker {
    /// A broker reading the system clock.
    pub fn new(config: BrokerConfig) -> Self {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// A broker reading `clock`.
    pub fn with_clock(config: BrokerConfig, clock: Arc<dyn Clock>) -> Self {
        let flush = Arc::new(FlushQueue::default());
        let shared = Shared {
            registry: Arc::new(Registry::new(config, Arc::clone(&flush))),
            process_budget: Budget::new(BudgetScope::Process, config.inflight.process_bytes),
            config,
            flush,
            clock,
            next_subscription: AtomicU64::new(1),
        };
        Self {
            shared: Arc::new(shared),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BrokerConfig {
        &self.shared.config
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

    /// Creates `name` with explicit settings (policy, batching, queues).
    pub fn create_stream(
        &self,
        name: &StreamName,
        config: StreamConfig,
    ) -> Result<StreamHandle, CreateStreamError> {
        let stream = self.shared.registry.create(name, config)?;
        Ok(StreamHandle {
            stream,
            broker: self.clone(),
        })
    }

    /// A handle on `name`, creating the stream with the default settings if needed. A
    /// transport keeps handles of the streams a connection publishes to, so that its
    /// publishes skip the registry lookup.
    pub fn stream(&self, name: &StreamName) -> Result<StreamHandle, PublishError> {
        let stream = self.shared.registry.stream_or_create(name)?;
        Ok(StreamHandle {
            stream,
            broker: self.clone(),
        })
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

    /// Subscribes to every stream `pattern` matches, existing or future.
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
        let sub = Arc::new(SubShared::new(id, pattern, limits));
        self.shared.registry.subscribe(&sub)?;
        Ok(Subscription::new(sub, Arc::clone(&self.shared.registry)))
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
            match self.flush_due(self.shared.clock.now()) {
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

    /// Delivers every pending batch now, then ends every subscription after what it has
    /// queued ([`EndReason::Shutdown`]).
    pub fn shutdown(&self) {
        for stream in self.shared.registry.streams() {
            stream.flush();
        }
        for sub in self.shared.registry.subscriptions() {
            sub.end(EndReason::Shutdown);
        }
    }

    /// Every stream's counters and the totals.
    pub fn stats(&self) -> BrokerStats {
        let mut stats = BrokerStats::default();
        for stream in self.shared.registry.streams() {
            let snapshot = stream.metrics.snapshot();
            stats.totals.accumulate(&snapshot);
            stats.streams.push((stream.name.clone(), snapshot));
        }
        stats.subscriptions = self.shared.registry.subscription_count() as u64;
        stats
    }

    fn publish_context<'a>(&'a self, budget: Option<&'a Budget>) -> PublishContext<'a> {
        PublishContext {
            budgets: [budget, Some(&self.shared.process_budget)],
            inflight_wait: self.shared.config.inflight.wait,
            clock: &*self.shared.clock,
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

    /// Publishes `messages` (1 to [`MAX_PUBLISH_EVENTS`](crate::streams::MAX_PUBLISH_EVENTS))
    /// as one unit: consecutive sequence numbers, one timestamp, nothing of another
    /// publisher in between. Their bytes are charged to `budget` (the connection's) and to
    /// the process budget until every subscription is done with them; a full budget makes
    /// the publish wait up to `inflight.wait`, then fail. Under `block`, it waits for room
    /// up to the stream's `block_timeout`, then fails. A failed publish took nothing.
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

    /// Delivers the stream's pending batch now, whatever its deadline.
    pub fn flush(&self) {
        self.stream.flush();
    }

    /// The stream's counters now.
    pub fn stats(&self) -> StreamStats {
        self.stream.metrics.snapshot()
    }
}
