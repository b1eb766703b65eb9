//! Publish de-duplication: a message whose id (header [`MSG_ID_HEADER`]) was stored within
//! the stream's window is not stored again; the publisher is acknowledged with the offset
//! the first one got. The window is rebuilt from the log at start-up, so a publisher that
//! retries after a lost ack (even one lost because the server died) does not duplicate.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

use crate::streams::batch::{Header, Message};
use crate::streams::durable::config::{MAX_DEDUPE_IDS, MAX_MSG_ID_BYTES, MSG_ID_HEADER};

/// The ids a stream remembers, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Dedupe {
    window_ms: u64,
    ids: HashMap<Bytes, u64>,
    /// (stored at, id) in storing order, for expiry.
    order: VecDeque<(u64, Bytes)>,
}

/// The id of a message, if it carries one.
pub fn message_id(headers: &[Header]) -> Option<&Bytes> {
    headers
        .iter()
        .find(|h| h.key.eq_ignore_ascii_case(MSG_ID_HEADER.as_bytes()) && !h.value.is_empty())
        .map(|h| &h.value)
}

impl Dedupe {
    pub(crate) fn new(window_ms: u64) -> Self {
        Self {
            window_ms,
            ..Self::default()
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.window_ms > 0
    }

    /// Forgets ids stored before `now_ms - window`.
    fn expire(&mut self, now_ms: u64) {
        let horizon = now_ms.saturating_sub(self.window_ms);
        while let Some((at, _)) = self.order.front() {
            if *at >= horizon && self.order.len() <= MAX_DEDUPE_IDS {
                break;
            }
            let (_, id) = self.order.pop_front().expect("front exists");
            self.ids.remove(&id);
        }
    }

    /// Splits `messages` into those to store (from offset `first` on) and, for each
    /// duplicate, in the order of `messages`, the offset of the message with its id: one
    /// stored before, or an earlier one of `messages`. The order of the fresh ones is kept.
    pub(crate) fn filter(
        &mut self,
        messages: Vec<Message>,
        now_ms: u64,
        first: u64,
    ) -> (Vec<Message>, Vec<u64>) {
        if !self.enabled() {
            return (messages, Vec::new());
        }
        self.expire(now_ms);
        let mut fresh = Vec::with_capacity(messages.len());
        let mut duplicates = Vec::new();
        let mut in_call: HashMap<Bytes, u64> = HashMap::new();
        for message in messages {
            let id = message_id(&message.headers).filter(|id| id.len() <= MAX_MSG_ID_BYTES);
            let seen = id.and_then(|id| self.ids.get(id).or_else(|| in_call.get(id)));
            match (seen, id) {
                (Some(&offset), _) => duplicates.push(offset),
                (None, id) => {
                    if let Some(id) = id {
                        in_call.insert(id.clone(), first + fresh.len() as u64);
                    }
                    fresh.push(message);
                }
            }
        }
        (fresh, duplicates)
    }

    /// Remembers the ids of `messages`, stored from `first` on at `at_ms`.
    pub(crate) fn record(&mut self, messages: &[Message], first: u64, at_ms: u64) {
        if !self.enabled() {
            return;
        }
        for (i, message) in messages.iter().enumerate() {
            self.remember(message_id(&message.headers), first + i as u64, at_ms);
        }
    }

    /// Remembers one id (when the message has one that is not too long).
    pub(crate) fn remember(&mut self, id: Option<&Bytes>, offset: u64, at_ms: u64) {
        let Some(id) = id.filter(|id| id.len() <= MAX_MSG_ID_BYTES) else {
            return;
        };
        // The first message with an id keeps it.
        if let std::collections::hash_map::Entry::Vacant(vacant) = self.ids.entry(id.clone()) {
            vacant.insert(offset);
            self.order.push_back((at_ms, id.clone()));
        }
        if self.order.len() > MAX_DEDUPE_IDS {
            self.expire(at_ms);
        }
    }

    /// Ids remembered now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_id(id: &'static str) -> Message {
        Message {
            payload: Bytes::from_static(b"x"),
            headers: vec![Header {
                key: Bytes::from_static(b"quiver-msg-id"),
                value: Bytes::from_static(id.as_bytes()),
            }],
        }
    }

    #[test]
    fn repeats_within_the_window_are_dropped() {
        let mut dedupe = Dedupe::new(1000);
        let batch = vec![with_id("a"), with_id("b"), Message::new("no id")];
        let (fresh, dups) = dedupe.filter(batch, 10, 100);
        assert_eq!((fresh.len(), dups.len()), (3, 0));
        dedupe.record(&fresh, 100, 10);
        let (fresh, dups) = dedupe.filter(vec![with_id("b"), with_id("c")], 500, 103);
        assert_eq!(dups, [101]);
        assert_eq!(fresh.len(), 1);
        dedupe.record(&fresh, 103, 500);
        // "a" and "b" were stored at 10: forgotten once the window passes.
        let (fresh, dups) = dedupe.filter(vec![with_id("a"), with_id("c")], 1200, 104);
        assert_eq!((fresh.len(), dups.clone()), (1, vec![103]));
        assert_eq!(dedupe.len(), 1);
        let mut off = Dedupe::new(0);
        assert_eq!(
            off.filter(vec![with_id("a"), with_id("a")], 0, 0).0.len(),
            2
        );
        // Twice in one call: stored once, the second acknowledged with the first's offset.
        let mut dedupe = Dedupe::new(1000);
        let batch = vec![with_id("x"), with_id("y"), with_id("x"), with_id("y")];
        let (fresh, dups) = dedupe.filter(batch, 10, 7);
        assert_eq!((fresh.len(), dups), (2, vec![7, 8]));
    }
}
