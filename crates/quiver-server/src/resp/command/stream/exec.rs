//! Running stream commands.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{
    ClaimOptions, Delivered, GroupRead, GroupStart, OpError, StreamFields, StreamId, ValueType,
};
use quiver_resp::encode as write;
use quiver_resp::num::parse_i64;
use quiver_resp::{CommandError, Protocol, Reply};

use crate::resp::command::exec::{DataCtx, Outcome, container_help, error, reply};
use crate::resp::command::stream::{
    GroupCommand, InfoCommand, PendingRange, StreamCommand, parse_bound, parse_id,
};
use crate::resp::command::{Command, is};

/// Runs a stream command; XREAD BLOCK may ask the connection to wait.
pub(crate) fn execute(
    ctx: &mut DataCtx<'_, '_>,
    command: StreamCommand,
    out: &mut BytesMut,
) -> Outcome {
    let now = ctx.now_ms;
    let db = &mut *ctx.db;
    match command {
        StreamCommand::Group(command) => group(ctx, command, out),
        StreamCommand::ReadGroup {
            group,
            consumer,
            count,
            block_ms,
            noack,
            keys,
            ids,
            blocked,
        } => {
            let read = GroupReadArgs {
                group,
                consumer,
                count,
                noack,
                blocked,
            };
            let result = read_group(ctx, read, block_ms, keys, ids, out);
            return answered(out, result);
        }
        StreamCommand::Ack { key, group, ids } => ack(ctx, &key, &group, &ids, out),
        StreamCommand::Pending { key, group, range } => pending(ctx, &key, &group, range, out),
        StreamCommand::Claim {
            key,
            group,
            consumer,
            args,
        } => claim(ctx, &key, &group, &consumer, &args, out),
        StreamCommand::AutoClaim {
            key,
            group,
            consumer,
            args,
        } => auto_claim(ctx, &key, &group, &consumer, &args, out),
        StreamCommand::Read {
            count,
            block_ms,
            keys,
            ids,
        } => {
            let result = read(ctx, count, block_ms, keys, ids, out);
            return answered(out, result);
        }
        StreamCommand::Info(command) => info(ctx, command, out),
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
) -> Result<Outcome, String> {
    let now = ctx.now_ms;
    let mut after = Vec::with_capacity(keys.len());
    for (key, id) in keys.iter().zip(&ids) {
        let last = ctx.db.xlast_id(key, now).map_err(text_of)?;
        after.push(match &id[..] {
            b"$" => last,
            b">" => return Err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.".into()),
            raw => parse_id(raw, 0, true).map_err(text_of)?,
        });
    }
    let mut found = Vec::new();
    let servable = ctx.servable(&keys, ValueType::Stream);
    for (key, id) in keys.iter().zip(&after) {
        if !servable.contains(&key) {
            continue;
        }
        let entries = ctx.db.xread(key, *id, count, now).map_err(text_of)?;
        if !entries.is_empty() {
            found.push((key, entries));
        }
    }
    if !found.is_empty() {
        write_streams(out, ctx.protocol, found, write_entries);
        return Ok(Outcome::Done);
    }
    // Waiting, `$` is what it was now.
    let retry = Command::Stream(StreamCommand::Read {
        count,
        block_ms,
        ids: after.iter().map(|id| Bytes::from(id.to_string())).collect(),
        keys: keys.clone(),
    });
    Ok(wait_or_null(ctx, block_ms, keys, Some(retry), out))
}

/// An error's reply text.
fn text_of(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// The outcome, or the error replied.
fn answered(out: &mut BytesMut, result: Result<Outcome, String>) -> Outcome {
    result.unwrap_or_else(|text| {
        fail(out, text);
        Outcome::Done
    })
}

/// What the streams that have something for the reader hold: a map of key to entries in
/// RESP3, pairs in an array in RESP2.
fn write_streams<T>(
    out: &mut BytesMut,
    protocol: Protocol,
    found: Vec<(&Bytes, T)>,
    write: impl Fn(&mut BytesMut, T),
) {
    let resp3 = protocol == Protocol::Resp3;
    if resp3 {
        write::write_map_len(out, protocol, found.len());
    } else {
        write::write_array_len(out, found.len());
    }
    for (key, entries) in found {
        if !resp3 {
            write::write_array_len(out, 2);
        }
        write::write_bulk(out, key);
        write(out, entries);
    }
}

/// Nothing to read: with BLOCK (outside a transaction) the connection waits for the
/// keys (running `retry` then, or the command again); otherwise null.
fn wait_or_null(
    ctx: &DataCtx<'_, '_>,
    block_ms: Option<u64>,
    keys: Vec<Bytes>,
    retry: Option<Command>,
    out: &mut BytesMut,
) -> Outcome {
    match block_ms {
        Some(ms) if !ctx.in_transaction => Outcome::Block {
            keys,
            timeout_ms: (ms > 0).then_some(ms),
            retry: retry.map(Box::new),
        },
        _ => {
            write::write_null_array(out, ctx.protocol);
            Outcome::Done
        }
    }
}

/// An error reply of its own text.
fn fail(out: &mut BytesMut, text: String) {
    write::write_error(out, text.as_bytes());
}

fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Checks `key` and `group` in Redis's order for XGROUP: the key exists (`mkstream`
/// aside), holds a stream, and (when `need_group`) has the group.
fn group_checks(
    ctx: &mut DataCtx<'_, '_>,
    key: &[u8],
    group: &[u8],
    mkstream: bool,
    need_group: bool,
) -> Result<(), String> {
    let now = ctx.now_ms;
    match ctx.db.key_type(key, now) {
        None if mkstream => return Ok(()),
        None => return Err(OpError::StreamGroupNeedsKey.to_string()),
        Some(ValueType::Stream) => {}
        Some(_) => return Err(OpError::WrongType.to_string()),
    }
    if need_group && !ctx.db.xgroup_exists(key, group, now).unwrap_or(false) {
        return Err(format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            text(group),
            text(key)
        ));
    }
    Ok(())
}

/// Checks that `key` holds a stream with `group` (`NOGROUP` in the words of XPENDING,
/// XCLAIM and XAUTOCLAIM otherwise).
fn has_group(ctx: &mut DataCtx<'_, '_>, key: &[u8], group: &[u8]) -> Result<(), String> {
    match ctx.db.xgroup_exists(key, group, ctx.now_ms) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "NOGROUP No such key '{}' or consumer group '{}'",
            text(key),
            text(group)
        )),
        Err(err) => Err(err.to_string()),
    }
}

/// XGROUP's `$` or an ID (strict for CREATE, any for SETID).
fn group_start(raw: &[u8], strict: bool) -> Result<GroupStart, CommandError> {
    if raw == b"$" {
        return Ok(GroupStart::Last);
    }
    parse_id(raw, 0, strict).map(GroupStart::Id)
}

fn group(ctx: &mut DataCtx<'_, '_>, command: GroupCommand, out: &mut BytesMut) {
    let now = ctx.now_ms;
    let int = |out: &mut BytesMut, n: u64| {
        write::write_integer(out, i64::try_from(n).unwrap_or(i64::MAX))
    };
    match command {
        GroupCommand::Help => container_help("xgroup", ctx.protocol, out),
        GroupCommand::Create {
            key,
            group,
            id,
            mkstream,
            entries_read,
        } => {
            if let Err(text) = group_checks(ctx, &key, &group, mkstream, false) {
                return fail(out, text);
            }
            match group_start(&id, true) {
                Ok(start) => reply(
                    out,
                    ctx.db
                        .xgroup_create(&key, &group, start, mkstream, entries_read, now),
                    |out, ()| write::write_simple(out, b"OK"),
                ),
                Err(err) => error(out, &err),
            }
        }
        GroupCommand::SetId {
            key,
            group,
            id,
            entries_read,
        } => {
            if let Err(text) = group_checks(ctx, &key, &group, false, true) {
                return fail(out, text);
            }
            match group_start(&id, false) {
                Ok(start) => reply(
                    out,
                    ctx.db.xgroup_setid(&key, &group, start, entries_read, now),
                    |out, ()| write::write_simple(out, b"OK"),
                ),
                Err(err) => error(out, &err),
            }
        }
        GroupCommand::Destroy { key, group } => {
            if let Err(text) = group_checks(ctx, &key, &group, false, false) {
                return fail(out, text);
            }
            reply(
                out,
                ctx.db.xgroup_destroy(&key, &group, now),
                |out, gone| {
                    int(out, u64::from(gone));
                },
            );
        }
        GroupCommand::CreateConsumer {
            key,
            group,
            consumer,
        } => {
            if let Err(text) = group_checks(ctx, &key, &group, false, true) {
                return fail(out, text);
            }
            let created = ctx.db.xgroup_create_consumer(&key, &group, &consumer, now);
            reply(out, created, |out, created| int(out, u64::from(created)));
        }
        GroupCommand::DelConsumer {
            key,
            group,
            consumer,
        } => {
            if let Err(text) = group_checks(ctx, &key, &group, false, true) {
                return fail(out, text);
            }
            reply(
                out,
                ctx.db.xgroup_del_consumer(&key, &group, &consumer, now),
                int,
            );
        }
    }
}

/// What XREADGROUP reads with, besides its streams.
struct GroupReadArgs {
    group: Bytes,
    consumer: Bytes,
    count: Option<usize>,
    noack: bool,
    blocked: bool,
}

/// XREADGROUP: each key's type and group, then its ID (`>` new entries, an ID the
/// consumer's pending ones), in order; new entries of the streams that have some and
/// the pending ones of every stream read by ID, or a wait for new ones with BLOCK.
fn read_group(
    ctx: &mut DataCtx<'_, '_>,
    read: GroupReadArgs,
    block_ms: Option<u64>,
    keys: Vec<Bytes>,
    ids: Vec<Bytes>,
    out: &mut BytesMut,
) -> Result<Outcome, String> {
    let now = ctx.now_ms;
    let mut reads = Vec::with_capacity(keys.len());
    for (key, id) in keys.iter().zip(&ids) {
        // A blocked client's wait ends when its stream or group is gone, with Redis's
        // words.
        if read.blocked && ctx.db.key_type(key, now) != Some(ValueType::Stream) {
            return Err("UNBLOCKED the stream key no longer exists".into());
        }
        if !ctx
            .db
            .xgroup_exists(key, &read.group, now)
            .map_err(text_of)?
        {
            if read.blocked {
                return Err(
                    "NOGROUP the consumer group this client was blocked on no longer exists".into(),
                );
            }
            return Err(format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                text(key),
                text(&read.group)
            ));
        }
        reads.push(match &id[..] {
            b">" => GroupRead::New,
            b"$" => return Err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.".into()),
            raw => GroupRead::History(parse_id(raw, 0, true).map_err(text_of)?),
        });
    }
    let mut found = Vec::new();
    for (key, from) in keys.iter().zip(&reads) {
        let entries = ctx
            .db
            .xreadgroup(
                key,
                &read.group,
                &read.consumer,
                *from,
                read.count,
                read.noack,
                now,
            )
            .map_err(text_of)?;
        if !entries.is_empty() || *from != GroupRead::New {
            found.push((key, entries));
        }
    }
    if !found.is_empty() {
        let protocol = ctx.protocol;
        write_streams(out, protocol, found, |out, entries| {
            write_delivered(out, protocol, entries);
        });
        return Ok(Outcome::Done);
    }
    let retry = block_ms.is_some().then(|| {
        Command::Stream(StreamCommand::ReadGroup {
            group: read.group,
            consumer: read.consumer,
            count: read.count,
            block_ms,
            noack: read.noack,
            keys: keys.clone(),
            ids,
            blocked: true,
        })
    });
    Ok(wait_or_null(ctx, block_ms, keys, retry, out))
}

fn ack(ctx: &mut DataCtx<'_, '_>, key: &[u8], group: &[u8], ids: &[Bytes], out: &mut BytesMut) {
    let now = ctx.now_ms;
    match ctx.db.xgroup_exists(key, group, now) {
        Ok(true) => {}
        Ok(false) => return write::write_integer(out, 0),
        Err(err) => return error(out, &err),
    }
    let ids: Result<Vec<StreamId>, _> = ids.iter().map(|id| parse_id(id, 0, true)).collect();
    match ids {
        Ok(ids) => reply(out, ctx.db.xack(key, group, &ids, now), |out, n| {
            write::write_integer(out, i64::try_from(n).unwrap_or(i64::MAX));
        }),
        Err(err) => error(out, &err),
    }
}

fn pending(
    ctx: &mut DataCtx<'_, '_>,
    key: &[u8],
    group: &[u8],
    range: Option<PendingRange>,
    out: &mut BytesMut,
) {
    if let Err(text) = has_group(ctx, key, group) {
        return fail(out, text);
    }
    let now = ctx.now_ms;
    let Some(range) = range else {
        let summary = match ctx.db.xpending_summary(key, group, now) {
            Ok(summary) => summary,
            Err(err) => return error(out, &err),
        };
        write::write_array_len(out, 4);
        write::write_integer(out, i64::try_from(summary.count).unwrap_or(i64::MAX));
        let Some((first, last)) = summary.range else {
            write::write_null(out, ctx.protocol);
            write::write_null(out, ctx.protocol);
            write::write_null_array(out, ctx.protocol);
            return;
        };
        write_id(out, first);
        write_id(out, last);
        write::write_array_len(out, summary.consumers.len());
        for (name, count) in summary.consumers {
            write::write_array_len(out, 2);
            write::write_bulk(out, &name);
            write::write_bulk(out, count.to_string().as_bytes());
        }
        return;
    };
    let list = ctx.db.xpending(
        key,
        group,
        range.min_idle,
        range.start,
        range.end,
        range.count,
        range.consumer.as_deref(),
        now,
    );
    reply(out, list, |out, list| {
        write::write_array_len(out, list.len());
        for (id, consumer, idle, deliveries) in list {
            write::write_array_len(out, 4);
            write_id(out, id);
            write::write_bulk(out, &consumer);
            write::write_integer(out, i64::try_from(idle).unwrap_or(i64::MAX));
            write::write_integer(out, i64::try_from(deliveries).unwrap_or(i64::MAX));
        }
    });
}

/// A number argument of XCLAIM or XAUTOCLAIM, with the command's own error.
fn number(raw: &[u8], what: &'static str) -> Result<i64, String> {
    parse_i64(raw).ok_or_else(|| format!("ERR {what}"))
}

fn claim(
    ctx: &mut DataCtx<'_, '_>,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    args: &[Bytes],
    out: &mut BytesMut,
) {
    if let Err(text) = has_group(ctx, key, group) {
        return fail(out, text);
    }
    let now = ctx.now_ms;
    let parsed = (|| -> Result<(u64, Vec<StreamId>, ClaimOptions), String> {
        let min_idle = number(&args[0], "Invalid min-idle-time argument for XCLAIM")?;
        let ids: Vec<StreamId> = args[1..]
            .iter()
            .map_while(|raw| parse_id(raw, 0, true).ok())
            .collect();
        let mut options = ClaimOptions::default();
        // A delivery time before the epoch or after now is taken as now, as Redis does.
        let sane = |at: i64| {
            u64::try_from(at)
                .ok()
                .filter(|&at| at <= now)
                .unwrap_or(now)
        };
        let mut rest = args[1 + ids.len()..].iter();
        while let Some(option) = rest.next() {
            let more = rest.len() > 0;
            if is(option, "force") {
                options.force = true;
            } else if is(option, "justid") {
                options.just_id = true;
            } else if is(option, "idle") && more {
                let idle = number(
                    rest.next().expect("checked"),
                    "Invalid IDLE option argument for XCLAIM",
                )?;
                let at = i64::try_from(now).unwrap_or(i64::MAX).saturating_sub(idle);
                options.delivered_ms = Some(sane(at));
            } else if is(option, "time") && more {
                let at = number(
                    rest.next().expect("checked"),
                    "Invalid TIME option argument for XCLAIM",
                )?;
                options.delivered_ms = Some(sane(at));
            } else if is(option, "retrycount") && more {
                let count = number(
                    rest.next().expect("checked"),
                    "Invalid RETRYCOUNT option argument for XCLAIM",
                )?;
                options.retry_count = u64::try_from(count).ok();
            } else if is(option, "lastid") && more {
                let raw = rest.next().expect("checked");
                options.last_id = Some(parse_id(raw, 0, true).map_err(|e| e.to_string())?);
            } else {
                return Err(format!("ERR Unrecognized XCLAIM option '{}'", text(option)));
            }
        }
        Ok((u64::try_from(min_idle).unwrap_or(0), ids, options))
    })();
    let (min_idle, ids, options) = match parsed {
        Ok(parsed) => parsed,
        Err(text) => return fail(out, text),
    };
    let claimed = ctx
        .db
        .xclaim(key, group, consumer, min_idle, &ids, options, now);
    let protocol = ctx.protocol;
    reply(out, claimed, |out, claimed| {
        if options.just_id {
            write::write_array_len(out, claimed.len());
            for (id, _) in claimed {
                write_id(out, id);
            }
        } else {
            write_delivered(out, protocol, claimed);
        }
    });
}

fn auto_claim(
    ctx: &mut DataCtx<'_, '_>,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    args: &[Bytes],
    out: &mut BytesMut,
) {
    let now = ctx.now_ms;
    // Redis checks the arguments before the key and the group.
    let parsed = (|| -> Result<(u64, StreamId, usize, bool), String> {
        let min_idle = number(&args[0], "Invalid min-idle-time argument for XAUTOCLAIM")?;
        let start = parse_bound(&args[1], 0, true).map_err(|e| e.to_string())?;
        let mut count = 100;
        let mut just_id = false;
        let mut rest = args[2..].iter();
        while let Some(option) = rest.next() {
            if is(option, "count") && rest.len() > 0 {
                let raw = rest.next().expect("checked");
                let n = parse_i64(raw)
                    .filter(|n| (1..=i64::MAX / 16).contains(n))
                    .ok_or("ERR COUNT must be > 0")?;
                count = usize::try_from(n).unwrap_or(usize::MAX);
            } else if is(option, "justid") {
                just_id = true;
            } else {
                return Err(CommandError::Syntax.to_string());
            }
        }
        Ok((u64::try_from(min_idle).unwrap_or(0), start, count, just_id))
    })();
    let (min_idle, start, count, just_id) = match parsed {
        Ok(parsed) => parsed,
        Err(text) => {
            // Redis looked the key up before (a key miss when it is absent).
            ctx.db.type_of(key, now);
            return fail(out, text);
        }
    };
    if let Err(text) = has_group(ctx, key, group) {
        return fail(out, text);
    }
    let claimed = ctx
        .db
        .xautoclaim(key, group, consumer, min_idle, start, count, just_id, now);
    let protocol = ctx.protocol;
    reply(out, claimed, |out, (next, claimed, deleted)| {
        write::write_array_len(out, 3);
        write_id(out, next);
        if just_id {
            write::write_array_len(out, claimed.len());
            for (id, _) in claimed {
                write_id(out, id);
            }
        } else {
            write_delivered(out, protocol, claimed);
        }
        write::write_array_len(out, deleted.len());
        for id in deleted {
            write_id(out, id);
        }
    });
}

fn info(ctx: &mut DataCtx<'_, '_>, command: InfoCommand, out: &mut BytesMut) {
    let now = ctx.now_ms;
    let protocol = ctx.protocol;
    let bulk = |s: &'static str| Reply::bulk_static(s);
    let int = |n: u64| Reply::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    let id = |id: StreamId| Reply::bulk(id.to_string());
    let entry = |(entry_id, fields): (StreamId, StreamFields)| {
        Reply::Array(vec![
            id(entry_id),
            Reply::Array(fields.iter().map(Reply::bulk).collect()),
        ])
    };
    let maybe = |n: Option<u64>| n.map_or(Reply::Null, int);
    match command {
        InfoCommand::Help => container_help("xinfo", protocol, out),
        InfoCommand::Stream { key, full } => match ctx.db.xinfo_stream(&key, full, now) {
            Err(err) => error(out, &err),
            Ok(info) => {
                let mut fields = vec![
                    (bulk("length"), int(info.length)),
                    (bulk("radix-tree-keys"), int(info.radix_tree_keys)),
                    (bulk("radix-tree-nodes"), int(info.radix_tree_nodes)),
                    (bulk("last-generated-id"), id(info.last_id)),
                    (bulk("max-deleted-entry-id"), id(info.max_deleted)),
                    (bulk("entries-added"), int(info.entries_added)),
                    (bulk("recorded-first-entry-id"), id(info.first_id)),
                ];
                if full.is_none() {
                    fields.push((bulk("groups"), int(info.groups.len() as u64)));
                    fields.push((
                        bulk("first-entry"),
                        info.first_entry.map_or(Reply::Null, entry),
                    ));
                    fields.push((
                        bulk("last-entry"),
                        info.last_entry.map_or(Reply::Null, entry),
                    ));
                } else {
                    fields.push((
                        bulk("entries"),
                        Reply::Array(info.entries.into_iter().map(entry).collect()),
                    ));
                    // COUNT bounds each pending list as it bounds the entries (0: all).
                    let most = full.filter(|&count| count > 0).unwrap_or(usize::MAX);
                    let groups = info.groups.into_iter().map(|g| {
                        let pending = g.pending.iter().take(most).map(|(p, consumer, at, n)| {
                            Reply::Array(vec![id(*p), Reply::bulk(consumer), int(*at), int(*n)])
                        });
                        let consumers = g.consumers.iter().map(|c| {
                            let pending =
                                c.pending.iter().take(most).map(|(p, at, n)| {
                                    Reply::Array(vec![id(*p), int(*at), int(*n)])
                                });
                            Reply::Map(vec![
                                (bulk("name"), Reply::bulk(&c.name)),
                                (bulk("seen-time"), int(c.seen_ms)),
                                (bulk("pel-count"), int(c.pending.len() as u64)),
                                (bulk("pending"), Reply::Array(pending.collect())),
                            ])
                        });
                        Reply::Map(vec![
                            (bulk("name"), Reply::bulk(&g.name)),
                            (bulk("last-delivered-id"), id(g.last_delivered)),
                            (bulk("entries-read"), maybe(g.entries_read)),
                            (bulk("lag"), g.lag.map_or(Reply::Null, Reply::Integer)),
                            (bulk("pel-count"), int(g.pending.len() as u64)),
                            (bulk("pending"), Reply::Array(pending.collect())),
                            (bulk("consumers"), Reply::Array(consumers.collect())),
                        ])
                    });
                    fields.push((bulk("groups"), Reply::Array(groups.collect())));
                }
                Reply::Map(fields).encode(protocol, out);
            }
        },
        InfoCommand::Groups { key } => match ctx.db.xinfo_stream(&key, None, now) {
            Err(err) => error(out, &err),
            Ok(info) => {
                let groups = info.groups.into_iter().map(|g| {
                    Reply::Map(vec![
                        (bulk("name"), Reply::bulk(&g.name)),
                        (bulk("consumers"), int(g.consumers.len() as u64)),
                        (bulk("pending"), int(g.pending.len() as u64)),
                        (bulk("last-delivered-id"), id(g.last_delivered)),
                        (bulk("entries-read"), maybe(g.entries_read)),
                        (bulk("lag"), g.lag.map_or(Reply::Null, Reply::Integer)),
                    ])
                });
                Reply::Array(groups.collect()).encode(protocol, out);
            }
        },
        InfoCommand::Consumers { key, group } => match ctx.db.xinfo_consumers(&key, &group, now) {
            Err(OpError::NoGroup) => fail(
                out,
                format!(
                    "NOGROUP No such consumer group '{}' for key name '{}'",
                    text(&group),
                    text(&key)
                ),
            ),
            Err(err) => error(out, &err),
            Ok(consumers) => {
                let consumers = consumers.into_iter().map(|c| {
                    Reply::Map(vec![
                        (bulk("name"), Reply::bulk(&c.name)),
                        (bulk("pending"), int(c.pending.len() as u64)),
                        (bulk("idle"), int(now.saturating_sub(c.seen_ms))),
                    ])
                });
                Reply::Array(consumers.collect()).encode(protocol, out);
            }
        },
    }
}

/// Entries as a group delivers them: a deleted one has a null in place of its fields.
fn write_delivered(out: &mut BytesMut, protocol: Protocol, entries: Delivered) {
    write::write_array_len(out, entries.len());
    for (id, fields) in entries {
        write::write_array_len(out, 2);
        write_id(out, id);
        match fields {
            Some(fields) => {
                write::write_array_len(out, fields.len());
                for field in fields.iter() {
                    write::write_bulk(out, field);
                }
            }
            None => write::write_null_array(out, protocol),
        }
    }
}

/// An ID as a bulk string, formatted without allocating.
fn write_id(out: &mut BytesMut, id: StreamId) {
    let mut text = [0u8; 41];
    let mut at = text.len();
    for (i, mut n) in [id.seq, id.ms].into_iter().enumerate() {
        loop {
            at -= 1;
            text[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if i == 0 {
            at -= 1;
            text[at] = b'-';
        }
    }
    write::write_bulk(out, &text[at..]);
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
