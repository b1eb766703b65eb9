//! The engine behind the script thread: the VM, EVAL's script cache and FUNCTION's
//! libraries; and [`Runs`], what one session of runs works with (a batch of the script
//! thread, or one command inside EXEC): the engine, and a `redis.call` made once for the
//! whole session.

use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, PoisonError};

use bytes::{Bytes, BytesMut};
use mlua::{Function, RegistryKey};
use quiver_resp::Protocol;

use super::functions::{self, Flags, Library, RestorePolicy};
use super::vm::{self, Call, Session, Vm};
use super::{Dispatch, RunState, sha1_hex};
use crate::resp::command::scripting::Run;

/// A script or function ready to run, as the engine holds it.
pub(in crate::resp) struct Target<'e> {
    function: Function,
    /// The SHA1 of a script, the name of a function.
    pub name: &'e str,
    pub flags: Flags,
    /// A script that declares its flags (`#!lua flags=...`), or a function: its flags
    /// decide whether it may write. A plain script may, unless run by EVAL_RO.
    pub declared: bool,
    pub is_function: bool,
}

pub(super) struct Engine {
    vm: Vm,
    /// EVAL's scripts by SHA1 (lower-case hex), each function in the Lua registry (held
    /// in Rust it would pin a slot of the VM's reference stack, of which there are 8,000).
    scripts: HashMap<String, (RegistryKey, Flags, bool)>,
    functions: functions::Registry,
}

/// Runs `work` with the engine and a `redis.call` that sends commands to `dispatch`.
pub(super) fn session<D: Dispatch, R>(
    engine: &Mutex<Engine>,
    state: &RunState,
    dispatch: &mut D,
    work: impl FnOnce(&mut Runs<'_, '_, D>) -> R,
) -> R {
    let mut engine = engine.lock().unwrap_or_else(PoisonError::into_inner);
    let hooks = engine.vm.hooks();
    let output = vm::session(hooks, dispatch, |session| {
        work(&mut Runs {
            engine: &mut engine,
            session,
            state,
        })
    });
    // The VM's memory as INFO shows it, once per session.
    engine.note(state);
    output
}

impl Engine {
    pub(super) fn new(vm: Vm) -> Engine {
        Engine {
            vm,
            scripts: HashMap::new(),
            functions: functions::Registry::default(),
        }
    }

    /// Compiles and remembers the script with this body unless known (EVAL, SCRIPT
    /// LOAD): its SHA1.
    pub(super) fn compile(&mut self, body: &[u8], state: &RunState) -> Result<String, String> {
        let sha = sha1_hex(body);
        if !self.scripts.contains_key(&sha) {
            let (flags, declared, code) = functions::script_shebang(body)?;
            let function = self.vm.compile(&code, false).map_err(|message| {
                format!("ERR Error compiling script (new function): {message}")
            })?;
            let function = self
                .vm
                .lua
                .create_registry_value(function)
                .map_err(|error| format!("ERR Error compiling script (new function): {error}"))?;
            self.scripts
                .insert(sha.clone(), (function, flags, declared));
            if declared && flags.has(functions::Flags::NO_WRITES) {
                state.read_only().scripts.insert(sha.clone());
            }
            self.note(state);
        }
        Ok(sha)
    }

    /// The script with this SHA1, if loaded (EVALSHA).
    pub(super) fn by_sha(&self, sha: &[u8]) -> Option<Target<'_>> {
        let sha = std::str::from_utf8(sha).ok()?;
        let (name, (function, flags, declared)) = if sha.bytes().any(|b| b.is_ascii_uppercase()) {
            self.scripts.get_key_value(&sha.to_ascii_lowercase())?
        } else {
            self.scripts.get_key_value(sha)?
        };
        Some(Target {
            function: self.stored(function)?,
            name,
            flags: *flags,
            declared: *declared,
            is_function: false,
        })
    }

    /// A script's or function's Lua function from the registry; a failure (a bug) is
    /// logged, and the call answers as if it were not there.
    fn stored(&self, key: &RegistryKey) -> Option<Function> {
        self.vm
            .lua
            .registry_value(key)
            .inspect_err(|error| tracing::error!(%error, "a stored script could not be read"))
            .ok()
    }

    pub(super) fn exists(&self, sha: &[u8]) -> bool {
        std::str::from_utf8(sha)
            .is_ok_and(|sha| self.scripts.contains_key(&sha.to_ascii_lowercase()))
    }

    /// SCRIPT FLUSH.
    pub(super) fn flush_scripts(&mut self, state: &RunState) {
        self.scripts.clear();
        state.read_only().scripts.clear();
        // Redis makes a new VM: lua-cjson's settings are its defaults again.
        self.vm.cjson.reset();
        self.note(state);
    }

    /// Records the figures INFO shows (read there without the engine), after freeing
    /// the registry entries of scripts and functions dropped since.
    fn note(&self, state: &RunState) {
        self.vm.lua.expire_registry_values();
        state
            .cached_scripts
            .store(self.scripts.len(), Ordering::Relaxed);
        state
            .vm_bytes
            .store(self.vm.lua.used_memory(), Ordering::Relaxed);
    }

    /// The function with this name (FCALL).
    pub(super) fn function(&self, name: &[u8]) -> Option<Target<'_>> {
        let (function, name, flags) = self.functions.find(name)?;
        Some(Target {
            function: self.stored(function)?,
            name,
            flags,
            declared: true,
            is_function: true,
        })
    }

    /// FUNCTION LOAD: the library's name.
    pub(super) fn load_library(
        &mut self,
        code: &Bytes,
        replace: bool,
        state: &RunState,
    ) -> Result<String, String> {
        let Engine { vm, functions, .. } = self;
        let name = state.loading(|| functions.load(vm, code, replace))?;
        self.count(state);
        Ok(name)
    }

    /// FUNCTION DELETE.
    pub(super) fn delete_library(
        &mut self,
        name: &[u8],
        state: &RunState,
    ) -> Result<(), &'static str> {
        self.functions.delete(name)?;
        self.count(state);
        Ok(())
    }

    /// FUNCTION FLUSH.
    pub(super) fn flush_libraries(&mut self, state: &RunState) {
        self.functions = functions::Registry::default();
        self.count(state);
    }

    /// The libraries, by name (FUNCTION LIST).
    pub(super) fn libraries(&self) -> Vec<Library> {
        self.functions.libraries()
    }

    /// FUNCTION DUMP's payload.
    pub(super) fn dump(&self) -> Vec<u8> {
        self.functions.dump()
    }

    /// FUNCTION RESTORE.
    pub(super) fn restore(
        &mut self,
        payload: &[u8],
        policy: RestorePolicy,
        state: &RunState,
    ) -> Result<(), String> {
        let Engine { vm, functions, .. } = self;
        state.loading(|| functions.restore(vm, payload, policy))?;
        self.count(state);
        Ok(())
    }

    /// Journals the libraries now loaded in the cache's append-only file (after FUNCTION
    /// LOAD, DELETE, FLUSH or RESTORE); under the engine's lock, so concurrent changes
    /// are journaled in the order they were made.
    pub(super) fn journal_libraries(&self, cache: &quiver_core::cache::Cache) {
        if cache.append_only().enabled() {
            cache.journal_libraries(self.functions.codes());
        }
    }

    /// Notes what the libraries hold now (after FUNCTION LOAD, DELETE, FLUSH, RESTORE):
    /// their counts for INFO, the functions that declare `no-writes`.
    fn count(&self, state: &RunState) {
        let (libraries, count) = self.functions.counts();
        state.libraries.store(libraries, Ordering::Relaxed);
        state.functions.store(count, Ordering::Relaxed);
        state.read_only().functions = self.functions.read_only();
    }
}

/// The engine during a session, with the session's `redis.call`.
pub(in crate::resp) struct Runs<'s, 'd, D> {
    engine: &'s mut Engine,
    session: &'s RefCell<Session<'d, D>>,
    state: &'s RunState,
}

impl<D: Dispatch> Runs<'_, '_, D> {
    /// The dispatcher the session's `redis.call` sends commands to (to set up a run).
    pub(in crate::resp) fn dispatch(&self) -> RefMut<'_, D> {
        RefMut::map(self.session.borrow_mut(), |session| &mut *session.dispatch)
    }

    /// Runs `target` with `call`'s keys and arguments, and writes its reply in
    /// `protocol` into `out`.
    pub(in crate::resp) fn run(
        &self,
        target: &Target,
        call: &Run,
        protocol: Protocol,
        out: &mut BytesMut,
    ) {
        let state = self.state;
        state.started_ns.store(state.now_ns(), Ordering::Relaxed);
        state.kill.store(false, Ordering::Relaxed);
        state.wrote.store(false, Ordering::Relaxed);
        state.function.store(target.is_function, Ordering::Relaxed);
        if target.is_function {
            *state.current.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((target.name.to_owned(), call.request.clone()));
        }
        state.running.store(true, Ordering::Release);
        let vm_call = Call {
            function: &target.function,
            name: target.name,
            keys: &call.keys,
            args: &call.args,
            is_function: target.is_function,
            protocol,
        };
        // A panic inside the run (a bug, or a limit of the Lua bindings) fails this call
        // only: the VM is left as Lua left it, and the engine serves the next one.
        let before = out.len();
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.engine.vm.run(self.session, vm_call, out);
        }));
        if let Err(panic) = ran {
            let why = super::panic_text(panic.as_ref());
            tracing::error!(script = target.name, %why, "a script run failed inside the engine");
            out.truncate(before);
            quiver_resp::encode::write_error(
                out,
                format!("ERR the script failed inside Quiver's engine: {why}").as_bytes(),
            );
            self.dispatch().error_replied(&out[before..]);
        }
        state.running.store(false, Ordering::Release);
        state.kill.store(false, Ordering::Relaxed);
        if target.is_function {
            *state.current.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
        state.hold.set_busy(false);
    }

    /// Compiles and remembers the script with this body unless known (EVAL, SCRIPT
    /// LOAD): its SHA1.
    pub(in crate::resp) fn compile(&mut self, body: &[u8]) -> Result<String, String> {
        self.engine.compile(body, self.state)
    }

    pub(in crate::resp) fn by_sha(&self, sha: &[u8]) -> Option<Target<'_>> {
        self.engine.by_sha(sha)
    }

    pub(in crate::resp) fn function(&self, name: &[u8]) -> Option<Target<'_>> {
        self.engine.function(name)
    }

    pub(in crate::resp) fn exists(&self, sha: &[u8]) -> bool {
        self.engine.exists(sha)
    }

    pub(in crate::resp) fn flush_scripts(&mut self) {
        self.engine.flush_scripts(self.state);
    }

    pub(in crate::resp) fn load_library(
        &mut self,
        code: &Bytes,
        replace: bool,
    ) -> Result<String, String> {
        self.engine.load_library(code, replace, self.state)
    }

    pub(in crate::resp) fn delete_library(&mut self, name: &[u8]) -> Result<(), &'static str> {
        self.engine.delete_library(name, self.state)
    }

    pub(in crate::resp) fn flush_libraries(&mut self) {
        self.engine.flush_libraries(self.state);
    }

    pub(in crate::resp) fn libraries(&self) -> Vec<Library> {
        self.engine.libraries()
    }

    pub(in crate::resp) fn dump(&self) -> Vec<u8> {
        self.engine.dump()
    }

    pub(in crate::resp) fn restore(
        &mut self,
        payload: &[u8],
        policy: RestorePolicy,
    ) -> Result<(), String> {
        self.engine.restore(payload, policy, self.state)
    }

    pub(in crate::resp) fn journal_libraries(&self, cache: &quiver_core::cache::Cache) {
        self.engine.journal_libraries(cache);
    }
}
