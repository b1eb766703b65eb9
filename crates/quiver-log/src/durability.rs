//! Making appends durable: group commit for `Sync`, the timer thread for `Interval`.
//!
//! Group commit: an appender that needs its records synced either finds a sync round in
//! progress and waits for it (and maybe the next), or becomes the leader: it writes the
//! shared buffer out under the writer lock, releases the lock (so others keep appending
//! into the buffer), fsyncs, publishes, and wakes everyone. Each appender returns only when
//! `synced_next` covers its last offset, so one fsync acknowledges every append that was
//! written before it started.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::SyncError;
use crate::log::Inner;

/// State of the group commit.
#[derive(Debug, Default)]
pub struct GroupCommit {
    state: Mutex<SyncState>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct SyncState {
    leader_active: bool,
    synced_next: u64,
}

impl GroupCommit {
    pub fn new(synced_next: u64) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(SyncState {
                leader_active: false,
                synced_next,
            }),
            done: Condvar::new(),
        }
    }

    /// Records that everything below `next` is durable (rotation syncs too).
    pub fn mark_synced(&self, next: u64) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.synced_next = s.synced_next.max(next);
    }

    pub fn synced_next(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .synced_next
    }
}

impl Inner {
    /// Returns once every record below `target` is written and fsynced.
    pub(crate) fn sync_through(&self, target: u64) -> Result<(), SyncError> {
        let gc = &self.shared.group_commit;
        let mut s = gc.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if s.synced_next >= target {
                return Ok(());
            }
            self.shared.check_poison_sync()?;
            if s.leader_active {
                s = gc.done.wait(s).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            s.leader_active = true;
            drop(s);
            let round = self.sync_round();
            s = gc.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.leader_active = false;
            if let Ok(next) = round {
                s.synced_next = s.synced_next.max(next);
            }
            gc.done.notify_all();
            round?;
        }
    }

    /// One leader round: write out, fsync outside the writer lock, publish.
    fn sync_round(&self) -> Result<u64, SyncError> {
        let Some(writer) = &self.writer else {
            return Ok(0);
        };
        let written = writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write_out_to_sync()?;
        let start = Instant::now();
        if let Err(e) = written.segment.file.sync() {
            return Err(self.shared.poison(&written.segment.name, e));
        }
        self.shared
            .counters
            .fsync_done(start.elapsed().as_micros() as u64);
        self.shared.publish(&written);
        Ok(written.next_offset)
    }
}

/// The `Interval` mode's background fsync thread; stops when dropped.
#[derive(Debug)]
pub struct IntervalSyncer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl IntervalSyncer {
    pub fn spawn(inner: Arc<Inner>, interval_ms: u64) -> IntervalSyncer {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stop2 = stop.clone();
        let handle = std::thread::Builder::new()
            .name("quiver-log-fsync".to_string())
            .spawn(move || {
                let (lock, cv) = &*stop2;
                let mut stopped = lock.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    let (guard, _) = cv
                        .wait_timeout(stopped, Duration::from_millis(interval_ms))
                        .unwrap_or_else(PoisonError::into_inner);
                    stopped = guard;
                    if *stopped || inner.shared.poisoned.load(Ordering::Acquire) {
                        return;
                    }
                    let target = inner.shared.committed_next();
                    // A failure poisons the log; appends report it, the thread just stops.
                    if inner.sync_through(target).is_err() {
                        return;
                    }
                }
            })
            .ok();
        IntervalSyncer { stop, handle }
    }
}

impl Drop for IntervalSyncer {
    fn drop(&mut self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        cv.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
