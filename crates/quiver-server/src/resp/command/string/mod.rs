//! String commands: GET SET SETNX SETEX PSETEX MGET MSET MSETNX GETSET GETDEL
//! GETEX APPEND STRLEN GETRANGE SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: StringCommand) -> Result<Command, CommandError> {
    Ok(Command::String(command))
}

/// A string command.
#[derive(Clone, Debug, PartialEq)]
pub enum StringCommand {
    /// `GET key`.
    Get { key: Bytes },
    /// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]`; what is wrong with
    /// the options is reported after the keys' types, as Redis does.
    Lcs {
        keys: [Bytes; 2],
        options: Result<LcsOptions, CommandError>,
    },
    /// `SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT t|KEEPTTL]`.
    Set(Set),
    /// `SETNX key value`.
    SetNx { key: Bytes, value: Bytes },
    /// `SETEX key seconds value` and `PSETEX key ms value`: a relative expiry.
    SetEx {
        key: Bytes,
        expiry: Expiry,
        value: Bytes,
        /// `setex` or `psetex`, for the overflow error.
        command: &'static str,
    },
    /// `MGET key...`.
    MGet { keys: Vec<Bytes> },
    /// `MSET key value...`.
    MSet { pairs: Vec<(Bytes, Bytes)> },
    /// `MSETNX key value...`.
    MSetNx { pairs: Vec<(Bytes, Bytes)> },
    /// `GETSET key value`.
    GetSet { key: Bytes, value: Bytes },
    /// `GETDEL key`.
    GetDel { key: Bytes },
    /// `GETEX key [EX|PX|EXAT|PXAT t|PERSIST]`.
    GetEx { key: Bytes, ttl: Option<TtlChange> },
    /// `APPEND key value`.
    Append { key: Bytes, value: Bytes },
    /// `STRLEN key`.
    StrLen { key: Bytes },
    /// `GETRANGE key start end`.
    GetRange { key: Bytes, start: i64, end: i64 },
    /// `SETRANGE key offset value` (offset checked non-negative).
    SetRange {
        key: Bytes,
        offset: i64,
        value: Bytes,
    },
    /// `INCR`, `DECR`, `INCRBY`, `DECRBY` as one signed delta.
    IncrBy { key: Bytes, delta: i64 },
    /// `INCRBYFLOAT key delta`. `None`: the delta is not a float, which Redis reports
    /// only after checking the stored value.
    IncrByFloat { key: Bytes, delta: Option<f64> },
}

/// `SET` with its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Set {
    /// The key.
    pub key: Bytes,
    /// The value.
    pub value: Bytes,
    /// `NX` or `XX`.
    pub condition: Option<Condition>,
    /// `GET`: reply with the old value.
    pub get: bool,
    /// What happens to the key's time to live.
    pub ttl: TtlChange,
}

/// `NX` (only if absent) or `XX` (only if present).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// Only if the key does not exist.
    Nx,
    /// Only if the key exists.
    Xx,
}

/// What a write does to the key's expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlChange {
    /// Remove any expiry (a plain `SET`, `GETEX PERSIST`).
    Persist,
    /// Keep the current expiry (`KEEPTTL`).
    Keep,
    /// Set this expiry.
    Expire(Expiry),
}

/// An expiry, in milliseconds, validated positive and without overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Relative: this many milliseconds from now (`EX`, `PX`).
    InMs(i64),
    /// Absolute: this Unix time in milliseconds (`EXAT`, `PXAT`).
    AtUnixMs(i64),
}

impl Expiry {
    /// The Unix time in milliseconds at which the key expires, given the
    /// current time; `None` if it overflows (Redis: invalid expire time).
    pub fn deadline_unix_ms(self, now_unix_ms: i64) -> Option<i64> {
        match self {
            Expiry::InMs(ms) => now_unix_ms.checked_add(ms),
            Expiry::AtUnixMs(ms) => Some(ms),
        }
    }
}

/// The unit of an expiry argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Seconds,
    Milliseconds,
}

/// Validates an expire time as Redis's `getExpireMillisecondsOrReply`.
fn expire_ms(args: &mut Args<'_>, unit: Unit, absolute: bool) -> Result<Expiry, CommandError> {
    let value = args.i64()?;
    let invalid = CommandError::InvalidExpireTime {
        command: args.spec().name,
    };
    if value <= 0 {
        return Err(invalid);
    }
    let ms = match unit {
        Unit::Seconds => value.checked_mul(1000).ok_or(invalid)?,
        Unit::Milliseconds => value,
    };
    Ok(if absolute {
        Expiry::AtUnixMs(ms)
    } else {
        Expiry::InMs(ms)
    })
}

/// Which expiry option was given, for the conflict rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExpiryOption {
    Ex,
    Px,
    ExAt,
    PxAt,
}

impl ExpiryOption {
    fn from_word(word: &[u8]) -> Option<ExpiryOption> {
        [
            ("ex", ExpiryOption::Ex),
            ("px", ExpiryOption::Px),
            ("exat", ExpiryOption::ExAt),
            ("pxat", ExpiryOption::PxAt),
        ]
        .into_iter()
        .find(|(name, _)| is(word, name))
        .map(|(_, option)| option)
    }
}

/// The shared option loop of `SET` and `GETEX` (Redis's
/// `parseExtendedStringArgumentsOrReply`): repeating an option is allowed,
/// combining conflicting ones is a syntax error.
struct Extended {
    condition: Option<Condition>,
    get: bool,
    keep_ttl: bool,
    persist: bool,
    /// The expiry option given and the position of its value.
    expiry: Option<(ExpiryOption, usize)>,
}

fn parse_extended(
    args: &mut Args<'_>,
    is_set: bool,
) -> Result<(Extended, Option<Expiry>), CommandError> {
    let mut ext = Extended {
        condition: None,
        get: false,
        keep_ttl: false,
        persist: false,
        expiry: None,
    };
    while let Some(word) = args.peek() {
        args.next_slice()?;
        let has_next = args.remaining() > 0;
        let expiry_kind = ExpiryOption::from_word(word);
        if is_set && is(word, "nx") && ext.condition != Some(Condition::Xx) {
            ext.condition = Some(Condition::Nx);
        } else if is_set && is(word, "xx") && ext.condition != Some(Condition::Nx) {
            ext.condition = Some(Condition::Xx);
        } else if is_set && is(word, "get") {
            ext.get = true;
        } else if is_set && is(word, "keepttl") && !ext.persist && ext.expiry.is_none() {
            ext.keep_ttl = true;
        } else if !is_set && is(word, "persist") && ext.expiry.is_none() && !ext.keep_ttl {
            ext.persist = true;
        } else if let Some(kind) = expiry_kind
            && has_next
            && !ext.keep_ttl
            && !ext.persist
            && ext.expiry.is_none_or(|(given, _)| given == kind)
        {
            // The value is validated after the loop: a later option may
            // still make this a syntax error, which Redis reports first.
            ext.expiry = Some((kind, args.pos));
            args.next_slice()?;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let expiry = match ext.expiry {
        Some((kind, pos)) => {
            let mut at = Args {
                request: args.request,
                spec: args.spec,
                pos,
            };
            let unit = if matches!(kind, ExpiryOption::Ex | ExpiryOption::ExAt) {
                Unit::Seconds
            } else {
                Unit::Milliseconds
            };
            let absolute = matches!(kind, ExpiryOption::ExAt | ExpiryOption::PxAt);
            Some(expire_ms(&mut at, unit, absolute)?)
        }
        None => None,
    };
    Ok((ext, expiry))
}

/// `GETRANGE key start end`, and `SUBSTR`, its older name.
fn parse_getrange(args: &mut Args<'_>) -> Result<Command, CommandError> {
    wrap(StringCommand::GetRange {
        key: args.next()?,
        start: args.i64()?,
        end: args.i64()?,
    })
}

/// The flags of SET's key in `request`: it reads the old value only with `GET`.
fn set_key_flags(request: &quiver_resp::Request) -> &'static [&'static str] {
    if (3..request.len()).any(|pos| request.arg(pos).is_some_and(|arg| is(arg, "get"))) {
        &["RW", "access", "update"]
    } else {
        &["OW", "update"]
    }
}

fn parse_set(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let value = args.next()?;
    let (ext, expiry) = parse_extended(args, true)?;
    let ttl = match (expiry, ext.keep_ttl) {
        (Some(expiry), _) => TtlChange::Expire(expiry),
        (None, true) => TtlChange::Keep,
        (None, false) => TtlChange::Persist,
    };
    wrap(StringCommand::Set(Set {
        key,
        value,
        condition: ext.condition,
        get: ext.get,
        ttl,
    }))
}

fn parse_getex(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let (ext, expiry) = parse_extended(args, false)?;
    let ttl = match (expiry, ext.persist) {
        (Some(expiry), _) => Some(TtlChange::Expire(expiry)),
        (None, true) => Some(TtlChange::Persist),
        (None, false) => None,
    };
    wrap(StringCommand::GetEx { key, ttl })
}

fn parse_setex(args: &mut Args<'_>, unit: Unit) -> Result<Command, CommandError> {
    let key = args.next()?;
    let expiry = expire_ms(args, unit, false)?;
    wrap(StringCommand::SetEx {
        key,
        expiry,
        value: args.next()?,
        command: args.spec().name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    fn set(line: &str) -> Set {
        match parse(line).unwrap() {
            Command::String(StringCommand::Set(set)) => set,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn set_options() {
        let plain = set("SET k v");
        assert_eq!(
            (plain.key, plain.value, plain.ttl),
            (b("k"), b("v"), TtlChange::Persist)
        );
        let full = set("set k v nx get px 1500");
        assert_eq!(full.condition, Some(Condition::Nx));
        assert!(full.get);
        assert_eq!(full.ttl, TtlChange::Expire(Expiry::InMs(1500)));
        assert_eq!(
            set("SET k v EX 1 EX 200").ttl,
            TtlChange::Expire(Expiry::InMs(200_000))
        );
        assert_eq!(
            set("SET k v EXAT 10").ttl,
            TtlChange::Expire(Expiry::AtUnixMs(10_000))
        );
        assert_eq!(set("SET k v KEEPTTL XX").ttl, TtlChange::Keep);
    }

    #[test]
    fn set_errors() {
        for bad in [
            "SET k v NX XX",
            "SET k v EX 1 PX 2",
            "SET k v KEEPTTL EX 1",
            "SET k v EX",
            "SET k v PERSIST",
            "SET k v FOO",
        ] {
            assert_eq!(error(bad), "ERR syntax error", "{bad}");
        }
        assert_eq!(
            error("SET k v EX 0"),
            "ERR invalid expire time in 'set' command"
        );
        assert_eq!(
            error("SET k v EX 9223372036854775807"),
            "ERR invalid expire time in 'set' command"
        );
        assert_eq!(
            error("SET k v PX -5"),
            "ERR invalid expire time in 'set' command"
        );
        assert_eq!(
            error("SET k v EX abc"),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            error("SET k"),
            "ERR wrong number of arguments for 'set' command"
        );
        assert_eq!(
            error("SETEX k 0 v"),
            "ERR invalid expire time in 'setex' command"
        );
        assert_eq!(
            error("PSETEX k x v"),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            error("GETEX k EX 0"),
            "ERR invalid expire time in 'getex' command"
        );
        assert_eq!(error("GETEX k PERSIST EX 1"), "ERR syntax error");
        assert_eq!(error("GETEX k NX"), "ERR syntax error");
    }

    #[test]
    fn other_string_commands() {
        assert_eq!(
            parse("GET k").unwrap(),
            Command::String(StringCommand::Get { key: b("k") })
        );
        assert_eq!(
            parse("DECR k").unwrap(),
            Command::String(StringCommand::IncrBy {
                key: b("k"),
                delta: -1
            })
        );
        assert_eq!(
            error("DECRBY k -9223372036854775808"),
            "ERR decrement would overflow"
        );
        assert_eq!(
            error("INCRBY k 1.5"),
            "ERR value is not an integer or out of range"
        );
        // A delta that is not a float is refused after the key's type is checked.
        assert_eq!(
            parse("INCRBYFLOAT k x"),
            Ok(Command::String(StringCommand::IncrByFloat {
                key: b("k"),
                delta: None
            }))
        );
        assert_eq!(
            error("MSET a 1 b"),
            "ERR wrong number of arguments for 'mset' command"
        );
        assert_eq!(error("SETRANGE k -1 v"), "ERR offset is out of range");
        assert_eq!(
            parse("GETEX k PERSIST").unwrap(),
            Command::String(StringCommand::GetEx {
                key: b("k"),
                ttl: Some(TtlChange::Persist)
            })
        );
        assert_eq!(
            parse("MSET a 1 b 2").unwrap(),
            Command::String(StringCommand::MSet {
                pairs: vec![(b("a"), b("1")), (b("b"), b("2"))]
            })
        );
    }
}

/// LCS's options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LcsOptions {
    /// `LEN`: only the length.
    pub len: bool,
    /// `IDX`: the matched ranges and the length.
    pub idx: bool,
    /// `MINMATCHLEN`: shorter ranges are left out (a negative value is 0).
    pub min_match_len: usize,
    /// `WITHMATCHLEN`: each range with its length.
    pub with_match_len: bool,
}

/// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]`.
fn parse_lcs(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let keys = [args.next()?, args.next()?];
    let options = (|| {
        let mut options = LcsOptions::default();
        while let Ok(word) = args.next_slice() {
            if is(word, "len") {
                options.len = true;
            } else if is(word, "idx") {
                options.idx = true;
            } else if is(word, "withmatchlen") {
                options.with_match_len = true;
            } else if is(word, "minmatchlen") && args.remaining() > 0 {
                let n = quiver_resp::num::parse_i64(args.next_slice()?)
                    .ok_or(CommandError::NotInteger)?;
                options.min_match_len = usize::try_from(n).unwrap_or(0);
            } else {
                return Err(CommandError::Syntax);
            }
        }
        if options.len && options.idx {
            return Err(CommandError::Message(
                "If you want both the length and indexes, please just use IDX.",
            ));
        }
        Ok(options)
    })();
    wrap(StringCommand::Lcs { keys, options })
}
