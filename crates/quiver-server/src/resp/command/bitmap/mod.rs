//! Bitmap commands on string values: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
//! BITFIELD_RO.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_core::cache::{BitField, FieldAction, Overflow};
use quiver_resp::error::CommandError;
use quiver_resp::num::parse_i64;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: BitmapCommand) -> Result<Command, CommandError> {
    Ok(Command::Bitmap(command))
}

/// A bitmap command.
#[derive(Clone, Debug, PartialEq)]
pub enum BitmapCommand {
    /// `SETBIT key offset 0|1`.
    SetBit { key: Bytes, offset: u64, bit: bool },
    /// `GETBIT key offset`.
    GetBit { key: Bytes, offset: u64 },
    /// `BITCOUNT key [start end [BYTE|BIT]]`. A malformed range is refused only once
    /// the key is found to hold a string, as Redis does.
    BitCount {
        key: Bytes,
        range: Result<BitSpan, CommandError>,
    },
    /// `BITPOS key 0|1 [start [end [BYTE|BIT]]]`; the range as for `BitCount`.
    BitPos {
        key: Bytes,
        bit: bool,
        range: Result<BitPosSpan, CommandError>,
    },
    /// `BITFIELD key [GET|SET|INCRBY|OVERFLOW ...]...` and `BITFIELD_RO key [GET ...]...`.
    BitField { key: Bytes, fields: Vec<BitField> },
    /// `BITOP AND|OR|XOR|NOT destkey key...`.
    BitOp {
        op: BitOperation,
        dest: Bytes,
        sources: Vec<Bytes>,
    },
}

/// Where BITPOS looks: the whole string, or from `start` (to `end` when given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitPosSpan {
    All,
    From {
        start: i64,
        end: Option<i64>,
        bits: bool,
    },
}

/// A BITOP operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOperation {
    And,
    Or,
    Xor,
    Not,
}

/// What BITCOUNT counts: the whole string, or from `start` to `end` (inclusive,
/// negative from the end) in bytes or, with `bits`, in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitSpan {
    All,
    Span { start: i64, end: i64, bits: bool },
}

/// Largest bit offset: the last bit of a 512 MiB string.
const MAX_BIT_OFFSET: i64 = (1 << 32) - 1;

/// A bit offset argument (`ERR bit offset is not an integer or out of range`).
fn offset(args: &mut Args<'_>) -> Result<u64, CommandError> {
    parse_i64(args.next_slice()?)
        .filter(|offset| (0..=MAX_BIT_OFFSET).contains(offset))
        .and_then(|offset| u64::try_from(offset).ok())
        .ok_or(CommandError::Message(
            "bit offset is not an integer or out of range",
        ))
}

fn parse_setbit(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let offset = offset(args)?;
    let bit = match parse_i64(args.next_slice()?) {
        Some(0) => false,
        Some(1) => true,
        _ => {
            return Err(CommandError::Message(
                "bit is not an integer or out of range",
            ));
        }
    };
    wrap(BitmapCommand::SetBit { key, offset, bit })
}

fn parse_getbit(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let offset = offset(args)?;
    wrap(BitmapCommand::GetBit { key, offset })
}

fn parse_bitcount(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let range = bit_span(args);
    wrap(BitmapCommand::BitCount { key, range })
}

/// `[start end [BYTE|BIT]]`.
fn bit_span(args: &mut Args<'_>) -> Result<BitSpan, CommandError> {
    match args.remaining() {
        0 => return Ok(BitSpan::All),
        2 | 3 => {}
        _ => return Err(CommandError::Syntax),
    }
    let start = args.i64()?;
    let end = args.i64()?;
    // Redis answers an empty range from the end before it looks at the unit.
    if start < 0 && end < 0 && start > end {
        return Ok(BitSpan::Span {
            start,
            end,
            bits: false,
        });
    }
    let bits = match args.peek() {
        None => false,
        Some(unit) if is(unit, "bit") => true,
        Some(unit) if is(unit, "byte") => false,
        Some(_) => return Err(CommandError::Syntax),
    };
    Ok(BitSpan::Span { start, end, bits })
}

fn parse_bitpos(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let bit = match parse_i64(args.next_slice()?) {
        Some(0) => false,
        Some(1) => true,
        Some(_) => return Err(CommandError::Message("The bit argument must be 1 or 0.")),
        None => return Err(CommandError::NotInteger),
    };
    let range = bit_pos_span(args);
    wrap(BitmapCommand::BitPos { key, bit, range })
}

/// `[start [end [BYTE|BIT]]]`, read in Redis's order: start, then the unit, then end.
fn bit_pos_span(args: &mut Args<'_>) -> Result<BitPosSpan, CommandError> {
    let given = args.remaining();
    if given == 0 {
        return Ok(BitPosSpan::All);
    }
    if given > 3 {
        return Err(CommandError::Syntax);
    }
    let start = args.i64()?;
    let end_arg = if given >= 2 {
        Some(args.next_slice()?)
    } else {
        None
    };
    let bits = match args.peek() {
        None => false,
        Some(unit) if is(unit, "bit") => true,
        Some(unit) if is(unit, "byte") => false,
        Some(_) => return Err(CommandError::Syntax),
    };
    let end = match end_arg {
        None => None,
        Some(end) => Some(parse_i64(end).ok_or(CommandError::NotInteger)?),
    };
    Ok(BitPosSpan::From { start, end, bits })
}

fn parse_bitop(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let name = args.next_slice()?;
    let op = match () {
        _ if is(name, "and") => BitOperation::And,
        _ if is(name, "or") => BitOperation::Or,
        _ if is(name, "xor") => BitOperation::Xor,
        _ if is(name, "not") => BitOperation::Not,
        _ => return Err(CommandError::Syntax),
    };
    let dest = args.next()?;
    let sources = args.rest();
    if op == BitOperation::Not && sources.len() != 1 {
        return Err(CommandError::Message(
            "BITOP NOT must be called with a single source key.",
        ));
    }
    wrap(BitmapCommand::BitOp { op, dest, sources })
}

fn parse_bitfield(args: &mut Args<'_>) -> Result<Command, CommandError> {
    bitfield(args, false)
}

fn parse_bitfield_ro(args: &mut Args<'_>) -> Result<Command, CommandError> {
    bitfield(args, true)
}

/// BITFIELD's operations, with Redis's errors, all read before the key is looked up.
fn bitfield(args: &mut Args<'_>, read_only: bool) -> Result<Command, CommandError> {
    let key = args.next()?;
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    while let Some(word) = args.peek() {
        let remaining = args.remaining() - 1;
        let kind = match () {
            _ if is(word, "get") && remaining >= 2 => 0,
            _ if is(word, "set") && remaining >= 3 => 1,
            _ if is(word, "incrby") && remaining >= 3 => 2,
            _ if is(word, "overflow") && remaining >= 1 => {
                args.next_slice()?;
                let how = args.next_slice()?;
                overflow = match () {
                    _ if is(how, "wrap") => Overflow::Wrap,
                    _ if is(how, "sat") => Overflow::Sat,
                    _ if is(how, "fail") => Overflow::Fail,
                    _ => return Err(CommandError::Message("Invalid OVERFLOW type specified")),
                };
                continue;
            }
            _ => return Err(CommandError::Syntax),
        };
        args.next_slice()?;
        let (signed, bits) = field_type(args.next_slice()?)?;
        let offset = field_offset(args.next_slice()?, bits)?;
        let action = match kind {
            0 => FieldAction::Get,
            1 => FieldAction::Set(args.i64()?),
            _ => FieldAction::IncrBy(args.i64()?),
        };
        fields.push(BitField {
            signed,
            bits,
            offset,
            action,
            overflow,
        });
    }
    if read_only && fields.iter().any(|f| f.action != FieldAction::Get) {
        return Err(CommandError::Message(
            "BITFIELD_RO only supports the GET subcommand",
        ));
    }
    wrap(BitmapCommand::BitField { key, fields })
}

/// `i1`..`i64` or `u1`..`u63`.
fn field_type(word: &[u8]) -> Result<(bool, u32), CommandError> {
    let invalid = CommandError::Message(
        "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.",
    );
    let (signed, digits) = match word.split_first() {
        // Lower case only, as Redis reads it.
        Some((b'i', digits)) => (true, digits),
        Some((b'u', digits)) => (false, digits),
        _ => return Err(invalid),
    };
    let limit = if signed { 64 } else { 63 };
    match parse_i64(digits) {
        Some(bits) if (1..=limit).contains(&bits) => Ok((signed, bits as u32)),
        _ => Err(invalid),
    }
}

/// A field offset in bits, or `#N` for the N-th field of this width.
fn field_offset(word: &[u8], bits: u32) -> Result<u64, CommandError> {
    let invalid = CommandError::Message("bit offset is not an integer or out of range");
    let (by_index, digits) = match word.split_first() {
        Some((b'#', digits)) => (true, digits),
        _ => (false, word),
    };
    let offset = parse_i64(digits).ok_or(invalid.clone())?;
    let offset = if by_index {
        offset.checked_mul(i64::from(bits)).ok_or(invalid.clone())?
    } else {
        offset
    };
    match u64::try_from(offset) {
        Ok(offset) if offset >> 3 < 512 * 1024 * 1024 => Ok(offset),
        _ => Err(invalid),
    }
}

/// BITFIELD's key flags in `request`: read-only when it only has GET (and OVERFLOW).
fn bitfield_key_flags(request: &quiver_resp::Request) -> &'static [&'static str] {
    let mut pos = 2;
    while let Some(word) = request.arg(pos) {
        let remaining = request.len() - pos - 1;
        if is(word, "get") && remaining >= 2 {
            pos += 3;
        } else if is(word, "overflow") && remaining >= 1 {
            pos += 2;
        } else {
            return &["RW", "access", "update"];
        }
    }
    &["RO", "access"]
}
