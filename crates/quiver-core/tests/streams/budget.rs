//! In-flight byte budgets per connection and per process.

use std::time::Duration;

use quiver_core::streams::{
    Ack, Broker, BrokerConfig, BudgetError, BudgetScope, InflightConfig, Pattern, PublishError,
    SubscribeOptions,
};

use super::{drain, messages, name};

fn broker(connection_bytes: u64, process_bytes: u64) -> Broker {
    let inflight = InflightConfig {
        connection_bytes,
        process_bytes,
        wait: Duration::from_millis(100),
    };
    Broker::new(BrokerConfig {
        inflight,
        ..BrokerConfig::default()
    })
}

#[tokio::test(start_paused = true)]
async fn queued_bytes_hold_the_budget_until_delivered() {
    let broker = broker(10, 1000);
    let budget = broker.connection_budget();
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    // payloads "0".."4": 5 bytes
    broker
        .publish(
            &name("t/ns/s"),
            messages(0, 5),
            Ack::Accepted,
            Some(&budget),
        )
        .await
        .unwrap();
    assert_eq!(
        (budget.used_bytes(), broker.process_budget().used_bytes()),
        (5, 5)
    );
    broker
        .publish(
            &name("t/ns/s"),
            messages(5, 5),
            Ack::Accepted,
            Some(&budget),
        )
        .await
        .unwrap();
    let err = broker
        .publish(
            &name("t/ns/s"),
            messages(0, 1),
            Ack::Accepted,
            Some(&budget),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            PublishError::Budget {
                source: BudgetError::Exhausted {
                    scope: BudgetScope::Connection,
                    used_bytes: 10,
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );
    let other_connection = broker.connection_budget();
    broker
        .publish(
            &name("t/ns/s"),
            messages(0, 1),
            Ack::Accepted,
            Some(&other_connection),
        )
        .await
        .unwrap();
    let delivered = drain(&mut sub);
    assert_eq!(
        budget.used_bytes(),
        10,
        "the transport still holds the batches"
    );
    drop(delivered);
    assert_eq!(
        (budget.used_bytes(), broker.process_budget().used_bytes()),
        (0, 0)
    );
    let err = broker
        .publish(
            &name("t/ns/s"),
            messages(10, 6),
            Ack::Accepted,
            Some(&budget),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            PublishError::Budget {
                source: BudgetError::TooLarge { .. },
                ..
            }
        ),
        "12 bytes > 10: {err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_waiting_publish_goes_ahead_when_bytes_are_released() {
    let broker = broker(1000, 4);
    let mut sub = broker
        .subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default())
        .unwrap();
    broker
        .publish(&name("t/ns/s"), messages(0, 4), Ack::Accepted, None)
        .await
        .unwrap();
    let waiting = tokio::spawn({
        let broker = broker.clone();
        async move {
            broker
                .publish(&name("t/ns/s"), messages(4, 2), Ack::Accepted, None)
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiting.is_finished());
    drop(drain(&mut sub));
    let receipt = waiting.await.unwrap().unwrap();
    assert_eq!(receipt.first_sequence, 4);
}

#[tokio::test]
async fn unsubscribed_streams_release_at_once() {
    let broker = broker(10, 10);
    let budget = broker.connection_budget();
    for i in 0..100 {
        broker
            .publish(
                &name("t/ns/nobody"),
                messages(i % 10, 1),
                Ack::None,
                Some(&budget),
            )
            .await
            .unwrap();
    }
    assert_eq!(budget.used_bytes(), 0);
}
