//! Sorted-set values: a member -> score table (O(1) ZSCORE) plus the members ordered by
//! (score, member) in a list of sorted blocks of at most [`ZSET_BLOCK_MAX`] items. Finding a
//! position is a binary search over blocks then inside one (O(log n)); turning a position
//! into a rank adds the lengths of the blocks before it (O(n / ZSET_BLOCK_MAX), a few
//! thousand additions for a million members). Blocks cost 24 bytes per member where a
//! skiplist costs 40 or more, which is why they were chosen.

use std::cmp::Ordering;

use crate::error::OpError;
use crate::hashed_table::HashedTable;
use crate::memory::{bytes_size, vec_size};
use crate::table::{Keyed, box_size};
use crate::value::string::parse_f64;

/// Items per block before it splits in two: large enough that the block list stays short,
/// small enough that inserting into a block (a memmove) stays cheap.
pub const ZSET_BLOCK_MAX: usize = 256;
use super::limits::{ZSET_MAX_ENTRIES, ZSET_MAX_VALUE};

/// A member and its score in the member table.
#[derive(Debug, Clone)]
pub struct Member {
    /// The member.
    pub name: Box<[u8]>,
    /// Its score (never NaN).
    pub score: f64,
}

impl Keyed for Member {
    fn key(&self) -> &[u8] {
        &self.name
    }
}

/// One item in score order.
#[derive(Debug, Clone)]
pub struct ZItem {
    /// Its score (never NaN).
    pub score: f64,
    /// The member.
    pub member: Box<[u8]>,
}

fn cmp_item(score: f64, member: &[u8], other: &ZItem) -> Ordering {
    score
        .partial_cmp(&other.score)
        .unwrap_or(Ordering::Equal)
        .then_with(|| member.cmp(&other.member))
}

/// A score range bound: `1.5`, `(1.5`, `-inf`, `+inf`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreBound {
    /// The bound's value.
    pub value: f64,
    /// Whether the bound itself is excluded (`(`).
    pub exclusive: bool,
}

impl ScoreBound {
    /// Parses a ZRANGEBYSCORE-style bound.
    pub fn parse(s: &[u8]) -> Result<Self, OpError> {
        let (exclusive, rest) = match s.first() {
            Some(b'(') => (true, &s[1..]),
            _ => (false, s),
        };
        let value = parse_f64(rest).ok_or(OpError::RangeNotFloat)?;
        Ok(Self { value, exclusive })
    }

    fn below_as_min(&self, score: f64) -> bool {
        if self.exclusive {
            score <= self.value
        } else {
            score < self.value
        }
    }

    fn within_as_max(&self, score: f64) -> bool {
        if self.exclusive {
            score < self.value
        } else {
            score <= self.value
        }
    }
}

/// A lexicographic range bound: `-`, `+`, `[member`, `(member`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexBound {
    /// Below every member.
    NegInf,
    /// Above every member.
    PosInf,
    /// The member, included.
    Inclusive(Vec<u8>),
    /// The member, excluded.
    Exclusive(Vec<u8>),
}

impl LexBound {
    /// Parses a ZRANGEBYLEX-style bound.
    pub fn parse(s: &[u8]) -> Result<Self, OpError> {
        match s {
            b"-" => Ok(Self::NegInf),
            b"+" => Ok(Self::PosInf),
            [b'[', rest @ ..] => Ok(Self::Inclusive(rest.to_vec())),
            [b'(', rest @ ..] => Ok(Self::Exclusive(rest.to_vec())),
            _ => Err(OpError::RangeNotLex),
        }
    }

    fn below_as_min(&self, m: &[u8]) -> bool {
        match self {
            Self::NegInf => false,
            Self::PosInf => true,
            Self::Inclusive(b) => m < b.as_slice(),
            Self::Exclusive(b) => m <= b.as_slice(),
        }
    }

    fn within_as_max(&self, m: &[u8]) -> bool {
        match self {
            Self::NegInf => false,
            Self::PosInf => true,
            Self::Inclusive(b) => m <= b.as_slice(),
            Self::Exclusive(b) => m < b.as_slice(),
        }
    }
}

/// A sorted-set value.
#[derive(Debug, Clone, Default)]
pub struct ZSetValue {
    dict: HashedTable<Member>,
    blocks: Vec<Vec<ZItem>>,
    /// Bytes of all block buffers, kept up to date so `mem` is O(1).
    block_bytes: usize,
    heap_bytes: usize,
    big: bool,
}

impl ZSetValue {
    /// The entry a lookup of `member` compares first, if any: for reading ahead.
    pub(crate) fn first_candidate(&self, member: &[u8]) -> Option<&dyn Keyed> {
        self.dict
            .first_candidate(member)
            .map(|item| item as &dyn Keyed)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.dict.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.dict.find(member).map(|i| self.dict.at(i).score)
    }

    /// The score as the set keeps it: Redis's listpack encoding stores a zero score as
    /// the integer 0, so a small set loses the sign of `-0` (a skiplist keeps it).
    fn stored(&self, score: f64) -> f64 {
        if score == 0.0 && !self.big {
            0.0
        } else {
            score
        }
    }

    /// Sets `member`'s score; returns the previous score, if any.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        debug_assert!(!score.is_nan(), "callers refuse NaN scores");
        match self.dict.find(member) {
            Some(i) => {
                let score = self.stored(score);
                let old = self.dict.at(i).score;
                if old != score || old.is_sign_negative() != score.is_sign_negative() {
                    self.dict.at_mut(i).score = score;
                    let item = self.take_sorted(old, member);
                    self.put_sorted(ZItem {
                        score,
                        member: item.member,
                    });
                }
                Some(old)
            }
            None => {
                self.big |=
                    member.len() > ZSET_MAX_VALUE.get() || self.len() + 1 > ZSET_MAX_ENTRIES.get();
                let score = self.stored(score);
                self.heap_bytes += 2 * bytes_size(member.len());
                self.dict.insert_new(Member {
                    name: member.into(),
                    score,
                });
                self.put_sorted(ZItem {
                    score,
                    member: member.into(),
                });
                None
            }
        }
    }

    /// Removes `member`; returns its score if it was there.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let m = self.dict.remove(member)?;
        self.heap_bytes -= 2 * bytes_size(member.len());
        self.take_sorted(m.score, member);
        Some(m.score)
    }

    /// Rank (0-based, ascending) of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.partition_point(|x| cmp_item(score, member, x) == Ordering::Greater))
    }

    /// The item at ascending rank `rank`.
    pub fn at_rank(&self, rank: usize) -> Option<&ZItem> {
        let (b, off) = self.locate(rank)?;
        Some(&self.blocks[b][off])
    }

    /// Items from ascending rank `rank` upwards.
    pub fn iter_from(&self, rank: usize) -> impl Iterator<Item = &ZItem> {
        let (b, off) = self.locate(rank).unwrap_or((self.blocks.len(), 0));
        let first: &[ZItem] = self.blocks.get(b).map_or(&[], |blk| &blk[off..]);
        let rest = self.blocks.get(b + 1..).unwrap_or(&[]);
        first.iter().chain(rest.iter().flatten())
    }

    /// Items from ascending rank `rank` downwards.
    pub fn iter_rev_from(&self, rank: usize) -> impl Iterator<Item = &ZItem> {
        let (b, off, ok) = match self.locate(rank) {
            Some((b, off)) => (b, off, true),
            None => (0, 0, false),
        };
        let first: &[ZItem] = if ok { &self.blocks[b][..=off] } else { &[] };
        let rest: &[Vec<ZItem>] = if ok { &self.blocks[..b] } else { &[] };
        first
            .iter()
            .rev()
            .chain(rest.iter().rev().flat_map(|blk| blk.iter().rev()))
    }

    /// Ranks `[first, last)` of items whose score is within `min..max`.
    pub fn score_range(&self, min: &ScoreBound, max: &ScoreBound) -> (usize, usize) {
        let first = self.partition_point(|x| min.below_as_min(x.score));
        let last = self.partition_point(|x| max.within_as_max(x.score));
        (first, last.max(first))
    }

    /// Ranks `[first, last)` of items whose member is within `min..max` (meaningful when all
    /// scores are equal, as in Redis).
    pub fn lex_range(&self, min: &LexBound, max: &LexBound) -> (usize, usize) {
        let first = self.partition_point(|x| min.below_as_min(&x.member));
        let last = self.partition_point(|x| max.within_as_max(&x.member));
        (first, last.max(first))
    }

    /// Removes and returns the lowest (or highest) item.
    pub fn pop(&mut self, max: bool) -> Option<ZItem> {
        let item = if max {
            self.blocks.last()?.last()?.clone()
        } else {
            self.blocks.first()?.first()?.clone()
        };
        self.remove(&item.member);
        Some(item)
    }

    /// All members with their scores, in storage (not score) order.
    pub fn members(&self) -> impl Iterator<Item = &Member> {
        self.dict.items()
    }

    /// One ZSCAN step.
    pub fn scan_step(&self, cursor: u64, f: impl FnMut(&Member)) -> u64 {
        self.dict.scan_step(cursor, f)
    }

    /// Heap bytes of this value, the box included.
    pub fn mem(&self) -> usize {
        box_size::<Self>()
            + self.dict.struct_bytes()
            + vec_size::<Vec<ZItem>>(self.blocks.capacity())
            + self.block_bytes
            + self.heap_bytes
    }

    /// Reports the `skiplist` encoding from now on, as Redis's SORT converts a sorted set
    /// it sorts.
    pub(crate) fn convert_to_skiplist(&mut self) {
        self.big = true;
    }

    /// The encoding Redis would report for this sorted set.
    pub fn encoding(&self) -> &'static str {
        if self.big { "skiplist" } else { "listpack" }
    }

    fn partition_point(&self, pred: impl Fn(&ZItem) -> bool) -> usize {
        let b = self
            .blocks
            .partition_point(|blk| blk.last().is_some_and(&pred));
        let before: usize = self.blocks[..b].iter().map(Vec::len).sum();
        before
            + self
                .blocks
                .get(b)
                .map_or(0, |blk| blk.partition_point(&pred))
    }

    fn locate(&self, mut rank: usize) -> Option<(usize, usize)> {
        for (b, blk) in self.blocks.iter().enumerate() {
            if rank < blk.len() {
                return Some((b, rank));
            }
            rank -= blk.len();
        }
        None
    }

    fn put_sorted(&mut self, item: ZItem) {
        let (score, member) = (item.score, &item.member[..]);
        let b = self.blocks.partition_point(|blk| {
            blk.last()
                .is_some_and(|x| cmp_item(score, member, x) == Ordering::Greater)
        });
        let b = b.min(self.blocks.len().saturating_sub(1));
        if self.blocks.is_empty() {
            self.blocks.push(Vec::with_capacity(4));
            self.block_bytes += vec_size::<ZItem>(4);
        }
        let blk = &mut self.blocks[b];
        let before = vec_size::<ZItem>(blk.capacity());
        let pos = blk.partition_point(|x| cmp_item(score, member, x) == Ordering::Greater);
        blk.insert(pos, item);
        let mut after = vec_size::<ZItem>(blk.capacity());
        if blk.len() > ZSET_BLOCK_MAX {
            let tail = blk.split_off(ZSET_BLOCK_MAX / 2);
            after += vec_size::<ZItem>(tail.capacity());
            self.blocks.insert(b + 1, tail);
        }
        self.block_bytes = self.block_bytes + after - before;
    }

    fn take_sorted(&mut self, score: f64, member: &[u8]) -> ZItem {
        let b = self.blocks.partition_point(|blk| {
            blk.last()
                .is_some_and(|x| cmp_item(score, member, x) == Ordering::Greater)
        });
        let blk = &mut self.blocks[b];
        let before = vec_size::<ZItem>(blk.capacity());
        let pos = blk.partition_point(|x| cmp_item(score, member, x) == Ordering::Greater);
        let item = blk.remove(pos);
        debug_assert!(
            &*item.member == member,
            "dict and blocks hold the same members"
        );
        if blk.is_empty() {
            self.blocks.remove(b);
            self.block_bytes -= before;
        } else {
            if blk.capacity() > 16 && blk.len() * 4 < blk.capacity() {
                blk.shrink_to(blk.len() * 2);
            }
            self.block_bytes = self.block_bytes + vec_size::<ZItem>(blk.capacity()) - before;
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(it: impl Iterator<Item = ZItem>) -> Vec<String> {
        it.map(|x| String::from_utf8(x.member.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn order_rank_and_ranges() {
        let mut z = ZSetValue::default();
        for i in 0..1000 {
            z.insert(format!("m{i:04}").as_bytes(), f64::from(i % 10));
        }
        assert_eq!(z.len(), 1000);
        assert_eq!(z.rank(b"m0000"), Some(0));
        assert_eq!(z.rank(b"m0010"), Some(1));
        assert_eq!(z.at_rank(1).unwrap().member.as_ref(), b"m0010");
        let (a, b) = z.score_range(
            &ScoreBound::parse(b"(1").unwrap(),
            &ScoreBound::parse(b"3").unwrap(),
        );
        assert_eq!((a, b), (200, 400));
        assert_eq!(z.insert(b"m0000", 100.0), Some(0.0));
        assert_eq!(z.rank(b"m0000"), Some(999));
        assert_eq!(z.pop(true).unwrap().member.as_ref(), b"m0000");
        assert_eq!(z.remove(b"m0010"), Some(0.0));
        assert_eq!(z.len(), 998);
        let first3 = names(z.iter_from(0).take(3).cloned());
        assert_eq!(first3, ["m0020", "m0030", "m0040"]);
        let last2 = names(z.iter_rev_from(z.len() - 1).take(2).cloned());
        assert_eq!(last2, ["m0999", "m0989"]);
    }

    #[test]
    fn incremental_memory_matches_a_recount() {
        let mut z = ZSetValue::default();
        let recount = |z: &ZSetValue| -> usize {
            z.blocks
                .iter()
                .map(|b| vec_size::<ZItem>(b.capacity()))
                .sum()
        };
        for i in 0..2000u32 {
            z.insert(
                format!("m{}", i * 7919 % 2000).as_bytes(),
                f64::from(i % 13),
            );
            assert_eq!(z.block_bytes, recount(&z), "after insert {i}");
        }
        for i in 0..1500u32 {
            z.remove(format!("m{i}").as_bytes());
        }
        let recount: usize = z
            .blocks
            .iter()
            .map(|b| vec_size::<ZItem>(b.capacity()))
            .sum();
        assert_eq!(z.block_bytes, recount);
        while z.pop(false).is_some() {}
        assert_eq!(z.block_bytes, 0);
    }

    #[test]
    fn lex_bounds() {
        let mut z = ZSetValue::default();
        for m in ["a", "b", "c", "d"] {
            z.insert(m.as_bytes(), 0.0);
        }
        let r = |min: &str, max: &str| {
            z.lex_range(
                &LexBound::parse(min.as_bytes()).unwrap(),
                &LexBound::parse(max.as_bytes()).unwrap(),
            )
        };
        assert_eq!(r("-", "+"), (0, 4));
        assert_eq!(r("[b", "(d"), (1, 3));
        assert_eq!(r("(b", "[b"), (2, 2));
        assert!(LexBound::parse(b"b").is_err());
        assert!(ScoreBound::parse(b"x").is_err());
    }
}
