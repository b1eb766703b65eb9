//! The slow log (SLOWLOG): commands that took at least `slowlog-log-slower-than`
//! microseconds (0: every command, negative: none), the newest `slowlog-max-len` kept,
//! each with its arguments as Redis records them (at most 32, each cut at 128 bytes,
//! secrets redacted), the client's address and name.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use quiver_resp::request::Request;

use crate::resp::redis_config;
use crate::resp::redis_config::params::SENSITIVE;

/// Arguments kept per entry, the last slot saying how many more there were.
const MAX_ARGS: usize = 32;
/// Bytes kept per argument.
const MAX_ARG_BYTES: usize = 128;
/// `slowlog-log-slower-than`'s default: 10 ms.
pub const DEFAULT_THRESHOLD_US: i64 = 10_000;
/// `slowlog-max-len`'s default.
pub const DEFAULT_MAX_LEN: usize = 128;

/// One slow command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    /// Unix time in seconds when it ran.
    pub time_s: u64,
    pub duration_us: u64,
    pub args: Vec<Bytes>,
    pub peer: String,
    pub name: Bytes,
}

/// The slow log.
#[derive(Debug)]
pub struct SlowLog {
    entries: Mutex<VecDeque<Entry>>,
    next_id: AtomicU64,
    threshold_us: AtomicI64,
    max_len: AtomicUsize,
}

impl Default for SlowLog {
    fn default() -> SlowLog {
        SlowLog {
            entries: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(0),
            threshold_us: AtomicI64::new(DEFAULT_THRESHOLD_US),
            max_len: AtomicUsize::new(DEFAULT_MAX_LEN),
        }
    }
}

impl SlowLog {
    /// `slowlog-log-slower-than` in microseconds.
    pub fn threshold_us(&self) -> i64 {
        self.threshold_us.load(Ordering::Relaxed)
    }

    pub fn set_threshold_us(&self, micros: i64) {
        self.threshold_us.store(micros, Ordering::Relaxed);
    }

    /// `slowlog-max-len`.
    pub fn max_len(&self) -> usize {
        self.max_len.load(Ordering::Relaxed)
    }

    /// Changes `slowlog-max-len`, dropping the oldest entries beyond it.
    pub fn set_max_len(&self, len: usize) {
        self.max_len.store(len, Ordering::Relaxed);
        let mut entries = self.lock();
        entries.truncate(len);
    }

    /// Whether a command that took `duration_us` belongs in the log.
    pub fn is_slow(&self, duration_us: u64) -> bool {
        let threshold = self.threshold_us();
        threshold >= 0 && duration_us >= threshold.unsigned_abs()
    }

    /// Records a slow command.
    pub fn record(
        &self,
        request: &Request,
        duration_us: u64,
        peer: SocketAddr,
        name: Option<&Bytes>,
    ) {
        let max_len = self.max_len();
        if max_len == 0 {
            return;
        }
        let entry = Entry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            time_s: u64::try_from(crate::clock::unix_micros() / 1_000_000).unwrap_or(u64::MAX),
            duration_us,
            args: recorded_args(request),
            peer: peer.to_string(),
            name: name.cloned().unwrap_or_default(),
        };
        let mut entries = self.lock();
        entries.push_front(entry);
        entries.truncate(max_len);
    }

    /// The newest `count` entries (all with `None`), newest first.
    pub fn newest(&self, count: Option<usize>) -> Vec<Entry> {
        let entries = self.lock();
        let count = count.unwrap_or(entries.len());
        entries.iter().take(count).cloned().collect()
    }

    /// How many entries are kept.
    pub fn entries(&self) -> usize {
        self.lock().len()
    }

    pub fn reset(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Which arguments of a request are secrets Redis does not log: AUTH's, HELLO's AUTH
/// user and password, ACL SETUSER's, and the value of a sensitive parameter in CONFIG
/// SET.
fn redacted(request: &Request, pos: usize) -> bool {
    let arg = |i: usize| request.arg(i).unwrap_or_default();
    let name = arg(0);
    if name.eq_ignore_ascii_case(b"auth") {
        return pos >= 1;
    }
    if name.eq_ignore_ascii_case(b"hello") {
        return (2..request.len())
            .any(|i| arg(i).eq_ignore_ascii_case(b"auth") && (pos == i + 1 || pos == i + 2));
    }
    // ACL SETUSER's user and rules, all of them, as Redis 7.0 does.
    if name.eq_ignore_ascii_case(b"acl") && arg(1).eq_ignore_ascii_case(b"setuser") {
        return pos >= 2;
    }
    if name.eq_ignore_ascii_case(b"config") && arg(1).eq_ignore_ascii_case(b"set") && pos >= 3 {
        let param = pos - 1;
        return (param - 2).is_multiple_of(2)
            && redis_config::find(arg(param)).is_some_and(|p| p.flags & SENSITIVE != 0);
    }
    false
}

/// The arguments as Redis records them.
fn recorded_args(request: &Request) -> Vec<Bytes> {
    let argc = request.len();
    let kept = if argc > MAX_ARGS { MAX_ARGS - 1 } else { argc };
    let mut args = Vec::with_capacity(kept + 1);
    for pos in 0..kept {
        if redacted(request, pos) {
            args.push(Bytes::from_static(b"(redacted)"));
            continue;
        }
        let arg = request.arg(pos).unwrap_or_default();
        if arg.len() > MAX_ARG_BYTES {
            let mut cut = arg[..MAX_ARG_BYTES].to_vec();
            cut.extend_from_slice(
                format!("... ({} more bytes)", arg.len() - MAX_ARG_BYTES).as_bytes(),
            );
            args.push(Bytes::from(cut));
        } else {
            args.push(Bytes::copy_from_slice(arg));
        }
    }
    if argc > kept {
        args.push(Bytes::from(format!("... ({} more arguments)", argc - kept)));
    }
    args
}
