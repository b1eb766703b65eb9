//! Durable streams and consumer groups through the SDK, over TCP and QUIC: stream
//! administration and its errors, committed publishes, subscriptions from a start position,
//! groups, and resuming after the server restarts on the same data directory.

use std::time::Duration;

use quiver_client::{
    AckMode, ConsumerEvent, ErrorCode, GroupConsumer, GroupOptions, RequestError, StartPosition,
    Storage, StreamOptions, SubscribeOptions, SubscriptionEvent,
};

use super::{NativeServer, Transport, WAIT, next, over_both, payloads};

fn code(error: &RequestError) -> ErrorCode {
    match error {
        RequestError::Server { code, .. } => *code,
        other => panic!("expected a server error, got {other}"),
    }
}

async fn message(consumer: &mut GroupConsumer) -> quiver_client::GroupMessage {
    match tokio::time::timeout(WAIT, consumer.next())
        .await
        .expect("a message within the wait")
    {
        Some(ConsumerEvent::Message(message)) => message,
        other => panic!("expected a message, got {other:?}"),
    }
}

async fn streams_are_created_described_listed_and_deleted(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = NativeServer::durable(transport, dir.path()).await;
    let client = server.client().await;
    let options = StreamOptions::durable(Storage::Sync)
        .max_messages(1000)
        .keep_unacked(true);
    let info = client
        .create_stream("acme/orders/created", options)
        .await
        .expect("create");
    assert_eq!(info.settings.storage, Storage::Sync);
    assert_eq!((info.settings.max_messages, info.next_offset), (1000, 0));
    let again = client
        .create_stream("acme/orders/created", options)
        .await
        .expect_err("exists");
    assert_eq!(code(&again), ErrorCode::ALREADY_EXISTS);
    let bad = client
        .create_stream("acme/orders/bad", StreamOptions::live().max_messages(10))
        .await
        .expect_err("retention on a live stream");
    assert_eq!(code(&bad), ErrorCode::INVALID_ARGUMENT);
    assert!(bad.to_string().contains("durable"), "{bad}");
    client
        .create_stream("acme/orders/live", StreamOptions::live())
        .await
        .expect("live");
    let names: Vec<String> = client
        .list_streams()
        .await
        .expect("list")
        .iter()
        .map(|s| s.stream.to_string())
        .collect();
    assert_eq!(names, ["acme/orders/created", "acme/orders/live"]);
    client
        .delete_stream("acme/orders/live")
        .await
        .expect("delete");
    let missing = client
        .describe_stream("acme/orders/live")
        .await
        .expect_err("deleted");
    assert_eq!(code(&missing), ErrorCode::NOT_FOUND);
    let committed = client
        .publish_with("acme/orders/other", &[], "x", AckMode::Committed)
        .await
        .expect_err("not durable");
    assert_eq!(code(&committed), ErrorCode::UNSUPPORTED);
}

async fn committed_publishes_and_subscriptions_from_the_past(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = NativeServer::durable(transport, dir.path()).await;
    let client = server.client().await;
    client
        .create_stream("acme/audit/log", StreamOptions::durable(Storage::Os))
        .await
        .expect("create");
    for i in 0..5u64 {
        let ack = client
            .publish_committed("acme/audit/log", format!("m{i}"))
            .await
            .expect("committed");
        assert_eq!(ack.first_sequence, i);
    }
    let from = |start| SubscribeOptions::default().start(start);
    let mut all = client
        .subscribe("acme/audit/log", from(StartPosition::Earliest))
        .await
        .expect("earliest");
    let mut tail = client
        .subscribe("acme/audit/log", from(StartPosition::Offset(3)))
        .await
        .expect("offset");
    assert_eq!(payloads(&mut all, 5).await, ["m0", "m1", "m2", "m3", "m4"]);
    assert_eq!(payloads(&mut tail, 2).await, ["m3", "m4"]);
    client
        .publish("acme/audit/log", "m5")
        .await
        .expect("publish");
    assert_eq!(payloads(&mut all, 1).await, ["m5"]);
    assert_eq!(payloads(&mut tail, 1).await, ["m5"]);
    let past_end = client
        .subscribe("acme/audit/log", from(StartPosition::Offset(99)))
        .await
        .expect_err("past the end");
    assert_eq!(code(&past_end), ErrorCode::INVALID_ARGUMENT);
    assert!(past_end.to_string().contains("ends at 6"), "{past_end}");
}

async fn groups_share_ack_nack_and_report(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = NativeServer::durable(transport, dir.path()).await;
    let client = server.client().await;
    client
        .create_stream("acme/jobs/mail", StreamOptions::durable(Storage::Os))
        .await
        .expect("create");
    for i in 0..4 {
        client
            .publish_committed("acme/jobs/mail", format!("job{i}"))
            .await
            .expect("publish");
    }
    let options = GroupOptions::default()
        .member("w1")
        .create_with(Duration::from_secs(30), 3, 2);
    let mut w1 = client
        .join_group("acme/jobs/mail", "mailers", options.clone())
        .await
        .expect("join");
    let first = message(&mut w1).await;
    let second = message(&mut w1).await;
    assert_eq!((first.offset, second.offset, first.deliveries), (0, 1, 1));
    let mut w2 = client
        .join_group("acme/jobs/mail", "mailers", options.member("w2"))
        .await
        .expect("join");
    let third = message(&mut w2).await;
    assert_eq!(third.offset, 2);
    w1.ack(&first).await.expect("ack");
    let not_held = w1.ack(&third).await.expect_err("held by w2");
    assert_eq!(code(&not_held), ErrorCode::NOT_HELD);
    w1.nack(&second, Duration::ZERO).await.expect("nack");
    let groups = client
        .describe_groups("acme/jobs/mail", None)
        .await
        .expect("describe");
    assert_eq!(groups.len(), 1);
    let group = &groups[0];
    assert_eq!((group.name.as_str(), group.acked), ("mailers", 1));
    assert_eq!(group.member_count, 2);
    let again = message(&mut w1).await;
    assert!(again.deliveries >= 1);
    let reset = client
        .reset_group("acme/jobs/mail", "mailers", StartPosition::Latest)
        .await
        .expect("reset");
    assert_eq!((reset.next, reset.pending), (4, 0));
    client
        .delete_group("acme/jobs/mail", "mailers")
        .await
        .expect("delete");
    // try_next takes the end notice off the channel when it comes first: next gives it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    while w2.try_next().is_some() {}
    loop {
        match tokio::time::timeout(WAIT, w2.next()).await.expect("an end") {
            Some(ConsumerEvent::Ended { code, .. }) => {
                assert_eq!(code, Some(ErrorCode::NOT_FOUND));
                break;
            }
            Some(_) => {}
            None => panic!("ended without notice"),
        }
    }
}

async fn a_subscription_and_a_member_resume_after_a_restart(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = NativeServer::durable(transport, dir.path()).await;
    let (addrs, identity) = first.place();
    let client = first.client().await;
    client
        .create_stream("acme/feed/ticks", StreamOptions::durable(Storage::Sync))
        .await
        .expect("create");
    for i in 0..3 {
        client
            .publish_committed("acme/feed/ticks", format!("t{i}"))
            .await
            .expect("publish");
    }
    let mut sub = client
        .subscribe(
            "acme/feed/ticks",
            SubscribeOptions::default().start(StartPosition::Earliest),
        )
        .await
        .expect("subscribe");
    assert_eq!(payloads(&mut sub, 3).await, ["t0", "t1", "t2"]);
    let mut worker = client
        .join_group("acme/feed/ticks", "g", GroupOptions::default().member("w"))
        .await
        .expect("join");
    let held = message(&mut worker).await;
    worker.ack(&held).await.expect("ack");
    // As a server's drain does: subscriptions are ended (SHUTTING_DOWN) before the
    // connections close; a client that reconnects makes them again rather than ending.
    first.broker.shutdown();
    tokio::time::sleep(Duration::from_millis(200)).await;
    first.stop();
    drop(first);
    super::wait_closed(&client).await;
    let second = NativeServer::durable_at(transport, addrs, identity, dir.path()).await;
    assert_eq!(next(&mut sub).await, SubscriptionEvent::Resubscribed);
    loop {
        match tokio::time::timeout(WAIT, worker.next())
            .await
            .expect("rejoined")
        {
            Some(ConsumerEvent::Rejoined) => break,
            Some(ConsumerEvent::Message(_)) => {}
            other => panic!("expected a rejoin, got {other:?}"),
        }
    }
    client
        .publish_committed("acme/feed/ticks", "t3")
        .await
        .expect("publish after the restart");
    // The subscription goes on after t2: nothing again, nothing missed.
    assert_eq!(payloads(&mut sub, 1).await, ["t3"]);
    let mut offsets = Vec::new();
    while offsets.len() < 3 {
        let message = message(&mut worker).await;
        worker.ack(&message).await.expect("ack after the restart");
        offsets.push(message.offset);
    }
    offsets.sort_unstable();
    assert_eq!(offsets, [1, 2, 3], "offset 0 was acked before the restart");
    second.stop();
}

/// A queue group's member on a durable stream is made again after a restart, at the
/// live end (a queue group does not resume), and publishes with ids the stream already
/// has are acknowledged to a Publisher as stored.
async fn a_queue_member_comes_back_and_repeats_count_as_published(transport: Transport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = NativeServer::durable(transport, dir.path()).await;
    let (addrs, identity) = first.place();
    let client = first.client().await;
    client
        .create_stream(
            "acme/feed/jobs",
            StreamOptions::durable(Storage::Os).dedupe_window(Duration::from_secs(60)),
        )
        .await
        .expect("create");
    let mut queued = client
        .subscribe(
            "acme/feed/jobs",
            SubscribeOptions::default().queue_group("q"),
        )
        .await
        .expect("subscribe");
    client
        .publish_committed("acme/feed/jobs", "j0")
        .await
        .expect("publish");
    assert_eq!(payloads(&mut queued, 1).await, ["j0"]);
    first.stop();
    drop(first);
    super::wait_closed(&client).await;
    let second = NativeServer::durable_at(transport, addrs, identity, dir.path()).await;
    assert_eq!(next(&mut queued).await, SubscriptionEvent::Resubscribed);
    client
        .publish_committed("acme/feed/jobs", "j1")
        .await
        .expect("publish after the restart");
    assert_eq!(payloads(&mut queued, 1).await, ["j1"]);

    let publisher = client
        .publisher("acme/feed/jobs", Default::default())
        .expect("publisher");
    for ids in [["a", "b"], ["b", "c"]] {
        for id in ids {
            publisher
                .publish_with_headers(&[("Quiver-Msg-Id", id.as_bytes())], id)
                .await
                .expect("queued");
        }
        publisher
            .flush()
            .await
            .expect("a repeat counts as published");
    }
    second.stop();
}

over_both!(
    streams_are_created_described_listed_and_deleted,
    committed_publishes_and_subscriptions_from_the_past,
    groups_share_ack_nack_and_report,
    a_subscription_and_a_member_resume_after_a_restart,
    a_queue_member_comes_back_and_repeats_count_as_published,
);
