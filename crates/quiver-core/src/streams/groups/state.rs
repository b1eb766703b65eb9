//! A consumer group's bookkeeping, sans-IO: time comes in as `now_ms`, messages are named
//! by offset, and what to do (deliver these offsets to that member, dead-letter those) comes
//! out. The dispatcher ([`super::group`]) reads the log and talks to members around it.
//!
//! Every offset of the stream below `next` was delivered at least once; of those, the ones
//! in `pending` are not acknowledged yet. A pending message is either *leased* to one member
//! until its deadline (the ack wait, or a nack's delay with no holder), or *ready* to be
//! delivered again. A lease that runs out makes the message ready, and its holder's ack
//! for it then fails: the message may already be with someone else. A ready message that
//! was delivered `max_deliveries` times goes to the dead-letter stream instead.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use crate::catalog::GroupSnapshot;
use crate::streams::groups::GroupConfig;
use crate::streams::name::StreamName;

/// A member's id, unique in the process.
pub(crate) type MemberId = u64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// Nobody: ready once `due_ms` passes.
    Nobody,
    /// Leased to a member until `due_ms`.
    Member(MemberId),
    /// Being written to the dead-letter stream.
    DeadLetter,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    deliveries: u32,
    holder: Holder,
    due_ms: u64,
}

/// One member as the group sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberState {
    pub(crate) name: String,
    pub(crate) max_in_flight: u32,
    pub(crate) held: u32,
    pub(crate) delivered: u64,
    pub(crate) acked: u64,
    /// How many more messages the member may be given: for a pull member, what it asked
    /// for ([`GroupState::grant`]); for a push member that joined with a limit, what is
    /// left of it (only pull members ask). `None`: a push member without a limit, given
    /// messages whenever it has room.
    pub(crate) credit: Option<u32>,
}

/// What one member is to be given.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    /// Messages delivered again: (offset, deliveries including this one), in offset order.
    pub(crate) again: Vec<(u64, u32)>,
    /// Messages delivered for the first time.
    pub(crate) fresh: Range<u64>,
}

impl Assignment {
    pub(crate) fn is_empty(&self) -> bool {
        self.again.is_empty() && self.fresh.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.again.len() + (self.fresh.end - self.fresh.start) as usize
    }
}

/// Why an ack or nack was refused; nothing of it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The member does not hold this offset (never delivered to it, already acked, or its
    /// lease ran out and the message is ready for someone else).
    NotHeld { offset: u64 },
    /// No such member (it left).
    NoMember,
}

/// A group's state.
#[derive(Debug)]
pub(crate) struct GroupState {
    pub(crate) config: GroupConfig,
    next: u64,
    pending: BTreeMap<u64, Pending>,
    /// (due, offset) of pending messages waiting for a deadline.
    deadlines: BTreeSet<(u64, u64)>,
    /// Pending messages ready to be delivered (again).
    ready: BTreeSet<u64>,
    members: BTreeMap<MemberId, MemberState>,
    pub(crate) acked: u64,
    pub(crate) redelivered: u64,
    pub(crate) dead_lettered: u64,
    /// Messages retention deleted before the group acknowledged them.
    pub(crate) lost_to_retention: u64,
    /// Changed since the last snapshot.
    pub(crate) dirty: bool,
}

impl GroupState {
    /// A new group whose first message is `start`.
    pub(crate) fn new(config: GroupConfig, start: u64) -> Self {
        Self {
            config,
            next: start,
            pending: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            ready: BTreeSet::new(),
            members: BTreeMap::new(),
            acked: 0,
            redelivered: 0,
            dead_lettered: 0,
            lost_to_retention: 0,
            dirty: true,
        }
    }

    /// The state a snapshot describes over a log that ends at `end`; every pending
    /// message is ready (no member holds anything after a restart). A log that recovery
    /// cut below the group's position (a salvage, or a power loss before the records
    /// reached the disk) gives its offsets to new messages: the group goes on from the
    /// log's end, and its pending messages past it are gone.
    pub(crate) fn restore(snapshot: &GroupSnapshot, end: u64) -> Self {
        let next = snapshot.next.min(end);
        let mut state = Self::new(snapshot.config.clone(), next);
        state.acked = snapshot.acked;
        state.redelivered = snapshot.redelivered;
        state.dead_lettered = snapshot.dead_lettered;
        state.lost_to_retention = snapshot.lost_to_retention;
        if next < snapshot.next {
            tracing::warn!(
                stream = %snapshot.stream,
                group = %snapshot.group,
                position = snapshot.next,
                end,
                "the stream's log ends before the group's position: the group goes on from the log's end"
            );
        }
        for &(offset, deliveries) in snapshot.pending.iter().filter(|(o, _)| *o < end) {
            state.pending.insert(
                offset,
                Pending {
                    deliveries,
                    holder: Holder::Nobody,
                    due_ms: 0,
                },
            );
            state.ready.insert(offset);
        }
        state.dirty = next < snapshot.next;
        state
    }

    pub(crate) fn snapshot(&self, stream: &StreamName, group: &str) -> GroupSnapshot {
        GroupSnapshot {
            stream: stream.clone(),
            group: group.to_owned(),
            config: self.config.clone(),
            next: self.next,
            acked: self.acked,
            redelivered: self.redelivered,
            dead_lettered: self.dead_lettered,
            lost_to_retention: self.lost_to_retention,
            pending: self
                .pending
                .iter()
                .map(|(offset, p)| (*offset, p.deliveries))
                .collect(),
        }
    }

    /// The next offset never delivered.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// Every offset below this is acknowledged (or dead-lettered).
    pub(crate) fn floor(&self) -> u64 {
        self.pending.keys().next().copied().unwrap_or(self.next)
    }

    /// Messages delivered and not acknowledged.
    pub(crate) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Pending messages ready to be delivered again now.
    pub(crate) fn ready(&self) -> usize {
        self.ready.len()
    }

    pub(crate) fn members(&self) -> impl Iterator<Item = (&MemberId, &MemberState)> {
        self.members.iter()
    }

    /// Adds a member with `credit`: `None` for a push member, `Some(0)` for a pull one
    /// (given nothing until it asks, [`grant`](Self::grant)), `Some(n)` for one given `n`
    /// messages in all.
    pub(crate) fn join(
        &mut self,
        id: MemberId,
        name: String,
        max_in_flight: u32,
        credit: Option<u32>,
    ) {
        self.members.insert(
            id,
            MemberState {
                name,
                max_in_flight,
                held: 0,
                delivered: 0,
                acked: 0,
                credit,
            },
        );
    }

    /// Sets a pull member's credit to `wanted` (a push member is left as it is).
    pub(crate) fn grant(&mut self, id: MemberId, wanted: u32) {
        if let Some(member) = self.members.get_mut(&id)
            && member.credit.is_some()
        {
            member.credit = Some(wanted);
        }
    }

    /// Removes a member; what it held is ready for the others at once.
    pub(crate) fn leave(&mut self, id: MemberId) {
        if self.members.remove(&id).is_none() {
            return;
        }
        let held: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.holder == Holder::Member(id))
            .map(|(offset, _)| *offset)
            .collect();
        for offset in held {
            self.release(offset);
        }
    }

    /// Makes a leased or delayed message ready now.
    fn release(&mut self, offset: u64) {
        let Some(p) = self.pending.get_mut(&offset) else {
            return;
        };
        self.deadlines.remove(&(p.due_ms, offset));
        if let Holder::Member(holder) = p.holder
            && let Some(member) = self.members.get_mut(&holder)
        {
            member.held -= 1;
        }
        p.holder = Holder::Nobody;
        self.ready.insert(offset);
    }

    /// Makes every message whose deadline passed ready.
    pub(crate) fn expire(&mut self, now_ms: u64) {
        while let Some(&(due, offset)) = self.deadlines.first() {
            if due > now_ms {
                break;
            }
            self.release(offset);
        }
    }

    /// The earliest deadline, if any.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.deadlines.first().map(|(due, _)| *due)
    }

    /// Ready messages due for the dead-letter stream (delivered `max_deliveries` times);
    /// they are marked so nobody gets them meanwhile.
    pub(crate) fn take_dead(&mut self) -> Vec<(u64, u32)> {
        let max = self.config.max_deliveries;
        if max == 0 {
            return Vec::new();
        }
        let dead: Vec<(u64, u32)> = self
            .ready
            .iter()
            .map(|offset| (*offset, self.pending[offset].deliveries))
            .filter(|(_, deliveries)| *deliveries >= max)
            .collect();
        for (offset, _) in &dead {
            self.ready.remove(offset);
            if let Some(p) = self.pending.get_mut(offset) {
                p.holder = Holder::DeadLetter;
            }
        }
        dead
    }

    /// A dead letter was written (`stored`), or could not be (it is ready again).
    pub(crate) fn dead_lettered(&mut self, offset: u64, stored: bool) {
        if !stored {
            if let Some(p) = self.pending.get_mut(&offset) {
                p.holder = Holder::Nobody;
                self.ready.insert(offset);
            }
            return;
        }
        if self.pending.remove(&offset).is_some() {
            self.dead_lettered += 1;
            self.dirty = true;
        }
    }

    /// What `member` is given now, up to its room: ready messages first (oldest first),
    /// then new ones below `end`. Leases them until `now + ack_wait`.
    pub(crate) fn assign(&mut self, member: MemberId, end: u64, now_ms: u64) -> Assignment {
        let mut out = Assignment {
            again: Vec::new(),
            fresh: self.next..self.next,
        };
        let Some(state) = self.members.get(&member) else {
            return out;
        };
        let mut room = state.max_in_flight.saturating_sub(state.held);
        if let Some(credit) = state.credit {
            room = room.min(credit);
        }
        let mut room = room as usize;
        let due = now_ms.saturating_add(ack_wait_ms(&self.config));
        while room > 0 {
            let Some(offset) = self.ready.pop_first() else {
                break;
            };
            let p = self.pending.get_mut(&offset).expect("ready is pending");
            p.deliveries = p.deliveries.saturating_add(1);
            p.holder = Holder::Member(member);
            p.due_ms = due;
            self.deadlines.insert((due, offset));
            self.redelivered += 1;
            out.again.push((offset, p.deliveries));
            room -= 1;
        }
        let fresh = end.saturating_sub(self.next).min(room as u64);
        for offset in self.next..self.next + fresh {
            self.pending.insert(
                offset,
                Pending {
                    deliveries: 1,
                    holder: Holder::Member(member),
                    due_ms: due,
                },
            );
            self.deadlines.insert((due, offset));
        }
        out.fresh = self.next..self.next + fresh;
        self.next += fresh;
        let given = out.len();
        if given > 0 {
            let state = self.members.get_mut(&member).expect("checked above");
            state.held += given as u32;
            state.delivered += given as u64;
            if let Some(credit) = &mut state.credit {
                *credit = credit.saturating_sub(given as u32);
            }
            self.dirty = true;
        }
        out
    }

    /// Whether `member` holds `offset` (leased to it and not acknowledged).
    pub(crate) fn holds(&self, member: MemberId, offset: u64) -> bool {
        self.pending
            .get(&offset)
            .is_some_and(|p| p.holder == Holder::Member(member))
    }

    /// Checks that `member` holds every offset of `offsets`.
    fn check_held(&self, member: MemberId, offsets: &[u64]) -> Result<(), Refusal> {
        if !self.members.contains_key(&member) {
            return Err(Refusal::NoMember);
        }
        for &offset in offsets {
            match self.pending.get(&offset) {
                Some(p) if p.holder == Holder::Member(member) => {}
                _ => return Err(Refusal::NotHeld { offset }),
            }
        }
        Ok(())
    }

    /// Acknowledges `offsets` (all held by `member`, or none is applied).
    pub(crate) fn ack(&mut self, member: MemberId, offsets: &[u64]) -> Result<u64, Refusal> {
        self.check_held(member, offsets)?;
        let mut acked = 0;
        for &offset in offsets {
            // A repeated offset in one ack counts once.
            if let Some(p) = self.pending.remove(&offset) {
                self.deadlines.remove(&(p.due_ms, offset));
                acked += 1;
            }
        }
        let state = self.members.get_mut(&member).expect("checked");
        state.held -= acked as u32;
        state.acked += acked;
        self.acked += acked;
        self.dirty = true;
        Ok(acked)
    }

    /// Gives `offsets` back (all held by `member`, or none is applied): ready again after
    /// `delay_ms`.
    pub(crate) fn nack(
        &mut self,
        member: MemberId,
        offsets: &[u64],
        delay_ms: u64,
        now_ms: u64,
    ) -> Result<u64, Refusal> {
        self.check_held(member, offsets)?;
        let mut released = 0;
        for &offset in offsets {
            let Some(p) = self.pending.get_mut(&offset) else {
                continue;
            };
            if p.holder != Holder::Member(member) {
                continue;
            }
            self.deadlines.remove(&(p.due_ms, offset));
            p.holder = Holder::Nobody;
            released += 1;
            if delay_ms == 0 {
                self.ready.insert(offset);
            } else {
                p.due_ms = now_ms.saturating_add(delay_ms);
                self.deadlines.insert((p.due_ms, offset));
            }
        }
        let state = self.members.get_mut(&member).expect("checked");
        state.held -= released as u32;
        self.dirty = true;
        Ok(released)
    }

    /// Moves the group to `to`: nothing is pending, the next delivery is `to`.
    pub(crate) fn reset(&mut self, to: u64) {
        self.pending.clear();
        self.deadlines.clear();
        self.ready.clear();
        for member in self.members.values_mut() {
            member.held = 0;
        }
        self.next = to;
        self.dirty = true;
    }

    /// Retention deleted everything below `first`: pending messages below it are dropped
    /// (counted), and new deliveries start there.
    pub(crate) fn skip_below(&mut self, first: u64) {
        let gone: Vec<u64> = self.pending.range(..first).map(|(o, _)| *o).collect();
        for offset in gone {
            self.release(offset);
            self.ready.remove(&offset);
            self.pending.remove(&offset);
            self.lost_to_retention += 1;
        }
        if self.next < first {
            self.lost_to_retention += first - self.next;
            self.next = first;
        }
        self.dirty = true;
    }
}

fn ack_wait_ms(config: &GroupConfig) -> u64 {
    u64::try_from(config.ack_wait.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn config(max_deliveries: u32) -> GroupConfig {
        GroupConfig {
            ack_wait: Duration::from_millis(100),
            max_deliveries,
            max_in_flight: 4,
            dead_letter: None,
        }
    }

    #[test]
    fn a_member_with_a_limit_is_given_that_many_in_all() {
        let mut group = GroupState::new(config(5), 0);
        group.join(1, "counted".into(), 2, Some(3));
        assert_eq!(group.assign(1, 10, 0).fresh, 0..2, "max_in_flight first");
        group.ack(1, &[0, 1]).unwrap();
        assert_eq!(group.assign(1, 10, 0).fresh, 2..3, "the rest of the limit");
        group.ack(1, &[2]).unwrap();
        assert!(group.assign(1, 10, 0).is_empty(), "acks give no more");
    }

    #[test]
    fn a_pull_member_is_given_only_what_it_asked_for() {
        let mut group = GroupState::new(config(5), 0);
        group.join(1, "pull".into(), 4, Some(0));
        assert!(group.assign(1, 10, 0).is_empty(), "nothing asked yet");
        group.grant(1, 3);
        assert_eq!(group.assign(1, 10, 0).fresh, 0..3);
        assert!(group.assign(1, 10, 0).is_empty(), "credit used up");
        group.grant(1, 10);
        assert_eq!(
            group.assign(1, 10, 0).fresh,
            3..4,
            "max_in_flight still bounds it"
        );
        group.ack(1, &[0, 1, 2, 3]).unwrap();
        assert_eq!(group.assign(1, 10, 0).fresh, 4..8, "the rest of the credit");
        group.join(2, "push".into(), 4, None);
        group.grant(2, 1);
        assert_eq!(
            group.assign(2, 10, 0).fresh,
            8..10,
            "a push member ignores grants"
        );
    }

    #[test]
    fn leases_acks_expiry_and_dead_letters() {
        let mut group = GroupState::new(config(2), 10);
        group.join(1, "a".into(), 4, None);
        group.join(2, "b".into(), 4, None);
        let a = group.assign(1, 20, 0);
        assert_eq!(a.fresh, 10..14);
        assert_eq!(group.assign(2, 20, 0).fresh, 14..18);
        assert_eq!(group.assign(1, 20, 0).len(), 0, "a is full");
        assert_eq!(group.ack(1, &[10, 11]), Ok(2));
        assert_eq!(group.ack(2, &[12]), Err(Refusal::NotHeld { offset: 12 }));
        assert_eq!(group.floor(), 12);
        // 12 and 13 expire; b acks in time.
        group.ack(2, &[14, 15, 16, 17]).unwrap();
        group.expire(100);
        assert_eq!(group.ack(1, &[12]), Err(Refusal::NotHeld { offset: 12 }));
        let b = group.assign(2, 20, 100);
        assert_eq!(b.again, [(12, 2), (13, 2)]);
        assert_eq!(b.fresh, 18..20);
        // Nacked back: delivered twice already, so they are dead letters now.
        group.nack(2, &[12, 13], 0, 150).unwrap();
        assert_eq!(group.take_dead(), [(12, 2), (13, 2)]);
        assert!(
            group.assign(1, 20, 150).is_empty(),
            "dead letters go to nobody"
        );
        group.dead_lettered(12, true);
        group.dead_lettered(13, false);
        assert_eq!(group.dead_lettered, 1);
        assert_eq!(group.take_dead(), [(13, 2)]);
        group.leave(2);
        assert_eq!(group.assign(1, 20, 200).again, [(18, 2), (19, 2)]);
    }

    #[test]
    fn snapshot_restores_pending_as_ready() {
        let stream = StreamName::new("a/b/c").unwrap();
        let mut group = GroupState::new(config(0), 0);
        group.join(1, "a".into(), 4, None);
        group.assign(1, 10, 0);
        group.ack(1, &[1]).unwrap();
        let snapshot = group.snapshot(&stream, "g");
        assert_eq!(snapshot.pending, [(0, 1), (2, 1), (3, 1)]);
        // Over a log recovery cut to 3 records: on from 3, pending 3 gone.
        let cut = GroupState::restore(&snapshot, 3);
        assert_eq!((cut.next(), cut.ready(), cut.dirty), (3, 2, true));
        let mut restored = GroupState::restore(&snapshot, 10);
        assert_eq!(
            (restored.next(), restored.floor(), restored.ready()),
            (4, 0, 3)
        );
        restored.join(7, "new".into(), 10, None);
        let given = restored.assign(7, 10, 0);
        assert_eq!(given.again, [(0, 2), (2, 2), (3, 2)]);
        assert_eq!(given.fresh, 4..10);
        restored.reset(3);
        assert_eq!((restored.pending(), restored.next()), (0, 3));
        restored.skip_below(5);
        assert_eq!((restored.next(), restored.lost_to_retention), (5, 2));
        // The loss is counted across a restart.
        let again = GroupState::restore(&restored.snapshot(&stream, "g"), 10);
        assert_eq!(again.lost_to_retention, 2);
    }
}
