//! The latency monitor (LATENCY LATEST, HISTORY, RESET, GRAPH, DOCTOR): commands that
//! took at least `latency-monitor-threshold` milliseconds are recorded as samples of the
//! events `command` and `fast-command`, the newest 160 seconds with a sample kept per
//! event, as Redis keeps them. 0 (the default) turns it off.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Samples kept per event (Redis's `LATENCY_TS_LEN`).
const SAMPLES: usize = 160;

/// One event's samples: (unix seconds, milliseconds), oldest first, and its highest.
#[derive(Debug, Default)]
struct Series {
    samples: VecDeque<(u64, u64)>,
    max: u64,
}

/// The latency monitor of the RESP server.
#[derive(Debug, Default)]
pub struct Latency {
    threshold_ms: AtomicU64,
    events: Mutex<BTreeMap<&'static str, Series>>,
}

impl Latency {
    /// `latency-monitor-threshold` in milliseconds; 0 is off.
    pub fn threshold_ms(&self) -> u64 {
        self.threshold_ms.load(Ordering::Relaxed)
    }

    pub fn set_threshold_ms(&self, ms: u64) {
        self.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// Records a command that took `elapsed`, if that reaches the threshold.
    pub fn command(&self, fast: bool, elapsed: Duration, now_s: u64) {
        let threshold = self.threshold_ms();
        let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        if threshold == 0 || ms < threshold {
            return;
        }
        let event = if fast { "fast-command" } else { "command" };
        let mut events = self.lock();
        let series = events.entry(event).or_default();
        series.max = series.max.max(ms);
        match series.samples.back_mut() {
            // One sample per second: the highest.
            Some((time, latency)) if *time == now_s => *latency = (*latency).max(ms),
            _ => {
                if series.samples.len() == SAMPLES {
                    series.samples.pop_front();
                }
                series.samples.push_back((now_s, ms));
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, Series>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// LATENCY LATEST: each event's latest sample time and latency, and its highest.
    pub fn latest(&self) -> Vec<(&'static str, u64, u64, u64)> {
        self.lock()
            .iter()
            .filter_map(|(name, s)| {
                let &(time, ms) = s.samples.back()?;
                Some((*name, time, ms, s.max))
            })
            .collect()
    }

    /// LATENCY HISTORY: an event's samples, oldest first.
    pub fn history(&self, event: &[u8]) -> Vec<(u64, u64)> {
        self.lock()
            .iter()
            .find(|(name, _)| name.as_bytes() == event)
            .map(|(_, s)| s.samples.iter().copied().collect())
            .unwrap_or_default()
    }

    /// LATENCY RESET: drops the named events (every event when none is named); how many
    /// had samples.
    pub fn reset(&self, events: &[bytes::Bytes]) -> usize {
        let mut all = self.lock();
        let before = all.len();
        if events.is_empty() {
            all.clear();
        } else {
            all.retain(|name, _| !events.iter().any(|e| e.as_ref() == name.as_bytes()));
        }
        before - all.len()
    }

    /// LATENCY GRAPH: the event's samples as text, one line each; `Err` with Redis's
    /// message when there are none.
    pub fn graph(&self, event: &[u8], now_s: u64) -> Result<String, String> {
        let events = self.lock();
        let Some((name, series)) = events
            .iter()
            .find(|(name, s)| name.as_bytes() == event && !s.samples.is_empty())
        else {
            return Err(format!(
                "ERR No samples available for event '{}'",
                String::from_utf8_lossy(event)
            ));
        };
        let high = series.samples.iter().map(|s| s.1).max().unwrap_or(0);
        let low = series.samples.iter().map(|s| s.1).min().unwrap_or(0);
        let mut out = format!(
            "{name} - high {high} ms, low {low} ms (all time high {} ms)\n{}\n",
            series.max,
            "-".repeat(80)
        );
        for (time, ms) in &series.samples {
            let _ = writeln!(out, "{:>6}s ago: {ms} ms", now_s.saturating_sub(*time));
        }
        Ok(out)
    }

    /// LATENCY DOCTOR: what was observed, in words.
    pub fn doctor(&self) -> String {
        if self.threshold_ms() == 0 {
            return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Quiver instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it.\n".to_owned();
        }
        let events = self.lock();
        if events.values().all(|s| s.samples.is_empty()) {
            return "Dave, no latency spike was observed during the lifetime of this Quiver instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n".to_owned();
        }
        let mut out = "Dave, I have observed latency spikes in this Quiver instance. You don't mind talking about it, do you Dave?\n\n".to_owned();
        for (i, (name, series)) in events.iter().enumerate() {
            let n = series.samples.len() as u64;
            let sum: u64 = series.samples.iter().map(|s| s.1).sum();
            let average = sum / n.max(1);
            let deviation = series
                .samples
                .iter()
                .map(|s| s.1.abs_diff(average))
                .sum::<u64>()
                / n.max(1);
            let span = match (series.samples.front(), series.samples.back()) {
                (Some(first), Some(last)) => last.0.saturating_sub(first.0),
                _ => 0,
            };
            let period = span as f64 / n.max(1) as f64;
            let _ = writeln!(
                out,
                "{}. {name}: {n} latency spikes (average {average}ms, mean deviation {deviation}ms, period {period:.2} sec). Worst all time event {}ms.",
                i + 1,
                series.max
            );
        }
        out.push_str("\nI have a few advices for you:\n\n- Check your Slow Log to understand what are the commands you are running which are too slow to execute (SLOWLOG GET).\n- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n");
        out
    }
}

/// The histogram bucket of a command that took `elapsed`: bucket `k` holds up to
/// 1024·2^k nanoseconds (about 2^k microseconds), as Redis reports them.
pub fn bucket(elapsed: Duration) -> usize {
    let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    let units = ns.div_ceil(1024).max(1);
    ((u64::BITS - (units - 1).leading_zeros()) as usize).min(BUCKETS - 1)
}

/// Bucket `k`'s upper bound in microseconds, as LATENCY HISTOGRAM names it.
pub fn bucket_usec(k: usize) -> u64 {
    (1024u64 << k.min(BUCKETS)) / 1000
}

/// Buckets per command; the last one takes everything slower (about 35 minutes).
pub const BUCKETS: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_double() {
        assert_eq!(bucket(Duration::from_nanos(0)), 0);
        assert_eq!(bucket(Duration::from_nanos(1024)), 0);
        assert_eq!(bucket(Duration::from_nanos(1025)), 1);
        assert_eq!(bucket(Duration::from_nanos(2048)), 1);
        assert_eq!(bucket(Duration::from_micros(100)), 7);
        assert_eq!(bucket_usec(0), 1);
        assert_eq!(bucket_usec(6), 65);
        assert_eq!(bucket(Duration::from_secs(1 << 30)), BUCKETS - 1);
    }

    #[test]
    fn samples_merge_per_second_and_reset() {
        let latency = Latency::default();
        latency.command(false, Duration::from_millis(50), 10);
        assert!(latency.latest().is_empty(), "off at 0");
        latency.set_threshold_ms(10);
        latency.command(false, Duration::from_millis(5), 10);
        latency.command(false, Duration::from_millis(50), 10);
        latency.command(false, Duration::from_millis(70), 10);
        latency.command(true, Duration::from_millis(20), 11);
        assert_eq!(
            latency.latest(),
            [("command", 10, 70, 70), ("fast-command", 11, 20, 20)]
        );
        assert_eq!(latency.history(b"command"), [(10, 70)]);
        assert!(
            latency
                .graph(b"command", 12)
                .unwrap()
                .starts_with("command - high 70 ms")
        );
        assert!(latency.doctor().contains("1. command: 1 latency spikes"));
        assert_eq!(latency.reset(&[bytes::Bytes::from_static(b"command")]), 1);
        assert_eq!(latency.reset(&[]), 1);
        assert!(latency.graph(b"command", 12).is_err());
    }
}
