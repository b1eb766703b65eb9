//! ACL LOG: the commands, keys, channels and logins that were refused, newest first; a
//! refusal like one logged in the last minute counts on that entry.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use quiver_resp::{Reply, Request};

use super::{Denied, User};
use crate::resp::table::CommandSpec;

/// Refusals this close to an equal entry count on it.
const MERGE_WINDOW: Duration = Duration::from_secs(60);

/// One kind of refusal.
#[derive(Debug, Clone)]
struct Entry {
    count: u64,
    reason: &'static str,
    context: &'static str,
    object: String,
    username: String,
    /// The last refusal it counts.
    at: Instant,
    client_info: String,
}

/// A refusal to log.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// `command`, `key`, `channel` or `auth`.
    pub reason: &'static str,
    /// `toplevel`, `multi` or `lua`.
    pub context: &'static str,
    /// The command, key or channel refused (`auth` for a login).
    pub object: String,
    pub username: String,
    /// The client's `CLIENT LIST` line.
    pub client_info: String,
}

impl Refusal {
    /// The refusal of `request` (resolved to `spec`) to `user`, for `denied`.
    pub fn of(
        spec: &CommandSpec,
        request: &Request,
        denied: Denied,
        user: &User,
        context: &'static str,
        client_info: String,
    ) -> Refusal {
        let arg =
            |pos: usize| String::from_utf8_lossy(request.arg(pos).unwrap_or_default()).into_owned();
        let (reason, object) = match denied {
            Denied::Command => ("command", spec.name.to_owned()),
            Denied::Key(pos) => ("key", arg(pos)),
            Denied::Channel(pos) => ("channel", arg(pos)),
        };
        Refusal {
            reason,
            context,
            object,
            username: String::from_utf8_lossy(&user.name).into_owned(),
            client_info,
        }
    }
}

/// The log, newest first.
#[derive(Debug, Default)]
pub struct Log {
    entries: VecDeque<Entry>,
}

impl Log {
    /// Logs `refusal`, keeping at most `max_len` entries (`acllog-max-len`).
    pub fn add(&mut self, refusal: Refusal, max_len: usize) {
        let now = Instant::now();
        let same = self.entries.iter_mut().find(|e| {
            e.reason == refusal.reason
                && e.context == refusal.context
                && e.object == refusal.object
                && e.username == refusal.username
                && now.duration_since(e.at) < MERGE_WINDOW
        });
        if let Some(entry) = same {
            entry.count += 1;
            entry.at = now;
            entry.client_info = refusal.client_info;
            return;
        }
        self.entries.push_front(Entry {
            count: 1,
            reason: refusal.reason,
            context: refusal.context,
            object: refusal.object,
            username: refusal.username,
            at: now,
            client_info: refusal.client_info,
        });
        self.entries.truncate(max_len);
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }

    /// ACL LOG [count]: the newest `count` entries as Redis 7.0 gives them.
    pub fn reply(&self, count: usize) -> Reply {
        let now = Instant::now();
        let entries = self.entries.iter().take(count).map(|e| {
            let text = |s: &str| Reply::bulk(s);
            let age = now.duration_since(e.at).as_millis() as f64 / 1000.0;
            Reply::Map(vec![
                (
                    text("count"),
                    Reply::Integer(i64::try_from(e.count).unwrap_or(i64::MAX)),
                ),
                (text("reason"), text(e.reason)),
                (text("context"), text(e.context)),
                (text("object"), text(&e.object)),
                (text("username"), text(&e.username)),
                (text("age-seconds"), Reply::Double(age)),
                (text("client-info"), text(&e.client_info)),
            ])
        });
        Reply::Array(entries.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(object: &str) -> Refusal {
        Refusal {
            reason: "command",
            context: "toplevel",
            object: object.to_owned(),
            username: "bob".to_owned(),
            client_info: "id=1".to_owned(),
        }
    }

    #[test]
    fn equal_refusals_count_on_one_entry_and_the_log_is_bounded() {
        let mut log = Log::default();
        log.add(refusal("get"), 2);
        log.add(refusal("get"), 2);
        log.add(refusal("set"), 2);
        log.add(refusal("del"), 2);
        let Reply::Array(entries) = log.reply(10) else {
            panic!("an array")
        };
        assert_eq!(entries.len(), 2);
        let Reply::Map(newest) = &entries[0] else {
            panic!("a map")
        };
        assert_eq!(newest[3].1, Reply::bulk("del"));
        log.reset();
        assert_eq!(log.reply(10), Reply::Array(Vec::new()));
    }
}
