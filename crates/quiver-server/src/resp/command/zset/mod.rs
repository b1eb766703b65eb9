//! Sorted set commands: ZADD ZREM ZSCORE ZMSCORE ZINCRBY ZCARD ZCOUNT
//! ZLEXCOUNT ZRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX
//! ZREVRANGE ZRANK ZREVRANK ZPOPMIN ZPOPMAX ZRANGESTORE ZUNION ZINTER ZDIFF ZUNIONSTORE
//! ZINTERSTORE ZDIFFSTORE ZINTERCARD ZREMRANGEBYSCORE ZREMRANGEBYRANK ZREMRANGEBYLEX ZSCAN.

pub(crate) mod exec;
mod range;
mod specs;

use bytes::Bytes;

pub use quiver_core::cache::ZSetOp;
pub use range::{LexBound, ScoreBound, ZRange, ZRangeBy};

use super::hash::random_args;
use super::keys::{Scan, parse_key_scan};
use super::list::{multi_pop_args, timeout_ms};
use super::{Args, Command, is};
use quiver_core::cache::ValueType;
use quiver_resp::error::{CommandError, ErrorCode};
use quiver_resp::num::{parse_f64, parse_i64};
use range::{RangeKind, lex_range, parse_zrange, score_range};

pub(crate) use specs::SPECS;

fn wrap(command: SortedSetCommand) -> Result<Command, CommandError> {
    Ok(Command::SortedSet(command))
}

/// A sorted set command.
#[derive(Clone, Debug, PartialEq)]
pub enum SortedSetCommand {
    /// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member...`.
    ZAdd(ZAdd),
    /// `ZREM key member...`.
    ZRem { key: Bytes, members: Vec<Bytes> },
    /// `ZSCORE key member`.
    ZScore { key: Bytes, member: Bytes },
    /// `ZMSCORE key member...`.
    ZMScore { key: Bytes, members: Vec<Bytes> },
    /// `ZINCRBY key increment member`.
    ZIncrBy {
        key: Bytes,
        increment: f64,
        member: Bytes,
    },
    /// `ZCARD key`.
    ZCard { key: Bytes },
    /// `ZCOUNT key min max`.
    ZCount {
        key: Bytes,
        min: ScoreBound,
        max: ScoreBound,
    },
    /// `ZLEXCOUNT key min max`.
    ZLexCount {
        key: Bytes,
        min: LexBound,
        max: LexBound,
    },
    /// `ZRANGE` and its older forms, and `ZRANGESTORE`.
    ZRange(ZRange),
    /// `ZRANK`/`ZREVRANK key member`.
    ZRank {
        key: Bytes,
        member: Bytes,
        rev: bool,
    },
    /// `ZPOPMIN`/`ZPOPMAX key [count]` (count checked non-negative).
    ZPop {
        key: Bytes,
        max: bool,
        count: Option<i64>,
    },
    /// `ZUNION`, `ZINTER`, `ZDIFF` and their `STORE` forms.
    ZStore(ZStore),
    /// `BZPOPMIN`/`BZPOPMAX key... timeout` (`timeout_ms` 0 blocks forever).
    BlockingPop {
        keys: Vec<Bytes>,
        max: bool,
        timeout_ms: i64,
    },
    /// `ZMPOP numkeys key... MIN|MAX [COUNT n]` and `BZMPOP timeout numkeys ...`.
    MultiPop {
        keys: Vec<Bytes>,
        max: bool,
        count: usize,
        timeout_ms: Option<i64>,
    },
    /// `ZRANDMEMBER key [count [WITHSCORES]]`: a negative count may repeat members.
    ZRandMember {
        key: Bytes,
        count: Option<i64>,
        withscores: bool,
    },
    /// `ZINTERCARD numkeys key... [LIMIT limit]`.
    ZInterCard {
        keys: Vec<Bytes>,
        /// 0: no limit.
        limit: usize,
        /// Reported only when no key holds a value of the wrong type, as [`ZStore`]'s.
        option_error: Option<CommandError>,
    },
    /// `ZREMRANGEBYRANK`, `ZREMRANGEBYSCORE`, `ZREMRANGEBYLEX`.
    ZRemRange { key: Bytes, range: ZRangeBy },
    /// `ZSCAN key cursor [MATCH p] [COUNT n]`.
    ZScan { key: Bytes, scan: Scan },
}

/// `ZADD` with its flags.
#[derive(Clone, Debug, PartialEq)]
pub struct ZAdd {
    /// The sorted set.
    pub key: Bytes,
    /// `NX`: only add new members; `XX`: only update existing ones.
    pub condition: Option<super::string::Condition>,
    /// `GT`/`LT`: only update when the new score is greater/less.
    pub comparison: Option<Comparison>,
    /// `CH`: count changed members, not only added ones.
    pub changed: bool,
    /// `INCR`: behave like `ZINCRBY` (exactly one pair).
    pub incr: bool,
    /// Score and member pairs, in order.
    pub members: Vec<(f64, Bytes)>,
}

/// `GT` or `LT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Only if the new score is greater.
    Gt,
    /// Only if the new score is less.
    Lt,
}

/// `ZUNION`, `ZINTER`, `ZDIFF` (with `WITHSCORES`) and their `STORE` forms, with
/// weights and aggregate (not for the difference).
#[derive(Clone, Debug, PartialEq)]
pub struct ZStore {
    /// Union, intersection or difference.
    pub op: ZSetOp,
    /// Where the result goes; `None` answers it.
    pub destination: Option<Bytes>,
    /// `WITHSCORES` (only without a destination).
    pub withscores: bool,
    /// Input keys.
    pub keys: Vec<Bytes>,
    /// One weight per key (default 1).
    pub weights: Option<Vec<f64>>,
    /// How scores of a member combine.
    pub aggregate: Aggregate,
    /// What is wrong with the options after the keys, if anything: Redis reports it
    /// only when no input key holds a value of the wrong type.
    pub option_error: Option<CommandError>,
}

/// `AGGREGATE SUM|MIN|MAX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Aggregate {
    /// Add the weighted scores (the default).
    #[default]
    Sum,
    /// The lowest weighted score.
    Min,
    /// The highest weighted score.
    Max,
}

/// Where ZADD names its first member: after the key, its options and a score
/// (`ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ...`), for reading ahead.
pub(crate) fn zadd_member(request: &quiver_resp::request::Request) -> Option<usize> {
    let options = (2..request.len())
        .take_while(|&pos| {
            request.arg(pos).is_some_and(|arg| {
                ["nx", "xx", "gt", "lt", "ch", "incr"]
                    .iter()
                    .any(|option| is(arg, option))
            })
        })
        .count();
    Some(2 + options + 1)
}

fn parse_zadd(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let (mut nx, mut xx, mut gt, mut lt, mut changed, mut incr) =
        (false, false, false, false, false, false);
    while let Some(word) = args.peek() {
        let flag = match () {
            _ if is(word, "nx") => &mut nx,
            _ if is(word, "xx") => &mut xx,
            _ if is(word, "ch") => &mut changed,
            _ if is(word, "incr") => &mut incr,
            _ if is(word, "gt") => &mut gt,
            _ if is(word, "lt") => &mut lt,
            _ => break,
        };
        *flag = true;
        args.next_slice()?;
    }
    let elements = args.remaining();
    if elements == 0 || !elements.is_multiple_of(2) {
        return Err(CommandError::Syntax);
    }
    if nx && xx {
        return Err(CommandError::Message(
            "XX and NX options at the same time are not compatible",
        ));
    }
    if (nx && (gt || lt)) || (gt && lt) {
        return Err(CommandError::Message(
            "GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if incr && elements > 2 {
        return Err(CommandError::Message(
            "INCR option supports a single increment-element pair",
        ));
    }
    let mut members = Vec::with_capacity(elements / 2);
    while args.remaining() > 0 {
        members.push((args.f64()?, args.next()?));
    }
    let condition = match (nx, xx) {
        (true, _) => Some(super::string::Condition::Nx),
        (_, true) => Some(super::string::Condition::Xx),
        _ => None,
    };
    let comparison = match (gt, lt) {
        (true, _) => Some(Comparison::Gt),
        (_, true) => Some(Comparison::Lt),
        _ => None,
    };
    wrap(SortedSetCommand::ZAdd(ZAdd {
        key,
        condition,
        comparison,
        changed,
        incr,
        members,
    }))
}

fn zrange(
    args: &mut Args<'_>,
    store: bool,
    preset: Option<(RangeKind, bool)>,
) -> Result<Command, CommandError> {
    wrap(SortedSetCommand::ZRange(parse_zrange(args, store, preset)?))
}

fn zpop(args: &mut Args<'_>, max: bool) -> Result<Command, CommandError> {
    let key = args.next()?;
    let count = match args.remaining() {
        0 => None,
        1 => Some(args.non_negative(CommandError::NotPositive)?),
        _ => return Err(CommandError::Syntax),
    };
    wrap(SortedSetCommand::ZPop { key, max, count })
}

/// `ZUNION`/`ZINTER`/`ZDIFF` (`store` false) and their `STORE` forms (true).
fn zstore(args: &mut Args<'_>, op: ZSetOp, store: bool) -> Result<Command, CommandError> {
    let destination = if store { Some(args.next()?) } else { None };
    let numkeys = numkeys(args)?;
    let keys = args.take(numkeys)?;
    let options = zstore_options(args, numkeys, op != ZSetOp::Diff, !store);
    let ((weights, aggregate, withscores), option_error) = match options {
        Ok(options) => (options, None),
        Err(error) => ((None, Aggregate::Sum, false), Some(error)),
    };
    wrap(SortedSetCommand::ZStore(ZStore {
        op,
        destination,
        withscores,
        keys,
        weights,
        aggregate,
        option_error,
    }))
}

/// `BZPOPMIN`/`BZPOPMAX key... timeout`.
fn blocking_pop(args: &mut Args<'_>, max: bool) -> Result<Command, CommandError> {
    let mut keys = args.rest();
    let timeout = keys.pop().expect("the arity asks for a key and a timeout");
    let timeout_ms = timeout_ms(&timeout)?;
    wrap(SortedSetCommand::BlockingPop {
        keys,
        max,
        timeout_ms,
    })
}

/// ZMPOP, and BZMPOP (`blocking`, its timeout first).
fn multi_pop(args: &mut Args<'_>, blocking: bool) -> Result<Command, CommandError> {
    let parsed = multi_pop_args(args, blocking, ["min", "max"])?;
    wrap(SortedSetCommand::MultiPop {
        keys: parsed.keys,
        max: parsed.second,
        count: parsed.count,
        timeout_ms: parsed.timeout_ms,
    })
}

/// `ZRANDMEMBER key [count [WITHSCORES]]`.
fn zrandmember(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let (key, count, withscores) = random_args(args, "withscores")?;
    wrap(SortedSetCommand::ZRandMember {
        key,
        count,
        withscores,
    })
}

/// The `numkeys` argument: at least 1, at most the arguments left.
fn numkeys(args: &mut Args<'_>) -> Result<usize, CommandError> {
    let numkeys = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
    if numkeys < 1 {
        let message = format!(
            "at least 1 input key is needed for '{}' command",
            args.spec().name
        );
        return Err(CommandError::Other {
            code: ErrorCode::Err,
            message: message.into(),
        });
    }
    let numkeys = usize::try_from(numkeys).unwrap_or(usize::MAX);
    if numkeys > args.remaining() {
        return Err(CommandError::Syntax);
    }
    Ok(numkeys)
}

/// `ZINTERCARD numkeys key... [LIMIT limit]`.
fn zintercard(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let numkeys = numkeys(args)?;
    let keys = args.take(numkeys)?;
    let mut limit = 0;
    let mut option_error = None;
    while args.remaining() > 0 {
        let word = args.next_slice()?;
        let value = args.next_slice().ok();
        match value {
            Some(value) if is(word, "limit") => match parse_i64(value) {
                Some(n) if n >= 0 => limit = usize::try_from(n).unwrap_or(usize::MAX),
                _ => {
                    option_error = Some(CommandError::Message("LIMIT can't be negative"));
                    break;
                }
            },
            _ => {
                option_error = Some(CommandError::Syntax);
                break;
            }
        }
    }
    wrap(SortedSetCommand::ZInterCard {
        keys,
        limit,
        option_error,
    })
}

/// `[WEIGHTS weight...] [AGGREGATE SUM|MIN|MAX]` (when `weighted`) and `[WITHSCORES]`
/// (when `answered`) after `numkeys` keys.
fn zstore_options(
    args: &mut Args<'_>,
    numkeys: usize,
    weighted: bool,
    answered: bool,
) -> Result<(Option<Vec<f64>>, Aggregate, bool), CommandError> {
    let (mut weights, mut aggregate, mut withscores) = (None, Aggregate::Sum, false);
    while let Some(word) = args.peek() {
        if answered && is(word, "withscores") {
            args.next_slice()?;
            withscores = true;
        } else if !weighted {
            return Err(CommandError::Syntax);
        } else if is(word, "weights") && args.remaining() > numkeys {
            args.next_slice()?;
            let mut parsed = Vec::with_capacity(numkeys);
            for _ in 0..numkeys {
                let weight = parse_f64(args.next_slice()?)
                    .ok_or(CommandError::Message("weight value is not a float"))?;
                parsed.push(weight);
            }
            weights = Some(parsed);
        } else if is(word, "aggregate") && args.remaining() >= 2 {
            args.next_slice()?;
            let how = args.next_slice()?;
            aggregate = match () {
                _ if is(how, "sum") => Aggregate::Sum,
                _ if is(how, "min") => Aggregate::Min,
                _ if is(how, "max") => Aggregate::Max,
                _ => return Err(CommandError::Syntax),
            };
        } else {
            return Err(CommandError::Syntax);
        }
    }
    Ok((weights, aggregate, withscores))
}

#[cfg(test)]
mod tests;
