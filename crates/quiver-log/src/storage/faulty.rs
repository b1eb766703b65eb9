//! A fault-injecting in-memory backend that models what a disk keeps across a crash.
//!
//! Every file has its *current* bytes (what the process sees) and its *durable* bytes (what
//! the last `sync` made safe); the directory has current and durable names (made durable by
//! `sync_dir`). [`FaultyStorage::crash`] throws away what was not made durable (optionally
//! keeping a torn prefix of the unsynced tail), and kills every handle opened before it, so
//! a log that was running can no longer write. Faults can also be armed: failing syncs or
//! writes, and flipping bits.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::{FileHandle, Storage, StorageFile};

/// What a crash keeps of the bytes written since the last sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashMode {
    /// Power loss: every unsynced byte and unsynced directory change is gone.
    DropUnsynced,
    /// Power loss mid-write: up to this many unsynced bytes past the durable end of each
    /// file survive (a torn last write); unsynced directory changes are gone.
    TearUnsynced(usize),
    /// Process crash: the OS keeps everything that was written.
    KeepWritten,
}

#[derive(Default)]
struct Content {
    current: Vec<u8>,
    durable: Vec<u8>,
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Content {{ current: {} bytes, durable: {} bytes }}",
            self.current.len(),
            self.durable.len()
        )
    }
}

#[derive(Debug, Default)]
struct FaultyFile {
    content: RwLock<Content>,
}

#[derive(Debug, Default)]
struct Names {
    current: HashMap<String, Arc<FaultyFile>>,
    durable: HashMap<String, Arc<FaultyFile>>,
}

#[derive(Debug, Default)]
struct Shared {
    names: Mutex<Names>,
    generation: AtomicU64,
    fail_syncs: AtomicU64,
    fail_writes: AtomicU64,
    syncs: AtomicU64,
}

/// The fault-injecting backend; clones share state.
#[derive(Debug, Clone, Default)]
pub struct FaultyStorage {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Handle {
    file: Arc<FaultyFile>,
    generation: u64,
    shared: Arc<Shared>,
}

fn crashed() -> io::Error {
    io::Error::other("storage crashed: handle opened before the crash")
}

fn take_fault(counter: &AtomicU64) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

impl Handle {
    fn live(&self) -> io::Result<()> {
        if self.shared.generation.load(Ordering::SeqCst) != self.generation {
            return Err(crashed());
        }
        Ok(())
    }

    fn content(&self) -> std::sync::RwLockWriteGuard<'_, Content> {
        self.file
            .content
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl StorageFile for Handle {
    fn len(&self) -> io::Result<u64> {
        self.live()?;
        Ok(self.content().current.len() as u64)
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        self.live()?;
        let c = self
            .file
            .content
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let start = usize::try_from(pos).map_err(io::Error::other)?;
        let end = start
            .checked_add(buf.len())
            .filter(|e| *e <= c.current.len());
        let end =
            end.ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past end"))?;
        buf.copy_from_slice(&c.current[start..end]);
        Ok(())
    }

    fn write_at(&self, pos: u64, src: &[u8]) -> io::Result<()> {
        self.live()?;
        if take_fault(&self.shared.fail_writes) {
            return Err(io::Error::other("injected write failure"));
        }
        let mut c = self.content();
        let start = usize::try_from(pos).map_err(io::Error::other)?;
        let end = start + src.len();
        if c.current.len() < end {
            c.current.resize(end, 0);
        }
        c.current[start..end].copy_from_slice(src);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.live()?;
        self.shared.syncs.fetch_add(1, Ordering::Relaxed);
        if take_fault(&self.shared.fail_syncs) {
            return Err(io::Error::other("injected fsync failure"));
        }
        let mut c = self.content();
        c.durable = c.current.clone();
        Ok(())
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        self.live()?;
        let len = usize::try_from(len).map_err(io::Error::other)?;
        self.content().current.resize(len, 0);
        Ok(())
    }

    fn preallocate(&self, _len: u64) -> io::Result<()> {
        self.live()
    }
}

impl FaultyStorage {
    /// An empty directory with no faults armed.
    pub fn new() -> FaultyStorage {
        FaultyStorage::default()
    }

    /// Simulates a crash: keeps only what `mode` says survives, and invalidates every
    /// handle opened so far.
    pub fn crash(&self, mode: CrashMode) {
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        let mut names = self.lock_names();
        if mode == CrashMode::KeepWritten {
            return;
        }
        names.current = names.durable.clone();
        for file in names.current.values() {
            let mut c = file.content.write().unwrap_or_else(PoisonError::into_inner);
            let mut kept = c.durable.clone();
            if let CrashMode::TearUnsynced(n) = mode {
                let from = kept.len();
                let extra = c.current.len().saturating_sub(from).min(n);
                if extra > 0 {
                    kept.extend_from_slice(&c.current[from..from + extra]);
                }
            }
            c.current = kept.clone();
            c.durable = kept;
        }
    }

    /// The next `n` syncs fail.
    pub fn fail_next_syncs(&self, n: u64) {
        self.shared.fail_syncs.store(n, Ordering::SeqCst);
    }

    /// The next `n` writes fail.
    pub fn fail_next_writes(&self, n: u64) {
        self.shared.fail_writes.store(n, Ordering::SeqCst);
    }

    /// Number of file syncs so far (failed ones included).
    pub fn syncs(&self) -> u64 {
        self.shared.syncs.load(Ordering::Relaxed)
    }

    /// Flips one bit of `name` in both its current and durable bytes. Returns false if the
    /// file does not exist or is shorter than `byte + 1`.
    pub fn flip_bit(&self, name: &str, byte: usize, bit: u8) -> bool {
        let names = self.lock_names();
        let Some(file) = names.current.get(name) else {
            return false;
        };
        let mut c = file.content.write().unwrap_or_else(PoisonError::into_inner);
        if byte >= c.current.len() {
            return false;
        }
        c.current[byte] ^= 1 << (bit % 8);
        if byte < c.durable.len() {
            c.durable[byte] ^= 1 << (bit % 8);
        }
        true
    }

    /// Current length of `name`, if it exists.
    pub fn file_len(&self, name: &str) -> Option<usize> {
        let names = self.lock_names();
        let file = names.current.get(name)?;
        let len = file
            .content
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .current
            .len();
        Some(len)
    }

    fn lock_names(&self) -> std::sync::MutexGuard<'_, Names> {
        self.shared
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn handle(&self, file: Arc<FaultyFile>) -> FileHandle {
        let generation = self.shared.generation.load(Ordering::SeqCst);
        Arc::new(Handle {
            file,
            generation,
            shared: self.shared.clone(),
        })
    }
}

impl Storage for FaultyStorage {
    fn open(&self, name: &str, create: bool) -> io::Result<FileHandle> {
        let mut names = self.lock_names();
        if let Some(f) = names.current.get(name) {
            let f = f.clone();
            drop(names);
            return Ok(self.handle(f));
        }
        if !create {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no file named {name}"),
            ));
        }
        let f = Arc::new(FaultyFile::default());
        names.current.insert(name.to_string(), f.clone());
        drop(names);
        Ok(self.handle(f))
    }

    fn list(&self) -> io::Result<Vec<String>> {
        Ok(self.lock_names().current.keys().cloned().collect())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let mut names = self.lock_names();
        names
            .current
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, name.to_string()))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let mut names = self.lock_names();
        let f = names
            .current
            .remove(from)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, from.to_string()))?;
        names.current.insert(to.to_string(), f);
        Ok(())
    }

    fn sync_dir(&self) -> io::Result<()> {
        if take_fault(&self.shared.fail_syncs) {
            return Err(io::Error::other("injected directory fsync failure"));
        }
        let mut names = self.lock_names();
        names.durable = names.current.clone();
        Ok(())
    }

    fn describe(&self) -> String {
        "faulty-memory".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_drops_unsynced_bytes_and_names() {
        let s = FaultyStorage::new();
        let a = s.open("a", true).unwrap();
        s.sync_dir().unwrap();
        a.write_at(0, b"hello").unwrap();
        a.sync().unwrap();
        a.write_at(5, b" world").unwrap();
        let _b = s.open("b", true).unwrap();
        s.crash(CrashMode::TearUnsynced(2));
        assert!(a.write_at(0, b"x").is_err());
        let a = s.open("a", false).unwrap();
        assert_eq!(crate::storage::read_all(&*a).unwrap(), b"hello w");
        assert!(s.open("b", false).is_err());
    }
}
