//! Background sealing of rotated segments in the modes that do not fsync every append
//! (`Buffered`, `Os`, `Interval`), so an append never waits for a whole segment's
//! writeback. Order per segment: fsync the data, *then* write and fsync the index end
//! entry, so an end entry on disk always means the segment's data is durable (recovery
//! trusts it). `Log::sync` and `close` wait until the queue is empty.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::log::Shared;
use crate::segment::{Segment, index_name};
use crate::storage::FileHandle;

/// One rotated segment to make durable.
#[derive(Debug)]
pub struct SealJob {
    pub segment: Arc<Segment>,
    pub index_file: FileHandle,
    /// The encoded end entry and where it goes in the index file.
    pub end_entry: Vec<u8>,
    pub end_entry_pos: u64,
}

/// The sealer thread and its queue.
#[derive(Debug)]
pub struct Sealer {
    tx: Mutex<Option<Sender<SealJob>>>,
    pending: Arc<(Mutex<usize>, Condvar)>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl Sealer {
    pub fn spawn(shared: Arc<Shared>) -> std::io::Result<Sealer> {
        let (tx, rx) = channel::<SealJob>();
        let pending = Arc::new((Mutex::new(0usize), Condvar::new()));
        let pending2 = pending.clone();
        let handle = std::thread::Builder::new()
            .name("quiver-log-sealer".to_string())
            .spawn(move || run(&shared, &rx, &pending2))?;
        Ok(Sealer {
            tx: Mutex::new(Some(tx)),
            pending,
            handle: Mutex::new(Some(handle)),
        })
    }

    /// Queues a segment; returns false if the sealer has stopped (the caller seals inline).
    pub fn submit(&self, job: SealJob) -> Result<(), SealJob> {
        let tx = self.tx.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(tx) = tx.as_ref() else {
            return Err(job);
        };
        *self
            .pending
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner) += 1;
        tx.send(job).map_err(|e| {
            *self
                .pending
                .0
                .lock()
                .unwrap_or_else(PoisonError::into_inner) -= 1;
            e.0
        })
    }

    /// Waits until every queued segment is sealed (or failed, poisoning the log).
    pub fn wait_idle(&self) {
        let (lock, cv) = &*self.pending;
        let mut n = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while *n > 0 {
            n = cv.wait(n).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Stops the thread after it has sealed what is queued.
    pub fn shutdown(&self) {
        drop(
            self.tx
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        if let Some(h) = self
            .handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = h.join();
        }
    }
}

fn run(shared: &Shared, rx: &Receiver<SealJob>, pending: &(Mutex<usize>, Condvar)) {
    while let Ok(job) = rx.recv() {
        // A failure poisons the log; later appends and syncs report it.
        let _ = seal(shared, &job);
        let (lock, cv) = pending;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        cv.notify_all();
    }
}

/// Seals one segment: data fsync, then the index end entry, then the index fsync.
pub fn seal(shared: &Shared, job: &SealJob) -> Result<(), crate::error::SyncError> {
    let seg = &job.segment;
    let start = Instant::now();
    seg.file.sync().map_err(|e| shared.poison(&seg.name, e))?;
    shared
        .counters
        .fsync_done(start.elapsed().as_micros() as u64);
    let idx = index_name(seg.base);
    job.index_file
        .write_at(job.end_entry_pos, &job.end_entry)
        .map_err(|e| shared.poison(&idx, e))?;
    job.index_file.sync().map_err(|e| shared.poison(&idx, e))
}
