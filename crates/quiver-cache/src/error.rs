//! Typed errors. `Display` of [`OpError`] is exactly the text Redis replies with, error code
//! first (`WRONGTYPE ...`, `ERR ...`, `OOM ...`), so the server can send it verbatim.

use thiserror::Error;

/// Why a data operation (a command at the keyspace level) was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum OpError {
    /// The key holds a value of another type than the operation works on.
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    /// A stored string or argument is not a base-10 signed 64-bit integer.
    #[error("ERR value is not an integer or out of range")]
    NotAnInteger,
    /// A hash field is not a base-10 signed 64-bit integer (HINCRBY).
    #[error("ERR hash value is not an integer")]
    HashNotAnInteger,
    /// A hash field is not a float (HINCRBYFLOAT).
    #[error("ERR hash value is not a float")]
    HashNotAFloat,
    /// The integer result would leave the signed 64-bit range.
    #[error("ERR increment or decrement would overflow")]
    Overflow,
    /// A stored string or argument is not a float.
    #[error("ERR value is not a valid float")]
    NotAFloat,
    /// A float increment would produce NaN or an infinity.
    #[error("ERR increment would produce NaN or Infinity")]
    NanOrInfinity,
    /// A sorted-set score operation would produce NaN (e.g. `+inf` plus `-inf`).
    #[error("ERR resulting score is not a number (NaN)")]
    ScoreNan,
    /// `max_memory` is reached and nothing can (or may) be evicted.
    #[error("OOM command not allowed when used memory > 'maxmemory'.")]
    OutOfMemory,
    /// The operation needs an existing key (RENAME, LSET).
    #[error("ERR no such key")]
    NoSuchKey,
    /// SORT by numbers found something that is not one.
    #[error("ERR One or more scores can't be converted into double")]
    SortNotNumber,
    /// LCS of a key holding something other than a string.
    #[error("ERR The specified keys must contain string values")]
    LcsNotStrings,
    /// LCS's table would pass `proto-max-bulk-len`.
    #[error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")]
    LcsTooLarge,
    /// A negative count asks for more picks with repeats than one reply holds
    /// (`MAX_RANDOM_PICKS`, 2^24; Redis would try to build it).
    #[error("ERR value is out of range: a negative count asks for at most 16777216 picks")]
    TooManyPicks,
    /// A list index is outside the list (LSET).
    #[error("ERR index out of range")]
    IndexOutOfRange,
    /// A string would grow past [`crate::MAX_STRING_BYTES`] (SETRANGE, APPEND).
    #[error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")]
    StringTooLong,
    /// A database index is not below the configured number of databases.
    #[error("ERR DB index is out of range")]
    DbOutOfRange,
    /// COPY or MOVE with the same source and destination.
    #[error("ERR source and destination objects are the same")]
    SameObject,
    /// An expire time that overflows when converted to absolute milliseconds.
    #[error("ERR invalid expire time in '{command}' command")]
    InvalidExpireTime {
        /// The lower-case command name Redis puts in the message.
        command: &'static str,
    },
    /// A score range bound that is not a float or `(`float.
    #[error("ERR min or max is not a float")]
    RangeNotFloat,
    /// A lexicographic range bound that does not start with `[`, `(`, or is not `-`/`+`.
    #[error("ERR min or max not valid string range item")]
    RangeNotLex,
    /// OBJECT FREQ while the eviction policy is not an LFU one.
    #[error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
    )]
    LfuNotSelected,
    /// OBJECT IDLETIME while the eviction policy is an LFU one.
    #[error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
    )]
    LfuSelected,
    /// XADD with an ID at or below the stream's last.
    #[error("ERR The ID specified in XADD is equal or smaller than the target stream top item")]
    StreamIdTooSmall,
    /// XADD with the ID 0-0.
    #[error("ERR The ID specified in XADD must be greater than 0-0")]
    StreamIdZero,
    /// XADD `ms-*` when that millisecond's last sequence is taken (Redis 7.0's text).
    #[error("ERR Elements are too large to be stored")]
    StreamSeqExhausted,
    /// XSETID below the last entry.
    #[error("ERR The ID specified in XSETID is smaller than the target stream top item")]
    StreamSetIdBelowTop,
    /// XSETID with ENTRIESADDED below the length.
    #[error("ERR The entries_added specified in XSETID is smaller than the target stream length")]
    StreamSetIdEntriesBelowLength,
    /// XGROUP on a key that does not exist.
    #[error(
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
    )]
    StreamGroupNeedsKey,
    /// XGROUP CREATE of a group that exists.
    #[error("BUSYGROUP Consumer Group name already exists")]
    BusyGroup,
    /// RESTORE onto an existing key without REPLACE.
    #[error("BUSYKEY Target key name already exists.")]
    BusyKey,
    /// RESTORE with a negative TTL.
    #[error("ERR Invalid TTL value, must be >= 0")]
    InvalidRestoreTtl,
    /// A DUMP payload with an unknown RDB version or a wrong checksum.
    #[error("ERR DUMP payload version or checksum are wrong")]
    BadDumpPayload,
    /// A DUMP payload whose checksum is right but whose value cannot be read.
    #[error("ERR Bad data format")]
    BadDataFormat,
    /// A consumer group (or its stream) that does not exist; each command words it its
    /// own way.
    #[error("NOGROUP No such key or consumer group")]
    NoGroup,
    /// XADD after the largest possible ID.
    #[error("ERR The stream has exhausted the last possible ID, unable to add more items")]
    StreamExhausted,
    /// A HyperLogLog command on a string that is not one.
    #[error("WRONGTYPE Key is not a valid HyperLogLog string value.")]
    NotHll,
    /// A HyperLogLog whose registers do not add up.
    #[error("INVALIDOBJ Corrupted HLL object detected")]
    CorruptHll,
    /// PFDEBUG of a missing key.
    #[error("ERR The specified key does not exist")]
    HllDebugNoKey,
    /// PFDEBUG DECODE of a dense value.
    #[error("ERR HLL encoding is not sparse")]
    HllNotSparse,
}

/// Why a [`crate::CacheConfig`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `databases` must be in `1..=MAX_DATABASES`.
    #[error("databases = {value} is not allowed: use 1..={max}")]
    Databases {
        /// The refused value.
        value: usize,
        /// The largest allowed value.
        max: usize,
    },
    /// `shards` must be a power of two in `1..=MAX_SHARDS`.
    #[error("shards = {value} is not allowed: use a power of two in 1..={max}")]
    Shards {
        /// The refused value.
        value: usize,
        /// The largest allowed value.
        max: usize,
    },
    /// `max_memory_samples` must be in `1..=MAX_SAMPLES`.
    #[error("max_memory_samples = {value} is not allowed: use 1..={max}")]
    Samples {
        /// The refused value.
        value: usize,
        /// The largest allowed value.
        max: usize,
    },
    /// An eviction policy name that is not one of Redis's eight.
    #[error(
        "maxmemory-policy '{0}' is unknown: use noeviction, allkeys-lru, allkeys-lfu, allkeys-random, volatile-lru, volatile-lfu, volatile-random or volatile-ttl"
    )]
    Policy(String),
}
