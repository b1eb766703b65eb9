#![no_main]
//! Feeds arbitrary bytes as segment and index files to log recovery, then reads and
//! verifies whatever recovery accepted: it must never panic and never loop.

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use quiver_log::storage::{MemoryStorage, Storage};
use quiver_log::{Log, LogConfig, RecoveryMode};

/// Splits the input into up to four files: two segments and their indexes.
fn files(data: &[u8]) -> Vec<(&'static str, &[u8])> {
    const NAMES: [&str; 4] = [
        "00000000000000000000.log",
        "00000000000000000000.idx",
        "00000000000000000010.log",
        "00000000000000000010.idx",
    ];
    let mut out = Vec::new();
    let mut rest = data;
    for name in NAMES {
        if rest.len() < 2 {
            break;
        }
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        out.push((name, &rest[2..2 + len]));
        rest = &rest[2 + len..];
    }
    out
}

fuzz_target!(|data: &[u8]| {
    for mode in [RecoveryMode::Strict, RecoveryMode::Salvage] {
        let storage = MemoryStorage::new();
        for (name, bytes) in files(data) {
            let f = storage
                .open(name, true)
                .expect("memory storage creates files");
            f.write_at(0, bytes).expect("memory storage writes");
        }
        let storage: Arc<dyn Storage> = Arc::new(storage);
        let _ = quiver_log::tools::verify_storage(storage.clone());
        let config = LogConfig {
            recovery: mode,
            segment_max_bytes: 1 << 20,
            ..LogConfig::default()
        };
        if let Ok(log) = Log::open_with(storage.clone(), config) {
            let end = log.committed_offset();
            let mut n = 0u64;
            for r in log.iter(log.first_offset()) {
                if r.is_err() {
                    break;
                }
                n += 1;
                assert!(n <= end, "iterator must end at the committed offset");
            }
            let _ = log.offset_for_timestamp(0);
            let _ = log.append(b"after recovery");
        }
    }
});
