#![no_main]
//! Feeds arbitrary bytes as the body of a FUNCTION RESTORE payload (the version and
//! CRC64 footer made right, so the body is what gets parsed): RDB strings in every
//! encoding (LZF included), then each library's code loaded into the Lua sandbox with
//! its time limit. The engine must accept or refuse it with an error, never panic, and
//! a refused payload must leave the loaded libraries as they were.

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use quiver_core::cache::rdb;
use quiver_server::resp::script::{RestorePolicy, Scripts};

fn scripts() -> &'static Scripts {
    static SCRIPTS: OnceLock<Scripts> = OnceLock::new();
    SCRIPTS.get_or_init(|| {
        let cache = quiver_core::cache::Cache::new(Default::default()).expect("a cache");
        Scripts::new(Arc::new(cache), 5_000)
    })
}

fuzz_target!(|data: &[u8]| {
    let mut payload = data.to_vec();
    payload.extend_from_slice(&10u16.to_le_bytes());
    let crc = rdb::crc64(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    let scripts = scripts();
    let before = scripts.library_count();
    if scripts.restore(&payload, RestorePolicy::Append).is_err() {
        assert_eq!(scripts.library_count(), before);
    }
    // The strings alone, as a loader of other payloads would read them.
    let mut pos = 0;
    while pos < data.len() && rdb::read_string_at(data, &mut pos).is_ok() {}
});
