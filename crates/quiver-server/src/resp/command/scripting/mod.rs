//! Scripting commands: EVAL EVALSHA EVAL_RO EVALSHA_RO FCALL FCALL_RO, SCRIPT (LOAD
//! EXISTS FLUSH KILL DEBUG HELP) and FUNCTION (LOAD DELETE FLUSH LIST DUMP RESTORE STATS
//! KILL HELP). They run on the connection (`exec.rs`) with the engine in
//! `resp/script`.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;
use quiver_resp::num::parse_i64;

use super::{Args, Command, is};
use crate::resp::script::RestorePolicy;

pub(crate) use specs::SPECS;

fn wrap(command: ScriptingCommand) -> Result<Command, CommandError> {
    Ok(Command::Scripting(command))
}

/// What EVAL and FCALL run: a script's body, a loaded script's SHA1, or a function's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callee {
    Body(Bytes),
    Sha(Bytes),
    Function(Bytes),
}

/// What EVAL, EVALSHA and FCALL run, with what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub callee: Callee,
    pub keys: Vec<Bytes>,
    pub args: Vec<Bytes>,
    pub read_only: bool,
    /// FCALL's whole request, for FUNCTION STATS (empty for a script).
    pub request: Vec<Bytes>,
    /// FCALL's refusal of its `numkeys`, answered once the function is found (Redis
    /// looks the function up first).
    pub bad_numkeys: Option<&'static str>,
}

/// A scripting command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptingCommand {
    /// `EVAL`, `EVALSHA`, `FCALL` and their `_RO` forms (boxed: the command enums stay
    /// as small as their common commands).
    Run(Box<Run>),
    ScriptLoad {
        body: Bytes,
    },
    ScriptExists {
        shas: Vec<Bytes>,
    },
    ScriptFlush,
    ScriptKill,
    ScriptDebug,
    ScriptHelp,
    FunctionLoad {
        code: Bytes,
        replace: bool,
    },
    FunctionDelete {
        library: Bytes,
    },
    FunctionFlush,
    FunctionList {
        pattern: Option<Bytes>,
        with_code: bool,
    },
    FunctionDump,
    FunctionRestore {
        payload: Bytes,
        policy: RestorePolicy,
    },
    FunctionStats,
    FunctionKill,
    FunctionHelp,
}

/// `<callee> numkeys key... arg...` with Redis's checks of `numkeys`.
fn parse_run(
    a: &mut Args<'_>,
    make: fn(Bytes) -> Callee,
    read_only: bool,
) -> Result<Command, CommandError> {
    let callee = make(a.next()?);
    let request: Vec<Bytes> = match callee {
        Callee::Function(_) => (0..a.argc())
            .filter_map(|i| a.request.arg_bytes(i))
            .collect(),
        _ => Vec::new(),
    };
    let numkeys = parse_i64(a.next_slice()?);
    let refusal = match numkeys {
        None if matches!(callee, Callee::Function(_)) => Some("Bad number of keys provided"),
        None => return Err(CommandError::NotInteger),
        Some(n) if n < 0 => Some("Number of keys can't be negative"),
        Some(n) if n as u64 > a.remaining() as u64 => {
            Some("Number of keys can't be greater than number of args")
        }
        Some(_) => None,
    };
    let (keys, bad_numkeys) = match (refusal, &callee) {
        (Some(message), Callee::Function(_)) => {
            a.rest();
            (Vec::new(), Some(message))
        }
        (Some(message), _) => return Err(CommandError::Message(message)),
        (None, _) => (a.take(numkeys.unwrap_or(0) as usize)?, None),
    };
    let args = a.rest();
    wrap(ScriptingCommand::Run(Box::new(Run {
        callee,
        keys,
        args,
        read_only,
        request,
        bad_numkeys,
    })))
}

fn parse_flush(a: &mut Args<'_>, message: &'static str) -> Result<(), CommandError> {
    match a.remaining() {
        0 => Ok(()),
        1 if is(a.peek().unwrap_or_default(), "async")
            || is(a.peek().unwrap_or_default(), "sync") =>
        {
            a.next()?;
            Ok(())
        }
        _ => Err(CommandError::Message(message)),
    }
}

fn parse_function_load(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let mut replace = false;
    while a.remaining() > 1 {
        let option = a.next_slice()?;
        if is(option, "replace") {
            replace = true;
        } else {
            return Err(CommandError::Other {
                code: quiver_resp::error::ErrorCode::Err,
                message: format!("Unknown option given: {}", String::from_utf8_lossy(option))
                    .into(),
            });
        }
    }
    let code = a.next()?;
    wrap(ScriptingCommand::FunctionLoad { code, replace })
}

fn parse_function_list(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let mut pattern = None;
    let mut with_code = false;
    while a.remaining() > 0 {
        let option = a.next_slice()?;
        if is(option, "withcode") && !with_code {
            with_code = true;
        } else if is(option, "libraryname") && pattern.is_none() {
            if a.remaining() == 0 {
                return Err(CommandError::Message("library name argument was not given"));
            }
            pattern = Some(a.next()?);
        } else {
            return Err(CommandError::Other {
                code: quiver_resp::error::ErrorCode::Err,
                message: format!("Unknown argument {}", String::from_utf8_lossy(option)).into(),
            });
        }
    }
    wrap(ScriptingCommand::FunctionList { pattern, with_code })
}

fn parse_function_restore(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let payload = a.next()?;
    let policy = match a.remaining() {
        0 => RestorePolicy::Append,
        1 => {
            let word = a.next_slice()?;
            if is(word, "flush") {
                RestorePolicy::Flush
            } else if is(word, "append") {
                RestorePolicy::Append
            } else if is(word, "replace") {
                RestorePolicy::Replace
            } else {
                return Err(CommandError::Message(
                    "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
                ));
            }
        }
        _ => {
            // Redis names the subcommand as it was sent.
            let name = a.request.arg_bytes(1).unwrap_or_default();
            return Err(CommandError::Other {
                code: quiver_resp::error::ErrorCode::Err,
                message: format!(
                    "unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
                    String::from_utf8_lossy(&name)
                )
                .into(),
            });
        }
    };
    wrap(ScriptingCommand::FunctionRestore { payload, policy })
}
