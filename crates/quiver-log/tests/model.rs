//! Model-based property test: random operations and random crash points on the faulty
//! backend, checked against a `Vec` of what was appended and what was acknowledged.

use std::sync::Arc;

use proptest::prelude::*;
use quiver_log::storage::{CrashMode, FaultyStorage, Storage};
use quiver_log::{Compression, Durability, Log, LogConfig};

#[derive(Clone, Debug)]
enum Op {
    Append(Vec<Vec<u8>>),
    Sync,
    Flush,
    CommitGroup(u8),
    Crash(CrashMode),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..6).prop_map(Op::Append),
        1 => Just(Op::Sync),
        1 => Just(Op::Flush),
        1 => any::<u8>().prop_map(Op::CommitGroup),
        1 => prop_oneof![
            Just(CrashMode::DropUnsynced),
            Just(CrashMode::KeepWritten),
            (0usize..400).prop_map(CrashMode::TearUnsynced),
        ].prop_map(Op::Crash),
        1 => Just(Op::Reopen),
    ]
}

fn durability() -> impl Strategy<Value = Durability> {
    prop_oneof![
        Just(Durability::Sync),
        Just(Durability::Os),
        Just(Durability::Buffered)
    ]
}

struct Model {
    /// Every record of the current history, by offset.
    appended: Vec<Vec<u8>>,
    /// Records that must survive a power loss.
    durable: usize,
    /// Records that must survive a process crash.
    written: usize,
    group: u64,
}

fn config(d: Durability) -> LogConfig {
    LogConfig {
        durability: d,
        segment_max_bytes: 4096,
        index_interval_bytes: 200,
        write_buffer_bytes: 1024,
        compression: Compression::Lz4 { min_bytes: 256 },
        ..LogConfig::default()
    }
}

fn open(s: &FaultyStorage, d: Durability) -> Log {
    Log::open_with(Arc::new(s.clone()) as Arc<dyn Storage>, config(d))
        .expect("recovery after a crash never fails")
}

fn check_recovered(log: &Log, m: &mut Model, lower_bound: usize) {
    let n = log.committed_offset() as usize;
    assert!(
        n >= lower_bound,
        "lost acknowledged records: have {n}, need {lower_bound}"
    );
    assert!(
        n <= m.appended.len(),
        "records that were never appended: {n} > {}",
        m.appended.len()
    );
    let got: Vec<_> = log.iter(0).map(|r| r.expect("readable")).collect();
    assert_eq!(got.len(), n);
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.offset, i as u64, "dense, ordered offsets");
        assert_eq!(
            &r.value[..],
            &m.appended[i][..],
            "record {i} byte-identical"
        );
    }
    m.appended.truncate(n);
    m.durable = m.durable.min(n);
    m.written = n;
    let g = log.group_offset("g").unwrap_or(0);
    assert!(
        g >= m.group,
        "group offset went backwards: {g} < {}",
        m.group
    );
    m.group = g;
}

fn run(d: Durability, ops: Vec<Op>) {
    let s = FaultyStorage::new();
    let mut log = open(&s, d);
    let mut m = Model {
        appended: Vec::new(),
        durable: 0,
        written: 0,
        group: 0,
    };
    for op in ops {
        match op {
            Op::Append(values) => {
                let refs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
                let range = log.append_batch(&refs).expect("append");
                assert_eq!(range.start as usize, m.appended.len());
                m.appended.extend(values);
                match d {
                    Durability::Sync => m.durable = m.appended.len(),
                    Durability::Os => m.written = m.appended.len(),
                    _ => {}
                }
            }
            Op::Sync => {
                log.sync().expect("sync");
                m.durable = m.appended.len();
                m.written = m.appended.len();
            }
            Op::Flush => {
                log.flush().expect("flush");
                m.written = m.written.max(log.committed_offset() as usize);
            }
            Op::CommitGroup(x) => {
                // Any committed offset may be committed by a group; doing so makes the
                // records below it durable.
                let target = (m.group + u64::from(x)).min(log.committed_offset());
                if target >= m.group {
                    log.commit_group("g", target).expect("commit");
                    m.group = target;
                    m.durable = m.durable.max(target as usize);
                }
            }
            Op::Crash(mode) => {
                s.crash(mode);
                drop(log);
                log = open(&s, d);
                let bound = if mode == CrashMode::KeepWritten {
                    m.written.max(m.durable)
                } else {
                    m.durable
                };
                check_recovered(&log, &mut m, bound);
            }
            Op::Reopen => {
                drop(log);
                log = open(&s, d);
                let all = m.appended.len();
                check_recovered(&log, &mut m, all);
                m.durable = m.appended.len();
            }
        }
    }
    s.crash(CrashMode::DropUnsynced);
    drop(log);
    let log = open(&s, d);
    let durable = m.durable;
    check_recovered(&log, &mut m, durable);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn crashes_never_lose_acknowledged_records(d in durability(), ops in prop::collection::vec(op(), 1..40)) {
        run(d, ops);
    }
}
