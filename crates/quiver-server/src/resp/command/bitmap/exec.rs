//! Running bitmap commands.

use bytes::BytesMut;
use quiver_core::cache::{BitOp, BitPosRange, BitRange, OpError, ValueType};
use quiver_resp::CommandError;
use quiver_resp::encode::{write_array_len, write_integer, write_null};

use crate::resp::command::bitmap::{BitOperation, BitPosSpan, BitSpan, BitmapCommand};
use crate::resp::command::exec::{DataCtx, count, error, refs, reply};

/// Runs a bitmap command and writes its reply.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: BitmapCommand, out: &mut BytesMut) {
    let (now_ms, protocol) = (ctx.now_ms, ctx.protocol);
    match command {
        BitmapCommand::SetBit { key, offset, bit } => {
            let result = ctx.db.setbit(&key, offset, bit, now_ms);
            reply(out, result, |out, old| write_integer(out, i64::from(old)));
        }
        BitmapCommand::GetBit { key, offset } => {
            let result = ctx.db.getbit(&key, offset, now_ms);
            reply(out, result, |out, bit| write_integer(out, i64::from(bit)));
        }
        BitmapCommand::BitCount { key, range } => {
            let range = match range {
                Ok(BitSpan::All) => BitRange::All,
                Ok(BitSpan::Span { start, end, bits }) => BitRange::Span { start, end, bits },
                Err(range_error) => return refuse_range(ctx, &key, 0, &range_error, out),
            };
            let result = ctx.db.bitcount(&key, range, now_ms);
            reply(out, result, |out, n| {
                count(out, usize::try_from(n).unwrap_or(usize::MAX));
            });
        }
        BitmapCommand::BitPos { key, bit, range } => {
            let range = match range {
                Ok(BitPosSpan::All) => BitPosRange::All,
                Ok(BitPosSpan::From { start, end, bits }) => BitPosRange::From { start, end, bits },
                // A missing key reads as all zeros.
                Err(range_error) => {
                    let missing = if bit { -1 } else { 0 };
                    return refuse_range(ctx, &key, missing, &range_error, out);
                }
            };
            let result = ctx.db.bitpos(&key, bit, range, now_ms);
            reply(out, result, write_integer);
        }
        BitmapCommand::BitField { key, fields } => {
            let result = ctx.db.bitfield(&key, &fields, now_ms);
            reply(out, result, |out, values| {
                write_array_len(out, values.len());
                for value in values {
                    match value {
                        Some(value) => write_integer(out, value),
                        None => write_null(out, protocol),
                    }
                }
            });
        }
        BitmapCommand::BitOp { op, dest, sources } => {
            let op = match op {
                BitOperation::And => BitOp::And,
                BitOperation::Or => BitOp::Or,
                BitOperation::Xor => BitOp::Xor,
                BitOperation::Not => BitOp::Not,
            };
            let result = ctx.db.bitop(op, &dest, &refs(&sources), now_ms);
            reply(out, result, count);
        }
    }
}

/// A malformed range, answered in Redis's order: `missing` for a missing key, the type
/// error for another type, and only then the range's error.
fn refuse_range(
    ctx: &mut DataCtx<'_, '_>,
    key: &[u8],
    missing: i64,
    range_error: &CommandError,
    out: &mut BytesMut,
) {
    match ctx.db.type_of(key, ctx.now_ms) {
        None => write_integer(out, missing),
        Some(ValueType::String) => error(out, range_error),
        Some(_) => error(out, &OpError::WrongType),
    }
}
