//! The state of one native connection after Hello: what was negotiated and which
//! subscriptions it holds.

use std::collections::HashMap;

use quiver_core::streams::GroupAcker;
use quiver_wire::limits::MAX_FRAME_LEN;
use quiver_wire::{
    Capabilities, ErrorCode, ErrorFrame, Hello, HelloOk, VERSION, negotiate_version,
};
use tokio::task::JoinHandle;

use super::NativeSettings;

/// Most live subscriptions on one connection: each holds a task and a broker queue, so
/// one client cannot take the broker's whole subscription limit.
pub const MAX_SUBSCRIPTIONS_PER_CONNECTION: usize = 1024;

/// Capabilities this server grants when asked; `DURABLE` too when it has a data directory.
const SUPPORTED: Capabilities = Capabilities(Capabilities::HEADERS.0 | Capabilities::CACHE.0);

/// A connection that said Hello.
#[derive(Debug)]
pub struct Session {
    /// What the server granted.
    pub capabilities: Capabilities,
    subscriptions: HashMap<u32, JoinHandle<()>>,
    /// Ack handles of the subscriptions that are consumer-group memberships.
    ackers: HashMap<u32, GroupAcker>,
    next_id: u32,
}

impl Session {
    /// Answers `hello`: HelloOk and the session, or the closing Error.
    pub fn open(
        hello: &Hello,
        settings: &NativeSettings,
        durable: bool,
    ) -> Result<(Session, HelloOk), ErrorFrame> {
        let Some(version) = negotiate_version(hello.min_version, hello.max_version) else {
            return Err(ErrorFrame::new(
                ErrorCode::UNSUPPORTED_VERSION,
                &format!(
                    "the client speaks versions {}..={}; this server speaks version {VERSION}",
                    hello.min_version, hello.max_version
                ),
            ));
        };
        if let Some(expected) = &settings.auth_token
            && !same_token(expected, &hello.auth_token)
        {
            let message = if hello.auth_token.is_empty() {
                "this server needs an auth token (its native.auth_token) and Hello carried none"
            } else {
                "the auth token in Hello does not match the server's native.auth_token"
            };
            return Err(ErrorFrame::new(ErrorCode::AUTH_FAILED, message));
        }
        let supported = if durable {
            Capabilities(SUPPORTED.0 | Capabilities::DURABLE.0)
        } else {
            SUPPORTED
        };
        let capabilities = hello.capabilities.intersect(supported);
        let session = Session {
            capabilities,
            subscriptions: HashMap::new(),
            ackers: HashMap::new(),
            next_id: 1,
        };
        let ok = HelloOk {
            version,
            capabilities,
            max_frame_len: MAX_FRAME_LEN as u32,
            server_name: format!("quiver {}", env!("CARGO_PKG_VERSION")),
        };
        Ok((session, ok))
    }

    /// Whether the client may use `capability`.
    pub fn granted(&self, capability: Capabilities) -> bool {
        self.capabilities.contains(capability)
    }

    /// A fresh subscription id, or `None` at the per-connection limit.
    pub fn next_subscription_id(&mut self) -> Option<u32> {
        self.subscriptions.retain(|_, task| !task.is_finished());
        let live = &self.subscriptions;
        self.ackers.retain(|id, _| live.contains_key(id));
        if self.subscriptions.len() >= MAX_SUBSCRIPTIONS_PER_CONNECTION {
            return None;
        }
        loop {
            let id = self.next_id;
            self.next_id = self.next_id.wrapping_add(1).max(1);
            if !self.subscriptions.contains_key(&id) {
                return Some(id);
            }
        }
    }

    /// Records the delivery task of subscription `id`.
    pub fn insert(&mut self, id: u32, task: JoinHandle<()>) {
        self.subscriptions.insert(id, task);
    }

    /// Records the ack handle of membership `id`.
    pub fn insert_acker(&mut self, id: u32, acker: GroupAcker) {
        self.ackers.insert(id, acker);
    }

    /// The ack handle of membership `id`, if it is one of this connection's.
    pub fn acker(&self, id: u32) -> Option<&GroupAcker> {
        self.ackers.get(&id)
    }

    /// Takes subscription `id`'s task out of the session.
    pub fn remove(&mut self, id: u32) -> Option<JoinHandle<()>> {
        self.ackers.remove(&id);
        self.subscriptions.remove(&id)
    }

    /// Resolves once every subscription's task has ended by itself (at shutdown, once
    /// the broker ended their subscriptions after what they had queued).
    pub async fn ended(&mut self) {
        for task in self.subscriptions.values_mut() {
            if !task.is_finished() {
                let _ = task.await;
            }
        }
    }

    /// Stops every subscription's task (their broker subscriptions end with them).
    pub fn close(&mut self) {
        self.ackers.clear();
        for (_, task) in self.subscriptions.drain() {
            task.abort();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
    }
}

/// Compares tokens in time independent of where they differ.
fn same_token(expected: &[u8], given: &[u8]) -> bool {
    expected.len() == given.len()
        && expected
            .iter()
            .zip(given)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn hello(min: u8, max: u8, token: &'static [u8]) -> Hello {
        Hello {
            min_version: min,
            max_version: max,
            capabilities: Capabilities(u64::MAX),
            client_name: "test".to_owned(),
            auth_token: Bytes::from_static(token),
        }
    }

    #[test]
    fn negotiates_version_capabilities_and_token() {
        let settings = NativeSettings {
            auth_token: Some(Bytes::from_static(b"secret")),
        };
        let (session, ok) =
            Session::open(&hello(1, 3, b"secret"), &settings, false).expect("accepted");
        assert_eq!(ok.version, 1);
        assert_eq!(ok.capabilities, SUPPORTED);
        assert!(session.granted(Capabilities::CACHE));
        assert!(!session.granted(Capabilities::DURABLE));
        let (durable, _) =
            Session::open(&hello(1, 3, b"secret"), &settings, true).expect("accepted");
        assert!(durable.granted(Capabilities::DURABLE));
        let error =
            Session::open(&hello(1, 1, b"wrong!"), &settings, false).expect_err("bad token");
        assert_eq!(error.code, ErrorCode::AUTH_FAILED);
        let error =
            Session::open(&hello(2, 3, b"secret"), &settings, false).expect_err("no version");
        assert_eq!(error.code, ErrorCode::UNSUPPORTED_VERSION);
    }

    #[tokio::test]
    async fn subscription_ids_are_never_zero_or_reused_while_live() {
        let (mut session, _) =
            Session::open(&hello(1, 1, b""), &NativeSettings::default(), false).expect("accepted");
        session.next_id = u32::MAX;
        let first = session.next_subscription_id().expect("room");
        session.insert(first, tokio::spawn(std::future::pending()));
        let second = session.next_subscription_id().expect("room");
        assert_eq!((first, second), (u32::MAX, 1));
        session.close();
    }
}
