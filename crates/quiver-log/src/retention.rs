//! Retention: deleting whole sealed segments by age and size, optionally keeping segments a
//! consumer group still needs, with a hard cap that deletes anyway (and counts it).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::SyncError;
use crate::log::Log;
use crate::segment::{Segment, index_name};
use crate::stats::Counters;

/// What to keep. Every bound is optional; the active segment is never deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Delete sealed segments whose newest record is older than this.
    pub max_age_ms: Option<u64>,
    /// Delete the oldest sealed segments while the log is larger than this.
    pub max_bytes: Option<u64>,
    /// Delete sealed segments all of whose records are older than the newest
    /// `max_records` (so at least `max_records` stay; readers that need the exact bound
    /// start at `committed_offset() - max_records`).
    pub max_records: Option<u64>,
    /// Keep segments holding offsets some consumer group has not acknowledged...
    pub protect_unacked: bool,
    /// ...and segments holding offsets at or above this one: a consumer position the
    /// caller keeps itself (subject to `hard_max_bytes` like `protect_unacked`).
    pub protect_offset: Option<u64>,
    /// ...unless the log is larger than this: then delete anyway (a forced deletion).
    pub hard_max_bytes: Option<u64>,
}

/// What a deletion must keep: segments some log group, or a caller's position, still needs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Protect {
    pub(crate) groups: bool,
    pub(crate) from: Option<u64>,
}

/// What one retention run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetentionReport {
    pub deleted_segments: Vec<String>,
    pub deleted_bytes: u64,
    /// Deletions that removed records a group had not acknowledged (hard cap).
    pub forced: usize,
}

impl Log {
    /// Bytes of all segments.
    pub fn size_bytes(&self) -> u64 {
        self.inner()
            .shared
            .segments()
            .iter()
            .map(|s| s.committed_len())
            .sum()
    }

    /// Timestamp of the newest record of the oldest sealed segment, if there is a sealed one.
    pub(crate) fn oldest_sealed(&self) -> Option<(i64, u64)> {
        let segs = self.inner().shared.segments();
        (segs.len() > 1).then(|| {
            (
                segs[0].max_ts_ms.load(Ordering::Acquire),
                segs[0].committed_len(),
            )
        })
    }

    /// Applies `policy` now.
    pub fn apply_retention(&self, policy: &RetentionPolicy) -> Result<RetentionReport, SyncError> {
        self.check_writer()?;
        let now = self.inner().config.clock.now_ms();
        let mut report = RetentionReport::default();
        loop {
            let total = self.size_bytes();
            let Some((max_ts, _)) = self.oldest_sealed() else {
                break;
            };
            let old = policy.max_age_ms.is_some_and(|age| {
                max_ts < now.saturating_sub(i64::try_from(age).unwrap_or(i64::MAX))
            });
            let big = policy.max_bytes.is_some_and(|max| total > max);
            let many = policy.max_records.is_some_and(|max| {
                self.second_segment_base()
                    .is_some_and(|end| end <= self.committed_offset().saturating_sub(max))
            });
            if !(old || big || many) {
                break;
            }
            let forced_ok = policy.hard_max_bytes.is_some_and(|max| total > max);
            let protect = Protect {
                groups: policy.protect_unacked,
                from: policy.protect_offset,
            };
            if !self.delete_oldest(protect, forced_ok, &mut report)? {
                break;
            }
        }
        Ok(report)
    }

    /// Deletes the sealed segments that hold only offsets below `offset`: records the
    /// caller no longer needs (what a snapshot now covers, say). The segment holding
    /// `offset` and those after it stay.
    pub fn delete_before(&self, offset: u64) -> Result<RetentionReport, SyncError> {
        self.check_writer()?;
        let mut report = RetentionReport::default();
        let protect = Protect {
            groups: false,
            from: Some(offset),
        };
        while self.delete_oldest(protect, false, &mut report)? {}
        Ok(report)
    }

    /// Refuses retention on a read-only handle: a writer in another process may still use
    /// the segments.
    fn check_writer(&self) -> Result<(), SyncError> {
        match self.inner().writer {
            Some(_) => Ok(()),
            None => Err(SyncError::ReadOnly),
        }
    }

    /// Base offset of the segment after the oldest one (the oldest one's end), if the
    /// oldest is sealed.
    fn second_segment_base(&self) -> Option<u64> {
        let segs = self.inner().shared.segments();
        (segs.len() > 1).then(|| segs[1].base)
    }

    /// Deletes the oldest sealed segment unless protected (and not `forced_ok`). Returns
    /// whether it deleted one.
    pub(crate) fn delete_oldest(
        &self,
        protect: Protect,
        forced_ok: bool,
        report: &mut RetentionReport,
    ) -> Result<bool, SyncError> {
        let inner = self.inner();
        let shared = &inner.shared;
        let segs = shared.segments();
        if segs.len() < 2 {
            return Ok(false);
        }
        let seg: Arc<Segment> = segs[0].clone();
        let end = segs[1].base;
        // Held until the segment has left the list: a group reset in between cannot point
        // into it.
        let groups = inner.groups.lock().unwrap_or_else(PoisonError::into_inner);
        let group_floor = protect.groups.then(|| groups.min_next_offset()).flatten();
        let unacked = group_floor.into_iter().chain(protect.from).any(|m| m < end);
        if unacked && !forced_ok {
            return Ok(false);
        }
        shared
            .segments
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|s| !Arc::ptr_eq(s, &seg));
        drop(groups);
        let storage = &shared.storage;
        storage
            .remove(&seg.name)
            .map_err(|e| shared.poison(&seg.name, e))?;
        let _ = storage.remove(&index_name(seg.base));
        storage
            .sync_dir()
            .map_err(|e| shared.poison("directory", e))?;
        let bytes = seg.committed_len();
        Counters::add(&shared.counters.retention_deleted_segments, 1);
        Counters::add(&shared.counters.retention_deleted_bytes, bytes);
        if unacked {
            Counters::add(&shared.counters.retention_forced_deletions, 1);
            report.forced += 1;
        }
        report.deleted_segments.push(seg.name.clone());
        report.deleted_bytes += bytes;
        Ok(true)
    }
}

/// Runs a job every interval on a background thread until dropped.
#[derive(Debug)]
pub struct RetentionThread {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl RetentionThread {
    /// Calls `job` every `every`; the job's errors are its own to report.
    pub fn spawn(
        every: Duration,
        mut job: impl FnMut() + Send + 'static,
    ) -> std::io::Result<RetentionThread> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stop2 = stop.clone();
        let handle = std::thread::Builder::new()
            .name("quiver-log-retention".to_string())
            .spawn(move || {
                let (lock, cv) = &*stop2;
                let mut stopped = lock.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    stopped = cv
                        .wait_timeout(stopped, every)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    if *stopped {
                        return;
                    }
                    drop(stopped);
                    job();
                    stopped = lock.lock().unwrap_or_else(PoisonError::into_inner);
                }
            })?;
        Ok(RetentionThread {
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for RetentionThread {
    fn drop(&mut self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        cv.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
