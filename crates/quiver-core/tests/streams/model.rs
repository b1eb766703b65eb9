//! Property test of a subscription's queue under `drop_new`, `drop_old` and `disconnect`:
//! whatever the interleaving of publishes and reads, the subscriber sees increasing
//! sequence numbers, every gap is announced by a lag notice of exactly its size (or by the
//! end's `missed`), nothing is lost silently, and the queue never holds more than its bound
//! (or one batch larger than it).

use proptest::prelude::*;
use quiver_core::streams::{Ack, Delivery, EndReason, Pattern, SlowPolicy, SubscribeOptions};

use super::{broker, drain, messages, name, stream_config};

#[derive(Debug, Clone)]
enum Op {
    Publish(u64),
    Read(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u64..8).prop_map(Op::Publish),
        (0usize..4).prop_map(Op::Read)
    ]
}

/// Checks deliveries in order; returns events received plus the gaps and end losses
/// announced before them.
fn check(
    deliveries: &[Delivery],
    next_expected: &mut u64,
    lag: &mut Option<u64>,
    ended: &mut bool,
) -> Result<u64, TestCaseError> {
    let mut accounted = 0;
    for delivery in deliveries {
        match delivery {
            Delivery::Lag { missed } => {
                // Two notices in a row happen when a loss follows one already announced
                // before the next batch; together they count the gap.
                prop_assert!(*missed > 0);
                *lag = Some(lag.unwrap_or(0) + missed);
            }
            Delivery::Batch(batch) => {
                let gap = batch.first_sequence() - *next_expected;
                prop_assert_eq!(
                    gap,
                    lag.take().unwrap_or(0),
                    "a gap equals the lag notices before it"
                );
                accounted += gap;
                *next_expected = batch.last_sequence() + 1;
                accounted += batch.len() as u64;
            }
            Delivery::Ended(EndReason::SlowConsumer { missed, .. }) => {
                if !*ended {
                    accounted += missed + lag.take().unwrap_or(0);
                    *ended = true;
                }
            }
            Delivery::Ended(reason) => prop_assert!(false, "unexpected end: {reason}"),
        }
    }
    Ok(accounted)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn lag_accounting_is_exact(
        policy in prop_oneof![Just(SlowPolicy::DropNew), Just(SlowPolicy::DropOld), Just(SlowPolicy::Disconnect)],
        queue_events in 1u32..20,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let broker = broker();
        let handle = broker.create_stream(&name("t/ns/s"), stream_config(policy, queue_events)).unwrap();
        let mut sub = broker.subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default()).unwrap();
        let (mut published, mut accounted, mut next_expected, mut lag) = (0, 0, 0, None);
        let (mut ended, mut published_at_end) = (false, None);
        for op in ops {
            match op {
                Op::Publish(count) => {
                    runtime.block_on(handle.publish(messages(published, count), Ack::None, None)).unwrap();
                    published += count;
                    if published_at_end.is_none() && handle.stats().dropped_disconnect > 0 {
                        published_at_end = Some(published);
                    }
                }
                Op::Read(count) => {
                    let mut got = Vec::new();
                    while got.len() < count && !matches!(got.last(), Some(Delivery::Ended(_))) {
                        match sub.try_recv() {
                            Some(delivery) => got.push(delivery),
                            None => break,
                        }
                    }
                    accounted += check(&got, &mut next_expected, &mut lag, &mut ended)?;
                }
            }
        }
        let rest = drain(&mut sub);
        accounted += check(&rest, &mut next_expected, &mut lag, &mut ended)?;
        accounted += lag.take().unwrap_or(0); // a loss announced after the last batch
        let stats = handle.stats();
        prop_assert_eq!(ended, published_at_end.is_some(), "ended exactly when disconnect dropped");
        let expected = published_at_end.unwrap_or(published);
        prop_assert_eq!(accounted, expected, "received + announced lost = published (before the end)");
        prop_assert_eq!(stats.dropped(), expected - stats.delivered);
        prop_assert!(stats.queue_high_water <= u64::from(queue_events).max(7));
    }
}
