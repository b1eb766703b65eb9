//! Running the scripting commands. EVAL, EVALSHA and FCALL run on the engine's script
//! thread, which holds every shard of the keyspace for the whole script, while the
//! connection awaits the reply and its thread serves other clients (inside EXEC they run
//! in place, in the transaction EXEC holds). Each `redis.call` goes through the command
//! table, as a client's command would.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{Cache, ChangeOrigin, Transaction, glob_match};
use quiver_resp::Protocol;
use quiver_resp::encode::{self as write, Reply};
use quiver_resp::error::CommandError;
use quiver_resp::request::Request;

use tokio::sync::oneshot;

use super::{Callee, ScriptingCommand};
use crate::clock::unix_ms;
use crate::resp::RespShared;
use crate::resp::acl::log::Refusal;
use crate::resp::acl::{Denied, User};
use crate::resp::command::exec::{DataCtx, Outcome, SessionCommand, execute_data};
use crate::resp::command::server::exec::execute_shared;
use crate::resp::command::{Command, ConnectionCommand, ServerCommand, pubsub};
use crate::resp::connection::{Connection, Flow};
use crate::resp::script::{Dispatch, Flags, FunctionStats, Runs, Scripts};
use crate::resp::table::{self, CommandSpec, flag};

/// Runs a scripting command; `held` is the keyspace EXEC holds, when inside one.
/// Outside EXEC, whatever uses the engine is handed to the script thread and the
/// connection awaits its reply; SCRIPT KILL, FUNCTION KILL, FUNCTION STATS and the
/// HELPs answer at once.
pub(in crate::resp) fn execute<'k>(
    conn: &mut Connection,
    command: ScriptingCommand,
    held: Option<(&'k Cache, &mut Transaction<'k>)>,
    out: &mut BytesMut,
) -> Flow {
    let shared = Arc::clone(&conn.shared);
    let caller = Caller {
        db: conn.session.db,
        client: conn.session.id,
        protocol: conn.session.protocol,
        user: Arc::clone(&conn.session.user),
        tracks: conn
            .session
            .tracking
            .as_ref()
            .is_some_and(|t| t.remembers()),
    };
    let before = out.len();
    if answer_now(&shared.scripts, &command, caller.protocol, out) {
        shared.stats.error(&out[before..]);
        return Flow::Continue;
    }
    match held {
        Some((cache, tx)) => {
            let mut dispatch = ScriptDispatch::new(cache, tx);
            shared.scripts.session(&mut dispatch, |runs| {
                on_engine(Arc::clone(&shared), &command, caller, runs, out);
            });
            Flow::Continue
        }
        None => {
            let (waiting, reply) = oneshot::channel();
            let job = Job {
                shared: Arc::clone(&shared),
                command,
                caller,
                out: BytesMut::with_capacity(JOB_REPLY_BYTES),
                waiting,
            };
            shared.scripts.submit(job);
            Flow::Script(reply)
        }
    }
}

/// Room for a job's reply made on the connection's thread: enough for most replies.
const JOB_REPLY_BYTES: usize = 64;

/// A scripting command for the script thread. What the connection's thread made (the
/// command, the reply's buffer) goes back to it with the reply and is freed there: memory
/// freed by another thread than the one that made it costs the allocator dearly.
pub(in crate::resp) struct Job {
    shared: Arc<RespShared>,
    command: ScriptingCommand,
    caller: Caller,
    out: BytesMut,
    waiting: oneshot::Sender<Done>,
}

/// A job's reply, with its command.
#[derive(Debug)]
pub(in crate::resp) struct Done {
    pub out: BytesMut,
    _command: ScriptingCommand,
}

/// A job that has run, ready to hand its reply back.
pub(in crate::resp) struct Finished {
    waiting: oneshot::Sender<Done>,
    done: Done,
}

impl Job {
    /// The database and keys the job names (read ahead of its batch).
    pub(in crate::resp) fn keys(&self) -> (usize, &[Bytes]) {
        match &self.command {
            ScriptingCommand::Run(call) => (self.caller.db, &call.keys),
            _ => (self.caller.db, &[]),
        }
    }

    /// Runs the job in a session of the script thread.
    pub(in crate::resp) fn run(
        mut self,
        runs: &mut Runs<'_, '_, ScriptDispatch<'_, '_>>,
    ) -> Finished {
        on_engine(self.shared, &self.command, self.caller, runs, &mut self.out);
        Finished {
            waiting: self.waiting,
            done: Done {
                out: self.out,
                _command: self.command,
            },
        }
    }
}

impl Finished {
    /// Hands the reply to the connection (gone: nothing to do).
    pub(in crate::resp) fn send(self) {
        let _ = self.waiting.send(self.done);
    }
}

/// Answers the commands that never wait for the engine (SCRIPT KILL, FUNCTION KILL and
/// FUNCTION STATS read atomics; SCRIPT DEBUG and the HELPs need nothing); false for the
/// others.
fn answer_now(
    scripts: &Scripts,
    command: &ScriptingCommand,
    protocol: Protocol,
    out: &mut BytesMut,
) -> bool {
    match command {
        ScriptingCommand::ScriptKill | ScriptingCommand::FunctionKill => {
            let function = matches!(command, ScriptingCommand::FunctionKill);
            match scripts.kill(function) {
                Ok(()) => write::write_simple(out, b"OK"),
                Err(message) => fail(out, message),
            }
        }
        ScriptingCommand::ScriptHelp => help(SCRIPT_HELP, out),
        ScriptingCommand::FunctionHelp => help(FUNCTION_HELP, out),
        ScriptingCommand::FunctionStats => match scripts.stats() {
            Ok(stats) => stats_reply(stats).encode(protocol, out),
            Err(message) => fail(out, message),
        },
        ScriptingCommand::ScriptDebug => fail(
            out,
            "ERR SCRIPT DEBUG is not supported: Quiver has no Lua debugger; scripts run as with SCRIPT DEBUG NO",
        ),
        _ => return false,
    }
    true
}

/// EVALSHA of a script the cache does not hold.
const NO_SCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// Whether an XREAD or XREADGROUP asks to block: a `BLOCK` option (with a value) before
/// `STREAMS`, where Redis refuses it in a script before it reads the timeout.
fn blocks(request: &Request) -> bool {
    let options: Vec<&[u8]> = request
        .args()
        .skip(1)
        .take_while(|arg| !arg.eq_ignore_ascii_case(b"streams"))
        .collect();
    options
        .iter()
        .enumerate()
        .any(|(i, arg)| arg.eq_ignore_ascii_case(b"block") && i + 1 < options.len())
}

fn fail(out: &mut BytesMut, text: &str) {
    write::write_error(out, text.as_bytes());
}

/// [`fail`], for a run that did not start.
fn failed(out: &mut BytesMut, text: &str) -> bool {
    fail(out, text);
    false
}

/// Who runs a command: the session's database, client id, protocol and user, and
/// whether client-side caching remembers the keys it reads now.
struct Caller {
    db: usize,
    client: u64,
    protocol: Protocol,
    user: Arc<User>,
    tracks: bool,
}

/// Runs a command that uses the engine, with the keyspace held, and counts the errors
/// of its reply (INFO errorstats).
fn on_engine(
    shared: Arc<RespShared>,
    command: &ScriptingCommand,
    caller: Caller,
    runs: &mut Runs<'_, '_, ScriptDispatch<'_, '_>>,
    out: &mut BytesMut,
) {
    let (server, before) = (Arc::clone(&shared), out.len());
    // A run's reply is counted as it is written (its errors may be nested, or counted
    // already as its commands' errors).
    if !reply_of(shared, command, caller, runs, out) {
        server.stats.error(&out[before..]);
    }
}

/// Runs the command; true when a script or function ran and wrote the reply.
fn reply_of(
    shared: Arc<RespShared>,
    command: &ScriptingCommand,
    caller: Caller,
    runs: &mut Runs<'_, '_, ScriptDispatch<'_, '_>>,
    out: &mut BytesMut,
) -> bool {
    match command {
        ScriptingCommand::Run(call) => {
            let compiled = match &call.callee {
                Callee::Body(body) => match runs.compile(body) {
                    Ok(sha) => Some(sha),
                    Err(message) => return failed(out, &message),
                },
                _ => None,
            };
            let target = match (&call.callee, &compiled) {
                (Callee::Function(name), _) => runs.function(name).ok_or("ERR Function not found"),
                (Callee::Sha(sha), _) => runs.by_sha(sha).ok_or(NO_SCRIPT),
                (Callee::Body(_), sha) => runs
                    .by_sha(sha.as_deref().unwrap_or_default().as_bytes())
                    .ok_or(NO_SCRIPT),
            };
            let target = match target {
                Ok(target) => target,
                Err(message) => return failed(out, message),
            };
            if let Some(message) = call.bad_numkeys {
                return failed(out, &format!("ERR {message}"));
            }
            let may_write = !target.declared || !target.flags.has(Flags::NO_WRITES);
            let allow_oom = target.flags.has(Flags::ALLOW_OOM);
            // A script that declares flags is checked for memory before it runs, like a
            // command (unless it may not write or declares `allow-oom`).
            if target.declared
                && may_write
                && !allow_oom
                && shared.cache.max_memory_bytes() > 0
                && runs.dispatch().tx.make_room(unix_ms()).is_err()
            {
                return failed(out, &CommandError::Oom.to_string());
            }
            if call.read_only && target.declared && may_write {
                return failed(
                    out,
                    "ERR Can not execute a script with write flag using *_ro command.",
                );
            }
            let _origin = ChangeOrigin::enter(caller.client);
            runs.dispatch().run = Some(RunContext {
                shared,
                db: caller.db,
                read_only: call.read_only || !may_write,
                over_memory_ok: target.declared && allow_oom,
                now_ms: unix_ms(),
                user: caller.user,
                client: caller.client,
                tracks: caller.tracks,
            });
            runs.run(&target, call, caller.protocol, out);
            return true;
        }
        ScriptingCommand::ScriptLoad { body } => match runs.compile(body) {
            Ok(sha) => write::write_bulk(out, sha.as_bytes()),
            Err(message) => fail(out, &message),
        },
        ScriptingCommand::ScriptExists { shas } => {
            write::write_array_len(out, shas.len());
            for sha in shas {
                write::write_integer(out, i64::from(runs.exists(sha)));
            }
        }
        ScriptingCommand::ScriptFlush => {
            runs.flush_scripts();
            write::write_simple(out, b"OK");
        }
        ScriptingCommand::FunctionLoad { code, replace } => {
            match runs.load_library(code, *replace) {
                Ok(name) => {
                    runs.journal_libraries(&shared.cache);
                    write::write_bulk(out, name.as_bytes());
                }
                Err(message) => fail(out, &message),
            }
        }
        ScriptingCommand::FunctionDelete { library } => match runs.delete_library(library) {
            Ok(()) => {
                runs.journal_libraries(&shared.cache);
                write::write_simple(out, b"OK");
            }
            Err(message) => fail(out, message),
        },
        ScriptingCommand::FunctionFlush => {
            runs.flush_libraries();
            runs.journal_libraries(&shared.cache);
            write::write_simple(out, b"OK");
        }
        ScriptingCommand::FunctionList { pattern, with_code } => {
            list_reply(runs.libraries(), pattern.as_deref(), *with_code)
                .encode(caller.protocol, out)
        }
        ScriptingCommand::FunctionDump => write::write_bulk(out, &runs.dump()),
        ScriptingCommand::FunctionRestore { payload, policy } => {
            match runs.restore(payload, *policy) {
                Ok(()) => {
                    runs.journal_libraries(&shared.cache);
                    write::write_simple(out, b"OK");
                }
                Err(message) => fail(out, &message),
            }
        }
        // Answered without the engine, and the same way here.
        other => {
            answer_now(&shared.scripts, other, caller.protocol, out);
        }
    }
    false
}

/// FUNCTION STATS's reply.
fn stats_reply((running, libraries, functions): FunctionStats) -> Reply {
    let running = match running {
        None => Reply::Null,
        Some((name, command, ms)) => Reply::Map(vec![
            (Reply::bulk_static("name"), Reply::bulk(name)),
            (
                Reply::bulk_static("command"),
                Reply::Array(command.into_iter().map(Reply::Bulk).collect()),
            ),
            (
                Reply::bulk_static("duration_ms"),
                Reply::Integer(i64::try_from(ms).unwrap_or(i64::MAX)),
            ),
        ]),
    };
    let counts = Reply::Map(vec![
        (
            Reply::bulk_static("libraries_count"),
            Reply::Integer(libraries as i64),
        ),
        (
            Reply::bulk_static("functions_count"),
            Reply::Integer(functions as i64),
        ),
    ]);
    Reply::Map(vec![
        (Reply::bulk_static("running_script"), running),
        (
            Reply::bulk_static("engines"),
            Reply::Map(vec![(Reply::bulk_static("LUA"), counts)]),
        ),
    ])
}

/// SCRIPT HELP's lines, as Redis words them.
const SCRIPT_HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

/// FUNCTION HELP's lines, as Redis words them.
const FUNCTION_HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

fn help(lines: &[&str], out: &mut BytesMut) {
    write::write_array_len(out, lines.len());
    for line in lines {
        write::write_simple(out, line.as_bytes());
    }
}

/// FUNCTION LIST's reply.
fn list_reply(
    libraries: Vec<crate::resp::script::Library>,
    pattern: Option<&[u8]>,
    with_code: bool,
) -> Reply {
    let entries = libraries
        .into_iter()
        .filter(|library| pattern.is_none_or(|p| glob_match(p, library.name.as_bytes())))
        .map(|library| {
            let functions = library
                .functions
                .into_iter()
                .map(|(name, description, flags)| {
                    Reply::Map(vec![
                        (Reply::bulk_static("name"), Reply::bulk(name)),
                        (
                            Reply::bulk_static("description"),
                            description.map_or(Reply::Null, Reply::Bulk),
                        ),
                        (
                            Reply::bulk_static("flags"),
                            Reply::Set(
                                flags
                                    .names()
                                    .map(|name| Reply::Simple(Bytes::from_static(name.as_bytes())))
                                    .collect(),
                            ),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                (
                    Reply::bulk_static("library_name"),
                    Reply::bulk(library.name),
                ),
                (Reply::bulk_static("engine"), Reply::bulk_static("LUA")),
                (Reply::bulk_static("functions"), Reply::Array(functions)),
            ];
            if with_code {
                fields.push((
                    Reply::bulk_static("library_code"),
                    Reply::Bulk(library.code),
                ));
            }
            Reply::Map(fields)
        })
        .collect();
    Reply::Array(entries)
}

/// Where a running script's `redis.call` goes: the command table, then the held
/// keyspace (or, for the few server commands scripts may send, the shared state). One
/// serves a session of runs (a batch of the script thread), each with its own caller.
pub(in crate::resp) struct ScriptDispatch<'c, 'k> {
    tx: &'c mut Transaction<'k>,
    cache: &'k Cache,
    /// The run under way.
    run: Option<RunContext>,
}

/// Who a run is for, and what it may do.
struct RunContext {
    shared: Arc<RespShared>,
    /// The script's database: SELECT inside a script changes it, not the client's.
    db: usize,
    /// EVAL_RO, FCALL_RO, or a script that declares `no-writes`.
    read_only: bool,
    /// Writes go ahead over `maxmemory`: the script declares `allow-oom`, or it has
    /// already written (as in Redis, only a script's first write is refused for memory,
    /// so that it does not stop half-way).
    over_memory_ok: bool,
    now_ms: u64,
    /// The calling client's user, whose permissions the script's commands need.
    user: Arc<User>,
    client: u64,
    /// The calling client's tracking remembers the keys its reads name (client-side
    /// caching): the script's reads are its reads, as in Redis.
    tracks: bool,
}

impl<'c, 'k> ScriptDispatch<'c, 'k> {
    /// A dispatcher on the keyspace held in `tx`.
    pub(in crate::resp) fn new(cache: &'k Cache, tx: &'c mut Transaction<'k>) -> Self {
        ScriptDispatch {
            tx,
            cache,
            run: None,
        }
    }
}

impl RunContext {
    /// Logs a refused command of the script (ACL LOG, context `lua`).
    fn log_refusal(&self, spec: &CommandSpec, request: &Request, denied: Denied) {
        let client_info = self
            .shared
            .clients
            .get(self.client)
            .map(|client| client.line())
            .unwrap_or_default();
        let refusal = Refusal::of(spec, request, denied, &self.user, "lua", client_info);
        self.shared.log_refusal(refusal);
    }
}

impl Dispatch for ScriptDispatch<'_, '_> {
    fn may_run(&mut self, request: &Request) -> Result<bool, &'static str> {
        let Some(run) = &self.run else {
            return Err("ERR no script is running");
        };
        // Redis looks the command up without checking its arity.
        let spec = match table::resolve(request) {
            Ok(spec) => spec,
            Err(CommandError::WrongArity { .. }) => request
                .name()
                .and_then(table::lookup)
                .ok_or("ERR Invalid command passed to redis.acl_check_cmd()")?,
            Err(_) => return Err("ERR Invalid command passed to redis.acl_check_cmd()"),
        };
        Ok(run.user.check(spec, request).is_ok())
    }

    fn error_replied(&mut self, reply: &[u8]) {
        if let Some(run) = &self.run {
            run.shared.stats.error(reply);
        }
    }

    /// Runs a command of the script, counted as a client's command is (INFO
    /// commandstats and errorstats).
    fn dispatch(&mut self, request: Request, protocol: Protocol, out: &mut BytesMut) {
        let (started, before) = (std::time::Instant::now(), out.len());
        let ran = self.run_command(request, protocol, out);
        if let Some(run) = &self.run {
            let stats = &run.shared.stats;
            match ran {
                // A write refused for memory was refused, not run, as Redis counts it.
                Ran::Yes(spec) if out[before..].starts_with(b"-OOM") => stats.reject(spec),
                Ran::Yes(spec) => {
                    stats.record(spec, started.elapsed(), out.get(before) == Some(&b'-'))
                }
                Ran::Refused(spec) => stats.reject(spec),
                Ran::Unknown => {}
            }
            stats.error(&out[before..]);
        }
    }
}

/// What became of a script's command.
enum Ran {
    Yes(&'static CommandSpec),
    /// Refused before it ran (arity, ACL, read-only script).
    Refused(&'static CommandSpec),
    /// No such command.
    Unknown,
}

impl ScriptDispatch<'_, '_> {
    fn run_command(&mut self, request: Request, protocol: Protocol, out: &mut BytesMut) -> Ran {
        let fail = |out: &mut BytesMut, text: &str| write::write_error(out, text.as_bytes());
        let ScriptDispatch { tx, cache, run } = self;
        let Some(run) = run else {
            fail(out, "ERR no script is running");
            return Ran::Unknown;
        };
        let spec = match table::resolve(&request) {
            Ok(spec) => spec,
            Err(CommandError::WrongArity { command }) => {
                fail(
                    out,
                    "ERR Wrong number of args calling Redis command from script",
                );
                return table::lookup_full(command.as_bytes()).map_or(Ran::Unknown, Ran::Refused);
            }
            Err(_) => {
                fail(out, "ERR Unknown Redis command called from script");
                return Ran::Unknown;
            }
        };
        let refuse = |out: &mut BytesMut, text: &str| {
            fail(out, text);
            Ran::Refused(spec)
        };
        if spec.has(flag::NOSCRIPT) {
            return refuse(out, "ERR This Redis command is not allowed from script");
        }
        if let Err(denied) = run.user.check(spec, &request) {
            run.log_refusal(spec, &request, denied);
            return refuse(
                out,
                match denied {
                    Denied::Command => {
                        "ERR The user executing the script can't run this command or subcommand"
                    }
                    Denied::Key(_) => {
                        "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
                    }
                    Denied::Channel(_) => {
                        "ERR The user executing the script can't publish to the channel mentioned in the command"
                    }
                },
            );
        }
        // It waits for another server, which a script holding the keyspace may not.
        if spec.name == "migrate" {
            return refuse(
                out,
                "ERR MIGRATE cannot run inside a script on Quiver: it waits for the target server, and the script holds the keyspace",
            );
        }
        if spec.has(flag::WRITE) && run.read_only {
            return refuse(
                out,
                "ERR Write commands are not allowed from read-only scripts.",
            );
        }
        if matches!(spec.name, "xread" | "xreadgroup") && blocks(&request) {
            let name = String::from_utf8_lossy(request.name().unwrap_or_default());
            let text = format!("ERR {name} command is not allowed with BLOCK option from scripts");
            return refuse(out, &text);
        }
        let monitors = &run.shared.monitors;
        if monitors.active() {
            monitors.feed(spec, &request, run.db, crate::resp::monitor::Origin::Script);
        }
        let command = match Command::parse_resolved(spec, &request) {
            Ok(command) => command,
            Err(error) => {
                write::write_error(out, error.to_string().as_bytes());
                return Ran::Yes(spec);
            }
        };
        if spec.has(flag::WRITE) {
            run.shared.scripts.state().wrote();
        }
        let mut db = tx
            .db(run.db)
            .expect("SELECT only accepts existing databases");
        if run.over_memory_ok {
            db.allow_over_memory();
        }
        let (writes, before) = (spec.has(flag::WRITE), out.len());
        let mut ctx = DataCtx {
            cache,
            db: &mut db,
            db_index: run.db,
            now_ms: run.now_ms,
            protocol,
            in_transaction: true,
            max_bulk_len: run.shared.settings.limits.max_bulk_len_bytes as u64,
            woken: false,
        };
        if run.tracks && spec.has(flag::READONLY) {
            let keys = spec
                .key_positions(&request)
                .filter_map(|pos| request.arg(pos));
            run.shared.pubsub.remember(run.client, keys);
        }
        let outcome = execute_data(&mut ctx, command, out);
        // A write that was not refused for memory lets the later ones through.
        run.over_memory_ok |= writes && !out[before..].starts_with(b"-OOM");
        let session = match outcome {
            Ok(Outcome::Done) => return Ran::Yes(spec),
            Ok(Outcome::Block { .. }) => {
                write::write_null_array(out, protocol);
                return Ran::Yes(spec);
            }
            Ok(Outcome::Wait { .. }) => {
                write::write_integer(out, 0);
                return Ran::Yes(spec);
            }
            Err(session) => session,
        };
        match session {
            SessionCommand::Connection(ConnectionCommand::Select { db }) => {
                match cache.select(db.into()) {
                    Ok(db) => {
                        run.db = db;
                        write::write_simple(out, b"OK");
                    }
                    Err(_) => write::write_error(
                        out,
                        CommandError::DbIndexOutOfRange.to_string().as_bytes(),
                    ),
                }
            }
            SessionCommand::Connection(ConnectionCommand::Ping { message: None }) => {
                write::write_simple(out, b"PONG")
            }
            SessionCommand::Connection(
                ConnectionCommand::Ping {
                    message: Some(message),
                }
                | ConnectionCommand::Echo { message },
            ) => write::write_bulk(out, &message),
            SessionCommand::Server(command) => {
                match execute_shared(&run.shared, command, protocol, out) {
                    Ok(()) => {}
                    // INFO reads every shard, which the script holds.
                    Err(ServerCommand::Info { .. }) => fail(
                        out,
                        "ERR INFO cannot run inside a script on Quiver: the script holds the keyspace INFO reads",
                    ),
                    Err(_) => fail(out, "ERR This Redis command is not allowed from script"),
                }
            }
            SessionCommand::PubSub(command) => {
                pubsub::exec::execute_detached(&run.shared, command, protocol, out)
            }
            _ => fail(out, "ERR This Redis command is not allowed from script"),
        }
        Ran::Yes(spec)
    }
}
