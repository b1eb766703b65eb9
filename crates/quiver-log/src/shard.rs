//! `pick_shard`: jump consistent hash of FNV-1a 64, specified in `docs/log-format.md`.

use std::num::NonZeroU32;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const JUMP_MULTIPLIER: u64 = 2_862_933_555_777_941_757;

/// FNV-1a 64 of `key`.
pub fn fnv1a64(key: &[u8]) -> u64 {
    key.iter().fold(FNV_OFFSET_BASIS, |h, &c| {
        (h ^ u64::from(c)).wrapping_mul(FNV_PRIME)
    })
}

/// The shard in `0..n` for `key`; stable across processes, versions and languages.
pub fn pick_shard(key: &[u8], n: NonZeroU32) -> u32 {
    let mut h = fnv1a64(key);
    let mut b: i64 = -1;
    let mut j: i64 = 0;
    while j < i64::from(n.get()) {
        b = j;
        h = h.wrapping_mul(JUMP_MULTIPLIER).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((h >> 33) + 1) as f64)) as i64;
    }
    b as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    #[test]
    fn matches_the_documented_test_values() {
        let cases: [(&[u8], u32, u64, u32); 7] = [
            (b"", 1, 0xcbf29ce484222325, 0),
            (b"", 8, 0xcbf29ce484222325, 1),
            (b"a", 8, 0xaf63dc4c8601ec8c, 2),
            (b"user-42", 16, 0x32c6d7a54d35dacb, 9),
            (b"orders", 3, 0x00125d9250be8b4c, 0),
            (b"tenant/ns/stream", 1024, 0x9e69e6126a8af6fa, 753),
            (b"hello", 100, 0xa430d84680aabd0b, 25),
        ];
        for (key, shards, hash, shard) in cases {
            assert_eq!(fnv1a64(key), hash);
            assert_eq!(pick_shard(key, n(shards)), shard, "key {key:?} n {shards}");
        }
    }

    #[test]
    fn growing_by_one_moves_few_keys() {
        let keys: Vec<String> = (0..2000).map(|i| format!("key-{i}")).collect();
        let moved = keys
            .iter()
            .filter(|k| pick_shard(k.as_bytes(), n(10)) != pick_shard(k.as_bytes(), n(11)))
            .count();
        assert!(moved < 2000 / 11 + 60, "moved {moved}");
        assert!(keys.iter().all(|k| pick_shard(k.as_bytes(), n(10)) < 10));
    }
}
