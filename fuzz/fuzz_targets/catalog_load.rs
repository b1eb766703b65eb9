#![no_main]
//! Feeds arbitrary bytes as the catalog files of a data directory (a stream definition and
//! a consumer group's state) to `Broker::open`: start-up must accept them or refuse them
//! with an error, never panic.

use libfuzzer_sys::fuzz_target;
use quiver_core::streams::durable::StorageConfig;
use quiver_core::streams::{Broker, BrokerConfig};

fuzz_target!(|data: &[u8]| {
    // The first two bytes (little-endian) say how many of the rest are the stream file.
    let (head, rest) = data.split_at(data.len().min(2));
    let mut len = [0u8; 2];
    len[..head.len()].copy_from_slice(head);
    let (stream_file, group_file) =
        rest.split_at(usize::from(u16::from_le_bytes(len)).min(rest.len()));
    let Ok(dir) = tempfile::tempdir() else { return };
    let catalog = dir.path().join("catalog");
    let (streams, groups) = (catalog.join("streams"), catalog.join("groups"));
    if std::fs::create_dir_all(&streams).is_err() || std::fs::create_dir_all(&groups).is_err() {
        return;
    }
    let _ = std::fs::write(streams.join("acme~orders~created.stream"), stream_file);
    let _ = std::fs::write(groups.join("acme~orders~created@billing.group"), group_file);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        if let Ok((broker, _)) =
            Broker::open(BrokerConfig::default(), StorageConfig::new(dir.path()))
        {
            let _ = broker.list_streams();
            broker.close();
        }
    });
});
