//! Reading a durable stream's history into a subscription, and the hand-over to live
//! delivery with no gap and no duplicate.
//!
//! A subscription that starts before the live point holds one [`Cursor`] per durable
//! stream it reads history from, and is not attached to those streams. Each step reads
//! the log from the cursor up to the stream's *delivered point* (the first offset no live
//! subscription has been handed yet), never past it. When the cursor is close to that
//! point, the last step takes the stream's lock, reads what is left (the log already holds
//! it: fan-out happens only after the append), and attaches the subscription under the
//! same lock: every later message reaches it through its live queue, every earlier one
//! came from the log. A reader slower than the publishers simply keeps reading the log,
//! losing nothing.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use quiver_log::{ReadError, Record};
use tokio::task::JoinHandle;

use crate::streams::batch::{Batch, Event, content_bytes};
use crate::streams::budget::Charge;
use crate::streams::config::{MAX_BATCH_BYTES, MAX_BATCH_EVENTS};
use crate::streams::metrics::StreamMetrics;
use crate::streams::stream::Stream;
use crate::streams::subscriber::{Delivery, EndReason, StartAt, SubShared};

/// Most messages the final step reads with the stream's lock held (publishes to the
/// stream wait meanwhile); a cursor further behind reads without the lock first.
const LOCKED_CATCHUP_MAX: u64 = 1024;

/// How long a cursor ahead of the delivered point (an offset already assigned, not yet
/// appended) waits before it looks again.
const AHEAD_WAIT: Duration = Duration::from_millis(1);

/// Where a subscription is in one durable stream's history.
pub(crate) struct Cursor {
    stream: Arc<Stream>,
    /// The start position, until the first step resolves it (a timestamp needs a read).
    start: Option<StartAt>,
    next: u64,
}

impl Cursor {
    pub(crate) fn new(stream: Arc<Stream>, start: StartAt) -> Self {
        Self {
            stream,
            start: Some(start),
            next: 0,
        }
    }
}

/// What one step of a cursor produced.
enum Step {
    /// History; the cursor goes on.
    Batch(Arc<Batch>),
    /// `missed` messages before the cursor are gone (retention); it moved past them.
    Lag(u64),
    /// Caught up and attached; this is the last history, if any.
    Joined(Option<Arc<Batch>>),
    /// The cursor is ahead of what was handed to fan-out; look again shortly.
    Ahead,
    /// The stream was deleted.
    Deleted,
    /// The log could not be read.
    Failed(String),
}

/// A subscription's cursors, stepped in turn (so every stream's history advances), each
/// step run on tokio's blocking pool (it reads files).
#[derive(Default)]
pub(crate) struct CatchUp {
    cursors: VecDeque<Cursor>,
    /// The step in progress: kept here, so a receive that is cancelled loses nothing.
    running: Option<JoinHandle<(Cursor, Step)>>,
}

impl CatchUp {
    pub(crate) fn new(cursors: Vec<Cursor>) -> Self {
        Self {
            cursors: cursors.into(),
            running: None,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.cursors.is_empty() && self.running.is_none()
    }

    /// The next history delivery; `None` once every cursor has joined live delivery (or
    /// the subscription ended, which its queue then reports).
    pub(crate) async fn next(&mut self, sub: &Arc<SubShared>) -> Option<Delivery> {
        loop {
            let running = match &mut self.running {
                Some(running) => running,
                None => {
                    let mut cursor = self.cursors.pop_front()?;
                    let sub = Arc::clone(sub);
                    self.running.insert(tokio::task::spawn_blocking(move || {
                        let step = step(&mut cursor, &sub);
                        (cursor, step)
                    }))
                }
            };
            let joined = running.await;
            self.running = None;
            let (cursor, step) = match joined {
                Ok(done) => done,
                Err(error) => {
                    self.end(
                        sub,
                        EndReason::Storage {
                            stream: None,
                            message: format!("reading history failed: {error}"),
                        },
                    );
                    return None;
                }
            };
            match step {
                Step::Batch(batch) => {
                    self.cursors.push_back(cursor);
                    return Some(Delivery::Batch(batch));
                }
                Step::Lag(missed) => {
                    self.cursors.push_front(cursor);
                    return Some(Delivery::Lag { missed });
                }
                Step::Joined(Some(batch)) => return Some(Delivery::Batch(batch)),
                Step::Joined(None) => {}
                Step::Ahead => {
                    self.cursors.push_back(cursor);
                    tokio::time::sleep(AHEAD_WAIT).await;
                }
                Step::Deleted if sub.pattern.is_wildcard() => {}
                Step::Deleted => {
                    let stream = cursor.stream.name.clone();
                    self.end(sub, EndReason::StreamDeleted { stream });
                    return None;
                }
                Step::Failed(message) => {
                    let stream = Some(cursor.stream.name.clone());
                    self.end(sub, EndReason::Storage { stream, message });
                    return None;
                }
            }
        }
    }

    fn end(&mut self, sub: &SubShared, reason: EndReason) {
        self.cursors.clear();
        sub.end(reason);
    }
}

/// One step of `cursor` (blocking: reads the log).
fn step(cursor: &mut Cursor, sub: &Arc<SubShared>) -> Step {
    let stream = Arc::clone(&cursor.stream);
    let durable = stream
        .durable
        .as_ref()
        .expect("cursors are made for durable streams only");
    if stream.is_deleted() || sub.is_closed() {
        return Step::Deleted;
    }
    if let Some(start) = cursor.start.take() {
        match resolve(&stream, start) {
            Ok(next) => cursor.next = next,
            Err(message) => return Step::Failed(message),
        }
    }
    let first = durable.first_offset();
    if cursor.next < first {
        let missed = first - cursor.next;
        cursor.next = first;
        return Step::Lag(missed);
    }
    let limit = stream.lock().delivered_next();
    if cursor.next > limit {
        return Step::Ahead;
    }
    // A `buffered` log keeps its newest records in memory until its buffer fills: a
    // reader that needs them writes the buffer out.
    if durable.log.committed_offset() < limit
        && let Err(error) = durable.log.flush()
    {
        return Step::Failed(error.to_string());
    }
    if limit - cursor.next > LOCKED_CATCHUP_MAX {
        let want = (limit - cursor.next).min(u64::from(MAX_BATCH_EVENTS));
        return match read(cursor, want) {
            Ok(batch) => Step::Batch(batch),
            Err(step) => step,
        };
    }
    let mut state = stream.lock();
    let limit = state.delivered_next();
    if durable.log.committed_offset() < limit
        && let Err(error) = durable.log.flush()
    {
        return Step::Failed(error.to_string());
    }
    if cursor.next == limit {
        stream.attach_locked(&mut state, sub);
        return Step::Joined(None);
    }
    let want = (limit - cursor.next).min(u64::from(MAX_BATCH_EVENTS));
    match read(cursor, want) {
        Ok(batch) if cursor.next == limit => {
            stream.attach_locked(&mut state, sub);
            Step::Joined(Some(batch))
        }
        Ok(batch) => Step::Batch(batch),
        Err(step) => step,
    }
}

/// The offset a start position means now.
fn resolve(stream: &Stream, start: StartAt) -> Result<u64, String> {
    let durable = stream.durable.as_ref().expect("durable");
    Ok(match start {
        StartAt::Earliest => durable.first_offset(),
        StartAt::Offset(offset) => offset,
        StartAt::Latest => stream.lock().delivered_next(),
        StartAt::TimestampMs(ms) => {
            let ms = i64::try_from(ms).unwrap_or(i64::MAX);
            match durable.log.offset_for_timestamp(ms) {
                Ok(Some(offset)) => offset,
                Ok(None) => durable.log.committed_offset(),
                Err(error) => return Err(error.to_string()),
            }
        }
    })
}

/// Reads up to `want` messages from the cursor as one batch (bounded by the batch byte
/// limit) and moves the cursor past them.
fn read(cursor: &mut Cursor, want: u64) -> Result<Arc<Batch>, Step> {
    let durable = cursor.stream.durable.as_ref().expect("durable");
    let records = match durable.log.read(
        cursor.next,
        usize::try_from(want).unwrap_or(usize::MAX),
        MAX_BATCH_BYTES as usize,
    ) {
        Ok(records) if !records.is_empty() => records,
        Ok(_) => {
            return Err(Step::Failed(format!(
                "the log ends at {} although offset {} was handed to subscribers",
                durable.log.committed_offset(),
                cursor.next
            )));
        }
        Err(ReadError::Truncated { requested, first }) => {
            cursor.next = first;
            return Err(Step::Lag(first - requested));
        }
        Err(error) => return Err(Step::Failed(error.to_string())),
    };
    let batch = history_batch(&cursor.stream, records);
    cursor.next = batch.last_sequence() + 1;
    Ok(batch)
}

/// Records read from a stream's log as a delivery batch of that stream.
pub(crate) fn history_batch(stream: &Stream, records: Vec<Record>) -> Arc<Batch> {
    let first = records.first().map_or(0, |r| r.offset);
    debug_assert!(
        records
            .iter()
            .enumerate()
            .all(|(i, r)| r.offset == first + i as u64),
        "a log read returns consecutive offsets"
    );
    let mut bytes = 0;
    let events: Vec<Event> = records
        .into_iter()
        .map(|record| {
            let event = Event::from_record(record);
            bytes += content_bytes(&event.payload, &event.headers);
            event
        })
        .collect();
    StreamMetrics::add(&stream.metrics.history_delivered, events.len() as u64);
    Arc::new(Batch::new(
        stream.name.clone(),
        first,
        events,
        bytes,
        Arc::clone(&stream.metrics),
        Charge::default(),
    ))
}

/// Stored messages read from a durable stream by position (not a subscription).
#[derive(Debug, Clone)]
pub struct Page {
    /// The first offset the stream holds now.
    pub first_offset: u64,
    /// The offset after the last message readable now.
    pub end_offset: u64,
    /// Where the read started: the asked position, moved up to `first_offset` when that
    /// was no longer stored, or down to `end_offset` when it is past the end.
    pub start: u64,
    /// Messages asked for that retention removed (the asked position was before
    /// `first_offset`).
    pub skipped: u64,
    /// The messages, by offset.
    pub events: Vec<(u64, Event)>,
    /// Where the next page starts.
    pub next: u64,
}

/// Reading a page of a stream failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The stream keeps no log.
    #[error("stream {stream} is not durable; only stored streams can be read by position")]
    NotDurable { stream: crate::streams::StreamName },
    /// Its log could not be read.
    #[error("reading stream {stream} failed: {message}")]
    Storage {
        stream: crate::streams::StreamName,
        message: String,
    },
}

/// Up to `limit` messages (and at most `max_bytes` of them, but at least one) from `start`,
/// of what subscribers have been handed (blocking: reads the log).
pub(crate) fn read_page(
    stream: &Stream,
    start: StartAt,
    limit: usize,
    max_bytes: usize,
) -> Result<Page, HistoryError> {
    let Some(durable) = &stream.durable else {
        return Err(HistoryError::NotDurable {
            stream: stream.name.clone(),
        });
    };
    let failed = |message: String| HistoryError::Storage {
        stream: stream.name.clone(),
        message,
    };
    let end = stream.lock().delivered_next();
    // A `buffered` log keeps its newest records in memory: written out before the read
    // (and before a time is looked up in the log).
    if durable.log.committed_offset() < end {
        durable.log.flush().map_err(|e| failed(e.to_string()))?;
    }
    let asked = resolve(stream, start).map_err(failed)?;
    let first = durable.first_offset();
    let from = asked.max(first).min(end);
    let mut page = Page {
        first_offset: first,
        end_offset: end,
        start: from,
        skipped: first.saturating_sub(asked),
        events: Vec::new(),
        next: from,
    };
    let want = usize::try_from(end - from).unwrap_or(usize::MAX).min(limit);
    if want == 0 {
        return Ok(page);
    }
    let records = match durable.log.read(from, want, max_bytes) {
        Ok(records) => records,
        // Retention ran between the first offset and the read: start again from the new one.
        Err(ReadError::Truncated { first, .. }) => {
            let mut page = read_page(stream, StartAt::Offset(first), limit, max_bytes)?;
            page.skipped = page.start.saturating_sub(asked);
            return Ok(page);
        }
        Err(error) => return Err(failed(error.to_string())),
    };
    for record in records {
        let offset = record.offset;
        page.events.push((offset, Event::from_record(record)));
        page.next = offset + 1;
    }
    Ok(page)
}
