//! Recovery and fault injection on the faulty backend.

use std::sync::Arc;

use quiver_log::segment::segment_name;
use quiver_log::storage::{CrashMode, FaultyStorage, Storage};
use quiver_log::writer::{ZERO_AHEAD_BYTES, ZERO_AHEAD_MAX_WRITE};
use quiver_log::{
    AppendError, Durability, Log, LogConfig, OpenError, RecoveryError, RecoveryMode, SyncError,
    TruncationReason,
};

use crate::common::{small, value};

fn open(s: &FaultyStorage, cfg: LogConfig) -> Result<Log, OpenError> {
    Log::open_with(Arc::new(s.clone()) as Arc<dyn Storage>, cfg)
}

/// A log of ten synced records, then a batch of 200 bytes torn after its first 100; the
/// storage and the (`os`) config to open it with.
fn ten_records_and_a_torn_batch() -> (FaultyStorage, LogConfig) {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..10 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    let cfg = small(Durability::Os);
    let log = open(&s, cfg.clone()).unwrap();
    log.append(&[7u8; 200]).unwrap();
    s.crash(CrashMode::TearUnsynced(100));
    drop(log);
    (s, cfg)
}

#[test]
fn torn_tail_is_cut_and_reported() {
    // Append one more batch without syncing, then tear it.
    let (s, cfg) = ten_records_and_a_torn_batch();
    let log = open(&s, cfg).unwrap();
    let r = log.recovery_report().clone();
    assert_eq!(r.truncations.len(), 1, "{r}");
    assert_eq!(r.truncations[0].reason, TruncationReason::TornTail);
    assert_eq!(r.truncations[0].bytes_cut, 100);
    assert_eq!(log.stats().recovery_truncated_bytes, 100);
    assert_eq!(log.committed_offset(), 10);
    assert_eq!(log.append(b"next").unwrap(), 10);
}

#[test]
fn interior_corruption_is_refused_then_salvaged() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..20 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    let seg = "00000000000000000000.log";
    // Inside the tail that open validates (after the last index point), with valid
    // batches after it.
    let len = s.file_len(seg).unwrap();
    assert!(s.flip_bit(seg, len - 150, 3));
    let err = open(&s, small(Durability::Os)).expect_err("corruption refused");
    match &err {
        OpenError::Recovery(RecoveryError::Corrupt { file, position, .. }) => {
            assert_eq!(file, seg);
            assert!(*position <= (len - 150) as u64, "{err}");
        }
        other => panic!("expected corruption error, got {other}"),
    }
    assert!(
        err.to_string().contains(seg) && err.to_string().contains("salvage"),
        "{err}"
    );
    let cfg = LogConfig {
        recovery: RecoveryMode::Salvage,
        ..small(Durability::Os)
    };
    let log = open(&s, cfg).unwrap();
    let r = log.recovery_report();
    assert_eq!(r.truncations[0].reason, TruncationReason::Salvaged, "{r}");
    assert!(log.committed_offset() < 20);
    let n = log.committed_offset();
    assert_eq!(log.iter(0).count() as u64, n);
}

#[test]
fn damaged_tail_of_unsealed_segment_is_a_hole_guarded_by_the_watermark() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..300 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    // Without its index end entry the first segment looks unsealed; a damaged last batch
    // is then a power-loss hole, but the watermark written by close says 300 were synced.
    s.remove("00000000000000000000.idx").unwrap();
    s.sync_dir().unwrap();
    let len = s.file_len("00000000000000000000.log").unwrap();
    assert!(s.flip_bit("00000000000000000000.log", len - 10, 0));
    let err = open(&s, small(Durability::Os)).expect_err("synced records missing");
    assert!(
        matches!(
            err,
            OpenError::Recovery(RecoveryError::WatermarkAhead { watermark: 300, .. })
        ),
        "{err}"
    );
    let log = open(
        &s,
        LogConfig {
            recovery: RecoveryMode::Salvage,
            ..small(Durability::Os)
        },
    )
    .unwrap();
    let r = log.recovery_report();
    assert_eq!(r.truncations[0].reason, TruncationReason::TornTail, "{r}");
    assert!(
        r.truncations[1..]
            .iter()
            .all(|t| t.reason == TruncationReason::DroppedSegment),
        "{r}"
    );
    assert_eq!(log.iter(0).count() as u64, log.committed_offset());
}

#[test]
fn power_loss_before_sealing_cuts_at_the_hole() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Os)).unwrap();
    log.append(b"synced").unwrap();
    log.sync().unwrap();
    for i in 0..300 {
        log.append(&value(i)).unwrap();
    }
    s.crash(CrashMode::DropUnsynced);
    drop(log);
    let log = open(&s, small(Durability::Os)).unwrap();
    assert!(log.committed_offset() >= 1, "{}", log.recovery_report());
    let recs: Vec<_> = log.iter(0).map(|r| r.unwrap()).collect();
    assert_eq!(&recs[0].value[..], b"synced");
    assert!(
        recs[1..]
            .iter()
            .enumerate()
            .all(|(i, r)| r.value[..] == value(i as u64)[..])
    );
}

#[test]
fn reads_and_verify_catch_corruption_open_does_not_scan() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..20 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    assert!(s.flip_bit("00000000000000000000.log", 100, 3));
    let report = quiver_log::tools::verify_storage(Arc::new(s.clone()));
    let msg = report.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("00000000000000000000.log at byte 73"), "{msg}");
    let log = open(&s, small(Durability::Os)).unwrap();
    // The records before the damaged batch come first, then the error.
    let before = log.read(0, 100, usize::MAX).unwrap();
    let err = log
        .read(before.len() as u64, 100, usize::MAX)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("00000000000000000000.log at byte 73"), "{err}");
}

#[test]
fn lost_index_is_rebuilt() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..300 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    s.remove("00000000000000000000.idx").unwrap();
    s.sync_dir().unwrap();
    let log = open(&s, small(Durability::Os)).unwrap();
    assert!(
        log.recovery_report()
            .indexes_rebuilt
            .iter()
            .any(|n| n == "00000000000000000000.idx")
    );
    assert!(log.recovery_report().is_clean());
    assert_eq!(log.iter(0).count(), 300);
    assert_eq!(log.read(123, 1, 1).unwrap()[0].offset, 123);
}

#[test]
fn failed_fsync_poisons_until_reopen() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    log.append(b"one").unwrap();
    s.fail_next_syncs(1);
    let err = log.append(b"two").unwrap_err();
    assert!(matches!(err, AppendError::Io { .. }), "{err}");
    assert!(log.is_poisoned());
    let again = log.append(b"three").unwrap_err();
    assert!(matches!(again, AppendError::Poisoned { .. }), "{again}");
    assert!(again.to_string().contains("reopen"));
    drop(log);
    s.crash(CrashMode::DropUnsynced);
    let log = open(&s, small(Durability::Sync)).unwrap();
    assert_eq!(
        log.committed_offset(),
        1,
        "only the acknowledged record survives"
    );
    assert_eq!(log.append(b"four").unwrap(), 1);
}

#[test]
fn failed_write_poisons() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Os)).unwrap();
    log.append(b"one").unwrap();
    s.fail_next_writes(1);
    assert!(log.append(b"two").is_err());
    assert!(matches!(
        log.append(b"three"),
        Err(AppendError::Poisoned { .. })
    ));
    assert!(log.flush().is_err());
}

#[test]
fn watermark_ahead_of_data_is_refused() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Os)).unwrap();
    for i in 0..5 {
        log.append(&value(i)).unwrap();
    }
    log.sync().unwrap();
    drop(log);
    // Lose synced data behind the log's back: cut the segment.
    let f = s.open("00000000000000000000.log", false).unwrap();
    f.truncate(0).unwrap();
    f.sync().unwrap();
    drop(f);
    let err = open(&s, small(Durability::Os)).expect_err("lost data refused");
    assert!(
        matches!(
            err,
            OpenError::Recovery(RecoveryError::WatermarkAhead {
                watermark: 5,
                end: 0
            })
        ),
        "{err}"
    );
    let log = open(
        &s,
        LogConfig {
            recovery: RecoveryMode::Salvage,
            ..small(Durability::Os)
        },
    )
    .unwrap();
    assert_eq!(log.recovery_report().watermark_lost, Some((5, 0)));
}

#[test]
fn rotation_survives_power_loss() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..200 {
        log.append(&value(i)).unwrap();
    }
    assert!(log.stats().segments > 2);
    s.crash(CrashMode::DropUnsynced);
    drop(log);
    let log = open(&s, small(Durability::Sync)).unwrap();
    assert_eq!(log.committed_offset(), 200, "{}", log.recovery_report());
    let all: Vec<_> = log.iter(0).map(|r| r.unwrap()).collect();
    assert!(
        all.iter()
            .enumerate()
            .all(|(i, r)| r.value[..] == value(i as u64)[..])
    );
}

#[test]
fn second_writer_gets_a_clear_error_and_readers_may_open() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), LogConfig::default()).unwrap();
    log.append(b"held").unwrap();
    let err = Log::open(dir.path(), LogConfig::default()).expect_err("second writer refused");
    let msg = err.to_string();
    assert!(matches!(err, OpenError::Locked { .. }), "{msg}");
    assert!(
        msg.contains(&std::process::id().to_string())
            && msg.contains(&dir.path().display().to_string()),
        "{msg}"
    );
    let ro = Log::open_read_only(dir.path(), LogConfig::default()).unwrap();
    assert_eq!(ro.read(0, 1, 1).unwrap()[0].value.as_ref(), b"held");
    assert!(matches!(ro.append(b"x"), Err(AppendError::ReadOnly)));
    drop(log);
    // The lock goes with the writer. (A child process another test forks at that moment
    // shares the lock file until it execs, so the test allows a few tries.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let reopened = loop {
        match Log::open(dir.path(), LogConfig::default()) {
            Err(OpenError::Locked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other,
        }
    };
    assert!(reopened.is_ok(), "{:?}", reopened.err());
}

mod arbitrary_bytes {
    use std::sync::Arc;

    use proptest::prelude::*;
    use quiver_log::storage::{MemoryStorage, Storage};
    use quiver_log::{Durability, Log, LogConfig, RecoveryMode};

    use crate::common::{small, value};

    /// A real segment and index, to mutate.
    fn seed() -> (Vec<u8>, Vec<u8>) {
        let s = MemoryStorage::new();
        let log = Log::open_with(
            Arc::new(s.clone()),
            LogConfig {
                segment_max_bytes: 1 << 20,
                ..small(Durability::Os)
            },
        )
        .unwrap();
        for i in 0..60 {
            log.append(&value(i)).unwrap();
        }
        drop(log);
        let read = |n: &str| quiver_log::storage::read_all(&*s.open(n, false).unwrap()).unwrap();
        (
            read("00000000000000000000.log"),
            read("00000000000000000000.idx"),
        )
    }

    fn exercise(log_bytes: &[u8], idx_bytes: &[u8]) {
        for mode in [RecoveryMode::Strict, RecoveryMode::Salvage] {
            let s = MemoryStorage::new();
            s.open("00000000000000000000.log", true)
                .unwrap()
                .write_at(0, log_bytes)
                .unwrap();
            s.open("00000000000000000000.idx", true)
                .unwrap()
                .write_at(0, idx_bytes)
                .unwrap();
            let storage: Arc<dyn Storage> = Arc::new(s);
            let _ = quiver_log::tools::verify_storage(storage.clone());
            if let Ok(log) = Log::open_with(
                storage,
                LogConfig {
                    recovery: mode,
                    ..LogConfig::default()
                },
            ) {
                let n = log.iter(0).take_while(|r| r.is_ok()).count() as u64;
                assert!(n <= log.committed_offset());
                let _ = log.offset_for_timestamp(0);
                log.append(b"after").unwrap();
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn mutated_segments_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), cut in any::<prop::sample::Index>(), idx_cut in any::<prop::sample::Index>()) {
            let (mut log_bytes, mut idx_bytes) = seed();
            for (at, x) in flips {
                let i = at.index(log_bytes.len());
                log_bytes[i] ^= x;
            }
            log_bytes.truncate(cut.index(log_bytes.len() + 1));
            idx_bytes.truncate(idx_cut.index(idx_bytes.len() + 1));
            exercise(&log_bytes, &idx_bytes);
        }

        #[test]
        fn random_bytes_never_panic(log_bytes in prop::collection::vec(any::<u8>(), 0..512), idx_bytes in prop::collection::vec(any::<u8>(), 0..128)) {
            exercise(&log_bytes, &idx_bytes);
        }
    }
}

/// A log of segments larger than its zero-ahead stretch.
fn zeroing(durability: Durability) -> LogConfig {
    LogConfig {
        segment_max_bytes: 4 * ZERO_AHEAD_BYTES,
        ..small(durability)
    }
}

fn len_of(s: &FaultyStorage, name: &str) -> u64 {
    s.file_len(name).expect("file exists") as u64
}

#[test]
fn synced_writes_bring_zeros_ahead_that_recovery_reads_as_the_end_of_the_data() {
    // `Sync` syncs every append; `Buffered` here syncs each one explicitly.
    for durability in [Durability::Sync, Durability::Buffered] {
        let append = |log: &Log, i: u64| {
            log.append(&value(i)).unwrap();
            log.sync_appended().unwrap();
        };
        let s = FaultyStorage::new();
        let name = segment_name(0);
        let log = open(&s, zeroing(durability)).unwrap();
        for i in 0..10 {
            append(&log, i);
        }
        assert_eq!(len_of(&s, &name), ZERO_AHEAD_BYTES, "{durability:?}");
        s.crash(CrashMode::KeepWritten);
        drop(log);
        let log = open(&s, zeroing(durability)).unwrap();
        let report = log.recovery_report().clone();
        assert!(report.is_clean(), "zeros are not a torn tail: {report}");
        assert_eq!(log.committed_offset(), 10);
        let data = len_of(&s, &name);
        assert!(data < 4096, "the zeros were cut: {data} bytes left");
        for i in 10..20 {
            append(&log, i);
        }
        assert_eq!(len_of(&s, &name), ZERO_AHEAD_BYTES);
        let all: Vec<_> = log.iter(0).map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 20);
        for (i, r) in all.iter().enumerate() {
            assert_eq!(r.value[..], value(i as u64)[..]);
        }
        log.close().unwrap();
        assert!(len_of(&s, &name) < 4096, "closing cuts the zeros");
    }
}

#[test]
fn a_large_synced_write_brings_no_zeros_and_a_small_one_after_it_does() {
    let s = FaultyStorage::new();
    let name = segment_name(0);
    let log = open(&s, zeroing(Durability::Sync)).unwrap();
    log.append(&vec![7u8; ZERO_AHEAD_MAX_WRITE]).unwrap();
    let data = len_of(&s, &name);
    assert!(data > ZERO_AHEAD_MAX_WRITE as u64);
    assert!(data < ZERO_AHEAD_BYTES, "no zeros after the large write");
    log.append(&value(1)).unwrap();
    assert_eq!(
        len_of(&s, &name),
        ZERO_AHEAD_BYTES,
        "zeros after the small one"
    );
}

#[test]
fn a_damaged_batch_before_the_zeros_is_still_a_torn_tail() {
    let s = FaultyStorage::new();
    let name = segment_name(0);
    let log = open(&s, zeroing(Durability::Sync)).unwrap();
    for i in 0..9 {
        log.append(&value(i)).unwrap();
    }
    log.close().unwrap();
    drop(log);
    let nine = len_of(&s, &name);
    let log = open(&s, zeroing(Durability::Sync)).unwrap();
    log.append(&value(9)).unwrap();
    assert!(s.flip_bit(&name, nine as usize + 50, 0));
    s.crash(CrashMode::KeepWritten);
    drop(log);
    let log = open(&s, zeroing(Durability::Sync)).unwrap();
    let r = log.recovery_report().clone();
    assert_eq!(r.truncations.len(), 1, "{r}");
    assert_eq!(r.truncations[0].reason, TruncationReason::TornTail);
    assert_eq!(r.truncations[0].position, nine);
    assert_eq!(r.truncations[0].bytes_cut, ZERO_AHEAD_BYTES - nine);
    assert_eq!(log.committed_offset(), 9);
}

#[test]
fn sealed_segments_of_a_sync_log_end_with_their_data() {
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    for i in 0..200 {
        log.append(&value(i)).unwrap();
    }
    let mut names: Vec<String> = s
        .list()
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    assert!(names.len() > 2);
    for name in &names[..names.len() - 1] {
        let file = s.open(name, false).unwrap();
        let len = file.len().unwrap();
        let mut last = [0u8];
        file.read_at(len - 1, &mut last).unwrap();
        assert_ne!(last[0], 0, "{name} ends with its last record, not zeros");
    }
}

/// Damage that open does not look at (before the last index point of a segment) shows up
/// when it is read: every record before it is handed out first, then the error.
#[test]
fn records_before_damage_found_by_a_read_are_handed_out_before_the_error() {
    let s = FaultyStorage::new();
    let cfg = LogConfig {
        segment_max_bytes: 1 << 20,
        ..small(Durability::Os)
    };
    let log = open(&s, cfg.clone()).unwrap();
    for i in 0..200 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    let seg = "00000000000000000000.log";
    let len = s.file_len(seg).unwrap();
    assert!(s.flip_bit(seg, len / 2, 3));
    let log = open(&s, cfg).unwrap();
    let mut read = Vec::new();
    let mut error = None;
    for item in log.iter(0) {
        match item {
            Ok(record) => read.push(record.offset),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let error = error.expect("the damage is reported");
    assert!(error.to_string().contains(seg), "{error}");
    assert!(read.len() > 50, "{} records before the damage", read.len());
    assert_eq!(read, (0..read.len() as u64).collect::<Vec<_>>());
    // A bounded read too: the records first, the error at the next read from there.
    let first = log.read(0, 10_000, usize::MAX).unwrap();
    assert_eq!(first.len(), read.len());
    assert!(log.read(read.len() as u64, 10_000, usize::MAX).is_err());
    let mut tail = log.tail(0);
    for offset in 0..read.len() as u64 {
        let record = tail.next_timeout(std::time::Duration::ZERO).unwrap();
        assert_eq!(record.map(|r| r.offset), Some(offset));
    }
    assert!(tail.next_timeout(std::time::Duration::ZERO).is_err());
}

#[test]
fn a_group_past_the_end_of_the_data_is_refused_then_moved_back() {
    // A group file that points past the data, as a disk that dropped fsynced records
    // would leave it: taken from a longer log.
    let longer = FaultyStorage::new();
    let log = open(&longer, small(Durability::Os)).unwrap();
    for i in 0..10 {
        log.append(&value(i)).unwrap();
    }
    log.commit_group("g", 10).unwrap();
    drop(log);
    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Os)).unwrap();
    for i in 0..5 {
        log.append(&value(i)).unwrap();
    }
    drop(log);
    let from = longer.open("g.group", false).unwrap();
    let mut bytes = vec![0; from.len().unwrap() as usize];
    from.read_at(0, &mut bytes).unwrap();
    let to = s.open("g.group", true).unwrap();
    to.write_at(0, &bytes).unwrap();
    to.sync().unwrap();
    drop(to);

    let err = open(&s, small(Durability::Os)).expect_err("refused");
    let msg = err.to_string();
    assert!(
        matches!(err, OpenError::Recovery(RecoveryError::Group { .. }))
            && msg.contains("g.group")
            && msg.contains("offset 10")
            && msg.contains("salvage"),
        "{msg}"
    );
    let salvage = LogConfig {
        recovery: RecoveryMode::Salvage,
        ..small(Durability::Os)
    };
    let log = open(&s, salvage).unwrap();
    assert_eq!(
        log.recovery_report().groups_moved_back,
        [("g".to_string(), 10)]
    );
    assert_eq!(log.group_offset("g"), Some(5));
    drop(log);
    let log = open(&s, small(Durability::Os)).expect("the moved group is kept");
    assert_eq!(log.group_offset("g"), Some(5));
}

#[test]
fn retention_needs_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), small(Durability::Os)).unwrap();
    for i in 0..200 {
        log.append(&value(i)).unwrap();
    }
    let ro = Log::open_read_only(dir.path(), small(Durability::Os)).unwrap();
    let refused = ro.delete_before(100).expect_err("read-only");
    assert!(matches!(refused, SyncError::ReadOnly), "{refused}");
    assert!(!log.delete_before(100).unwrap().deleted_segments.is_empty());
    let first = log.first_offset();
    let refused = log
        .reset_group("g", quiver_log::ResetTo::Offset(0))
        .expect_err("deleted");
    assert!(
        matches!(refused, quiver_log::GroupError::BeforeStart { requested: 0, first: f } if f == first),
        "{refused}"
    );
    assert_eq!(
        log.reset_group("g", quiver_log::ResetTo::Offset(first))
            .unwrap(),
        first
    );
}

#[test]
fn a_closed_segment_gives_back_its_preallocated_space() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_max_bytes: 16 << 20,
        ..small(Durability::Os)
    };
    let log = Log::open(dir.path(), config).unwrap();
    log.append(b"small").unwrap();
    drop(log);
    let meta = std::fs::metadata(dir.path().join("00000000000000000000.log")).unwrap();
    // Whatever the file system reserved ahead (16 MiB where it can) is freed.
    assert!(meta.blocks() * 512 < 1 << 20, "{} blocks", meta.blocks());
}

#[test]
fn a_damaged_watermark_stops_a_strict_open_before_any_cut_and_salvage_rewrites_it() {
    let (s, cfg) = ten_records_and_a_torn_batch();
    let wm = s.open("committed.wm", false).unwrap();
    wm.write_at(9, &[0xff]).unwrap();
    wm.sync().unwrap();
    drop(wm);
    let segment = "00000000000000000000.log";
    let len = s.open(segment, false).unwrap().len().unwrap();

    let err = open(&s, cfg.clone()).expect_err("refused");
    let msg = err.to_string();
    assert!(
        matches!(err, OpenError::Recovery(RecoveryError::Watermark { .. }))
            && msg.contains("committed.wm")
            && msg.contains("salvage"),
        "{msg}"
    );
    assert_eq!(
        s.open(segment, false).unwrap().len().unwrap(),
        len,
        "nothing cut"
    );

    let salvage = LogConfig {
        recovery: RecoveryMode::Salvage,
        ..cfg.clone()
    };
    let log = open(&s, salvage).unwrap();
    let report = log.recovery_report().clone();
    assert!(
        report.watermark_damaged.is_some() && !report.is_clean(),
        "{report}"
    );
    assert_eq!(log.committed_offset(), 10);
    drop(log);
    let log = open(&s, cfg).expect("the watermark was written again");
    assert_eq!(log.committed_offset(), 10);
}

#[test]
fn a_torn_batch_whose_value_holds_a_valid_batch_is_a_torn_tail() {
    // The bytes of a whole, valid batch, as a client could publish them.
    let other = FaultyStorage::new();
    let log = open(&other, small(Durability::Sync)).unwrap();
    log.append(b"inner").unwrap();
    drop(log);
    let file = other.open("00000000000000000000.log", false).unwrap();
    let mut inner = vec![0; file.len().unwrap() as usize];
    file.read_at(0, &mut inner).unwrap();

    let s = FaultyStorage::new();
    let log = open(&s, small(Durability::Sync)).unwrap();
    log.append(b"first").unwrap();
    drop(log);
    let cfg = small(Durability::Os);
    let log = open(&s, cfg.clone()).unwrap();
    let mut value = inner.clone();
    value.extend_from_slice(&[b'x'; 1000]);
    log.append(&value).unwrap();
    // The tear keeps the inner batch whole and cuts the outer one.
    s.crash(CrashMode::TearUnsynced(inner.len() + 200));
    drop(log);
    let log = open(&s, cfg).expect("a torn tail, not corruption");
    let report = log.recovery_report().clone();
    assert_eq!(report.truncations.len(), 1, "{report}");
    assert_eq!(report.truncations[0].reason, TruncationReason::TornTail);
    assert_eq!(log.committed_offset(), 1);
}
