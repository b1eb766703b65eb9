//! An in-memory backend: same contract as files, nothing survives the process.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::{FileHandle, Storage, StorageFile};

/// A directory held in memory; clones share the same files.
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    files: Arc<Mutex<HashMap<String, Arc<MemFile>>>>,
}

impl MemoryStorage {
    /// An empty directory.
    pub fn new() -> MemoryStorage {
        MemoryStorage::default()
    }
}

#[derive(Debug, Default)]
struct MemFile {
    data: RwLock<Vec<u8>>,
}

fn not_found(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no file named {name}"))
}

impl StorageFile for MemFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self
            .data
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len() as u64)
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = self.data.read().unwrap_or_else(PoisonError::into_inner);
        let start = usize::try_from(pos).map_err(io::Error::other)?;
        let end = start.checked_add(buf.len()).filter(|e| *e <= data.len());
        let end =
            end.ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past end"))?;
        buf.copy_from_slice(&data[start..end]);
        Ok(())
    }

    fn write_at(&self, pos: u64, src: &[u8]) -> io::Result<()> {
        let mut data = self.data.write().unwrap_or_else(PoisonError::into_inner);
        let start = usize::try_from(pos).map_err(io::Error::other)?;
        let end = start + src.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[start..end].copy_from_slice(src);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(io::Error::other)?;
        self.data
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .resize(len, 0);
        Ok(())
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        let mut data = self.data.write().unwrap_or_else(PoisonError::into_inner);
        let want = usize::try_from(len).unwrap_or(0).saturating_sub(data.len());
        data.reserve(want);
        Ok(())
    }
}

impl Storage for MemoryStorage {
    fn open(&self, name: &str, create: bool) -> io::Result<FileHandle> {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        match files.get(name) {
            Some(f) => Ok(f.clone()),
            None if create => {
                let f = Arc::new(MemFile::default());
                files.insert(name.to_string(), f.clone());
                Ok(f)
            }
            None => Err(not_found(name)),
        }
    }

    fn list(&self) -> io::Result<Vec<String>> {
        Ok(self
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        let f = files.remove(from).ok_or_else(|| not_found(from))?;
        files.insert(to.to_string(), f);
        Ok(())
    }

    fn sync_dir(&self) -> io::Result<()> {
        Ok(())
    }

    fn describe(&self) -> String {
        "memory".to_string()
    }
}
