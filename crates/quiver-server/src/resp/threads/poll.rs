//! Polling before sleeping: a connection thread that has just served requests
//! keeps checking its sockets for a short while before it sleeps in
//! `epoll_wait`.
//!
//! A sleeping thread costs its clients: the kernel wakes it from inside the
//! client's `send`, and where the thread's CPU has gone idle (halted, on a
//! virtual machine) that wake-up is an inter-processor interrupt the sender
//! pays for. Under a steady stream of single requests (`redis-benchmark -P 1`,
//! say) the thread sleeps between almost every two of them, and the client
//! spends several percent of its CPU waking it. A thread that is still polling
//! when the request arrives needs no wake-up, and answers sooner.
//!
//! The window adapts the way the kernel's guest halt-polling does: it grows
//! while sleeps turn out short (work came back soon after the thread gave up)
//! and shrinks to nothing while they are long, so an idle or lightly loaded
//! server does not poll at all. Each round of polling also offers the CPU to
//! any other thread waiting for it (`sched_yield`), and the time spent polling
//! is counted so the balancer can tell it from work.
//!
//! Only reads of a few requests count as work here: a pipelining client
//! sends the next batch while the last is served, and polling for it only
//! took CPU from the client (measured: 5 to 25 % of the rate at `-P 128`).

use std::cell::Cell;
use std::future::poll_fn;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

thread_local! {
    /// The waker of this thread's poller while it sleeps.
    static SLEEPING: Cell<Option<Waker>> = const { Cell::new(None) };
}

/// Tells this thread's poller that requests were served: a sleeping poller
/// wakes and starts polling. Cheap when it is already polling.
pub fn work_done() {
    SLEEPING.with(|slot| {
        if let Some(waker) = slot.take() {
            waker.wake();
        }
    });
}

/// Resolves at the next [`work_done`] on this thread.
async fn until_work_done() {
    let mut waiting = false;
    poll_fn(move |cx| {
        let done = SLEEPING.with(|slot| {
            // `work_done` takes the waker: an empty slot after we left ours
            // means it ran.
            let ours = slot.take();
            let done = waiting && ours.is_none();
            if !done {
                slot.set(Some(cx.waker().clone()));
            }
            done
        });
        if done {
            Poll::Ready(())
        } else {
            waiting = true;
            Poll::Pending
        }
    })
    .await;
}

/// How long to keep polling after the last work, adapted to how long the
/// thread's sleeps turn out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    current: Duration,
    max: Duration,
}

impl Window {
    /// A window that starts closed and never exceeds `max`.
    pub fn new(max: Duration) -> Window {
        Window {
            current: Duration::ZERO,
            max,
        }
    }

    /// The window opens at a quarter of its bound and doubles from there.
    fn start(&self) -> Duration {
        self.max / 4
    }

    /// How long to poll now.
    pub fn current(&self) -> Duration {
        self.current
    }

    /// Learns from a sleep of `slept`: one shorter than the bound would have
    /// been caught by polling, so the window grows; a longer one means
    /// polling would have been in vain, so it shrinks, closing below its
    /// start.
    pub fn after_sleep(&mut self, slept: Duration) {
        if slept < self.max {
            self.current = (self.current * 2).max(self.start()).min(self.max);
        } else {
            self.current /= 2;
            if self.current < self.start() {
                self.current = Duration::ZERO;
            }
        }
    }
}

/// What a poller sees of its thread.
pub trait Polled {
    /// Work done on the thread so far, as a count: a change is work.
    fn served(&self) -> u64;
    /// Counts `nanos` spent polling with no work found.
    fn polled(&self, nanos: u64);
    /// Whether polling is allowed now (there is a core to spare for it, say).
    fn allowed(&self) -> bool;
}

/// Runs on a connection thread for as long as its runtime does, polling for
/// at most `max` after the last work.
pub async fn run(thread: impl Polled, max: Duration) {
    let mut window = Window::new(max);
    loop {
        let asleep = Instant::now();
        until_work_done().await;
        window.after_sleep(asleep.elapsed());
        if !window.current().is_zero() {
            poll(&thread, window.current()).await;
        }
    }
}

/// Polls until no work has come for `window`, or polling is no longer
/// allowed.
async fn poll(thread: &impl Polled, window: Duration) {
    let mut seen = thread.served();
    let mut last_work = Instant::now();
    let mut last = last_work;
    while thread.allowed() {
        // Lets the runtime check its sockets without blocking, and run
        // whatever they woke.
        tokio::task::yield_now().await;
        let now = Instant::now();
        let served = thread.served();
        if served != seen {
            seen = served;
            last_work = now;
        } else {
            thread.polled(u64::try_from((now - last).as_nanos()).unwrap_or(u64::MAX));
            if now - last_work >= window {
                return;
            }
            // Any other thread waiting for this CPU goes first.
            std::thread::yield_now();
        }
        last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    const MAX: Duration = Duration::from_micros(40);

    #[derive(Default)]
    struct Thread {
        served: AtomicU64,
        polled_ns: AtomicU64,
    }

    impl Polled for Arc<Thread> {
        fn served(&self) -> u64 {
            self.served.load(Ordering::Relaxed)
        }
        fn polled(&self, nanos: u64) {
            self.polled_ns.fetch_add(nanos, Ordering::Relaxed);
        }
        fn allowed(&self) -> bool {
            true
        }
    }

    #[test]
    fn the_window_grows_while_sleeps_are_short_and_closes_when_they_are_long() {
        let mut window = Window::new(MAX);
        assert_eq!(window.current(), Duration::ZERO);
        window.after_sleep(Duration::from_micros(5));
        assert_eq!(window.current(), Duration::from_micros(10));
        window.after_sleep(Duration::from_micros(5));
        assert_eq!(window.current(), Duration::from_micros(20));
        window.after_sleep(Duration::from_micros(39));
        assert_eq!(window.current(), MAX);
        window.after_sleep(Duration::from_micros(1));
        assert_eq!(window.current(), MAX, "never beyond its bound");
        window.after_sleep(Duration::from_millis(5));
        assert_eq!(window.current(), Duration::from_micros(20));
        window.after_sleep(MAX);
        assert_eq!(window.current(), Duration::from_micros(10));
        window.after_sleep(Duration::from_secs(1));
        assert_eq!(window.current(), Duration::ZERO, "closed below its start");
        window.after_sleep(Duration::from_secs(1));
        assert_eq!(window.current(), Duration::ZERO);
    }

    #[test]
    fn a_poller_sleeps_until_work_and_polls_while_work_keeps_coming() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let thread = Arc::new(Thread::default());
        let served = &thread.served;
        let polled_ns = &thread.polled_ns;
        runtime.block_on(async {
            tokio::spawn(run(Arc::clone(&thread), Duration::from_millis(20)));
            tokio::task::yield_now().await;
            // Asleep: no polling without work.
            tokio::time::sleep(Duration::from_millis(30)).await;
            assert_eq!(polled_ns.load(Ordering::Relaxed), 0);
            // Work after a short sleep opens the window; polling then stops
            // once no work has come for it.
            for _ in 0..3 {
                served.fetch_add(1, Ordering::Relaxed);
                work_done();
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let polled = polled_ns.load(Ordering::Relaxed);
            assert!(polled > 0, "polled after work");
            tokio::time::sleep(Duration::from_millis(100)).await;
            let settled = polled_ns.load(Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(polled_ns.load(Ordering::Relaxed), settled, "asleep again");
        });
    }
}
