//! Commands on keys of any type: DEL UNLINK EXISTS TOUCH EXPIRE PEXPIRE
//! EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME PEXPIRETIME PERSIST TYPE KEYS SCAN
//! RENAME RENAMENX COPY RANDOMKEY DBSIZE FLUSHDB FLUSHALL OBJECT MEMORY DUMP RESTORE
//! MIGRATE.

pub(crate) mod exec;
pub(in crate::resp) mod migrate;
mod specs;

use bytes::Bytes;
use quiver_core::cache::ValueType;
use quiver_resp::error::CommandError;
use quiver_resp::num::parse_cursor;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: KeysCommand) -> Result<Command, CommandError> {
    Ok(Command::Keys(command))
}

/// A command on keys of any type.
#[derive(Clone, Debug, PartialEq)]
pub enum KeysCommand {
    /// `SSCAN`, `HSCAN` or `ZSCAN` whose options are refused: Redis looks the key up
    /// first, so a missing key is still an empty scan and a key of another type
    /// `WRONGTYPE`; only then is `error` the reply.
    ScanRefused {
        key: Bytes,
        kind: ValueType,
        error: CommandError,
    },
    /// `DEL key...`.
    Del { keys: Vec<Bytes> },
    /// `UNLINK key...`.
    Unlink { keys: Vec<Bytes> },
    /// `EXISTS key...`.
    Exists { keys: Vec<Bytes> },
    /// `TOUCH key...`.
    Touch { keys: Vec<Bytes> },
    /// `EXPIRE`, `PEXPIRE`, `EXPIREAT`, `PEXPIREAT`.
    Expire(Expire),
    /// `TTL`, `PTTL` (relative) and `EXPIRETIME`, `PEXPIRETIME` (absolute).
    Ttl {
        key: Bytes,
        unit: TimeUnit,
        absolute: bool,
    },
    /// `PERSIST key`.
    Persist { key: Bytes },
    /// `TYPE key`.
    Type { key: Bytes },
    /// `KEYS pattern`.
    Keys { pattern: Bytes },
    /// `SCAN cursor [MATCH p] [COUNT n] [TYPE t]`.
    Scan(Scan),
    /// `RENAME` and `RENAMENX` (`only_if_new`).
    Rename {
        key: Bytes,
        new_key: Bytes,
        only_if_new: bool,
    },
    /// `COPY source destination [DB db] [REPLACE]`.
    Copy {
        source: Bytes,
        destination: Bytes,
        db: Option<i64>,
        replace: bool,
    },
    /// `MOVE key db`.
    Move { key: Bytes, db: i64 },
    /// `DUMP key`.
    Dump { key: Bytes },
    /// `RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]` (the TTL as
    /// given: it is checked after the key, as Redis does).
    Restore {
        key: Bytes,
        ttl: Bytes,
        payload: Bytes,
        options: quiver_core::cache::RestoreOptions,
    },
    /// `WAIT numreplicas timeout` (milliseconds; 0 waits forever).
    Wait { replicas: i64, timeout_ms: i64 },
    /// `SORT`/`SORT_RO key [BY p] [LIMIT o c] [GET p...] [ASC|DESC] [ALPHA] [STORE d]`.
    Sort {
        key: Bytes,
        options: quiver_core::cache::SortOptions,
    },
    /// `RANDOMKEY`.
    RandomKey,
    /// `DBSIZE`.
    DbSize,
    /// `FLUSHDB [ASYNC|SYNC]`.
    FlushDb { mode: FlushMode },
    /// `FLUSHALL [ASYNC|SYNC]`.
    FlushAll { mode: FlushMode },
    /// `SWAPDB index1 index2` (indices as given: a negative one is out of range).
    SwapDb { first: i32, second: i32 },
    /// `OBJECT` subcommands.
    Object(ObjectCommand),
    /// `MEMORY USAGE key [SAMPLES n]` (`samples` 0 means all).
    MemoryUsage { key: Bytes, samples: Option<i64> },
    /// `MEMORY HELP`.
    MemoryHelp,
}

/// Seconds or milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Milliseconds,
}

/// `EXPIRE` and friends, the time converted to milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expire {
    /// The key.
    pub key: Bytes,
    /// Milliseconds (relative) or Unix milliseconds (absolute); may be
    /// negative or in the past, which deletes the key.
    pub time_ms: i64,
    /// `EXPIREAT`/`PEXPIREAT`.
    pub absolute: bool,
    /// `NX`, `XX`, `GT` or `LT` (`XX` with `LT`: [`ExpireCondition::XxLt`]).
    pub condition: Option<ExpireCondition>,
    /// The command's name, for the overflow error (`expire`, `pexpire`, ...).
    pub command: &'static str,
}

impl Expire {
    /// The absolute deadline given the current time; `None` when it
    /// overflows (Redis: invalid expire time).
    pub fn deadline_unix_ms(&self, now_unix_ms: i64) -> Option<i64> {
        if self.absolute {
            Some(self.time_ms)
        } else {
            now_unix_ms.checked_add(self.time_ms)
        }
    }
}

/// The `EXPIRE` conditions of Redis 7.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpireCondition {
    /// Only if the key has no expiry.
    Nx,
    /// Only if the key has an expiry.
    Xx,
    /// Only if the new expiry is later.
    Gt,
    /// Only if the new expiry is earlier.
    Lt,
    /// Only if the key has an expiry and the new one is earlier (`XX LT`; `XX GT` is
    /// `GT`, which a key without expiry never passes).
    XxLt,
}

/// `FLUSHDB`/`FLUSHALL` mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushMode {
    /// No argument: the server's default (`lazyfree-lazy-user-flush`).
    Default,
    /// `SYNC`.
    Sync,
    /// `ASYNC`.
    Async,
}

/// `OBJECT` subcommands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectCommand {
    /// `OBJECT ENCODING key`.
    Encoding { key: Bytes },
    /// `OBJECT FREQ key`.
    Freq { key: Bytes },
    /// `OBJECT IDLETIME key`.
    IdleTime { key: Bytes },
    /// `OBJECT REFCOUNT key`.
    RefCount { key: Bytes },
    /// `OBJECT HELP`.
    Help,
}

/// A `SCAN`-family request: cursor and options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// Where to continue (0 starts).
    pub cursor: u64,
    /// `MATCH` glob pattern; `None` for none or `*`.
    pub pattern: Option<Bytes>,
    /// `COUNT` hint, at least 1 (default 10).
    pub count: u64,
    /// `TYPE` filter (`SCAN` only).
    pub type_name: Option<Bytes>,
}

/// Redis's default `COUNT` of the `SCAN` family.
pub const DEFAULT_SCAN_COUNT: u64 = 10;

/// Parses `SSCAN`/`HSCAN`/`ZSCAN key cursor [options]` of a key holding `kind` into
/// `wrap`'s command: the cursor is checked at once, the options after the key
/// ([`KeysCommand::ScanRefused`]).
pub(crate) fn parse_key_scan(
    key: Bytes,
    args: &mut Args<'_>,
    kind: ValueType,
    wrap: impl FnOnce(Bytes, Scan) -> Command,
) -> Result<Command, CommandError> {
    let cursor = args.next_slice()?;
    match parse_scan(cursor, args, false) {
        Ok(scan) => Ok(wrap(key, scan)),
        Err(CommandError::InvalidCursor) => Err(CommandError::InvalidCursor),
        Err(error) => Ok(Command::Keys(KeysCommand::ScanRefused { key, kind, error })),
    }
}

/// Parses a `SCAN`-family cursor and options (`TYPE` only for `SCAN`).
pub(crate) fn parse_scan(
    cursor: &[u8],
    args: &mut Args<'_>,
    allow_type: bool,
) -> Result<Scan, CommandError> {
    let cursor = parse_cursor(cursor).ok_or(CommandError::InvalidCursor)?;
    let mut scan = Scan {
        cursor,
        pattern: None,
        count: DEFAULT_SCAN_COUNT,
        type_name: None,
    };
    while let Some(word) = args.peek() {
        if args.remaining() < 2 {
            return Err(CommandError::Syntax);
        }
        args.next_slice()?;
        if is(word, "count") {
            let count = args.i64()?;
            scan.count = u64::try_from(count)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or(CommandError::Syntax)?;
        } else if is(word, "match") {
            let pattern = args.next()?;
            scan.pattern = if &pattern[..] == b"*" {
                None
            } else {
                Some(pattern)
            };
        } else if allow_type && is(word, "type") {
            scan.type_name = Some(args.next()?);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    Ok(scan)
}

fn parse_expire(
    args: &mut Args<'_>,
    unit_ms: i64,
    absolute: bool,
) -> Result<Command, CommandError> {
    let key = args.next()?;
    let time = args.next_slice()?;
    let mut flags = [false; 4]; // nx xx gt lt
    while let Some(word) = args.peek() {
        args.next_slice()?;
        match ["nx", "xx", "gt", "lt"]
            .iter()
            .position(|name| is(word, name))
        {
            Some(i) => flags[i] = true,
            None => {
                let message = format!("Unsupported option {}", String::from_utf8_lossy(word));
                return Err(CommandError::Other {
                    code: quiver_resp::error::ErrorCode::Err,
                    message: message.into(),
                });
            }
        }
    }
    let [nx, xx, gt, lt] = flags;
    if nx && (xx || gt || lt) {
        return Err(CommandError::Message(
            "NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(CommandError::Message(
            "GT and LT options at the same time are not compatible",
        ));
    }
    let time = quiver_resp::num::parse_i64(time).ok_or(CommandError::NotInteger)?;
    let time_ms = time
        .checked_mul(unit_ms)
        .ok_or(CommandError::InvalidExpireTime {
            command: args.spec().name,
        })?;
    let condition = [
        (xx && lt, ExpireCondition::XxLt),
        (gt, ExpireCondition::Gt),
        (lt, ExpireCondition::Lt),
        (nx, ExpireCondition::Nx),
        (xx, ExpireCondition::Xx),
    ]
    .into_iter()
    .find(|(set, _)| *set)
    .map(|(_, condition)| condition);
    wrap(KeysCommand::Expire(Expire {
        key,
        time_ms,
        absolute,
        condition,
        command: args.spec().name,
    }))
}

fn parse_copy(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let source = args.next()?;
    let destination = args.next()?;
    let (mut db, mut replace) = (None, false);
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if is(word, "replace") {
            replace = true;
        } else if is(word, "db") && args.remaining() > 0 {
            db = Some(args.i64()?);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(KeysCommand::Copy {
        source,
        destination,
        db,
        replace,
    })
}

/// RESTORE's options, checked in Redis's order (IDLETIME and FREQ exclude each other).
fn parse_restore(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let ttl = args.next()?;
    let payload = args.next()?;
    let mut options = quiver_core::cache::RestoreOptions::default();
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if is(word, "replace") {
            options.replace = true;
        } else if is(word, "absttl") {
            options.absttl = true;
        } else if is(word, "idletime") && args.remaining() > 0 && options.freq.is_none() {
            let idle = args.i64()?;
            options.idle_s = Some(
                u64::try_from(idle)
                    .map_err(|_| CommandError::Message("Invalid IDLETIME value, must be >= 0"))?,
            );
        } else if is(word, "freq") && args.remaining() > 0 && options.idle_s.is_none() {
            let freq = args.i64()?;
            options.freq = Some(u8::try_from(freq).map_err(|_| {
                CommandError::Message("Invalid FREQ value, must be >= 0 and <= 255")
            })?);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(KeysCommand::Restore {
        key,
        ttl,
        payload,
        options,
    })
}

fn flush_mode(args: &mut Args<'_>) -> Result<FlushMode, CommandError> {
    if args.remaining() > 1 {
        return Err(CommandError::Syntax);
    }
    match args.peek() {
        None => Ok(FlushMode::Default),
        Some(word) if is(word, "sync") => Ok(FlushMode::Sync),
        Some(word) if is(word, "async") => Ok(FlushMode::Async),
        Some(_) => Err(CommandError::Syntax),
    }
}

fn parse_memory_usage(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let mut samples = None;
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if is(word, "samples") && args.remaining() > 0 {
            let n = args.i64()?;
            if n < 0 {
                return Err(CommandError::Syntax);
            }
            samples = Some(n);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(KeysCommand::MemoryUsage { key, samples })
}

/// SORT (`readonly` false) and SORT_RO: Redis's options, in any order, the last of a
/// kind winning (GET patterns add up).
fn parse_sort(args: &mut Args<'_>, readonly: bool) -> Result<Command, CommandError> {
    let key = args.next()?;
    let mut options = quiver_core::cache::SortOptions::default();
    while let Ok(word) = args.next_slice() {
        let left = args.remaining();
        if is(word, "asc") {
            options.desc = false;
        } else if is(word, "desc") {
            options.desc = true;
        } else if is(word, "alpha") {
            options.alpha = true;
        } else if is(word, "limit") && left >= 2 {
            let offset = args.i64()?;
            let count = args.i64()?;
            options.limit = Some((offset, count));
        } else if !readonly && is(word, "store") && left >= 1 {
            options.store = Some(args.next()?);
        } else if is(word, "by") && left >= 1 {
            options.by = Some(args.next()?);
        } else if is(word, "get") && left >= 1 {
            options.get.push(args.next()?);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(KeysCommand::Sort { key, options })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn expire_options() {
        let expire = |line| match parse(line).unwrap() {
            Command::Keys(KeysCommand::Expire(expire)) => expire,
            other => panic!("{other:?}"),
        };
        let e = expire("EXPIRE k 10 GT");
        assert_eq!(
            (e.time_ms, e.absolute, e.condition),
            (10_000, false, Some(ExpireCondition::Gt))
        );
        assert_eq!(expire("PEXPIREAT k -5").time_ms, -5);
        assert_eq!(
            error("EXPIRE k 10 NX XX"),
            "ERR NX and XX, GT or LT options at the same time are not compatible"
        );
        assert_eq!(
            error("EXPIRE k 10 GT LT"),
            "ERR GT and LT options at the same time are not compatible"
        );
        assert_eq!(error("EXPIRE k 10 FOO"), "ERR Unsupported option FOO");
        assert_eq!(
            error("EXPIRE k ten"),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            error("EXPIRE k 9223372036854775807"),
            "ERR invalid expire time in 'expire' command"
        );
    }

    #[test]
    fn scan_options() {
        let scan = match parse("SCAN 17 MATCH user:* COUNT 100 TYPE hash").unwrap() {
            Command::Keys(KeysCommand::Scan(scan)) => scan,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            scan,
            Scan {
                cursor: 17,
                pattern: Some(b("user:*")),
                count: 100,
                type_name: Some(b("hash"))
            }
        );
        assert_eq!(error("SCAN x"), "ERR invalid cursor");
        assert_eq!(error("SCAN 0 COUNT 0"), "ERR syntax error");
        assert_eq!(error("SCAN 0 COUNT"), "ERR syntax error");
        assert_eq!(
            error("SCAN 0 COUNT x"),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(error("SCAN 0 FOO bar"), "ERR syntax error");
    }

    #[test]
    fn containers_and_misc() {
        assert_eq!(
            parse("object encoding k").unwrap(),
            Command::Keys(KeysCommand::Object(ObjectCommand::Encoding { key: b("k") }))
        );
        assert_eq!(
            error("OBJECT foo k"),
            "ERR unknown subcommand 'foo'. Try OBJECT HELP."
        );
        assert_eq!(
            error("OBJECT encoding"),
            "ERR wrong number of arguments for 'object|encoding' command"
        );
        assert_eq!(
            error("OBJECT"),
            "ERR wrong number of arguments for 'object' command"
        );
        assert_eq!(
            parse("MEMORY USAGE k SAMPLES 0").unwrap(),
            Command::Keys(KeysCommand::MemoryUsage {
                key: b("k"),
                samples: Some(0)
            })
        );
        assert_eq!(
            parse("FLUSHALL ASYNC").unwrap(),
            Command::Keys(KeysCommand::FlushAll {
                mode: FlushMode::Async
            })
        );
        assert_eq!(error("FLUSHDB LATER"), "ERR syntax error");
        assert_eq!(
            parse("COPY a b DB 2 REPLACE").unwrap(),
            Command::Keys(KeysCommand::Copy {
                source: b("a"),
                destination: b("b"),
                db: Some(2),
                replace: true
            })
        );
        assert_eq!(error("COPY a b DB"), "ERR syntax error");
    }
}
