//! State shared by the operations endpoint and the serve loop: readiness
//! checks, listener counters and when the server started.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use quiver_core::streams::Broker;

use super::listener::ListenerStats;
use crate::config::Profile;

/// Readiness checks; `/ready` answers 200 only when all pass.
#[derive(Debug, Default)]
pub struct Readiness {
    storage_open: AtomicBool,
    listeners_bound: AtomicBool,
    /// Fired when the drain starts; long waits (a group fetch's) end on it.
    draining: super::shutdown::Shutdown,
}

/// One readiness check's outcome, for the `/ready` body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadyChecks {
    pub storage_open: bool,
    pub listeners_bound: bool,
    pub draining: bool,
}

impl ReadyChecks {
    /// Ready to take traffic.
    pub fn ready(self) -> bool {
        self.storage_open && self.listeners_bound && !self.draining
    }
}

impl Readiness {
    pub fn set_storage_open(&self) {
        self.storage_open.store(true, Ordering::Release);
    }

    pub fn set_listeners_bound(&self) {
        self.listeners_bound.store(true, Ordering::Release);
    }

    pub fn set_draining(&self) {
        self.draining.trigger();
    }

    /// Resolves once the drain has started (a long wait, such as a group fetch's, ends
    /// then rather than at the drain's deadline).
    pub async fn wait_draining(&self) {
        self.draining.wait().await;
    }

    /// The current outcome of every check.
    pub fn checks(&self) -> ReadyChecks {
        ReadyChecks {
            storage_open: self.storage_open.load(Ordering::Acquire),
            listeners_bound: self.listeners_bound.load(Ordering::Acquire),
            draining: self.draining.is_triggered(),
        }
    }
}

/// Everything the operations endpoint reports on.
#[derive(Debug)]
pub struct ServerState {
    pub started: Instant,
    pub profile: Profile,
    pub readiness: Readiness,
    pub listeners: Vec<Arc<ListenerStats>>,
    /// The streams broker, for its counters.
    pub broker: Broker,
    /// The Redis channels, for their counters.
    pub pubsub: quiver_core::pubsub::PubSub,
    /// The cache, for its snapshot figures.
    pub cache: std::sync::Arc<quiver_core::cache::Cache>,
    /// The HTTP gateway, for its admission figures.
    pub gateway: Arc<crate::http::gateway::Gateway>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_only_when_open_bound_and_not_draining() {
        let readiness = Readiness::default();
        assert!(!readiness.checks().ready());
        readiness.set_storage_open();
        assert!(!readiness.checks().ready());
        readiness.set_listeners_bound();
        assert!(readiness.checks().ready());
        readiness.set_draining();
        assert!(!readiness.checks().ready());
    }
}
