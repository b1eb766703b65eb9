//! Lua scripting: EVAL's scripts and FUNCTION's libraries on one embedded Lua 5.1 VM
//! (the language Redis embeds), with Redis's `redis` library, `bit` and `cjson`.
//!
//! A script runs atomically on the script thread: it takes every shard lock of the
//! keyspace (as EXEC does), then the engine's lock, and each `redis.call` runs on that
//! held keyspace. Every command that uses the engine runs there (inside EXEC, in place),
//! and the calling connection awaits the reply, so its connection thread keeps serving
//! other clients. Those wait without holding their thread while a script runs
//! (see [`Scripts::settled`]; HTTP and native cache requests too, on the cache's `Hold`);
//! once it has run longer than `busy-reply-threshold` they are answered `BUSY`, and
//! SCRIPT KILL or FUNCTION KILL stop it unless it has written.

pub mod cjson;
mod convert;
mod engine;
mod functions;
mod libs;
mod vm;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use mlua::VmState;
use quiver_core::cache::{Cache, Hold};
use quiver_resp::Protocol;
use quiver_resp::request::Request;

use crate::resp::command::scripting::exec::{Job, ScriptDispatch};
use engine::Engine;
pub(in crate::resp) use engine::Runs;
pub use functions::RestorePolicy;
pub(in crate::resp) use functions::{Flags, Library};
use vm::Vm;

/// `busy-reply-threshold`'s default, as in Redis: 5 seconds.
pub const DEFAULT_BUSY_THRESHOLD_MS: u64 = 5_000;

/// Runs the commands a script sends with `redis.call`: writes exactly one reply (or
/// error) in `protocol` into `out`.
pub(in crate::resp) trait Dispatch {
    fn dispatch(&mut self, request: Request, protocol: Protocol, out: &mut BytesMut);

    /// `redis.acl_check_cmd`: whether the script's user may run `request`, or the error
    /// raised for a command that does not exist.
    fn may_run(&mut self, request: &Request) -> Result<bool, &'static str>;

    /// An error reply at the start of `reply` that a run's reply carries, not counted
    /// where it arose (INFO errorstats).
    fn error_replied(&mut self, reply: &[u8]);
}

/// The scripting engine of a server, shared by its connections.
pub struct Scripts {
    engine: Arc<Mutex<Engine>>,
    state: Arc<RunState>,
    /// The script thread's queue.
    jobs: mpsc::Sender<Job>,
}

/// FUNCTION STATS: the running function (name, command, milliseconds so far), the
/// number of libraries and of functions.
pub(in crate::resp) type FunctionStats = (Option<(String, Vec<Bytes>, u64)>, usize, usize);

/// Longest a library's code may run while it loads (Redis's 500 ms).
const LOAD_TIMEOUT_NS: u64 = 500_000_000;

/// Jobs one batch runs under one hold of the keyspace.
const MAX_BATCH: usize = 64;

impl std::fmt::Debug for Scripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripts").finish_non_exhaustive()
    }
}

/// What the running script is doing, readable without the engine's lock.
pub(in crate::resp) struct RunState {
    /// The script thread holding the keyspace (a batch of jobs is running) and its script
    /// being busy, as every transport sees them.
    hold: Arc<Hold>,
    running: AtomicBool,
    kill: AtomicBool,
    /// The running script has sent a write command: it can no longer be killed.
    wrote: AtomicBool,
    /// The running one is a function (FUNCTION KILL stops it, not SCRIPT KILL).
    function: AtomicBool,
    base: Instant,
    /// When the running script started, in nanoseconds after `base`.
    started_ns: AtomicU64,
    /// `busy-reply-threshold` in milliseconds.
    threshold_ms: AtomicU64,
    /// While a library loads: when its load must have ended, in nanoseconds after
    /// `base` (0: no load running).
    load_deadline_ns: AtomicU64,
    /// The running script's name and command, for FUNCTION STATS.
    current: Mutex<Option<(String, Vec<Bytes>)>>,
    libraries: AtomicUsize,
    functions: AtomicUsize,
    /// Scripts in the EVAL cache, and the VM's memory, for INFO.
    cached_scripts: AtomicUsize,
    vm_bytes: AtomicUsize,
    /// The scripts and functions that declare `no-writes`, readable without the engine
    /// (CLIENT PAUSE WRITE lets their calls through).
    read_only: Mutex<ReadOnlyCalls>,
}

/// What declares `no-writes`: scripts by SHA1 and functions by name, in lower case.
#[derive(Default)]
struct ReadOnlyCalls {
    scripts: HashSet<String>,
    functions: HashSet<String>,
}

impl RunState {
    fn read_only(&self) -> MutexGuard<'_, ReadOnlyCalls> {
        self.read_only
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Called by the VM every few thousand instructions.
    fn tick(&self) -> mlua::Result<VmState> {
        let deadline = self.load_deadline_ns.load(Ordering::Relaxed);
        if deadline != 0 && self.now_ns() > deadline {
            return Err(mlua::Error::runtime("FUNCTION LOAD timeout"));
        }
        if self.kill.load(Ordering::Relaxed) {
            // Redis says SCRIPT KILL for functions too.
            return Err(mlua::Error::runtime(
                "Script killed by user with SCRIPT KILL...",
            ));
        }
        if !self.hold.busy() && self.elapsed_ms() >= self.threshold_ms.load(Ordering::Relaxed) {
            self.hold.set_busy(true);
        }
        Ok(VmState::Continue)
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn elapsed_ms(&self) -> u64 {
        self.now_ns()
            .saturating_sub(self.started_ns.load(Ordering::Relaxed))
            / 1_000_000
    }

    /// Runs `load` (a library's code) with Redis's limit on its time.
    fn loading<T>(&self, load: impl FnOnce() -> T) -> T {
        /// Clears the deadline however the load ends.
        struct Loading<'a>(&'a AtomicU64);
        impl Drop for Loading<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Relaxed);
            }
        }
        let deadline = self.now_ns().saturating_add(LOAD_TIMEOUT_NS).max(1);
        self.load_deadline_ns.store(deadline, Ordering::Relaxed);
        let _loading = Loading(&self.load_deadline_ns);
        load()
    }

    /// Notes that the running script sent a write command.
    pub(in crate::resp) fn wrote(&self) {
        self.wrote.store(true, Ordering::Relaxed);
    }
}

/// Turns the script thread offers other threads, looking for a job after each, before
/// it sleeps until one comes.
const TURNS_BEFORE_SLEEP: usize = 8;

/// The next job (none once the engine is gone). Under load the next job comes within
/// microseconds, and sleeping costs a futex call on both sides.
fn next_job(queue: &mpsc::Receiver<Job>) -> Option<Job> {
    for _ in 0..TURNS_BEFORE_SLEEP {
        match queue.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
            Err(mpsc::TryRecvError::Disconnected) => return None,
        }
    }
    queue.recv().ok()
}

/// Reads ahead the keys a batch's jobs name, a run of jobs on one database at a time. A
/// lone job gains nothing: its lookups come at once.
fn warm(cache: &Cache, batch: &[Job]) {
    if batch.len() < 2 {
        return;
    }
    for run in batch.chunk_by(|a, b| a.keys().0 == b.keys().0) {
        let keys = run.iter().flat_map(|job| job.keys().1);
        cache.warm(run[0].keys().0, keys.map(|key| (key.as_ref(), None)));
    }
}

/// What a caught panic says.
pub(super) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The lower-case hex SHA1 of `data` (script names, `redis.sha1hex`).
pub(in crate::resp) fn sha1_hex(data: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, data);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Answers to SCRIPT KILL and FUNCTION KILL that are not `OK`.
pub(in crate::resp) const NOT_BUSY: &str = "NOTBUSY No scripts in execution right now.";
const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";

impl Scripts {
    /// An engine for `cache` whose scripts become busy after `threshold_ms`.
    pub fn new(cache: Arc<Cache>, threshold_ms: u64) -> Scripts {
        let state = Arc::new(RunState {
            hold: Arc::clone(cache.hold()),
            running: AtomicBool::new(false),
            kill: AtomicBool::new(false),
            wrote: AtomicBool::new(false),
            function: AtomicBool::new(false),
            base: Instant::now(),
            started_ns: AtomicU64::new(0),
            threshold_ms: AtomicU64::new(threshold_ms),
            load_deadline_ns: AtomicU64::new(0),
            current: Mutex::new(None),
            libraries: AtomicUsize::new(0),
            functions: AtomicUsize::new(0),
            cached_scripts: AtomicUsize::new(0),
            vm_bytes: AtomicUsize::new(0),
            read_only: Mutex::default(),
        });
        let vm = Vm::new(Arc::clone(&state)).expect("the Lua VM starts with its sandbox");
        let engine = Arc::new(Mutex::new(Engine::new(vm)));
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread_state = Arc::clone(&state);
        let thread_engine = Arc::clone(&engine);
        std::thread::Builder::new()
            .name("quiver-script".into())
            .spawn(move || {
                // Ends when the engine (the queue's sender) is dropped. Jobs queued
                // together run under one hold of the keyspace.
                while let Some(first) = next_job(&queue) {
                    let mut batch = vec![first];
                    while batch.len() < MAX_BATCH {
                        let Ok(job) = queue.try_recv() else { break };
                        batch.push(job);
                    }
                    warm(&cache, &batch);
                    let mut replies = Vec::with_capacity(batch.len());
                    {
                        let mut tx = cache.transaction();
                        thread_state.hold.take();
                        let mut dispatch = ScriptDispatch::new(&cache, &mut tx);
                        engine::session(&thread_engine, &thread_state, &mut dispatch, |runs| {
                            for job in batch {
                                // A job that panics (a bug) loses its reply, which its client
                                // sees as an error; the thread serves the next one.
                                let run = std::panic::AssertUnwindSafe(|| job.run(runs));
                                match std::panic::catch_unwind(run) {
                                    Ok(finished) => replies.push(finished),
                                    Err(panic) => tracing::error!(
                                        why = panic_text(panic.as_ref()),
                                        "a script job failed inside the engine"
                                    ),
                                }
                            }
                        });
                    }
                    thread_state.hold.release();
                    cache.after_command();
                    for finished in replies {
                        finished.send();
                    }
                }
            })
            .expect("the script thread starts");
        Scripts {
            jobs,
            engine,
            state,
        }
    }

    /// Runs `job` on the script thread, after those before it. Every command that uses
    /// the engine goes there (outside EXEC), so a connection thread never waits for it.
    pub(in crate::resp) fn submit(&self, job: Job) {
        // The thread only stops once `self` is gone.
        let _ = self.jobs.send(job);
    }

    /// Whether the script or function `request` (an EVAL, EVALSHA or FCALL) calls
    /// declares `no-writes`, so that `CLIENT PAUSE WRITE` lets it run, as Redis does.
    pub(in crate::resp) fn declared_read_only(&self, request: &Request) -> bool {
        let (Some(name), Some(target)) = (request.name(), request.arg(1)) else {
            return false;
        };
        if name.eq_ignore_ascii_case(b"eval") {
            return functions::script_shebang(target).is_ok_and(|(flags, declared, _)| {
                declared && flags.has(functions::Flags::NO_WRITES)
            });
        }
        let target = String::from_utf8_lossy(target).to_ascii_lowercase();
        let known = self.state.read_only();
        if name.eq_ignore_ascii_case(b"evalsha") {
            known.scripts.contains(&target)
        } else {
            known.functions.contains(&target)
        }
    }

    fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `busy-reply-threshold` in milliseconds.
    pub fn busy_threshold_ms(&self) -> u64 {
        self.state.threshold_ms.load(Ordering::Relaxed)
    }

    pub fn set_busy_threshold_ms(&self, ms: u64) {
        self.state.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// A script has run past `busy-reply-threshold`: other commands are answered BUSY.
    pub fn busy(&self) -> bool {
        self.state.hold.busy()
    }

    /// The BUSY error for the running script.
    pub(in crate::resp) fn busy_error(&self) -> &'static str {
        if self.state.function.load(Ordering::Relaxed) {
            "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
        } else {
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
        }
    }

    /// Whether a script is running now.
    pub(crate) fn running(&self) -> bool {
        self.state.running.load(Ordering::Acquire)
    }

    /// Whether the script thread holds the keyspace (one atomic load: checked before
    /// every command that is not a script call).
    pub(crate) fn holding(&self) -> bool {
        self.state.hold.held()
    }

    /// Resolves when the script thread lets the keyspace go or its script is busy: a
    /// connection waits here instead of on the keyspace, so its thread keeps serving
    /// others (among them, the client that will send SCRIPT KILL).
    pub(in crate::resp) async fn settled(&self) {
        self.state.hold.settled().await;
    }

    /// SCRIPT KILL (`function` false) or FUNCTION KILL. The other kind of kill while a
    /// script runs is answered with the BUSY error that names the right one.
    pub(in crate::resp) fn kill(&self, function: bool) -> Result<(), &'static str> {
        let state = &self.state;
        if !self.running() {
            return Err(NOT_BUSY);
        }
        // Redis's order: a script that wrote is unkillable whichever KILL is sent.
        if state.wrote.load(Ordering::Relaxed) {
            return Err(UNKILLABLE);
        }
        if state.function.load(Ordering::Relaxed) != function {
            return Err(self.busy_error());
        }
        state.kill.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// INFO's figures: scripts in the EVAL cache, functions, and the VM's bytes.
    pub(in crate::resp) fn info(&self) -> (usize, usize, usize) {
        let state = &self.state;
        (
            state.cached_scripts.load(Ordering::Relaxed),
            state.functions.load(Ordering::Relaxed),
            state.vm_bytes.load(Ordering::Relaxed),
        )
    }

    /// The number of libraries loaded.
    pub fn library_count(&self) -> usize {
        self.state.libraries.load(Ordering::Relaxed)
    }

    /// The libraries as RDB `FUNCTION2` records, what a snapshot carries before its keys
    /// (FUNCTION DUMP's payload without its version and checksum).
    pub fn library_records(&self) -> Vec<u8> {
        let mut payload = self.engine().dump();
        payload.truncate(payload.len() - 10);
        payload
    }

    /// Loads libraries from their code (a snapshot's `FUNCTION2` records).
    pub fn restore_libraries(&self, codes: &[Vec<u8>]) -> Result<(), String> {
        let mut payload = Vec::new();
        for code in codes {
            payload.push(functions::RDB_OPCODE_FUNCTION2);
            quiver_core::cache::rdb::write_string(&mut payload, code);
        }
        functions::seal_payload(&mut payload);
        self.restore(&payload, RestorePolicy::Replace)
    }

    /// FUNCTION RESTORE's payload loaded outside a command (a snapshot, the fuzz target).
    pub fn restore(&self, payload: &[u8], policy: RestorePolicy) -> Result<(), String> {
        self.engine().restore(payload, policy, &self.state)
    }

    /// FUNCTION STATS: the running function (name, command, milliseconds so far), and
    /// the counts of libraries and functions. Never waits for the engine. While a
    /// script (not a function) is busy, the BUSY error, as Redis answers.
    pub(in crate::resp) fn stats(&self) -> Result<FunctionStats, &'static str> {
        let state = &self.state;
        if self.busy() && !state.function.load(Ordering::Relaxed) {
            return Err(self.busy_error());
        }
        let current = state
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|_| state.function.load(Ordering::Relaxed))
            .map(|(name, command)| (name, command, state.elapsed_ms()));
        Ok((
            current,
            state.libraries.load(Ordering::Relaxed),
            state.functions.load(Ordering::Relaxed),
        ))
    }

    /// Runs `work` with the engine and a `redis.call` that sends commands to `dispatch`
    /// (a command inside EXEC, which holds the keyspace itself).
    pub(in crate::resp) fn session<D: Dispatch, R>(
        &self,
        dispatch: &mut D,
        work: impl FnOnce(&mut Runs<'_, '_, D>) -> R,
    ) -> R {
        engine::session(&self.engine, &self.state, dispatch, work)
    }

    /// The state `redis.call` reports writes to.
    pub(in crate::resp) fn state(&self) -> &RunState {
        &self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoCommands;

    impl Dispatch for NoCommands {
        fn dispatch(&mut self, _: Request, _: Protocol, out: &mut BytesMut) {
            quiver_resp::encode::write_error(out, b"ERR no commands here");
        }

        fn may_run(&mut self, _: &Request) -> Result<bool, &'static str> {
            Err("ERR no commands here")
        }

        fn error_replied(&mut self, _: &[u8]) {}
    }

    #[test]
    fn a_long_script_becomes_busy_and_is_killed() {
        let cache = quiver_core::cache::Cache::new(Default::default()).unwrap();
        let scripts = Arc::new(Scripts::new(Arc::new(cache), 20));
        let runner = {
            let scripts = Arc::clone(&scripts);
            std::thread::spawn(move || {
                let mut out = BytesMut::new();
                let call = crate::resp::command::scripting::Run {
                    callee: crate::resp::command::scripting::Callee::Body(Bytes::new()),
                    keys: Vec::new(),
                    args: Vec::new(),
                    read_only: false,
                    request: Vec::new(),
                    bad_numkeys: None,
                };
                scripts.session(&mut NoCommands, |runs| {
                    let sha = runs.compile(b"while true do end").unwrap();
                    let target = runs.by_sha(sha.as_bytes()).unwrap();
                    runs.run(&target, &call, Protocol::Resp2, &mut out);
                });
                out
            })
        };
        while !scripts.busy() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(scripts.kill(true), Err(scripts.busy_error()));
        assert_eq!(scripts.kill(false), Ok(()));
        let out = runner.join().unwrap();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
            "{text}"
        );
        assert!(!scripts.running() && !scripts.busy());
    }
}
