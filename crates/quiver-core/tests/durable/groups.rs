//! Consumer groups through the broker: sharing, acks, redelivery after the ack wait and
//! after a restart, nacks, dead letters, resets, patterns, retention that waits for groups.

use std::collections::BTreeSet;
use std::time::Duration;

use quiver_core::streams::durable::{Durability, Retention};
use quiver_core::streams::groups::{DEAD_GROUP_HEADER, DELIVERY_COUNT_HEADER};
use quiver_core::streams::{
    Ack, Delivery, GroupBatch, GroupConfig, GroupDelivery, GroupError, GroupMember, JoinOptions,
    Pattern, StartAt, StreamName, SubscribeOptions,
};

use super::{durable, name, number, numbered, open, open_with};

fn config(ack_wait_ms: u64, max_deliveries: u32, max_in_flight: u32) -> GroupConfig {
    GroupConfig {
        ack_wait: Duration::from_millis(ack_wait_ms),
        max_deliveries,
        max_in_flight,
        dead_letter: None,
    }
}

fn join(
    broker: &quiver_core::streams::Broker,
    pattern: &str,
    member: &str,
    group: GroupConfig,
) -> GroupMember {
    broker
        .join_group(
            Pattern::new(pattern).unwrap(),
            "workers",
            JoinOptions {
                member: member.to_owned(),
                create: Some(group),
                ..JoinOptions::default()
            },
        )
        .unwrap()
}

async fn next_batch(member: &mut GroupMember) -> GroupBatch {
    match tokio::time::timeout(Duration::from_secs(10), member.recv())
        .await
        .expect("a delivery within 10 s")
    {
        GroupDelivery::Batch(batch) => batch,
        GroupDelivery::Ended(reason) => panic!("ended: {reason}"),
    }
}

fn offsets(batch: &GroupBatch) -> Vec<u64> {
    batch.events.iter().map(|e| e.offset).collect()
}

#[tokio::test]
async fn members_share_ack_and_the_group_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/jobs/resize");
    let handle = broker
        .create_stream(&stream, durable(Durability::Os))
        .unwrap();
    handle
        .publish(numbered(0, 100), Ack::Committed, None)
        .await
        .unwrap();
    let mut a = join(&broker, stream.as_str(), "a", config(30_000, 5, 10));
    let mut b = join(&broker, stream.as_str(), "b", config(30_000, 5, 10));
    let mut seen = BTreeSet::new();
    while seen.len() < 100 {
        for member in [&mut a, &mut b] {
            if let Some(GroupDelivery::Batch(batch)) = member.try_recv() {
                let got = offsets(&batch);
                assert!(got.len() <= 10, "max in flight: {got:?}");
                assert!(
                    got.iter().all(|o| seen.insert(*o)),
                    "each message to one member"
                );
                assert_eq!(member.ack(&stream, &got).unwrap(), got.len() as u64);
            }
        }
        tokio::task::yield_now().await;
    }
    let info = broker.group_info(&stream, "workers").unwrap();
    assert_eq!(
        (info.acked, info.pending, info.lag, info.floor),
        (100, 0, 0, 100)
    );
    assert_eq!(info.members.len(), 2);
    assert!(
        info.members.iter().all(|m| m.acked > 0),
        "both worked: {info:?}"
    );
    let err = a.ack(&stream, &[3]).unwrap_err();
    assert!(
        matches!(err, GroupError::NotHeld { offset: 3, .. }),
        "{err}"
    );
    let other = name("acme/jobs/other");
    assert!(matches!(
        a.ack(&other, &[0]).unwrap_err(),
        GroupError::NotMember { .. }
    ));
}

#[tokio::test]
async fn unacked_messages_come_back_after_the_ack_wait_and_late_acks_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/jobs/slow");
    broker
        .create_stream(&stream, durable(Durability::Os))
        .unwrap()
        .publish(numbered(0, 3), Ack::Committed, None)
        .await
        .unwrap();
    let mut slow = join(&broker, stream.as_str(), "slow", config(50, 0, 10));
    let first = next_batch(&mut slow).await;
    assert_eq!(offsets(&first), [0, 1, 2]);
    assert!(first.events.iter().all(|e| e.deliveries == 1));
    let again = next_batch(&mut slow).await;
    assert_eq!(offsets(&again), [0, 1, 2]);
    assert!(again.events.iter().all(|e| e.deliveries == 2));
    assert_eq!(slow.ack(&stream, &[0, 1, 2]).unwrap(), 3);
    let info = broker.group_info(&stream, "workers").unwrap();
    assert_eq!((info.redelivered, info.pending), (3, 0));
}

/// A `buffered` log keeps its newest records in memory: a group reads them anyway, its
/// dead letters are stored, and the counts include them.
#[tokio::test]
async fn a_group_of_a_buffered_stream_gets_what_the_log_still_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/jobs/buffered");
    broker
        .create_stream(&stream, durable(Durability::Buffered))
        .unwrap()
        .publish(numbered(0, 3), Ack::Committed, None)
        .await
        .unwrap();
    let mut worker = join(&broker, stream.as_str(), "w", config(50, 2, 10));
    assert_eq!(offsets(&next_batch(&mut worker).await), [0, 1, 2]);
    worker.ack(&stream, &[0, 1]).unwrap();
    let info = broker.group_info(&stream, "workers").unwrap();
    assert_eq!((info.acked, info.pending, info.end), (2, 1, 3), "{info:?}");
    // Not acknowledged within the ack wait twice: stored in the dead-letter stream.
    assert_eq!(offsets(&next_batch(&mut worker).await), [2]);
    let dead = name("acme/jobs/buffered.dead");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let info = broker.group_info(&stream, "workers").unwrap();
        if info.dead_lettered == 1 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{info:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let stored = broker
        .describe(&dead)
        .and_then(|i| i.durable)
        .map(|d| d.stored_messages);
    assert_eq!(stored, Some(1));
}

/// A join on a stream that does not exist creates it only when a durable rule matches.
#[tokio::test]
async fn a_join_creates_only_what_a_durable_rule_makes_durable() {
    let dir = tempfile::tempdir().unwrap();
    let broker = super::open_with(dir.path(), |s| {
        s.rules = vec![quiver_core::streams::durable::DurableRule {
            pattern: Pattern::new("acme/ruled/>").unwrap(),
            config: quiver_core::streams::durable::DurableConfig::default(),
        }]
    });
    let join = |pattern: &str| {
        broker.join_group(
            Pattern::new(pattern).unwrap(),
            "workers",
            JoinOptions {
                member: "m".to_owned(),
                create: Some(config(1000, 0, 10)),
                ..JoinOptions::default()
            },
        )
    };
    let refused = join("acme/free/x").unwrap_err();
    assert!(matches!(refused, GroupError::NoStream { .. }), "{refused}");
    assert!(broker.describe(&name("acme/free/x")).is_none());
    join("acme/ruled/x").unwrap();
    let created = broker.describe(&name("acme/ruled/x")).expect("created");
    assert!(created.durable.is_some());
}

#[tokio::test]
async fn nacks_dead_letters_and_resets() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    let stream = name("acme/pay/charges");
    broker
        .create_stream(&stream, durable(Durability::Os))
        .unwrap()
        .publish(numbered(0, 2), Ack::Committed, None)
        .await
        .unwrap();
    let mut worker = join(&broker, stream.as_str(), "w", config(30_000, 2, 10));
    assert_eq!(offsets(&next_batch(&mut worker).await), [0, 1]);
    worker.ack(&stream, &[1]).unwrap();
    worker.nack(&stream, &[0], Duration::ZERO).unwrap();
    let second = next_batch(&mut worker).await;
    assert_eq!(
        (offsets(&second), second.events[0].deliveries),
        (vec![0], 2)
    );
    worker
        .nack(&stream, &[0], Duration::from_millis(5))
        .unwrap();
    // Delivered twice: it goes to the dead-letter stream, not back to the worker.
    let dead = name("acme/pay/charges.dead");
    let mut dead_sub = loop {
        if broker.describe(&dead).is_some() {
            break broker
                .subscribe(
                    Pattern::new(dead.as_str()).unwrap(),
                    SubscribeOptions {
                        start: StartAt::Earliest,
                        ..SubscribeOptions::default()
                    },
                )
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let Delivery::Batch(batch) = dead_sub.recv().await else {
        panic!("the dead letter");
    };
    let letter = &batch.events()[0];
    assert_eq!(number(&letter.payload), 0);
    let header = |key: &str| {
        letter
            .headers
            .iter()
            .find(|h| h.key == key.as_bytes())
            .map(|h| String::from_utf8(h.value.to_vec()).unwrap())
    };
    assert_eq!(header(DEAD_GROUP_HEADER).as_deref(), Some("workers"));
    assert_eq!(header(DELIVERY_COUNT_HEADER).as_deref(), Some("2"));
    let info = broker.group_info(&stream, "workers").unwrap();
    assert_eq!((info.dead_lettered, info.pending, info.floor), (1, 0, 2));
    assert!(worker.try_recv().is_none());
    // Back to the start: both messages again.
    let info = broker
        .reset_group(&stream, "workers", StartAt::Earliest)
        .unwrap();
    assert_eq!((info.next, info.pending), (0, 0));
    let replay = next_batch(&mut worker).await;
    assert_eq!(offsets(&replay), [0, 1]);
    assert!(
        broker
            .reset_group(&stream, "workers", StartAt::Offset(9))
            .is_err()
    );
    broker.delete_group(&stream, "workers").unwrap();
    assert!(matches!(
        worker.recv().await,
        GroupDelivery::Ended(quiver_core::streams::EndReason::GroupDeleted { .. })
    ));
    assert!(broker.groups(&stream).unwrap().is_empty());
}

#[tokio::test]
async fn pending_messages_and_counts_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let stream = name("acme/mail/outbox");
    {
        let broker = open(dir.path());
        broker
            .create_stream(&stream, durable(Durability::Sync))
            .unwrap()
            .publish(numbered(0, 5), Ack::Committed, None)
            .await
            .unwrap();
        let mut worker = join(&broker, stream.as_str(), "before", config(30_000, 5, 10));
        let batch = next_batch(&mut worker).await;
        assert_eq!(offsets(&batch), [0, 1, 2, 3, 4]);
        worker.ack(&stream, &[0, 2]).unwrap();
        drop(worker);
        broker.close();
    }
    let broker = open(dir.path());
    let info = broker.group_info(&stream, "workers").unwrap();
    assert_eq!(
        (info.next, info.pending, info.acked, info.floor),
        (5, 3, 2, 1)
    );
    let mut worker = join(&broker, stream.as_str(), "after", config(30_000, 5, 10));
    let batch = next_batch(&mut worker).await;
    assert_eq!(offsets(&batch), [1, 3, 4]);
    assert!(batch.events.iter().all(|e| e.deliveries == 2));
}

#[tokio::test]
async fn a_pattern_member_joins_streams_created_later() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path());
    broker
        .create_stream(&name("acme/shards/s1"), durable(Durability::Os))
        .unwrap();
    let mut member = join(&broker, "acme/shards/*", "m", config(30_000, 5, 100));
    broker
        .create_stream(&name("acme/shards/s2"), durable(Durability::Os))
        .unwrap();
    for stream in ["acme/shards/s1", "acme/shards/s2"] {
        broker
            .publish(&name(stream), numbered(0, 2), Ack::Committed, None)
            .await
            .unwrap();
    }
    let mut got: Vec<(String, u64)> = Vec::new();
    while got.len() < 4 {
        let batch = next_batch(&mut member).await;
        member.ack(&batch.stream, &offsets(&batch)).unwrap();
        got.extend(
            batch
                .events
                .iter()
                .map(|e| (batch.stream.to_string(), e.offset)),
        );
    }
    got.sort();
    assert_eq!(
        got,
        [
            ("acme/shards/s1".to_owned(), 0),
            ("acme/shards/s1".to_owned(), 1),
            ("acme/shards/s2".to_owned(), 0),
            ("acme/shards/s2".to_owned(), 1),
        ]
    );
    let mut streams: Vec<StreamName> = member.streams();
    streams.sort();
    assert_eq!(streams.len(), 2);
    // The group deleted on one stream: the pattern member keeps the other.
    broker
        .delete_group(&name("acme/shards/s1"), "workers")
        .unwrap();
    assert_eq!(member.streams(), [name("acme/shards/s2")]);
    assert!(matches!(
        member.ack(&name("acme/shards/s1"), &[0]).unwrap_err(),
        GroupError::NotMember { .. }
    ));
    let live = || {
        broker
            .join_group(
                Pattern::new("acme/live/x").unwrap(),
                "g",
                JoinOptions::default(),
            )
            .unwrap_err()
    };
    let err = live();
    assert!(matches!(err, GroupError::NoStream { .. }), "{err}");
    broker
        .publish(&name("acme/live/x"), numbered(0, 1), Ack::Accepted, None)
        .await
        .unwrap();
    let err = live();
    assert!(matches!(err, GroupError::NotDurable { .. }), "{err}");
    let err = broker
        .join_group(
            Pattern::new("acme/shards/s1").unwrap(),
            "bad name!",
            JoinOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(err, GroupError::InvalidName { .. }), "{err}");
}

#[tokio::test]
async fn retention_keeps_what_a_group_has_not_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open_with(dir.path(), |s| s.segment_bytes = 64 << 10);
    let stream = name("acme/audit/trail");
    let mut config_ = durable(Durability::Os);
    config_.durable.as_mut().unwrap().retention = Retention {
        max_messages: Some(10),
        keep_unacked: true,
        ..Retention::default()
    };
    let handle = broker.create_stream(&stream, config_).unwrap();
    broker
        .create_group(&stream, "auditors", None, StartAt::Earliest)
        .unwrap();
    let payload = vec![b'x'; 1000];
    for _ in 0..10 {
        let messages = (0..50)
            .map(|_| quiver_core::streams::Message::new(payload.clone()))
            .collect();
        handle
            .publish(messages, Ack::Committed, None)
            .await
            .unwrap();
    }
    broker.apply_retention().await;
    let info = broker.describe(&stream).unwrap().durable.unwrap();
    assert_eq!(
        info.log.retention_deleted_segments, 0,
        "the group needs all of it"
    );
    broker.delete_group(&stream, "auditors").unwrap();
    broker.apply_retention().await;
    let info = broker.describe(&stream).unwrap().durable.unwrap();
    assert!(info.log.retention_deleted_segments > 0, "{info:?}");
}
