//! The registry: streams by name, and subscriptions indexed so that the subscriptions of a
//! stream are found without scanning.
//!
//! - exact-name subscriptions: a hash map from stream name;
//! - `parent/*` subscriptions: a hash map from `parent` (one probe: the name's parent);
//! - `prefix/>` subscriptions: a hash map from `prefix` (one probe per proper prefix of the
//!   name, at most [`MAX_NAME_LEVELS`](crate::streams::MAX_NAME_LEVELS) - 1).
//!
//! Matching runs when a stream is created; the stream then keeps its own list of
//! subscriptions, so a publish never touches the registry's lock beyond one read to find
//! the stream (none at all through a [`StreamHandle`](crate::streams::StreamHandle)).
//! A new wildcard subscription attaches to the existing streams it matches by one scan of
//! the streams (bounded by `max_streams`); subscribing is rare next to publishing.
//!
//! Lock order: registry, then a stream, then a subscription's queue.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use thiserror::Error;

use crate::streams::config::{BrokerConfig, StreamConfig};
use crate::streams::flush::FlushQueue;
use crate::streams::name::StreamName;
use crate::streams::pattern::{Pattern, PatternKind};
use crate::streams::publish::PublishError;
use crate::streams::stream::Stream;
use crate::streams::subscriber::{SubShared, SubscriptionId};
use crate::streams::{read, write};

/// A subscribe the registry refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SubscribeError {
    /// The process already has `limit` subscriptions.
    #[error(
        "cannot subscribe to {pattern}: the broker already has {limit} subscriptions, its limit"
    )]
    TooManySubscriptions { pattern: String, limit: usize },
    /// The stream name or pattern already has `limit` subscriptions.
    #[error(
        "cannot subscribe to {pattern}: it already has {limit} subscriptions, the per-stream limit"
    )]
    TooManyForStream { pattern: String, limit: usize },
}

/// Creating a stream with explicit settings failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CreateStreamError {
    /// The stream exists already (created by an earlier call or a publish).
    #[error("stream {stream} already exists; its settings are fixed when it is created")]
    Exists { stream: StreamName },
    /// A new stream beyond the stream limit.
    #[error("cannot create stream {stream}: the broker already has {limit} streams, its limit")]
    TooManyStreams { stream: StreamName, limit: usize },
}

#[derive(Default)]
struct Index {
    streams: HashMap<StreamName, Arc<Stream>>,
    exact: HashMap<StreamName, Vec<Arc<SubShared>>>,
    one_level: HashMap<Arc<str>, Vec<Arc<SubShared>>>,
    subtree: HashMap<Arc<str>, Vec<Arc<SubShared>>>,
    subscriptions: usize,
}

impl Index {
    fn slot(&mut self, pattern: &Pattern) -> &mut Vec<Arc<SubShared>> {
        match pattern.kind() {
            PatternKind::Exact(name) => self.exact.entry(name.clone()).or_default(),
            PatternKind::OneLevel { parent } => {
                self.one_level.entry(Arc::clone(parent)).or_default()
            }
            PatternKind::Subtree { prefix } => self.subtree.entry(Arc::clone(prefix)).or_default(),
        }
    }

    /// Removes `sub` from its slot (dropping the slot when it empties); returns whether it was there.
    fn remove(&mut self, sub: &Arc<SubShared>) -> bool {
        fn take<K: std::hash::Hash + Eq>(
            map: &mut HashMap<K, Vec<Arc<SubShared>>>,
            key: &K,
            sub: &Arc<SubShared>,
        ) -> bool {
            let Some(slot) = map.get_mut(key) else {
                return false;
            };
            let before = slot.len();
            slot.retain(|s| !Arc::ptr_eq(s, sub));
            let removed = slot.len() < before;
            if slot.is_empty() {
                map.remove(key);
            }
            removed
        }
        match sub.pattern.kind() {
            PatternKind::Exact(name) => take(&mut self.exact, name, sub),
            PatternKind::OneLevel { parent } => take(&mut self.one_level, parent, sub),
            PatternKind::Subtree { prefix } => take(&mut self.subtree, prefix, sub),
        }
    }

    fn matching(&self, name: &StreamName) -> Vec<Arc<SubShared>> {
        let mut found = Vec::new();
        found.extend(self.exact.get(name).into_iter().flatten().cloned());
        found.extend(
            self.one_level
                .get(name.parent())
                .into_iter()
                .flatten()
                .cloned(),
        );
        let text = name.as_str();
        for (cut, _) in text.match_indices('/') {
            found.extend(
                self.subtree
                    .get(&text[..cut])
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
        found
    }
}

/// Streams and subscriptions of one broker.
pub(crate) struct Registry {
    index: RwLock<Index>,
    config: BrokerConfig,
    flush: Arc<FlushQueue>,
}

impl Registry {
    pub(crate) fn new(config: BrokerConfig, flush: Arc<FlushQueue>) -> Self {
        Self {
            index: RwLock::default(),
            config,
            flush,
        }
    }

    /// The stream, if it exists.
    pub(crate) fn stream(&self, name: &StreamName) -> Option<Arc<Stream>> {
        read(&self.index).streams.get(name).cloned()
    }

    /// The stream, created with the default settings if it does not exist.
    pub(crate) fn stream_or_create(&self, name: &StreamName) -> Result<Arc<Stream>, PublishError> {
        if let Some(stream) = self.stream(name) {
            return Ok(stream);
        }
        self.create(name, self.config.default_stream)
            .or_else(|err| match err {
                CreateStreamError::Exists { .. } => {
                    Ok(self.stream(name).expect("streams are never removed"))
                }
                CreateStreamError::TooManyStreams { stream, limit } => {
                    Err(PublishError::TooManyStreams { stream, limit })
                }
            })
    }

    /// Creates a stream with `config`, attached to every subscription that matches it.
    pub(crate) fn create(
        &self,
        name: &StreamName,
        config: StreamConfig,
    ) -> Result<Arc<Stream>, CreateStreamError> {
        let mut index = write(&self.index);
        if index.streams.contains_key(name) {
            return Err(CreateStreamError::Exists {
                stream: name.clone(),
            });
        }
        let limit = self.config.limits.max_streams;
        if index.streams.len() >= limit {
            return Err(CreateStreamError::TooManyStreams {
                stream: name.clone(),
                limit,
            });
        }
        let stream = Stream::new(name.clone(), config, Arc::clone(&self.flush));
        for sub in index.matching(name) {
            stream.attach(&sub);
        }
        index.streams.insert(name.clone(), Arc::clone(&stream));
        Ok(stream)
    }

    /// Registers `sub` and attaches it to every existing stream it matches.
    pub(crate) fn subscribe(&self, sub: &Arc<SubShared>) -> Result<(), SubscribeError> {
        let limits = self.config.limits;
        let mut index = write(&self.index);
        let pattern = sub.pattern.as_str().to_owned();
        if index.subscriptions >= limits.max_subscriptions {
            return Err(SubscribeError::TooManySubscriptions {
                pattern,
                limit: limits.max_subscriptions,
            });
        }
        if index.slot(&sub.pattern).len() >= limits.max_subscriptions_per_stream {
            index.remove(sub);
            return Err(SubscribeError::TooManyForStream {
                pattern,
                limit: limits.max_subscriptions_per_stream,
            });
        }
        index.slot(&sub.pattern).push(Arc::clone(sub));
        index.subscriptions += 1;
        for stream in matching_streams(&index, &sub.pattern) {
            stream.attach(sub);
        }
        Ok(())
    }

    /// Removes `sub` from the index and from its streams.
    pub(crate) fn unsubscribe(&self, sub: &Arc<SubShared>) {
        let mut index = write(&self.index);
        if index.remove(sub) {
            index.subscriptions -= 1;
        }
        for stream in matching_streams(&index, &sub.pattern) {
            stream.detach(sub);
        }
    }

    /// Ids of the subscriptions that match `name`, found through the index.
    pub(crate) fn matching(&self, name: &StreamName) -> Vec<SubscriptionId> {
        read(&self.index)
            .matching(name)
            .iter()
            .map(|sub| sub.id)
            .collect()
    }

    /// Every stream, in name order.
    pub(crate) fn streams(&self) -> Vec<Arc<Stream>> {
        let mut streams: Vec<_> = read(&self.index).streams.values().cloned().collect();
        streams.sort_by(|a, b| a.name.cmp(&b.name));
        streams
    }

    /// Every subscription.
    pub(crate) fn subscriptions(&self) -> Vec<Arc<SubShared>> {
        let index = read(&self.index);
        let all = index
            .exact
            .values()
            .chain(index.one_level.values())
            .chain(index.subtree.values());
        all.flatten().cloned().collect()
    }

    pub(crate) fn subscription_count(&self) -> usize {
        read(&self.index).subscriptions
    }
}

fn matching_streams(index: &Index, pattern: &Pattern) -> Vec<Arc<Stream>> {
    match pattern.kind() {
        PatternKind::Exact(name) => index.streams.get(name).cloned().into_iter().collect(),
        _ => index
            .streams
            .values()
            .filter(|s| pattern.matches(&s.name))
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::config::QueueLimits;

    fn sub(id: u64, pattern: &str) -> Arc<SubShared> {
        let pattern = Pattern::new(pattern).expect("valid pattern");
        Arc::new(SubShared::new(
            SubscriptionId(id),
            pattern,
            QueueLimits::default(),
        ))
    }

    #[test]
    fn index_probes_and_empty_slots_are_dropped() {
        let registry = Registry::new(BrokerConfig::default(), Arc::default());
        let subs = [
            sub(1, "a/b/c"),
            sub(2, "a/b/*"),
            sub(3, "a/>"),
            sub(4, "a/b/c/>"),
            sub(5, "x/>"),
        ];
        for s in &subs {
            registry.subscribe(s).unwrap();
        }
        let name = StreamName::new("a/b/c").unwrap();
        let mut found = registry.matching(&name);
        found.sort();
        assert_eq!(
            found,
            [SubscriptionId(1), SubscriptionId(2), SubscriptionId(3)]
        );
        let deeper = registry.matching(&StreamName::new("a/b/c/d").unwrap());
        assert_eq!(deeper, [SubscriptionId(3), SubscriptionId(4)]);
        let stream = registry.stream_or_create(&name).unwrap();
        assert_eq!(
            stream.metrics.snapshot().subscribers,
            3,
            "matched when created"
        );
        for s in &subs {
            registry.unsubscribe(s);
        }
        let index = read(&registry.index);
        assert!(index.exact.is_empty() && index.one_level.is_empty() && index.subtree.is_empty());
        assert_eq!(index.subscriptions, 0);
        drop(index);
        assert_eq!(stream.metrics.snapshot().subscribers, 0);
    }
}
