//! Publishing: acks, receipts, errors, and the one road a publish takes.
//!
//! A publish call is checked (count, sizes), paid for from the in-flight budgets, admitted
//! by the stream's policy (under `block`, after waiting for room), then sequenced as a unit:
//! its messages get consecutive sequence numbers and no other publisher's message falls
//! between them.

use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::watch;

use crate::streams::batch::Message;
use crate::streams::budget::{Budget, BudgetError, Charge};
use crate::streams::clock::Clock;
use crate::streams::config::{MAX_MESSAGE_BYTES, MAX_PUBLISH_EVENTS};
use crate::streams::durable::{self, Progress};
use crate::streams::metrics::StreamMetrics;
use crate::streams::name::StreamName;
use crate::streams::stream::{Stream, StreamState};
use crate::streams::subscriber::SubscriptionId;

/// What a publisher asks the broker to promise before it answers.
///
/// The broker does the same work for `None` and `Accepted`; the ack mode tells the
/// transport whether to reply on success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ack {
    /// No reply on success (errors are still reported).
    #[default]
    None,
    /// Reply once the broker has taken the messages: they have sequence numbers and are in
    /// the stream's pending batch or already in its subscriptions' queues. Every
    /// subscription attached to the stream when their batch is sealed (which includes every
    /// one present at acceptance that has not ended since) will receive them, or be told
    /// by a lag notice that it lost them under its stream's policy, unless the process
    /// dies first. Nothing is written to disk.
    Accepted,
    /// In the stream's log with the stream's durability (under `sync`: after the fsync
    /// that covers it), with its offset. Durable streams only; elsewhere refused with
    /// [`PublishError::NotDurable`].
    Committed,
}

/// What the broker did with a publish call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    /// Sequence number (a durable stream's offset) of the first message.
    pub first_sequence: u64,
    /// Messages taken (consecutive sequence numbers from `first_sequence`).
    pub count: u64,
    /// Messages of the call not stored because a message with the same id was (durable
    /// streams with de-duplication), before or earlier in the call. When every message was
    /// one, `first_sequence` is the offset of the first message's original and `count`
    /// how many of the call's messages, from the first, have originals that follow it one
    /// after the other (all of them when the same call is retried); otherwise they
    /// describe the new ones.
    pub duplicates: u64,
}

/// A publish the broker refused; nothing of it was sequenced.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PublishError {
    /// A publish call with no message.
    #[error("publish to {stream} carries no message; send 1 to {MAX_PUBLISH_EVENTS}")]
    Empty { stream: StreamName },
    /// Too many messages in one call.
    #[error("publish to {stream} carries {count} messages; at most {MAX_PUBLISH_EVENTS} per call")]
    TooManyMessages { stream: StreamName, count: usize },
    /// One message over [`MAX_MESSAGE_BYTES`].
    #[error(
        "message {index} of a publish to {stream} is {bytes} bytes; at most {MAX_MESSAGE_BYTES} bytes per message"
    )]
    MessageTooLarge {
        stream: StreamName,
        index: usize,
        bytes: u64,
    },
    /// A message whose de-duplication id (header `Quiver-Msg-Id`) is over
    /// [`MAX_MSG_ID_BYTES`](crate::streams::durable::MAX_MSG_ID_BYTES).
    #[error(
        "message {index} of a publish to {stream} has a Quiver-Msg-Id of {bytes} bytes; an id is 1 to {} bytes",
        crate::streams::durable::MAX_MSG_ID_BYTES
    )]
    MsgIdTooLong {
        stream: StreamName,
        index: usize,
        bytes: usize,
    },
    /// A new stream beyond [`Limits::max_streams`](crate::streams::Limits).
    #[error("cannot create stream {stream}: the broker already has {limit} streams, its limit")]
    TooManyStreams { stream: StreamName, limit: usize },
    /// `committed` on a stream that is not durable.
    #[error(
        "stream {stream} is not durable, so a `committed` ack is not available; use `accepted`, or create the stream durable"
    )]
    NotDurable { stream: StreamName },
    /// The stream's log failed; nothing more is stored until the server restarts.
    #[error(
        "stream {stream} cannot store messages: {message}; restart the server to recover its log"
    )]
    Storage { stream: StreamName, message: String },
    /// The stream was deleted while this handle was held.
    #[error("stream {stream} was deleted")]
    Deleted { stream: StreamName },
    /// An in-flight byte budget refused the publish.
    #[error("publish to {stream}: {source}")]
    Budget {
        stream: StreamName,
        source: BudgetError,
    },
    /// Under `block`, a subscription stayed full for the whole block timeout.
    #[error(
        "publish to {stream} waited {waited:?} for {subscription} to make room (policy `block`); it is not reading"
    )]
    Blocked {
        stream: StreamName,
        subscription: SubscriptionId,
        waited: Duration,
    },
}

/// Everything a publish needs besides the stream.
pub(crate) struct PublishContext<'a> {
    pub(crate) budgets: [Option<&'a Budget>; 2],
    pub(crate) inflight_wait: Duration,
    pub(crate) clock: &'a Arc<dyn Clock>,
}

/// A publish the broker has taken: its receipt now, and (on a durable stream) the wait
/// for the stored end that makes it committed.
#[derive(Debug)]
pub struct Submitted {
    receipt: Receipt,
    commit: Option<Commit>,
}

#[derive(Debug)]
struct Commit {
    stream: StreamName,
    end: u64,
    progress: watch::Receiver<Progress>,
}

impl Submitted {
    /// What the broker took (for a durable stream, the offsets are final already).
    pub fn receipt(&self) -> Receipt {
        self.receipt
    }

    /// The outcome when it is known already (a live stream's, or a durable stream's whose
    /// append round has finished, as it has when this publish led it); `None` while the
    /// messages are still being stored.
    pub fn try_committed(&self) -> Option<Result<Receipt, PublishError>> {
        let Some(commit) = &self.commit else {
            return Some(Ok(self.receipt));
        };
        let progress = commit.progress.borrow();
        if progress.end >= commit.end {
            return Some(Ok(self.receipt));
        }
        progress.failed.as_ref().map(|failed| {
            Err(PublishError::Storage {
                stream: commit.stream.clone(),
                message: failed.to_string(),
            })
        })
    }

    /// Waits until the messages are stored with the stream's durability (at once for a
    /// live stream, where nothing is stored), then returns the receipt.
    pub async fn committed(self) -> Result<Receipt, PublishError> {
        let Some(mut commit) = self.commit else {
            return Ok(self.receipt);
        };
        let end = commit.end;
        let reached = commit
            .progress
            .wait_for(|p| p.end >= end || p.failed.is_some())
            .await
            .map(|p| (p.end >= end, p.failed.clone()));
        match reached {
            Ok((true, _)) => Ok(self.receipt),
            Ok((false, failed)) => Err(PublishError::Storage {
                stream: commit.stream,
                message: failed.map_or_else(String::new, |f| f.to_string()),
            }),
            Err(_) => Err(PublishError::Deleted {
                stream: commit.stream,
            }),
        }
    }
}

/// The publish road: check, pay, admit, take; then, for `committed`, wait for the log.
pub(crate) async fn publish(
    stream: &Arc<Stream>,
    messages: Vec<Message>,
    ack: Ack,
    cx: PublishContext<'_>,
) -> Result<Receipt, PublishError> {
    submit(stream, messages, ack, cx).await?.committed().await
}

/// A publish of the broker's own (dead letters): no in-flight budget, committed as `ack`
/// says.
pub(crate) async fn publish_internal(
    stream: &Arc<Stream>,
    messages: Vec<Message>,
    ack: Ack,
    clock: &Arc<dyn Clock>,
) -> Result<Receipt, PublishError> {
    let cx = PublishContext {
        budgets: [None, None],
        inflight_wait: Duration::ZERO,
        clock,
    };
    publish(stream, messages, ack, cx).await
}

/// Check, pay, admit, take. A failed submit took nothing.
pub(crate) async fn submit(
    stream: &Arc<Stream>,
    messages: Vec<Message>,
    ack: Ack,
    cx: PublishContext<'_>,
) -> Result<Submitted, PublishError> {
    let name = || stream.name.clone();
    if stream.is_deleted() {
        return Err(PublishError::Deleted { stream: name() });
    }
    if ack == Ack::Committed && stream.durable.is_none() {
        return Err(PublishError::NotDurable { stream: name() });
    }
    let bytes = check(&stream.name, &messages)?;
    let charge = Charge::acquire(cx.budgets, bytes, cx.inflight_wait)
        .await
        .map_err(|source| PublishError::Budget {
            stream: name(),
            source,
        })?;
    let events = messages.len() as u64;
    let timeout = stream.config.block_timeout.duration();
    let mut deadline = None;
    loop {
        let blocker = {
            let mut state = stream.lock();
            match stream.blocker(&mut state, events, bytes) {
                None => {
                    let (submitted, lead) = take(stream, &mut state, messages, charge, ack, &cx)?;
                    drop(state);
                    if lead {
                        durable::lead(stream, cx.clock);
                    }
                    return Ok(submitted);
                }
                Some(sub) => sub,
            }
        };
        let deadline = *deadline.get_or_insert_with(|| {
            StreamMetrics::add(&stream.metrics.blocked_publishes, 1);
            cx.clock.now() + timeout
        });
        if !blocker.wait_for_room(events, bytes, deadline).await {
            StreamMetrics::add(&stream.metrics.block_timeouts, 1);
            return Err(PublishError::Blocked {
                stream: name(),
                subscription: blocker.id,
                waited: timeout,
            });
        }
    }
}

/// Takes an admitted publish (the stream's lock held); also whether the caller leads the
/// durable stream's next append round.
fn take(
    stream: &Arc<Stream>,
    state: &mut StreamState,
    messages: Vec<Message>,
    charge: Charge,
    ack: Ack,
    cx: &PublishContext<'_>,
) -> Result<(Submitted, bool), PublishError> {
    let unix_ms = cx.clock.unix_ms();
    let Some(durable) = &stream.durable else {
        let first = state.next_sequence;
        let count = messages.len() as u64;
        state.next_sequence += count;
        stream.take(state, first, messages, charge, cx.clock.now(), unix_ms);
        let receipt = Receipt {
            first_sequence: first,
            count,
            duplicates: 0,
        };
        let submitted = Submitted {
            receipt,
            commit: None,
        };
        return Ok((submitted, false));
    };
    let taken = durable::take(stream, state, messages, charge, unix_ms)?;
    durable.count_duplicates(taken.receipt.duplicates);
    let commit = (ack == Ack::Committed).then(|| Commit {
        stream: stream.name.clone(),
        end: taken.commit_end,
        progress: durable.progress(),
    });
    Ok((
        Submitted {
            receipt: taken.receipt,
            commit,
        },
        taken.lead,
    ))
}

/// Checks count and sizes; returns the total bytes.
fn check(stream: &StreamName, messages: &[Message]) -> Result<u64, PublishError> {
    if messages.is_empty() {
        return Err(PublishError::Empty {
            stream: stream.clone(),
        });
    }
    if messages.len() > MAX_PUBLISH_EVENTS {
        return Err(PublishError::TooManyMessages {
            stream: stream.clone(),
            count: messages.len(),
        });
    }
    let mut total = 0;
    for (index, message) in messages.iter().enumerate() {
        let bytes = message.size_bytes();
        if bytes > MAX_MESSAGE_BYTES {
            return Err(PublishError::MessageTooLarge {
                stream: stream.clone(),
                index,
                bytes,
            });
        }
        if let Some(id) = crate::streams::durable::message_id(&message.headers)
            .filter(|id| id.len() > crate::streams::durable::MAX_MSG_ID_BYTES)
        {
            return Err(PublishError::MsgIdTooLong {
                stream: stream.clone(),
                index,
                bytes: id.len(),
            });
        }
        total += bytes;
    }
    Ok(total)
}
