#![no_main]
//! Feeds arbitrary bytes to the append-only file's record reader, as one record and as a
//! sequence of records (split where a byte of the input says). Each must be applied or
//! refused with an error, never panic; a key a record wrote must journal to a record that
//! replays to the same value.

use libfuzzer_sys::fuzz_target;
use quiver_cache::{CacheConfig, Keyspace};

const NOW_MS: u64 = 1_700_000_000_000;

fuzz_target!(|data: &[u8]| {
    let ks = Keyspace::new(CacheConfig::default()).expect("a keyspace");
    ks.set_change_feed(true);
    let _ = ks.replay_journal(data, NOW_MS);
    for record in data.split(|b| *b == 0xA5) {
        let _ = ks.replay_journal(record, NOW_MS);
    }
    let changes = ks.take_changes();
    let mut records = Vec::new();
    ks.journal_changes(&changes, NOW_MS, &mut records)
        .expect("no shard is held");
    let replica = Keyspace::new(CacheConfig::default()).expect("a keyspace");
    for record in &records {
        replica
            .replay_journal(record, NOW_MS)
            .expect("a journaled record replays");
    }
    for db in 0..ks.databases() {
        let (mut a, mut b) = (ks.db(db).unwrap(), replica.db(db).unwrap());
        for key in a.keys(b"*", NOW_MS) {
            assert_eq!(a.dump(&key, NOW_MS), b.dump(&key, NOW_MS));
        }
    }
});
