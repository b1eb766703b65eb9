//! Many readers with one writer; tailing wakeups; group commit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use quiver_log::storage::{FaultyStorage, FileHandle, MemoryStorage, Storage, StorageFile};
use quiver_log::{Durability, Log, LogConfig};

use crate::common::{file, small, value};

#[test]
fn readers_tail_while_the_writer_appends_and_rotates() {
    let b = file();
    let log = Arc::new(Log::open_with(b.storage.clone(), small(Durability::Os)).unwrap());
    const N: u64 = 3000;
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let log = log.clone();
            thread::spawn(move || {
                let mut tail = log.tail(0);
                let mut next = 0u64;
                while next < N {
                    let r = tail
                        .next_timeout(Duration::from_secs(10))
                        .unwrap()
                        .expect("writer keeps appending");
                    assert_eq!(r.offset, next);
                    assert_eq!(&r.value[..], &value(next)[..]);
                    assert!(
                        r.offset < log.committed_offset(),
                        "only committed records are visible"
                    );
                    next += 1;
                }
            })
        })
        .collect();
    let scanner = {
        let log = log.clone();
        thread::spawn(move || {
            let mut seen = 0u64;
            while seen < N {
                let recs = log.read(seen, 100, usize::MAX).unwrap();
                for r in &recs {
                    assert_eq!(r.offset, seen);
                    seen += 1;
                }
                if recs.is_empty() {
                    thread::yield_now();
                }
            }
        })
    };
    for i in 0..N {
        if i % 10 == 0 {
            let vals: Vec<Vec<u8>> = (i..i + 10).map(value).collect();
            let refs: Vec<&[u8]> = vals.iter().map(|v| &v[..]).collect();
            log.append_batch(&refs).unwrap();
        }
    }
    for r in readers {
        r.join().unwrap();
    }
    scanner.join().unwrap();
    assert!(log.stats().segments > 10, "rotated while reading");
}

#[test]
fn tail_wakes_on_commit_and_times_out() {
    let b = file();
    let log = Arc::new(Log::open_with(b.storage.clone(), small(Durability::Buffered)).unwrap());
    let mut tail = log.tail(0);
    let start = Instant::now();
    assert!(
        tail.next_timeout(Duration::from_millis(50))
            .unwrap()
            .is_none()
    );
    assert!(start.elapsed() >= Duration::from_millis(50));
    let writer = {
        let log = log.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            log.append(b"buffered").unwrap();
            thread::sleep(Duration::from_millis(30));
            log.flush().unwrap();
        })
    };
    let start = Instant::now();
    let r = tail
        .next_timeout(Duration::from_secs(10))
        .unwrap()
        .expect("woken by the flush");
    assert_eq!(&r.value[..], b"buffered");
    assert!(start.elapsed() < Duration::from_secs(5));
    writer.join().unwrap();
}

/// Memory storage whose fsync takes 2 ms, like a real disk, and counts calls.
#[derive(Debug, Default)]
struct SlowSync {
    inner: MemoryStorage,
    syncs: Arc<std::sync::atomic::AtomicU64>,
}

#[derive(Debug)]
struct SlowFile {
    inner: FileHandle,
    syncs: Arc<std::sync::atomic::AtomicU64>,
}

impl StorageFile for SlowFile {
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_at(pos, buf)
    }
    fn write_at(&self, pos: u64, data: &[u8]) -> std::io::Result<()> {
        self.inner.write_at(pos, data)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.syncs.fetch_add(1, Ordering::SeqCst);
        thread::sleep(Duration::from_millis(2));
        self.inner.sync()
    }
    fn truncate(&self, len: u64) -> std::io::Result<()> {
        self.inner.truncate(len)
    }
    fn preallocate(&self, len: u64) -> std::io::Result<()> {
        self.inner.preallocate(len)
    }
}

impl Storage for SlowSync {
    fn open(&self, name: &str, create: bool) -> std::io::Result<FileHandle> {
        Ok(Arc::new(SlowFile {
            inner: self.inner.open(name, create)?,
            syncs: self.syncs.clone(),
        }))
    }
    fn list(&self) -> std::io::Result<Vec<String>> {
        self.inner.list()
    }
    fn remove(&self, name: &str) -> std::io::Result<()> {
        self.inner.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn sync_dir(&self) -> std::io::Result<()> {
        self.inner.sync_dir()
    }
    fn describe(&self) -> String {
        "slow-sync".to_string()
    }
}

#[test]
fn sync_appenders_share_fsyncs() {
    let storage = Arc::new(SlowSync::default());
    let syncs = storage.syncs.clone();
    let log = Arc::new(
        Log::open_with(
            storage,
            LogConfig {
                durability: Durability::Sync,
                ..LogConfig::default()
            },
        )
        .unwrap(),
    );
    let before = syncs.load(Ordering::SeqCst);
    let go = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let log = log.clone();
            let go = go.clone();
            thread::spawn(move || {
                while !go.load(Ordering::Acquire) {
                    thread::yield_now();
                }
                for i in 0..20u64 {
                    let off = log.append(&value(t * 1000 + i)).unwrap();
                    assert!(
                        off < log.committed_offset(),
                        "returned only after its fsync committed it"
                    );
                }
            })
        })
        .collect();
    go.store(true, Ordering::Release);
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(log.committed_offset(), 320);
    let used = syncs.load(Ordering::SeqCst) - before;
    assert!(
        used < 320 / 3,
        "16 appenders share fsyncs: {used} fsyncs for 320 appends"
    );
    assert_eq!(log.stats().fsyncs, used);
}

#[test]
fn interval_mode_syncs_in_the_background() {
    let s = FaultyStorage::new();
    let cfg = LogConfig {
        durability: Durability::Interval { interval_ms: 5 },
        ..LogConfig::default()
    };
    let log = Log::open_with(Arc::new(s.clone()) as Arc<dyn Storage>, cfg).unwrap();
    log.append(b"soon durable").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.stats().fsyncs == 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    assert!(log.stats().fsyncs > 0);
    s.crash(quiver_log::storage::CrashMode::DropUnsynced);
    drop(log);
    let log = Log::open_with(
        Arc::new(s.clone()) as Arc<dyn Storage>,
        LogConfig::default(),
    )
    .unwrap();
    assert_eq!(log.committed_offset(), 1);
}

#[test]
fn read_only_open_follows_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Log::open(dir.path(), small(Durability::Os)).unwrap();
    writer.append(&value(0)).unwrap();
    let reader = Log::open_read_only(dir.path(), small(Durability::Os)).unwrap();
    assert_eq!(reader.committed_offset(), 1);
    let follower = thread::spawn(move || {
        let mut tail = reader.tail(0);
        for i in 0..500u64 {
            let r = tail
                .next_timeout(Duration::from_secs(10))
                .unwrap()
                .expect("the writer keeps appending");
            assert_eq!(r.offset, i);
            assert_eq!(&r.value[..], &value(i)[..]);
        }
        assert!(reader.stats().segments > 3, "followed across rotations");
        assert_eq!(reader.refresh().unwrap(), 500);
    });
    for i in 1..500u64 {
        writer.append(&value(i)).unwrap();
        if i % 50 == 0 {
            thread::sleep(Duration::from_millis(2));
        }
    }
    follower.join().unwrap();
}
