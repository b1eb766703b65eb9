//! Set commands: SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP
//! SRANDMEMBER SMOVE SINTER SUNION SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE
//! SINTERCARD SSCAN.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;
use quiver_resp::num::parse_i64;

use super::hash::random_count;
use super::keys::{Scan, parse_key_scan};
use super::{Args, Command, is};
use quiver_core::cache::ValueType;

pub(crate) use specs::SPECS;

fn wrap(command: SetCommand) -> Result<Command, CommandError> {
    Ok(Command::Set(command))
}

/// How several sets combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    /// Members in every set.
    Inter,
    /// Members in any set.
    Union,
    /// Members of the first set in no other.
    Diff,
}

/// A set command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetCommand {
    /// `SADD key member...`.
    SAdd { key: Bytes, members: Vec<Bytes> },
    /// `SREM key member...`.
    SRem { key: Bytes, members: Vec<Bytes> },
    /// `SMEMBERS key`.
    SMembers { key: Bytes },
    /// `SISMEMBER key member`.
    SIsMember { key: Bytes, member: Bytes },
    /// `SMISMEMBER key member...`.
    SMIsMember { key: Bytes, members: Vec<Bytes> },
    /// `SCARD key`.
    SCard { key: Bytes },
    /// `SPOP key [count]` (count checked non-negative).
    SPop { key: Bytes, count: Option<i64> },
    /// `SRANDMEMBER key [count]` (negative count may repeat members).
    SRandMember { key: Bytes, count: Option<i64> },
    /// `SMOVE source destination member`.
    SMove {
        source: Bytes,
        destination: Bytes,
        member: Bytes,
    },
    /// `SINTER`/`SUNION`/`SDIFF key...`, and with a destination the
    /// `...STORE` forms.
    Combine {
        op: SetOp,
        destination: Option<Bytes>,
        keys: Vec<Bytes>,
    },
    /// `SINTERCARD numkeys key... [LIMIT n]` (`limit` 0: no limit).
    SInterCard { keys: Vec<Bytes>, limit: i64 },
    /// `SSCAN key cursor [MATCH p] [COUNT n]`.
    SScan { key: Bytes, scan: Scan },
}

fn combine(args: &mut Args<'_>, op: SetOp, store: bool) -> Result<Command, CommandError> {
    let destination = if store { Some(args.next()?) } else { None };
    wrap(SetCommand::Combine {
        op,
        destination,
        keys: args.rest(),
    })
}

fn parse_sintercard(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let numkeys = match parse_i64(args.next_slice()?) {
        Some(n) if n >= 1 => n,
        _ => return Err(CommandError::Message("numkeys should be greater than 0")),
    };
    let numkeys = usize::try_from(numkeys).unwrap_or(usize::MAX);
    if numkeys > args.remaining() {
        return Err(CommandError::Message(
            "Number of keys can't be greater than number of args",
        ));
    }
    let keys = args.take(numkeys)?;
    let mut limit = 0;
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if is(word, "limit") && args.remaining() > 0 {
            limit = args.non_negative(CommandError::Message("LIMIT can't be negative"))?;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(SetCommand::SInterCard { keys, limit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn set_commands() {
        assert_eq!(
            parse("SUNIONSTORE d a b").unwrap(),
            Command::Set(SetCommand::Combine {
                op: SetOp::Union,
                destination: Some(b("d")),
                keys: vec![b("a"), b("b")]
            })
        );
        assert_eq!(
            parse("SPOP s 3").unwrap(),
            Command::Set(SetCommand::SPop {
                key: b("s"),
                count: Some(3)
            })
        );
        assert_eq!(
            error("SPOP s -3"),
            "ERR value is out of range, must be positive"
        );
        assert_eq!(error("SPOP s 1 2"), "ERR syntax error");
        assert_eq!(
            parse("SRANDMEMBER s -3").unwrap(),
            Command::Set(SetCommand::SRandMember {
                key: b("s"),
                count: Some(-3)
            })
        );
        assert_eq!(
            parse("SINTERCARD 2 a b LIMIT 5").unwrap(),
            Command::Set(SetCommand::SInterCard {
                keys: vec![b("a"), b("b")],
                limit: 5
            })
        );
        assert_eq!(
            error("SINTERCARD 0 a"),
            "ERR numkeys should be greater than 0"
        );
        assert_eq!(
            error("SINTERCARD 3 a b"),
            "ERR Number of keys can't be greater than number of args"
        );
        assert_eq!(
            error("SINTERCARD 1 a LIMIT -1"),
            "ERR LIMIT can't be negative"
        );
        assert_eq!(error("SINTERCARD 1 a FOO"), "ERR syntax error");
    }
}
