//! The SDK reconnects after the server goes away and makes its subscriptions again.

use std::time::Duration;

use quiver_client::{SubscribeOptions, SubscriptionEvent};
use quiver_core::streams::BrokerConfig;
use quiver_server::native::NativeSettings;

use super::{NativeServer, Transport, WAIT, next, payloads};

async fn the_client_reconnects_and_subscribes_again_after_a_restart(transport: Transport) {
    let first = NativeServer::over(transport, BrokerConfig::default()).await;
    let (addrs, identity) = first.place();
    let client = first.client().await;
    let mut sub = client
        .subscribe("acme/r/s", SubscribeOptions::default())
        .await
        .expect("subscribe");
    client.publish("acme/r/s", "before").await.expect("publish");
    assert_eq!(payloads(&mut sub, 1).await, ["before"]);

    drop(first);
    super::wait_closed(&client).await;
    let error = client
        .publish("acme/r/s", "lost")
        .await
        .expect_err("disconnected");
    assert!(error.to_string().contains("closed"), "{error}");

    let second = NativeServer::start_at(
        transport,
        addrs,
        identity,
        BrokerConfig::default(),
        NativeSettings::default(),
    )
    .await;
    assert_eq!(next(&mut sub).await, SubscriptionEvent::Resubscribed);
    client
        .publish("acme/r/s", "after")
        .await
        .expect("publish after reconnecting");
    assert_eq!(payloads(&mut sub, 1).await, ["after"]);
    assert_eq!(second.broker.stats().subscriptions, 1);
}

/// Without reconnecting, a subscriber that fell behind (its buffer full when the server
/// went away) still sees its end once it has read what it holds.
async fn a_subscriber_behind_sees_the_end_without_reconnect(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client =
        quiver_client::Client::connect_with(&server.url(), server.options().reconnect(false))
            .await
            .expect("connect");
    let mut sub = client
        .subscribe("acme/r/behind", SubscribeOptions::default())
        .await
        .expect("subscribe");
    let publisher = server.client().await;
    for i in 0..200 {
        publisher
            .publish("acme/r/behind", format!("m{i}"))
            .await
            .expect("publish");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(publisher);
    drop(server);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, sub.next())
            .await
            .expect("the end comes")
        {
            Some(SubscriptionEvent::Ended { .. }) | None => break,
            Some(_) => {}
        }
    }
}

super::over_both!(
    the_client_reconnects_and_subscribes_again_after_a_restart,
    a_subscriber_behind_sees_the_end_without_reconnect,
);
