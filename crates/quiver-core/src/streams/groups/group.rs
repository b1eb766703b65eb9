//! One consumer group on one durable stream, and its dispatcher: the task that gives members
//! messages as they have room, redelivers what ran out of time, writes dead letters, and
//! keeps the group's state in the catalog.
//!
//! The dispatcher runs while the group has members (it starts with the first and stops
//! after the last leaves, writing the state one more time). It wakes when the stream
//! stores more, when a member acks, nacks, joins or leaves, at the earliest lease deadline,
//! and to write the state (at most every `flush_interval` while it changes).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use quiver_log::{ReadError, Record};
use tokio::sync::{Notify, mpsc};

use crate::streams::batch::{Event, Header, Message};
use crate::streams::config::{MAX_BATCH_BYTES, MAX_BATCH_EVENTS};
use crate::streams::groups::state::{Assignment, GroupState, MemberId, Refusal};
use crate::streams::groups::{GroupBatch, GroupDelivery, GroupEvent};
use crate::streams::lock;
use crate::streams::name::StreamName;
use crate::streams::publish::Ack;
use crate::streams::registry::Registry;
use crate::streams::stream::Stream;
use crate::streams::subscriber::EndReason;

/// Headers a dead letter carries besides its original ones.
pub const DEAD_STREAM_HEADER: &str = "Quiver-Dead-Stream";
/// The original offset of a dead letter.
pub const DEAD_OFFSET_HEADER: &str = "Quiver-Dead-Offset";
/// The group that gave up on a dead letter.
pub const DEAD_GROUP_HEADER: &str = "Quiver-Dead-Group";
/// How many times a dead letter was delivered.
pub const DELIVERY_COUNT_HEADER: &str = "Quiver-Delivery-Count";

/// Where a member's deliveries go, and whether it named this stream exactly (a wildcard
/// member is not ended when the stream is deleted, only left).
struct Sink {
    sender: mpsc::UnboundedSender<GroupDelivery>,
    exact: bool,
}

#[derive(Default)]
struct Sinks {
    members: HashMap<MemberId, Sink>,
    dispatcher_running: bool,
}

/// A consumer group of one stream.
pub(crate) struct Group {
    pub(crate) name: String,
    pub(crate) stream: StreamName,
    pub(crate) dead_letter: StreamName,
    pub(crate) state: Mutex<GroupState>,
    sinks: Mutex<Sinks>,
    wake: Notify,
    stopped: AtomicBool,
    /// Snapshots taken for the catalog, numbered in the order of their contents.
    snapshots: std::sync::atomic::AtomicU64,
    /// Dead-lettering fails (logged when it starts failing and when it works again, not at
    /// every retry).
    dead_letter_failing: AtomicBool,
    /// The group's file: held while it is written or removed, so writers never overlap,
    /// an older snapshot never replaces a newer one, and nothing writes it once removed.
    file: Mutex<GroupFile>,
}

#[derive(Debug, Default)]
struct GroupFile {
    /// The number of the snapshot the file holds.
    written: u64,
    removed: bool,
}

impl Group {
    pub(crate) fn new(
        stream: StreamName,
        name: String,
        dead_letter: StreamName,
        state: GroupState,
    ) -> Arc<Self> {
        Arc::new(Self {
            name,
            stream,
            dead_letter,
            state: Mutex::new(state),
            sinks: Mutex::default(),
            wake: Notify::new(),
            stopped: AtomicBool::new(false),
            snapshots: std::sync::atomic::AtomicU64::new(0),
            dead_letter_failing: AtomicBool::new(false),
            file: Mutex::default(),
        })
    }

    /// The state to write to the catalog now, numbered (see [`Group::write`]).
    pub(crate) fn snapshot(&self) -> (u64, crate::catalog::GroupSnapshot) {
        let mut state = self.state();
        state.dirty = false;
        let number = self.snapshots.fetch_add(1, Ordering::AcqRel) + 1;
        (number, state.snapshot(&self.stream, &self.name))
    }

    /// Writes snapshot `number` to `catalog`, unless a newer one is there already or the
    /// group's file was removed.
    pub(crate) fn write(
        &self,
        catalog: &crate::catalog::Catalog,
        number: u64,
        snapshot: &crate::catalog::GroupSnapshot,
    ) -> Result<(), crate::catalog::CatalogError> {
        let mut file = lock(&self.file);
        if file.removed || number <= file.written {
            return Ok(());
        }
        catalog.put_group(snapshot)?;
        file.written = number;
        Ok(())
    }

    /// Notes that the message at `offset` could not be dead-lettered (it stays pending and
    /// is tried again); logged when dead-lettering starts failing. Returns false.
    fn dead_letter_failed(&self, offset: u64, error: &dyn std::fmt::Display) -> bool {
        if !self.dead_letter_failing.swap(true, Ordering::AcqRel) {
            tracing::warn!(stream = %self.stream, group = %self.name, target = %self.dead_letter, offset, %error, "messages cannot be dead-lettered; they stay pending and are tried again");
        }
        false
    }

    /// Removes the group's file from `catalog`; nothing writes it afterwards.
    pub(crate) fn remove_file(
        &self,
        catalog: &crate::catalog::Catalog,
    ) -> Result<(), crate::catalog::CatalogError> {
        let mut file = lock(&self.file);
        file.removed = true;
        catalog.remove_group(&self.stream, &self.name)
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, GroupState> {
        lock(&self.state)
    }

    /// Adds a member; starts the dispatcher if it is not running. Returns whether it must
    /// be started (the caller spawns it: it needs the registry and the stream).
    pub(crate) fn join(
        &self,
        id: MemberId,
        name: String,
        max_in_flight: u32,
        credit: Option<u32>,
        sender: mpsc::UnboundedSender<GroupDelivery>,
        exact: bool,
    ) -> bool {
        let mut sinks = lock(&self.sinks);
        self.state().join(id, name, max_in_flight, credit);
        sinks.members.insert(id, Sink { sender, exact });
        let start = !sinks.dispatcher_running;
        sinks.dispatcher_running = true;
        drop(sinks);
        self.wake.notify_one();
        start
    }

    /// Removes a member; what it held is given to the others.
    pub(crate) fn leave(&self, id: MemberId) {
        lock(&self.sinks).members.remove(&id);
        self.state().leave(id);
        self.wake.notify_one();
    }

    pub(crate) fn ack(&self, id: MemberId, offsets: &[u64]) -> Result<u64, Refusal> {
        let acked = self.state().ack(id, offsets)?;
        self.wake.notify_one();
        Ok(acked)
    }

    pub(crate) fn nack(
        &self,
        id: MemberId,
        offsets: &[u64],
        delay: Duration,
        now_ms: u64,
    ) -> Result<u64, Refusal> {
        let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        let released = self.state().nack(id, offsets, delay_ms, now_ms)?;
        self.wake.notify_one();
        Ok(released)
    }

    /// Sets pull member `id`'s credit to `wanted` messages.
    pub(crate) fn grant(&self, id: MemberId, wanted: u32) {
        self.state().grant(id, wanted);
        self.wake.notify_one();
    }

    /// Moves the group (its members keep their membership, lose what they held).
    pub(crate) fn reset(&self, to: u64) {
        self.state().reset(to);
        self.wake.notify_one();
    }

    /// Stops the group for good: exact members are told `reason`, the dispatcher ends.
    pub(crate) fn stop(&self, reason: &EndReason) {
        self.stopped.store(true, Ordering::Release);
        let mut sinks = lock(&self.sinks);
        let ids: Vec<MemberId> = sinks.members.keys().copied().collect();
        for id in ids {
            self.state().leave(id);
        }
        for (_, sink) in sinks.members.drain() {
            if sink.exact {
                let _ = sink.sender.send(GroupDelivery::Ended(reason.clone()));
            }
        }
        drop(sinks);
        self.wake.notify_one();
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// The members to serve this round, rotated so that each goes first in turn.
    fn members(&self, round: usize) -> Vec<MemberId> {
        let sinks = lock(&self.sinks);
        let mut ids: Vec<MemberId> = sinks.members.keys().copied().collect();
        ids.sort_unstable();
        if !ids.is_empty() {
            let turn = round % ids.len();
            ids.rotate_left(turn);
        }
        ids
    }

    /// Hands `delivery` to member `id`; false if it is gone.
    fn send(&self, id: MemberId, delivery: GroupDelivery) -> bool {
        let sinks = lock(&self.sinks);
        sinks
            .members
            .get(&id)
            .is_some_and(|sink| sink.sender.send(delivery).is_ok())
    }

    /// Ends the dispatcher if no member is left; returns whether it ended.
    fn retire_if_idle(&self) -> bool {
        let mut sinks = lock(&self.sinks);
        if sinks.members.is_empty() || self.is_stopped() {
            sinks.dispatcher_running = false;
            return true;
        }
        false
    }
}

/// The dispatcher of `group` on `stream`, until the group is stopped or has no member.
pub(crate) async fn dispatch(registry: Arc<Registry>, stream: Arc<Stream>, group: Arc<Group>) {
    let durable = stream
        .durable
        .as_ref()
        .expect("groups live on durable streams");
    let mut progress = durable.progress();
    let flush_every = registry
        .store
        .as_ref()
        .map_or(Duration::from_millis(100), |s| {
            s.config.groups.flush_interval
        });
    let mut last_flush = tokio::time::Instant::now();
    let mut round = 0usize;
    loop {
        if group.is_stopped() {
            return;
        }
        round += 1;
        let now_ms = registry.clock.unix_ms();
        let end = progress.borrow_and_update().end;
        let first = durable.first_offset();
        // Before the state's lock: the member sinks come first in the lock order.
        let members = group.members(round);
        let (work, dead, deadline) = {
            let mut state = group.state();
            if state.floor() < first {
                state.skip_below(first);
            }
            state.expire(now_ms);
            let dead = state.take_dead();
            let mut work = Vec::new();
            for member in members {
                let assignment = state.assign(member, end, now_ms);
                if !assignment.is_empty() {
                    work.push((member, assignment));
                }
            }
            (work, dead, state.next_deadline())
        };
        if !work.is_empty() {
            deliver(&stream, &group, work).await;
        }
        for (offset, deliveries) in dead {
            let stored = dead_letter(&registry, &stream, &group, offset, deliveries).await;
            group.state().dead_lettered(offset, stored);
        }
        let dirty = group.state().dirty;
        if dirty && last_flush.elapsed() >= flush_every {
            save(&registry, &group).await;
            last_flush = tokio::time::Instant::now();
        }
        if group.retire_if_idle() {
            if !group.is_stopped() {
                save(&registry, &group).await;
            }
            return;
        }
        let until_deadline = deadline.map(|due| Duration::from_millis(due.saturating_sub(now_ms)));
        let until_flush = group
            .state()
            .dirty
            .then(|| flush_every.saturating_sub(last_flush.elapsed()));
        let sleep = match (until_deadline, until_flush) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        tokio::select! {
            () = group.wake.notified() => {}
            changed = progress.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = sleep_for(sleep) => {}
        }
    }
}

async fn sleep_for(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration.max(Duration::from_millis(1))).await,
        None => std::future::pending().await,
    }
}

/// Writes the group's state to the catalog (on the blocking pool).
pub(crate) async fn save(registry: &Arc<Registry>, group: &Arc<Group>) {
    let Some(_) = &registry.store else {
        return;
    };
    let (number, snapshot) = group.snapshot();
    let registry = Arc::clone(registry);
    let writer = Arc::clone(group);
    let written = tokio::task::spawn_blocking(move || {
        let store = registry.store.as_ref().expect("checked above");
        writer.write(&store.catalog, number, &snapshot)
    })
    .await;
    if !matches!(written, Ok(Ok(()))) {
        // Try again at the next flush.
        group.state().dirty = true;
    }
}

/// Reads what each member was assigned and hands it over (a member that left meanwhile
/// leaves its assignment for the others).
async fn deliver(stream: &Arc<Stream>, group: &Arc<Group>, work: Vec<(MemberId, Assignment)>) {
    let reader = Arc::clone(stream);
    let read = tokio::task::spawn_blocking(move || {
        work.into_iter()
            .map(|(member, assignment)| {
                let events = read_assignment(&reader, &assignment);
                (member, events)
            })
            .collect::<Vec<_>>()
    })
    .await;
    let Ok(read) = read else {
        return;
    };
    let durable = stream.durable.as_ref().expect("durable");
    for (member, events) in read {
        let events = match events {
            Ok(events) => events,
            Err(ReadError::Truncated { .. }) => {
                group.state().skip_below(durable.first_offset());
                continue;
            }
            Err(error) => {
                group.stop(&EndReason::Storage {
                    stream: Some(stream.name.clone()),
                    message: error.to_string(),
                });
                return;
            }
        };
        for chunk in chunks(events) {
            let batch = GroupBatch {
                stream: stream.name.clone(),
                events: chunk,
            };
            if !group.send(member, GroupDelivery::Batch(batch)) {
                group.leave(member);
                break;
            }
        }
    }
}

/// Makes the records below `end` readable: a `buffered` log keeps its newest records in
/// memory until its buffer fills, so a group that needs them writes the buffer out (as a
/// subscriber reading history does).
fn readable(log: &quiver_log::Log, end: u64) -> Result<(), ReadError> {
    if log.committed_offset() >= end {
        return Ok(());
    }
    log.flush().map_err(|e| ReadError::Io {
        file: "the stream's log".to_string(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// The messages of one assignment, in offset order (redeliveries first).
fn read_assignment(stream: &Stream, assignment: &Assignment) -> Result<Vec<GroupEvent>, ReadError> {
    let log = &stream.durable.as_ref().expect("durable").log;
    let again_end = assignment.again.iter().map(|&(o, _)| o + 1).max();
    readable(log, again_end.unwrap_or(0).max(assignment.fresh.end))?;
    let mut out = Vec::with_capacity(assignment.len());
    for &(offset, deliveries) in &assignment.again {
        if let Some(record) = log.read(offset, 1, usize::MAX)?.into_iter().next() {
            out.push(event(record, deliveries));
        }
    }
    let mut next = assignment.fresh.start;
    while next < assignment.fresh.end {
        let want = usize::try_from(assignment.fresh.end - next).unwrap_or(usize::MAX);
        let records = log.read(next, want, MAX_BATCH_BYTES as usize)?;
        let Some(last) = records.last() else {
            break;
        };
        next = last.offset + 1;
        out.extend(records.into_iter().map(|r| event(r, 1)));
    }
    Ok(out)
}

fn event(record: Record, deliveries: u32) -> GroupEvent {
    let offset = record.offset;
    let Event {
        timestamp_ms,
        payload,
        headers,
    } = Event::from_record(record);
    GroupEvent {
        offset,
        deliveries,
        timestamp_ms,
        payload,
        headers,
    }
}

/// Splits events into batches within the delivery bounds (count and bytes).
fn chunks(events: Vec<GroupEvent>) -> Vec<Vec<GroupEvent>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    let mut bytes = 0u64;
    for event in events {
        let size = event.size_bytes();
        let full = current.len() >= MAX_BATCH_EVENTS as usize || bytes + size > MAX_BATCH_BYTES;
        if !current.is_empty() && full {
            out.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += size;
        current.push(event);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Publishes the message at `offset` to the group's dead-letter stream (creating it durable
/// like its source when it does not exist), committed. Returns whether it was stored.
async fn dead_letter(
    registry: &Arc<Registry>,
    stream: &Arc<Stream>,
    group: &Group,
    offset: u64,
    deliveries: u32,
) -> bool {
    let reader = Arc::clone(stream);
    let read = tokio::task::spawn_blocking(move || {
        let log = &reader.durable.as_ref().expect("durable").log;
        readable(log, offset + 1)?;
        log.read(offset, 1, usize::MAX)
    })
    .await;
    let record = match read {
        Ok(Ok(records)) => records.into_iter().next(),
        // Gone (retention): nothing to keep.
        Ok(Err(ReadError::Truncated { .. })) => return true,
        Ok(Err(error)) => {
            return group.dead_letter_failed(offset, &error);
        }
        Err(_) => return false,
    };
    let Some(record) = record else {
        return true;
    };
    let Event {
        payload,
        mut headers,
        ..
    } = Event::from_record(record);
    let mut add = |key: &'static str, value: String| {
        headers.push(Header {
            key: Bytes::from_static(key.as_bytes()),
            value: Bytes::from(value),
        });
    };
    add(DEAD_STREAM_HEADER, stream.name.to_string());
    add(DEAD_OFFSET_HEADER, offset.to_string());
    add(DEAD_GROUP_HEADER, group.name.clone());
    add(DELIVERY_COUNT_HEADER, deliveries.to_string());
    let message = Message { payload, headers };
    let failed = |error: &dyn std::fmt::Display| group.dead_letter_failed(offset, error);
    let target = match registry.dead_letter_stream(&group.dead_letter, stream) {
        Ok(target) => target,
        Err(error) => return failed(&error),
    };
    match crate::streams::publish::publish_internal(
        &target,
        vec![message],
        Ack::Committed,
        &registry.clock,
    )
    .await
    {
        Ok(_) => {
            if group.dead_letter_failing.swap(false, Ordering::AcqRel) {
                tracing::info!(stream = %group.stream, group = %group.name, target = %group.dead_letter, "dead-lettering works again");
            }
            true
        }
        Err(error) => failed(&error),
    }
}
