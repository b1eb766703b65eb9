//! The data directory: created on start and held with an OS file lock for the
//! life of the server, so a second server on the same directory is refused
//! with the running server's pid instead of corrupting shared files.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside the data directory; it holds the owner's pid.
pub const LOCK_FILE: &str = "quiver.lock";

/// Why the data directory could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataDirError {
    #[error("cannot create data directory {}: {error}", .dir.display())]
    Create { dir: PathBuf, error: io::Error },
    #[error("cannot open lock file {}: {error}", .path.display())]
    LockFile { path: PathBuf, error: io::Error },
    #[error(
        "data directory {} is in use by another Quiver server (pid {holder}); stop that server or choose another directory with --data-dir",
        .dir.display()
    )]
    InUse { dir: PathBuf, holder: String },
}

/// An exclusively locked data directory; the lock is released when dropped
/// (or when the process dies, which the OS guarantees for `flock` locks).
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    _lock: File,
}

impl DataDir {
    /// Creates `dir` if needed and takes its lock, recording this process's pid.
    pub fn open(dir: &Path) -> Result<DataDir, DataDirError> {
        std::fs::create_dir_all(dir).map_err(|error| DataDirError::Create {
            dir: dir.to_owned(),
            error,
        })?;
        let lock_path = dir.join(LOCK_FILE);
        let lock_error = |error| DataDirError::LockFile {
            path: lock_path.clone(),
            error,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(lock_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "unknown".to_owned(),
                    pid => pid.to_owned(),
                };
                return Err(DataDirError::InUse {
                    dir: dir.to_owned(),
                    holder,
                });
            }
            Err(TryLockError::Error(error)) => return Err(lock_error(error)),
        }
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .and_then(|()| file.sync_all())
            .map_err(lock_error)?;
        Ok(DataDir {
            path: dir.to_owned(),
            _lock: file,
        })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_open_in_the_same_process_is_refused_with_the_pid() {
        let dir = tempfile::tempdir().expect("temp dir");
        let held = DataDir::open(dir.path()).expect("first open");
        let error = DataDir::open(dir.path()).expect_err("second open must fail");
        let message = error.to_string();
        assert!(
            message.contains(&std::process::id().to_string()),
            "{message}"
        );
        assert!(
            message.contains(&dir.path().display().to_string()),
            "{message}"
        );
        drop(held);
        DataDir::open(dir.path()).expect("open after release");
    }

    #[test]
    fn creates_missing_directories() {
        let dir = tempfile::tempdir().expect("temp dir");
        let nested = dir.path().join("a/b/c");
        let data = DataDir::open(&nested).expect("open");
        assert!(data.path().join(LOCK_FILE).is_file());
    }
}
