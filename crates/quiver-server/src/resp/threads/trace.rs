//! The balancer's trace: what it measured and decided, tick by tick, written
//! to a file (`resp.balance_trace`) so that a load can be looked at afterwards
//! and replayed. The tests here replay traces recorded under real loads
//! (`traces/`) through a new balancer and check that it takes the recorded
//! decision at every tick.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::balance::Sample;

/// Where the balancer writes what it saw and decided: a header line naming
/// the threads, then one line per tick, `seconds requests connections
/// idle_cores busy,busy,... active` (`-` where the idle CPU is unknown;
/// `active` counts the threads that serve after the tick's decision).
/// Numbers are written so that they read back exactly.
#[derive(Debug)]
pub struct Trace<W: Write> {
    out: W,
    line: String,
}

impl Trace<File> {
    /// Creates (or truncates) the trace file at `path` for `threads` threads;
    /// an error names the file.
    pub fn create(path: &Path, threads: usize) -> io::Result<Trace<File>> {
        let named = |error: io::Error| {
            io::Error::new(
                error.kind(),
                format!("resp.balance_trace {}: {error}", path.display()),
            )
        };
        Trace::new(File::create(path).map_err(named)?, threads).map_err(named)
    }
}

impl<W: Write> Trace<W> {
    pub fn new(mut out: W, threads: usize) -> io::Result<Trace<W>> {
        writeln!(
            out,
            "# quiver resp balance trace, threads {threads}: seconds requests connections idle_cores busy... active"
        )?;
        Ok(Trace {
            out,
            line: String::new(),
        })
    }

    /// Writes one tick, its sample and the threads active after it, in one
    /// write: a trace cut short is whole up to its last tick.
    pub fn record(&mut self, sample: &Sample<'_>, active: usize) -> io::Result<()> {
        let line = &mut self.line;
        line.clear();
        let _ = write!(
            line,
            "{} {} {} ",
            sample.seconds, sample.requests, sample.connections
        );
        match sample.idle_cores {
            Some(idle) => {
                let _ = write!(line, "{idle}");
            }
            None => line.push('-'),
        }
        for (index, busy) in sample.busy.iter().enumerate() {
            line.push(if index == 0 { ' ' } else { ',' });
            let _ = write!(line, "{busy}");
        }
        let _ = writeln!(line, " {active}");
        self.out.write_all(line.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::threads::balance::{Change, EARLY_TICKS, Load};

    /// One tick of a recorded trace: its sample's fields and the threads
    /// active after it.
    struct Recorded {
        seconds: f64,
        requests: u64,
        connections: usize,
        idle_cores: Option<f64>,
        busy: Vec<f64>,
        active: usize,
    }

    impl Recorded {
        fn sample(&self) -> Sample<'_> {
            Sample {
                busy: &self.busy,
                requests: self.requests,
                seconds: self.seconds,
                connections: self.connections,
                idle_cores: self.idle_cores,
            }
        }
    }

    /// Reads a trace written by [`Trace`]: the threads and the ticks.
    fn read_trace(text: &str) -> (usize, Vec<Recorded>) {
        let mut lines = text.lines();
        let header = lines.next().expect("a header line");
        let threads = header
            .split_once("threads ")
            .and_then(|(_, rest)| rest.split(':').next())
            .and_then(|count| count.parse().ok())
            .expect("the threads in the header");
        let ticks = lines
            .map(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                assert_eq!(fields.len(), 6, "a tick has six fields: {line}");
                let number = |field: &str| field.parse::<f64>().expect("a number");
                Recorded {
                    seconds: number(fields[0]),
                    requests: fields[1].parse().expect("requests"),
                    connections: fields[2].parse().expect("connections"),
                    idle_cores: (fields[3] != "-").then(|| number(fields[3])),
                    busy: fields[4].split(',').map(number).collect(),
                    active: fields[5].parse().expect("active"),
                }
            })
            .collect();
        (threads, ticks)
    }

    /// Replays a recorded trace through a new controller, checking that it
    /// takes the recorded decision at every tick; returns the changes with
    /// the index of their tick.
    fn replay(text: &str) -> Vec<(usize, Change)> {
        let (threads, ticks) = read_trace(text);
        let mut load = Load::new(threads);
        let mut changes = Vec::new();
        for (index, tick) in ticks.iter().enumerate() {
            if let Some(change) = load.tick(tick.sample()) {
                changes.push((index, change));
            }
            assert_eq!(load.active(), tick.active, "tick {index}");
        }
        changes
    }

    #[test]
    fn a_trace_reads_back_exactly() {
        let mut trace = Trace::new(Vec::new(), 2).expect("trace");
        let busy = [0.1 + 0.2, 1.0 / 3.0];
        let sample = Sample {
            busy: &busy,
            requests: 31_744,
            seconds: 0.020_093_961,
            connections: 50,
            idle_cores: Some(2.0 / 3.0),
        };
        trace.record(&sample, 2).expect("record");
        trace
            .record(
                &Sample {
                    idle_cores: None,
                    ..sample
                },
                1,
            )
            .expect("record");
        let (threads, ticks) = read_trace(std::str::from_utf8(&trace.out).expect("text"));
        assert_eq!(threads, 2);
        let read: Vec<_> = ticks
            .iter()
            .map(|tick| (tick.sample().busy.to_vec(), tick.idle_cores, tick.active))
            .collect();
        assert_eq!(
            read,
            vec![
                (busy.to_vec(), Some(2.0 / 3.0), 2),
                (busy.to_vec(), None, 1)
            ]
        );
        assert_eq!(ticks[0].seconds, sample.seconds);
        assert_eq!(ticks[0].requests, 31_744);
    }

    // Traces recorded on a 2-core machine (`resp.balance_trace`) with
    // redis-benchmark on the same machine; see docs/benchmarks.md, RESP
    // connection threads.

    #[test]
    fn recorded_pipelined_gets_on_shared_cores_are_never_spread() {
        // -c 50 -P 16 GET: one thread saturated, the client takes the other
        // core, so there is never a spare core to try a thread on.
        assert_eq!(replay(include_str!("traces/p16-get.trace")), vec![]);
    }

    #[test]
    fn recorded_deep_pipelines_try_a_second_thread_ever_less_often() {
        // -c 500 -P 128 SET then GET: the client leaves part of a core idle,
        // so a second thread is tried; it takes that core from the client
        // and is undone, each time after twice the wait.
        let changes = replay(include_str!("traces/p128-set-get.trace"));
        let spreads: Vec<usize> = changes
            .iter()
            .filter(|(_, change)| matches!(change, Change::Spread { .. }))
            .map(|(tick, _)| *tick)
            .collect();
        assert!(spreads.len() >= 3, "{changes:?}");
        let waits: Vec<usize> = spreads.windows(2).map(|pair| pair[1] - pair[0]).collect();
        assert!(waits.windows(2).all(|pair| pair[1] > pair[0]), "{waits:?}");
        assert!(
            matches!(changes.last(), Some((_, Change::Gather { active: 1 }))),
            "{changes:?}"
        );
    }

    #[test]
    fn recorded_single_requests_keep_one_thread() {
        // -c 50 -P 1 SET then GET: one try, undone.
        let changes = replay(include_str!("traces/p1-set-get.trace"));
        assert!(changes.len() <= 2, "{changes:?}");
        assert!(matches!(
            changes.last(),
            None | Some((_, Change::Gather { active: 1 }))
        ));
    }

    #[test]
    fn a_recorded_server_bound_load_keeps_a_second_thread() {
        // -c 50 -P 1 BITCOUNT of 256 KiB bitmaps: the server is the bottleneck
        // and the client leaves most of a core idle. The second thread is
        // kept; the try of one fewer a second later loses plainly and is
        // undone at once.
        let changes = replay(include_str!("traces/bitcount.trace"));
        let kinds: Vec<Change> = changes.iter().map(|(_, change)| *change).collect();
        assert_eq!(
            kinds,
            vec![
                Change::Spread { active: 2 },
                Change::Gather { active: 1 },
                Change::Spread { active: 2 },
            ]
        );
        let (gather, spread) = (changes[1].0, changes[2].0);
        assert!(spread - gather <= 1 + EARLY_TICKS as usize, "{changes:?}");
    }

    #[test]
    fn recorded_benchmark_suite_with_pauses_changes_nothing() {
        // redis-benchmark's default tests, -c 50 -n 50000, with the pauses
        // between them.
        assert_eq!(replay(include_str!("traces/suite.trace")), vec![]);
    }
}
