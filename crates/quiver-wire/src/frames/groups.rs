//! Durable consumer groups: joining, deliveries with their delivery counts, acks and nacks
//! by offset ranges, and group information. Needs the `DURABLE` capability.

use bytes::{BufMut, Bytes, BytesMut};

use crate::frames::payload::{
    FramePayload, empty_frame, put_name, read_pattern, read_stream, read_subscription_id,
};
use crate::frames::publish::{no_headers_in_batch, read_batch_count};
use crate::frames::subscribe::{StartPosition, read_group_name};
use crate::header::{FLAG_HEADERS, FLAG_LIMIT, FrameType};
use crate::headers::Headers;
use crate::limits::{
    MAX_ACK_RANGES, MAX_BATCH_COUNT, MAX_GROUPS_LISTED, MAX_LEVEL_LEN, MAX_MEMBER_NAME_LEN,
    MAX_MEMBERS_LISTED, MAX_MESSAGE_LEN, MAX_NAME_LEN,
};
use crate::name::{StreamName, StreamPattern, validate_group};
use crate::reader::{DecodeError, Reader, limit};
use crate::writer::{self, EncodeError};

/// Settings of a group a JoinGroup creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSettings {
    /// How long a member may hold a message before it is delivered again (ms, at least 1).
    pub ack_wait_ms: u32,
    /// Deliveries after which a message is dead-lettered; 0: never.
    pub max_deliveries: u32,
    /// Most unacknowledged messages per member (at least 1).
    pub max_in_flight: u32,
    /// The dead-letter stream; `None`: the stream's name with `.dead` appended.
    pub dead_letter: Option<StreamName>,
}

fn put_group(dst: &mut BytesMut, group: &str) -> Result<(), EncodeError> {
    validate_group(group).map_err(EncodeError::InvalidGroup)?;
    writer::put_bytes8(dst, "group", group.as_bytes(), MAX_LEVEL_LEN)
}

fn put_optional_name(dst: &mut BytesMut, name: Option<&StreamName>) {
    put_name(dst, name.map_or(&[][..], |n| n.as_bytes()));
}

fn read_optional_stream(
    reader: &mut Reader,
    field: &'static str,
) -> Result<Option<StreamName>, DecodeError> {
    let raw = reader.bytes8(field, MAX_NAME_LEN)?;
    if raw.is_empty() {
        return Ok(None);
    }
    StreamName::from_bytes(raw)
        .map(Some)
        .map_err(|source| DecodeError::InvalidName { field, source })
}

fn read_flag(reader: &mut Reader, field: &'static str) -> Result<bool, DecodeError> {
    match reader.u8(field)? {
        0 => Ok(false),
        1 => Ok(true),
        value => Err(DecodeError::UnknownValue {
            field,
            value: u64::from(value),
            allowed: "0 or 1",
        }),
    }
}

/// Join a consumer group on the durable streams a pattern matches; answered by Subscribed
/// (the membership's id: deliveries come as GroupEventBatch, Unsubscribe leaves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinGroup {
    /// Which streams.
    pub pattern: StreamPattern,
    /// The group (a name level).
    pub group: String,
    /// This member's name in group information (UTF-8, at most [`MAX_MEMBER_NAME_LEN`]
    /// bytes); empty: the server names it.
    pub member: String,
    /// Most unacknowledged messages this member holds per stream; 0: the group's.
    pub max_in_flight: u32,
    /// Where a group this join creates starts.
    pub start: StartPosition,
    /// Settings of a group this join creates; `None`: the server's defaults.
    pub settings: Option<GroupSettings>,
    /// Most messages this member is given in all, per stream (redeliveries included);
    /// 0: no bound. Sent with [`FLAG_LIMIT`].
    pub limit: u32,
}

impl FramePayload for JoinGroup {
    const TYPE: FrameType = FrameType::JoinGroup;
    const KNOWN_FLAGS: u16 = FLAG_LIMIT;

    fn flags(&self) -> u16 {
        if self.limit == 0 { 0 } else { FLAG_LIMIT }
    }

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        put_name(dst, self.pattern.as_bytes());
        put_group(dst, &self.group)?;
        writer::put_bytes8(dst, "member", self.member.as_bytes(), MAX_MEMBER_NAME_LEN)?;
        dst.put_u32_le(self.max_in_flight);
        self.start.encode(dst);
        match &self.settings {
            None => dst.put_u8(0),
            Some(settings) => {
                if settings.ack_wait_ms == 0 || settings.max_in_flight == 0 {
                    return Err(EncodeError::Invalid {
                        field: "group settings",
                        reason: "ack wait and max in flight are at least 1",
                    });
                }
                dst.put_u8(1);
                dst.put_u32_le(settings.ack_wait_ms);
                dst.put_u32_le(settings.max_deliveries);
                dst.put_u32_le(settings.max_in_flight);
                put_optional_name(dst, settings.dead_letter.as_ref());
            }
        }
        if self.limit > 0 {
            dst.put_u32_le(self.limit);
        }
        Ok(())
    }

    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let pattern = read_pattern(reader, "pattern")?;
        let group = read_group_name(reader, "group")?;
        let member = reader.str8("member", MAX_MEMBER_NAME_LEN)?;
        let max_in_flight = reader.u32("max in flight")?;
        let start = StartPosition::read(reader)?;
        let settings = if read_flag(reader, "has settings")? {
            let ack_wait_ms = reader.u32("ack wait ms")?;
            let max_deliveries = reader.u32("max deliveries")?;
            let group_max_in_flight = reader.u32("group max in flight")?;
            if ack_wait_ms == 0 || group_max_in_flight == 0 {
                return Err(DecodeError::UnknownValue {
                    field: "group settings",
                    value: 0,
                    allowed: "ack wait and max in flight of at least 1",
                });
            }
            Some(GroupSettings {
                ack_wait_ms,
                max_deliveries,
                max_in_flight: group_max_in_flight,
                dead_letter: read_optional_stream(reader, "dead letter")?,
            })
        } else {
            None
        };
        let limit = if flags & FLAG_LIMIT != 0 {
            match reader.u32("limit")? {
                0 => {
                    return Err(DecodeError::NonCanonical {
                        field: "limit",
                        reason: "a limit of 0 is sent as no FLAG_LIMIT",
                    });
                }
                limit => limit,
            }
        } else {
            0
        };
        Ok(Self {
            pattern,
            group,
            member,
            max_in_flight,
            start,
            settings,
            limit,
        })
    }
}

/// One message delivered to a group member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupEvent {
    /// Its offset in the stream.
    pub offset: u64,
    /// When it was published, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// Deliveries so far, this one included (1 the first time).
    pub deliveries: u32,
    /// Headers; empty for none.
    pub headers: Headers,
    /// The payload, at most [`MAX_MESSAGE_LEN`] bytes.
    pub payload: Bytes,
}

/// Messages of one stream for one group member (pushed, request id 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEventBatch {
    /// The membership, as numbered by Subscribed.
    pub subscription_id: u32,
    /// The stream.
    pub stream: StreamName,
    /// 1 to [`MAX_BATCH_COUNT`] messages.
    pub events: Vec<GroupEvent>,
}

impl FramePayload for GroupEventBatch {
    const TYPE: FrameType = FrameType::GroupEventBatch;
    const KNOWN_FLAGS: u16 = FLAG_HEADERS;

    fn flags(&self) -> u16 {
        if self.events.iter().any(|e| !e.headers.is_empty()) {
            FLAG_HEADERS
        } else {
            0
        }
    }

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        if self.events.is_empty() {
            return Err(EncodeError::Empty { field: "events" });
        }
        writer::limit("event count", self.events.len(), MAX_BATCH_COUNT)?;
        let with_headers = self.flags() & FLAG_HEADERS != 0;
        writer::put_subscription_id(dst, self.subscription_id)?;
        put_name(dst, self.stream.as_bytes());
        dst.put_u16_le(self.events.len() as u16);
        for event in &self.events {
            dst.put_u64_le(event.offset);
            dst.put_u64_le(event.timestamp_ms);
            dst.put_u32_le(event.deliveries);
            if with_headers {
                event.headers.write(dst);
            }
            writer::put_bytes32(dst, "payload", &event.payload, MAX_MESSAGE_LEN)?;
        }
        Ok(())
    }

    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let subscription_id = read_subscription_id(reader)?;
        let stream = read_stream(reader, "stream")?;
        let count = read_batch_count(reader, "event count")?;
        let with_headers = flags & FLAG_HEADERS != 0;
        let min_len = count * (24 + usize::from(with_headers));
        if min_len > reader.remaining() {
            return Err(DecodeError::Truncated {
                field: "events",
                needed: min_len,
                remaining: reader.remaining(),
            });
        }
        let mut events = Vec::with_capacity(count);
        for _ in 0..count {
            let offset = reader.u64("offset")?;
            let timestamp_ms = reader.u64("timestamp")?;
            let deliveries = reader.u32("deliveries")?;
            let headers = if with_headers {
                Headers::read(reader)?
            } else {
                Headers::new()
            };
            let payload = reader.bytes32("payload", MAX_MESSAGE_LEN)?;
            events.push(GroupEvent {
                offset,
                timestamp_ms,
                deliveries,
                headers,
                payload,
            });
        }
        if with_headers && events.iter().all(|e| e.headers.is_empty()) {
            return Err(no_headers_in_batch());
        }
        Ok(Self {
            subscription_id,
            stream,
            events,
        })
    }
}

/// Consecutive offsets `first .. first + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetRange {
    /// The first offset.
    pub first: u64,
    /// How many (at least 1).
    pub len: u32,
}

impl OffsetRange {
    /// The offsets.
    pub fn offsets(&self) -> impl Iterator<Item = u64> {
        self.first..self.first.saturating_add(u64::from(self.len))
    }

    /// Packs `offsets` (in any order) into ascending ranges.
    pub fn pack(offsets: &[u64]) -> Vec<OffsetRange> {
        let mut sorted = offsets.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut out: Vec<OffsetRange> = Vec::new();
        for offset in sorted {
            match out.last_mut() {
                Some(last) if last.first + u64::from(last.len) == offset && last.len < u32::MAX => {
                    last.len += 1;
                }
                _ => out.push(OffsetRange {
                    first: offset,
                    len: 1,
                }),
            }
        }
        out
    }
}

fn put_ranges(dst: &mut BytesMut, ranges: &[OffsetRange]) -> Result<(), EncodeError> {
    if ranges.is_empty() {
        return Err(EncodeError::Empty { field: "ranges" });
    }
    writer::limit("range count", ranges.len(), MAX_ACK_RANGES)?;
    dst.put_u16_le(ranges.len() as u16);
    for range in ranges {
        if range.len == 0 {
            return Err(EncodeError::Invalid {
                field: "range length",
                reason: "a range holds at least 1 offset",
            });
        }
        dst.put_u64_le(range.first);
        dst.put_u32_le(range.len);
    }
    Ok(())
}

fn read_ranges(reader: &mut Reader) -> Result<Vec<OffsetRange>, DecodeError> {
    let count = usize::from(reader.u16("range count")?);
    if count == 0 {
        return Err(DecodeError::EmptyCount {
            field: "range count",
        });
    }
    limit("range count", count, MAX_ACK_RANGES)?;
    if count * 12 > reader.remaining() {
        return Err(DecodeError::Truncated {
            field: "ranges",
            needed: count * 12,
            remaining: reader.remaining(),
        });
    }
    let mut ranges = Vec::with_capacity(count);
    for _ in 0..count {
        let first = reader.u64("range first")?;
        let len = reader.u32("range length")?;
        if len == 0 {
            return Err(DecodeError::EmptyCount {
                field: "range length",
            });
        }
        ranges.push(OffsetRange { first, len });
    }
    Ok(ranges)
}

/// Acknowledge messages of one stream this member holds: all of them, or (if one is not
/// held) none (Error `NOT_HELD`). Answered by GroupAcked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupAck {
    /// The membership.
    pub subscription_id: u32,
    /// The stream the messages are from.
    pub stream: StreamName,
    /// The offsets, 1 to [`MAX_ACK_RANGES`] ranges.
    pub ranges: Vec<OffsetRange>,
}

impl FramePayload for GroupAck {
    const TYPE: FrameType = FrameType::GroupAck;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_subscription_id(dst, self.subscription_id)?;
        put_name(dst, self.stream.as_bytes());
        put_ranges(dst, &self.ranges)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            subscription_id: read_subscription_id(reader)?,
            stream: read_stream(reader, "stream")?,
            ranges: read_ranges(reader)?,
        })
    }
}

/// Give messages back to be delivered again after a delay (all held, or none). Answered
/// by GroupAcked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupNack {
    /// The membership.
    pub subscription_id: u32,
    /// The stream the messages are from.
    pub stream: StreamName,
    /// Wait this long (ms) before delivering them again.
    pub delay_ms: u32,
    /// The offsets, 1 to [`MAX_ACK_RANGES`] ranges.
    pub ranges: Vec<OffsetRange>,
}

impl FramePayload for GroupNack {
    const TYPE: FrameType = FrameType::GroupNack;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::put_subscription_id(dst, self.subscription_id)?;
        put_name(dst, self.stream.as_bytes());
        dst.put_u32_le(self.delay_ms);
        put_ranges(dst, &self.ranges)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            subscription_id: read_subscription_id(reader)?,
            stream: read_stream(reader, "stream")?,
            delay_ms: reader.u32("delay ms")?,
            ranges: read_ranges(reader)?,
        })
    }
}

/// The answer to GroupAck and GroupNack: how many messages it applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupAcked {
    /// Messages acknowledged or given back.
    pub count: u64,
}

impl FramePayload for GroupAcked {
    const TYPE: FrameType = FrameType::GroupAcked;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        dst.put_u64_le(self.count);
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            count: reader.u64("count")?,
        })
    }
}

/// Describe one group of a stream, or all of them; answered by GroupList.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribeGroups {
    /// The stream.
    pub stream: StreamName,
    /// One group, or `None` for all (at most [`MAX_GROUPS_LISTED`]).
    pub group: Option<String>,
}

impl FramePayload for DescribeGroups {
    const TYPE: FrameType = FrameType::DescribeGroups;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        put_name(dst, self.stream.as_bytes());
        match &self.group {
            Some(group) => put_group(dst, group),
            None => {
                dst.put_u8(0);
                Ok(())
            }
        }
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let stream = read_stream(reader, "stream")?;
        let group = reader.str8("group", MAX_LEVEL_LEN)?;
        let group = if group.is_empty() {
            None
        } else {
            validate_group(&group).map_err(|source| DecodeError::InvalidName {
                field: "group",
                source,
            })?;
            Some(group)
        };
        Ok(Self { stream, group })
    }
}

/// One member as group information shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSummary {
    /// Its name.
    pub name: String,
    /// Messages it holds.
    pub pending: u32,
    /// Messages delivered to it since it joined.
    pub delivered: u64,
    /// Messages it acknowledged since it joined.
    pub acked: u64,
}

/// One group's settings, position and counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSummary {
    /// The group's name.
    pub name: String,
    /// Its settings (the dead-letter stream resolved).
    pub settings: GroupSettings,
    /// The next offset never delivered.
    pub next: u64,
    /// Every offset below is acknowledged.
    pub floor: u64,
    /// The stream's end.
    pub end: u64,
    /// Delivered, not acknowledged.
    pub pending: u64,
    /// Of those, ready to be delivered again.
    pub ready: u64,
    /// Not yet acknowledged (undelivered + pending).
    pub lag: u64,
    /// Acknowledged since the group was created.
    pub acked: u64,
    /// Deliveries after the first.
    pub redelivered: u64,
    /// Written to the dead-letter stream.
    pub dead_lettered: u64,
    /// Deleted by retention before they were acknowledged.
    pub lost_to_retention: u64,
    /// Members now (the list holds at most [`MAX_MEMBERS_LISTED`]).
    pub member_count: u32,
    /// Members.
    pub members: Vec<MemberSummary>,
}

impl GroupSummary {
    fn encode(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::limit("member count", self.members.len(), MAX_MEMBERS_LISTED)?;
        put_group(dst, &self.name)?;
        dst.put_u32_le(self.settings.ack_wait_ms);
        dst.put_u32_le(self.settings.max_deliveries);
        dst.put_u32_le(self.settings.max_in_flight);
        put_optional_name(dst, self.settings.dead_letter.as_ref());
        for value in [
            self.next,
            self.floor,
            self.end,
            self.pending,
            self.ready,
            self.lag,
            self.acked,
            self.redelivered,
            self.dead_lettered,
            self.lost_to_retention,
        ] {
            dst.put_u64_le(value);
        }
        dst.put_u32_le(self.member_count);
        dst.put_u16_le(self.members.len() as u16);
        for member in &self.members {
            writer::put_bytes8(dst, "member", member.name.as_bytes(), MAX_MEMBER_NAME_LEN)?;
            dst.put_u32_le(member.pending);
            dst.put_u64_le(member.delivered);
            dst.put_u64_le(member.acked);
        }
        Ok(())
    }

    fn read(reader: &mut Reader) -> Result<Self, DecodeError> {
        let name = read_group_name(reader, "group")?;
        let ack_wait_ms = reader.u32("ack wait ms")?;
        let max_deliveries = reader.u32("max deliveries")?;
        let max_in_flight = reader.u32("max in flight")?;
        let dead_letter = read_optional_stream(reader, "dead letter")?;
        let mut numbers = [0u64; 10];
        for number in &mut numbers {
            *number = reader.u64("group counter")?;
        }
        let [
            next,
            floor,
            end,
            pending,
            ready,
            lag,
            acked,
            redelivered,
            dead,
            lost,
        ] = numbers;
        let member_count = reader.u32("member count")?;
        let listed = usize::from(reader.u16("members listed")?);
        limit("members listed", listed, MAX_MEMBERS_LISTED)?;
        let mut members = Vec::with_capacity(listed.min(reader.remaining() / 21));
        for _ in 0..listed {
            members.push(MemberSummary {
                name: reader.str8("member", MAX_MEMBER_NAME_LEN)?,
                pending: reader.u32("member pending")?,
                delivered: reader.u64("member delivered")?,
                acked: reader.u64("member acked")?,
            });
        }
        Ok(Self {
            name,
            settings: GroupSettings {
                ack_wait_ms,
                max_deliveries,
                max_in_flight,
                dead_letter,
            },
            next,
            floor,
            end,
            pending,
            ready,
            lag,
            acked,
            redelivered,
            dead_lettered: dead,
            lost_to_retention: lost,
            member_count,
            members,
        })
    }
}

/// Groups of one stream, answering DescribeGroups and ResetGroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupList {
    /// The stream.
    pub stream: StreamName,
    /// Its groups (at most [`MAX_GROUPS_LISTED`]), by name.
    pub groups: Vec<GroupSummary>,
}

impl FramePayload for GroupList {
    const TYPE: FrameType = FrameType::GroupList;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        writer::limit("group count", self.groups.len(), MAX_GROUPS_LISTED)?;
        put_name(dst, self.stream.as_bytes());
        dst.put_u16_le(self.groups.len() as u16);
        for group in &self.groups {
            group.encode(dst)?;
        }
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        let stream = read_stream(reader, "stream")?;
        let count = usize::from(reader.u16("group count")?);
        limit("group count", count, MAX_GROUPS_LISTED)?;
        let mut groups = Vec::with_capacity(count.min(reader.remaining() / 100));
        for _ in 0..count {
            groups.push(GroupSummary::read(reader)?);
        }
        Ok(Self { stream, groups })
    }
}

/// Move a group to a start position; answered by GroupList (that group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResetGroup {
    /// The stream.
    pub stream: StreamName,
    /// The group.
    pub group: String,
    /// Where it goes (`latest`: the next message published).
    pub to: StartPosition,
}

impl FramePayload for ResetGroup {
    const TYPE: FrameType = FrameType::ResetGroup;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        put_name(dst, self.stream.as_bytes());
        put_group(dst, &self.group)?;
        self.to.encode(dst);
        Ok(())
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            stream: read_stream(reader, "stream")?,
            group: read_group_name(reader, "group")?,
            to: StartPosition::read(reader)?,
        })
    }
}

/// Delete a group; its members are told (SubscriptionEnded). Answered by GroupDeleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteGroup {
    /// The stream.
    pub stream: StreamName,
    /// The group.
    pub group: String,
}

impl FramePayload for DeleteGroup {
    const TYPE: FrameType = FrameType::DeleteGroup;

    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError> {
        put_name(dst, self.stream.as_bytes());
        put_group(dst, &self.group)
    }

    fn decode_payload(_flags: u16, reader: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            stream: read_stream(reader, "stream")?,
            group: read_group_name(reader, "group")?,
        })
    }
}

empty_frame! {
    /// The answer to DeleteGroup.
    GroupDeleted
}
