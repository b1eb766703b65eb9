//! Helpers shared by the test modules.

use std::sync::Arc;

use quiver_log::storage::{FaultyStorage, FileStorage, MemoryStorage, Storage};
use quiver_log::{Durability, LogConfig};

/// A backend under test and whatever keeps it alive.
pub struct Backend {
    pub storage: Arc<dyn Storage>,
    pub _dir: Option<tempfile::TempDir>,
}

pub fn memory() -> Backend {
    Backend {
        storage: Arc::new(MemoryStorage::new()),
        _dir: None,
    }
}

pub fn file() -> Backend {
    let dir = tempfile::tempdir().expect("tempdir");
    Backend {
        storage: Arc::new(FileStorage::new(dir.path(), true).expect("dir")),
        _dir: Some(dir),
    }
}

pub fn faulty() -> Backend {
    Backend {
        storage: Arc::new(FaultyStorage::new()),
        _dir: None,
    }
}

/// Small segments so tests rotate often.
pub fn small(durability: Durability) -> LogConfig {
    LogConfig {
        durability,
        segment_max_bytes: 4096,
        index_interval_bytes: 256,
        preallocate: true,
        ..LogConfig::default()
    }
}

pub fn value(i: u64) -> Vec<u8> {
    format!("record-{i}-{}", "x".repeat((i % 37) as usize)).into_bytes()
}
