//! Live streams, through the public API only.

mod batching;
mod budget;
mod limits;
mod model;
mod ordering;
mod policy;
mod wildcard;

use std::time::Duration;

use bytes::Bytes;
use quiver_core::streams::{
    Ack, Batch, BatchConfig, BlockTimeout, Broker, BrokerConfig, Delivery, Message, QueueLimits,
    SlowPolicy, StreamConfig, StreamName, Subscription,
};

pub fn name(text: &str) -> StreamName {
    StreamName::new(text).unwrap()
}

/// A broker whose default streams deliver each publish call at once.
pub fn broker() -> Broker {
    Broker::new(BrokerConfig::default())
}

pub fn stream_config(policy: SlowPolicy, queue_events: u32) -> StreamConfig {
    StreamConfig {
        batch: BatchConfig::new(64, 1 << 20, Duration::ZERO).unwrap(),
        queue: QueueLimits::new(queue_events, 1 << 30).unwrap(),
        policy,
        block_timeout: BlockTimeout::new(Duration::from_secs(1)).unwrap(),
        durable: None,
    }
}

/// `count` messages whose payload is their index, from `start`, as text.
pub fn messages(start: u64, count: u64) -> Vec<Message> {
    (start..start + count)
        .map(|i| Message::new(Bytes::from(i.to_string())))
        .collect()
}

pub fn payload_number(payload: &Bytes) -> u64 {
    std::str::from_utf8(payload).unwrap().parse().unwrap()
}

pub async fn publish(broker: &Broker, stream: &str, start: u64, count: u64) {
    broker
        .publish(&name(stream), messages(start, count), Ack::Accepted, None)
        .await
        .unwrap();
}

/// Everything ready on `sub` now, up to and including an end (which repeats forever).
pub fn drain(sub: &mut Subscription) -> Vec<Delivery> {
    let mut out = Vec::new();
    while let Some(delivery) = sub.try_recv() {
        let ended = matches!(delivery, Delivery::Ended(_));
        out.push(delivery);
        if ended {
            break;
        }
    }
    out
}

pub fn batch(delivery: &Delivery) -> &std::sync::Arc<Batch> {
    match delivery {
        Delivery::Batch(batch) => batch,
        other => panic!("expected a batch, got {other:?}"),
    }
}

/// Payload numbers of every batch, and lag notices as `None`-separated counts.
pub fn summary(deliveries: &[Delivery]) -> (Vec<u64>, Vec<u64>) {
    let mut numbers = Vec::new();
    let mut lags = Vec::new();
    for delivery in deliveries {
        match delivery {
            Delivery::Batch(batch) => {
                numbers.extend(batch.events().iter().map(|e| payload_number(&e.payload)))
            }
            Delivery::Lag { missed } => lags.push(*missed),
            Delivery::Ended(_) => {}
        }
    }
    (numbers, lags)
}
