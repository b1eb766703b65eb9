//! Checked-in fixture directories (`tests/fixtures/`): a clean version-1 log (guards the
//! format), a torn tail and an interior corruption. Tests run on copies.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quiver_log::storage::FileStorage;
use quiver_log::{
    Durability, Log, LogConfig, ManualClock, OpenError, RecoveryError, RecoveryMode,
    TruncationReason,
};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn config() -> LogConfig {
    LogConfig {
        durability: Durability::Sync,
        segment_max_bytes: 4096,
        index_interval_bytes: 256,
        preallocate: false,
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        ..LogConfig::default()
    }
}

fn payload(i: u64) -> Vec<u8> {
    format!("fixture-{i:04}-{}", "f".repeat((i % 23) as usize)).into_bytes()
}

/// Copies a fixture into a temporary directory.
fn copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture_root().join(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

fn write_log(dir: &Path, records: u64) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let log = Log::open_with(Arc::new(FileStorage::new(dir, false).unwrap()), config()).unwrap();
    for i in 0..records {
        log.append(&payload(i)).unwrap();
    }
    log.commit_group("readers", records / 2).unwrap();
    log.close().unwrap();
}

/// Regenerates the fixtures: `cargo test -p quiver-log regenerate_fixtures -- --ignored`.
#[test]
#[ignore = "writes into the source tree"]
fn regenerate_fixtures() {
    let root = fixture_root();
    write_log(&root.join("clean_v1"), 100);
    write_log(&root.join("torn_tail"), 40);
    let seg = root.join("torn_tail/00000000000000000000.log");
    let len = std::fs::metadata(&seg).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(len - 20)
        .unwrap();
    // A crash mid-write happens before a clean close could record the watermark.
    std::fs::remove_file(root.join("torn_tail/committed.wm")).unwrap();
    write_log(&root.join("corrupt_interior"), 40);
    let seg = root.join("corrupt_interior/00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() - 200;
    bytes[at] ^= 0x04;
    std::fs::write(&seg, bytes).unwrap();
}

#[test]
fn clean_v1_fixture_reads_back_exactly() {
    let dir = copy("clean_v1");
    let log = Log::open_with(
        Arc::new(FileStorage::new(dir.path(), false).unwrap()),
        config(),
    )
    .unwrap();
    assert!(
        log.recovery_report().is_clean(),
        "{}",
        log.recovery_report()
    );
    let recs: Vec<_> = log.iter(0).map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 100);
    for r in &recs {
        assert_eq!(&r.value[..], &payload(r.offset)[..]);
        assert_eq!(r.timestamp_ms, 1_700_000_000_000);
    }
    assert_eq!(log.group_offset("readers"), Some(50));
    assert!(log.stats().segments > 1);
    assert!(quiver_log::tools::verify(&fixture_root().join("clean_v1")).is_ok());
}

#[test]
fn torn_tail_fixture_is_cut() {
    let dir = copy("torn_tail");
    let log = Log::open(dir.path(), config()).unwrap();
    let r = log.recovery_report();
    assert_eq!(r.truncations.len(), 1, "{r}");
    assert_eq!(r.truncations[0].reason, TruncationReason::TornTail);
    assert_eq!(log.committed_offset(), 39);
    assert_eq!(log.append(b"after").unwrap(), 39);
}

#[test]
fn corrupt_interior_fixture_is_refused_or_salvaged() {
    let dir = copy("corrupt_interior");
    let err = Log::open(dir.path(), config()).expect_err("interior corruption refused");
    assert!(
        matches!(err, OpenError::Recovery(RecoveryError::Corrupt { ref file, .. }) if file == "00000000000000000000.log"),
        "{err}"
    );
    let v = quiver_log::tools::verify(&fixture_root().join("corrupt_interior"))
        .expect_err("verify finds it");
    assert!(
        v.to_string().contains("00000000000000000000.log at byte"),
        "{v}"
    );
    let log = Log::open(
        dir.path(),
        LogConfig {
            recovery: RecoveryMode::Salvage,
            ..config()
        },
    )
    .unwrap();
    assert_eq!(
        log.recovery_report().truncations[0].reason,
        TruncationReason::Salvaged
    );
    assert!(log.committed_offset() < 40);
}
