//! Live streams: names and patterns, the registry, publishing, delivery batching, bounded
//! subscription queues with slow-subscriber policies, in-flight budgets and metrics.
//!
//! Road of a message: [`StreamHandle::publish`] (check, budget, policy admission) ->
//! `Stream::take` (sequence, append to the pending batch; seal when full, when the call
//! ends with no delay configured, or at the deadline) -> every subscription's queue
//! (`Arc<Batch>`) -> [`Subscription::recv`] in the transport.
//!
//! What a transport does with it: resolve a [`StreamHandle`] per stream a connection
//! publishes to and call [`StreamHandle::publish`] (reply per [`Ack`]); hold one
//! [`Budget`] per connection ([`Broker::connection_budget`]); per subscription, a writer
//! loop calls [`Subscription::recv_many`] and turns [`Delivery::Batch`] into an event batch
//! whose body comes from [`Batch::encoded`] (encoded once, shared by every connection),
//! [`Delivery::Lag`] into a lag frame, and [`Delivery::Ended`] into a subscription-ended
//! frame, then drops the subscription. Errors are typed per operation ([`PublishError`],
//! [`SubscribeError`], [`NameError`], [`CreateStreamError`]) for the transport to map to its
//! own codes.
//!
//! Locks, always taken in this order: the registry (`RwLock`; write only to create a
//! stream, subscribe or unsubscribe), one stream (`Mutex`; once per publish call), one
//! subscription's queue (`Mutex`; once per batch per subscription), the flush queue
//! (`Mutex`; once per pending batch when a delay is configured). Budgets are atomics.

mod batch;
mod broker;
mod budget;
mod clock;
mod config;
pub mod durable;
mod flush;
pub mod groups;
mod metrics;
mod name;
mod pattern;
mod policy;
mod publish;
mod queue_group;
mod registry;
mod stream;
mod subscriber;
mod tap;

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use batch::{Batch, ENCODING_SLOTS, EncodingSlot, Event, Header, Message};
pub use broker::{Broker, OpenError, OpenReport, StreamHandle, StreamInfo};
pub use budget::{Budget, BudgetError, BudgetScope, Permit};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{
    BatchConfig, BlockTimeout, BrokerConfig, ConfigError, InflightConfig, Limits, MAX_BATCH_BYTES,
    MAX_BATCH_DELAY, MAX_BATCH_EVENTS, MAX_BLOCK_TIMEOUT, MAX_MESSAGE_BYTES, MAX_PUBLISH_EVENTS,
    MAX_QUEUE_BYTES, MAX_QUEUE_EVENTS, QueueLimits, StreamConfig,
};
pub use groups::{
    GroupAcker, GroupBatch, GroupConfig, GroupDelivery, GroupError, GroupEvent, GroupInfo,
    GroupMember, JoinOptions,
};
pub use metrics::{BrokerStats, StreamMetrics, StreamStats};
pub use name::{
    MAX_LEVEL_LEN, MAX_NAME_LEN, MAX_NAME_LEVELS, MIN_NAME_LEVELS, NameError, StreamName,
};
pub use pattern::{Pattern, PatternKind};
pub use policy::{SlowPolicy, UnknownPolicy};
pub use publish::{Ack, PublishError, Receipt, Submitted};
pub use registry::{CreateStreamError, DeleteStreamError, SubscribeError};
pub use subscriber::{
    Delivery, EndReason, StartAt, SubscribeOptions, Subscription, SubscriptionId,
};
pub(crate) use tap::BatchTap;

/// Locks `mutex`. A panic while holding one of the broker's locks leaves its state
/// consistent (every critical section finishes its updates before calling out), so a
/// poisoned lock is used as is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}
