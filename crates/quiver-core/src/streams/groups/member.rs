//! A group member: the handle a transport holds for one member, and joining a stream's
//! group (creating the group when it does not exist).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::streams::EndReason;
use crate::streams::groups::group::{Group, dispatch};
use crate::streams::groups::state::{GroupState, MemberId, Refusal};
use crate::streams::groups::{
    GroupConfig, GroupDelivery, GroupError, GroupInfo, MAX_NACK_DELAY, MemberInfo,
};
use crate::streams::lock;
use crate::streams::name::StreamName;
use crate::streams::pattern::Pattern;
use crate::streams::registry::Registry;
use crate::streams::stream::Stream;
use crate::streams::subscriber::StartAt;

static NEXT_MEMBER: AtomicU64 = AtomicU64::new(1);

/// How a member joins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinOptions {
    /// The member's name in group information; empty: `member-<id>`.
    pub member: String,
    /// Most messages this member holds unacknowledged (per stream); `None`: the group's
    /// `max_in_flight`.
    pub max_in_flight: Option<u32>,
    /// Settings of a group this join creates; `None`: the broker's defaults. A group that
    /// exists keeps its own.
    pub create: Option<GroupConfig>,
    /// Where a group this join creates starts.
    pub start: StartAt,
    /// A pull member: given messages only as it asks for them ([`GroupMember::request`]),
    /// so that a lease starts when the consumer is ready for the message. A push member
    /// is given messages whenever it holds fewer than its `max_in_flight`.
    pub pull: bool,
    /// Most messages this push member is given in all (per stream), redeliveries
    /// included; `None`: no bound. For a consumer that takes a fixed number: it is handed
    /// nothing it will not take (which, given back when it leaves, would count as
    /// delivered once more).
    pub limit: Option<u32>,
}

impl Default for JoinOptions {
    /// A group created by the join starts at the earliest message, with the defaults.
    fn default() -> Self {
        Self {
            member: String::new(),
            max_in_flight: None,
            create: None,
            start: StartAt::Earliest,
            pull: false,
            limit: None,
        }
    }
}

/// What the registry and the groups know of a member.
pub(crate) struct MemberShared {
    pub(crate) id: MemberId,
    pub(crate) name: String,
    pub(crate) pattern: Pattern,
    pub(crate) group: String,
    pub(crate) options: JoinOptions,
    sender: mpsc::UnboundedSender<GroupDelivery>,
    joined: Mutex<Vec<(Arc<Stream>, Arc<Group>)>>,
}

impl MemberShared {
    /// Ends the membership: its receiver gets `Ended(reason)` after what it was given.
    pub(crate) fn end(&self, reason: EndReason) {
        let _ = self.sender.send(GroupDelivery::Ended(reason));
    }
}

/// One member of a consumer group. Receive with [`recv`](Self::recv), acknowledge with
/// [`ack`](Self::ack); dropping it leaves the group (what it held goes to the others).
pub struct GroupMember {
    acker: GroupAcker,
    receiver: mpsc::UnboundedReceiver<GroupDelivery>,
}

impl std::fmt::Debug for GroupMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupMember")
            .field("name", &self.acker.shared.name)
            .field("group", &self.acker.shared.group)
            .field("pattern", &self.acker.shared.pattern)
            .finish_non_exhaustive()
    }
}

impl GroupMember {
    /// A member of `group` on the streams `pattern` matches; not yet joined to any.
    pub(crate) fn new(
        registry: Arc<Registry>,
        pattern: Pattern,
        group: String,
        options: JoinOptions,
    ) -> (Self, Arc<MemberShared>) {
        let id = NEXT_MEMBER.fetch_add(1, Ordering::Relaxed);
        let name = if options.member.is_empty() {
            format!("member-{id}")
        } else {
            options.member.clone()
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        let shared = Arc::new(MemberShared {
            id,
            name,
            pattern,
            group,
            options,
            sender,
            joined: Mutex::default(),
        });
        let member = Self {
            acker: GroupAcker {
                shared: Arc::clone(&shared),
                registry,
            },
            receiver,
        };
        (member, shared)
    }

    /// The member's name.
    pub fn name(&self) -> &str {
        &self.acker.shared.name
    }

    /// The group's name.
    pub fn group(&self) -> &str {
        &self.acker.shared.group
    }

    /// The streams this member receives from now.
    pub fn streams(&self) -> Vec<StreamName> {
        joined(&self.acker.shared)
            .iter()
            .map(|(stream, _)| stream.name.clone())
            .collect()
    }

    /// The next delivery, waiting for one.
    pub async fn recv(&mut self) -> GroupDelivery {
        self.receiver
            .recv()
            .await
            .expect("the member holds a sender of its own channel")
    }

    /// The next delivery if one is ready.
    pub fn try_recv(&mut self) -> Option<GroupDelivery> {
        self.receiver.try_recv().ok()
    }

    /// A pull member asks for `wanted` messages (replacing what it asked before, so that
    /// one that got what it wanted and asks again is not given more than it can take);
    /// a push member is not changed.
    pub fn request(&self, wanted: u32) {
        for (_, group) in lock(&self.acker.shared.joined).iter() {
            group.grant(self.acker.shared.id, wanted);
        }
    }

    /// Whether this member's groups have messages waiting for a member now (ready to be
    /// delivered again, or never delivered): a pull member that asks is then given some
    /// shortly, unless another member takes them first.
    pub fn has_waiting(&self) -> bool {
        lock(&self.acker.shared.joined)
            .iter()
            .any(|(stream, group)| {
                let end = stream.durable.as_ref().map_or(0, |d| d.stored_end());
                let state = group.state();
                state.ready() > 0 || state.next() < end
            })
    }

    /// Whether this member holds `offset` of `stream` now (it was given it, has not acked
    /// it, and its lease has not run out).
    pub fn holds(&self, stream: &StreamName, offset: u64) -> bool {
        let member = &*self.acker.shared;
        group_for(member, stream).is_ok_and(|group| group.state().holds(member.id, offset))
    }

    /// A handle that acks and nacks for this member from elsewhere (a transport's read
    /// loop, while a task receives). It stops working when the member is dropped.
    pub fn acker(&self) -> GroupAcker {
        self.acker.clone()
    }

    /// Acknowledges messages of `stream` this member holds: all of them, or (when one is
    /// not held) none. Returns how many were acknowledged.
    pub fn ack(&self, stream: &StreamName, offsets: &[u64]) -> Result<u64, GroupError> {
        self.acker.ack(stream, offsets)
    }

    /// Gives messages back: delivered again (to any member) after `delay`. All of them,
    /// or (when one is not held) none.
    pub fn nack(
        &self,
        stream: &StreamName,
        offsets: &[u64],
        delay: Duration,
    ) -> Result<u64, GroupError> {
        self.acker.nack(stream, offsets, delay)
    }
}

/// Acks and nacks for one [`GroupMember`] (see [`GroupMember::acker`]).
#[derive(Clone)]
pub struct GroupAcker {
    shared: Arc<MemberShared>,
    registry: Arc<Registry>,
}

impl std::fmt::Debug for GroupAcker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupAcker")
            .field("member", &self.shared.name)
            .finish_non_exhaustive()
    }
}

impl GroupAcker {
    /// See [`GroupMember::ack`].
    pub fn ack(&self, stream: &StreamName, offsets: &[u64]) -> Result<u64, GroupError> {
        let member = &*self.shared;
        group_for(member, stream)?
            .ack(member.id, offsets)
            .map_err(|refusal| refused(member, stream, refusal))
    }

    /// See [`GroupMember::nack`].
    pub fn nack(
        &self,
        stream: &StreamName,
        offsets: &[u64],
        delay: Duration,
    ) -> Result<u64, GroupError> {
        if delay > MAX_NACK_DELAY {
            return Err(GroupError::NackDelay { delay });
        }
        let member = &*self.shared;
        let now_ms = self.registry.clock.unix_ms();
        group_for(member, stream)?
            .nack(member.id, offsets, delay, now_ms)
            .map_err(|refusal| refused(member, stream, refusal))
    }
}

fn group_for(member: &MemberShared, stream: &StreamName) -> Result<Arc<Group>, GroupError> {
    joined(member)
        .iter()
        .find(|(s, _)| &s.name == stream)
        .map(|(_, group)| Arc::clone(group))
        .ok_or_else(|| GroupError::NotMember {
            stream: stream.clone(),
            group: member.group.clone(),
        })
}

/// The member's streams and groups, without the groups deleted since it joined them (a
/// pattern member keeps receiving from its other streams).
fn joined(member: &MemberShared) -> std::sync::MutexGuard<'_, Vec<(Arc<Stream>, Arc<Group>)>> {
    let mut joined = lock(&member.joined);
    joined.retain(|(_, group)| !group.is_stopped());
    joined
}

fn refused(member: &MemberShared, stream: &StreamName, refusal: Refusal) -> GroupError {
    match refusal {
        Refusal::NotHeld { offset } => GroupError::NotHeld {
            stream: stream.clone(),
            group: member.group.clone(),
            offset,
        },
        Refusal::NoMember => GroupError::NotMember {
            stream: stream.clone(),
            group: member.group.clone(),
        },
    }
}

impl Drop for GroupMember {
    fn drop(&mut self) {
        let GroupAcker { shared, registry } = &self.acker;
        registry.forget_member(shared);
        for (_, group) in lock(&shared.joined).drain(..) {
            group.leave(shared.id);
        }
    }
}

/// Joins `member` to its group on `stream` (a durable stream), creating the group when it
/// does not exist.
pub(crate) fn join_stream(
    registry: &Arc<Registry>,
    stream: &Arc<Stream>,
    member: &Arc<MemberShared>,
) -> Result<(), GroupError> {
    let group = group_of(
        registry,
        stream,
        &member.group,
        member.options.create.as_ref(),
        member.options.start,
    )?;
    let max_in_flight = member
        .options
        .max_in_flight
        .unwrap_or_else(|| group.state().config.max_in_flight);
    let exact = !member.pattern.is_wildcard();
    lock(&member.joined).push((Arc::clone(stream), Arc::clone(&group)));
    let start = group.join(
        member.id,
        member.name.clone(),
        max_in_flight,
        if member.options.pull {
            Some(0)
        } else {
            member.options.limit
        },
        member.sender.clone(),
        exact,
    );
    if start {
        start_dispatcher(registry, stream, &group);
    }
    Ok(())
}

/// Spawns the dispatcher of `group` on the broker's runtime (or, for a broker made outside
/// one, the caller's; members only exist within a runtime).
fn start_dispatcher(registry: &Arc<Registry>, stream: &Arc<Stream>, group: &Arc<Group>) {
    let runtime = registry
        .runtime
        .clone()
        .or_else(|| tokio::runtime::Handle::try_current().ok());
    if let Some(runtime) = runtime {
        runtime.spawn(dispatch(
            Arc::clone(registry),
            Arc::clone(stream),
            Arc::clone(group),
        ));
    }
}

/// The group `name` of `stream`, created with `config` (or the defaults) starting at
/// `start` when it does not exist. A new group is written to the catalog at once.
pub(crate) fn group_of(
    registry: &Registry,
    stream: &Arc<Stream>,
    name: &str,
    config: Option<&GroupConfig>,
    start: StartAt,
) -> Result<Arc<Group>, GroupError> {
    let durable = stream
        .durable
        .as_ref()
        .ok_or_else(|| GroupError::NotDurable {
            stream: stream.name.clone(),
        })?;
    if let Some(group) = lock(&durable.groups).get(name) {
        return Ok(Arc::clone(group));
    }
    let config = match config {
        Some(config) => config.clone(),
        None => registry
            .store
            .as_ref()
            .map(|s| s.config.groups.config())
            .unwrap_or_else(|| crate::streams::groups::GroupDefaults::default().config()),
    };
    let config_error = |source| GroupError::Config {
        stream: stream.name.clone(),
        group: name.to_owned(),
        source,
    };
    config.validate().map_err(config_error)?;
    let dead_letter = config.dead_letter_of(&stream.name).map_err(config_error)?;
    // Not under the groups lock: the start may depend on the groups (retention that
    // keeps what they have not acknowledged).
    let first = start_offset(stream, start)?;
    let mut groups = lock(&durable.groups);
    if let Some(group) = groups.get(name) {
        return Ok(Arc::clone(group));
    }
    let group = Group::new(
        stream.name.clone(),
        name.to_owned(),
        dead_letter,
        GroupState::new(config, first),
    );
    save_now(registry, &group)?;
    groups.insert(name.to_owned(), Arc::clone(&group));
    Ok(group)
}

/// Writes a group's state to the catalog now (blocking).
pub(crate) fn save_now(registry: &Registry, group: &Group) -> Result<(), GroupError> {
    let Some(store) = &registry.store else {
        return Ok(());
    };
    let (number, snapshot) = group.snapshot();
    group
        .write(&store.catalog, number, &snapshot)
        .map_err(|error| GroupError::Storage {
            stream: group.stream.clone(),
            group: group.name.clone(),
            message: error.to_string(),
        })
}

/// The offset `start` means on `stream` now (blocking: a time is looked up in the log).
pub(crate) fn start_offset(stream: &Stream, start: StartAt) -> Result<u64, GroupError> {
    let durable = stream
        .durable
        .as_ref()
        .ok_or_else(|| GroupError::NotDurable {
            stream: stream.name.clone(),
        })?;
    let end = stream.lock().next_sequence;
    Ok(match start {
        StartAt::Earliest => durable.first_offset(),
        StartAt::Latest => end,
        StartAt::Offset(offset) if offset > end => {
            return Err(GroupError::PastEnd {
                stream: stream.name.clone(),
                offset,
                end,
            });
        }
        StartAt::Offset(offset) => offset.max(durable.first_offset()),
        StartAt::TimestampMs(ms) => {
            let ms = i64::try_from(ms).unwrap_or(i64::MAX);
            match durable.log.offset_for_timestamp(ms) {
                Ok(Some(offset)) => offset,
                Ok(None) => end,
                Err(error) => {
                    return Err(GroupError::Storage {
                        stream: stream.name.clone(),
                        group: String::new(),
                        message: error.to_string(),
                    });
                }
            }
        }
    })
}

/// A group's information now.
pub(crate) fn info(stream: &Stream, group: &Group) -> GroupInfo {
    let durable = stream
        .durable
        .as_ref()
        .expect("groups live on durable streams");
    // Appended, with what a `buffered` log still holds in memory.
    let end = durable.log.next_offset();
    let state = group.state();
    let pending = state.pending() as u64;
    let undelivered = end.saturating_sub(state.next());
    GroupInfo {
        stream: stream.name.clone(),
        name: group.name.clone(),
        config: state.config.clone(),
        dead_letter: group.dead_letter.clone(),
        next: state.next(),
        floor: state.floor(),
        end,
        pending,
        ready: state.ready() as u64,
        undelivered,
        lag: undelivered + pending,
        acked: state.acked,
        redelivered: state.redelivered,
        dead_lettered: state.dead_lettered,
        lost_to_retention: state.lost_to_retention,
        members: state
            .members()
            .map(|(_, m)| MemberInfo {
                name: m.name.clone(),
                pending: m.held,
                delivered: m.delivered,
                acked: m.acked,
            })
            .collect(),
    }
}

/// Members whose pattern matches a stream created after they joined.
pub(crate) fn live_members(members: &[Weak<MemberShared>]) -> Vec<Arc<MemberShared>> {
    members.iter().filter_map(Weak::upgrade).collect()
}
