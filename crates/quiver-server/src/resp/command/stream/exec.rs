//! Running stream commands.

use bytes::BytesMut;
use quiver_core::cache::{OpError, StreamFields, StreamId, ValueType};
use quiver_resp::encode as write;

use crate::resp::command::exec::{DataCtx, error, reply};
use crate::resp::command::stream::{StreamCommand, parse_id};

/// Runs a stream command.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: StreamCommand, out: &mut BytesMut) {
    let now = ctx.now_ms;
    let db = &mut *ctx.db;
    match command {
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
