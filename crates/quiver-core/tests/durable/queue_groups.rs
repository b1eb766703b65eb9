//! Queue groups on live streams: members of one group share the batches, each batch to one
//! member; separate groups and plain subscribers each get everything.

use std::time::Duration;

use quiver_core::streams::{
    Ack, Broker, BrokerConfig, Delivery, Pattern, StartAt, SubscribeError, SubscribeOptions,
    Subscription,
};

use super::{name, number, numbered};

fn member(broker: &Broker, pattern: &str, group: &str) -> Subscription {
    broker
        .subscribe(
            Pattern::new(pattern).unwrap(),
            SubscribeOptions {
                group: Some(group.to_owned()),
                ..SubscribeOptions::default()
            },
        )
        .unwrap()
}

fn take_all(sub: &mut Subscription) -> Vec<u64> {
    let mut out = Vec::new();
    while let Some(delivery) = sub.try_recv() {
        if let Delivery::Batch(batch) = delivery {
            out.extend(batch.events().iter().map(|e| number(&e.payload)));
        }
    }
    out
}

#[tokio::test]
async fn members_share_batches_and_other_subscribers_see_all() {
    let broker = Broker::new(BrokerConfig::default());
    let mut workers: Vec<Subscription> = (0..3)
        .map(|_| member(&broker, "acme/jobs/>", "workers"))
        .collect();
    let mut auditors = member(&broker, "acme/jobs/>", "audit");
    let mut plain = broker
        .subscribe(
            Pattern::new("acme/jobs/>").unwrap(),
            SubscribeOptions::default(),
        )
        .unwrap();
    for i in 0..30 {
        broker
            .publish(
                &name("acme/jobs/resize"),
                numbered(i, 1),
                Ack::Accepted,
                None,
            )
            .await
            .unwrap();
    }
    let shares: Vec<Vec<u64>> = workers.iter_mut().map(take_all).collect();
    assert!(
        shares.iter().all(|s| s.len() == 10),
        "turns rotate: {shares:?}"
    );
    let mut together: Vec<u64> = shares.concat();
    together.sort_unstable();
    assert_eq!(together, (0..30).collect::<Vec<_>>());
    assert_eq!(take_all(&mut auditors).len(), 30);
    assert_eq!(take_all(&mut plain).len(), 30);
    // A member that leaves is not given more.
    workers.pop();
    for i in 30..40 {
        broker
            .publish(
                &name("acme/jobs/resize"),
                numbered(i, 1),
                Ack::Accepted,
                None,
            )
            .await
            .unwrap();
    }
    let after: usize = workers.iter_mut().map(|w| take_all(w).len()).sum();
    assert_eq!(after, 10);
    tokio::time::sleep(Duration::from_millis(1)).await;
    let err = broker
        .subscribe(
            Pattern::new("acme/jobs/>").unwrap(),
            SubscribeOptions {
                group: Some("workers".to_owned()),
                start: StartAt::Earliest,
                ..SubscribeOptions::default()
            },
        )
        .unwrap_err();
    assert!(matches!(err, SubscribeError::GroupStart { .. }), "{err}");
}
