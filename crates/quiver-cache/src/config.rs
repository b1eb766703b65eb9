//! Keyspace configuration: validated once, so a [`crate::Keyspace`] never holds an invalid
//! setting. `max_memory_bytes` and the policy can also change at run time (CONFIG SET).

use std::fmt;
use std::str::FromStr;

use crate::error::ConfigError;

/// Upper bound on numbered databases: the index must fit the `u8` kept per watched key and
/// per ready key, and Redis users rarely go past a few dozen.
pub const MAX_DATABASES: usize = 256;
/// Upper bound on shards: past a few hundred the per-shard fixed cost (one empty table per
/// database) outweighs any gain in lock contention on small machines.
pub const MAX_SHARDS: usize = 1024;
/// Upper bound on eviction samples per round, as Redis's `maxmemory-samples` (which allows
/// up to 64): more samples approximate true LRU better but cost CPU on every eviction.
pub const MAX_SAMPLES: usize = 64;

/// Which keys `max_memory` may evict, Redis's `maxmemory-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EvictionPolicy {
    /// Never evict; writes that need memory fail with OOM.
    NoEviction,
    /// Approximated least recently used among all keys.
    AllKeysLru,
    /// Approximated least frequently used among all keys.
    AllKeysLfu,
    /// A random key.
    AllKeysRandom,
    /// Approximated least recently used among keys with a TTL.
    VolatileLru,
    /// Approximated least frequently used among keys with a TTL.
    VolatileLfu,
    /// A random key with a TTL.
    VolatileRandom,
    /// The key with a TTL that expires soonest.
    VolatileTtl,
}

impl EvictionPolicy {
    /// All policies, in the order of their numeric code.
    pub const ALL: [EvictionPolicy; 8] = [
        Self::NoEviction,
        Self::AllKeysLru,
        Self::AllKeysLfu,
        Self::AllKeysRandom,
        Self::VolatileLru,
        Self::VolatileLfu,
        Self::VolatileRandom,
        Self::VolatileTtl,
    ];

    /// Redis's name for the policy.
    pub fn name(self) -> &'static str {
        match self {
            Self::NoEviction => "noeviction",
            Self::AllKeysLru => "allkeys-lru",
            Self::AllKeysLfu => "allkeys-lfu",
            Self::AllKeysRandom => "allkeys-random",
            Self::VolatileLru => "volatile-lru",
            Self::VolatileLfu => "volatile-lfu",
            Self::VolatileRandom => "volatile-random",
            Self::VolatileTtl => "volatile-ttl",
        }
    }

    /// Whether access times are kept as an LFU counter rather than an LRU clock.
    pub fn is_lfu(self) -> bool {
        matches!(self, Self::AllKeysLfu | Self::VolatileLfu)
    }

    /// Whether eviction goes by least recent access (what snapshots record idle times for).
    pub fn is_lru(self) -> bool {
        matches!(self, Self::AllKeysLru | Self::VolatileLru)
    }

    /// Whether only keys with a TTL may be evicted.
    pub fn is_volatile(self) -> bool {
        matches!(
            self,
            Self::VolatileLru | Self::VolatileLfu | Self::VolatileRandom | Self::VolatileTtl
        )
    }

    pub(crate) fn code(self) -> u8 {
        Self::ALL.iter().position(|p| *p == self).unwrap_or(0) as u8
    }

    pub(crate) fn from_code(code: u8) -> Self {
        Self::ALL
            .get(usize::from(code))
            .copied()
            .unwrap_or(Self::NoEviction)
    }
}

impl fmt::Display for EvictionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EvictionPolicy {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ConfigError::Policy(s.to_owned()))
    }
}

/// Keyspace settings; build one with `CacheConfig::default()` and adjust fields, then pass it
/// to [`crate::Keyspace::new`], which validates it.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// Number of numbered databases (Redis `databases`, default 16).
    pub databases: usize,
    /// Number of lock shards, a power of two (default 64: enough that two cores rarely meet
    /// on one lock, few enough that per-shard tables stay cheap).
    pub shards: usize,
    /// Memory bound in bytes as [`crate::Keyspace::used_memory`] counts it; 0 = unbounded
    /// (Redis `maxmemory`, default 0).
    pub max_memory_bytes: u64,
    /// What to evict at the bound (Redis `maxmemory-policy`, default noeviction).
    pub policy: EvictionPolicy,
    /// Keys sampled per eviction round (Redis `maxmemory-samples`, default 5).
    pub max_memory_samples: usize,
    /// LFU counter logarithm factor (Redis `lfu-log-factor`, default 10).
    pub lfu_log_factor: u32,
    /// Minutes of idleness per decrement of an LFU counter (Redis `lfu-decay-time`,
    /// default 1).
    pub lfu_decay_time_min: u32,
    /// Seed for the keyspace's hash function and samplers; fixed seeds make tests
    /// reproducible.
    pub seed: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            databases: 16,
            shards: 64,
            max_memory_bytes: 0,
            policy: EvictionPolicy::NoEviction,
            max_memory_samples: 5,
            lfu_log_factor: 10,
            lfu_decay_time_min: 1,
            seed: 0x5157_4956_4552,
        }
    }
}

impl CacheConfig {
    /// Checks every field against its allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.databases == 0 || self.databases > MAX_DATABASES {
            return Err(ConfigError::Databases {
                value: self.databases,
                max: MAX_DATABASES,
            });
        }
        if !self.shards.is_power_of_two() || self.shards > MAX_SHARDS {
            return Err(ConfigError::Shards {
                value: self.shards,
                max: MAX_SHARDS,
            });
        }
        if self.max_memory_samples == 0 || self.max_memory_samples > MAX_SAMPLES {
            return Err(ConfigError::Samples {
                value: self.max_memory_samples,
                max: MAX_SAMPLES,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_round_trip() {
        for p in EvictionPolicy::ALL {
            assert_eq!(p.name().parse::<EvictionPolicy>(), Ok(p));
            assert_eq!(EvictionPolicy::from_code(p.code()), p);
        }
        assert!("lru".parse::<EvictionPolicy>().is_err());
    }

    #[test]
    fn validation_names_the_bad_value() {
        let c = CacheConfig {
            shards: 3,
            ..CacheConfig::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "shards = 3 is not allowed: use a power of two in 1..=1024"
        );
        assert!(CacheConfig::default().validate().is_ok());
    }
}
