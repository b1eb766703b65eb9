//! The Lua 5.1 VM scripts and functions run on: its sandbox, the `redis` library, a
//! session of runs (its `redis.call`, `redis.pcall` and `redis.setresp` made once and
//! sending commands to one dispatcher), and one run of a script or function.

use std::cell::RefCell;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value};
use quiver_resp::Protocol;
use quiver_resp::num::{MAX_DOUBLE_CHARS, format_double};
use quiver_resp::request::Request;

use super::convert::{self, write_error_text};
use super::{Dispatch, RunState, libs};
use crate::resp::info::REDIS_VERSION;

/// Instructions between two looks at the clock and at SCRIPT KILL.
const HOOK_EVERY: u32 = 10_000;

/// Lua's `setpause`: a collection starts when the heap reaches this percentage of what
/// the last one left.
const GC_PAUSE: i32 = 300;

/// Stack frames the error handler looks through for the script's own line.
const MAX_FRAMES: usize = 64;

/// The sandbox, run once per VM.
const PRELUDE: &str = include_str!("prelude.lua");

/// A Lua VM set up for scripts.
pub(super) struct Vm {
    pub(super) lua: Lua,
    /// The environment scripts run in (read-only globals).
    env: Table,
    /// The environment functions run in: the same, but for the load of their library.
    function_env: Table,
    /// What the prelude's functions reach: `register` and `loading` while a library
    /// loads.
    pub(super) bridge: Table,
    /// The real `redis` table, where each session puts its `call`, `pcall` and
    /// `setresp`.
    redis: Table,
    run: Function,
    handler: Function,
    /// `cjson`'s settings, which SCRIPT FLUSH resets.
    pub(super) cjson: super::cjson::Settings,
}

/// What one run calls.
pub(super) struct Call<'a> {
    pub function: &'a Function,
    /// For the error trace: the script's SHA1 or the function's name.
    pub name: &'a str,
    pub keys: &'a [Bytes],
    pub args: &'a [Bytes],
    /// A function takes `(keys, args)`; a script reads the globals KEYS and ARGV.
    pub is_function: bool,
    /// The client's protocol, for the reply.
    pub protocol: Protocol,
}

impl Vm {
    pub(super) fn new(state: Arc<RunState>) -> mlua::Result<Vm> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::default(),
        )?;
        let globals = lua.globals();
        let cjson = libs::install(&lua, &globals)?;
        let bridge = lua.create_table()?;
        bridge.raw_set(
            "reply_error",
            lua.create_function(|lua, value: Value| {
                let text = match &value {
                    // A library function's error reaches `pcall` as its message, as a C
                    // function's `luaL_error` does.
                    Value::Error(error) => {
                        Some(reply_error(error).unwrap_or_else(|| error_text(error).into_bytes()))
                    }
                    Value::Table(table) => match table.raw_get::<Value>("err")? {
                        Value::String(text) => Some(text.as_bytes().to_vec()),
                        _ => None,
                    },
                    _ => None,
                };
                match text {
                    Some(text) => Ok(Value::String(lua.create_string(text)?)),
                    None => Ok(value),
                }
            })?,
        )?;
        let redis = redis_library(&lua)?;
        let (env, function_env, run): (Table, Table, Function) = lua
            .load(PRELUDE)
            .set_name("=prelude")
            .call((bridge.clone(), globals, redis.clone()))?;
        let handler = lua.create_function(error_handler)?;
        // Scripts make short-lived garbage (KEYS, ARGV, replies): collect after the heap
        // has tripled rather than doubled (Lua's default), which halves the collector's
        // share of a short script's time.
        lua.gc_inc(GC_PAUSE, 0, 0);
        lua.set_global_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| state.tick(),
        )?;
        Ok(Vm {
            lua,
            env,
            function_env,
            bridge,
            redis,
            run,
            handler,
            cjson,
        })
    }

    /// Compiles a script (`@user_script`) or a function library (`@user_function`) in
    /// the sandbox.
    pub(super) fn compile(&self, code: &[u8], library: bool) -> Result<Function, String> {
        let (name, env) = if library {
            ("@user_function", &self.function_env)
        } else {
            ("@user_script", &self.env)
        };
        self.lua
            .load(code)
            .set_name(name)
            .set_environment(env.clone())
            .into_function()
            .map_err(|error| match error {
                mlua::Error::SyntaxError { message, .. } => message,
                other => other.to_string(),
            })
    }

    /// Runs `call` with the session's `redis.call`, and writes the reply into `out`.
    pub(super) fn run<D: Dispatch>(
        &self,
        session: &RefCell<Session<'_, D>>,
        call: Call<'_>,
        out: &mut BytesMut,
    ) {
        session.borrow_mut().protocol = Protocol::Resp2;
        let result = (|| {
            let (ok, value): (bool, Value) = self.run.call((
                call.function,
                &self.handler,
                call.is_function,
                sequence(&self.lua, call.keys)?,
                sequence(&self.lua, call.args)?,
            ))?;
            if ok {
                let script_protocol = session.borrow().protocol;
                let mut errors = Vec::new();
                convert::write_value(&value, call.protocol, script_protocol, out, &mut errors);
                let mut session = session.borrow_mut();
                for at in errors {
                    session.dispatch.error_replied(&out[at..]);
                }
            } else {
                let at = out.len();
                write_failure(&value, call.name, out)?;
                if !convert::counted(&value) {
                    session.borrow_mut().dispatch.error_replied(&out[at..]);
                }
            }
            Ok(())
        })();
        if let Err(error) = result {
            let at = out.len();
            quiver_resp::encode::write_error(out, format!("ERR {}", error_text(&error)).as_bytes());
            session.borrow_mut().dispatch.error_replied(&out[at..]);
        }
    }

    /// What a session needs of the VM, held apart from it (handles to the same values).
    pub(super) fn hooks(&self) -> Hooks {
        Hooks {
            lua: self.lua.clone(),
            redis: self.redis.clone(),
        }
    }
}

/// The VM's handles a session sets its functions with.
pub(super) struct Hooks {
    lua: Lua,
    redis: Table,
}

/// Runs `work` with `redis.call`, `redis.pcall` and `redis.setresp` sending commands to
/// `dispatch`: made once for every run of the session (a batch of the script thread, or
/// one command inside EXEC).
pub(super) fn session<D: Dispatch, R>(
    hooks: Hooks,
    dispatch: &mut D,
    work: impl FnOnce(&RefCell<Session<'_, D>>) -> R,
) -> R {
    let session = RefCell::new(Session {
        dispatch,
        protocol: Protocol::Resp2,
        scratch: BytesMut::new(),
    });
    let Hooks { lua, redis } = &hooks;
    let run_call = |lua: &Lua, args: MultiValue, raise: bool| -> mlua::Result<Value> {
        match session.borrow_mut().call(lua, args)? {
            (Value::Table(table), true) if raise => {
                let text = table.raw_get::<mlua::String>("err")?;
                Err(mlua::Error::external(ReplyError {
                    text: text.as_bytes().to_vec(),
                    counted: convert::counted(&Value::Table(table)),
                }))
            }
            (value, _) => Ok(value),
        }
    };
    let run_call = &run_call;
    let mut output = None;
    let _ = lua.scope(|scope| {
        let installed = (|| {
            redis.raw_set(
                "call",
                scope.create_function(move |lua, args| run_call(lua, args, true))?,
            )?;
            redis.raw_set(
                "pcall",
                scope.create_function(move |lua, args| run_call(lua, args, false))?,
            )?;
            redis.raw_set(
                "acl_check_cmd",
                scope
                    .create_function(|_, args: MultiValue| session.borrow_mut().acl_check(args))?,
            )?;
            redis.raw_set(
                "setresp",
                scope.create_function(|_, args: MultiValue| {
                    let [version] = <[Value; 1]>::try_from(args.into_iter().collect::<Vec<_>>())
                        .map_err(|_| raised("ERR redis.setresp() requires one argument."))?;
                    session.borrow_mut().set_protocol(version)
                })?,
            )
        })();
        // Only out of memory stops it; the runs then fail on the missing functions.
        if let Err(error) = installed {
            tracing::warn!(%error, "scripts run without redis.call");
        }
        output = Some(work(&session));
        Ok(())
    });
    for name in ["call", "pcall", "acl_check_cmd", "setresp"] {
        let _ = redis.raw_set(name, Value::Nil);
    }
    output.expect("the scope runs its closure")
}

/// What `redis.call` and `redis.setresp` work with during a session.
pub(super) struct Session<'d, D> {
    pub(super) dispatch: &'d mut D,
    /// The protocol replies reach the script in (`redis.setresp`).
    protocol: Protocol,
    scratch: BytesMut,
}

impl<D: Dispatch> Session<'_, D> {
    /// Runs one command; returns its reply as a Lua value and whether it is an error
    /// (which `redis.call` raises and `redis.pcall` returns).
    fn call(&mut self, lua: &Lua, args: MultiValue) -> mlua::Result<(Value, bool)> {
        let request = match request_of(&args) {
            Ok(request) => request,
            Err(text) => {
                let table = lua.create_table()?;
                table.raw_set("err", text)?;
                return Ok((Value::Table(table), true));
            }
        };
        self.scratch.clear();
        self.dispatch
            .dispatch(request, self.protocol, &mut self.scratch);
        let failed = self.scratch.first() == Some(&b'-');
        let value = convert::reply_to_lua(lua, &self.scratch)?;
        if failed && let Value::Table(table) = &value {
            // The dispatcher counted the error (INFO errorstats): the script's reply
            // must not count it again, and Redis shows scripts this mark.
            table.raw_set(convert::COUNTED, true)?;
        }
        Ok((value, failed))
    }

    /// `redis.acl_check_cmd(command, args...)`.
    fn acl_check(&mut self, args: MultiValue) -> mlua::Result<bool> {
        let request = request_of(&args).map_err(raised)?;
        self.dispatch.may_run(&request).map_err(raised)
    }

    fn set_protocol(&mut self, version: Value) -> mlua::Result<()> {
        let version = match version {
            Value::Integer(n) => Some(n),
            Value::Number(n) if n.fract() == 0.0 => Some(n as i64),
            _ => None,
        };
        self.protocol = match version.and_then(Protocol::from_version) {
            Some(protocol) => protocol,
            None => return Err(raised("ERR RESP version must be 2 or 3.")),
        };
        Ok(())
    }
}

/// The request `redis.call`'s arguments make, or Redis's error for them.
fn request_of(args: &MultiValue) -> Result<Request, &'static str> {
    if args.is_empty() {
        return Err("ERR Please specify at least one argument for this redis lib call");
    }
    let mut words = Vec::with_capacity(args.len());
    for arg in args {
        words.push(match arg {
            Value::String(s) => Word::Text(s.as_bytes()),
            // Numbers as Redis writes them (`%.17g`).
            Value::Integer(n) => Word::number(*n as f64),
            Value::Number(n) => Word::number(*n),
            _ => return Err("ERR Lua redis lib command arguments must be strings or integers"),
        });
    }
    Ok(Request::from_args(words))
}

/// An argument of `redis.call`: a Lua string, or a number written as Redis writes it.
enum Word<'a> {
    Text(mlua::BorrowedBytes<'a>),
    Number([u8; MAX_DOUBLE_CHARS], usize),
}

impl Word<'_> {
    fn number(value: f64) -> Self {
        let mut buffer = [0u8; MAX_DOUBLE_CHARS];
        let mut digits = [0u8; MAX_DOUBLE_CHARS];
        let text = format_double(value, &mut buffer);
        digits[..text.len()].copy_from_slice(text);
        Word::Number(digits, text.len())
    }
}

impl AsRef<[u8]> for Word<'_> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Word::Text(text) => text,
            Word::Number(digits, len) => &digits[..*len],
        }
    }
}

/// Keys or arguments as a Lua table of strings, each set as it is made (text pushed as
/// it is): however many there are, none stays on the VM's stacks.
fn sequence(lua: &Lua, items: &[Bytes]) -> mlua::Result<Table> {
    let table = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        match std::str::from_utf8(item) {
            Ok(text) => table.raw_set(i + 1, text)?,
            Err(_) => table.raw_set(i + 1, lua.create_string(item)?)?,
        }
    }
    Ok(table)
}

/// The reply to a script that raised an error: its message, then where it was raised.
fn write_failure(value: &Value, name: &str, out: &mut BytesMut) -> mlua::Result<()> {
    let Value::Table(table) = value else {
        write_error_text(out, b"ERR unknown error");
        return Ok(());
    };
    let message = table.raw_get::<mlua::String>("err")?;
    let source = table.raw_get::<Option<mlua::String>>("source")?;
    let line = table.raw_get::<Option<i64>>("line")?;
    let mut text = message.as_bytes().to_vec();
    text.extend_from_slice(format!(" script: {name}, on ").as_bytes());
    match source {
        Some(source) => text.extend_from_slice(&source.as_bytes()),
        None => text.push(b'?'),
    }
    text.extend_from_slice(format!(":{}.", line.unwrap_or(0)).as_bytes());
    write_error_text(out, &text);
    Ok(())
}

/// The handler a run's errors go through, at the point they were raised: the message
/// as Redis words it, and the script's own source and line from the stack.
fn error_handler(lua: &Lua, error: Value) -> mlua::Result<Table> {
    // The script's own frame: where the error was raised.
    let mut place = None;
    for level in 1..MAX_FRAMES {
        let Some(frame) = lua.inspect_stack(level, |debug| {
            let source = debug.source().source.map(|s| s.into_owned());
            (source, debug.current_line())
        }) else {
            break;
        };
        if let (Some(source), line) = frame
            && source.starts_with("@user_")
        {
            place = Some((source, line.unwrap_or(0)));
            break;
        }
    }
    let message: Vec<u8> = match &error {
        Value::Table(table) => match table.raw_get::<Value>("err")? {
            Value::String(s) => s.as_bytes().to_vec(),
            _ => b"ERR unknown error".to_vec(),
        },
        Value::String(s) => [b"ERR ".as_slice(), &s.as_bytes()].concat(),
        Value::Error(error) => match reply_error(error) {
            Some(text) => text,
            // A library function's error names where it was called, as `luaL_error` does.
            None if matches!(**error, mlua::Error::CallbackError { .. }) => {
                let at = place.as_ref().map_or(String::new(), |(source, line)| {
                    format!("{}:{line}: ", source.trim_start_matches('@'))
                });
                format!("ERR {at}{}", error_text(error)).into_bytes()
            }
            None => format!("ERR {}", error_text(error)).into_bytes(),
        },
        Value::Nil => b"ERR nil".to_vec(),
        other => {
            let text = lua.coerce_string(other.clone())?;
            match text {
                Some(text) => [b"ERR ".as_slice(), &text.as_bytes()].concat(),
                None => format!("ERR {}", other.type_name()).into_bytes(),
            }
        }
    };
    let table = lua.create_table()?;
    table.raw_set("err", lua.create_string(message)?)?;
    let counted = match &error {
        Value::Table(_) => convert::counted(&error),
        Value::Error(error) => reply_counted(error),
        _ => false,
    };
    if counted {
        table.raw_set(convert::COUNTED, true)?;
    }
    if let Some((source, line)) = place {
        table.raw_set("source", source)?;
        table.raw_set("line", line)?;
    }
    Ok(table)
}

/// The error `redis.call` raises (a command's error reply, `counted` in INFO errorstats
/// when the command ran), and the `redis` library's own errors.
#[derive(Debug)]
struct ReplyError {
    text: Vec<u8>,
    counted: bool,
}

impl std::fmt::Display for ReplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.text))
    }
}

impl std::error::Error for ReplyError {}

/// An error raised from the `redis` library as Redis raises its own: the text as it
/// stands, without the caller's position.
fn raised(text: &str) -> mlua::Error {
    mlua::Error::external(ReplyError {
        text: text.as_bytes().to_vec(),
        counted: false,
    })
}

/// The reply error inside `error`, if it is one `redis.call` raised.
fn reply_error(error: &mlua::Error) -> Option<Vec<u8>> {
    reply_error_of(error).map(|e| e.text.clone())
}

/// Whether `error` is a reply error already counted in INFO errorstats.
fn reply_counted(error: &mlua::Error) -> bool {
    reply_error_of(error).is_some_and(|e| e.counted)
}

fn reply_error_of(error: &mlua::Error) -> Option<&ReplyError> {
    match error {
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<ReplyError>(),
        mlua::Error::CallbackError { cause, .. } => reply_error_of(cause),
        _ => None,
    }
}

/// The message of a Lua error seen from Rust, without the traceback mlua adds.
pub(super) fn error_text(error: &mlua::Error) -> String {
    match error {
        mlua::Error::RuntimeError(message) => message
            .split_once("\nstack traceback:")
            .map_or(message.as_str(), |(text, _)| text)
            .to_owned(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::CallbackError { cause, .. } => error_text(cause),
        other => other.to_string(),
    }
}

/// The `redis` library, less what the prelude adds (call, pcall, setresp,
/// register_function).
fn redis_library(lua: &Lua) -> mlua::Result<Table> {
    let redis = lua.create_table()?;
    redis.raw_set(
        "sha1hex",
        lua.create_function(|lua, args: MultiValue| {
            let (1, Some(value)) = (args.len(), args.into_iter().next()) else {
                return Err(raised("ERR wrong number of arguments"));
            };
            // What is not a string or a number hashes as the empty string, as in Redis
            // (`lua_tolstring` gives it no bytes).
            let text = lua.coerce_string(value)?;
            Ok(match text {
                Some(text) => super::sha1_hex(&text.as_bytes()),
                None => super::sha1_hex(b""),
            })
        })?,
    )?;
    // Redis's checks of error_reply and status_reply: one string, else an error reply
    // returned (not raised).
    let one_string = |args: MultiValue| match (args.len(), args.into_iter().next()) {
        (1, Some(Value::String(text))) => Some(text),
        _ => None,
    };
    let wrong = |lua: &Lua| {
        let table = lua.create_table()?;
        table.raw_set("err", "ERR wrong number or type of arguments")?;
        Ok::<_, mlua::Error>(table)
    };
    redis.raw_set(
        "error_reply",
        lua.create_function(move |lua, args: MultiValue| {
            let Some(text) = one_string(args) else {
                return wrong(lua);
            };
            let table = lua.create_table()?;
            table.raw_set(
                "err",
                lua.create_string(error_reply_text(&text.as_bytes()))?,
            )?;
            Ok(table)
        })?,
    )?;
    redis.raw_set(
        "status_reply",
        lua.create_function(move |lua, args: MultiValue| {
            let Some(text) = one_string(args) else {
                return wrong(lua);
            };
            let table = lua.create_table()?;
            table.raw_set("ok", text)?;
            Ok(table)
        })?,
    )?;
    redis.raw_set(
        "log",
        lua.create_function(|lua, args: MultiValue| {
            if args.len() < 2 {
                return Err(raised("ERR redis.log() requires two arguments or more."));
            }
            let mut parts = args.into_iter();
            let level = parts
                .next()
                .and_then(|level| lua.coerce_number(level).ok().flatten());
            let Some(level) = level else {
                return Err(raised("ERR First argument must be a number (log level)."));
            };
            let level = level as i64;
            let mut line = String::new();
            for part in parts {
                if let Some(text) = lua.coerce_string(part)? {
                    if !line.is_empty() {
                        line.push(' ');
                    }
                    line.push_str(&text.to_string_lossy());
                }
            }
            match level {
                0 => tracing::debug!(target: "quiver::script", "{line}"),
                1 | 2 => tracing::info!(target: "quiver::script", "{line}"),
                3 => tracing::warn!(target: "quiver::script", "{line}"),
                _ => return Err(raised("ERR Invalid debug level.")),
            }
            Ok(())
        })?,
    )?;
    // Replication is not Quiver's: the calls are checked as Redis checks them (its text
    // for a missing flag says "two arguments") and change nothing.
    redis.raw_set(
        "set_repl",
        lua.create_function(|lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(raised("ERR redis.set_repl() requires two arguments."));
            }
            let flags = args.into_iter().next().map(|v| lua.coerce_number(v));
            let flags = flags.transpose()?.flatten().unwrap_or(0.0) as i64;
            if flags & !3 != 0 {
                return Err(raised(
                    "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                ));
            }
            Ok(())
        })?,
    )?;
    redis.raw_set("replicate_commands", lua.create_function(|_, ()| Ok(true))?)?;
    redis.raw_set("breakpoint", lua.create_function(|_, ()| Ok(false))?)?;
    redis.raw_set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    for (name, value) in [
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
    ] {
        redis.raw_set(name, value)?;
    }
    redis.raw_set("REDIS_VERSION", REDIS_VERSION)?;
    redis.raw_set("REDIS_VERSION_NUM", version_number(REDIS_VERSION))?;
    Ok(redis)
}

/// `redis.error_reply`'s text: a leading `-` dropped, and `ERR` added unless the text
/// starts with its own code (a word followed by a space).
fn error_reply_text(text: &[u8]) -> Vec<u8> {
    let text = text.strip_prefix(b"-").unwrap_or(text);
    if text.contains(&b' ') {
        text.to_vec()
    } else {
        [b"ERR ".as_slice(), text].concat()
    }
}

/// `7.0.15` as `0x07000f`.
fn version_number(version: &str) -> i64 {
    version
        .split('.')
        .take(3)
        .fold(0, |acc, part| (acc << 8) | part.parse::<i64>().unwrap_or(0))
}
