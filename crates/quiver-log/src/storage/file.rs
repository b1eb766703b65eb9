//! The real backend: a directory on a local filesystem.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{FileHandle, Storage, StorageFile};

/// A directory of real files.
#[derive(Debug, Clone)]
pub struct FileStorage {
    dir: PathBuf,
}

impl FileStorage {
    /// Uses `dir`, creating it if `create`.
    pub fn new(dir: &Path, create: bool) -> io::Result<FileStorage> {
        if create {
            fs::create_dir_all(dir)?;
        } else if !dir.is_dir() {
            let what = if dir.exists() {
                "is not a directory"
            } else {
                "does not exist"
            };
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} {what}", dir.display()),
            ));
        }
        Ok(FileStorage {
            dir: dir.to_path_buf(),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[derive(Debug)]
struct RealFile {
    file: File,
}

impl StorageFile for RealFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, pos)
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, pos)
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        let flags = rustix::fs::FallocateFlags::KEEP_SIZE;
        match rustix::fs::fallocate(&self.file, flags, 0, len) {
            Ok(()) => Ok(()),
            // Not every filesystem supports it (tmpfs does, some others not): a hint only.
            Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

impl Storage for FileStorage {
    fn open(&self, name: &str, create: bool) -> io::Result<FileHandle> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(self.dir.join(name))?;
        Ok(Arc::new(RealFile { file }))
    }

    fn list(&self) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            if entry.file_type()?.is_file()
                && let Some(name) = entry.file_name().to_str()
            {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        fs::remove_file(self.dir.join(name))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.dir.join(from), self.dir.join(to))
    }

    fn sync_dir(&self) -> io::Result<()> {
        File::open(&self.dir)?.sync_all()
    }

    fn describe(&self) -> String {
        self.dir.display().to_string()
    }
}
