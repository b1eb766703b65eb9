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
use std::sync::{Arc, RwLock, Weak};

use thiserror::Error;

use crate::catalog::StreamDef;
use crate::streams::clock::Clock;
use crate::streams::config::{BrokerConfig, StreamConfig};
use crate::streams::durable::DurableConfig;
use crate::streams::durable::Store;
use crate::streams::durable::history::Cursor;
use crate::streams::flush::FlushQueue;
use crate::streams::groups::group::Group;
use crate::streams::groups::state::GroupState;
use crate::streams::groups::{self, GroupError, MemberShared};
use crate::streams::metrics::StreamStats;
use crate::streams::name::StreamName;
use crate::streams::pattern::{Pattern, PatternKind};
use crate::streams::publish::PublishError;
use crate::streams::stream::Stream;
use crate::streams::subscriber::{EndReason, StartAt, SubShared, SubscriptionId};
use crate::streams::tap::TapSlot;
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
    /// A start other than `latest` on a stream that keeps no history.
    #[error(
        "cannot start {pattern} at {start}: {}; start at latest",
        if *exists { "the stream is not durable, so it keeps no history" } else { "there is no such stream (yet), so it has no history" }
    )]
    NotDurable {
        pattern: String,
        start: String,
        /// Whether the stream exists (live) or not at all.
        exists: bool,
    },
    /// An offset names a position in one stream, not in a pattern's.
    #[error(
        "cannot start {pattern} at an offset: offsets belong to one stream; subscribe to one stream name, or start at earliest or a time"
    )]
    OffsetNeedsStream { pattern: String },
    /// An offset past the end of the stream.
    #[error(
        "cannot start {stream} at offset {offset}: the stream ends at {end} (its next offset); start at {end} or earlier, or at latest"
    )]
    PastEnd {
        stream: StreamName,
        offset: u64,
        end: u64,
    },
    /// A queue group starts at the live point.
    #[error("queue group {group} on {pattern} can only start at latest")]
    GroupStart { pattern: String, group: String },
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
    /// A new durable stream beyond the durable-stream limit.
    #[error(
        "cannot create durable stream {stream}: the broker already has {limit} durable streams, its limit (streams.max_durable)"
    )]
    TooManyDurable { stream: StreamName, limit: usize },
    /// A durable stream on a broker without a data directory.
    #[error("cannot create durable stream {stream}: this broker has no data directory")]
    NoStorage { stream: StreamName },
    /// A setting outside what is allowed.
    #[error("cannot create stream {stream}: {message}")]
    Config { stream: StreamName, message: String },
    /// The stream's log or catalog entry could not be written.
    #[error("cannot create stream {stream}: {message}")]
    Storage { stream: StreamName, message: String },
}

/// Deleting a stream failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DeleteStreamError {
    /// No such stream.
    #[error("stream {stream} does not exist")]
    NotFound { stream: StreamName },
    /// Its stored data could not be removed (the stream is gone from the broker; what is
    /// left on disk is moved aside at the next start).
    #[error("stream {stream} was deleted, but removing its data failed: {message}")]
    Storage { stream: StreamName, message: String },
}

#[derive(Default)]
struct Index {
    streams: HashMap<StreamName, Arc<Stream>>,
    exact: HashMap<StreamName, Vec<Arc<SubShared>>>,
    one_level: HashMap<Arc<str>, Vec<Arc<SubShared>>>,
    subtree: HashMap<Arc<str>, Vec<Arc<SubShared>>>,
    subscriptions: usize,
    /// Counters of deleted streams, so that totals never go backwards.
    retired: StreamStats,
    /// Consumer-group members, joined to every durable stream their pattern matches,
    /// streams created later included.
    group_members: Vec<Weak<MemberShared>>,
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
    /// This registry (group dispatchers hold it).
    me: Weak<Registry>,
    index: RwLock<Index>,
    config: BrokerConfig,
    flush: Arc<FlushQueue>,
    /// The listener every stream offers its batches to.
    pub(crate) tap: Arc<TapSlot>,
    pub(crate) store: Option<Store>,
    pub(crate) clock: Arc<dyn Clock>,
    /// The runtime the broker was made on, if any: group dispatchers run there, whatever
    /// thread (a transport's own runtime) made the member join.
    pub(crate) runtime: Option<tokio::runtime::Handle>,
}

impl Registry {
    pub(crate) fn new(
        config: BrokerConfig,
        flush: Arc<FlushQueue>,
        store: Option<Store>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            index: RwLock::default(),
            config,
            flush,
            tap: Arc::default(),
            store,
            clock,
            runtime: tokio::runtime::Handle::try_current().ok(),
        })
    }

    fn arc(&self) -> Arc<Registry> {
        self.me
            .upgrade()
            .expect("a registry in use is held by its broker")
    }

    /// The stream, if it exists.
    pub(crate) fn stream(&self, name: &StreamName) -> Option<Arc<Stream>> {
        read(&self.index).streams.get(name).cloned()
    }

    /// The stream, created if it does not exist: durable when a durable rule matches its
    /// name, with the default settings otherwise.
    pub(crate) fn stream_or_create(&self, name: &StreamName) -> Result<Arc<Stream>, PublishError> {
        loop {
            if let Some(stream) = self.stream(name) {
                return Ok(stream);
            }
            let rule = self
                .store
                .as_ref()
                .and_then(|store| store.config.rule_for(name));
            let config = StreamConfig {
                durable: rule.map(|rule| rule.config),
                ..self.config.default_stream
            };
            match self.create(name, config, rule.is_some()) {
                Ok(stream) => return Ok(stream),
                // Created meanwhile by another caller: take it.
                Err(CreateStreamError::Exists { .. }) => {}
                Err(CreateStreamError::TooManyStreams { stream, limit }) => {
                    return Err(PublishError::TooManyStreams { stream, limit });
                }
                Err(error) => {
                    return Err(PublishError::Storage {
                        stream: name.clone(),
                        message: error.to_string(),
                    });
                }
            }
        }
    }

    /// Creates a stream with `config`, attached to every subscription that matches it.
    /// A durable stream opens (or creates) its log; with `persist` its definition is
    /// written to the catalog (so it is made again at start-up).
    pub(crate) fn create(
        &self,
        name: &StreamName,
        config: StreamConfig,
        persist: bool,
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
        let created_ms = self.clock.unix_ms();
        let def = StreamDef {
            name: name.clone(),
            config,
            created_ms,
        };
        let stream = self.build(&index, &def, persist)?;
        for sub in index.matching(name) {
            stream.attach(&sub);
        }
        index.streams.insert(name.clone(), Arc::clone(&stream));
        if stream.durable.is_some() {
            index.group_members.retain(|m| m.strong_count() > 0);
            let registry = self.arc();
            for member in groups::live_members(&index.group_members) {
                if member.pattern.matches(name) {
                    // A member of a pattern joins what it can; a refusal (a bad group
                    // setting) leaves this stream out of its membership.
                    let _ = groups::join_stream(&registry, &stream, &member);
                }
            }
        }
        Ok(stream)
    }

    /// Makes a stream of the catalog again at start-up, with its consumer groups.
    pub(crate) fn load(&self, def: &StreamDef) -> Result<(), CreateStreamError> {
        let mut index = write(&self.index);
        let stream = self.build(&index, def, false)?;
        if let (Some(durable), Some(store)) = (&stream.durable, &self.store) {
            let snapshots =
                store
                    .catalog
                    .groups(&def.name)
                    .map_err(|error| CreateStreamError::Storage {
                        stream: def.name.clone(),
                        message: error.to_string(),
                    })?;
            let mut groups = crate::streams::lock(&durable.groups);
            for snapshot in snapshots {
                let dead_letter = snapshot.config.dead_letter_of(&def.name).map_err(|error| {
                    CreateStreamError::Config {
                        stream: def.name.clone(),
                        message: error.to_string(),
                    }
                })?;
                let end = durable.log.next_offset();
                let group = Group::new(
                    def.name.clone(),
                    snapshot.group.clone(),
                    dead_letter,
                    GroupState::restore(&snapshot, end),
                );
                if snapshot.next > end {
                    // Moved back to the log's end: written at once, so that a second crash
                    // does not bring the old position back.
                    let (number, moved) = group.snapshot();
                    group
                        .write(&store.catalog, number, &moved)
                        .map_err(|error| CreateStreamError::Storage {
                            stream: def.name.clone(),
                            message: error.to_string(),
                        })?;
                }
                groups.insert(snapshot.group.clone(), group);
            }
        }
        index.streams.insert(def.name.clone(), stream);
        Ok(())
    }

    /// The stream of `def`: its log opened when durable, its definition written when
    /// `persist` (and there is a catalog).
    fn build(
        &self,
        index: &Index,
        def: &StreamDef,
        persist: bool,
    ) -> Result<Arc<Stream>, CreateStreamError> {
        let name = &def.name;
        let config = def.config;
        let storage_error = |message: String| CreateStreamError::Storage {
            stream: name.clone(),
            message,
        };
        let durable = match (&config.durable, &self.store) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(CreateStreamError::NoStorage {
                    stream: name.clone(),
                });
            }
            (Some(durable), Some(store)) => {
                durable
                    .validate()
                    .map_err(|error| CreateStreamError::Config {
                        stream: name.clone(),
                        message: error.to_string(),
                    })?;
                let limit = store.config.max_durable_streams;
                let open = index.streams.values().filter(|s| s.durable.is_some());
                if open.count() >= limit {
                    return Err(CreateStreamError::TooManyDurable {
                        stream: name.clone(),
                        limit,
                    });
                }
                Some(
                    store
                        .open_log(name, durable, &self.clock)
                        .map_err(|error| storage_error(error.to_string()))?,
                )
            }
        };
        if persist && let Some(store) = &self.store {
            // Group files an earlier stream of this name left (its deletion cut short by a
            // crash) would otherwise come back with the new stream at the next start. Only
            // a durable stream's groups are loaded, so only one looks.
            let leftovers = match &durable {
                Some(_) => store
                    .catalog
                    .groups(name)
                    .map_err(|error| storage_error(error.to_string()))?,
                None => Vec::new(),
            };
            for leftover in leftovers {
                store
                    .catalog
                    .remove_group(name, &leftover.group)
                    .map_err(|error| storage_error(error.to_string()))?;
            }
            store
                .catalog
                .put_stream(def)
                .map_err(|error| storage_error(error.to_string()))?;
        }
        Ok(Stream::new(
            name.clone(),
            config,
            def.created_ms,
            Arc::clone(&self.flush),
            Arc::clone(&self.tap),
            durable,
        ))
    }

    /// Removes stream `name` from the registry and ends or detaches its subscriptions and
    /// its groups, which it returns. The caller removes the stored data: the definition
    /// first, then the groups' files (see docs/catalog-format.md).
    pub(crate) fn remove(
        &self,
        name: &StreamName,
    ) -> Result<(Arc<Stream>, Vec<Arc<Group>>), DeleteStreamError> {
        let mut index = write(&self.index);
        let stream = index
            .streams
            .remove(name)
            .ok_or_else(|| DeleteStreamError::NotFound {
                stream: name.clone(),
            })?;
        index.retired.accumulate(&stream.metrics.snapshot());
        index.retired.subscribers = 0;
        drop(index);
        stream.delete();
        if let Some(durable) = &stream.durable {
            let reason = EndReason::StreamDeleted {
                stream: name.clone(),
            };
            let groups = std::mem::take(&mut *crate::streams::lock(&durable.groups));
            let groups: Vec<Arc<Group>> = groups.into_values().collect();
            for handle in &groups {
                handle.stop(&reason);
            }
            return Ok((stream, groups));
        }
        Ok((stream, Vec::new()))
    }

    /// Joins `member` to its group on every durable stream its pattern matches (now and
    /// later). An exact name that does not exist yet is created when a durable rule
    /// matches it; otherwise the join fails and creates nothing.
    pub(crate) fn join_group(&self, member: &Arc<MemberShared>) -> Result<(), GroupError> {
        if let PatternKind::Exact(name) = member.pattern.kind() {
            let ruled = self
                .store
                .as_ref()
                .is_some_and(|store| store.config.rule_for(name).is_some());
            let no_stream = || GroupError::NoStream {
                stream: name.clone(),
            };
            let stream = match self.stream(name) {
                Some(stream) => stream,
                None if ruled => self.stream_or_create(name).map_err(|_| no_stream())?,
                None => return Err(no_stream()),
            };
            if stream.durable.is_none() {
                return Err(GroupError::NotDurable {
                    stream: name.clone(),
                });
            }
        }
        let streams: Vec<Arc<Stream>> = {
            let mut index = write(&self.index);
            index.group_members.push(Arc::downgrade(member));
            matching_streams(&index, &member.pattern)
                .into_iter()
                .filter(|s| s.durable.is_some())
                .collect()
        };
        let registry = self.arc();
        for stream in streams {
            if let Err(error) = groups::join_stream(&registry, &stream, member) {
                self.forget_member(member);
                return Err(error);
            }
        }
        Ok(())
    }

    /// Stops joining `member` to new streams.
    pub(crate) fn forget_member(&self, member: &MemberShared) {
        write(&self.index)
            .group_members
            .retain(|m| m.strong_count() > 0 && !std::ptr::eq(m.as_ptr(), member));
    }

    /// A stream that must exist and be durable, for group operations.
    pub(crate) fn durable_stream(&self, name: &StreamName) -> Result<Arc<Stream>, GroupError> {
        let stream = self.stream(name).ok_or_else(|| GroupError::NoStream {
            stream: name.clone(),
        })?;
        if stream.durable.is_none() {
            return Err(GroupError::NotDurable {
                stream: name.clone(),
            });
        }
        Ok(stream)
    }

    /// The dead-letter stream `name` of a group of `source`: as it is when it exists,
    /// otherwise created durable like `source` (without de-duplication).
    pub(crate) fn dead_letter_stream(
        &self,
        name: &StreamName,
        source: &Stream,
    ) -> Result<Arc<Stream>, CreateStreamError> {
        if let Some(stream) = self.stream(name) {
            return Ok(stream);
        }
        let durable = source.durable.as_ref().map(|d| DurableConfig {
            dedupe_window: std::time::Duration::ZERO,
            ..d.config
        });
        let config = StreamConfig {
            durable,
            ..self.config.default_stream
        };
        match self.create(name, config, true) {
            Err(CreateStreamError::Exists { .. }) => {
                self.stream(name).ok_or(CreateStreamError::Exists {
                    stream: name.clone(),
                })
            }
            other => other,
        }
    }

    /// Registers `sub` and attaches it to every existing stream it matches, except the
    /// durable ones it starts before the live point in: for those it returns a cursor
    /// that reads their history and attaches at the end.
    pub(crate) fn subscribe(
        &self,
        sub: &Arc<SubShared>,
        start: StartAt,
        resume: &[(StreamName, u64)],
    ) -> Result<Vec<Cursor>, SubscribeError> {
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
        let streams = matching_streams(&index, &sub.pattern);
        let from_history = match start_from_history(sub, start, resume, &streams) {
            Ok(streams) => streams,
            Err(error) => {
                // Drops the slot the check above may have made empty.
                index.remove(sub);
                return Err(error);
            }
        };
        index.slot(&sub.pattern).push(Arc::clone(sub));
        index.subscriptions += 1;
        let mut cursors = Vec::new();
        for stream in streams {
            if !from_history.iter().any(|s| Arc::ptr_eq(s, &stream)) {
                stream.attach(sub);
                continue;
            }
            let resumed = resume
                .iter()
                .find(|(name, _)| name == &stream.name)
                .map(|(_, offset)| StartAt::Offset(*offset));
            cursors.push(Cursor::new(stream, resumed.unwrap_or(start)));
        }
        Ok(cursors)
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

    /// The summed counters of the streams deleted so far.
    pub(crate) fn retired(&self) -> StreamStats {
        read(&self.index).retired
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

    /// Every consumer-group member still alive.
    pub(crate) fn group_members(&self) -> Vec<Arc<MemberShared>> {
        read(&self.index)
            .group_members
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    pub(crate) fn subscription_count(&self) -> usize {
        read(&self.index).subscriptions
    }
}

/// The streams among `streams` that `sub` reads history from when it starts at `start`
/// (and resumes the `resume` ones at their offsets); checks the start against them.
fn start_from_history(
    sub: &SubShared,
    start: StartAt,
    resume: &[(StreamName, u64)],
    streams: &[Arc<Stream>],
) -> Result<Vec<Arc<Stream>>, SubscribeError> {
    let pattern = sub.pattern.as_str();
    if start == StartAt::Latest {
        let mut resumed = Vec::new();
        for stream in streams.iter().filter(|s| s.durable.is_some()) {
            let Some((_, offset)) = resume.iter().find(|(name, _)| name == &stream.name) else {
                continue;
            };
            check_not_past_end(stream, *offset)?;
            resumed.push(Arc::clone(stream));
        }
        if !resumed.is_empty()
            && let Some(group) = &sub.group
        {
            return Err(SubscribeError::GroupStart {
                pattern: pattern.to_owned(),
                group: group.to_string(),
            });
        }
        return Ok(resumed);
    }
    if let Some(group) = &sub.group {
        return Err(SubscribeError::GroupStart {
            pattern: pattern.to_owned(),
            group: group.to_string(),
        });
    }
    let exact = !sub.pattern.is_wildcard();
    if let StartAt::Offset(offset) = start {
        if !exact {
            return Err(SubscribeError::OffsetNeedsStream {
                pattern: pattern.to_owned(),
            });
        }
        if let Some(stream) = streams.first().filter(|s| s.durable.is_some()) {
            check_not_past_end(stream, offset)?;
        }
    }
    for (name, offset) in resume {
        if let Some(stream) = streams
            .iter()
            .find(|s| &s.name == name && s.durable.is_some())
        {
            check_not_past_end(stream, *offset)?;
        }
    }
    let durable: Vec<Arc<Stream>> = streams
        .iter()
        .filter(|s| s.durable.is_some())
        .cloned()
        .collect();
    if exact && durable.is_empty() {
        return Err(SubscribeError::NotDurable {
            pattern: pattern.to_owned(),
            start: start.to_string(),
            exists: !streams.is_empty(),
        });
    }
    Ok(durable)
}

fn check_not_past_end(stream: &Stream, offset: u64) -> Result<(), SubscribeError> {
    let end = stream.lock().next_sequence;
    if offset > end {
        return Err(SubscribeError::PastEnd {
            stream: stream.name.clone(),
            offset,
            end,
        });
    }
    Ok(())
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
        let registry = Registry::new(
            BrokerConfig::default(),
            Arc::default(),
            None,
            Arc::new(crate::streams::SystemClock),
        );
        let registry = &*registry;
        let subs = [
            sub(1, "a/b/c"),
            sub(2, "a/b/*"),
            sub(3, "a/>"),
            sub(4, "a/b/c/>"),
            sub(5, "x/>"),
        ];
        for s in &subs {
            registry.subscribe(s, StartAt::Latest, &[]).unwrap();
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
