//! Consumer groups over the native protocol: JoinGroup starts a membership (a task turns
//! the broker's group deliveries into GroupEventBatch frames, like a subscription's),
//! GroupAck and GroupNack go to the member's ack handle, and DescribeGroups, ResetGroup
//! and DeleteGroup to the broker.

use std::time::Duration;

use quiver_core::streams::groups::{GroupConfig, GroupInfo, MAX_IN_FLIGHT};
use quiver_core::streams::{
    self as core, GroupAcker, GroupDelivery, GroupError, GroupMember, JoinOptions, Pattern, StartAt,
};
use quiver_wire::{
    Capabilities, DeleteGroup, DescribeGroups, ErrorCode, ErrorFrame, GroupAck, GroupAcked,
    GroupDeleted, GroupEvent, GroupEventBatch, GroupList, GroupNack, GroupSettings, GroupSummary,
    JoinGroup, MemberSummary, OffsetRange, ResetGroup, StartPosition, Subscribed,
    SubscriptionEnded,
};

use super::NativeShared;
use super::deliveries::Deliveries;
use super::session::{MAX_SUBSCRIPTIONS_PER_CONNECTION, Session};
use super::streams::{end_code, wire_headers};
use super::writer::{Outgoing, WriteQueue};

fn error(request_id: u32, code: ErrorCode, message: &str) -> Outgoing {
    Outgoing::encode(request_id, &ErrorFrame::new(code, message))
}

fn group_error(request_id: u32, failure: &GroupError) -> Outgoing {
    let code = match failure {
        GroupError::InvalidName { .. } => ErrorCode::INVALID_NAME,
        GroupError::NoStream { .. } | GroupError::NoGroup { .. } | GroupError::NotMember { .. } => {
            ErrorCode::NOT_FOUND
        }
        GroupError::NotDurable { .. } => ErrorCode::UNSUPPORTED,
        GroupError::NotHeld { .. } => ErrorCode::NOT_HELD,
        GroupError::Storage { .. } => ErrorCode::STORAGE,
        _ => ErrorCode::INVALID_ARGUMENT,
    };
    error(request_id, code, &failure.to_string())
}

fn core_name(name: &quiver_wire::StreamName) -> core::StreamName {
    core::StreamName::new(name.as_str()).expect("the wire checks the same name grammar")
}

fn start_at(start: StartPosition) -> StartAt {
    match start {
        StartPosition::Latest => StartAt::Latest,
        StartPosition::Earliest => StartAt::Earliest,
        StartPosition::Offset(offset) => StartAt::Offset(offset),
        StartPosition::TimestampMs(ms) => StartAt::TimestampMs(ms),
    }
}

/// Handles JoinGroup: Subscribed, then the membership's delivery task.
pub async fn join(
    shared: &NativeShared,
    session: &mut Session,
    out: &WriteQueue,
    deliveries: &impl Deliveries,
    request_id: u32,
    request: JoinGroup,
) {
    let reply = |frame: Outgoing| async move {
        let _ = out.send(frame).await;
    };
    let pattern = match Pattern::new(request.pattern.as_str()) {
        Ok(pattern) => pattern,
        Err(failure) => {
            return reply(error(
                request_id,
                ErrorCode::INVALID_NAME,
                &failure.to_string(),
            ))
            .await;
        }
    };
    let create = request.settings.as_ref().map(|settings| GroupConfig {
        ack_wait: Duration::from_millis(u64::from(settings.ack_wait_ms)),
        max_deliveries: settings.max_deliveries,
        max_in_flight: settings.max_in_flight,
        dead_letter: settings.dead_letter.as_ref().map(core_name),
    });
    let options = JoinOptions {
        member: request.member.clone(),
        max_in_flight: (request.max_in_flight > 0).then_some(request.max_in_flight),
        create,
        start: start_at(request.start),
        pull: false,
        limit: (request.limit > 0).then_some(request.limit),
    };
    let Some(id) = session.next_subscription_id() else {
        let message = format!(
            "this connection already has {MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions, the limit"
        );
        return reply(error(request_id, ErrorCode::LIMIT_EXCEEDED, &message)).await;
    };
    // The delivery queue is there before the membership, which is handed messages at once.
    let queue = match deliveries.open(id, out).await {
        Ok(queue) => queue,
        Err(reason) => {
            let message = format!("no delivery stream for the membership: {reason}");
            return reply(error(request_id, ErrorCode::LIMIT_EXCEEDED, &message)).await;
        }
    };
    let broker = shared.broker.clone();
    let group = request.group.clone();
    // Creating a group writes the catalog: off the connection's thread.
    let joined =
        tokio::task::spawn_blocking(move || broker.join_group(pattern, &group, options)).await;
    let member = match joined {
        Ok(Ok(member)) => member,
        Ok(Err(failure)) => return reply(group_error(request_id, &failure)).await,
        Err(join) => return reply(error(request_id, ErrorCode::INTERNAL, &join.to_string())).await,
    };
    if out
        .send(Outgoing::encode(
            request_id,
            &Subscribed {
                subscription_id: id,
            },
        ))
        .await
        .is_err()
    {
        return;
    }
    session.insert_acker(id, member.acker());
    let with_headers = session.granted(Capabilities::HEADERS);
    session.insert(id, tokio::spawn(deliver(member, id, with_headers, queue)));
}

/// A membership's delivery task: group batches become GroupEventBatch frames; the end
/// becomes SubscriptionEnded.
async fn deliver(mut member: GroupMember, id: u32, with_headers: bool, out: WriteQueue) {
    loop {
        let frame = match member.recv().await {
            GroupDelivery::Batch(batch) => {
                let Ok(stream) = quiver_wire::StreamName::new(batch.stream.as_str()) else {
                    continue;
                };
                let events = batch
                    .events
                    .into_iter()
                    .map(|event| GroupEvent {
                        offset: event.offset,
                        timestamp_ms: event.timestamp_ms,
                        deliveries: event.deliveries,
                        headers: if with_headers {
                            wire_headers(&event.headers)
                        } else {
                            quiver_wire::Headers::new()
                        },
                        payload: event.payload,
                    })
                    .collect();
                Outgoing::encode(
                    0,
                    &GroupEventBatch {
                        subscription_id: id,
                        stream,
                        events,
                    },
                )
            }
            GroupDelivery::Ended(reason) => {
                let code = end_code(&reason);
                let ended = SubscriptionEnded {
                    subscription_id: id,
                    code,
                    message: ErrorFrame::new(code, &reason.to_string()).message,
                };
                let _ = out.send(Outgoing::encode(0, &ended)).await;
                return;
            }
        };
        if out.send(frame).await.is_err() {
            return;
        }
    }
}

/// Every offset of `ranges`, or an error when there are more than any member can hold.
fn offsets(request_id: u32, ranges: &[OffsetRange]) -> Result<Vec<u64>, Outgoing> {
    let total: u64 = ranges.iter().map(|r| u64::from(r.len)).sum();
    if total > u64::from(MAX_IN_FLIGHT) {
        let message = format!(
            "{total} offsets in one request; a member holds at most {MAX_IN_FLIGHT}, so ack fewer at a time"
        );
        return Err(error(request_id, ErrorCode::LIMIT_EXCEEDED, &message));
    }
    Ok(ranges.iter().flat_map(OffsetRange::offsets).collect())
}

/// Handles GroupAck.
pub fn ack(session: &Session, request_id: u32, request: &GroupAck) -> Outgoing {
    settle(
        session,
        request_id,
        request.subscription_id,
        &request.ranges,
        |acker, offsets| acker.ack(&core_name(&request.stream), offsets),
    )
}

/// Handles GroupNack.
pub fn nack(session: &Session, request_id: u32, request: &GroupNack) -> Outgoing {
    let delay = Duration::from_millis(u64::from(request.delay_ms));
    settle(
        session,
        request_id,
        request.subscription_id,
        &request.ranges,
        |acker, offsets| acker.nack(&core_name(&request.stream), offsets, delay),
    )
}

/// Applies an ack or a nack of `ranges` through membership `subscription_id`'s acker.
fn settle(
    session: &Session,
    request_id: u32,
    subscription_id: u32,
    ranges: &[OffsetRange],
    apply: impl FnOnce(&GroupAcker, &[u64]) -> Result<u64, GroupError>,
) -> Outgoing {
    let Some(acker) = session.acker(subscription_id) else {
        let message = format!("no group membership {subscription_id} on this connection");
        return error(request_id, ErrorCode::NOT_FOUND, &message);
    };
    let offsets = match offsets(request_id, ranges) {
        Ok(offsets) => offsets,
        Err(refused) => return refused,
    };
    match apply(acker, &offsets) {
        Ok(count) => Outgoing::encode(request_id, &GroupAcked { count }),
        Err(failure) => group_error(request_id, &failure),
    }
}

/// Handles DescribeGroups.
pub fn describe(shared: &NativeShared, request_id: u32, request: &DescribeGroups) -> Outgoing {
    let stream = core_name(&request.stream);
    let found = match &request.group {
        Some(group) => shared.broker.group_info(&stream, group).map(|g| vec![g]),
        None => shared.broker.groups(&stream),
    };
    match found {
        Ok(groups) => group_list(request_id, &request.stream, groups),
        Err(failure) => group_error(request_id, &failure),
    }
}

/// Handles ResetGroup (writes the catalog: on the blocking pool).
pub async fn reset(shared: &NativeShared, request_id: u32, request: ResetGroup) -> Outgoing {
    let broker = shared.broker.clone();
    let stream = core_name(&request.stream);
    let (group, to) = (request.group.clone(), start_at(request.to));
    let reset = tokio::task::spawn_blocking(move || broker.reset_group(&stream, &group, to)).await;
    match reset {
        Ok(Ok(info)) => group_list(request_id, &request.stream, vec![info]),
        Ok(Err(failure)) => group_error(request_id, &failure),
        Err(join) => error(request_id, ErrorCode::INTERNAL, &join.to_string()),
    }
}

/// Handles DeleteGroup.
pub async fn delete(shared: &NativeShared, request_id: u32, request: DeleteGroup) -> Outgoing {
    let broker = shared.broker.clone();
    let stream = core_name(&request.stream);
    let group = request.group.clone();
    let deleted = tokio::task::spawn_blocking(move || broker.delete_group(&stream, &group)).await;
    match deleted {
        Ok(Ok(())) => Outgoing::encode(request_id, &GroupDeleted),
        Ok(Err(failure)) => group_error(request_id, &failure),
        Err(join) => error(request_id, ErrorCode::INTERNAL, &join.to_string()),
    }
}

fn group_list(
    request_id: u32,
    stream: &quiver_wire::StreamName,
    groups: Vec<GroupInfo>,
) -> Outgoing {
    let groups = groups
        .into_iter()
        .take(quiver_wire::limits::MAX_GROUPS_LISTED)
        .map(summary)
        .collect();
    Outgoing::encode(
        request_id,
        &GroupList {
            stream: stream.clone(),
            groups,
        },
    )
}

pub(crate) fn summary(info: GroupInfo) -> GroupSummary {
    let dead_letter = quiver_wire::StreamName::new(info.dead_letter.as_str()).ok();
    GroupSummary {
        name: info.name,
        settings: GroupSettings {
            ack_wait_ms: u32::try_from(info.config.ack_wait.as_millis()).unwrap_or(u32::MAX),
            max_deliveries: info.config.max_deliveries,
            max_in_flight: info.config.max_in_flight,
            dead_letter,
        },
        next: info.next,
        floor: info.floor,
        end: info.end,
        pending: info.pending,
        ready: info.ready,
        lag: info.lag,
        acked: info.acked,
        redelivered: info.redelivered,
        dead_lettered: info.dead_lettered,
        lost_to_retention: info.lost_to_retention,
        member_count: u32::try_from(info.members.len()).unwrap_or(u32::MAX),
        members: info
            .members
            .into_iter()
            .take(quiver_wire::limits::MAX_MEMBERS_LISTED)
            .map(|m| MemberSummary {
                name: truncate(m.name, quiver_wire::limits::MAX_MEMBER_NAME_LEN),
                pending: m.pending,
                delivered: m.delivered,
                acked: m.acked,
            })
            .collect(),
    }
}

fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}
