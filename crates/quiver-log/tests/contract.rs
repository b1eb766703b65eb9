//! The storage contract: the same log behaviour on every backend.

use std::sync::Arc;

use quiver_log::{
    Compression, Durability, Log, LogConfig, ManualClock, NewRecord, ReadError, ResetTo,
    RetentionPolicy,
};

use crate::common::{Backend, small, value};

fn append_read_round_trip(b: Backend) {
    let log = Log::open_with(b.storage.clone(), small(Durability::Os)).unwrap();
    for i in 0..500u64 {
        assert_eq!(log.append(&value(i)).unwrap(), i);
    }
    let recs = log.read(0, 10_000, usize::MAX).unwrap();
    assert_eq!(recs.len(), 500);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.offset, i as u64);
        assert_eq!(&r.value[..], &value(i as u64)[..]);
    }
    assert!(
        log.stats().segments > 3,
        "rotation happened: {}",
        log.stats()
    );
    assert_eq!(log.last_offset(), Some(499));
    let mid = log.read(250, 3, usize::MAX).unwrap();
    assert_eq!(
        mid.iter().map(|r| r.offset).collect::<Vec<_>>(),
        vec![250, 251, 252]
    );
    let by_bytes = log.read(0, 100, 1).unwrap();
    assert_eq!(by_bytes.len(), 1, "at least one record even past max_bytes");
    assert!(matches!(
        log.read(501, 1, 1),
        Err(ReadError::OutOfRange {
            requested: 501,
            end: 500
        })
    ));
    assert!(log.read(500, 1, 1).unwrap().is_empty());
}

fn batches_headers_timestamps(b: Backend) {
    let clock = Arc::new(ManualClock::new(100));
    let log = Log::open_with(
        b.storage.clone(),
        LogConfig {
            clock,
            ..small(Durability::Buffered)
        },
    )
    .unwrap();
    let vals: Vec<Vec<u8>> = (0..50).map(value).collect();
    let refs: Vec<&[u8]> = vals.iter().map(|v| &v[..]).collect();
    assert_eq!(log.append_batch(&refs).unwrap(), 0..50);
    let headers: [(&[u8], &[u8]); 2] = [(b"k1", b"v1"), (b"k2", b"")];
    let recs = [
        NewRecord {
            value: b"a",
            timestamp_ms: Some(1000),
            headers: &headers,
        },
        NewRecord {
            value: b"b",
            timestamp_ms: Some(900),
            headers: &[],
        },
        NewRecord {
            value: b"c",
            timestamp_ms: Some(2000),
            headers: &[],
        },
    ];
    assert_eq!(log.append_records(&recs).unwrap(), 50..53);
    assert_eq!(
        log.committed_offset(),
        0,
        "buffered records are not committed before flush"
    );
    log.flush().unwrap();
    assert_eq!(log.committed_offset(), 53);
    let got = log.read(50, 10, usize::MAX).unwrap();
    assert_eq!(got[0].timestamp_ms, 1000);
    assert_eq!(got[0].headers.len(), 2);
    assert_eq!(&got[0].headers[0].key[..], b"k1");
    assert_eq!(got[1].timestamp_ms, 900);
    assert_eq!(log.offset_for_timestamp(950).unwrap(), Some(50));
    assert_eq!(log.offset_for_timestamp(1500).unwrap(), Some(52));
    assert_eq!(log.offset_for_timestamp(5000).unwrap(), None);
    let all: Vec<u64> = log.iter(0).map(|r| r.unwrap().offset).collect();
    assert_eq!(all, (0..53).collect::<Vec<_>>());
}

fn reopen_keeps_everything(b: Backend) {
    let cfg = LogConfig {
        compression: Compression::Lz4 { min_bytes: 64 },
        ..small(Durability::Sync)
    };
    {
        let log = Log::open_with(b.storage.clone(), cfg.clone()).unwrap();
        for i in 0..300u64 {
            log.append(&value(i)).unwrap();
        }
        let many: Vec<Vec<u8>> = (0..40).map(|i| vec![b'z'; 100 + i]).collect();
        let refs: Vec<&[u8]> = many.iter().map(|v| &v[..]).collect();
        log.append_batch(&refs).unwrap();
        assert!(log.stats().compression_ratio > 1.2, "{}", log.stats());
        log.commit_group("g", 120).unwrap();
        log.close().unwrap();
    }
    let log = Log::open_with(b.storage.clone(), cfg).unwrap();
    assert!(
        log.recovery_report().is_clean(),
        "{}",
        log.recovery_report()
    );
    assert_eq!(log.committed_offset(), 340);
    let recs: Vec<_> = log.iter(0).map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 340);
    assert_eq!(&recs[299].value[..], &value(299)[..]);
    assert_eq!(recs[339].value.len(), 139);
    assert_eq!(log.group_offset("g"), Some(120));
    assert_eq!(log.append(b"more").unwrap(), 340);
}

fn groups_commit_lag_reset(b: Backend) {
    let clock = Arc::new(ManualClock::new(10_000));
    let log = Log::open_with(
        b.storage.clone(),
        LogConfig {
            clock: clock.clone(),
            ..small(Durability::Os)
        },
    )
    .unwrap();
    for i in 0..100u64 {
        clock.advance(10);
        log.append(&value(i)).unwrap();
    }
    assert_eq!(log.group_lag("g"), 100);
    log.ack_group("g", 9).unwrap();
    assert_eq!(log.group_offset("g"), Some(10));
    assert_eq!(log.group_lag("g"), 90);
    assert!(
        log.commit_group("g", 5).is_err(),
        "commits never go backwards"
    );
    assert!(
        log.commit_group("g", 101).is_err(),
        "cannot commit past the end"
    );
    assert!(log.commit_group("bad/name", 1).is_err());
    assert_eq!(log.reset_group("g", ResetTo::Earliest).unwrap(), 0);
    assert_eq!(log.reset_group("g", ResetTo::Latest).unwrap(), 100);
    assert_eq!(log.reset_group("g", ResetTo::Offset(42)).unwrap(), 42);
    assert_eq!(
        log.reset_group("g", ResetTo::Timestamp(10_000 + 10 * 31))
            .unwrap(),
        30
    );
    assert_eq!(log.groups().len(), 1);
}

fn retention_deletes_old_segments(b: Backend) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let log = Log::open_with(
        b.storage.clone(),
        LogConfig {
            clock: clock.clone(),
            ..small(Durability::Os)
        },
    )
    .unwrap();
    for i in 0..400u64 {
        log.append(&value(i)).unwrap();
    }
    let before = log.stats().segments;
    log.commit_group("slow", 10).unwrap();
    let protected = RetentionPolicy {
        max_bytes: Some(8192),
        protect_unacked: true,
        ..RetentionPolicy::default()
    };
    assert!(
        log.apply_retention(&protected)
            .unwrap()
            .deleted_segments
            .is_empty()
    );
    let capped = RetentionPolicy {
        hard_max_bytes: Some(12_000),
        ..protected
    };
    let r = capped;
    let report = log.apply_retention(&r).unwrap();
    assert!(
        report.forced >= 1 && log.size_bytes() <= 12_000 + 4096,
        "{report:?}"
    );
    assert_eq!(log.stats().retention_forced_deletions, report.forced as u64);
    assert!(matches!(
        log.read(0, 1, 1),
        Err(ReadError::Truncated { requested: 0, .. })
    ));
    let first = log.first_offset();
    assert_eq!(log.read(first, 1, 1).unwrap()[0].offset, first);
    clock.advance(3_600_000);
    let by_age = RetentionPolicy {
        max_age_ms: Some(1000),
        ..RetentionPolicy::default()
    };
    log.apply_retention(&by_age).unwrap();
    assert_eq!(
        log.stats().segments,
        1,
        "only the active segment is left (had {before})"
    );
    assert_eq!(log.append(b"after").unwrap(), 400);
}

fn rotation_by_age_and_background_retention(b: Backend) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let cfg = LogConfig {
        clock: clock.clone(),
        segment_max_bytes: 1 << 20,
        segment_max_age_ms: Some(1000),
        ..small(Durability::Os)
    };
    let log = Arc::new(Log::open_with(b.storage.clone(), cfg).unwrap());
    for i in 0..5u64 {
        log.append(&value(i)).unwrap();
        clock.advance(1500);
    }
    assert_eq!(
        log.stats().segments,
        5,
        "each append found its segment too old"
    );
    let policy = RetentionPolicy {
        max_age_ms: Some(2000),
        ..RetentionPolicy::default()
    };
    let bg = {
        let log = log.clone();
        quiver_log::RetentionThread::spawn(std::time::Duration::from_millis(5), move || {
            let _ = log.apply_retention(&policy);
        })
        .unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while log.stats().segments > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(bg);
    // Now 1_007_500: the four sealed segments' newest records are older than 2 s.
    assert_eq!(log.stats().segments, 1, "{}", log.stats());
    assert_eq!(log.first_offset(), 4);
    assert_eq!(log.stats().retention_deleted_segments, 4);
}

fn batches_appended_together(b: Backend) {
    for durability in [Durability::Os, Durability::Sync, Durability::Buffered] {
        let storage = b.storage.clone();
        let log = Log::open_with(storage, small(durability)).unwrap();
        let start = log.next_offset();
        let vals: Vec<Vec<u8>> = (0..30).map(value).collect();
        let records: Vec<NewRecord<'_>> = vals
            .iter()
            .map(|v| NewRecord {
                value: v,
                ..NewRecord::default()
            })
            .collect();
        let batches: Vec<&[NewRecord<'_>]> = records.chunks(7).collect();
        let ranges = log.append_record_batches(&batches).unwrap();
        let lens: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
        assert_eq!(lens, [7, 7, 7, 7, 2]);
        assert_eq!(ranges[0].start, start);
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        log.flush().unwrap();
        let back = log.read(start, 100, usize::MAX).unwrap();
        assert_eq!(back.len(), 30);
        assert_eq!(&back[29].value[..], &value(29)[..]);
        // A refused batch appends none of the others.
        let empty: &[NewRecord<'_>] = &[];
        let end = log.next_offset();
        assert!(log.append_record_batches(&[&records[..2], empty]).is_err());
        assert_eq!(log.next_offset(), end);
        assert!(log.append_record_batches(&[]).unwrap().is_empty());
        drop(log);
    }
}

fn retention_by_records_and_protected_offset(b: Backend) {
    let log = Log::open_with(b.storage.clone(), small(Durability::Os)).unwrap();
    for i in 0..400u64 {
        log.append(&value(i)).unwrap();
    }
    let keep_newest = RetentionPolicy {
        max_records: Some(100),
        protect_offset: Some(150),
        ..RetentionPolicy::default()
    };
    log.apply_retention(&keep_newest).unwrap();
    let first = log.first_offset();
    assert!(
        first > 0 && first <= 150,
        "protected from 150: first {first}"
    );
    let unprotected = RetentionPolicy {
        protect_offset: None,
        ..keep_newest
    };
    log.apply_retention(&unprotected).unwrap();
    let first = log.first_offset();
    assert!(
        first > 150 && first <= 300,
        "at least the newest 100 are kept: first {first}"
    );
}

macro_rules! contract {
    ($backend:ident) => {
        mod $backend {
            #[test]
            fn append_read_round_trip() {
                super::append_read_round_trip(crate::common::$backend());
            }
            #[test]
            fn batches_headers_timestamps() {
                super::batches_headers_timestamps(crate::common::$backend());
            }
            #[test]
            fn reopen_keeps_everything() {
                super::reopen_keeps_everything(crate::common::$backend());
            }
            #[test]
            fn groups_commit_lag_reset() {
                super::groups_commit_lag_reset(crate::common::$backend());
            }
            #[test]
            fn rotation_by_age_and_background_retention() {
                super::rotation_by_age_and_background_retention(crate::common::$backend());
            }
            #[test]
            fn batches_appended_together() {
                super::batches_appended_together(crate::common::$backend());
            }
            #[test]
            fn retention_by_records_and_protected_offset() {
                super::retention_by_records_and_protected_offset(crate::common::$backend());
            }
            #[test]
            fn retention_deletes_old_segments() {
                super::retention_deletes_old_segments(crate::common::$backend());
            }
        }
    };
}

contract!(memory);
contract!(file);
contract!(faulty);
