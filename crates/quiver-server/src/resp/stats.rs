//! Per-command counters for `INFO commandstats` and `latencystats`: one slot per command
//! and subcommand of the table, found by the address of its static table entry in a
//! hash map built once, updated with relaxed atomics so counting never takes a lock.
//! And the error replies by code, for `INFO errorstats`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::resp::latency::histogram;
use crate::resp::table::{self, CommandSpec, Group};

/// Most error codes counted apart; errors of further codes are counted under
/// [`OVERFLOW_CODE`] (as Valkey does; Redis 7.0 has no bound).
pub const MAX_ERROR_CODES: usize = 128;
/// Where errors of codes beyond [`MAX_ERROR_CODES`] are counted.
pub const OVERFLOW_CODE: &str = "ERRORSTATS_OVERFLOW";

/// Calls, time and failures of one command.
#[derive(Debug, Default)]
pub struct Slot {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    pub rejected_calls: AtomicU64,
    pub failed_calls: AtomicU64,
    /// Calls by time taken (`latency-tracking`): see [`histogram`]; made at the first
    /// call, as each takes 35 KB.
    latency: OnceLock<Box<[AtomicU64]>>,
}

impl Slot {
    /// The latency histogram's counts (empty before the first call is timed).
    pub fn latency_counts(&self) -> Vec<u64> {
        self.latency.get().map_or_else(Vec::new, |counts| {
            counts.iter().map(|c| c.load(Ordering::Relaxed)).collect()
        })
    }
}

/// Every command's slot, sorted by full name (`client|list` after `client`).
#[derive(Debug)]
pub struct CommandStats {
    names: Vec<&'static str>,
    slots: Vec<Slot>,
    /// Table entry address -> index into `names` and `slots`.
    index: HashMap<usize, usize, foldhash::fast::FixedState>,
    pub total_commands: AtomicU64,
    pub total_connections: AtomicU64,
    /// Error replies sent, by code (the error's first word).
    errors: Mutex<BTreeMap<Box<[u8]>, u64>>,
    pub total_error_replies: AtomicU64,
    /// `latency-tracking`: calls are timed into the histograms.
    tracking: AtomicBool,
    /// Bytes and reads received from clients, bytes and writes sent to them.
    pub net_input_bytes: AtomicU64,
    pub reads_processed: AtomicU64,
    pub net_output_bytes: AtomicU64,
    pub writes_processed: AtomicU64,
    /// Connections refused (`maxclients`, protected mode).
    pub rejected_connections: AtomicU64,
    /// Samples of the totals, for the instantaneous rates.
    samples: Mutex<Samples>,
}

/// Samples taken every [`SAMPLE_EVERY`] (Redis's `STATS_METRIC_SAMPLES` of its cron).
const SAMPLES: usize = 16;
/// How often the totals are sampled.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// The last [`SAMPLES`] rates per second of commands, input bytes and output bytes.
#[derive(Debug, Default)]
struct Samples {
    last: Option<(std::time::Instant, [u64; 3])>,
    rates: [[f64; SAMPLES]; 3],
    next: usize,
}

impl CommandStats {
    pub fn new() -> CommandStats {
        let mut specs: Vec<&'static CommandSpec> = table::commands()
            .iter()
            .flat_map(|spec| std::iter::once(*spec).chain(spec.subcommands.iter()))
            .collect();
        specs.sort_unstable_by_key(|spec| spec.name);
        let index = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| (address(spec), i))
            .collect();
        CommandStats {
            names: specs.iter().map(|spec| spec.name).collect(),
            slots: specs.iter().map(|_| Slot::default()).collect(),
            index,
            total_commands: AtomicU64::new(0),
            total_connections: AtomicU64::new(0),
            errors: Mutex::default(),
            total_error_replies: AtomicU64::new(0),
            tracking: AtomicBool::new(true),
            net_input_bytes: AtomicU64::new(0),
            reads_processed: AtomicU64::new(0),
            net_output_bytes: AtomicU64::new(0),
            writes_processed: AtomicU64::new(0),
            rejected_connections: AtomicU64::new(0),
            samples: Mutex::default(),
        }
    }

    /// Counts a read of `bytes` from a client.
    pub fn read(&self, bytes: usize) {
        self.net_input_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.reads_processed.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a write of `bytes` to a client.
    pub fn wrote(&self, bytes: usize) {
        self.net_output_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.writes_processed.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection refused (`maxclients`, protected mode).
    pub fn refused_connection(&self) {
        self.rejected_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes a sample of the totals (every [`SAMPLE_EVERY`]).
    pub fn sample(&self, now: std::time::Instant) {
        let totals = [
            self.total_commands.load(Ordering::Relaxed),
            self.net_input_bytes.load(Ordering::Relaxed),
            self.net_output_bytes.load(Ordering::Relaxed),
        ];
        let mut samples = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, before)) = samples.last {
            let seconds = now.saturating_duration_since(at).as_secs_f64();
            if seconds > 0.0 {
                let next = samples.next;
                for (i, (total, before)) in totals.iter().zip(before).enumerate() {
                    samples.rates[i][next] = total.saturating_sub(before) as f64 / seconds;
                }
                samples.next = (next + 1) % SAMPLES;
            }
        }
        samples.last = Some((now, totals));
    }

    /// Commands per second, and kilobytes per second in and out, averaged over the
    /// last samples (`instantaneous_ops_per_sec`, `instantaneous_input_kbps`,
    /// `instantaneous_output_kbps`).
    pub fn instantaneous(&self) -> (u64, f64, f64) {
        let samples = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        let mean = |i: usize| samples.rates[i].iter().sum::<f64>() / SAMPLES as f64;
        (mean(0).round() as u64, mean(1) / 1024.0, mean(2) / 1024.0)
    }

    /// Counts a call of `spec` that ran for `elapsed` (and failed: replied an error), in
    /// `total_commands` too: the commands EXEC and scripts run count, as in Redis.
    pub fn record(&self, spec: &CommandSpec, elapsed: Duration, failed: bool) {
        let Some(slot) = self.slot(spec) else {
            return;
        };
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.total_commands.fetch_add(1, Ordering::Relaxed);
        slot.calls.fetch_add(1, Ordering::Relaxed);
        slot.usec.fetch_add(micros, Ordering::Relaxed);
        if failed {
            slot.failed_calls.fetch_add(1, Ordering::Relaxed);
        }
        if self.tracking() {
            let counts = slot
                .latency
                .get_or_init(|| (0..histogram::LEN).map(|_| AtomicU64::new(0)).collect());
            histogram::record(counts, elapsed);
        }
    }

    /// Counts a call of `spec` that ran for `elapsed` and wrote `reply`: [`Self::record`],
    /// and its error. A scripting command's errors are counted where it runs instead (a
    /// script's may be nested in its reply, or counted already as its commands').
    pub fn replied(&self, spec: &CommandSpec, elapsed: Duration, reply: &[u8]) {
        self.record(spec, elapsed, reply.first() == Some(&b'-'));
        if spec.group != Group::Scripting {
            self.error(reply);
        }
    }

    /// Counts a failure of a call of `spec` already counted (a script call, whose reply
    /// comes after it was counted).
    pub fn failed(&self, spec: &CommandSpec) {
        if let Some(slot) = self.slot(spec) {
            slot.failed_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a call of `spec` refused before it ran.
    pub fn reject(&self, spec: &CommandSpec) {
        if let Some(slot) = self.slot(spec) {
            slot.rejected_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts the error reply at the start of `reply` (nothing when it is none), under
    /// its code as Redis takes it: the word after `-`, when a space ends it within the
    /// first 32 bytes; `ERR` otherwise.
    pub fn error(&self, reply: &[u8]) {
        if reply.first() != Some(&b'-') {
            return;
        }
        self.total_error_replies.fetch_add(1, Ordering::Relaxed);
        let line = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
        let head = &reply[..line.min(32)];
        let code = match memchr::memchr(b' ', head) {
            Some(space) => &head[1..space],
            None => b"ERR".as_slice(),
        };
        let mut errors = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = errors.get_mut(code) {
            *count += 1;
            return;
        }
        let code = if errors.len() < MAX_ERROR_CODES {
            code
        } else {
            OVERFLOW_CODE.as_bytes()
        };
        *errors.entry(code.into()).or_insert(0) += 1;
    }

    /// The errors by code, in code order.
    pub fn errors(&self) -> Vec<(Box<[u8]>, u64)> {
        let errors = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
        errors.iter().map(|(code, n)| (code.clone(), *n)).collect()
    }

    /// `latency-tracking`.
    pub fn tracking(&self) -> bool {
        self.tracking.load(Ordering::Relaxed)
    }

    pub fn set_tracking(&self, on: bool) {
        self.tracking.store(on, Ordering::Relaxed);
    }

    /// The slot of `spec`, a table entry.
    pub fn slot(&self, spec: &CommandSpec) -> Option<&Slot> {
        self.index.get(&address(spec)).map(|&i| &self.slots[i])
    }

    /// Every slot, with its command's full name.
    pub fn all(&self) -> impl Iterator<Item = (&'static str, &Slot)> + '_ {
        self.names.iter().copied().zip(&self.slots)
    }

    /// Every slot that was used, with its command's name.
    pub fn used(&self) -> impl Iterator<Item = (&'static str, &Slot)> + '_ {
        self.names
            .iter()
            .copied()
            .zip(&self.slots)
            .filter(|(_, slot)| {
                slot.calls.load(Ordering::Relaxed) + slot.rejected_calls.load(Ordering::Relaxed) > 0
            })
    }

    /// Zeroes every counter (`CONFIG RESETSTAT`).
    pub fn reset(&self) {
        for slot in &self.slots {
            for counter in [
                &slot.calls,
                &slot.usec,
                &slot.rejected_calls,
                &slot.failed_calls,
            ]
            .into_iter()
            .chain(
                slot.latency
                    .get()
                    .into_iter()
                    .flat_map(|counts| counts.iter()),
            ) {
                counter.store(0, Ordering::Relaxed);
            }
        }
        for counter in [
            &self.total_commands,
            &self.total_connections,
            &self.total_error_replies,
            &self.net_input_bytes,
            &self.reads_processed,
            &self.net_output_bytes,
            &self.writes_processed,
            &self.rejected_connections,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
        *self.samples.lock().unwrap_or_else(PoisonError::into_inner) = Samples::default();
        self.errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// Table entries are statics, so their addresses identify them.
fn address(spec: &CommandSpec) -> usize {
    std::ptr::from_ref(spec) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_counted_by_their_first_word() {
        let stats = CommandStats::new();
        for reply in [
            b"-ERR unknown command\r\n".as_slice(),
            b"-WRONGTYPE Operation against a key\r\n",
            b"-NOSCRIPT\r\n",
            b"- x\r\n",
            b"-ACODEFARLONGERTHANTHIRTYTWOBYTESINALL x\r\n",
            b"+OK\r\n",
            b"",
        ] {
            stats.error(reply);
        }
        let errors: Vec<(String, u64)> = stats
            .errors()
            .into_iter()
            .map(|(code, n)| (String::from_utf8_lossy(&code).into_owned(), n))
            .collect();
        // No space within 32 bytes (or before the line's end): `ERR`, as Redis does.
        assert_eq!(
            errors,
            [
                (String::new(), 1),
                ("ERR".to_owned(), 3),
                ("WRONGTYPE".to_owned(), 1)
            ]
        );
        assert_eq!(stats.total_error_replies.load(Ordering::Relaxed), 5);
        stats.reset();
        assert!(stats.errors().is_empty());
    }
}
