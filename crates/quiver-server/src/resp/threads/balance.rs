//! How many connection threads should serve connections: a small controller
//! that climbs towards the count that serves the most requests.
//!
//! More threads only help while the active ones are saturated, and even then
//! only when the load comes from somewhere that can go faster: a single
//! client process on the same cores, for one, gets slower when another server
//! thread competes for its core. So the controller tries rather than assumes.
//! When every active thread is saturated and the machine has CPU to spare it
//! adds one and keeps it only if requests per second rose; when more than one is active it now and then
//! tries one fewer and keeps that if requests per second did not fall. A
//! failed try is not repeated at once: the wait doubles up to a bound. A load
//! that plainly fits on fewer threads is gathered without a try.
//!
//! Sans-IO: the caller feeds one [`Sample`] per tick and applies the
//! [`Change`] it gets back (see `trace.rs` for the record of both that the
//! tests replay).

/// A thread counts as saturated when it is busy this fraction of a tick.
const SATURATED: f64 = 0.9;
/// Ticks in a row every active thread must be saturated before one more is
/// tried.
const SATURATED_TICKS: u32 = 2;
/// The active threads are gathered onto one fewer, without a try, when their
/// total busy time would keep that many threads at most this busy...
const LIGHT: f64 = 0.5;
/// ... for this many ticks in a row.
const LIGHT_TICKS: u32 = 10;
/// Ticks a try lasts; the first tick after a change is left out of its
/// measure, while connections move.
const TRIAL_TICKS: u32 = 6;
/// A try whose rate is already this far below the rate before it after
/// [`EARLY_TICKS`] measured ticks is judged at once: a plain loss need not be
/// served for the whole try.
const EARLY_LOSS: f64 = 0.8;
pub(super) const EARLY_TICKS: u32 = 2;
/// Ticks the rate before a change is measured over.
const WINDOW_TICKS: usize = 5;
/// An added thread is kept when requests per second rose by this factor.
/// Rates over a try's 100 ms swing by several percent on their own, and a
/// thread that competes with its clients for the cores costs them latency:
/// it must clearly pay.
const KEEP_SPREAD: f64 = 1.10;
/// One fewer thread is kept when requests per second stayed above this
/// factor of what they were.
const KEEP_GATHER: f64 = 0.97;
/// Ticks between tries of one fewer thread while more than one is active.
const PROBE_TICKS: u32 = 50;
/// A rate this many times higher or lower than at the last decision is a new
/// load, which tries of either kind need not wait for: a higher rate may now
/// gain from another thread, a lower one may fit on fewer or be heavier
/// requests that another thread would serve.
const NEW_LOAD: f64 = 1.5;
/// Ticks in a row the rate over the window must stay that far away: longer
/// than a window, so that one odd tick cannot make a new load.
const NEW_LOAD_TICKS: u32 = 2 * WINDOW_TICKS as u32;
/// One more thread is tried only when the machine left at least this much of
/// a core idle over the window: with every core busy (clients on the same
/// machine, say), another server thread can only take time from its clients.
const SPARE_CORE: f64 = 0.35;
/// The clients count as the same while the number of connections stays
/// within this factor: a try across a change of clients (one run ending and
/// the next starting, say) would compare two different loads.
const SAME_CLIENTS: f64 = 1.25;
/// Ticks where the active threads were less busy than this in total are
/// pauses (between a client's runs, say): no try starts over them and they
/// count towards no new load.
const IDLE: f64 = 0.1;
/// The shortest and longest wait before a failed try is repeated.
const MIN_BACKOFF_TICKS: u32 = 25;
const MAX_BACKOFF_TICKS: u32 = 400;

/// What the threads did during one tick.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    /// Each thread's busy fraction of the tick (may exceed 1 when the tick ran
    /// long).
    pub busy: &'a [f64],
    /// Requests served by all threads during the tick.
    pub requests: u64,
    /// The tick's length in seconds.
    pub seconds: f64,
    /// Connections served at the end of the tick.
    pub connections: usize,
    /// Cores' worth of the machine's CPU left idle during the tick, where
    /// known.
    pub idle_cores: Option<f64>,
}

/// A change in how many threads serve connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// `active` threads now serve: the last one joins.
    Spread { active: usize },
    /// `active` threads now serve: the one after them stops and its
    /// connections move back.
    Gather { active: usize },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Steady,
    /// A change is being tried against the rate before it.
    Trial(Trial),
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Trial {
    /// One more thread (or one fewer).
    spread: bool,
    /// Requests per second before the change.
    baseline: f64,
    ticks: u32,
    /// Requests, seconds, saturated and idle ticks since the change, its
    /// first tick left out.
    requests: u64,
    seconds: f64,
    saturated: u32,
    idle: u32,
    /// Connections when the try began, and whether the clients changed since.
    connections: usize,
    clients_changed: bool,
}

/// What the window keeps of a tick.
#[derive(Debug, Clone, Copy)]
struct Tick {
    requests: u64,
    seconds: f64,
    /// The active threads' busy fractions, summed.
    busy: f64,
    connections: usize,
    idle_cores: Option<f64>,
}

/// The controller's state.
#[derive(Debug)]
pub struct Load {
    threads: usize,
    active: usize,
    mode: Mode,
    /// The last [`WINDOW_TICKS`] ticks.
    window: Vec<Tick>,
    saturated_ticks: u32,
    light_ticks: u32,
    /// Ticks before one more thread may be tried.
    spread_wait: u32,
    spread_backoff: u32,
    /// Ticks before one fewer thread may be tried.
    gather_wait: u32,
    gather_backoff: u32,
    /// Requests per second when the last try was judged.
    judged_rate: f64,
    /// Busy windows in a row whose rate was [`NEW_LOAD`] times above the
    /// judged one (positive) or below it (negative).
    moved_ticks: i32,
}

impl Load {
    /// `threads` threads of which one is active.
    pub fn new(threads: usize) -> Load {
        Load {
            threads,
            active: 1,
            mode: Mode::Steady,
            window: Vec::with_capacity(WINDOW_TICKS),
            saturated_ticks: 0,
            light_ticks: 0,
            spread_wait: 0,
            spread_backoff: MIN_BACKOFF_TICKS,
            gather_wait: PROBE_TICKS,
            gather_backoff: PROBE_TICKS,
            judged_rate: 0.0,
            moved_ticks: 0,
        }
    }

    /// How many threads serve connections now.
    #[cfg(test)]
    pub fn active(&self) -> usize {
        self.active
    }

    /// Takes one tick's sample; returns the change to apply, if any.
    pub fn tick(&mut self, sample: Sample<'_>) -> Option<Change> {
        let active = &sample.busy[..self.active.min(sample.busy.len())];
        let total: f64 = active.iter().sum();
        let saturated = active.iter().all(|&busy| busy >= SATURATED);
        // An idle server keeps its threads: the next load likely resembles
        // the last one.
        let light = self.active > 1 && (IDLE..=LIGHT * (self.active - 1) as f64).contains(&total);
        self.saturated_ticks = if saturated {
            self.saturated_ticks + 1
        } else {
            0
        };
        self.light_ticks = if light { self.light_ticks + 1 } else { 0 };
        if self.window.len() == WINDOW_TICKS {
            self.window.remove(0);
        }
        self.window.push(Tick {
            requests: sample.requests,
            seconds: sample.seconds,
            busy: total,
            connections: sample.connections,
            idle_cores: sample.idle_cores,
        });
        self.spread_wait = self.spread_wait.saturating_sub(1);
        self.gather_wait = self.gather_wait.saturating_sub(1);
        if self.light_ticks >= LIGHT_TICKS {
            self.mode = Mode::Steady;
            return Some(self.change(false));
        }
        let Mode::Trial(trial) = &mut self.mode else {
            return self.steady();
        };
        trial.ticks += 1;
        trial.clients_changed |= !same_clients(trial.connections, sample.connections);
        // The first tick after the change is left out: connections are moving.
        if trial.ticks > 1 {
            trial.requests += sample.requests;
            trial.seconds += sample.seconds;
            trial.saturated += u32::from(saturated);
            trial.idle += u32::from(total < IDLE);
        }
        let plain_loss = trial.ticks > EARLY_TICKS
            && trial.idle == 0
            && rate(trial.requests, trial.seconds) < trial.baseline * EARLY_LOSS;
        if trial.ticks < TRIAL_TICKS && !plain_loss {
            return None;
        }
        let trial = *trial;
        self.mode = Mode::Steady;
        self.judge(trial)
    }

    fn steady(&mut self) -> Option<Change> {
        // Tries compare rates, which mean nothing across a pause: only the
        // ticks since the last pause count, and a try waits for a full window
        // of them, so that its baseline is not taken while clients connect.
        if self.busy_ticks() < WINDOW_TICKS || !self.clients_steady() {
            return None;
        }
        self.notice_new_load();
        if self.saturated_ticks >= SATURATED_TICKS
            && self.active < self.threads
            && self.spread_wait == 0
            && self.spare_core()
        {
            return Some(self.start_trial(true));
        }
        if self.active > 1 && self.gather_wait == 0 {
            return Some(self.start_trial(false));
        }
        None
    }

    /// Ends the wait for a try when the rate has stayed well away from the
    /// last judged one for [`NEW_LOAD_TICKS`] ticks in a row: a window's rate
    /// swings with a thread that lost its core for a moment, and every window
    /// that holds such a tick shows it.
    fn notice_new_load(&mut self) {
        let rate = self.window_rate();
        let moved = if rate > self.judged_rate * NEW_LOAD {
            1
        } else if rate * NEW_LOAD < self.judged_rate {
            -1
        } else {
            0
        };
        self.moved_ticks = if moved != 0 && self.moved_ticks.signum() == moved {
            self.moved_ticks + moved
        } else {
            moved
        };
        if self.moved_ticks.unsigned_abs() < NEW_LOAD_TICKS {
            return;
        }
        tracing::debug!(
            rate,
            judged = self.judged_rate,
            "connection threads: a new load"
        );
        // What earlier tries found says nothing of a new load, either way: a
        // lower rate on saturated threads is heavier requests, which another
        // thread may well serve.
        self.spread_wait = 0;
        self.spread_backoff = MIN_BACKOFF_TICKS;
        self.gather_wait = 0;
        self.gather_backoff = PROBE_TICKS;
        self.judged_rate = rate;
        self.moved_ticks = 0;
    }

    /// Whether the same clients were connected over the whole window.
    fn clients_steady(&self) -> bool {
        let first = self.window.first().map_or(0, |tick| tick.connections);
        self.window
            .iter()
            .all(|tick| same_clients(first, tick.connections))
    }

    /// Whether the machine left room for one more thread over the window
    /// (or its idle time is unknown).
    fn spare_core(&self) -> bool {
        let idle: Option<f64> = self.window.iter().map(|tick| tick.idle_cores).sum();
        idle.is_none_or(|idle| idle >= SPARE_CORE * self.window.len() as f64)
    }

    /// How many of the window's last ticks had work in them.
    fn busy_ticks(&self) -> usize {
        self.window
            .iter()
            .rev()
            .take_while(|tick| tick.busy >= IDLE)
            .count()
    }

    /// Requests per second over the window.
    fn window_rate(&self) -> f64 {
        let (requests, seconds) = self.window.iter().fold((0, 0.0), |(r, s), tick| {
            (r + tick.requests, s + tick.seconds)
        });
        rate(requests, seconds)
    }

    fn start_trial(&mut self, spread: bool) -> Change {
        self.mode = Mode::Trial(Trial {
            spread,
            baseline: self.window_rate(),
            ticks: 0,
            requests: 0,
            seconds: 0.0,
            saturated: 0,
            idle: 0,
            connections: self.window.last().map_or(0, |tick| tick.connections),
            clients_changed: false,
        });
        self.change(spread)
    }

    /// Ends a try: keeps the change, or undoes it and waits longer before the
    /// next try of the same kind.
    fn judge(&mut self, trial: Trial) -> Option<Change> {
        let Trial {
            spread, baseline, ..
        } = trial;
        let measured = trial.ticks - 1;
        // The load paused during the try (a client between runs, say): the
        // try says nothing. It is undone, with no wait added, so the load
        // finds the threads as it left them.
        if trial.idle * 2 > measured || trial.clients_changed {
            tracing::debug!(
                spread,
                clients_changed = trial.clients_changed,
                "connection threads: a try was undone over a pause or a change of clients"
            );
            return Some(self.change(!spread));
        }
        let rate = rate(trial.requests, trial.seconds);
        let kept = if spread {
            rate >= baseline * KEEP_SPREAD
        } else {
            // Fewer threads that were not saturated did not cost the rate:
            // the load itself fell.
            rate >= baseline * KEEP_GATHER || trial.saturated * 2 < measured
        };
        tracing::debug!(
            spread,
            baseline,
            rate,
            kept,
            "connection threads: a try was judged"
        );
        self.judged_rate = if kept { rate } else { baseline };
        self.moved_ticks = 0;
        match (spread, kept) {
            (true, true) => {
                // The spread backoff stays: a rise can be noise, and only a
                // failed try of one fewer (below) shows the thread is needed.
                self.gather_wait = self.gather_backoff;
                None
            }
            (false, true) => {
                // The load did not need that thread: trying to add it back
                // soon would likely fail the same way.
                self.gather_backoff = PROBE_TICKS;
                self.spread_wait = self.spread_backoff;
                self.spread_backoff = (self.spread_backoff * 2).min(MAX_BACKOFF_TICKS);
                None
            }
            (true, false) => {
                self.spread_wait = self.spread_backoff;
                self.spread_backoff = (self.spread_backoff * 2).min(MAX_BACKOFF_TICKS);
                Some(self.change(false))
            }
            (false, false) => {
                self.spread_backoff = MIN_BACKOFF_TICKS;
                self.gather_backoff = (self.gather_backoff * 2).min(MAX_BACKOFF_TICKS);
                self.gather_wait = self.gather_backoff;
                Some(self.change(true))
            }
        }
    }

    fn change(&mut self, spread: bool) -> Change {
        self.saturated_ticks = 0;
        self.light_ticks = 0;
        self.moved_ticks = 0;
        self.window.clear();
        if spread {
            self.active += 1;
            Change::Spread {
                active: self.active,
            }
        } else {
            self.active -= 1;
            Change::Gather {
                active: self.active,
            }
        }
    }
}

/// Whether `a` and `b` connections are close enough to be the same clients.
fn same_clients(a: usize, b: usize) -> bool {
    let (low, high) = (a.min(b) as f64, a.max(b) as f64);
    high <= low * SAME_CLIENTS
}

fn rate(requests: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        requests as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: f64 = 0.02;

    /// One tick where the threads are `busy`, serve `per_second` to
    /// `connections` clients and leave `idle_cores` of the machine idle.
    fn tick(
        load: &mut Load,
        busy: &[f64],
        per_second: f64,
        connections: usize,
        idle_cores: Option<f64>,
    ) -> Option<Change> {
        load.tick(Sample {
            busy,
            requests: (per_second * TICK) as u64,
            seconds: TICK,
            connections,
            idle_cores,
        })
    }

    /// Feeds `ticks` ticks where the threads are `busy` and serve `per_second`.
    fn run(load: &mut Load, ticks: u32, busy: &[f64], per_second: f64) -> Vec<Change> {
        (0..ticks)
            .filter_map(|_| tick(load, busy, per_second, 50, None))
            .collect()
    }

    /// A window of saturated ticks at `per_second` starts a try of one more
    /// thread.
    fn saturate(load: &mut Load, per_second: f64) {
        let mut busy = vec![0.0; load.threads];
        busy[..load.active].fill(0.95);
        let active = load.active + 1;
        let changes = run(load, WINDOW_TICKS as u32, &busy, per_second);
        assert_eq!(changes, vec![Change::Spread { active }]);
    }

    /// Two threads serving after a kept try (500 k requests/s before, 700 k
    /// after).
    fn two_serving() -> Load {
        let mut load = Load::new(2);
        saturate(&mut load, 500_000.0);
        assert!(run(&mut load, TRIAL_TICKS, &[0.9, 0.9], 700_000.0).is_empty());
        assert_eq!(load.active(), 2);
        load
    }

    /// Two threads serving a steady load until the first try of one fewer.
    fn probing_one_fewer() -> Load {
        let mut load = two_serving();
        let changes = run(&mut load, PROBE_TICKS, &[0.9, 0.9], 700_000.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
        load
    }

    #[test]
    fn nothing_changes_while_one_thread_keeps_up() {
        let mut load = Load::new(2);
        assert!(run(&mut load, 500, &[0.8, 0.0], 80_000.0).is_empty());
        assert_eq!(load.active(), 1);
    }

    #[test]
    fn no_thread_is_tried_without_a_spare_core() {
        let mut load = Load::new(2);
        let mut tick =
            |idle_cores| tick(&mut load, &[0.95, 0.0], 1_000_000.0, 50, Some(idle_cores));
        // Saturated, but the clients use the rest of the machine.
        assert!((0..50).all(|_| tick(0.1).is_none()));
        // A core frees up: the try comes once the window shows it.
        let changes: Vec<Change> = (0..WINDOW_TICKS).filter_map(|_| tick(0.9)).collect();
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
    }

    /// Feeds `ticks` saturated ticks of one thread with `connections` clients.
    fn clients(load: &mut Load, ticks: u32, connections: usize, per_second: f64) -> Vec<Change> {
        (0..ticks)
            .filter_map(|_| tick(load, &[0.95, 0.9], per_second, connections, None))
            .collect()
    }

    #[test]
    fn no_try_starts_while_clients_come_or_go() {
        let mut load = Load::new(2);
        // A run's clients leave one by one while the thread is still saturated.
        for connections in (1..=50).rev().step_by(5) {
            assert!(clients(&mut load, 1, connections, 500_000.0).is_empty());
        }
        // The next run's clients stay: the try comes once a window has seen them.
        let changes = clients(&mut load, WINDOW_TICKS as u32, 50, 500_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
    }

    #[test]
    fn a_try_across_a_change_of_clients_is_undone() {
        let mut load = Load::new(2);
        saturate(&mut load, 500_000.0);
        // One run ends and the next starts within the try, faster than the
        // rate before it: the comparison would be between two loads.
        clients(&mut load, 2, 50, 500_000.0);
        clients(&mut load, 1, 10, 300_000.0);
        let changes = clients(&mut load, TRIAL_TICKS - 3, 50, 800_000.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
        // No wait was added: the next try comes at once.
        let changes = clients(&mut load, WINDOW_TICKS as u32, 50, 500_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
    }

    #[test]
    fn a_thread_that_raises_the_rate_is_kept() {
        let mut load = Load::new(2);
        saturate(&mut load, 500_000.0);
        assert!(run(&mut load, TRIAL_TICKS, &[0.9, 0.9], 700_000.0).is_empty());
        assert_eq!(load.active(), 2);
    }

    #[test]
    fn a_thread_that_does_not_raise_the_rate_is_dropped_and_retried_later() {
        let mut load = Load::new(2);
        saturate(&mut load, 80_000.0);
        assert_eq!(
            run(&mut load, TRIAL_TICKS, &[0.5, 0.5], 80_000.0),
            vec![Change::Gather { active: 1 }]
        );
        // Still saturated, but the next try waits out the backoff.
        let changes = run(&mut load, MIN_BACKOFF_TICKS - 1, &[0.95, 0.0], 80_000.0);
        assert!(changes.is_empty(), "{changes:?}");
        let changes = run(&mut load, 1, &[0.95, 0.0], 80_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
        // A second failure waits twice as long.
        run(&mut load, TRIAL_TICKS, &[0.5, 0.5], 80_000.0);
        assert_eq!(load.active(), 1);
        let changes = run(&mut load, 2 * MIN_BACKOFF_TICKS - 1, &[0.95, 0.0], 80_000.0);
        assert!(changes.is_empty(), "{changes:?}");
        let changes = run(&mut load, 1, &[0.95, 0.0], 80_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
    }

    #[test]
    fn one_fewer_is_tried_now_and_then_and_undone_when_the_rate_falls() {
        let mut load = probing_one_fewer();
        assert_eq!(
            run(&mut load, TRIAL_TICKS, &[1.0, 0.0], 650_000.0),
            vec![Change::Spread { active: 2 }]
        );
        // The next probe waits twice as long.
        let changes = run(&mut load, 2 * PROBE_TICKS - 1, &[0.9, 0.9], 700_000.0);
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(
            run(&mut load, 1, &[0.9, 0.9], 700_000.0),
            vec![Change::Gather { active: 1 }]
        );
    }

    #[test]
    fn a_plain_loss_is_undone_before_the_try_ends() {
        // One fewer thread: 400 k against 700 k.
        let mut load = probing_one_fewer();
        let changes = run(&mut load, 1 + EARLY_TICKS, &[1.0, 0.0], 400_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
        // One more thread at a client's expense: 60 k against 80 k.
        let mut load = Load::new(2);
        saturate(&mut load, 80_000.0);
        let changes = run(&mut load, 1 + EARLY_TICKS, &[0.5, 0.5], 60_000.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
    }

    #[test]
    fn one_fewer_is_kept_when_the_rate_holds() {
        let mut load = two_serving();
        let changes = run(&mut load, PROBE_TICKS, &[0.6, 0.6], 90_000.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
        assert!(run(&mut load, TRIAL_TICKS, &[0.7, 0.0], 90_000.0).is_empty());
        assert_eq!(load.active(), 1);
    }

    #[test]
    fn a_thread_kept_on_a_rise_that_one_fewer_does_not_miss_is_tried_less_often() {
        let mut load = Load::new(2);
        saturate(&mut load, 500_000.0);
        for wait in [MIN_BACKOFF_TICKS, 2 * MIN_BACKOFF_TICKS] {
            // A rise of 12 % keeps the second thread...
            assert!(run(&mut load, TRIAL_TICKS, &[0.9, 0.9], 560_000.0).is_empty());
            assert_eq!(load.active(), 2);
            // ... but one thread serves the same rate when tried.
            let changes = run(&mut load, PROBE_TICKS, &[0.9, 0.9], 560_000.0);
            assert_eq!(changes, vec![Change::Gather { active: 1 }]);
            assert!(run(&mut load, TRIAL_TICKS, &[0.95, 0.0], 560_000.0).is_empty());
            assert_eq!(load.active(), 1);
            // The rise was noise: the next try waits, longer each time.
            let changes = run(&mut load, wait - 1, &[0.95, 0.0], 500_000.0);
            assert!(changes.is_empty(), "{changes:?}");
            let changes = run(&mut load, 1, &[0.95, 0.0], 500_000.0);
            assert_eq!(changes, vec![Change::Spread { active: 2 }]);
        }
    }

    /// A try of one more thread at `per_second` that does not raise the
    /// rate, then `wait` ticks of the one thread below saturation.
    fn failed_spread(load: &mut Load, per_second: f64, wait: u32) {
        saturate(load, per_second);
        run(load, TRIAL_TICKS, &[0.5, 0.5], per_second);
        run(load, wait, &[0.8, 0.0], per_second);
    }

    /// A load that lasts long enough to count as a new one.
    fn lasting(load: &mut Load, busy: &[f64], per_second: f64) -> Vec<Change> {
        run(load, WINDOW_TICKS as u32 + NEW_LOAD_TICKS, busy, per_second)
    }

    #[test]
    fn a_new_load_is_tried_afresh() {
        let mut load = Load::new(2);
        // Two failed tries: the next would wait 4 * MIN_BACKOFF_TICKS.
        for _ in 0..2 {
            failed_spread(&mut load, 80_000.0, MIN_BACKOFF_TICKS * 2);
        }
        // A much higher rate on the one thread: another thread is tried as
        // soon as it has lasted.
        let changes = lasting(&mut load, &[0.95, 0.0], 500_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
        run(&mut load, TRIAL_TICKS, &[0.9, 0.9], 700_000.0);
        assert_eq!(load.active(), 2);
        // The rate falls well below what two threads served: one fewer is
        // tried without waiting for the next probe.
        let changes = lasting(&mut load, &[0.6, 0.6], 90_000.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
    }

    #[test]
    fn heavier_requests_are_a_new_load_too() {
        let mut load = Load::new(2);
        // Two failed tries at 1 M requests/s leave a wait of 50 ticks, half
        // of it still to run.
        for _ in 0..2 {
            failed_spread(&mut load, 1_000_000.0, MIN_BACKOFF_TICKS);
        }
        // Requests that cost the server 25 times as much: the thread is
        // saturated at a far lower rate, and another one is tried at once.
        let changes = lasting(&mut load, &[0.95, 0.0], 40_000.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
    }

    #[test]
    fn one_odd_tick_is_not_a_new_load() {
        let mut load = Load::new(2);
        saturate(&mut load, 500_000.0);
        run(&mut load, TRIAL_TICKS, &[0.9, 0.9], 450_000.0);
        run(&mut load, MIN_BACKOFF_TICKS, &[0.8, 0.0], 500_000.0);
        saturate(&mut load, 500_000.0);
        run(&mut load, TRIAL_TICKS, &[0.9, 0.9], 450_000.0);
        // The wait is now 2 * MIN_BACKOFF_TICKS. A tick that counted a burst
        // of requests lifts every window that holds it well above the judged
        // rate, but only for WINDOW_TICKS ticks.
        let mut changes = run(&mut load, 10, &[0.95, 0.0], 500_000.0);
        changes.extend(run(&mut load, 1, &[0.95, 0.0], 3_000_000.0));
        changes.extend(run(&mut load, 20, &[0.95, 0.0], 500_000.0));
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn one_fewer_is_kept_when_the_load_falls_during_the_try() {
        let mut load = probing_one_fewer();
        // The clients went away: the rate fell, but not for want of threads.
        assert!(run(&mut load, TRIAL_TICKS, &[0.1, 0.0], 1_000.0).is_empty());
        assert_eq!(load.active(), 1);
    }

    #[test]
    fn a_try_over_a_pause_is_undone_and_not_held_against_the_next() {
        let mut load = probing_one_fewer();
        // The client stopped right after the try began: both threads come back.
        let changes = run(&mut load, TRIAL_TICKS, &[0.0, 0.0], 0.0);
        assert_eq!(changes, vec![Change::Spread { active: 2 }]);
        // The same on the way up: the newcomer leaves, and the next saturated
        // load tries it again at once.
        let mut load = Load::new(2);
        saturate(&mut load, 500_000.0);
        let changes = run(&mut load, TRIAL_TICKS, &[0.0, 0.0], 0.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
        saturate(&mut load, 500_000.0);
    }

    #[test]
    fn a_pause_in_the_load_keeps_what_tries_found() {
        let mut load = Load::new(2);
        saturate(&mut load, 80_000.0);
        run(&mut load, TRIAL_TICKS, &[0.5, 0.5], 80_000.0);
        assert_eq!(load.active(), 1);
        // The client pauses, then comes back with the same load: the next try
        // still waits out its backoff.
        run(&mut load, 10, &[0.0, 0.0], 0.0);
        let changes = run(&mut load, MIN_BACKOFF_TICKS - 11, &[0.95, 0.0], 80_000.0);
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn a_pause_keeps_the_threads_serving() {
        let mut load = two_serving();
        let changes = run(&mut load, 10 * PROBE_TICKS, &[0.0, 0.0], 0.0);
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(load.active(), 2);
    }

    #[test]
    fn a_light_load_is_gathered_without_a_try() {
        let mut load = Load::new(3);
        saturate(&mut load, 100_000.0);
        run(&mut load, TRIAL_TICKS, &[0.9, 0.9, 0.0], 200_000.0);
        assert_eq!(load.active(), 2);
        // 0.45 in total fits on one thread (at a rate close enough to the last
        // judged one not to count as a new load).
        let changes = run(&mut load, LIGHT_TICKS, &[0.25, 0.2, 0.0], 150_000.0);
        assert_eq!(changes, vec![Change::Gather { active: 1 }]);
        // With one thread there is nothing to gather, and no reason to spread.
        // (A pause gathers nothing either; see below.)
        let changes = run(&mut load, 500, &[0.0, 0.0, 0.0], 0.0);
        assert!(changes.is_empty(), "{changes:?}");
    }
}
