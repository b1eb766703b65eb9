//! The library side of `quiver log verify|inspect|dump`, and log sets.

use std::num::NonZeroU32;

use quiver_log::tools::{dump, inspect, verify};
use quiver_log::{Durability, Log, LogConfig, LogSet, RetentionPolicy, SetRetention, pick_shard};

use crate::common::{small, value};

#[test]
fn verify_reads_the_zeros_of_a_live_sync_log_as_the_end_of_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_max_bytes: 4 << 20,
        ..small(Durability::Sync)
    };
    let log = Log::open(dir.path(), config).unwrap();
    for i in 0..10 {
        log.append(&value(i)).unwrap();
    }
    let report = verify(dir.path()).unwrap();
    assert_eq!((report.records, report.next_offset), (10, 10));
    assert!(report.bytes < 4096, "data bytes only: {report}");
    drop(log);
    assert_eq!(verify(dir.path()).unwrap(), report);
}

#[test]
fn verify_inspect_dump_report_the_log() {
    let dir = tempfile::tempdir().unwrap();
    {
        let log = Log::open(dir.path(), small(Durability::Os)).unwrap();
        for i in 0..200 {
            log.append(&value(i)).unwrap();
        }
        log.commit_group("billing", 150).unwrap();
        let report = verify(dir.path()).unwrap();
        assert_eq!(report.records, 200, "verify works next to a live writer");
    }
    let report = verify(dir.path()).unwrap();
    assert_eq!(
        (report.records, report.next_offset, report.groups),
        (200, 200, 1)
    );
    assert!(report.to_string().starts_with("ok: "));
    let ins = inspect(dir.path()).unwrap();
    assert_eq!(ins.next_offset, 200);
    assert_eq!(ins.groups, vec![("billing".to_string(), 150)]);
    assert_eq!(
        ins.segments
            .iter()
            .map(|s| s.next_offset - s.base_offset)
            .sum::<u64>(),
        200
    );
    let text = ins.to_string();
    assert!(
        text.contains("group billing: next offset 150, lag 50"),
        "{text}"
    );
    let dumped: Vec<String> = dump(dir.path(), 10, 3)
        .unwrap()
        .map(|r| r.unwrap().to_string())
        .collect();
    assert_eq!(dumped.len(), 3);
    assert!(
        dumped[0].starts_with("10 ts=") && dumped[0].contains("record-10-"),
        "{}",
        dumped[0]
    );
    std::fs::write(dir.path().join("billing.group"), b"garbage").unwrap();
    let err = verify(dir.path()).unwrap_err();
    assert!(
        err.to_string().starts_with("billing.group at byte 0"),
        "{err}"
    );
}

#[test]
fn log_set_names_shards_and_total_retention() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = LogConfig {
        ..small(Durability::Os)
    };
    {
        let set = LogSet::open(dir.path(), cfg.clone()).unwrap();
        let n = NonZeroU32::new(4).unwrap();
        for i in 0..400u64 {
            let key = format!("key-{i}");
            let log = set.shard("orders", key.as_bytes(), n).unwrap();
            log.append(&value(i)).unwrap();
        }
        assert_eq!(set.names().len(), 4);
        assert!(
            set.names()
                .contains(&format!("orders-{}", pick_shard(b"key-0", n)))
        );
        assert!(set.log("bad/name").is_err());
        let before: u64 = set
            .names()
            .iter()
            .map(|n| set.log(n).unwrap().size_bytes())
            .sum();
        let policy = SetRetention {
            per_log: RetentionPolicy::default(),
            max_total_bytes: Some(before / 2),
        };
        let report = set.apply_retention(&policy).unwrap();
        assert!(!report.deleted_segments.is_empty());
        let after: u64 = set
            .names()
            .iter()
            .map(|n| set.log(n).unwrap().size_bytes())
            .sum();
        assert!(after <= before / 2 + 4 * 4096, "{after} vs {before}");
    }
    let set = LogSet::open(dir.path(), cfg).unwrap();
    assert_eq!(set.names().len(), 4, "logs are found again on open");
}
