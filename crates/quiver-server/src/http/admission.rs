//! Admission control in front of the gateway's data routes.
//!
//! Requests: at most `max_ccu` are in the gateway at once, counted exactly (one atomic
//! compare-and-swap to enter, one decrement when the response is done). Of those, at most
//! the *normal capacity* (`max_ccu × utilization`) are served at once; the others wait in
//! the queue the headroom makes, for at most `queue_timeout`. One request beyond
//! `max_ccu`, or one that waited its whole timeout, is refused with 503 and `Retry-After`
//! before its body is read. A place is held until the handler has made its response (a
//! long poll holds one while it waits); sending the response is not counted.
//!
//! Event streams (Server-Sent Events) live for minutes, not milliseconds: they have their
//! own bound (`max_event_streams`) and never hold a place of the request budget.
//!
//! Rate limits: an optional token bucket per client address refills `rate` tokens a
//! second up to `burst`; a request finding it empty gets 429.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a request was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `max_ccu` requests are in the gateway already.
    Full,
    /// It waited `queue_timeout` in the queue without getting a place.
    QueueTimeout,
}

/// Counts one more in `count` unless it is at `max` already (one compare-and-swap loop:
/// concurrent takers never get past `max` together).
fn take_place(count: &AtomicUsize, max: usize) -> bool {
    count
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .is_ok()
}

/// The request budget.
#[derive(Debug)]
pub struct Admission {
    max: usize,
    normal: usize,
    queue_timeout: Duration,
    /// Requests in the gateway: served plus waiting.
    inside: AtomicUsize,
    /// Requests waiting for a place.
    waiting: AtomicUsize,
    serving: Arc<Semaphore>,
    pub refused_full: AtomicU64,
    pub refused_timeout: AtomicU64,
    pub admitted: AtomicU64,
}

/// A request's place; dropping it lets the next one in.
#[derive(Debug)]
pub struct Admitted {
    admission: Arc<Admission>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.admission.inside.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Decrements the waiting count however the wait ends (also when the request is dropped).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Leaves the gateway unless disarmed (a refused or cancelled wait).
struct Inside<'a>(Option<&'a AtomicUsize>);

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        if let Some(inside) = self.0 {
            inside.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Admission {
    /// `utilization` in percent (1 to 100); the normal capacity is at least 1.
    pub fn new(max_ccu: u32, utilization: u32, queue_timeout: Duration) -> Arc<Self> {
        let max = max_ccu.max(1) as usize;
        let normal = (max * utilization.clamp(1, 100) as usize / 100).max(1);
        Arc::new(Self {
            max,
            normal,
            queue_timeout,
            inside: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            serving: Arc::new(Semaphore::new(normal)),
            refused_full: AtomicU64::new(0),
            refused_timeout: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
        })
    }

    /// Enters the gateway, waiting in the queue when every place is taken.
    pub async fn enter(self: &Arc<Self>) -> Result<Admitted, Refusal> {
        if !take_place(&self.inside, self.max) {
            self.refused_full.fetch_add(1, Ordering::Relaxed);
            return Err(Refusal::Full);
        }
        let mut inside = Inside(Some(&self.inside));
        let permit = match Arc::clone(&self.serving).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.waiting.fetch_add(1, Ordering::AcqRel);
                let _waiting = Waiting(&self.waiting);
                let wait = Arc::clone(&self.serving).acquire_owned();
                match tokio::time::timeout(self.queue_timeout, wait).await {
                    Ok(Ok(permit)) => permit,
                    _ => {
                        self.refused_timeout.fetch_add(1, Ordering::Relaxed);
                        return Err(Refusal::QueueTimeout);
                    }
                }
            }
        };
        inside.0 = None;
        self.admitted.fetch_add(1, Ordering::Relaxed);
        Ok(Admitted {
            admission: Arc::clone(self),
            _permit: permit,
        })
    }

    /// Requests in the gateway now (served plus waiting).
    pub fn inside(&self) -> usize {
        self.inside.load(Ordering::Acquire)
    }

    /// Requests waiting for a place now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// `max_ccu`.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The normal capacity: requests served at once.
    pub fn normal(&self) -> usize {
        self.normal
    }

    /// Requests in the gateway as a percentage of `max_ccu`.
    pub fn utilization_percent(&self) -> f64 {
        self.inside() as f64 * 100.0 / self.max as f64
    }

    /// Seconds a refused client is told to wait: one when the queue is the problem.
    pub fn retry_after_secs(&self) -> u64 {
        self.queue_timeout.as_secs().max(1)
    }
}

/// The bound on open event streams.
#[derive(Debug)]
pub struct EventSlots {
    max: usize,
    open: AtomicUsize,
    pub refused: AtomicU64,
}

/// An open event stream's place.
#[derive(Debug)]
pub struct EventSlot(Arc<EventSlots>);

impl Drop for EventSlot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl EventSlots {
    pub fn new(max: u32) -> Arc<Self> {
        Arc::new(Self {
            max: max as usize,
            open: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        })
    }

    pub fn take(self: &Arc<Self>) -> Option<EventSlot> {
        if !take_place(&self.open, self.max) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(EventSlot(Arc::clone(self)))
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    pub fn max(&self) -> usize {
        self.max
    }
}

/// Most clients the rate limiter remembers; beyond it, the buckets that are full again
/// (clients quiet for a while) are forgotten first.
const MAX_TRACKED_CLIENTS: usize = 65_536;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// What a rate-limited request learns: the figures its `RateLimit` headers carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateState {
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until a token is back (when none is left) or the bucket is full.
    pub reset_secs: u64,
    pub allowed: bool,
}

/// Per-client token buckets.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    limit: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
    pub refused: AtomicU64,
}

impl RateLimiter {
    /// `None` when `rate` is 0 (no limit).
    pub fn new(rate: u32, burst: u32) -> Option<Self> {
        if rate == 0 {
            return None;
        }
        let burst = if burst == 0 { rate } else { burst };
        Some(Self {
            rate: f64::from(rate),
            burst: f64::from(burst),
            limit: burst,
            buckets: Mutex::default(),
            refused: AtomicU64::new(0),
        })
    }

    /// Takes one token of `client`'s bucket if there is one.
    pub fn check(&self, client: IpAddr, now: Instant) -> RateState {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_TRACKED_CLIENTS && !buckets.contains_key(&client) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
            if buckets.len() >= MAX_TRACKED_CLIENTS {
                // Every tracked client is active: forget a sixteenth of them (arbitrary
                // ones, each then starting from a full bucket) rather than grow without
                // bound, and so that the next newcomers do not pay this sweep again.
                let forget: Vec<IpAddr> = buckets
                    .keys()
                    .take(MAX_TRACKED_CLIENTS / 16)
                    .copied()
                    .collect();
                for key in forget {
                    buckets.remove(&key);
                }
            }
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let elapsed = now.duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rate).min(self.burst);
        bucket.at = now;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        } else {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        let missing = if allowed {
            self.burst - bucket.tokens
        } else {
            1.0 - bucket.tokens
        };
        RateState {
            limit: self.limit,
            remaining: bucket.tokens.floor() as u32,
            reset_secs: (missing / self.rate).ceil().max(1.0) as u64,
            allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn admits_exactly_max_ccu_and_queues_the_headroom() {
        let admission = Admission::new(10, 60, Duration::from_millis(50));
        assert_eq!((admission.max(), admission.normal()), (10, 6));
        let mut held = Vec::new();
        for _ in 0..6 {
            held.push(admission.enter().await.expect("a place"));
        }
        // Four more wait; the eleventh is refused at once.
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let admission = Arc::clone(&admission);
                tokio::spawn(async move {
                    let place = admission.enter().await;
                    // Hold it past the others' timeout.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    place.map(drop)
                })
            })
            .collect();
        while admission.waiting() < 4 {
            tokio::task::yield_now().await;
        }
        assert_eq!(admission.enter().await.err(), Some(Refusal::Full));
        assert_eq!(admission.inside(), 10);
        // Two places free up: two waiters get in, two time out.
        held.truncate(4);
        let mut outcomes: Vec<_> = Vec::new();
        for waiter in waiters {
            outcomes.push(waiter.await.unwrap());
        }
        let timed_out = outcomes
            .iter()
            .filter(|o| **o == Err(Refusal::QueueTimeout))
            .count();
        assert_eq!(timed_out, 2, "{outcomes:?}");
        drop(held);
        assert_eq!((admission.inside(), admission.waiting()), (0, 0));
        assert_eq!(admission.refused_full.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_token_bucket_per_client() {
        let limiter = RateLimiter::new(2, 3).expect("limited");
        let start = Instant::now();
        let a = IpAddr::from([127, 0, 0, 1]);
        let b = IpAddr::from([127, 0, 0, 2]);
        let allowed: Vec<bool> = (0..4).map(|_| limiter.check(a, start).allowed).collect();
        assert_eq!(allowed, [true, true, true, false]);
        assert!(
            limiter.check(b, start).allowed,
            "another client has its own"
        );
        let later = limiter.check(a, start + Duration::from_millis(500));
        assert!(later.allowed, "half a second refills one token at 2/s");
        let refused = limiter.check(a, start + Duration::from_millis(500));
        assert_eq!((refused.allowed, refused.reset_secs), (false, 1));
    }
}
