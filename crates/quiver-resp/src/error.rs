//! Redis's error replies: an error code as the first word (so client
//! libraries classify them) and Redis 7's exact message texts.
//!
//! `Display` is the whole reply line without the leading `-`; encoders turn
//! `\r` and `\n` (which may come from quoted client input) into spaces.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;

/// The first word of an error reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The generic error.
    Err,
    /// A command against a key of another type.
    WrongType,
    /// A command before `AUTH` when a password is required.
    NoAuth,
    /// `AUTH` with a wrong user or password.
    WrongPass,
    /// A write refused by the memory limit.
    Oom,
    /// `EXEC` of a transaction that had a queueing error.
    ExecAbort,
    /// `EVALSHA` of an unknown script.
    NoScript,
    /// A target key that already exists (`RESTORE`, `COPY`).
    BusyKey,
    /// `HELLO` with an unsupported protocol version.
    NoProto,
    /// The server is busy running a script.
    Busy,
    /// The server is loading its data set.
    Loading,
    /// A write against a read-only replica.
    ReadOnly,
    /// A command the user is not allowed to run.
    NoPerm,
    /// A write refused because the last snapshot failed.
    MisConf,
}

impl ErrorCode {
    /// The code as Redis spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Err => "ERR",
            ErrorCode::WrongType => "WRONGTYPE",
            ErrorCode::NoAuth => "NOAUTH",
            ErrorCode::WrongPass => "WRONGPASS",
            ErrorCode::Oom => "OOM",
            ErrorCode::ExecAbort => "EXECABORT",
            ErrorCode::NoScript => "NOSCRIPT",
            ErrorCode::BusyKey => "BUSYKEY",
            ErrorCode::NoProto => "NOPROTO",
            ErrorCode::Busy => "BUSY",
            ErrorCode::Loading => "LOADING",
            ErrorCode::ReadOnly => "READONLY",
            ErrorCode::NoPerm => "NOPERM",
            ErrorCode::MisConf => "MISCONF",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many bytes of client input an unknown-command error quotes (Redis's
/// `%.128s` and its 128-byte argument preview).
pub const QUOTE_MAX_BYTES: usize = 128;

/// Most arguments an unknown-command error keeps: each adds at least three
/// bytes (`'' `) to a preview of at most [`QUOTE_MAX_BYTES`].
const PREVIEW_MAX_ARGS: usize = QUOTE_MAX_BYTES / 3 + 1;

/// An error reply to one command.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// No command of that name.
    #[error(
        "ERR unknown command '{}', with args beginning with: {}",
        quote(name, QUOTE_MAX_BYTES),
        preview(args)
    )]
    UnknownCommand {
        /// The name as sent.
        name: Bytes,
        /// The first arguments, as sent.
        args: Vec<Bytes>,
    },
    /// A container command (`CLIENT`, `CONFIG`...) without that subcommand.
    #[error("ERR unknown subcommand '{}'. Try {} HELP.", quote(subcommand, QUOTE_MAX_BYTES), command.to_ascii_uppercase())]
    UnknownSubcommand {
        /// The container command's name.
        command: &'static str,
        /// The subcommand as sent.
        subcommand: Bytes,
    },
    /// An argument count the command does not accept.
    #[error("ERR wrong number of arguments for '{command}' command")]
    WrongArity {
        /// Full lower-case name, `get` or `client|kill`.
        command: &'static str,
    },
    /// An option that is unknown, repeated wrongly or misplaced.
    #[error("ERR syntax error")]
    Syntax,
    /// An argument that must be an `i64`.
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    /// An argument that must be a float.
    #[error("ERR value is not a valid float")]
    NotFloat,
    /// A count that must be positive.
    #[error("ERR value is out of range, must be positive")]
    NotPositive,
    /// A number outside what the command allows.
    #[error("ERR value is out of range")]
    OutOfRange,
    /// A number outside the range the command takes.
    #[error("ERR value is out of range, value must between {min} and {max}")]
    OutOfRangeBetween {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// An expire time that is not positive or overflows.
    #[error("ERR invalid expire time in '{command}' command")]
    InvalidExpireTime {
        /// The command's lower-case name.
        command: &'static str,
    },
    /// A score range bound that is not a float.
    #[error("ERR min or max is not a float")]
    MinMaxNotFloat,
    /// A lex range bound that does not start with `[`, `(`, or is `-`/`+`.
    #[error("ERR min or max not valid string range item")]
    MinMaxNotLexRange,
    /// A blocking timeout that is not a number.
    #[error("ERR timeout is not a float or out of range")]
    TimeoutNotFloat,
    /// A negative blocking timeout.
    #[error("ERR timeout is negative")]
    TimeoutNegative,
    /// A `SCAN` cursor that is not an unsigned integer.
    #[error("ERR invalid cursor")]
    InvalidCursor,
    /// A key of another type than the command works on.
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    /// `INCR` and friends past `i64`.
    #[error("ERR increment or decrement would overflow")]
    Overflow,
    /// `HINCRBYFLOAT` by an infinite increment.
    #[error("ERR value is NaN or Infinity")]
    NanOrInfinityArgument,
    /// `INCRBYFLOAT` to NaN or infinity.
    #[error("ERR increment would produce NaN or Infinity")]
    NanOrInfinity,
    /// A command that needs an existing key (`RENAME`, `LSET`).
    #[error("ERR no such key")]
    NoSuchKey,
    /// `LSET` past the end.
    #[error("ERR index out of range")]
    IndexOutOfRange,
    /// `SELECT` of a database that does not exist.
    #[error("ERR DB index is out of range")]
    DbIndexOutOfRange,
    /// A command before authenticating.
    #[error("NOAUTH Authentication required.")]
    NoAuth,
    /// Wrong credentials.
    #[error("WRONGPASS invalid username-password pair or user is disabled.")]
    WrongPass,
    /// `AUTH password` while no password is configured.
    #[error(
        "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
    )]
    AuthNotConfigured,
    /// A write refused by `maxmemory` under `noeviction`.
    #[error("OOM command not allowed when used memory > 'maxmemory'.")]
    Oom,
    /// `EXEC` after a queueing error.
    #[error("EXECABORT Transaction discarded because of previous errors.")]
    ExecAbort,
    /// `EVALSHA` of an unknown script.
    #[error("NOSCRIPT No matching script. Please use EVAL.")]
    NoScript,
    /// The target key exists.
    #[error("BUSYKEY Target key name already exists.")]
    BusyKey,
    /// `HELLO` with a protocol version other than 2 or 3.
    #[error("NOPROTO unsupported protocol version")]
    NoProto,
    /// `EXEC` outside a transaction.
    #[error("ERR EXEC without MULTI")]
    ExecWithoutMulti,
    /// `DISCARD` outside a transaction.
    #[error("ERR DISCARD without MULTI")]
    DiscardWithoutMulti,
    /// `MULTI` inside a transaction.
    #[error("ERR MULTI calls can not be nested")]
    NestedMulti,
    /// `WATCH` inside a transaction.
    #[error("ERR WATCH inside MULTI is not allowed")]
    WatchInMulti,
    /// Another `ERR` message with fixed text (option conflicts and the like).
    #[error("ERR {0}")]
    Message(&'static str),
    /// Any other error reply, with its code.
    #[error("{code} {message}")]
    Other {
        /// The first word.
        code: ErrorCode,
        /// The rest of the line.
        message: Cow<'static, str>,
    },
}

impl CommandError {
    /// The unknown-command error for `args` (name first).
    pub fn unknown_command(name: Bytes, args: impl IntoIterator<Item = Bytes>) -> CommandError {
        CommandError::UnknownCommand {
            name,
            args: args.into_iter().take(PREVIEW_MAX_ARGS).collect(),
        }
    }

    /// Redis's reply when `EXEC` itself is rejected (wrong arity, `NOAUTH`,
    /// `OOM`...): the transaction is discarded and the cause quoted.
    pub fn exec_abort(cause: &CommandError) -> CommandError {
        let text = cause.to_string();
        // Redis formats arity, unknown-command and other formatted rejections (the
        // subscribed context's) without the `ERR ` prefix; shared error objects keep
        // their code.
        let formatted = matches!(
            cause,
            CommandError::WrongArity { .. }
                | CommandError::UnknownCommand { .. }
                | CommandError::UnknownSubcommand { .. }
                | CommandError::Other {
                    code: ErrorCode::Err,
                    ..
                }
        );
        let reason = if formatted {
            text.strip_prefix("ERR ").unwrap_or(&text)
        } else {
            &text
        };
        CommandError::Other {
            code: ErrorCode::ExecAbort,
            message: format!("Transaction discarded because of: {reason}").into(),
        }
    }

    /// The error code this reply starts with.
    pub fn code(&self) -> ErrorCode {
        match self {
            CommandError::WrongType => ErrorCode::WrongType,
            CommandError::NoAuth => ErrorCode::NoAuth,
            CommandError::WrongPass => ErrorCode::WrongPass,
            CommandError::Oom => ErrorCode::Oom,
            CommandError::ExecAbort => ErrorCode::ExecAbort,
            CommandError::NoScript => ErrorCode::NoScript,
            CommandError::BusyKey => ErrorCode::BusyKey,
            CommandError::NoProto => ErrorCode::NoProto,
            CommandError::Other { code, .. } => *code,
            _ => ErrorCode::Err,
        }
    }
}

/// Client bytes as C's `%.Ns` prints them: cut at a NUL and at `max` bytes.
fn quote(bytes: &[u8], max: usize) -> Cow<'_, str> {
    let end = bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(bytes.len())
        .min(max);
    String::from_utf8_lossy(&bytes[..end])
}

/// Redis's argument preview: `'a' 'b' ` while under 128 bytes.
fn preview(args: &[Bytes]) -> String {
    let mut out = Vec::new();
    for arg in args {
        if out.len() >= QUOTE_MAX_BYTES {
            break;
        }
        let room = QUOTE_MAX_BYTES - out.len();
        let end = arg
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(arg.len())
            .min(room);
        out.push(b'\'');
        out.extend_from_slice(&arg[..end]);
        out.extend_from_slice(b"' ");
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    #[test]
    fn unknown_command_text() {
        let err = CommandError::unknown_command(b("foo"), [b("a"), b("b")]);
        assert_eq!(
            err.to_string(),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
        );
        let none = CommandError::unknown_command(b("foo"), []);
        assert_eq!(
            none.to_string(),
            "ERR unknown command 'foo', with args beginning with: "
        );
        let long = Bytes::from(vec![b'x'; 200]);
        let err = CommandError::unknown_command(long.clone(), [long.clone(), long]);
        let text = err.to_string();
        assert_eq!(
            text,
            format!(
                "ERR unknown command '{}', with args beginning with: '{}' ",
                "x".repeat(128),
                "x".repeat(128)
            )
        );
    }

    #[test]
    fn fixed_texts_and_codes() {
        assert_eq!(
            CommandError::WrongArity { command: "get" }.to_string(),
            "ERR wrong number of arguments for 'get' command"
        );
        assert_eq!(
            CommandError::UnknownSubcommand {
                command: "client",
                subcommand: b("foo")
            }
            .to_string(),
            "ERR unknown subcommand 'foo'. Try CLIENT HELP."
        );
        assert_eq!(
            CommandError::WrongType.to_string(),
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        );
        assert_eq!(CommandError::WrongType.code(), ErrorCode::WrongType);
        assert_eq!(CommandError::Syntax.code(), ErrorCode::Err);
        assert_eq!(
            CommandError::NotInteger.to_string(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            CommandError::InvalidExpireTime { command: "set" }.to_string(),
            "ERR invalid expire time in 'set' command"
        );
        assert_eq!(
            CommandError::Oom.to_string(),
            "OOM command not allowed when used memory > 'maxmemory'."
        );
        assert_eq!(CommandError::NoProto.code().as_str(), "NOPROTO");
        let other = CommandError::Other {
            code: ErrorCode::Busy,
            message: "script".into(),
        };
        assert_eq!(other.to_string(), "BUSY script");
        assert_eq!(other.code(), ErrorCode::Busy);
        assert_eq!(
            CommandError::exec_abort(&CommandError::WrongArity { command: "exec" }).to_string(),
            "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command"
        );
        assert_eq!(
            CommandError::exec_abort(&CommandError::NoAuth).to_string(),
            "EXECABORT Transaction discarded because of: NOAUTH Authentication required."
        );
    }
}
