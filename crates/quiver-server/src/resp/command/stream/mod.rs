//! Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XREAD XSETID, and the consumer
//! groups: XGROUP XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_core::cache::{StreamAddId, StreamId, StreamTrim, StreamTrimTo};
use quiver_resp::error::{CommandError, ErrorCode};
use quiver_resp::num::parse_i64;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: StreamCommand) -> Result<Command, CommandError> {
    Ok(Command::Stream(command))
}

/// A stream command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamCommand {
    /// `XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value...`.
    Add {
        key: Bytes,
        nomkstream: bool,
        id: StreamAddId,
        trim: Option<StreamTrim>,
        fields: Vec<Bytes>,
    },
    /// `XLEN key`.
    Len { key: Bytes },
    /// `XRANGE key start end [COUNT n]` and `XREVRANGE key end start [COUNT n]`.
    Range {
        key: Bytes,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        rev: bool,
    },
    /// `XDEL key id...`: the IDs are checked once the key is known to be a stream, as
    /// Redis does.
    Del { key: Bytes, ids: Vec<Bytes> },
    /// `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]`.
    Trim { key: Bytes, trim: StreamTrim },
    /// `XREAD [COUNT n] [BLOCK ms] STREAMS key... id...`: the IDs are checked key by key
    /// with the key's type, as Redis does.
    Read {
        count: Option<usize>,
        block_ms: Option<u64>,
        keys: Vec<Bytes>,
        ids: Vec<Bytes>,
    },
    /// `XGROUP` subcommands; IDs are checked after the key and the group, as Redis does.
    Group(GroupCommand),
    /// `XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id...`.
    ReadGroup {
        group: Bytes,
        consumer: Bytes,
        count: Option<usize>,
        block_ms: Option<u64>,
        noack: bool,
        keys: Vec<Bytes>,
        ids: Vec<Bytes>,
        /// Run again for a client blocked on it: a key that is no longer a stream, or
        /// a group that is gone, ends the wait with Redis's errors for that.
        blocked: bool,
    },
    /// `XACK key group id...` (IDs checked once the group is found).
    Ack {
        key: Bytes,
        group: Bytes,
        ids: Vec<Bytes>,
    },
    /// `XPENDING key group [[IDLE min-idle] start end count [consumer]]`.
    Pending {
        key: Bytes,
        group: Bytes,
        range: Option<PendingRange>,
    },
    /// `XCLAIM key group consumer min-idle id... [options]` (checked after the group).
    Claim {
        key: Bytes,
        group: Bytes,
        consumer: Bytes,
        args: Vec<Bytes>,
    },
    /// `XAUTOCLAIM key group consumer min-idle start [COUNT n] [JUSTID]` (checked after
    /// the group).
    AutoClaim {
        key: Bytes,
        group: Bytes,
        consumer: Bytes,
        args: Vec<Bytes>,
    },
    /// `XINFO` subcommands.
    Info(InfoCommand),
    /// `XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]`.
    SetId {
        key: Bytes,
        last: StreamId,
        entries_added: Option<u64>,
        max_deleted: Option<StreamId>,
    },
}

/// An XGROUP subcommand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupCommand {
    Create {
        key: Bytes,
        group: Bytes,
        id: Bytes,
        mkstream: bool,
        entries_read: Option<u64>,
    },
    SetId {
        key: Bytes,
        group: Bytes,
        id: Bytes,
        entries_read: Option<u64>,
    },
    Destroy {
        key: Bytes,
        group: Bytes,
    },
    CreateConsumer {
        key: Bytes,
        group: Bytes,
        consumer: Bytes,
    },
    DelConsumer {
        key: Bytes,
        group: Bytes,
        consumer: Bytes,
    },
    Help,
}

/// An XINFO subcommand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoCommand {
    /// `XINFO STREAM key [FULL [COUNT n]]`: `full` is the entry count (0: all).
    Stream {
        key: Bytes,
        full: Option<usize>,
    },
    Groups {
        key: Bytes,
    },
    Consumers {
        key: Bytes,
        group: Bytes,
    },
    Help,
}

fn parse_xinfo_stream(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let rest = args.rest();
    let sub = String::from_utf8_lossy(args.subcommand_as_sent()).into_owned();
    let syntax = || CommandError::Other {
        code: ErrorCode::Err,
        message: format!(
            "unknown subcommand or wrong number of arguments for '{sub}'. Try XINFO HELP."
        )
        .into(),
    };
    let full = match &rest[..] {
        [] => None,
        [full] if is(full, "full") => Some(10),
        [full, count, n] if is(full, "full") && is(count, "count") => {
            let n = parse_i64(n).ok_or(CommandError::NotInteger)?;
            Some(usize::try_from(n).unwrap_or(10))
        }
        _ => return Err(syntax()),
    };
    wrap(StreamCommand::Info(InfoCommand::Stream { key, full }))
}

/// XPENDING's extended form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRange {
    pub min_idle: u64,
    pub start: StreamId,
    pub end: StreamId,
    pub count: usize,
    pub consumer: Option<Bytes>,
}

fn message(text: &'static str) -> CommandError {
    CommandError::Other {
        code: ErrorCode::Err,
        message: text.into(),
    }
}

fn invalid_id() -> CommandError {
    message("Invalid stream ID specified as stream command argument")
}

/// A part of an ID as Redis's `string2ull` reads it: a negative integer in Redis's own
/// syntax (`-1`) is refused; anything else goes to C's `strtoull`, which takes leading
/// blanks and a sign, and wraps a negative number around (`" -1"`, `-01`: 2^64 - 1).
fn parse_u64(text: &[u8]) -> Option<u64> {
    let is_blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let blanks = text.iter().take_while(|b| is_blank(b)).count();
    let (negative, digits) = match &text[blanks..] {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let redis_integer = blanks == 0 && digits[0] != b'0' && value <= 1 << 63;
    match negative {
        true if redis_integer => None,
        true => Some(value.wrapping_neg()),
        false => Some(value),
    }
}

/// The longest ID Redis reads (its buffer holds 127 bytes).
const MAX_ID_BYTES: usize = 127;

/// `ms-seq` or `ms` (the sequence `missing_seq`); `-` and `+` unless `strict`. With
/// `seq_star`, `ms-*` gives `Err(Some(ms))`-free form: see [`parse_add_id`].
pub(crate) fn parse_id(
    text: &[u8],
    missing_seq: u64,
    strict: bool,
) -> Result<StreamId, CommandError> {
    if !strict && text == b"-" {
        return Ok(StreamId::MIN);
    }
    if !strict && text == b"+" {
        return Ok(StreamId::MAX);
    }
    if text.len() > MAX_ID_BYTES {
        return Err(invalid_id());
    }
    let (ms, seq) = match text.iter().position(|&b| b == b'-') {
        Some(dash) => (&text[..dash], Some(&text[dash + 1..])),
        None => (text, None),
    };
    let ms = parse_u64(ms).ok_or_else(invalid_id)?;
    let seq = match seq {
        Some(seq) => parse_u64(seq).ok_or_else(invalid_id)?,
        None => missing_seq,
    };
    Ok(StreamId { ms, seq })
}

/// XADD's ID: `*`, `ms-*` or an explicit one.
fn parse_add_id(text: &[u8]) -> Result<StreamAddId, CommandError> {
    if text == b"*" {
        return Ok(StreamAddId::Auto);
    }
    // As Redis, the ID is cut at its first `-`: `ms-*` only when `*` follows that one.
    let first_dash = text.iter().position(|&b| b == b'-');
    if let Some(dash) = first_dash
        && &text[dash + 1..] == b"*"
    {
        return parse_u64(&text[..dash])
            .filter(|_| text.len() <= MAX_ID_BYTES)
            .map(StreamAddId::Seq)
            .ok_or_else(invalid_id);
    }
    parse_id(text, 0, true).map(StreamAddId::Explicit)
}

/// An interval bound of XRANGE: `(` makes it exclusive.
pub(crate) fn parse_bound(
    text: &[u8],
    missing_seq: u64,
    start: bool,
) -> Result<StreamId, CommandError> {
    let Some(rest) = text.strip_prefix(b"(").filter(|_| text.len() > 1) else {
        return parse_id(text, missing_seq, false);
    };
    let id = parse_id(rest, missing_seq, true)?;
    if start {
        id.next()
            .ok_or_else(|| message("invalid start ID for the interval"))
    } else {
        id.prev()
            .ok_or_else(|| message("invalid end ID for the interval"))
    }
}

/// The trimming options of XADD (up to the ID, whose position it returns) and XTRIM.
fn parse_trim(
    args: &mut Args<'_>,
    xadd: bool,
) -> Result<(Option<StreamTrim>, bool, Option<StreamAddId>), CommandError> {
    let mut to = None;
    let mut approx = false;
    let mut limit = None;
    let mut nomkstream = false;
    let mut id = None;
    while let Some(opt) = args.peek() {
        let more = args.remaining() > 1;
        if xadd && opt == b"*" {
            args.next_slice()?;
            id = Some(StreamAddId::Auto);
            break;
        }
        if (is(opt, "maxlen") || is(opt, "minid")) && more {
            let maxlen = is(opt, "maxlen");
            args.next_slice()?;
            if to.is_some() {
                return Err(message(
                    "syntax error, MAXLEN and MINID options at the same time are not compatible",
                ));
            }
            approx = false;
            if args.remaining() >= 2 {
                match args.peek() {
                    Some(b"~") => {
                        approx = true;
                        args.next_slice()?;
                    }
                    Some(b"=") => {
                        args.next_slice()?;
                    }
                    _ => {}
                }
            }
            let threshold = args.next_slice()?;
            to = Some(if maxlen {
                let n = parse_i64(threshold).ok_or(CommandError::NotInteger)?;
                let n =
                    u64::try_from(n).map_err(|_| message("The MAXLEN argument must be >= 0."))?;
                StreamTrimTo::MaxLen(n)
            } else {
                StreamTrimTo::MinId(parse_id(threshold, 0, true)?)
            });
        } else if is(opt, "limit") && more {
            args.next_slice()?;
            let n = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
            limit =
                Some(u64::try_from(n).map_err(|_| message("The LIMIT argument must be >= 0."))?);
        } else if xadd && is(opt, "nomkstream") {
            args.next_slice()?;
            nomkstream = true;
        } else if xadd {
            id = Some(parse_add_id(args.next_slice()?)?);
            break;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    if limit.is_some_and(|n| n > 0) && to.is_none() {
        return Err(message(
            "syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && to.is_none() {
        return Err(message(
            "syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    if limit.is_some() && !approx {
        return Err(message(
            "syntax error, LIMIT cannot be used without the special ~ option",
        ));
    }
    // Approximate trimming stops after 100 nodes' worth by default, as in Redis.
    let limit = limit.unwrap_or(if approx { 10_000 } else { 0 });
    let trim = to.map(|to| StreamTrim { to, approx, limit });
    Ok((trim, nomkstream, id))
}

fn parse_xadd(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let (trim, nomkstream, id) = parse_trim(args, true)?;
    let fields = args.rest();
    let Some(id) = id else {
        return Err(args.arity_error());
    };
    if fields.len() < 2 || !fields.len().is_multiple_of(2) {
        return Err(args.arity_error());
    }
    // Before the key is looked at, as in Redis.
    if id == StreamAddId::Explicit(StreamId::MIN) {
        return Err(message("The ID specified in XADD must be greater than 0-0"));
    }
    wrap(StreamCommand::Add {
        key,
        nomkstream,
        id,
        trim,
        fields,
    })
}

fn parse_xtrim(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let (trim, _, _) = parse_trim(args, false)?;
    let trim = trim.expect("XTRIM without a strategy is refused above");
    wrap(StreamCommand::Trim { key, trim })
}

fn parse_range(args: &mut Args<'_>, rev: bool) -> Result<Command, CommandError> {
    let key = args.next()?;
    let (first, second) = (args.next_slice()?, args.next_slice()?);
    let (start, end) = if rev {
        (second, first)
    } else {
        (first, second)
    };
    let start = parse_bound(start, 0, true)?;
    let end = parse_bound(end, u64::MAX, false)?;
    let mut count = None;
    while let Some(opt) = args.peek() {
        if is(opt, "count") && args.remaining() > 1 {
            args.next_slice()?;
            let n = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
            count = Some(usize::try_from(n.max(0)).unwrap_or(usize::MAX));
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(StreamCommand::Range {
        key,
        start,
        end,
        count,
        rev,
    })
}

fn parse_xdel(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    wrap(StreamCommand::Del {
        key,
        ids: args.rest(),
    })
}

/// `ENTRIESREAD n`: a count, or -1 for unknown.
fn entries_read(args: &mut Args<'_>) -> Result<Option<u64>, CommandError> {
    let n = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
    match n {
        -1 => Ok(None),
        n => u64::try_from(n)
            .map(Some)
            .map_err(|_| message("value for ENTRIESREAD must be positive or -1")),
    }
}

/// XGROUP's syntax error: the subcommand as sent.
fn group_syntax(args: &Args<'_>) -> CommandError {
    CommandError::Other {
        code: ErrorCode::Err,
        message: format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try XGROUP HELP.",
            String::from_utf8_lossy(args.subcommand_as_sent())
        )
        .into(),
    }
}

fn parse_xgroup_create(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let (key, group, id) = (args.next()?, args.next()?, args.next()?);
    let mut mkstream = false;
    let mut read = None;
    while let Ok(option) = args.next_slice() {
        if is(option, "mkstream") {
            mkstream = true;
        } else if is(option, "entriesread") && args.remaining() > 0 {
            read = entries_read(args)?;
        } else {
            return Err(group_syntax(args));
        }
    }
    wrap(StreamCommand::Group(GroupCommand::Create {
        key,
        group,
        id,
        mkstream,
        entries_read: read,
    }))
}

fn parse_xgroup_setid(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let (key, group, id) = (args.next()?, args.next()?, args.next()?);
    let mut read = None;
    while let Ok(option) = args.next_slice() {
        if is(option, "entriesread") && args.remaining() > 0 {
            read = entries_read(args)?;
        } else {
            return Err(group_syntax(args));
        }
    }
    wrap(StreamCommand::Group(GroupCommand::SetId {
        key,
        group,
        id,
        entries_read: read,
    }))
}

/// XREAD and XREADGROUP (`group_read`): their options in Redis's order, then the
/// streams and their IDs.
fn parse_read(args: &mut Args<'_>, group_read: bool) -> Result<Command, CommandError> {
    let mut count = None;
    let mut block_ms = None;
    let mut noack = false;
    let mut group = None;
    let only_xreadgroup = |option: &str| {
        message(match option {
            "GROUP" => {
                "The GROUP option is only supported by XREADGROUP. You called XREAD instead."
            }
            _ => "The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
        })
    };
    while let Ok(option) = args.next_slice() {
        let more = args.remaining() > 0;
        if is(option, "block") && more {
            let ms = parse_i64(args.next_slice()?)
                .ok_or_else(|| message("timeout is not an integer or out of range"))?;
            block_ms = Some(u64::try_from(ms).map_err(|_| message("timeout is negative"))?);
        } else if is(option, "count") && more {
            let n = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
            // COUNT 0 (or below) is no limit.
            count = usize::try_from(n).ok().filter(|&n| n > 0);
        } else if is(option, "streams") && more {
            let mut keys = args.rest();
            if !keys.len().is_multiple_of(2) {
                // Redis 7.0 words it as for XREAD in XREADGROUP too.
                return Err(message(
                    "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                ));
            }
            let ids = keys.split_off(keys.len() / 2);
            if !group_read {
                return wrap(StreamCommand::Read {
                    count,
                    block_ms,
                    keys,
                    ids,
                });
            }
            let Some((group, consumer)) = group else {
                return Err(message("Missing GROUP option for XREADGROUP"));
            };
            return wrap(StreamCommand::ReadGroup {
                group,
                consumer,
                count,
                block_ms,
                noack,
                keys,
                ids,
                blocked: false,
            });
        } else if is(option, "group") && args.remaining() >= 2 {
            if !group_read {
                return Err(only_xreadgroup("GROUP"));
            }
            group = Some((args.next()?, args.next()?));
        } else if is(option, "noack") {
            if !group_read {
                return Err(only_xreadgroup("NOACK"));
            }
            noack = true;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    Err(CommandError::Syntax)
}

fn parse_xpending(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let (key, group) = (args.next()?, args.next()?);
    let rest = args.rest();
    if !rest.is_empty() && !(3..=6).contains(&rest.len()) {
        return Err(CommandError::Syntax);
    }
    let mut range = None;
    if !rest.is_empty() {
        let mut at = 0;
        let mut min_idle = 0;
        if is(&rest[0], "idle") {
            let idle = parse_i64(&rest[1]).ok_or(CommandError::NotInteger)?;
            if rest.len() < 5 {
                return Err(CommandError::Syntax);
            }
            min_idle = u64::try_from(idle).unwrap_or(0);
            at = 2;
        }
        let count = parse_i64(&rest[at + 2]).ok_or(CommandError::NotInteger)?;
        let start = parse_bound(&rest[at], 0, true)?;
        let end = parse_bound(&rest[at + 1], u64::MAX, false)?;
        range = Some(PendingRange {
            min_idle,
            start,
            end,
            count: usize::try_from(count.max(0)).unwrap_or(usize::MAX),
            consumer: rest.get(at + 3).cloned(),
        });
    }
    wrap(StreamCommand::Pending { key, group, range })
}

fn parse_xsetid(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let last = parse_id(args.next_slice()?, 0, true)?;
    let mut entries_added = None;
    let mut max_deleted = None;
    while let Ok(option) = args.next_slice() {
        let more = args.remaining() > 0;
        if is(option, "entriesadded") && more {
            let n = parse_i64(args.next_slice()?).ok_or(CommandError::NotInteger)?;
            entries_added =
                Some(u64::try_from(n).map_err(|_| message("entries_added must be positive"))?);
        } else if is(option, "maxdeletedid") && more {
            let id = parse_id(args.next_slice()?, 0, true)?;
            if last < id {
                return Err(message(
                    "The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
            max_deleted = Some(id);
        } else {
            return Err(CommandError::Syntax);
        }
    }
    wrap(StreamCommand::SetId {
        key,
        last,
        entries_added,
        max_deleted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{error, parse};

    #[test]
    fn stream_ids_and_options() {
        assert_eq!(parse_id(b"5", 0, true), Ok(StreamId { ms: 5, seq: 0 }));
        assert_eq!(parse_id(b"5-7", 0, true), Ok(StreamId { ms: 5, seq: 7 }));
        assert!(parse_id(b"-", 0, true).is_err());
        assert_eq!(parse_id(b"+", 0, false), Ok(StreamId::MAX));
        assert_eq!(parse_add_id(b"5-*"), Ok(StreamAddId::Seq(5)));
        assert!(matches!(
            parse("XADD s MAXLEN ~ 10 * f v").unwrap(),
            Command::Stream(StreamCommand::Add {
                trim: Some(StreamTrim {
                    approx: true,
                    limit: 10_000,
                    ..
                }),
                ..
            })
        ));
        assert_eq!(
            error("XADD s * f"),
            "ERR wrong number of arguments for 'xadd' command"
        );
        assert_eq!(
            error("XTRIM s MAXLEN = 1 LIMIT 2"),
            "ERR syntax error, LIMIT cannot be used without the special ~ option"
        );
        assert_eq!(
            error("XRANGE s (- +"),
            "ERR Invalid stream ID specified as stream command argument"
        );
    }
}
