//! Connection threads: each runs its own single-threaded tokio runtime with its
//! own epoll instance, and a connection handed to one stays there for its whole
//! life. A request is then read, run and answered on one thread with no
//! cross-thread wake-up (no futex, no work stealing), the way Redis's event
//! loop runs, while several such threads still use every core. The keyspace is
//! sharded, so threads only meet on a shard's lock.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::TcpStream;
use tokio::runtime::{Builder, Handle};

use super::shutdown::Shutdown;

/// A fixed set of connection threads.
#[derive(Debug)]
pub struct IoThreads {
    threads: Vec<IoThread>,
    /// Fired when the threads are dropped: each runtime then stops, dropping
    /// whatever connection task is still on it.
    stop: Shutdown,
}

#[derive(Debug)]
struct IoThread {
    runtime: Handle,
    /// Connections running on this thread, to place a new one on the least busy.
    connections: Arc<AtomicUsize>,
}

impl IoThreads {
    /// Starts `count` threads named `<name>-io-<n>`.
    pub fn start(name: &str, count: usize) -> io::Result<IoThreads> {
        let stop = Shutdown::new();
        let threads = (0..count.max(1))
            .map(|index| {
                let runtime = Builder::new_current_thread().enable_all().build()?;
                let handle = runtime.handle().clone();
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(format!("{name}-io-{index}"))
                    .spawn(move || runtime.block_on(stop.wait()))?;
                Ok(IoThread {
                    runtime: handle,
                    connections: Arc::new(AtomicUsize::new(0)),
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(IoThreads { threads, stop })
    }

    /// How many threads there are.
    pub fn count(&self) -> usize {
        self.threads.len()
    }

    /// Moves `stream` (accepted on another runtime) to the thread with the
    /// fewest connections and runs `serve(stream)` there.
    pub fn adopt<F, Fut>(&self, stream: TcpStream, serve: F) -> io::Result<()>
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let thread = self
            .threads
            .iter()
            .min_by_key(|thread| thread.connections.load(Ordering::Relaxed))
            .expect("IoThreads::start creates at least one thread");
        // Deregisters from the accepting runtime's reactor, so the target
        // runtime can register it with its own.
        let stream = stream.into_std()?;
        let connections = Arc::clone(&thread.connections);
        connections.fetch_add(1, Ordering::Relaxed);
        thread.runtime.spawn(async move {
            let _counted = Counted(connections);
            match TcpStream::from_std(stream) {
                Ok(stream) => serve(stream).await,
                Err(error) => {
                    tracing::warn!(%error, "could not register a connection with its thread");
                }
            }
        });
        Ok(())
    }
}

impl Drop for IoThreads {
    fn drop(&mut self) {
        self.stop.trigger();
    }
}

/// Decrements a thread's connection count when its connection task ends.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn adopted_connections_run_on_the_least_busy_thread() {
        let threads = IoThreads::start("test", 2).expect("threads");
        assert_eq!(threads.count(), 2);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (names, mut seen) = tokio::sync::mpsc::unbounded_channel();
        let mut clients = Vec::new();
        for _ in 0..4 {
            clients.push(TcpStream::connect(addr).await.expect("connect"));
            let (stream, _) = listener.accept().await.expect("accept");
            let names = names.clone();
            threads
                .adopt(stream, move |stream| async move {
                    let name = std::thread::current().name().map(str::to_owned);
                    let _ = names.send(name);
                    // Hold the connection (and the thread's count) until the client leaves.
                    let mut byte = [0u8; 1];
                    let _ = tokio::io::AsyncReadExt::read(&mut { stream }, &mut byte).await;
                })
                .expect("adopt");
            // Wait until the task runs so the next placement sees its count.
            let name = seen.recv().await.expect("name").expect("thread name");
            assert!(name.starts_with("test-io-"), "{name}");
        }
        let counts: Vec<_> = threads
            .threads
            .iter()
            .map(|thread| thread.connections.load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, vec![2, 2]);
        drop(clients);
    }
}
