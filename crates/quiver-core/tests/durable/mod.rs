//! Durable streams through the public API: stored messages, acks, restarts, start
//! positions and the hand-over from history to live delivery, retention, deletion,
//! de-duplication.

mod groups;
mod handover;
mod queue_groups;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use quiver_core::streams::durable::{
    Durability, DurableConfig, DurableRule, Retention, StorageConfig,
};
use quiver_core::streams::{
    Ack, Broker, BrokerConfig, CreateStreamError, Delivery, EndReason, Header, ManualClock,
    Message, Pattern, PublishError, StartAt, StreamConfig, StreamName, SubscribeError,
    SubscribeOptions, Subscription,
};

pub fn name(text: &str) -> StreamName {
    StreamName::new(text).unwrap()
}

pub fn open(dir: &std::path::Path) -> Broker {
    open_with(dir, |_| {})
}

pub fn open_with(dir: &std::path::Path, adjust: impl FnOnce(&mut StorageConfig)) -> Broker {
    let mut storage = StorageConfig::new(dir);
    adjust(&mut storage);
    Broker::open(BrokerConfig::default(), storage).unwrap().0
}

pub fn durable(durability: Durability) -> StreamConfig {
    StreamConfig {
        durable: Some(DurableConfig {
            durability,
            ..DurableConfig::default()
        }),
        ..StreamConfig::default()
    }
}

pub fn numbered(start: u64, count: u64) -> Vec<Message> {
    (start..start + count)
        .map(|i| Message::new(Bytes::from(i.to_string())))
        .collect()
}

pub fn number(payload: &Bytes) -> u64 {
    std::str::from_utf8(payload).unwrap().parse().unwrap()
}

/// Receives until `want` events arrived (or a notice that is not a batch); returns the
/// (sequence, number) of every event and the notices.
pub async fn collect(sub: &mut Subscription, want: usize) -> (Vec<(u64, u64)>, Vec<Delivery>) {
    let mut events = Vec::new();
    let mut notices = Vec::new();
    while events.len() < want {
        let delivery = tokio::time::timeout(Duration::from_secs(10), sub.recv())
            .await
            .expect("a delivery within 10 s");
        match delivery {
            Delivery::Batch(batch) => {
                events.extend(batch.iter().map(|(seq, e)| (seq, number(&e.payload))));
            }
            Delivery::Ended(_) => {
                notices.push(delivery);
                break;
            }
            other => notices.push(other),
        }
    }
    (events, notices)
}

#[tokio::test]
async fn committed_messages_survive_a_restart_with_offsets_headers_and_times() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let stream = name("acme/orders/created");
    {
        let (broker, report) = Broker::open_with_clock(
            BrokerConfig::default(),
            StorageConfig::new(dir.path()),
            clock.clone(),
        )
        .unwrap();
        assert_eq!(report.streams, 0);
        let handle = broker
            .create_stream(&stream, durable(Durability::Sync))
            .unwrap();
        let receipt = handle
            .publish(numbered(0, 3), Ack::Committed, None)
            .await
            .unwrap();
        assert_eq!((receipt.first_sequence, receipt.count), (0, 3));
        clock.set_unix_ms(1_700_000_000_500);
        let with_header = Message {
            payload: Bytes::from("3"),
            headers: vec![Header {
                key: Bytes::from("kind"),
                value: Bytes::from("refund"),
            }],
        };
        let receipt = handle
            .publish(vec![with_header], Ack::Committed, None)
            .await
            .unwrap();
        assert_eq!(receipt.first_sequence, 3);
        broker.close();
    }
    let (broker, report) = Broker::open_with_clock(
        BrokerConfig::default(),
        StorageConfig::new(dir.path()),
        clock.clone(),
    )
    .unwrap();
    assert_eq!((report.streams, report.durable), (1, 1));
    let info = broker.describe(&stream).unwrap();
    let stored = info.durable.unwrap();
    assert_eq!((stored.first_offset, stored.next_offset), (0, 4));
    assert_eq!(stored.durability, Durability::Sync);
    let mut sub = broker
        .subscribe(
            Pattern::new(stream.as_str()).unwrap(),
            SubscribeOptions {
                start: StartAt::Earliest,
                ..SubscribeOptions::default()
            },
        )
        .unwrap();
    let Delivery::Batch(batch) = sub.recv().await else {
        panic!("history first");
    };
    let events: Vec<_> = batch.iter().collect();
    assert_eq!(events.len(), 4);
    assert_eq!(events[0].1.timestamp_ms, 1_700_000_000_000);
    assert_eq!(events[3].1.timestamp_ms, 1_700_000_000_500);
    assert_eq!(&events[3].1.headers[0].value[..], b"refund");
    // Live messages continue the offsets.
    let receipt = broker
        .publish(&stream, numbered(4, 1), Ack::Committed, None)
        .await
        .unwrap();
    assert_eq!(receipt.first_sequence, 4);
    let (events, _) = collect(&mut sub, 1).await;
    assert_eq!(events, [(4, 4)]);
}

#[tokio::test]
async fn every_durability_acks_committed_and_live_streams_refuse_it() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    for (i, durability) in [
        Durability::Buffered,
        Durability::Os,
        Durability::Interval { interval_ms: 5 },
        Durability::Sync,
    ]
    .into_iter()
    .enumerate()
    {
        let stream = name(&format!("acme/modes/m{i}"));
        let handle = broker.create_stream(&stream, durable(durability)).unwrap();
        for round in 0..3 {
            let receipt = handle
                .publish(numbered(round * 10, 10), Ack::Committed, None)
                .await
                .unwrap();
            assert_eq!(receipt.first_sequence, round * 10);
        }
        let accepted = handle
            .publish(numbered(30, 1), Ack::Accepted, None)
            .await
            .unwrap();
        assert_eq!(accepted.first_sequence, 30);
    }
    let live = name("acme/modes/live");
    let err = broker
        .publish(&live, numbered(0, 1), Ack::Committed, None)
        .await
        .unwrap_err();
    assert!(matches!(err, PublishError::NotDurable { .. }), "{err}");
    let memory_only = Broker::new(BrokerConfig::default());
    let err = memory_only
        .create_stream(&name("a/b/c"), durable(Durability::Os))
        .unwrap_err();
    assert!(matches!(err, CreateStreamError::NoStorage { .. }), "{err}");
}

#[tokio::test]
async fn concurrent_sync_publishers_share_fsyncs_and_get_distinct_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/jobs/sync");
    broker
        .create_stream(&stream, durable(Durability::Sync))
        .unwrap();
    let mut tasks = Vec::new();
    for publisher in 0..16u64 {
        let broker = broker.clone();
        let stream = stream.clone();
        tasks.push(tokio::spawn(async move {
            let mut offsets = Vec::new();
            for i in 0..20 {
                let receipt = broker
                    .publish(
                        &stream,
                        numbered(publisher * 1000 + i, 1),
                        Ack::Committed,
                        None,
                    )
                    .await
                    .unwrap();
                offsets.push(receipt.first_sequence);
            }
            offsets
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        let offsets = task.await.unwrap();
        assert!(
            offsets.windows(2).all(|w| w[0] < w[1]),
            "per publisher in order"
        );
        all.extend(offsets);
    }
    all.sort_unstable();
    assert_eq!(all, (0..320).collect::<Vec<_>>());
    let stats = broker.describe(&stream).unwrap().durable.unwrap();
    assert_eq!(stats.appended, 320);
    assert!(
        stats.log.fsyncs <= stats.append_rounds + 2,
        "one fsync per round: {stats:?}"
    );
}

#[tokio::test]
async fn retried_message_ids_are_stored_once_even_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let stream = name("acme/pay/requests");
    let with_id = |id: &str, n: u64| Message {
        payload: Bytes::from(n.to_string()),
        headers: vec![Header {
            key: Bytes::from("Quiver-Msg-Id"),
            value: Bytes::from(id.to_owned()),
        }],
    };
    {
        let broker = open(dir.path());
        let handle = broker
            .create_stream(&stream, durable(Durability::Os))
            .unwrap();
        let first = handle
            .publish(
                vec![with_id("p-1", 0), with_id("p-2", 1)],
                Ack::Committed,
                None,
            )
            .await
            .unwrap();
        assert_eq!(
            (first.first_sequence, first.count, first.duplicates),
            (0, 2, 0)
        );
        let again = handle
            .publish(vec![with_id("p-2", 1)], Ack::Committed, None)
            .await
            .unwrap();
        assert_eq!(
            (again.first_sequence, again.count, again.duplicates),
            (1, 1, 1)
        );
        let mixed = handle
            .publish(
                vec![with_id("p-1", 0), with_id("p-3", 2)],
                Ack::Committed,
                None,
            )
            .await
            .unwrap();
        assert_eq!(
            (mixed.first_sequence, mixed.count, mixed.duplicates),
            (2, 1, 1)
        );
        broker.close();
    }
    let broker = open(dir.path());
    let retry = broker
        .publish(&stream, vec![with_id("p-3", 2)], Ack::Committed, None)
        .await
        .unwrap();
    assert_eq!((retry.first_sequence, retry.duplicates), (2, 1));
    let stats = broker.describe(&stream).unwrap().durable.unwrap();
    assert_eq!(stats.next_offset, 3, "three distinct messages stored");
    // An id twice in one call: stored once.
    let twice = broker
        .publish(
            &stream,
            vec![with_id("p-4", 3), with_id("p-4", 3)],
            Ack::Committed,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        (twice.first_sequence, twice.count, twice.duplicates),
        (3, 1, 1)
    );
    // Repeats whose originals do not follow each other: only the first is named.
    let scattered = broker
        .publish(
            &stream,
            vec![with_id("p-2", 1), with_id("p-4", 3)],
            Ack::Committed,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        (
            scattered.first_sequence,
            scattered.count,
            scattered.duplicates
        ),
        (1, 1, 2)
    );
    let stats = broker.describe(&stream).unwrap().durable.unwrap();
    assert_eq!(stats.next_offset, 4);
    // An id over 128 bytes could not be remembered: refused, not stored unchecked.
    let long = "x".repeat(129);
    let refused = broker
        .publish(&stream, vec![with_id(&long, 9)], Ack::Committed, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            quiver_core::streams::PublishError::MsgIdTooLong { bytes: 129, .. }
        ),
        "{refused}"
    );
}

#[tokio::test]
async fn start_positions_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000));
    let (broker, _) = Broker::open_with_clock(
        BrokerConfig::default(),
        StorageConfig::new(dir.path()),
        clock.clone(),
    )
    .unwrap();
    let stream = name("acme/audit/log");
    let handle = broker
        .create_stream(&stream, durable(Durability::Os))
        .unwrap();
    for i in 0..10 {
        clock.set_unix_ms(1_000 + i * 100);
        handle
            .publish(numbered(i, 1), Ack::Committed, None)
            .await
            .unwrap();
    }
    let from = |start| SubscribeOptions {
        start,
        ..SubscribeOptions::default()
    };
    let exact = Pattern::new(stream.as_str()).unwrap();
    let mut at_offset = broker
        .subscribe(exact.clone(), from(StartAt::Offset(7)))
        .unwrap();
    assert_eq!(collect(&mut at_offset, 3).await.0, [(7, 7), (8, 8), (9, 9)]);
    let mut at_time = broker
        .subscribe(exact.clone(), from(StartAt::TimestampMs(1_450)))
        .unwrap();
    assert_eq!(collect(&mut at_time, 5).await.0[0], (5, 5));
    let mut at_end = broker
        .subscribe(exact.clone(), from(StartAt::Offset(10)))
        .unwrap();
    let mut latest = broker
        .subscribe(exact.clone(), from(StartAt::Latest))
        .unwrap();
    let mut all = broker
        .subscribe(Pattern::new("acme/>").unwrap(), from(StartAt::Earliest))
        .unwrap();
    handle
        .publish(numbered(10, 1), Ack::Committed, None)
        .await
        .unwrap();
    assert_eq!(collect(&mut at_end, 1).await.0, [(10, 10)]);
    assert_eq!(collect(&mut latest, 1).await.0, [(10, 10)]);
    let (events, _) = collect(&mut all, 11).await;
    assert_eq!(events, (0..11).map(|i| (i, i)).collect::<Vec<_>>());
    let err = broker
        .subscribe(exact.clone(), from(StartAt::Offset(12)))
        .unwrap_err();
    assert!(
        matches!(err, SubscribeError::PastEnd { end: 11, .. }),
        "{err}"
    );
    let err = broker
        .subscribe(Pattern::new("acme/>").unwrap(), from(StartAt::Offset(1)))
        .unwrap_err();
    assert!(
        matches!(err, SubscribeError::OffsetNeedsStream { .. }),
        "{err}"
    );
    broker
        .publish(&name("acme/live/x"), numbered(0, 1), Ack::Accepted, None)
        .await
        .unwrap();
    let err = broker
        .subscribe(
            Pattern::new("acme/live/x").unwrap(),
            from(StartAt::Earliest),
        )
        .unwrap_err();
    assert!(matches!(err, SubscribeError::NotDurable { .. }), "{err}");
}

#[tokio::test]
async fn retention_by_count_and_a_reader_told_where_the_stream_starts() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open_with(dir.path(), |s| s.segment_bytes = 64 << 10);
    let stream = name("acme/metrics/cpu");
    let mut config = durable(Durability::Os);
    config.durable.as_mut().unwrap().retention = Retention {
        max_messages: Some(100),
        ..Retention::default()
    };
    let handle = broker.create_stream(&stream, config).unwrap();
    for round in 0..10 {
        handle
            .publish(numbered(round * 100, 100), Ack::Committed, None)
            .await
            .unwrap();
    }
    let stats = broker.describe(&stream).unwrap().durable.unwrap();
    assert_eq!((stats.first_offset, stats.stored_messages), (900, 100));
    let mut sub = broker
        .subscribe(
            Pattern::new(stream.as_str()).unwrap(),
            SubscribeOptions {
                start: StartAt::Offset(850),
                ..SubscribeOptions::default()
            },
        )
        .unwrap();
    let (events, notices) = collect(&mut sub, 100).await;
    assert!(
        matches!(notices[..], [Delivery::Lag { missed: 50 }]),
        "{notices:?}"
    );
    assert_eq!(events.first(), Some(&(900, 900)));
    broker.apply_retention().await;
    assert_eq!(
        broker
            .describe(&stream)
            .unwrap()
            .durable
            .unwrap()
            .first_offset,
        900
    );
}

#[tokio::test]
async fn deleting_a_stream_ends_its_subscribers_and_removes_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/tmp/scratch");
    broker
        .create_stream(&stream, durable(Durability::Os))
        .unwrap()
        .publish(numbered(0, 5), Ack::Committed, None)
        .await
        .unwrap();
    let mut exact = broker
        .subscribe(
            Pattern::new(stream.as_str()).unwrap(),
            SubscribeOptions::default(),
        )
        .unwrap();
    let log_dir = dir.path().join("streams/acme/tmp/scratch");
    assert!(log_dir.is_dir());
    broker.delete_stream(&stream).unwrap();
    assert!(!log_dir.exists());
    assert!(matches!(
        exact.recv().await,
        Delivery::Ended(EndReason::StreamDeleted { .. })
    ));
    assert!(broker.describe(&stream).is_none());
    let again = broker
        .create_stream(&stream, durable(Durability::Os))
        .unwrap();
    let receipt = again
        .publish(numbered(0, 1), Ack::Committed, None)
        .await
        .unwrap();
    assert_eq!(receipt.first_sequence, 0, "a new stream starts empty");
    drop((again, exact));
    broker.close();
    drop(broker);
    let reopened = open(dir.path());
    assert_eq!(reopened.list_streams().len(), 1);
}

#[tokio::test]
async fn rules_make_streams_durable_by_name_and_live_definitions_survive() {
    let dir = tempfile::tempdir().unwrap();
    let rules = |s: &mut StorageConfig| {
        s.rules = vec![DurableRule {
            pattern: Pattern::new("acme/orders/>").unwrap(),
            config: DurableConfig::default(),
        }]
    };
    {
        let broker = open_with(dir.path(), rules);
        broker
            .publish(
                &name("acme/orders/eu/created"),
                numbered(0, 2),
                Ack::Committed,
                None,
            )
            .await
            .unwrap();
        let err = broker
            .publish(&name("acme/other/x"), numbered(0, 1), Ack::Committed, None)
            .await
            .unwrap_err();
        assert!(matches!(err, PublishError::NotDurable { .. }));
        broker
            .create_stream(&name("acme/live/ticks"), StreamConfig::default())
            .unwrap();
        broker.close();
    }
    assert!(dir.path().join("streams/acme/orders/eu~created").is_dir());
    let broker = open_with(dir.path(), rules);
    let names: Vec<String> = broker
        .list_streams()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(names, ["acme/live/ticks", "acme/orders/eu/created"]);
    let info = broker.describe(&name("acme/orders/eu/created")).unwrap();
    assert_eq!(info.durable.unwrap().next_offset, 2);
}

#[tokio::test]
async fn a_damaged_log_stops_start_up_with_its_name_and_orphans_are_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let stream = name("acme/ledger/entries");
    {
        let broker = open(dir.path());
        let handle = broker
            .create_stream(&stream, durable(Durability::Sync))
            .unwrap();
        for i in 0..50 {
            handle
                .publish(numbered(i, 1), Ack::Committed, None)
                .await
                .unwrap();
        }
        broker.close();
    }
    let orphan = dir.path().join("streams/acme/ghost/stream");
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("note"), b"left behind").unwrap();
    let log_dir = dir.path().join("streams/acme/ledger/entries");
    let segment = std::fs::read_dir(&log_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .expect("a segment file");
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    let err = Broker::open(BrokerConfig::default(), StorageConfig::new(dir.path())).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("acme/ledger/entries"), "{text}");
    assert!(text.contains("corruption"), "{text}");
    // Salvage keeps what is before the damage.
    let (broker, report) = Broker::open(BrokerConfig::default(), {
        let mut storage = StorageConfig::new(dir.path());
        storage.recovery = quiver_core::streams::durable::RecoveryMode::Salvage;
        storage
    })
    .unwrap();
    assert_eq!(report.orphaned.len(), 1);
    assert!(
        report.orphaned[0]
            .1
            .starts_with(dir.path().join("streams/.orphaned"))
    );
    assert!(broker.describe(&stream).is_some());
}
