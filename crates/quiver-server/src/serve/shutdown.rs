//! Shutdown signalling: one `Shutdown` handle fires once, and every accept
//! loop and connection holds a cheap clone it can await.

use tokio::sync::watch;

/// A one-way "stop now" flag that many tasks can await.
#[derive(Debug, Clone)]
pub struct Shutdown {
    sender: std::sync::Arc<watch::Sender<bool>>,
    receiver: watch::Receiver<bool>,
}

impl Shutdown {
    /// A flag that has not fired.
    pub fn new() -> Shutdown {
        let (sender, receiver) = watch::channel(false);
        Shutdown {
            sender: std::sync::Arc::new(sender),
            receiver,
        }
    }

    /// Fires the flag; every waiter wakes. Firing twice is harmless.
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    /// Whether the flag has fired.
    pub fn is_triggered(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Resolves once the flag has fired.
    pub async fn wait(&self) {
        let mut receiver = self.receiver.clone();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = receiver.wait_for(|fired| *fired).await;
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

/// The signals the server handles, installed before anything else at start-up, so that
/// a signal during start-up waits for it and then drains (instead of killing the process
/// mid-way).
///
/// SIGINT and SIGTERM stop the server: the first one triggers the shutdown (graceful
/// drain); a second one exits the process at once with status 130. SIGHUP is ignored, as
/// Redis ignores it (its default would kill the process without a drain when the terminal
/// that started it goes away).
///
/// SIGXFSZ (a write past the file-size limit, `ulimit -f`) is caught and ignored for the
/// life of the process: such a write then fails with `EFBIG`, which the storage reports
/// (the cache refuses writes with `MISCONF`) instead of the process being killed.
pub struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers (within the tokio runtime).
    pub fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        /// SIGXFSZ on Linux.
        const SIGXFSZ: i32 = 25;
        // A handler stays installed once registered, even after its stream is dropped.
        drop(signal(SignalKind::from_raw(SIGXFSZ))?);
        drop(signal(SignalKind::hangup())?);
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Triggers `shutdown` at the first SIGINT or SIGTERM, exits at the second.
    pub async fn watch(mut self, shutdown: Shutdown) {
        tokio::select! {
            _ = self.interrupt.recv() => tracing::info!(signal = "SIGINT", "shutting down: draining in-flight work (send again to exit at once)"),
            _ = self.terminate.recv() => tracing::info!(signal = "SIGTERM", "shutting down: draining in-flight work (send again to exit at once)"),
        }
        shutdown.trigger();
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        tracing::warn!("second signal: exiting without waiting for the drain");
        std::process::exit(130);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiters_wake_on_trigger() {
        let shutdown = Shutdown::new();
        let waiter = tokio::spawn({
            let shutdown = shutdown.clone();
            async move { shutdown.wait().await }
        });
        assert!(!shutdown.is_triggered());
        shutdown.trigger();
        waiter.await.expect("waiter finishes");
        assert!(shutdown.is_triggered());
        shutdown.wait().await;
    }
}
