//! Running stream commands.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{OpError, StreamFields, StreamId, ValueType};
use quiver_resp::encode as write;
use quiver_resp::{CommandError, ErrorCode, Protocol};

use crate::resp::command::Command;
use crate::resp::command::exec::{DataCtx, Outcome, error, reply};
use crate::resp::command::stream::{StreamCommand, parse_id};

/// Runs a stream command; XREAD BLOCK may ask the connection to wait.
pub(crate) fn execute(
    ctx: &mut DataCtx<'_, '_>,
    command: StreamCommand,
    out: &mut BytesMut,
) -> Outcome {
    let now = ctx.now_ms;
    let db = &mut *ctx.db;
    match command {
        StreamCommand::Read {
            count,
            block_ms,
            keys,
            ids,
        } => return read(ctx, count, block_ms, keys, ids, out),
        StreamCommand::SetId {
            key,
            last,
            entries_added,
            max_deleted,
        } => reply(
            out,
            db.xsetid(&key, last, entries_added, max_deleted, now),
            |out, ()| write::write_simple(out, b"OK"),
        ),
        StreamCommand::Add {
            key,
            nomkstream,
            id,
            trim,
            fields,
        } => match db.xadd(&key, nomkstream, id, trim, fields, now) {
            Ok(Some(id)) => write_id(out, id),
            Ok(None) => write::write_null(out, ctx.protocol),
            Err(err) => error(out, &err),
        },
        StreamCommand::Len { key } => reply(out, db.xlen(&key, now), |out, n| {
            write::write_integer(out, i64::try_from(n).unwrap_or(i64::MAX));
        }),
        StreamCommand::Range {
            key,
            start,
            end,
            count,
            rev,
        } => match db.xrange(&key, start, end, count, rev, now) {
            Ok(None) => write::write_array_len(out, 0),
            // COUNT 0 (or below) on a stream answers null, as Redis 7.0 does.
            Ok(Some(_)) if count == Some(0) => write::write_null_array(out, ctx.protocol),
            Ok(Some(entries)) => write_entries(out, entries),
            Err(err) => error(out, &err),
        },
        StreamCommand::Del { key, ids } => match db.key_type(&key, now) {
            None => write::write_integer(out, 0),
            Some(ValueType::Stream) => {
                let ids: Result<Vec<StreamId>, _> =
                    ids.iter().map(|id| parse_id(id, 0, true)).collect();
                match ids {
                    Ok(ids) => reply(out, db.xdel(&key, &ids, now), |out, n| {
                        write::write_integer(out, i64::try_from(n).unwrap_or(i64::MAX));
                    }),
                    Err(err) => error(out, &err),
                }
            }
            Some(_) => error(out, &OpError::WrongType),
        },
        StreamCommand::Trim { key, trim } => reply(out, db.xtrim(&key, trim, now), |out, n| {
            write::write_integer(out, i64::try_from(n).unwrap_or(i64::MAX));
        }),
    }
    Outcome::Done
}

/// XREAD: each key's type, then its ID (`$` is the stream's last ID now), in order; the
/// entries after the IDs, or a wait for them with BLOCK (outside a transaction), with
/// `$` fixed to what it was now.
fn read(
    ctx: &mut DataCtx<'_, '_>,
    count: Option<usize>,
    block_ms: Option<u64>,
    keys: Vec<Bytes>,
    ids: Vec<Bytes>,
    out: &mut BytesMut,
) -> Outcome {
    let now = ctx.now_ms;
    let mut after = Vec::with_capacity(keys.len());
    for (key, id) in keys.iter().zip(&ids) {
        let last = match ctx.db.xlast_id(key, now) {
            Ok(last) => last,
            Err(err) => {
                error(out, &err);
                return Outcome::Done;
            }
        };
        let id = match &id[..] {
            b"$" => Ok(last),
            b">" => Err(CommandError::Other {
                code: ErrorCode::Err,
                message: "The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.".into(),
            }),
            raw => parse_id(raw, 0, true),
        };
        match id {
            Ok(id) => after.push(id),
            Err(err) => {
                error(out, &err);
                return Outcome::Done;
            }
        }
    }
    let mut found = Vec::new();
    for (key, id) in keys.iter().zip(&after) {
        match ctx.db.xread(key, *id, count, now) {
            Ok(entries) if entries.is_empty() => {}
            Ok(entries) => found.push((key, entries)),
            Err(err) => {
                error(out, &err);
                return Outcome::Done;
            }
        }
    }
    if !found.is_empty() {
        // A map of key to entries in RESP3; pairs in an array in RESP2.
        let resp3 = ctx.protocol == Protocol::Resp3;
        if resp3 {
            write::write_map_len(out, ctx.protocol, found.len());
        } else {
            write::write_array_len(out, found.len());
        }
        for (key, entries) in found {
            if !resp3 {
                write::write_array_len(out, 2);
            }
            write::write_bulk(out, key);
            write_entries(out, entries);
        }
        return Outcome::Done;
    }
    match block_ms {
        Some(ms) if !ctx.in_transaction => Outcome::Block {
            timeout_ms: (ms > 0).then_some(ms),
            retry: Some(Box::new(Command::Stream(StreamCommand::Read {
                count,
                block_ms,
                ids: after.iter().map(|id| Bytes::from(id.to_string())).collect(),
                keys: keys.clone(),
            }))),
            keys,
        },
        _ => {
            write::write_null_array(out, ctx.protocol);
            Outcome::Done
        }
    }
}

fn write_id(out: &mut BytesMut, id: StreamId) {
    write::write_bulk(out, id.to_string().as_bytes());
}

/// Entries as Redis replies them: `[[id, [field, value, ...]], ...]`.
fn write_entries(out: &mut BytesMut, entries: Vec<(StreamId, StreamFields)>) {
    write::write_array_len(out, entries.len());
    for (id, fields) in entries {
        write::write_array_len(out, 2);
        write_id(out, id);
        write::write_array_len(out, fields.len());
        for field in fields.iter() {
            write::write_bulk(out, field);
        }
    }
}
