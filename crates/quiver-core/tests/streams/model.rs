//! Property test of a subscription's queue under `drop_new` and `drop_old`: whatever the
//! interleaving of publishes and reads, the subscriber sees increasing sequence numbers,
//! every gap is announced by a lag notice of exactly its size, nothing is lost silently, and
//! the queue never holds more than its bound (or one batch larger than it).

use proptest::prelude::*;
use quiver_core::streams::{Ack, Delivery, Pattern, SlowPolicy, SubscribeOptions};

use super::{broker, messages, name, stream_config};

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

/// Checks deliveries in order; returns events received plus events announced lost.
fn check(
    deliveries: &[Delivery],
    next_expected: &mut u64,
    lag: &mut Option<u64>,
) -> Result<u64, TestCaseError> {
    let mut accounted = 0;
    for delivery in deliveries {
        match delivery {
            Delivery::Lag { missed } => {
                // Two notices in a row happen when a loss follows one already announced
                // before the next batch; together they count the gap.
                prop_assert!(*missed > 0);
                *lag = Some(lag.unwrap_or(0) + missed);
                accounted += missed;
            }
            Delivery::Batch(batch) => {
                let gap = batch.first_sequence() - *next_expected;
                prop_assert_eq!(
                    gap,
                    lag.take().unwrap_or(0),
                    "a gap equals the lag notices before it"
                );
                *next_expected = batch.last_sequence() + 1;
                accounted += batch.len() as u64;
            }
            Delivery::Ended(reason) => prop_assert!(false, "no end under drop policies: {reason}"),
        }
    }
    Ok(accounted)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn lag_accounting_is_exact(
        drop_old in any::<bool>(),
        queue_events in 1u32..20,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let policy = if drop_old { SlowPolicy::DropOld } else { SlowPolicy::DropNew };
        let broker = broker();
        let handle = broker.create_stream(&name("t/ns/s"), stream_config(policy, queue_events)).unwrap();
        let mut sub = broker.subscribe(Pattern::new("t/ns/s").unwrap(), SubscribeOptions::default()).unwrap();
        let (mut published, mut accounted, mut next_expected, mut lag) = (0, 0, 0, None);
        for op in ops {
            match op {
                Op::Publish(count) => {
                    runtime.block_on(handle.publish(messages(published, count), Ack::None, None)).unwrap();
                    published += count;
                }
                Op::Read(count) => {
                    let got: Vec<_> = (0..count).map_while(|_| sub.try_recv()).collect();
                    accounted += check(&got, &mut next_expected, &mut lag)?;
                }
            }
        }
        let rest: Vec<_> = std::iter::from_fn(|| sub.try_recv()).collect();
        accounted += check(&rest, &mut next_expected, &mut lag)?;
        prop_assert_eq!(accounted, published, "received + announced lost = published");
        let stats = handle.stats();
        prop_assert_eq!(stats.dropped(), published - stats.delivered);
        prop_assert!(stats.queue_high_water <= u64::from(queue_events).max(7));
    }
}
