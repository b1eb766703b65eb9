//! Running HyperLogLog commands.

use bytes::BytesMut;
use quiver_core::cache::{HllDebug, HllDebugReply};
use quiver_resp::encode::{
    OK, write_array_len, write_bulk, write_error, write_integer, write_simple,
};

use crate::resp::command::exec::{DataCtx, refs, reply};
use crate::resp::command::hyperloglog::HyperLogLogCommand;

/// Runs a HyperLogLog command and writes its reply.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: HyperLogLogCommand, out: &mut BytesMut) {
    let now_ms = ctx.now_ms;
    match command {
        HyperLogLogCommand::Add { key, elements } => {
            let result = ctx.db.pfadd(&key, &refs(&elements), now_ms);
            reply(out, result, |out, updated| {
                write_integer(out, i64::from(updated));
            });
        }
        HyperLogLogCommand::Count { keys } => {
            let result = match keys.as_slice() {
                [key] => ctx.db.pfcount(key, now_ms),
                _ => ctx.db.pfcount_union(&refs(&keys), now_ms),
            };
            // As Redis: the count goes out as a signed integer, bit for bit.
            reply(out, result, |out, n| write_integer(out, n as i64));
        }
        HyperLogLogCommand::Merge { dest, sources } => {
            let result = ctx.db.pfmerge(&dest, &refs(&sources), now_ms);
            reply(out, result, |out, ()| out.extend_from_slice(OK));
        }
        HyperLogLogCommand::Debug { what, key } => {
            let (what, unknown) = match what {
                Ok(what) => (what, None),
                Err(name) => (HllDebug::Encoding, Some(name)),
            };
            let result = ctx.db.pfdebug(&key, what, now_ms);
            reply(out, result, |out, answer| {
                if let Some(name) = unknown {
                    let message = format!(
                        "ERR Unknown PFDEBUG subcommand '{}'",
                        String::from_utf8_lossy(&name)
                    );
                    return write_error(out, message.as_bytes());
                }
                match answer {
                    HllDebugReply::Registers(registers) => {
                        write_array_len(out, registers.len());
                        for register in registers {
                            write_integer(out, i64::from(register));
                        }
                    }
                    HllDebugReply::Decoded(text) => write_bulk(out, text.as_bytes()),
                    HllDebugReply::Encoding(name) => write_simple(out, name.as_bytes()),
                    HllDebugReply::Converted(converted) => {
                        write_integer(out, i64::from(converted));
                    }
                }
            });
        }
        HyperLogLogCommand::SelfTest => match quiver_core::cache::hll_self_test() {
            Ok(()) => out.extend_from_slice(OK),
            Err(message) => write_error(out, message.as_bytes()),
        },
    }
}
