//! The append road of a durable stream: publishes are taken (offsets assigned, ids
//! de-duplicated) under the stream's lock and queued; one *append round* at a time, run on
//! tokio's blocking pool, takes everything queued, appends it to the log as one write (and,
//! under `sync`, one fsync: every publisher queued meanwhile shares it), hands the messages
//! to live fan-out in offset order, and then announces the new stored end, which is what
//! `committed` publishes wait for.
//!
//! Rounds start on demand and end when the queue is empty, so an idle stream costs no
//! thread. The publish that finds no round running *leads* the first one itself, on its
//! own thread, so that an unloaded stream answers a publish without handing it to another
//! thread and back; whatever queued meanwhile is handed to a round runner on tokio's
//! blocking pool, which loops until the queue is empty. While one round writes, the next publishes queue up:
//! the busier the stream, the more each write and fsync carries.

use std::sync::Arc;

use quiver_log::NewRecord;
use quiver_log::format::MAX_BATCH_PLAIN_BYTES;
use quiver_log::format::record::encoded_len;

use crate::streams::batch::Message;
use crate::streams::budget::Charge;
use crate::streams::clock::Clock;
use crate::streams::durable::dedupe::Dedupe;
use crate::streams::publish::{PublishError, Receipt};
use crate::streams::stream::{Stream, StreamState};

/// Publishes taken and waiting for an append round.
pub(crate) struct AppendRequest {
    first: u64,
    timestamp_ms: u64,
    messages: Vec<Message>,
    charge: Charge,
}

/// A durable stream's state under the stream lock.
pub(crate) struct DurableState {
    queue: Vec<AppendRequest>,
    running: bool,
    pub(crate) dedupe: Dedupe,
    /// Set when the log failed: every publish is refused until the server restarts.
    failed: Option<Arc<str>>,
}

impl DurableState {
    pub(crate) fn new(dedupe: Dedupe) -> Self {
        Self {
            queue: Vec::new(),
            running: false,
            dedupe,
            failed: None,
        }
    }
}

/// What taking a publish on a durable stream gives: the receipt, the stored end the
/// publish is committed at, and whether the caller leads the next append round (call
/// [`lead`] once the stream's lock is released).
pub(crate) struct Taken {
    pub(crate) receipt: Receipt,
    pub(crate) commit_end: u64,
    pub(crate) lead: bool,
}

/// Takes `messages` on a durable stream (its lock held): assigns their offsets, drops
/// those already stored under the same id, and queues the rest for an append round.
pub(crate) fn take(
    stream: &Arc<Stream>,
    state: &mut StreamState,
    messages: Vec<Message>,
    charge: Charge,
    unix_ms: u64,
) -> Result<Taken, PublishError> {
    let next = state.next_sequence;
    let durable = state
        .durable
        .as_mut()
        .expect("a durable stream has durable state");
    if let Some(message) = &durable.failed {
        return Err(PublishError::Storage {
            stream: stream.name.clone(),
            message: message.to_string(),
        });
    }
    let sent = messages.len() as u64;
    let (fresh, duplicates) = durable.dedupe.filter(messages, unix_ms, next);
    let dups = duplicates.len() as u64;
    if fresh.is_empty() {
        let first = duplicates[0];
        let last = *duplicates
            .iter()
            .max()
            .expect("every message was a duplicate");
        // The originals of the first messages that follow each other from `first` (all
        // of them when the same call is retried).
        let run = duplicates
            .iter()
            .zip(first..)
            .take_while(|(offset, expected)| **offset == *expected)
            .count() as u64;
        debug_assert!(run >= 1 && run <= sent);
        return Ok(Taken {
            receipt: Receipt {
                first_sequence: first,
                count: run,
                duplicates: dups,
            },
            commit_end: last + 1,
            lead: false,
        });
    }
    let count = fresh.len() as u64;
    durable.dedupe.record(&fresh, next, unix_ms);
    durable.queue.push(AppendRequest {
        first: next,
        timestamp_ms: unix_ms,
        messages: fresh,
        charge,
    });
    let lead = !durable.running;
    durable.running = true;
    state.next_sequence = next + count;
    let after_duplicates = duplicates.iter().max().map_or(0, |last| last + 1);
    Ok(Taken {
        receipt: Receipt {
            first_sequence: next,
            count,
            duplicates: dups,
        },
        commit_end: (next + count).max(after_duplicates),
        lead,
    })
}

/// Leads an append round (the stream's lock not held): one round on this thread, then
/// whatever queued meanwhile goes to a runner on the blocking pool.
///
/// The round runs inline, not on a pool thread: handing it over and back costs two thread
/// wake-ups, more than the write (and under `sync` a good part of the fsync) it would
/// spare this task's thread. Only one round runs inline per publish, so a busy stream
/// soon has a runner doing its rounds.
pub(crate) fn lead(stream: &Arc<Stream>, clock: &Arc<dyn Clock>) {
    if round(stream, &**clock) == Round::Again {
        hand_off(stream, clock);
    }
}

fn hand_off(stream: &Arc<Stream>, clock: &Arc<dyn Clock>) {
    let (stream, clock) = (Arc::clone(stream), Arc::clone(clock));
    tokio::task::spawn_blocking(move || while round(&stream, &*clock) == Round::Again {});
}

/// Stops taking publishes (they fail with `message`) and waits up to `timeout` for the
/// append round in progress, if any, to finish what it took. Returns whether it did.
pub(crate) fn stop(stream: &Stream, message: &str, timeout: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    {
        let mut state = stream.lock();
        let durable = state.durable.as_mut().expect("durable state");
        durable.failed.get_or_insert_with(|| Arc::from(message));
    }
    loop {
        let idle = {
            let mut state = stream.lock();
            let durable = state.durable.as_mut().expect("durable state");
            !durable.running
        };
        if idle {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Whether another round has work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    /// More was queued: run another round.
    Again,
    /// The queue is empty (or appends stopped): no round runs now.
    Done,
}

/// One append round: takes everything queued, appends it, hands it to fan-out, announces
/// the new stored end.
fn round(stream: &Arc<Stream>, clock: &dyn Clock) -> Round {
    let durable = stream.durable.as_ref().expect("durable");
    let requests = {
        let mut state = stream.lock();
        let queued = state.durable.as_mut().expect("durable state");
        if queued.queue.is_empty() {
            queued.running = false;
            return Round::Done;
        }
        std::mem::take(&mut queued.queue)
    };
    let started = std::time::Instant::now();
    let appended = append(stream, &requests);
    let mut state = stream.lock();
    if let Err(message) = appended {
        let queued = state.durable.as_mut().expect("durable state");
        let message: Arc<str> = Arc::from(message);
        queued.failed = Some(Arc::clone(&message));
        queued.queue.clear();
        queued.running = false;
        drop(state);
        durable.fail(message);
        return Round::Done;
    }
    let (mut messages, mut bytes) = (0, 0);
    for request in requests {
        messages += request.messages.len() as u64;
        bytes += request
            .messages
            .iter()
            .map(Message::size_bytes)
            .sum::<u64>();
        stream.take(
            &mut state,
            request.first,
            request.messages,
            request.charge,
            clock.now(),
            request.timestamp_ms,
        );
    }
    let end = state.fanout_next();
    let queued = state.durable.as_mut().expect("durable state");
    let next = if queued.queue.is_empty() {
        queued.running = false;
        Round::Done
    } else {
        Round::Again
    };
    drop(state);
    durable.stored(end, messages, bytes, started.elapsed());
    next
}

/// Appends every request, each as one or more log batches (a batch holds at most the
/// log's batch limit), in one log call; checks that the log gave the offsets the
/// requests were promised.
fn append(stream: &Stream, requests: &[AppendRequest]) -> Result<(), String> {
    let log = &stream.durable.as_ref().expect("durable").log;
    let headers: Vec<Vec<HeaderPairs<'_>>> = requests
        .iter()
        .map(|request| {
            request
                .messages
                .iter()
                .map(|m| {
                    m.headers
                        .iter()
                        .map(|h| (&h.key[..], &h.value[..]))
                        .collect()
                })
                .collect()
        })
        .collect();
    let records: Vec<Vec<NewRecord<'_>>> = requests
        .iter()
        .zip(&headers)
        .map(|(request, headers)| {
            let timestamp_ms = Some(i64::try_from(request.timestamp_ms).unwrap_or(i64::MAX));
            request
                .messages
                .iter()
                .zip(headers)
                .map(|(m, h)| NewRecord {
                    value: &m.payload,
                    timestamp_ms,
                    headers: h,
                })
                .collect()
        })
        .collect();
    let mut batches: Vec<&[NewRecord<'_>]> = Vec::with_capacity(records.len());
    for request in &records {
        batches.extend(split_by_size(request));
    }
    let ranges = log
        .append_record_batches(&batches)
        .map_err(|error| error.to_string())?;
    let mut at = ranges.iter();
    for request in requests {
        let mut expected = request.first;
        let end = request.first + request.messages.len() as u64;
        while expected < end {
            let range = at
                .next()
                .ok_or("the log returned fewer batches than appended")?;
            if range.start != expected {
                return Err(format!(
                    "the log stored offset {} where {expected} was promised; the stream is stopped to keep offsets exact",
                    range.start
                ));
            }
            expected = range.end;
        }
    }
    Ok(())
}

/// One message's headers as the log takes them.
type HeaderPairs<'a> = Vec<(&'a [u8], &'a [u8])>;

/// Splits one request's records into runs that each fit one log batch.
fn split_by_size<'a, 'r>(records: &'a [NewRecord<'r>]) -> Vec<&'a [NewRecord<'r>]> {
    let mut out = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, record) in records.iter().enumerate() {
        let len = encoded_len(record.value, record.headers);
        if i > start && size + len > MAX_BATCH_PLAIN_BYTES {
            out.push(&records[start..i]);
            (start, size) = (i, 0);
        }
        size += len;
    }
    out.push(&records[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_split_into_batches_the_log_accepts() {
        let big = vec![0u8; MAX_BATCH_PLAIN_BYTES / 3];
        let records: Vec<NewRecord<'_>> = (0..7)
            .map(|_| NewRecord {
                value: &big,
                ..NewRecord::default()
            })
            .collect();
        let runs = split_by_size(&records);
        assert_eq!(
            runs.iter().map(|r| r.len()).collect::<Vec<_>>(),
            [2, 2, 2, 1]
        );
        assert_eq!(split_by_size(&records[..1]).len(), 1);
    }
}
