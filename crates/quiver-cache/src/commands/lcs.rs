//! LCS: the longest common subsequence of two strings, by Redis's dynamic-programming
//! table and its walk back from the end, so the subsequence and the matched ranges are the
//! ones Redis gives.

use super::KeyCtx;
use crate::error::OpError;
use crate::keyspace::Db;

/// One matched range: positions in the first string, in the second, and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LcsMatch {
    /// First and last byte in the first string.
    pub a: (usize, usize),
    /// First and last byte in the second string.
    pub b: (usize, usize),
    /// Bytes matched.
    pub len: usize,
}

/// What LCS found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lcs {
    /// The subsequence.
    pub text: Vec<u8>,
    /// Its matched ranges, from the end of the strings backwards, those shorter than the
    /// minimum left out.
    pub matches: Vec<LcsMatch>,
}

impl Db<'_> {
    /// The two strings LCS compares (a missing key is empty); `LcsNotStrings` when either
    /// holds another type. Both are read under their shards' locks at once.
    pub fn lcs_strings(
        &mut self,
        a: &[u8],
        b: &[u8],
        now_ms: u64,
    ) -> Result<(Vec<u8>, Vec<u8>), OpError> {
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[a, b], |set, routes| {
            let mut read = |key: &[u8], (shard, hash): (usize, u64)| {
                let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
                match k.entry() {
                    None => Ok(Some(Vec::new())),
                    Some(e) => Ok(e.str().ok().map(|s| s.to_vec())),
                }
            };
            let (a, b) = (read(a, routes[0])?, read(b, routes[1])?);
            a.zip(b).ok_or(OpError::LcsNotStrings)
        })
    }
}

/// The LCS of `a` and `b` with the ranges of at least `min_match_len` bytes (0: all).
/// `LcsTooLarge` when the table (4 bytes per pair of positions) would exceed
/// `max_table_bytes`.
pub fn lcs(a: &[u8], b: &[u8], min_match_len: usize, max_table_bytes: u64) -> Result<Lcs, OpError> {
    let (alen, blen) = (a.len(), b.len());
    let cells = (alen as u64 + 1).saturating_mul(blen as u64 + 1);
    if cells.saturating_mul(4) > max_table_bytes {
        return Err(OpError::LcsTooLarge);
    }
    let width = blen + 1;
    let mut dp = vec![0u32; (alen + 1) * width];
    for i in 1..=alen {
        for j in 1..=blen {
            dp[i * width + j] = if a[i - 1] == b[j - 1] {
                dp[(i - 1) * width + j - 1] + 1
            } else {
                dp[(i - 1) * width + j].max(dp[i * width + j - 1])
            };
        }
    }
    let total = dp[alen * width + blen] as usize;
    let mut text = vec![0u8; total];
    let mut matches = Vec::new();
    let (mut i, mut j, mut idx) = (alen, blen, total);
    // The current range: none while `a_start == alen`.
    let (mut a_start, mut a_end, mut b_start, mut b_end) = (alen, 0, 0, 0);
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            text[idx - 1] = a[i - 1];
            if a_start == alen {
                (a_start, a_end, b_start, b_end) = (i - 1, i - 1, j - 1, j - 1);
            } else if a_start == i && b_start == j {
                a_start -= 1;
                b_start -= 1;
            } else {
                emit = true;
            }
            if a_start == 0 || b_start == 0 {
                emit = true;
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            if dp[(i - 1) * width + j] > dp[i * width + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            if a_start != alen {
                emit = true;
            }
        }
        if emit {
            let len = a_end - a_start + 1;
            if len >= min_match_len {
                matches.push(LcsMatch {
                    a: (a_start, a_end),
                    b: (b_start, b_end),
                    len,
                });
            }
            a_start = alen;
        }
    }
    Ok(Lcs { text, matches })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_documented_example() {
        let found = lcs(b"ohmytext", b"mynewtext", 0, u64::MAX).unwrap();
        assert_eq!(found.text, b"mytext");
        assert_eq!(
            found.matches,
            [
                LcsMatch {
                    a: (4, 7),
                    b: (5, 8),
                    len: 4
                },
                LcsMatch {
                    a: (2, 3),
                    b: (0, 1),
                    len: 2
                },
            ]
        );
        assert_eq!(
            lcs(b"ohmytext", b"mynewtext", 4, u64::MAX)
                .unwrap()
                .matches
                .len(),
            1
        );
        assert_eq!(lcs(b"", b"abc", 0, u64::MAX).unwrap().text, b"");
        assert_eq!(lcs(b"abc", b"abc", 0, 15), Err(OpError::LcsTooLarge));
    }
}
