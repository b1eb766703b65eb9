//! Sorted set commands. Scores are doubles in RESP3 and bulk strings in
//! RESP2; `WITHSCORES` ranges (and ZPOPMIN/ZPOPMAX with a count) pair each
//! member with its score as a nested array in RESP3 and flatten the pairs in
//! RESP2, as Redis 7 does. ZSCAN sends scores as bulk strings in both.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{
    Aggregate as CacheAggregate, LexBound as CacheLex, OpError, ScoreBound as CacheScore,
    ValueType, ZAddCompare, ZAddCondition, ZAddOptions, ZAddReply, ZRangeBy as CacheRangeBy,
    ZRangeSpec,
};
use quiver_resp::Protocol;
use quiver_resp::encode::{
    write_array_len, write_bulk, write_double, write_null, write_null_array,
};
use quiver_resp::error::CommandError;

use crate::resp::command::SortedSetCommand;
use crate::resp::command::exec::{DataCtx, Outcome};
use crate::resp::command::exec::{count, error, refs, reply, scan_count, scan_head, to_usize};
use crate::resp::command::list::exec::block;
use crate::resp::command::string::Condition;
use crate::resp::command::zset::{
    Aggregate, Comparison, LexBound, ScoreBound, ZAdd, ZRange, ZRangeBy, ZStore,
};

/// Runs a sorted set command and writes its reply.
#[allow(
    clippy::result_large_err,
    reason = "the command is handed back by value, unchanged, for `execute_data`"
)]
pub(crate) fn execute(
    ctx: &mut DataCtx<'_, '_>,
    command: SortedSetCommand,
    out: &mut BytesMut,
) -> Outcome {
    let now_ms = ctx.now_ms;
    match command {
        SortedSetCommand::BlockingPop {
            keys,
            max,
            timeout_ms,
        } => return pop_first(ctx, keys, max, 1, Some(timeout_ms), false, out),
        SortedSetCommand::MultiPop {
            keys,
            max,
            count,
            timeout_ms,
        } => return pop_first(ctx, keys, max, count, timeout_ms, true, out),
        SortedSetCommand::ZRandMember {
            key,
            count,
            withscores,
        } => {
            let result = ctx.db.zrandmember(&key, count, now_ms);
            let protocol = ctx.protocol;
            reply(out, result, |out, picks| match count {
                None => match picks.first() {
                    Some((member, _)) => write_bulk(out, member),
                    None => write_null(out, protocol),
                },
                Some(_) if withscores => {
                    write_scored(out, protocol, &picks, protocol == Protocol::Resp3)
                }
                Some(_) => {
                    write_array_len(out, picks.len());
                    picks.iter().for_each(|(member, _)| write_bulk(out, member));
                }
            });
        }
        SortedSetCommand::ZAdd(zadd) => run_zadd(ctx, &zadd, out),
        SortedSetCommand::ZRem { key, members } => {
            let result = ctx.db.zrem(&key, &refs(&members), now_ms);
            reply(out, result, count);
        }
        SortedSetCommand::ZScore { key, member } => {
            let result = ctx.db.zscore(&key, &member, now_ms);
            reply(out, result, |out, score| {
                score_or_null(out, ctx.protocol, score)
            });
        }
        SortedSetCommand::ZMScore { key, members } => {
            let result = ctx.db.zmscore(&key, &refs(&members), now_ms);
            reply(out, result, |out, scores| {
                write_array_len(out, scores.len());
                for score in scores {
                    score_or_null(out, ctx.protocol, score);
                }
            });
        }
        SortedSetCommand::ZIncrBy {
            key,
            increment,
            member,
        } => {
            let result = ctx.db.zincrby(&key, increment, &member, now_ms);
            reply(out, result, |out, score| {
                write_double(out, ctx.protocol, score);
            });
        }
        SortedSetCommand::ZCard { key } => {
            let result = ctx.db.zcard(&key, now_ms);
            reply(out, result, count);
        }
        SortedSetCommand::ZCount { key, min, max } => {
            let result = ctx.db.zcount(&key, &score(min), &score(max), now_ms);
            reply(out, result, count);
        }
        SortedSetCommand::ZLexCount { key, min, max } => {
            let result = ctx.db.zlexcount(&key, &lex(min), &lex(max), now_ms);
            reply(out, result, count);
        }
        SortedSetCommand::ZRange(range) => run_zrange(ctx, range, out),
        SortedSetCommand::ZRank { key, member, rev } => {
            let result = ctx.db.zrank(&key, &member, rev, now_ms);
            reply(out, result, |out, rank| match rank {
                Some(rank) => count(out, rank),
                None => write_null(out, ctx.protocol),
            });
        }
        SortedSetCommand::ZPop { key, max, count: n } => {
            let wanted = n.map_or(1, to_usize);
            let result = ctx.db.zpop(&key, wanted, max, now_ms);
            // Without a count the reply is one flat pair in both protocols.
            let nested = n.is_some() && ctx.protocol == Protocol::Resp3;
            reply(out, result, |out, items| {
                write_scored(out, ctx.protocol, &items, nested);
            });
        }
        SortedSetCommand::ZStore(store) => run_zstore(ctx, &store, out),
        SortedSetCommand::ZInterCard {
            keys,
            limit,
            option_error,
        } => match option_error {
            Some(option_error) => refuse_options(ctx, &keys, &option_error, out),
            None => {
                let result = ctx.db.zintercard(&refs(&keys), limit, now_ms);
                reply(out, result, count);
            }
        },
        SortedSetCommand::ZRemRange { key, range } => {
            let result = ctx.db.zremrange(&key, &range_by(range), now_ms);
            reply(out, result, count);
        }
        SortedSetCommand::ZScan { key, scan } => {
            let pattern = scan.pattern.as_deref();
            let result = ctx
                .db
                .zscan(&key, scan.cursor, pattern, scan_count(scan.count), now_ms);
            reply(out, result, |out, (cursor, items)| {
                scan_head(out, cursor, items.len() * 2);
                for (member, score) in &items {
                    write_bulk(out, member);
                    write_double(out, Protocol::Resp2, *score);
                }
            });
        }
    }
    Outcome::Done
}

/// `BZPOPMIN`/`BZPOPMAX` (`multi` false: one item, replied `[key, member, score]`) and
/// `ZMPOP`/`BZMPOP` (true: up to `count`, replied `[key, [[member, score]...]]`) from the
/// first of `keys` holding a sorted set; with nothing to pop, a null array, or a wait
/// when `timeout_ms` is given outside a transaction.
fn pop_first(
    ctx: &mut DataCtx<'_, '_>,
    keys: Vec<Bytes>,
    max: bool,
    count: usize,
    timeout_ms: Option<i64>,
    multi: bool,
    out: &mut BytesMut,
) -> Outcome {
    let protocol = ctx.protocol;
    let servable: Vec<&[u8]> = ctx
        .servable(&keys, ValueType::ZSet)
        .into_iter()
        .map(|key| &key[..])
        .collect();
    match ctx.db.zpop_first(&servable, max, count, ctx.now_ms) {
        Err(e) => error(out, &e),
        Ok(Some((key, items))) if multi => {
            write_array_len(out, 2);
            write_bulk(out, &key);
            write_scored(out, protocol, &items, true);
        }
        Ok(Some((key, items))) => {
            let (member, score) = &items[0];
            write_array_len(out, 3);
            write_bulk(out, &key);
            write_bulk(out, member);
            write_double(out, protocol, *score);
        }
        Ok(None) => match timeout_ms {
            Some(timeout_ms) if !ctx.in_transaction => return block(keys, timeout_ms),
            _ => write_null_array(out, protocol),
        },
    }
    Outcome::Done
}

/// `ZADD`: the count of added (or with `CH` changed) members; with `INCR` the
/// new score, or null when a condition refused the update.
fn run_zadd(ctx: &mut DataCtx<'_, '_>, zadd: &ZAdd, out: &mut BytesMut) {
    let opts = ZAddOptions {
        condition: match zadd.condition {
            None => ZAddCondition::Always,
            Some(Condition::Nx) => ZAddCondition::IfAbsent,
            Some(Condition::Xx) => ZAddCondition::IfPresent,
        },
        compare: match zadd.comparison {
            None => ZAddCompare::Any,
            Some(Comparison::Gt) => ZAddCompare::Greater,
            Some(Comparison::Lt) => ZAddCompare::Less,
        },
        ch: zadd.changed,
        incr: zadd.incr,
    };
    let members: Vec<(f64, &[u8])> = zadd.members.iter().map(|(s, m)| (*s, &m[..])).collect();
    let result = ctx.db.zadd(&zadd.key, &members, opts, ctx.now_ms);
    reply(out, result, |out, added| match added {
        ZAddReply::Count(n) => count(out, n),
        ZAddReply::Score(score) => score_or_null(out, ctx.protocol, score),
    });
}

/// `ZRANGE` in all its forms, and `ZRANGESTORE`.
fn run_zrange(ctx: &mut DataCtx<'_, '_>, range: ZRange, out: &mut BytesMut) {
    let spec = ZRangeSpec {
        by: range_by(range.range),
        rev: range.rev,
        limit: range.limit,
    };
    if let Some(destination) = range.destination {
        let result = ctx
            .db
            .zrangestore(&destination, &range.key, &spec, ctx.now_ms);
        return reply(out, result, count);
    }
    let result = ctx.db.zrange(&range.key, &spec, ctx.now_ms);
    reply(out, result, |out, items| {
        if range.with_scores {
            let nested = ctx.protocol == Protocol::Resp3;
            write_scored(out, ctx.protocol, &items, nested);
        } else {
            write_array_len(out, items.len());
            items.iter().for_each(|(member, _)| write_bulk(out, member));
        }
    });
}

/// Malformed options after the keys, answered in Redis's order: the type error of the
/// first key holding something else than a set or sorted set, else the options' error.
fn refuse_options(
    ctx: &mut DataCtx<'_, '_>,
    keys: &[Bytes],
    option_error: &CommandError,
    out: &mut BytesMut,
) {
    let wrong_type = keys.iter().any(|key| {
        ctx.db
            .type_of(key, ctx.now_ms)
            .is_some_and(|kind| !matches!(kind, ValueType::Set | ValueType::ZSet))
    });
    if wrong_type {
        error(out, &OpError::WrongType)
    } else {
        error(out, option_error)
    }
}

/// `ZUNION`/`ZINTER`/`ZDIFF` (the result) and their `STORE` forms (the stored size).
fn run_zstore(ctx: &mut DataCtx<'_, '_>, store: &ZStore, out: &mut BytesMut) {
    if let Some(option_error) = &store.option_error {
        return refuse_options(ctx, &store.keys, option_error, out);
    }
    let aggregate = match store.aggregate {
        Aggregate::Sum => CacheAggregate::Sum,
        Aggregate::Min => CacheAggregate::Min,
        Aggregate::Max => CacheAggregate::Max,
    };
    let (keys, weights) = (refs(&store.keys), store.weights.as_deref());
    let now_ms = ctx.now_ms;
    let Some(destination) = &store.destination else {
        let result = ctx.db.zcombine(&keys, store.op, weights, aggregate, now_ms);
        let protocol = ctx.protocol;
        return reply(out, result, |out, items| {
            if store.withscores {
                write_scored(out, protocol, &items, protocol == Protocol::Resp3);
            } else {
                write_array_len(out, items.len());
                items.iter().for_each(|(member, _)| write_bulk(out, member));
            }
        });
    };
    let result = ctx
        .db
        .zstore(destination, &keys, store.op, weights, aggregate, now_ms);
    reply(out, result, count);
}

/// Members with their scores: `[m, s]` arrays when `nested`, else one flat
/// array of members and scores.
fn write_scored(out: &mut BytesMut, protocol: Protocol, items: &[(Bytes, f64)], nested: bool) {
    if nested {
        write_array_len(out, items.len());
    } else {
        write_array_len(out, items.len() * 2);
    }
    for (member, score) in items {
        if nested {
            write_array_len(out, 2);
        }
        write_bulk(out, member);
        write_double(out, protocol, *score);
    }
}

/// A score, or the null bulk string.
fn score_or_null(out: &mut BytesMut, protocol: Protocol, score: Option<f64>) {
    match score {
        Some(score) => write_double(out, protocol, score),
        None => write_null(out, protocol),
    }
}

fn score(bound: ScoreBound) -> CacheScore {
    CacheScore {
        value: bound.value,
        exclusive: bound.exclusive,
    }
}

fn lex(bound: LexBound) -> CacheLex {
    match bound {
        LexBound::Min => CacheLex::NegInf,
        LexBound::Max => CacheLex::PosInf,
        LexBound::Inclusive(member) => CacheLex::Inclusive(member.to_vec()),
        LexBound::Exclusive(member) => CacheLex::Exclusive(member.to_vec()),
    }
}

fn range_by(range: ZRangeBy) -> CacheRangeBy {
    match range {
        ZRangeBy::Rank { start, stop } => CacheRangeBy::Rank(start, stop),
        ZRangeBy::Score { min, max } => CacheRangeBy::Score(score(min), score(max)),
        ZRangeBy::Lex { min, max } => CacheRangeBy::Lex(lex(min), lex(max)),
    }
}

#[cfg(test)]
mod tests;
