//! Where bytes live: a narrow trait over one directory of named files, with a real file
//! backend, an in-memory backend and a fault-injecting backend for crash tests.
//!
//! The log only ever needs: positional reads and writes, length, truncate, preallocate,
//! fdatasync, and on the directory: list, create/open, rename, remove and fsync.

use std::fmt::Debug;
use std::io;
use std::sync::Arc;

pub mod faulty;
pub mod file;
pub mod memory;

pub use faulty::{CrashMode, FaultyStorage};
pub use file::FileStorage;
pub use memory::MemoryStorage;

/// One file of a storage backend. Thread-safe: many readers call `read_at` while the single
/// writer calls `write_at`.
#[allow(clippy::len_without_is_empty)]
pub trait StorageFile: Send + Sync + Debug {
    /// Current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Fills `buf` from `pos`; an error if the file is shorter.
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes all of `data` at `pos` (extending the file if needed).
    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()>;
    /// Makes written data and the length durable (fdatasync).
    fn sync(&self) -> io::Result<()>;
    /// Cuts the file to `len` bytes.
    fn truncate(&self, len: u64) -> io::Result<()>;
    /// Reserves space for `len` bytes without changing the length (a hint).
    fn preallocate(&self, len: u64) -> io::Result<()>;
}

/// Shared handle to an open file.
pub type FileHandle = Arc<dyn StorageFile>;

/// One directory of files.
pub trait Storage: Send + Sync + Debug {
    /// Opens a file, creating it (empty) if `create` and it does not exist.
    fn open(&self, name: &str, create: bool) -> io::Result<FileHandle>;
    /// Names of all files, in no particular order.
    fn list(&self) -> io::Result<Vec<String>>;
    /// Removes a file.
    fn remove(&self, name: &str) -> io::Result<()>;
    /// Renames `from` to `to`, replacing `to` atomically.
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    /// Makes creates, renames and removes durable.
    fn sync_dir(&self) -> io::Result<()>;
    /// Human description (a path for files) used in error messages.
    fn describe(&self) -> String;
}

/// Reads a whole file into memory.
pub fn read_all(file: &dyn StorageFile) -> io::Result<Vec<u8>> {
    let len = usize::try_from(file.len()?).map_err(|_| io::Error::other("file too large"))?;
    let mut buf = vec![0u8; len];
    file.read_at(0, &mut buf)?;
    Ok(buf)
}

/// Replaces `name` atomically with `content`: temp file, fsync, rename, directory fsync.
pub fn write_atomic(storage: &dyn Storage, name: &str, content: &[u8]) -> io::Result<()> {
    let tmp = format!("{name}.tmp");
    let f = storage.open(&tmp, true)?;
    f.truncate(0)?;
    f.write_at(0, content)?;
    f.sync()?;
    drop(f);
    storage.rename(&tmp, name)?;
    storage.sync_dir()
}
