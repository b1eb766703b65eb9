//! ZRANGE's request types and the selection every range command shares (ZRANGE and its
//! older forms, ZRANGESTORE, ZREMRANGEBY*), plus ZUNIONSTORE/ZINTERSTORE's AGGREGATE.

use bytes::Bytes;

use super::{index_range, out};
use crate::value::zset::{LexBound, ScoreBound, ZItem, ZSetValue};

/// What ZRANGE selects by. For `Score` and `Lex` give the lower bound first even with REV.
#[derive(Debug, Clone, PartialEq)]
pub enum ZRangeBy {
    /// Ranks, inclusive, negative from the end.
    Rank(i64, i64),
    /// BYSCORE.
    Score(ScoreBound, ScoreBound),
    /// BYLEX.
    Lex(LexBound, LexBound),
}

/// A ZRANGE request.
#[derive(Debug, Clone, PartialEq)]
pub struct ZRangeSpec {
    /// What to select by.
    pub by: ZRangeBy,
    /// REV: highest first.
    pub rev: bool,
    /// LIMIT offset count (count < 0 = all), for BYSCORE/BYLEX.
    pub limit: Option<(i64, i64)>,
}

/// ZUNIONSTORE/ZINTERSTORE's AGGREGATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Aggregate {
    /// SUM (default).
    #[default]
    Sum,
    /// MIN.
    Min,
    /// MAX.
    Max,
}

impl Aggregate {
    pub(crate) fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Aggregate::Sum => {
                let s = a + b;
                // +inf + -inf: Redis stores 0 rather than NaN.
                if s.is_nan() { 0.0 } else { s }
            }
            Aggregate::Min => a.min(b),
            Aggregate::Max => a.max(b),
        }
    }
}

/// The items a ZRANGE selects, in reply order.
pub(crate) fn select<'a>(z: &'a ZSetValue, spec: &ZRangeSpec) -> Vec<&'a ZItem> {
    let len = z.len();
    let (first, last) = match &spec.by {
        ZRangeBy::Rank(a, b) => {
            let Some((a, b)) = index_range(len, *a, *b) else {
                return Vec::new();
            };
            return if spec.rev {
                z.iter_rev_from(len - 1 - a).take(b - a + 1).collect()
            } else {
                z.iter_from(a).take(b - a + 1).collect()
            };
        }
        ZRangeBy::Score(min, max) => z.score_range(min, max),
        ZRangeBy::Lex(min, max) => z.lex_range(min, max),
    };
    let n = last - first;
    let (offset, count) = spec.limit.unwrap_or((0, -1));
    if offset < 0 || n == 0 {
        return Vec::new();
    }
    let count = if count < 0 {
        usize::MAX
    } else {
        count as usize
    };
    let it: Box<dyn Iterator<Item = &ZItem>> = if spec.rev {
        Box::new(z.iter_rev_from(last - 1).take(n))
    } else {
        Box::new(z.iter_from(first).take(n))
    };
    it.skip(offset as usize).take(count).collect()
}

pub(crate) fn pairs(items: Vec<&ZItem>) -> Vec<(Bytes, f64)> {
    items
        .into_iter()
        .map(|x| (out(&x.member), x.score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_sum_of_opposite_infinities_is_zero() {
        assert_eq!(Aggregate::Sum.apply(f64::INFINITY, f64::NEG_INFINITY), 0.0);
        assert_eq!(Aggregate::Min.apply(1.0, 2.0), 1.0);
        assert_eq!(Aggregate::Max.apply(1.0, 2.0), 2.0);
    }
}
