//! Sorted set ranges: score bounds (`1.5`, `(1.5`, `-inf`, `+inf`), lex
//! bounds (`[a`, `(a`, `-`, `+`), and `ZRANGE`'s `BYSCORE`/`BYLEX`/`REV`/
//! `LIMIT`/`WITHSCORES` rules shared by its older forms.

use bytes::Bytes;
use quiver_resp::error::CommandError;
use quiver_resp::num::parse_i64;

use crate::resp::command::{Args, is};

/// One end of a score range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    /// The score (may be infinite).
    pub value: f64,
    /// `(`: the bound itself is excluded.
    pub exclusive: bool,
}

/// One end of a lexicographical range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: before every member.
    Min,
    /// `+`: after every member.
    Max,
    /// `[member`.
    Inclusive(Bytes),
    /// `(member`.
    Exclusive(Bytes),
}

/// What a range selects by.
#[derive(Clone, Debug, PartialEq)]
pub enum ZRangeBy {
    /// Indexes (negative from the end).
    Rank { start: i64, stop: i64 },
    /// Scores, `min` the lower bound.
    Score { min: ScoreBound, max: ScoreBound },
    /// Members, `min` the lower bound.
    Lex { min: LexBound, max: LexBound },
}

/// `ZRANGE` and friends, normalised.
#[derive(Clone, Debug, PartialEq)]
pub struct ZRange {
    /// `ZRANGESTORE`'s destination.
    pub destination: Option<Bytes>,
    /// The source sorted set.
    pub key: Bytes,
    /// The range; for `REV` score and lex ranges the bounds are already
    /// swapped into (lower, upper) order.
    pub range: ZRangeBy,
    /// Reverse order.
    pub rev: bool,
    /// `LIMIT offset count` (score and lex ranges only; a negative count
    /// means all).
    pub limit: Option<(i64, i64)>,
    /// `WITHSCORES`.
    pub with_scores: bool,
}

/// The range kind, before its bounds are parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeKind {
    Rank,
    Score,
    Lex,
}

/// Parses a score bound as Redis's `zslParseRange` (`strtod`, NaN refused).
fn score_bound(arg: &[u8]) -> Option<ScoreBound> {
    let (exclusive, text) = match arg.split_first() {
        Some((b'(', rest)) => (true, rest),
        _ => (false, arg),
    };
    let text = std::str::from_utf8(text).ok()?.trim_start();
    let value = if text.is_empty() {
        0.0
    } else {
        quiver_resp::num::str_to_f64(text)?
    };
    if value.is_nan() {
        return None;
    }
    Some(ScoreBound { value, exclusive })
}

/// A score range `min max`.
pub(crate) fn score_range(
    min: &[u8],
    max: &[u8],
) -> Result<(ScoreBound, ScoreBound), CommandError> {
    match (score_bound(min), score_bound(max)) {
        (Some(min), Some(max)) => Ok((min, max)),
        _ => Err(CommandError::MinMaxNotFloat),
    }
}

/// Parses a lex bound as Redis's `zslParseLexRangeItem`.
fn lex_bound(arg: Bytes) -> Option<LexBound> {
    match arg.first()? {
        b'+' if arg.len() == 1 => Some(LexBound::Max),
        b'-' if arg.len() == 1 => Some(LexBound::Min),
        b'[' => Some(LexBound::Inclusive(arg.slice(1..))),
        b'(' => Some(LexBound::Exclusive(arg.slice(1..))),
        _ => None,
    }
}

/// A lex range `min max`.
pub(crate) fn lex_range(min: Bytes, max: Bytes) -> Result<(LexBound, LexBound), CommandError> {
    match (lex_bound(min), lex_bound(max)) {
        (Some(min), Some(max)) => Ok((min, max)),
        _ => Err(CommandError::MinMaxNotLexRange),
    }
}

/// Parses `ZRANGE`-family arguments after the name, as Redis's
/// `zrangeGenericCommand`; `preset` fixes the kind and direction for the
/// older commands, which then refuse `BYSCORE`/`BYLEX`/`REV`.
pub(crate) fn parse_zrange(
    args: &mut Args<'_>,
    store: bool,
    preset: Option<(RangeKind, bool)>,
) -> Result<ZRange, CommandError> {
    let destination = if store { Some(args.next()?) } else { None };
    let key = args.next()?;
    let (first, second) = (args.next()?, args.next()?);
    let (mut kind, mut rev) = match preset {
        Some((kind, rev)) => (Some(kind), Some(rev)),
        None => (None, None),
    };
    let (mut with_scores, mut limit) = (false, None);
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if !store && is(word, "withscores") {
            with_scores = true;
        } else if is(word, "limit") && args.remaining() >= 2 {
            let offset = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
            let count = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
            limit = Some((offset, count));
        } else if rev.is_none() && is(word, "rev") {
            rev = Some(true);
        } else if kind.is_none() && is(word, "bylex") {
            kind = Some(RangeKind::Lex);
        } else if kind.is_none() && is(word, "byscore") {
            kind = Some(RangeKind::Score);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let kind = kind.unwrap_or(RangeKind::Rank);
    let rev = rev.unwrap_or(false);
    if kind == RangeKind::Rank && limit.is_some_and(|(_, count)| count != -1) {
        return Err(CommandError::Message(
            "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if with_scores && kind == RangeKind::Lex {
        return Err(CommandError::Message(
            "syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    let (low, high) = if rev && kind != RangeKind::Rank {
        (second, first)
    } else {
        (first, second)
    };
    let range = match kind {
        RangeKind::Rank => {
            limit = None;
            let start = parse_i64(&low).ok_or(CommandError::NotInteger)?;
            let stop = parse_i64(&high).ok_or(CommandError::NotInteger)?;
            ZRangeBy::Rank { start, stop }
        }
        RangeKind::Score => {
            let (min, max) = score_range(&low, &high)?;
            ZRangeBy::Score { min, max }
        }
        RangeKind::Lex => {
            let (min, max) = lex_range(low, high)?;
            ZRangeBy::Lex { min, max }
        }
    };
    Ok(ZRange {
        destination,
        key,
        range,
        rev,
        limit,
        with_scores,
    })
}
