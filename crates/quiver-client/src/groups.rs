//! Consumer groups: join a group on durable streams, receive messages with their delivery
//! counts, ack or nack them; and the group administration (describe, reset, delete).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use quiver_wire::{
    DeleteGroup, DescribeGroups, ErrorCode, Frame, GroupAck, GroupNack, GroupSettings,
    GroupSummary, JoinGroup, OffsetRange, ResetGroup, StartPosition, StreamPattern,
};
use tokio::sync::mpsc;

use crate::error::RequestError;
use crate::reconnect::{Request, Shared};
use crate::subscription::{SUBSCRIPTION_BUFFER_BATCHES, SubItem};
use crate::{Client, stream_name, unexpected};

/// How a member joins a group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupOptions {
    /// This member's name in group information; empty: the server names it.
    pub member: String,
    /// Most unacknowledged messages this member holds per stream; 0: the group's.
    pub max_in_flight: u32,
    /// Where a group this join creates starts (default: the earliest message).
    pub start: StartPosition,
    /// Settings of a group this join creates; `None`: the server's defaults.
    pub settings: Option<GroupSettings>,
    /// Most messages this member is given in all, per stream; 0: no bound.
    pub limit: u32,
}

impl Default for GroupOptions {
    fn default() -> Self {
        Self {
            member: String::new(),
            max_in_flight: 0,
            start: StartPosition::Earliest,
            settings: None,
            limit: 0,
        }
    }
}

impl GroupOptions {
    /// Sets [`Self::member`].
    pub fn member(mut self, name: impl Into<String>) -> Self {
        self.member = name.into();
        self
    }

    /// Sets [`Self::max_in_flight`].
    pub fn max_in_flight(mut self, messages: u32) -> Self {
        self.max_in_flight = messages;
        self
    }

    /// The member is given at most `messages` messages per stream (redeliveries
    /// included), then nothing more: for a consumer that takes a fixed number, so that
    /// the group hands it nothing it will not take (which, given back when it leaves,
    /// would count as delivered once more). Joining again after a reconnect starts the
    /// count again.
    pub fn limit(mut self, messages: u32) -> Self {
        self.limit = messages;
        self
    }

    /// Sets [`Self::start`].
    pub fn start(mut self, start: StartPosition) -> Self {
        self.start = start;
        self
    }

    /// A group this join creates waits `ack_wait` for an ack before it delivers a message
    /// again, dead-letters it after `max_deliveries` deliveries (0: never), and lets each
    /// member hold `max_in_flight` messages.
    pub fn create_with(
        mut self,
        ack_wait: Duration,
        max_deliveries: u32,
        max_in_flight: u32,
    ) -> Self {
        self.settings = Some(GroupSettings {
            ack_wait_ms: u32::try_from(ack_wait.as_millis())
                .unwrap_or(u32::MAX)
                .max(1),
            max_deliveries,
            max_in_flight: max_in_flight.max(1),
            dead_letter: None,
        });
        self
    }
}

/// One message for a group member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMessage {
    /// The stream it comes from.
    pub stream: Arc<str>,
    /// Its offset in the stream.
    pub offset: u64,
    /// How many times it was delivered, this time included.
    pub deliveries: u32,
    /// When it was published, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// Its headers.
    pub headers: Vec<(String, Bytes)>,
    /// Its payload.
    pub payload: Bytes,
}

/// What [`GroupConsumer::next`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsumerEvent {
    /// A message to work on, then ack (or nack).
    Message(GroupMessage),
    /// The connection was lost and the member joined again; what it held before was given
    /// to others or back to it (acks of it may now fail with `NOT_HELD`).
    Rejoined,
    /// The membership is over (the group or stream was deleted, the server stopped, the
    /// connection closed).
    Ended {
        /// The server's reason code; `None` when the connection closed.
        code: Option<ErrorCode>,
        /// Why.
        message: String,
    },
}

/// A member of a consumer group. Read with [`next`](Self::next), acknowledge with
/// [`ack`](Self::ack); dropping it leaves the group.
pub struct GroupConsumer {
    local: u64,
    group: String,
    deliveries: mpsc::Receiver<SubItem>,
    ready: VecDeque<GroupMessage>,
    /// A notice [`GroupConsumer::try_next`] took off the channel, for `next` to give.
    notice: Option<SubItem>,
    shared: Arc<Shared>,
    ended: bool,
}

impl std::fmt::Debug for GroupConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupConsumer")
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

impl GroupConsumer {
    /// The group's name.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// A message that is already here, without waiting (what came in the same delivery as
    /// the last one, typically): lets a member ack a delivery's messages together.
    pub fn try_next(&mut self) -> Option<GroupMessage> {
        if self.ready.is_empty() && self.notice.is_none() {
            match self.deliveries.try_recv() {
                Ok(SubItem::GroupBatch(batch)) => self.unpack(batch),
                // A notice (ended, rejoined): kept for `next`.
                Ok(other) => self.notice = Some(other),
                Err(_) => {}
            }
        }
        self.ready.pop_front()
    }

    fn unpack(&mut self, batch: quiver_wire::GroupEventBatch) {
        let stream: Arc<str> = Arc::from(batch.stream.as_str());
        self.ready.extend(batch.events.into_iter().map(|event| {
            GroupMessage {
                stream: Arc::clone(&stream),
                offset: event.offset,
                deliveries: event.deliveries,
                timestamp_ms: event.timestamp_ms,
                headers: event
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_owned(), Bytes::copy_from_slice(v)))
                    .collect(),
                payload: event.payload,
            }
        }));
    }

    /// The next message or notice; `None` after [`ConsumerEvent::Ended`].
    pub async fn next(&mut self) -> Option<ConsumerEvent> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(ConsumerEvent::Message(message));
            }
            if self.ended {
                return None;
            }
            let item =
                match self.notice.take() {
                    Some(notice) => notice,
                    None => self.deliveries.recv().await.unwrap_or_else(|| {
                        SubItem::Disconnected("the connection ended".to_owned())
                    }),
                };
            match item {
                SubItem::GroupBatch(batch) => self.unpack(batch),
                SubItem::Resubscribed => return Some(ConsumerEvent::Rejoined),
                SubItem::Ended(code, message) => {
                    self.end();
                    return Some(ConsumerEvent::Ended {
                        code: Some(code),
                        message,
                    });
                }
                SubItem::Disconnected(message) => {
                    self.end();
                    return Some(ConsumerEvent::Ended {
                        code: None,
                        message,
                    });
                }
                SubItem::Batch(_) | SubItem::Lag(_) => {}
            }
        }
    }

    fn end(&mut self) {
        self.shared.forget(self.local);
        self.ended = true;
    }

    fn membership(&self) -> Result<u32, RequestError> {
        self.shared
            .server_id(self.local)
            .ok_or_else(|| RequestError::Disconnected {
                reason: "the membership has ended".to_owned(),
            })
    }

    /// Acknowledges one message.
    pub async fn ack(&self, message: &GroupMessage) -> Result<(), RequestError> {
        self.ack_offsets(&message.stream, &[message.offset])
            .await
            .map(|_| ())
    }

    /// Acknowledges messages of `stream` by offset (in one request): all of them, or, when
    /// one is not held by this member, none (Error `NOT_HELD`). Returns how many.
    pub async fn ack_offsets(&self, stream: &str, offsets: &[u64]) -> Result<u64, RequestError> {
        let ack = GroupAck {
            subscription_id: self.membership()?,
            stream: stream_name(stream)?,
            ranges: OffsetRange::pack(offsets),
        };
        acked(self.shared.connection().request(&ack).await?, "GroupAck")
    }

    /// Gives one message back, to be delivered again (to any member) after `delay`.
    pub async fn nack(&self, message: &GroupMessage, delay: Duration) -> Result<(), RequestError> {
        self.nack_offsets(&message.stream, &[message.offset], delay)
            .await
            .map(|_| ())
    }

    /// Gives messages of `stream` back by offset (all, or none).
    pub async fn nack_offsets(
        &self,
        stream: &str,
        offsets: &[u64],
        delay: Duration,
    ) -> Result<u64, RequestError> {
        let nack = GroupNack {
            subscription_id: self.membership()?,
            stream: stream_name(stream)?,
            delay_ms: u32::try_from(delay.as_millis()).unwrap_or(u32::MAX),
            ranges: OffsetRange::pack(offsets),
        };
        acked(self.shared.connection().request(&nack).await?, "GroupNack")
    }

    /// Leaves the group and waits for the server to confirm.
    pub async fn leave(mut self) -> Result<(), RequestError> {
        self.ended = true;
        self.shared.unsubscribe(self.local).await
    }
}

impl Drop for GroupConsumer {
    fn drop(&mut self) {
        self.shared.unsubscribe_dropped(self.local);
    }
}

fn acked(reply: Frame, request: &'static str) -> Result<u64, RequestError> {
    match reply {
        Frame::GroupAcked(acked) => Ok(acked.count),
        other => Err(unexpected(request, &other)),
    }
}

impl Client {
    /// Joins consumer group `group` on every durable stream `pattern` matches (streams
    /// created later too). The group is created where it does not exist, with
    /// `options.settings` (or the server's defaults), starting at `options.start`. After a
    /// reconnect the member joins again.
    ///
    /// ```no_run
    /// use quiver_client::{Client, ConsumerEvent, GroupOptions};
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::connect("quiver://127.0.0.1:7070").await?;
    /// let mut worker = client
    ///     .join_group("acme/jobs/resize", "resizers", GroupOptions::default().member("w1"))
    ///     .await?;
    /// while let Some(ConsumerEvent::Message(job)) = worker.next().await {
    ///     // ... do the work, then:
    ///     worker.ack(&job).await?;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn join_group(
        &self,
        pattern: &str,
        group: &str,
        options: GroupOptions,
    ) -> Result<GroupConsumer, RequestError> {
        let join = JoinGroup {
            pattern: StreamPattern::new(pattern).map_err(RequestError::InvalidName)?,
            group: group.to_owned(),
            member: options.member,
            max_in_flight: options.max_in_flight,
            start: options.start,
            settings: options.settings,
            limit: options.limit,
        };
        let (deliveries, receiver) = mpsc::channel(SUBSCRIPTION_BUFFER_BATCHES);
        let local = self
            .shared
            .subscribe(Request::Join(join), deliveries)
            .await?;
        Ok(GroupConsumer {
            local,
            group: group.to_owned(),
            deliveries: receiver,
            ready: VecDeque::new(),
            notice: None,
            shared: Arc::clone(&self.shared),
            ended: false,
        })
    }

    /// Every consumer group of `stream`, or the one named `group`.
    pub async fn describe_groups(
        &self,
        stream: &str,
        group: Option<&str>,
    ) -> Result<Vec<GroupSummary>, RequestError> {
        let describe = DescribeGroups {
            stream: stream_name(stream)?,
            group: group.map(str::to_owned),
        };
        match self.shared.connection().request(&describe).await? {
            Frame::GroupList(list) => Ok(list.groups),
            other => Err(unexpected("DescribeGroups", &other)),
        }
    }

    /// Moves group `group` of `stream` to `to`: nothing is pending any more, the next
    /// delivery is there.
    pub async fn reset_group(
        &self,
        stream: &str,
        group: &str,
        to: StartPosition,
    ) -> Result<GroupSummary, RequestError> {
        let reset = ResetGroup {
            stream: stream_name(stream)?,
            group: group.to_owned(),
            to,
        };
        match self.shared.connection().request(&reset).await? {
            Frame::GroupList(mut list) if !list.groups.is_empty() => Ok(list.groups.remove(0)),
            other => Err(unexpected("ResetGroup", &other)),
        }
    }

    /// Deletes group `group` of `stream`; its members are told.
    pub async fn delete_group(&self, stream: &str, group: &str) -> Result<(), RequestError> {
        let delete = DeleteGroup {
            stream: stream_name(stream)?,
            group: group.to_owned(),
        };
        match self.shared.connection().request(&delete).await? {
            Frame::GroupDeleted(_) => Ok(()),
            other => Err(unexpected("DeleteGroup", &other)),
        }
    }
}
