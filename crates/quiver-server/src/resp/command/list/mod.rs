//! List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET
//! LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH and the blocking BLPOP BRPOP BLMOVE.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: ListCommand) -> Result<Command, CommandError> {
    Ok(Command::List(command))
}

/// An end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The head (`LEFT`).
    Left,
    /// The tail (`RIGHT`).
    Right,
}

/// A list command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListCommand {
    /// `LPUSH`, `RPUSH`, and with `only_if_exists` `LPUSHX`, `RPUSHX`.
    Push {
        key: Bytes,
        end: End,
        only_if_exists: bool,
        elements: Vec<Bytes>,
    },
    /// `LPOP`/`RPOP key [count]` (`count` checked non-negative).
    Pop {
        key: Bytes,
        end: End,
        count: Option<i64>,
    },
    /// `LLEN key`.
    LLen { key: Bytes },
    /// `LRANGE key start stop`.
    LRange { key: Bytes, start: i64, stop: i64 },
    /// `LINDEX key index`. `None`: the index is not an integer, which Redis
    /// reports only after finding a list at `key`.
    LIndex { key: Bytes, index: Option<i64> },
    /// `LSET key index element`; `index` as for `LIndex`.
    LSet {
        key: Bytes,
        index: Option<i64>,
        element: Bytes,
    },
    /// `LINSERT key BEFORE|AFTER pivot element`.
    LInsert {
        key: Bytes,
        before: bool,
        pivot: Bytes,
        element: Bytes,
    },
    /// `LREM key count element`.
    LRem {
        key: Bytes,
        count: i64,
        element: Bytes,
    },
    /// `LTRIM key start stop`.
    LTrim { key: Bytes, start: i64, stop: i64 },
    /// `LPOS key element [RANK r] [COUNT n] [MAXLEN m]`.
    LPos(LPos),
    /// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT`; `RPOPLPUSH` is
    /// `RIGHT LEFT`.
    LMove {
        source: Bytes,
        destination: Bytes,
        from: End,
        to: End,
    },
    /// `BLPOP`/`BRPOP key... timeout` (`timeout_ms` 0 blocks forever).
    BlockingPop {
        keys: Vec<Bytes>,
        end: End,
        timeout_ms: i64,
    },
    /// `LMPOP numkeys key... LEFT|RIGHT [COUNT n]` and `BLMPOP timeout numkeys ...`
    /// (`timeout_ms`: 0 blocks forever).
    MultiPop {
        keys: Vec<Bytes>,
        end: End,
        count: usize,
        timeout_ms: Option<i64>,
    },
    /// `BLMOVE source destination from to timeout`.
    BlMove {
        source: Bytes,
        destination: Bytes,
        from: End,
        to: End,
        timeout_ms: i64,
    },
}

/// `LPOS` with its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LPos {
    /// The list.
    pub key: Bytes,
    /// The element searched.
    pub element: Bytes,
    /// Which match to start from: 1 first, -1 last; never 0.
    pub rank: i64,
    /// `COUNT`: how many matches (0: all); `None` replies a single index.
    pub count: Option<i64>,
    /// `MAXLEN`: how many elements to compare at most (0: all).
    pub max_len: i64,
}

fn end(word: &[u8]) -> Result<End, CommandError> {
    if is(word, "left") {
        Ok(End::Left)
    } else if is(word, "right") {
        Ok(End::Right)
    } else {
        Err(CommandError::Syntax)
    }
}

fn greater_than_zero(arg: &[u8], what: &'static str) -> Result<usize, CommandError> {
    quiver_resp::num::parse_i64(arg)
        .filter(|&n| n > 0)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(CommandError::Message(what))
}

/// The arguments LMPOP/BLMPOP and ZMPOP/BZMPOP share.
pub(crate) struct MultiPopArgs {
    /// The blocking forms' timeout.
    pub timeout_ms: Option<i64>,
    pub keys: Vec<Bytes>,
    /// Whether the second of the two words (`RIGHT`, `MAX`) was named.
    pub second: bool,
    pub count: usize,
}

/// `[timeout] numkeys key... FIRST|SECOND [COUNT n]` (the timeout when `blocking`),
/// checked in Redis's order; `words` are the two ends.
pub(crate) fn multi_pop_args(
    args: &mut Args<'_>,
    blocking: bool,
    words: [&str; 2],
) -> Result<MultiPopArgs, CommandError> {
    let timeout_ms = match blocking {
        true => Some(timeout_ms(args.next_slice()?)?),
        false => None,
    };
    let numkeys = greater_than_zero(args.next_slice()?, "numkeys should be greater than 0")?;
    if numkeys >= args.remaining() {
        return Err(CommandError::Syntax);
    }
    let keys = args.take(numkeys)?;
    let which = args.next_slice()?;
    let second = match () {
        _ if is(which, words[0]) => false,
        _ if is(which, words[1]) => true,
        _ => return Err(CommandError::Syntax),
    };
    let mut count = None;
    while let Ok(option) = args.next_slice() {
        if count.is_none() && is(option, "count") && args.remaining() > 0 {
            count = Some(greater_than_zero(
                args.next_slice()?,
                "count should be greater than 0",
            )?);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    Ok(MultiPopArgs {
        timeout_ms,
        keys,
        second,
        count: count.unwrap_or(1),
    })
}

/// LMPOP, and BLMPOP (`blocking`, its timeout first).
fn multi_pop(args: &mut Args<'_>, blocking: bool) -> Result<Command, CommandError> {
    let parsed = multi_pop_args(args, blocking, ["left", "right"])?;
    wrap(ListCommand::MultiPop {
        keys: parsed.keys,
        end: if parsed.second { End::Right } else { End::Left },
        count: parsed.count,
        timeout_ms: parsed.timeout_ms,
    })
}

fn push(args: &mut Args<'_>, end: End, only_if_exists: bool) -> Result<Command, CommandError> {
    let key = args.next()?;
    wrap(ListCommand::Push {
        key,
        end,
        only_if_exists,
        elements: args.rest(),
    })
}

fn pop(args: &mut Args<'_>, end: End) -> Result<Command, CommandError> {
    let key = args.next()?;
    if args.remaining() > 1 {
        return Err(args.arity_error());
    }
    let count = match args.remaining() {
        0 => None,
        _ => Some(args.non_negative(CommandError::NotPositive)?),
    };
    wrap(ListCommand::Pop { key, end, count })
}

/// A blocking timeout in seconds (a float) as milliseconds, rounded up as
/// Redis 7.0 does; 0 blocks forever.
pub(crate) fn timeout_ms(arg: &[u8]) -> Result<i64, CommandError> {
    // Redis 7.0 reads a long double (`1e400` is finite there) and casts
    // `ceil(seconds * 1000)` to an integer: anything past `i64` wraps negative.
    let text = std::str::from_utf8(arg).map_err(|_| CommandError::TimeoutNotFloat)?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return Err(CommandError::TimeoutNotFloat);
    }
    let seconds = quiver_resp::num::str_to_f64(text).ok_or(CommandError::TimeoutNotFloat)?;
    if seconds.is_nan() {
        return Err(CommandError::TimeoutNotFloat);
    }
    let ms = (seconds * 1000.0).ceil();
    if !(0.0..9.223_372_036_854_775e18).contains(&ms) {
        return Err(CommandError::TimeoutNegative);
    }
    Ok(ms as i64)
}

fn blocking_pop(args: &mut Args<'_>, end: End) -> Result<Command, CommandError> {
    let mut keys = args.rest();
    let timeout = keys.pop().ok_or_else(|| args.arity_error())?;
    let timeout_ms = timeout_ms(&timeout)?;
    wrap(ListCommand::BlockingPop {
        keys,
        end,
        timeout_ms,
    })
}

fn parse_lpos(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let mut lpos = LPos {
        key: args.next()?,
        element: args.next()?,
        rank: 1,
        count: None,
        max_len: 0,
    };
    while let Some(word) = args.peek() {
        args.next_slice()?;
        let more = args.remaining() > 0;
        if is(word, "rank") && more {
            lpos.rank = args.i64()?;
            if lpos.rank == 0 {
                return Err(CommandError::Message(
                    "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                ));
            }
        } else if is(word, "count") && more {
            lpos.count = Some(args.non_negative(CommandError::Message("COUNT can't be negative"))?);
        } else if is(word, "maxlen") && more {
            lpos.max_len = args.non_negative(CommandError::Message("MAXLEN can't be negative"))?;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(ListCommand::LPos(lpos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn pops_and_pushes() {
        assert_eq!(
            parse("RPUSHX l a b").unwrap(),
            Command::List(ListCommand::Push {
                key: b("l"),
                end: End::Right,
                only_if_exists: true,
                elements: vec![b("a"), b("b")]
            })
        );
        assert_eq!(
            parse("LPOP l 0").unwrap(),
            Command::List(ListCommand::Pop {
                key: b("l"),
                end: End::Left,
                count: Some(0)
            })
        );
        assert_eq!(
            error("LPOP l -1"),
            "ERR value is out of range, must be positive"
        );
        assert_eq!(
            error("LPOP l x"),
            "ERR value is out of range, must be positive"
        );
        assert_eq!(
            error("LPOP l 1 2"),
            "ERR wrong number of arguments for 'lpop' command"
        );
        assert_eq!(error("LINSERT l middle a b"), "ERR syntax error");
        assert_eq!(error("LMOVE a b up LEFT"), "ERR syntax error");
    }

    #[test]
    fn blocking_timeouts() {
        assert_eq!(
            parse("BLPOP a b 1.5").unwrap(),
            Command::List(ListCommand::BlockingPop {
                keys: vec![b("a"), b("b")],
                end: End::Left,
                timeout_ms: 1500
            })
        );
        assert_eq!(
            error("BRPOP a x"),
            "ERR timeout is not a float or out of range"
        );
        assert_eq!(error("BRPOP a -1"), "ERR timeout is negative");
        assert_eq!(
            error("BLMOVE a b LEFT RIGHT inf"),
            "ERR timeout is negative"
        );
        assert_eq!(error("BLPOP a 1e400"), "ERR timeout is negative");
        assert_eq!(
            error("BLPOP a nan"),
            "ERR timeout is not a float or out of range"
        );
    }

    #[test]
    fn lpos_options() {
        assert_eq!(
            parse("LPOS l x RANK -2 COUNT 0 MAXLEN 10").unwrap(),
            Command::List(ListCommand::LPos(LPos {
                key: b("l"),
                element: b("x"),
                rank: -2,
                count: Some(0),
                max_len: 10
            }))
        );
        assert!(
            error("LPOS l x RANK 0")
                .starts_with("ERR RANK can't be zero: use 1 to start from the first match")
        );
        assert_eq!(error("LPOS l x COUNT -1"), "ERR COUNT can't be negative");
        assert_eq!(error("LPOS l x MAXLEN -1"), "ERR MAXLEN can't be negative");
        assert_eq!(error("LPOS l x RANK"), "ERR syntax error");
    }
}
