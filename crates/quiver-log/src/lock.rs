//! One writer per log directory across processes: an OS file lock on `<dir>/LOCK`, with
//! the holder's pid written inside so a second writer's error can name it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::Path;

use crate::error::OpenError;

/// Name of the lock file.
pub const LOCK_FILE: &str = "LOCK";

/// Holds the lock until dropped (the OS releases it when the file is closed).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the exclusive lock of `dir` without blocking.
    pub fn acquire(dir: &Path) -> Result<DirLock, OpenError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| OpenError::Io {
            what: path.display().to_string(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {
                file.set_len(0).map_err(io)?;
                write!(file, "{}", std::process::id()).map_err(io)?;
                Ok(DirLock { _file: file })
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = if holder.trim().is_empty() {
                    "unknown".to_string()
                } else {
                    holder.trim().to_string()
                };
                Err(OpenError::Locked {
                    dir: dir.display().to_string(),
                    holder,
                })
            }
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }
}
