//! The keyspace held for a long while by one holder: the script thread keeps every shard
//! for a batch of scripts, and a script may run for seconds. A transport checks
//! [`Hold::held`] before it touches the keyspace and, if so, awaits [`Hold::settled`]
//! instead of a shard lock, so its thread keeps serving other clients (among them the one
//! that will stop the script). Once the holder is busy (a script past
//! `busy-reply-threshold`), a transport refuses instead of waiting (RESP's `BUSY`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Why a transport other than RESP refuses a request while the holder is busy.
pub const BUSY_TEXT: &str = "a script has run past busy-reply-threshold and holds the keyspace: retry once it ends (it can be stopped with SCRIPT KILL or FUNCTION KILL over RESP)";

/// Whether the keyspace is held, and whether its holder is busy.
#[derive(Debug, Default)]
pub struct Hold {
    held: AtomicBool,
    busy: AtomicBool,
    /// Fired when the keyspace is let go, and when the holder becomes busy.
    changed: Notify,
}

impl Hold {
    /// The holder has the keyspace (one atomic load: cheap enough before every command).
    pub fn held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    /// The holder has held it past `busy-reply-threshold`: others are refused.
    pub fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Called by the holder once it has every shard.
    pub fn take(&self) {
        self.held.store(true, Ordering::Release);
    }

    /// Called by the holder once it let every shard go.
    pub fn release(&self) {
        self.held.store(false, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// Marks the holder busy (`true`) or no longer busy.
    pub fn set_busy(&self, busy: bool) {
        if self.busy.swap(busy, Ordering::AcqRel) != busy {
            self.changed.notify_waiters();
        }
    }

    /// Resolves once the keyspace is let go, busy or not: for work that needs its shards.
    pub async fn released(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if !self.held() {
                return;
            }
            changed.await;
        }
    }

    /// Runs `work` (which takes shard locks) now or, while the keyspace is held, once it
    /// is let go, on the blocking pool: no thread that serves clients waits for it.
    pub fn after_release(self: &Arc<Self>, work: impl FnOnce() + Send + 'static) {
        if !self.held() {
            return work();
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return work();
        };
        let hold = Arc::clone(self);
        runtime.spawn(async move {
            hold.released().await;
            let _ = tokio::task::spawn_blocking(work).await;
        });
    }

    /// For a request of another transport (HTTP, native): waits, without holding its
    /// thread, until the keyspace is free; `false` when its holder is busy instead (refuse
    /// the request, saying [`BUSY_TEXT`]).
    pub async fn enter(&self) -> bool {
        if self.held() {
            self.settled().await;
        }
        !self.busy()
    }

    /// Resolves once the keyspace is let go or its holder is busy.
    pub async fn settled(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if !self.held() || self.busy() {
                return;
            }
            changed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn settled_waits_for_the_release_or_busy() {
        let hold = Arc::new(Hold::default());
        hold.settled().await;
        hold.take();
        let waiter = tokio::spawn({
            let hold = Arc::clone(&hold);
            async move { hold.settled().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        hold.set_busy(true);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        hold.set_busy(false);
        let waiter = tokio::spawn({
            let hold = Arc::clone(&hold);
            async move { hold.settled().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        hold.release();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
    }
}
