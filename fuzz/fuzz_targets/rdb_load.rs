#![no_main]
//! Feeds arbitrary bytes to the two RDB readers: as a RESTORE payload (its version and
//! CRC64 footer made right, so the value is what gets parsed) and as a snapshot file after
//! a valid header, cut into chunks at a place the input chooses. Both must accept or
//! refuse with an error, never panic; a value RESTORE accepts must DUMP to a payload that
//! RESTOREs to the same DUMP.

use libfuzzer_sys::fuzz_target;
use quiver_cache::rdb::{self, RestoreOptions};
use quiver_cache::{CacheConfig, Keyspace};

const NOW_MS: u64 = 1_700_000_000_000;

fuzz_target!(|data: &[u8]| {
    let ks = Keyspace::new(CacheConfig::default()).expect("a keyspace");
    let mut db = ks.db(0).expect("database 0");
    let mut payload = data.to_vec();
    payload.extend_from_slice(&rdb::RDB_VERSION.to_le_bytes());
    let crc = rdb::crc64(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    let replace = RestoreOptions {
        replace: true,
        ..RestoreOptions::default()
    };
    if db.restore(b"k", b"0", &payload, replace, NOW_MS).is_ok() {
        let dumped = db.dump(b"k", NOW_MS).expect("the restored key");
        db.restore(b"k2", b"0", &dumped, replace, NOW_MS)
            .expect("a dump restores");
        assert_eq!(db.dump(b"k2", NOW_MS), Some(dumped));
    }

    let mut file = b"REDIS0010".to_vec();
    file.extend_from_slice(data);
    let cut = data.first().map_or(0, |b| usize::from(*b)).min(file.len());
    let ks = Keyspace::new(CacheConfig::default()).expect("a keyspace");
    let mut loader = rdb::SnapshotLoader::new();
    if loader.feed(&ks, &file[..cut], NOW_MS).is_ok()
        && loader.feed(&ks, &file[cut..], NOW_MS).is_ok()
    {
        let _ = loader.finish(&ks, NOW_MS);
    }
});
