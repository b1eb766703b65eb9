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

/// The connection threads; stopping them (on drop) ends every connection left.
#[derive(Debug)]
pub struct HttpThreads {
    threads: Vec<(Handle, Arc<AtomicUsize>)>,
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
        let threads = (0..count.max(1))
            .map(|index| {
                let runtime = Builder::new_current_thread().enable_all().build()?;
                let handle = runtime.handle().clone();
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(format!("http-io-{index}"))
                    .spawn(move || runtime.block_on(stop.wait()))?;
                Ok((handle, Arc::new(AtomicUsize::new(0))))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(HttpThreads { threads, stop })
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

impl HttpThreads {
    /// Keeps the threads until their last connection ends (the drain waits for the
    /// listener's connections), then stops them.
    pub fn retire(self) {
        let open = |threads: &HttpThreads| {
            threads
                .threads
                .iter()
                .map(|(_, count)| count.load(Ordering::Relaxed))
                .sum::<usize>()
        };
        let _ = std::thread::Builder::new()
            .name("http-retire".into())
            .spawn(move || {
                while open(&self) > 0 {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            });
    }
}

impl Drop for HttpThreads {
    fn drop(&mut self) {
        self.stop.trigger();
    }
}
