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

/// Per-command latency histograms (`LATENCY HISTOGRAM`, `INFO latencystats`) with
/// Redis's precision: HdrHistogram's layout at two significant digits, in nanoseconds.
/// Values under 256 ns have a bucket each; above, each power of two is split into 128
/// buckets, so a bucket is at most 1/128 of its values wide.
pub mod histogram {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// Buckets per power of two above the exact range.
    const SUB_BUCKETS: usize = 128;
    /// Highest recorded value: longer times count as about 18 minutes (2^40 ns).
    const MAX_NS: u64 = (1 << 40) - 1;
    /// Buckets of a histogram.
    pub const LEN: usize = index(MAX_NS) + 1;

    /// The bucket of `ns` nanoseconds.
    pub const fn index(ns: u64) -> usize {
        let ns = if ns > MAX_NS { MAX_NS } else { ns };
        if ns < 2 * SUB_BUCKETS as u64 {
            return ns as usize;
        }
        let shift = 63 - ns.leading_zeros() - 7;
        shift as usize * SUB_BUCKETS + (ns >> shift) as usize
    }

    /// The lowest and highest values bucket `i` holds.
    pub fn bounds(i: usize) -> (u64, u64) {
        if i < 2 * SUB_BUCKETS {
            return (i as u64, i as u64);
        }
        let shift = i / SUB_BUCKETS - 1;
        let sub = (i - shift * SUB_BUCKETS) as u64;
        (sub << shift, ((sub + 1) << shift) - 1)
    }

    /// Counts `elapsed` in `counts`.
    pub fn record(counts: &[AtomicU64], elapsed: Duration) {
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        counts[index(ns)].fetch_add(1, Ordering::Relaxed);
    }

    /// The value at `percentile` (0 to 100) of the `counts` read from a histogram, as
    /// HdrHistogram answers it: the highest value of the bucket where the cumulative
    /// count reaches the percentile's share of the calls (the lowest for 0); `None`
    /// without calls.
    pub fn percentile(counts: &[u64], percentile: f64) -> Option<u64> {
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return None;
        }
        if percentile <= 0.0 {
            let first = counts.iter().position(|&c| c > 0)?;
            return Some(bounds(first).0);
        }
        let share = (percentile.min(100.0) / 100.0 * total as f64 + 0.5) as u64;
        let wanted = share.max(1);
        let mut cumulative = 0;
        for (i, count) in counts.iter().enumerate() {
            cumulative += count;
            if cumulative >= wanted {
                return Some(bounds(i).1);
            }
        }
        None
    }

    /// LATENCY HISTOGRAM's view of `counts`: for each power-of-two bound of 1024·2^k
    /// nanoseconds (named in microseconds: 1, 2, 4, 8, 16, 32, 65, 131, …) that a call
    /// reaches, the calls up to it, cumulated.
    pub fn powers_of_two(counts: &[u64]) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut cumulative = 0;
        for (i, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            cumulative += count;
            let high = bounds(i).1;
            let k = (u64::BITS - high.leading_zeros()).saturating_sub(10);
            let bound_us = (1024u64 << k) / 1000;
            match out.last_mut() {
                Some(last) if last.0 == bound_us => last.1 = cumulative,
                _ => out.push((bound_us, cumulative)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_keep_two_significant_digits() {
        use histogram::{bounds, index, percentile, powers_of_two};
        assert_eq!(index(0), 0);
        assert_eq!(index(255), 255);
        assert_eq!(bounds(index(256)), (256, 257));
        // Redis's reading of a 3 µs call: 2.992 to 3.007 µs.
        assert_eq!(bounds(index(3000)), (2992, 3007));
        for ns in [1u64, 255, 256, 1000, 4095, 4096, 123_456_789, 1 << 39] {
            let (low, high) = bounds(index(ns));
            assert!(low <= ns && ns <= high, "{ns}: {low}..{high}");
            assert!(
                (high - low) * 128 <= ns.max(1),
                "{ns}: {low}..{high} too wide"
            );
            assert_eq!(
                index(high) + 1,
                index(high + 1),
                "{ns}: buckets are contiguous"
            );
        }
        assert_eq!(index(u64::MAX), histogram::LEN - 1);
        let mut counts = vec![0u64; histogram::LEN];
        for ns in [3000u64, 3000, 3000, 50_000] {
            counts[index(ns)] += 1;
        }
        assert_eq!(percentile(&counts, 50.0), Some(3007));
        assert_eq!(percentile(&counts, 99.0), Some(bounds(index(50_000)).1));
        assert_eq!(percentile(&counts, 0.0), Some(2992));
        assert_eq!(percentile(&[0; 4], 50.0), None);
        assert_eq!(powers_of_two(&counts), [(4, 3), (65, 4)]);
        let mut fast = vec![0u64; histogram::LEN];
        fast[index(10)] = 2;
        fast[index(1023)] = 1;
        assert_eq!(powers_of_two(&fast), [(1, 3)]);
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
