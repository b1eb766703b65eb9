//! Property test of a group's bookkeeping against a plain model: whatever members join,
//! leave, ack, nack and time do, no member holds more than its bound, an ack succeeds
//! exactly when the model says the member holds the message, and once the members work
//! everything off, every message was acknowledged exactly once or dead-lettered, never
//! both, with state that a snapshot carries over.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use proptest::prelude::*;

use super::GroupConfig;
use super::state::{GroupState, Refusal};
use crate::streams::name::StreamName;

const MAX_IN_FLIGHT: u32 = 3;
const ACK_WAIT_MS: u64 = 100;
const MAX_DELIVERIES: u32 = 3;

#[derive(Debug, Clone)]
enum Op {
    Publish(u64),
    Join(u64),
    Leave(u64),
    Assign(u64),
    Ack(u64, usize),
    AckNotHeld(u64, u64),
    Nack(u64, usize, u64),
    Advance(u64),
    DeadLetters(bool),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let member = 0u64..3;
    prop_oneof![
        (1u64..6).prop_map(Op::Publish),
        member.clone().prop_map(Op::Join),
        member.clone().prop_map(Op::Leave),
        member.clone().prop_map(Op::Assign),
        (member.clone(), 0usize..4).prop_map(|(m, i)| Op::Ack(m, i)),
        (member.clone(), 0u64..40).prop_map(|(m, o)| Op::AckNotHeld(m, o)),
        (member, 0usize..4, 0u64..150).prop_map(|(m, i, d)| Op::Nack(m, i, d)),
        (0u64..150).prop_map(Op::Advance),
        any::<bool>().prop_map(Op::DeadLetters),
        Just(Op::Restart),
    ]
}

/// What the model knows of one delivered message.
#[derive(Debug, Clone, Default)]
struct Message {
    deliveries: u32,
    holder: Option<u64>,
    due: u64,
    acked: u32,
    dead: bool,
}

struct Model {
    end: u64,
    now: u64,
    members: BTreeSet<u64>,
    messages: BTreeMap<u64, Message>,
}

impl Model {
    fn held(&self, member: u64) -> Vec<u64> {
        self.messages
            .iter()
            .filter(|(_, m)| m.holder == Some(member) && m.due > self.now)
            .map(|(o, _)| *o)
            .collect()
    }
}

fn config() -> GroupConfig {
    GroupConfig {
        ack_wait: Duration::from_millis(ACK_WAIT_MS),
        max_deliveries: MAX_DELIVERIES,
        max_in_flight: MAX_IN_FLIGHT,
        dead_letter: None,
    }
}

fn apply(state: &mut GroupState, model: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    state.expire(model.now);
    match *op {
        Op::Publish(n) => model.end += n,
        Op::Join(m) => {
            if model.members.insert(m) {
                state.join(m, format!("m{m}"), MAX_IN_FLIGHT, None);
            }
        }
        Op::Leave(m) => {
            state.leave(m);
            model.members.remove(&m);
            for message in model.messages.values_mut() {
                if message.holder == Some(m) {
                    message.holder = None;
                }
            }
        }
        Op::Assign(m) => {
            let given = state.assign(m, model.end, model.now);
            if !model.members.contains(&m) {
                prop_assert!(given.is_empty());
                return Ok(());
            }
            for &(offset, deliveries) in &given.again {
                let message = model
                    .messages
                    .get_mut(&offset)
                    .expect("redelivered is known");
                prop_assert!(message.acked == 0 && !message.dead);
                prop_assert!(message.holder.is_none() || message.due <= model.now);
                message.deliveries += 1;
                prop_assert_eq!(message.deliveries, deliveries);
                message.holder = Some(m);
                message.due = model.now + ACK_WAIT_MS;
            }
            for offset in given.fresh.clone() {
                prop_assert!(
                    model
                        .messages
                        .insert(
                            offset,
                            Message {
                                deliveries: 1,
                                holder: Some(m),
                                due: model.now + ACK_WAIT_MS,
                                ..Message::default()
                            }
                        )
                        .is_none(),
                    "a fresh offset is new"
                );
            }
            prop_assert!(model.held(m).len() <= MAX_IN_FLIGHT as usize, "bound kept");
        }
        Op::Ack(m, i) => {
            let held = model.held(m);
            let Some(&offset) = held.get(i) else {
                return Ok(());
            };
            prop_assert_eq!(state.ack(m, &[offset]), Ok(1));
            let message = model.messages.get_mut(&offset).expect("held");
            message.acked += 1;
            message.holder = None;
        }
        Op::AckNotHeld(m, offset) => {
            let holds = model.members.contains(&m) && model.held(m).contains(&offset);
            let result = state.ack(m, &[offset]);
            if holds {
                prop_assert_eq!(result, Ok(1));
                let message = model.messages.get_mut(&offset).expect("held");
                message.acked += 1;
                message.holder = None;
            } else if model.members.contains(&m) {
                prop_assert_eq!(result, Err(Refusal::NotHeld { offset }));
            } else {
                prop_assert_eq!(result, Err(Refusal::NoMember));
            }
        }
        Op::Nack(m, i, delay) => {
            let held = model.held(m);
            let Some(&offset) = held.get(i) else {
                return Ok(());
            };
            prop_assert_eq!(state.nack(m, &[offset], delay, model.now), Ok(1));
            let message = model.messages.get_mut(&offset).expect("held");
            message.holder = None;
            message.due = model.now + delay;
        }
        Op::Advance(ms) => model.now += ms,
        Op::DeadLetters(stored) => {
            for (offset, deliveries) in state.take_dead() {
                let message = model.messages.get_mut(&offset).expect("known");
                prop_assert!(deliveries >= MAX_DELIVERIES && message.acked == 0);
                prop_assert!(message.holder.is_none() || message.due <= model.now);
                state.dead_lettered(offset, stored);
                message.dead = stored;
                message.holder = None;
            }
        }
        Op::Restart => {
            let stream = StreamName::new("a/b/c").unwrap();
            let snapshot = state.snapshot(&stream, "g");
            *state = GroupState::restore(&snapshot, u64::MAX);
            for &m in &model.members {
                state.join(m, format!("m{m}"), MAX_IN_FLIGHT, None);
            }
            for message in model.messages.values_mut() {
                message.holder = None;
                message.due = 0;
            }
        }
    }
    let open = model
        .messages
        .values()
        .filter(|m| m.acked == 0 && !m.dead)
        .count();
    prop_assert_eq!(
        state.pending(),
        open,
        "pending = delivered, not acked, not dead"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn groups_follow_the_model(ops in proptest::collection::vec(op(), 1..120)) {
        let mut state = GroupState::new(config(), 0);
        let mut model = Model {
            end: 0,
            now: 0,
            members: BTreeSet::new(),
            messages: BTreeMap::new(),
        };
        for op in &ops {
            apply(&mut state, &mut model, op)?;
        }
        // Work everything off: one member acks whatever it gets, time passes, dead
        // letters are written.
        apply(&mut state, &mut model, &Op::Join(9))?;
        for _ in 0..(model.end as usize + 50) * 4 {
            apply(&mut state, &mut model, &Op::Advance(ACK_WAIT_MS))?;
            apply(&mut state, &mut model, &Op::DeadLetters(true))?;
            apply(&mut state, &mut model, &Op::Assign(9))?;
            while !model.held(9).is_empty() {
                apply(&mut state, &mut model, &Op::Ack(9, 0))?;
            }
            if state.pending() == 0 && state.next() == model.end {
                break;
            }
        }
        prop_assert_eq!(state.pending(), 0);
        prop_assert_eq!(state.next(), model.end);
        for offset in 0..model.end {
            let message = &model.messages[&offset];
            prop_assert!(
                (message.acked == 1) != message.dead,
                "offset {} acked {} times, dead {}", offset, message.acked, message.dead
            );
        }
        let dead = model.messages.values().filter(|m| m.dead).count() as u64;
        prop_assert_eq!(state.dead_lettered, dead);
    }
}
