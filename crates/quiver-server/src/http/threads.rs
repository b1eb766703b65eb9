//! The HTTP listener's connection threads: one single-threaded runtime per core, each
//! connection served start to end on the one with the fewest connections.
//!
//! Measured against tokio's work-stealing runtime on 2 cores with `wrk -t2 -c100`
//! (docs/benchmarks.md, "HTTP gateway"): a request served where its connection lives
//! costs no cross-thread wake-up and no stealing, and `/health` answers about 1.4 times as
//! many requests a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::TcpStream;
use tokio::runtime::{Builder, Handle};

use crate::serve::shutdown::Shutdown;

/// How long stopping the threads waits for the blocking work they started.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The connection threads; stopping them (on drop) ends every connection left, so the
/// server drops them once the drain is over, before the stores close.
#[derive(Debug)]
pub struct HttpThreads {
    threads: Vec<(Handle, Arc<AtomicUsize>)>,
    joins: Vec<std::thread::JoinHandle<()>>,
    stop: Shutdown,
}

/// Counts a connection on its thread until dropped.
struct Seat(Arc<AtomicUsize>);

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl HttpThreads {
    /// `count` threads named `http-io-<n>`.
    pub fn start(count: usize) -> std::io::Result<HttpThreads> {
        let stop = Shutdown::new();
        let mut joins = Vec::new();
        let threads = (0..count.max(1))
            .map(|index| {
                let runtime = Builder::new_current_thread().enable_all().build()?;
                let handle = runtime.handle().clone();
                let stop = stop.clone();
                joins.push(
                    std::thread::Builder::new()
                        .name(format!("http-io-{index}"))
                        .spawn(move || {
                            runtime.block_on(stop.wait());
                            runtime.shutdown_timeout(SHUTDOWN_WAIT);
                        })?,
                );
                Ok((handle, Arc::new(AtomicUsize::new(0))))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(HttpThreads {
            threads,
            joins,
            stop,
        })
    }

    /// Runs `serve(stream)` on the thread with the fewest connections.
    pub fn adopt<F, Fut>(&self, stream: TcpStream, serve: F) -> std::io::Result<()>
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // Leaves the accepting runtime's reactor, to join the target's.
        let stream = stream.into_std()?;
        let (handle, count) = self
            .threads
            .iter()
            .min_by_key(|(_, count)| count.load(Ordering::Relaxed))
            .expect("at least one thread");
        count.fetch_add(1, Ordering::Relaxed);
        let seat = Seat(Arc::clone(count));
        handle.spawn(async move {
            let _seat = seat;
            match TcpStream::from_std(stream) {
                Ok(stream) => serve(stream).await,
                Err(error) => tracing::warn!(%error, "could not register an HTTP connection"),
            }
        });
        Ok(())
    }
}

impl Drop for HttpThreads {
    /// Ends every connection left and waits for the threads (a blocking task they started
    /// gets [`SHUTDOWN_WAIT`]).
    fn drop(&mut self) {
        self.stop.trigger();
        for join in self.joins.drain(..) {
            let _ = join.join();
        }
    }
}
