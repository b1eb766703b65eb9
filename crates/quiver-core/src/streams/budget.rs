//! In-flight byte budgets: how many message bytes a connection, and the whole process, may
//! have inside the broker at once.
//!
//! A publish takes a [`Permit`] for its messages' bytes from its connection's budget (when
//! the transport passes one) and from the process budget, before anything is sequenced.
//! The permits travel with the messages into their delivery [`Batch`](crate::streams::Batch)
//! and are released when the last `Arc` of that batch is dropped: when every subscription has
//! received it (or dropped it) and every transport has finished writing it. So the budgets
//! bound the memory that live streams hold, whatever the subscribers do.
//!
//! A publish beyond a budget waits for bytes to be released, up to
//! [`InflightConfig::wait`](crate::streams::InflightConfig), then fails with
//! [`BudgetError::Exhausted`]; a publish larger than a budget's whole limit fails at once
//! with [`BudgetError::TooLarge`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use thiserror::Error;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Which budget a [`BudgetError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetScope {
    /// One connection's budget.
    Connection,
    /// The process-wide budget.
    Process,
}

impl fmt::Display for BudgetScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connection => "connection",
            Self::Process => "process",
        })
    }
}

/// A publish that its in-flight byte budget could not take.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// More bytes than the budget's whole limit: it can never fit; send smaller batches.
    #[error(
        "a publish of {bytes} bytes exceeds the {scope} in-flight limit of {limit_bytes} bytes; send smaller batches"
    )]
    TooLarge {
        scope: BudgetScope,
        bytes: u64,
        limit_bytes: u64,
    },
    /// The budget stayed full for the whole wait.
    #[error(
        "the {scope} in-flight budget stayed full for {waited:?} ({used_bytes} of {limit_bytes} bytes in use, {bytes} more wanted): subscribers are not keeping up; retry later"
    )]
    Exhausted {
        scope: BudgetScope,
        bytes: u64,
        used_bytes: u64,
        limit_bytes: u64,
        waited: Duration,
    },
}

struct Inner {
    scope: BudgetScope,
    limit_bytes: u64,
    used_bytes: AtomicU64,
    waiters: AtomicUsize,
    released: Notify,
}

/// A bound on bytes in flight. Cloning shares the same budget.
#[derive(Clone)]
pub struct Budget {
    inner: Arc<Inner>,
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("scope", &self.inner.scope)
            .field("used_bytes", &self.used_bytes())
            .field("limit_bytes", &self.inner.limit_bytes)
            .finish()
    }
}

impl Budget {
    /// A budget of `limit_bytes`.
    pub fn new(scope: BudgetScope, limit_bytes: u64) -> Self {
        let inner = Inner {
            scope,
            limit_bytes,
            used_bytes: AtomicU64::new(0),
            waiters: AtomicUsize::new(0),
            released: Notify::new(),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Bytes currently held by permits.
    pub fn used_bytes(&self) -> u64 {
        self.inner.used_bytes.load(Ordering::SeqCst)
    }

    /// The bound.
    pub fn limit_bytes(&self) -> u64 {
        self.inner.limit_bytes
    }

    /// Takes `bytes` now, or says why not.
    pub fn try_acquire(&self, bytes: u64) -> Result<Permit, BudgetError> {
        self.try_take(bytes)
            .map_err(|used_bytes| self.exhausted(bytes, used_bytes, Duration::ZERO))
    }

    /// Takes `bytes`, waiting up to `wait` for other permits to be released.
    pub async fn acquire(&self, bytes: u64, wait: Duration) -> Result<Permit, BudgetError> {
        let start = Instant::now();
        loop {
            let released = self.inner.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            self.inner.waiters.fetch_add(1, Ordering::SeqCst);
            let attempt = self.try_take(bytes);
            let outcome = match attempt {
                Ok(permit) => Some(Ok(permit)),
                Err(used) if start.elapsed() >= wait => {
                    Some(Err(self.exhausted(bytes, used, wait)))
                }
                Err(_) => None,
            };
            if outcome.is_none() {
                let _ = tokio::time::timeout_at(start + wait, released).await;
            }
            self.inner.waiters.fetch_sub(1, Ordering::SeqCst);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    fn try_take(&self, bytes: u64) -> Result<Permit, u64> {
        let limit = self.inner.limit_bytes;
        if bytes > limit {
            return Err(u64::MAX);
        }
        let used = &self.inner.used_bytes;
        let mut current = used.load(Ordering::SeqCst);
        loop {
            if current + bytes > limit {
                return Err(current);
            }
            match used.compare_exchange_weak(
                current,
                current + bytes,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    return Ok(Permit {
                        inner: Arc::clone(&self.inner),
                        bytes,
                    });
                }
                Err(actual) => current = actual,
            }
        }
    }

    fn exhausted(&self, bytes: u64, used_bytes: u64, waited: Duration) -> BudgetError {
        let (scope, limit_bytes) = (self.inner.scope, self.inner.limit_bytes);
        if bytes > limit_bytes || used_bytes == u64::MAX {
            BudgetError::TooLarge {
                scope,
                bytes,
                limit_bytes,
            }
        } else {
            BudgetError::Exhausted {
                scope,
                bytes,
                used_bytes,
                limit_bytes,
                waited,
            }
        }
    }
}

/// Bytes held from a [`Budget`]; dropping it gives them back.
pub struct Permit {
    inner: Arc<Inner>,
    bytes: u64,
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Permit({} bytes of the {} budget)",
            self.bytes, self.inner.scope
        )
    }
}

impl Permit {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Moves `bytes` (at most all held) into a new permit of the same budget.
    pub(crate) fn split(&mut self, bytes: u64) -> Permit {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Permit {
            inner: Arc::clone(&self.inner),
            bytes,
        }
    }

    /// Adds `other`'s bytes to this permit when both come from the same budget.
    pub(crate) fn absorb(&mut self, other: Permit) -> Result<(), Permit> {
        if !Arc::ptr_eq(&self.inner, &other.inner) {
            return Err(other);
        }
        let mut other = other;
        self.bytes += std::mem::take(&mut other.bytes);
        Ok(())
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        self.inner
            .used_bytes
            .fetch_sub(self.bytes, Ordering::SeqCst);
        if self.inner.waiters.load(Ordering::SeqCst) > 0 {
            self.inner.released.notify_waiters();
        }
    }
}

/// Permits for some messages' bytes: a publish call's (its connection's and the process's),
/// or a pending batch's (merged per budget). The first two permits are held inline, so a
/// charge allocates only when a batch collects messages of more than one connection.
#[derive(Debug, Default)]
pub(crate) struct Charge {
    inline: [Option<Permit>; 2],
    spill: Vec<Permit>,
}

impl Charge {
    /// Takes `bytes` from each budget in turn (connection first), waiting up to `wait` in all.
    pub(crate) async fn acquire(
        budgets: [Option<&Budget>; 2],
        bytes: u64,
        wait: Duration,
    ) -> Result<Self, BudgetError> {
        let mut charge = Charge::default();
        let mut deadline = None;
        for budget in budgets.into_iter().flatten() {
            let permit = match budget.try_acquire(bytes) {
                Ok(permit) => permit,
                Err(BudgetError::Exhausted { .. }) if !wait.is_zero() => {
                    let deadline = *deadline.get_or_insert_with(|| Instant::now() + wait);
                    let left = deadline.saturating_duration_since(Instant::now());
                    budget.acquire(bytes, left).await?
                }
                Err(err) => return Err(err),
            };
            charge.push(permit);
        }
        Ok(charge)
    }

    fn push(&mut self, permit: Permit) {
        match self.inline.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => *slot = Some(permit),
            None => self.spill.push(permit),
        }
    }

    fn permits_mut(&mut self) -> impl Iterator<Item = &mut Permit> {
        self.inline
            .iter_mut()
            .flatten()
            .chain(self.spill.iter_mut())
    }

    /// Moves `bytes` of every permit into a new charge.
    pub(crate) fn split(&mut self, bytes: u64) -> Charge {
        let mut part = Charge::default();
        for permit in self.permits_mut() {
            let piece = permit.split(bytes);
            part.push(piece);
        }
        part
    }

    /// Adds `other`'s permits, merging those of a budget already held.
    pub(crate) fn absorb(&mut self, other: Charge) {
        let [a, b] = other.inline;
        for permit in a.into_iter().chain(b).chain(other.spill) {
            let mut permit = Some(permit);
            for held in self.permits_mut() {
                match held.absorb(permit.take().expect("the permit is put back on every miss")) {
                    Ok(()) => break,
                    Err(back) => permit = Some(back),
                }
            }
            if let Some(permit) = permit {
                self.push(permit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acquire_and_release() {
        let budget = Budget::new(BudgetScope::Connection, 100);
        let a = budget.try_acquire(60).unwrap();
        assert_eq!(budget.used_bytes(), 60);
        let err = budget.try_acquire(50).unwrap_err();
        assert!(matches!(err, BudgetError::Exhausted { used_bytes: 60, .. }));
        assert!(matches!(
            budget.try_acquire(101).unwrap_err(),
            BudgetError::TooLarge {
                limit_bytes: 100,
                ..
            }
        ));
        drop(a);
        assert_eq!(budget.used_bytes(), 0);
        assert!(budget.try_acquire(100).is_ok());
        assert_eq!(budget.used_bytes(), 0);
    }

    #[test]
    fn split_and_absorb_keep_the_total() {
        let budget = Budget::new(BudgetScope::Process, 100);
        let mut whole = budget.try_acquire(90).unwrap();
        let part = whole.split(30);
        assert_eq!((whole.bytes(), part.bytes()), (60, 30));
        whole.absorb(part).unwrap();
        assert_eq!((whole.bytes(), budget.used_bytes()), (90, 90));
        let other = Budget::new(BudgetScope::Process, 10)
            .try_acquire(5)
            .unwrap();
        assert!(whole.absorb(other).is_err());
        drop(whole);
        assert_eq!(budget.used_bytes(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn waits_for_release_then_times_out() {
        let budget = Budget::new(BudgetScope::Connection, 100);
        let held = budget.try_acquire(100).unwrap();
        let waiter = {
            let budget = budget.clone();
            tokio::spawn(async move {
                budget
                    .acquire(40, Duration::from_secs(1))
                    .await
                    .map(|p| p.bytes())
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(held);
        assert_eq!(waiter.await.unwrap(), Ok(40));
        let _full = budget.try_acquire(100).unwrap();
        let err = budget
            .acquire(1, Duration::from_millis(500))
            .await
            .unwrap_err();
        assert!(
            matches!(err, BudgetError::Exhausted { waited, .. } if waited == Duration::from_millis(500))
        );
    }
}
