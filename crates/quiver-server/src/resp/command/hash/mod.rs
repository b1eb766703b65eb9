//! Hash commands: HSET HSETNX HGET HMSET HMGET HDEL HEXISTS HLEN HGETALL HKEYS
//! HVALS HINCRBY HINCRBYFLOAT HSTRLEN HRANDFIELD HSCAN.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;
use quiver_resp::num::parse_i64;

use super::keys::{Scan, parse_key_scan};
use super::{Args, Command, is};
use quiver_core::cache::ValueType;

pub(crate) use specs::SPECS;

fn wrap(command: HashCommand) -> Result<Command, CommandError> {
    Ok(Command::Hash(command))
}

/// A hash command.
#[derive(Clone, Debug, PartialEq)]
pub enum HashCommand {
    /// `HSET key field value...` (replies the count of new fields) and
    /// `HMSET` (`legacy_reply`: replies `OK`).
    HSet {
        key: Bytes,
        pairs: Vec<(Bytes, Bytes)>,
        legacy_reply: bool,
    },
    /// `HSETNX key field value`.
    HSetNx {
        key: Bytes,
        field: Bytes,
        value: Bytes,
    },
    /// `HGET key field`.
    HGet { key: Bytes, field: Bytes },
    /// `HMGET key field...`.
    HMGet { key: Bytes, fields: Vec<Bytes> },
    /// `HDEL key field...`.
    HDel { key: Bytes, fields: Vec<Bytes> },
    /// `HEXISTS key field`.
    HExists { key: Bytes, field: Bytes },
    /// `HLEN key`.
    HLen { key: Bytes },
    /// `HGETALL key`.
    HGetAll { key: Bytes },
    /// `HKEYS key`.
    HKeys { key: Bytes },
    /// `HVALS key`.
    HVals { key: Bytes },
    /// `HINCRBY key field delta`.
    HIncrBy {
        key: Bytes,
        field: Bytes,
        delta: i64,
    },
    /// `HINCRBYFLOAT key field delta`.
    HIncrByFloat {
        key: Bytes,
        field: Bytes,
        delta: f64,
    },
    /// `HSTRLEN key field`.
    HStrLen { key: Bytes, field: Bytes },
    /// `HRANDFIELD key [count [WITHVALUES]]`: a negative count may repeat
    /// fields.
    HRandField {
        key: Bytes,
        count: Option<i64>,
        with_values: bool,
    },
    /// `HSCAN key cursor [MATCH p] [COUNT n]`.
    HScan { key: Bytes, scan: Scan },
}

/// Redis's bound on random-member counts (`-LONG_MAX..=LONG_MAX`).
pub(crate) fn random_count(arg: &[u8]) -> Result<i64, CommandError> {
    match parse_i64(arg) {
        None => Err(CommandError::NotInteger),
        Some(i64::MIN) => Err(CommandError::OutOfRangeBetween {
            min: -i64::MAX,
            max: i64::MAX,
        }),
        Some(n) => Ok(n),
    }
}

/// `key [count [WITH...]]` of HRANDFIELD and ZRANDMEMBER (`with` names the option):
/// the key, the count, and whether the option was given, with Redis's checks.
pub(crate) fn random_args(
    args: &mut Args<'_>,
    with: &str,
) -> Result<(Bytes, Option<i64>, bool), CommandError> {
    let key = args.next()?;
    if args.remaining() == 0 {
        return Ok((key, None, false));
    }
    let count = random_count(args.next_slice()?)?;
    let with_values = match args.remaining() {
        0 => false,
        1 if args.peek().is_some_and(|w| is(w, with)) => true,
        _ => return Err(CommandError::Syntax),
    };
    if with_values && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
        return Err(CommandError::OutOfRange);
    }
    Ok((key, Some(count), with_values))
}

fn parse_hrandfield(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let (key, count, with_values) = random_args(args, "withvalues")?;
    wrap(HashCommand::HRandField {
        key,
        count,
        with_values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn hash_commands() {
        assert_eq!(
            parse("HSET h f v g w").unwrap(),
            Command::Hash(HashCommand::HSet {
                key: b("h"),
                pairs: vec![(b("f"), b("v")), (b("g"), b("w"))],
                legacy_reply: false
            })
        );
        assert_eq!(
            error("HSET h f v g"),
            "ERR wrong number of arguments for 'hset' command"
        );
        assert_eq!(
            error("HMSET h f"),
            "ERR wrong number of arguments for 'hmset' command"
        );
        assert_eq!(
            error("HINCRBY h f x"),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            error("HINCRBYFLOAT h f x"),
            "ERR value is not a valid float"
        );
        assert_eq!(
            parse("HRANDFIELD h -5 WITHVALUES").unwrap(),
            Command::Hash(HashCommand::HRandField {
                key: b("h"),
                count: Some(-5),
                with_values: true
            })
        );
        assert_eq!(error("HRANDFIELD h 1 FOO"), "ERR syntax error");
        assert_eq!(error("HRANDFIELD h 1 WITHVALUES x"), "ERR syntax error");
        assert_eq!(
            error("HRANDFIELD h -9223372036854775808"),
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
        );
        // Refused once the key is known to be a hash (the exec tests).
        assert!(matches!(
            parse("HSCAN h 0 TYPE string"),
            Ok(Command::Keys(
                crate::resp::command::KeysCommand::ScanRefused { .. }
            ))
        ));
        assert_eq!(error("HSCAN h x TYPE string"), "ERR invalid cursor");
    }
}
