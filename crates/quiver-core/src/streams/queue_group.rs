//! Queue groups on live streams: the subscriptions that name the same group with the same
//! pattern share a stream's messages, each delivery batch going to one member.
//!
//! A batch goes to the next member in turn that has room for it, so a slow member is
//! passed over while another can take the batch; when none has room, the next in turn
//! gets it and the stream's slow-subscriber policy applies to that member. A queue group
//! is a live-stream feature: nothing is stored, acknowledged or redelivered (durable
//! consumer groups do that, see [`crate::streams::groups`]).

use std::sync::Arc;

use crate::streams::subscriber::SubShared;

/// The members of one (pattern, group) on one stream.
pub(crate) struct QueueGroup {
    pattern: Arc<str>,
    name: Arc<str>,
    members: Vec<Arc<SubShared>>,
    next: usize,
}

impl QueueGroup {
    /// A group with `first` as its only member.
    pub(crate) fn new(first: &Arc<SubShared>) -> Self {
        let name = first
            .group
            .clone()
            .expect("only subscriptions with a group join a queue group");
        Self {
            pattern: Arc::from(first.pattern.as_str()),
            name,
            members: vec![Arc::clone(first)],
            next: 0,
        }
    }

    /// Whether this is the group `name` of subscriptions to `pattern`.
    pub(crate) fn is(&self, pattern: &str, name: &str) -> bool {
        &*self.pattern == pattern && &*self.name == name
    }

    pub(crate) fn members(&self) -> impl Iterator<Item = &Arc<SubShared>> {
        self.members.iter()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub(crate) fn add(&mut self, sub: &Arc<SubShared>) {
        self.members.push(Arc::clone(sub));
    }

    pub(crate) fn remove(&mut self, sub: &Arc<SubShared>) {
        self.members.retain(|m| !Arc::ptr_eq(m, sub));
        self.next = 0;
    }

    pub(crate) fn drop_closed(&mut self) {
        self.members.retain(|m| !m.is_closed());
        self.next = 0;
    }

    /// The member that gets the next batch of `events`/`bytes`: the next in turn with
    /// room, else the next in turn.
    pub(crate) fn pick(&mut self, events: u64, bytes: u64) -> &Arc<SubShared> {
        debug_assert!(!self.members.is_empty(), "empty queue groups are removed");
        let count = self.members.len();
        let start = self.next % count;
        let chosen = (0..count)
            .map(|i| (start + i) % count)
            .find(|&i| {
                let member = &self.members[i];
                !member.is_closed() && member.has_room(events, bytes, 0, 0)
            })
            .unwrap_or(start);
        self.next = (chosen + 1) % count;
        &self.members[chosen]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::config::QueueLimits;
    use crate::streams::pattern::Pattern;
    use crate::streams::subscriber::SubscriptionId;

    fn member(id: u64) -> Arc<SubShared> {
        let mut sub = SubShared::new(
            SubscriptionId(id),
            Pattern::new("a/b/c").unwrap(),
            QueueLimits::new(10, 1 << 20).unwrap(),
        );
        sub.group = Some(Arc::from("workers"));
        Arc::new(sub)
    }

    #[test]
    fn turns_rotate_and_a_member_without_room_is_passed_over() {
        let (a, b) = (member(1), member(2));
        let mut group = QueueGroup::new(&a);
        group.add(&b);
        assert!(group.is("a/b/c", "workers") && !group.is("a/b/c", "other"));
        let picks: Vec<u64> = (0..4).map(|_| group.pick(1, 1).id.0).collect();
        assert_eq!(picks, [1, 2, 1, 2]);
        // A batch bigger than any queue's room goes to the next in turn.
        assert_eq!(group.pick(100, 1).id.0, 1);
        group.remove(&a);
        assert_eq!(group.pick(1, 1).id.0, 2);
    }
}
