//! CLIENT PAUSE and CLIENT UNPAUSE: for a while, commands of every client wait (`ALL`),
//! or only those that may write (`WRITE`), as in Redis 7.0, where even CLIENT UNPAUSE
//! waits out an `ALL` pause.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// The pause in force, if any.
#[derive(Debug, Default)]
pub struct Pause {
    /// Whether a pause was set and not lifted: every command reads it, so the lock is
    /// taken only while one may be in force.
    set: AtomicBool,
    state: Mutex<Option<Paused>>,
    /// Wakes waiting clients when the pause is lifted or changed.
    changed: Notify,
}

#[derive(Debug, Clone, Copy)]
struct Paused {
    until: Instant,
    /// `ALL` (every command) rather than `WRITE`.
    all: bool,
}

impl Pause {
    /// CLIENT PAUSE: a pause in force is extended and made stricter, never shortened.
    pub fn pause(&self, until: Instant, all: bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = Some(match *state {
            Some(p) if p.until > Instant::now() => Paused {
                until: p.until.max(until),
                all: p.all || all,
            },
            _ => Paused { until, all },
        });
        self.set.store(true, Ordering::Release);
        drop(state);
        self.changed.notify_waiters();
    }

    /// CLIENT UNPAUSE.
    pub fn unpause(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = None;
        self.set.store(false, Ordering::Release);
        drop(state);
        self.changed.notify_waiters();
    }

    /// Until when a command waits; `writes`: it may write (or replicate).
    pub fn holds(&self, writes: bool) -> Option<Instant> {
        if !self.set.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match *state {
            Some(p) if p.until > Instant::now() => (p.all || writes).then_some(p.until),
            // Over: the next commands skip the lock again.
            _ => {
                *state = None;
                self.set.store(false, Ordering::Release);
                None
            }
        }
    }

    /// Waits until `until`, or until the pause is lifted or changed (the caller checks
    /// again).
    pub async fn wait(&self, until: Instant) {
        let changed = self.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        // Lifted or changed between the caller's check and now: no wait.
        let current = self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map(|p| p.until);
        if current != Some(until) {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep_until(until.into()) => {}
            () = changed => {}
        }
    }
}
