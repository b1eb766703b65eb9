//! RESP's connection threads: everything that decides which thread serves a
//! connection, behind one small interface ([`Threads::start`],
//! [`Threads::adopt`] and a connection's [`Seat`]). The connection code asks
//! its seat, between requests, whether to move ([`Seat::move_wanted`]),
//! counts what it served ([`Seat::served`]) and moves ([`Seat::relocate`]);
//! nothing else of the machinery shows.
//!
//! Each thread runs its own single-threaded tokio runtime with its own epoll
//! instance, so a request is read, run and answered on one thread with no
//! cross-thread wake-up (no futex, no work stealing), the way Redis's event
//! loop runs. The keyspace is sharded, so threads only meet on a shard's lock.
//!
//! With a fixed count ([`Count::Fixed`]) every thread serves from the start
//! and connections go to the one with the fewest. With [`Count::Auto`] there
//! is one thread per core, and threads are put to work only when the load
//! needs them: a balancer ([`balance`], sans-IO) measures how busy each
//! thread is; while the active threads keep up, connections stay on them, and
//! idle threads leave the cores to other processes (a client on the same
//! machine, for one). When every active thread is saturated, one more is
//! tried and takes over a fair share of the connections; when the load would
//! fit on fewer threads, the last active one hands its connections back. A
//! connection moves only between requests, with its replies written, so a
//! move is invisible to the client. Either way a thread that has just served
//! a read of a few requests polls its sockets for a moment before it sleeps
//! ([`poll`]), while a core is left over.

use std::fs::File;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::runtime::{Builder, Handle, Runtime};

use crate::serve::shutdown::Shutdown;
use balance::{Change, Load, Sample};
use idle_cpu::IdleCpu;
use poll::Polled;

mod balance;
mod idle_cpu;
mod poll;
mod trace;

/// How often the balancer looks at the threads' load.
const TICK: Duration = Duration::from_millis(20);
/// Reads of at most this many requests are the work a thread polls for
/// (see [`poll`]): single requests, or a transaction's few. Larger reads are
/// pipelines (see [`is_pipeline`]).
const POLLED_READ: u64 = 4;

/// Whether a read of `requests` is a pipeline: its client sends the next
/// batch while this one is served, rather than waiting on each answer.
pub fn is_pipeline(requests: u64) -> bool {
    requests > POLLED_READ
}

/// How many connection threads serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// One thread per core, of which the balancer decides how many serve.
    Auto,
    /// Exactly this many, all serving.
    Fixed(usize),
}

/// How the connection threads run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub count: Count,
    /// How long a thread keeps polling for work after its last before it
    /// sleeps; zero never polls.
    pub poll: Duration,
    /// Where the balancer writes each tick's sample and decision (see
    /// [`trace::Trace`]), if anywhere.
    pub trace: Option<PathBuf>,
}

/// The connection threads, and with [`Count::Auto`] the balancer that decides
/// how many of them serve connections.
#[derive(Debug)]
pub struct Threads {
    pool: Arc<Pool>,
    /// Fired when the threads are dropped: each runtime then stops, dropping
    /// whatever connection task is still on it, and the balancer exits.
    stop: Shutdown,
}

#[derive(Debug)]
struct Pool {
    threads: Vec<IoThread>,
    /// Threads `0..active` take new connections; connections on the others
    /// move to an active thread at their next request.
    active: AtomicUsize,
    /// Whether threads poll before they sleep (see [`poll`]), which they do
    /// only while fewer are active than the process has cores.
    polls: bool,
    cores: usize,
}

#[derive(Debug)]
struct IoThread {
    runtime: Handle,
    /// Connections running on this thread.
    connections: AtomicUsize,
    /// Connections the balancer wants moved off this thread to `move_to`.
    move_quota: AtomicUsize,
    move_to: AtomicUsize,
    /// Requests served on this thread, for the balancer.
    served: Counter,
    /// Reads of at most [`POLLED_READ`] requests, for the poller.
    small_reads: Counter,
    /// Nanoseconds this thread spent polling for work without finding any
    /// (see [`poll`]): busy to the runtime, idle to the balancer.
    polled: Counter,
}

/// A counter on a cache line of its own, so threads counting their own work
/// do not contend.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Counter(AtomicU64);

impl Threads {
    /// Starts the threads, named `resp-io-<n>`, and with [`Count::Auto`] on
    /// more than one core a balancer thread named `resp-balance`.
    pub fn start(settings: Settings) -> io::Result<Threads> {
        let (count, active) = match settings.count {
            Count::Auto => (cores(), 1),
            Count::Fixed(count) => (count.max(1), count.max(1)),
        };
        let trace = match &settings.trace {
            Some(path) if count > active => Some(trace::Trace::create(path, count)?),
            Some(path) => {
                tracing::warn!(
                    path = %path.display(),
                    "resp.balance_trace is not written: no balancer runs (resp.io_threads is a number, or the process may run on one core)"
                );
                None
            }
            None => None,
        };
        Threads::launch(count, active, settings.poll, trace)
    }

    /// Starts `count` threads of which `active` serve, with a balancer when
    /// there are more than that.
    fn launch(
        count: usize,
        active: usize,
        poll: Duration,
        trace: Option<trace::Trace<File>>,
    ) -> io::Result<Threads> {
        let stop = Shutdown::new();
        let threads = (0..count)
            .map(|index| {
                let runtime = connection_runtime()?;
                let handle = runtime.handle().clone();
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(format!("resp-io-{index}"))
                    .spawn(move || runtime.block_on(stop.wait()))?;
                Ok(IoThread {
                    runtime: handle,
                    connections: AtomicUsize::new(0),
                    move_quota: AtomicUsize::new(0),
                    move_to: AtomicUsize::new(0),
                    served: Counter::default(),
                    small_reads: Counter::default(),
                    polled: Counter::default(),
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let pool = Arc::new(Pool {
            threads,
            active: AtomicUsize::new(active),
            polls: !poll.is_zero(),
            cores: cores(),
        });
        if pool.polls {
            for (index, thread) in pool.threads.iter().enumerate() {
                let polled = ThreadPoll {
                    pool: Arc::clone(&pool),
                    index,
                };
                thread.runtime.spawn(poll::run(polled, poll));
            }
        }
        if count > active {
            let pool = Arc::clone(&pool);
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("resp-balance".to_owned())
                .spawn(move || balance(&pool, &stop, trace))?;
        }
        Ok(Threads { pool, stop })
    }

    /// How many threads there are.
    pub fn count(&self) -> usize {
        self.pool.threads.len()
    }

    /// Moves `stream` (accepted on another runtime) to the active thread with
    /// the fewest connections and runs `serve(stream, seat)` there.
    pub fn adopt<F, Fut>(&self, stream: TcpStream, serve: F) -> io::Result<()>
    where
        F: FnOnce(TcpStream, Seat) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let target = self.pool.least_busy_active();
        Pool::run_on(&self.pool, target, stream, serve)
    }
}

/// A connection thread's runtime. Connections arriving from another thread
/// (accepted, or moved here) are taken before the next local task: with
/// tokio's default (every 31st task) a thread busy with hundreds of ready
/// connections takes in a newcomer every few milliseconds, and the last of a
/// move of hundreds would wait most of a second.
fn connection_runtime() -> io::Result<Runtime> {
    Builder::new_current_thread()
        .enable_all()
        .global_queue_interval(1)
        .build()
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.stop.trigger();
    }
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

impl Pool {
    /// Whether a thread may poll now: with every core serving, a polling
    /// thread would take time from the others.
    fn may_poll(&self) -> bool {
        self.polls && self.active.load(Ordering::Relaxed) < self.cores
    }

    fn least_busy_active(&self) -> usize {
        let active = self.active.load(Ordering::Relaxed);
        (0..active)
            .min_by_key(|&index| self.threads[index].connections.load(Ordering::Relaxed))
            .expect("at least one thread is always active")
    }

    fn run_on<F, Fut>(pool: &Arc<Pool>, index: usize, stream: TcpStream, serve: F) -> io::Result<()>
    where
        F: FnOnce(TcpStream, Seat) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // Deregisters from the current runtime's reactor, so the target
        // runtime can register it with its own.
        let stream = stream.into_std()?;
        let thread = &pool.threads[index];
        thread.connections.fetch_add(1, Ordering::Relaxed);
        let seat = Seat {
            pool: Arc::clone(pool),
            index,
        };
        thread.runtime.spawn(async move {
            match TcpStream::from_std(stream) {
                Ok(stream) => serve(stream, seat).await,
                Err(error) => {
                    tracing::warn!(%error, "could not register a connection with its thread");
                }
            }
        });
        Ok(())
    }
}

/// A connection's place on a connection thread; counted in the thread's
/// connections until dropped.
#[derive(Debug)]
pub struct Seat {
    pool: Arc<Pool>,
    index: usize,
}

impl Seat {
    /// The thread this connection should move to, if the balancer wants it
    /// moved. Asked between requests; cheap when no move is wanted.
    pub fn move_wanted(&self) -> Option<usize> {
        let pool = &self.pool;
        if self.index >= pool.active.load(Ordering::Relaxed) {
            return Some(pool.least_busy_active());
        }
        let thread = &pool.threads[self.index];
        thread
            .move_quota
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .ok()
            .map(|_| thread.move_to.load(Ordering::Relaxed))
    }

    /// Counts `requests` served by one read, for the balancer and the
    /// thread's poller.
    pub fn served(&self, requests: u64) {
        let thread = &self.pool.threads[self.index];
        thread.served.0.fetch_add(requests, Ordering::Relaxed);
        // A poller that may not poll is left asleep: waking it for nothing
        // costs a task switch per read.
        if (1..=POLLED_READ).contains(&requests) && self.pool.may_poll() {
            thread.small_reads.0.fetch_add(1, Ordering::Relaxed);
            poll::work_done();
        }
    }

    /// Continues the connection on thread `target`: `stream` leaves this
    /// thread's reactor and `serve(stream, seat)` runs there.
    pub fn relocate<F, Fut>(self, target: usize, stream: TcpStream, serve: F) -> io::Result<()>
    where
        F: FnOnce(TcpStream, Seat) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let pool = Arc::clone(&self.pool);
        drop(self);
        Pool::run_on(&pool, target, stream, serve)
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.pool.threads[self.index]
            .connections
            .fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a connection thread's poller sees of it.
struct ThreadPoll {
    pool: Arc<Pool>,
    index: usize,
}

impl Polled for ThreadPoll {
    fn served(&self) -> u64 {
        self.pool.threads[self.index]
            .small_reads
            .0
            .load(Ordering::Relaxed)
    }

    fn polled(&self, nanos: u64) {
        self.pool.threads[self.index]
            .polled
            .0
            .fetch_add(nanos, Ordering::Relaxed);
    }

    fn allowed(&self) -> bool {
        self.pool.may_poll()
    }
}

/// The balancer's loop: every [`TICK`], samples each thread's busy time and
/// the requests served, and applies what [`Load`] decides. Time a thread
/// spent polling for work is idle time to it, not busy. Each tick goes to
/// `trace` as well, if there is one.
fn balance(pool: &Pool, stop: &Shutdown, mut trace: Option<trace::Trace<File>>) {
    let busy_seconds = |thread: &IoThread| {
        let polled = Duration::from_nanos(thread.polled.0.load(Ordering::Relaxed));
        thread
            .runtime
            .metrics()
            .worker_total_busy_duration(0)
            .saturating_sub(polled)
            .as_secs_f64()
    };
    let served = || -> u64 {
        pool.threads
            .iter()
            .map(|thread| thread.served.0.load(Ordering::Relaxed))
            .sum()
    };
    let mut last_busy: Vec<f64> = pool.threads.iter().map(busy_seconds).collect();
    let mut last_served = served();
    let mut last_at = Instant::now();
    let mut load = Load::new(pool.threads.len());
    let mut idle_cpu = IdleCpu::new();
    while !stop.is_triggered() {
        std::thread::sleep(TICK);
        let now = Instant::now();
        let seconds = now.duration_since(last_at).as_secs_f64();
        last_at = now;
        let busy_now: Vec<f64> = pool.threads.iter().map(busy_seconds).collect();
        let busy: Vec<f64> = busy_now
            .iter()
            .zip(&last_busy)
            .map(|(now, last)| (now - last) / seconds)
            .collect();
        last_busy = busy_now;
        let served_now = served();
        let requests = served_now.wrapping_sub(last_served);
        last_served = served_now;
        let sample = Sample {
            busy: &busy,
            requests,
            seconds,
            connections: pool
                .threads
                .iter()
                .map(|thread| thread.connections.load(Ordering::Relaxed))
                .sum(),
            idle_cores: idle_cpu.cores(),
        };
        let active = match load.tick(sample) {
            Some(Change::Spread { active }) => {
                pool.spread(active);
                active
            }
            Some(Change::Gather { active }) => {
                pool.gather(active);
                active
            }
            None => pool.active.load(Ordering::Relaxed),
        };
        if let Some(writer) = &mut trace
            && let Err(error) = writer.record(&sample, active)
        {
            tracing::warn!(%error, "the balancer's trace stopped: it could not be written");
            trace = None;
        }
    }
}

impl Pool {
    /// Makes thread `active - 1` active and asks the others to send it
    /// enough connections to even out.
    fn spread(&self, active: usize) {
        let newcomer = active - 1;
        let counts: Vec<usize> = self
            .threads
            .iter()
            .map(|thread| thread.connections.load(Ordering::Relaxed))
            .collect();
        let fair = counts.iter().sum::<usize>() / active;
        self.active.store(active, Ordering::Relaxed);
        for (thread, &count) in self.threads.iter().zip(&counts).take(newcomer) {
            thread.move_to.store(newcomer, Ordering::Relaxed);
            thread
                .move_quota
                .store(count.saturating_sub(fair), Ordering::Relaxed);
        }
        tracing::debug!(active, "connection threads: one more serves connections");
    }

    /// Makes thread `active` inactive: its connections move to the active
    /// ones at their next request.
    fn gather(&self, active: usize) {
        for thread in &self.threads {
            thread.move_quota.store(0, Ordering::Relaxed);
        }
        self.active.store(active, Ordering::Relaxed);
        tracing::debug!(active, "connection threads: one fewer serves connections");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A connection that always has work: each poll counts itself, works for
    /// 20 µs and wakes the task again.
    struct Busy(Arc<AtomicU64>);

    impl Future for Busy {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.0.fetch_add(1, Ordering::Relaxed);
            let start = Instant::now();
            while start.elapsed() < Duration::from_micros(20) {
                std::hint::spin_loop();
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn newcomers_do_not_wait_behind_a_busy_thread() {
        const BUSY: usize = 50;
        const NEWCOMERS: usize = 21;
        let runtime = connection_runtime().expect("runtime");
        let handle = runtime.handle().clone();
        let polls = Arc::new(AtomicU64::new(0));
        let (queued, first_polls) = runtime.block_on(async move {
            for _ in 0..BUSY {
                tokio::spawn(Busy(Arc::clone(&polls)));
            }
            // Newcomers are handed over from another thread, as the accept
            // loop and moves do. Each notes the busy tasks' polls when it was
            // queued and when it first ran.
            let (started, mut first_polls) = tokio::sync::mpsc::unbounded_channel();
            let spawner = std::thread::spawn(move || {
                (0..NEWCOMERS)
                    .map(|index| {
                        let started = started.clone();
                        let polls_now = Arc::clone(&polls);
                        handle.spawn(async move {
                            let _ = started.send((index, polls_now.load(Ordering::Relaxed)));
                        });
                        let queued = polls.load(Ordering::Relaxed);
                        std::thread::sleep(Duration::from_micros(200));
                        queued
                    })
                    .collect::<Vec<u64>>()
            });
            let mut seen = vec![0; NEWCOMERS];
            while let Some((index, polls)) = first_polls.recv().await {
                seen[index] = polls;
            }
            (spawner.join().expect("spawner"), seen)
        });
        let mut waits: Vec<u64> = first_polls
            .iter()
            .zip(&queued)
            .map(|(first, queued)| first.saturating_sub(*queued))
            .collect();
        waits.sort_unstable();
        // With tokio's default (one from another thread every 31st task) a
        // newcomer arrives every 10 polls and is taken every 31: the waits
        // grow into the hundreds.
        let median = waits[NEWCOMERS / 2];
        assert!(median <= 1, "newcomers waited {waits:?} polls");
    }

    #[tokio::test]
    async fn connections_start_on_the_active_threads_and_move_when_asked() {
        let threads = Threads::launch(2, 1, Duration::ZERO, None).expect("threads");
        assert_eq!(threads.count(), 2);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (names, mut seen) = tokio::sync::mpsc::unbounded_channel();
        let mut clients = Vec::new();
        for _ in 0..2 {
            clients.push(TcpStream::connect(addr).await.expect("connect"));
            let (stream, _) = listener.accept().await.expect("accept");
            let names = names.clone();
            threads
                .adopt(stream, move |stream, seat| async move {
                    let _ = names.send(std::thread::current().name().map(str::to_owned));
                    // Wait until the balancer's decision is made by hand below.
                    while seat.move_wanted().is_none() {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    let names = names.clone();
                    seat.relocate(1, stream, move |stream, seat| async move {
                        let _seat = seat;
                        let _ = names.send(std::thread::current().name().map(str::to_owned));
                        let mut byte = [0u8; 1];
                        let _ = tokio::io::AsyncReadExt::read(&mut { stream }, &mut byte).await;
                    })
                    .expect("relocate");
                })
                .expect("adopt");
            let name = seen.recv().await.expect("name").expect("thread name");
            assert_eq!(name, "resp-io-0", "one thread is active at first");
        }
        let pool = &threads.pool;
        pool.threads[0].move_to.store(1, Ordering::Relaxed);
        pool.threads[0].move_quota.store(2, Ordering::Relaxed);
        for _ in 0..2 {
            let name = seen.recv().await.expect("name").expect("thread name");
            assert_eq!(name, "resp-io-1");
        }
        let counts: Vec<_> = pool
            .threads
            .iter()
            .map(|thread| thread.connections.load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, vec![0, 2]);
        drop(clients);
    }
}
