//! MULTI, EXEC, DISCARD, WATCH and UNWATCH. EXEC runs the queued commands
//! while holding every shard lock of the keyspace, so nothing interleaves,
//! after checking that no WATCHed key changed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quiver_core::cache::{Cache, Transaction};
use quiver_resp::CommandError;
use quiver_resp::encode as write;

use crate::clock::unix_ms;
use crate::resp::command::exec::{DataCtx, Outcome, SessionCommand, execute_data, execute_session};
use crate::resp::command::{Command, ServerCommand, TransactionCommand};
use crate::resp::connection::{Connection, Flow};
use crate::resp::session::{Multi, Queued};

/// Runs a transaction command (MULTI, EXEC, DISCARD, WATCH, UNWATCH).
pub(in crate::resp) fn execute(
    conn: &mut Connection,
    command: TransactionCommand,
    out: &mut BytesMut,
) -> Flow {
    let error = |out: &mut BytesMut, error: CommandError| {
        write::write_error(out, error.to_string().as_bytes())
    };
    match command {
        TransactionCommand::Multi if conn.session.multi.is_some() => {
            error(out, CommandError::NestedMulti)
        }
        TransactionCommand::Multi => {
            conn.session.multi = Some(Multi::default());
            write::write_simple(out, b"OK");
        }
        TransactionCommand::Discard if conn.session.multi.is_none() => {
            error(out, CommandError::DiscardWithoutMulti)
        }
        TransactionCommand::Discard => {
            conn.session.multi = None;
            unwatch_all(conn);
            write::write_simple(out, b"OK");
        }
        TransactionCommand::Watch { .. } if conn.session.multi.is_some() => {
            error(out, CommandError::WatchInMulti)
        }
        TransactionCommand::Watch { keys } => {
            let now_ms = unix_ms();
            for key in keys {
                let watched = conn.shared.cache.watch(conn.session.db, &key, now_ms);
                conn.session
                    .watched
                    .push(watched.expect("SELECT only accepts existing databases"));
            }
            write::write_simple(out, b"OK");
        }
        TransactionCommand::Unwatch => {
            unwatch_all(conn);
            write::write_simple(out, b"OK");
        }
        TransactionCommand::Exec => return exec(conn, out),
    }
    Flow::Continue
}

/// Stops watching every key the client watches (EXEC, DISCARD, UNWATCH, a refused EXEC).
pub(in crate::resp) fn unwatch_all(conn: &mut Connection) {
    if conn.session.watched.is_empty() {
        return;
    }
    // While a script holds the keyspace (UNWATCH and DISCARD may run then), done once it
    // lets it go: the client is answered at once.
    let watched = std::mem::take(&mut conn.session.watched);
    let cache = std::sync::Arc::clone(&conn.shared.cache);
    conn.shared.cache.hold().after_release(move || {
        for watched in &watched {
            cache.unwatch(watched);
        }
    });
}

fn exec(conn: &mut Connection, out: &mut BytesMut) -> Flow {
    let Some(multi) = conn.session.multi.take() else {
        write::write_error(out, CommandError::ExecWithoutMulti.to_string().as_bytes());
        return Flow::Continue;
    };
    let flow = if multi.aborted {
        write::write_error(out, CommandError::ExecAbort.to_string().as_bytes());
        Flow::Continue
    } else {
        let mut remembered = Vec::new();
        let Multi {
            queued,
            shown,
            reads,
            ..
        } = multi;
        conn.session.in_exec = true;
        let flow = run(conn, queued, &shown, (&reads, &mut remembered), out);
        conn.session.in_exec = false;
        if let Some(subscriber) = &conn.session.subscriber
            && conn.session.tracking.is_some()
        {
            subscriber.remember(remembered.iter().map(|key| &key[..]));
        }
        flow
    };
    unwatch_all(conn);
    conn.shared.cache.after_command();
    flow
}

/// Runs the queued commands, replying one array of their replies (or a null
/// array when a WATCHed key changed); the keys of the reads client-side caching
/// remembers go to `remembered`.
fn run(
    conn: &mut Connection,
    queued: Vec<Queued>,
    shown: &[bytes::Bytes],
    (reads, remembered): (&[(usize, bytes::Bytes)], &mut Vec<bytes::Bytes>),
    out: &mut BytesMut,
) -> Flow {
    let cache = Arc::clone(&conn.shared.cache);
    let now_ms = unix_ms();
    // Memory was checked as the commands were queued and at EXEC: they all run, as in
    // Redis, rather than stopping half-way.
    let hold = || {
        let mut held = cache.transaction();
        held.allow_over_memory();
        held
    };
    let mut transaction = Some(hold());
    let unchanged = transaction
        .as_mut()
        .is_some_and(|held| held.watched_unchanged(&conn.session.watched, now_ms));
    if !unchanged {
        write::write_null_array(out, conn.session.protocol);
        return Flow::Continue;
    }
    // What MONITOR shows of the queued commands, before EXEC's own line.
    let peer = conn.session.peer;
    for args in shown {
        let origin = crate::resp::monitor::Origin::Client(&peer);
        conn.shared
            .monitors
            .feed_text(args, conn.session.db, origin);
    }
    write::write_array_len(out, queued.len());
    let mut flow = Flow::Continue;
    let mut next_read = 0;
    for (at, queued) in queued.into_iter().enumerate() {
        // The reads are in queue order: this command's keys are the next ones.
        let first = next_read;
        while reads.get(next_read).is_some_and(|(read, _)| *read == at) {
            next_read += 1;
        }
        if conn
            .session
            .tracking
            .as_ref()
            .is_some_and(|t| t.remembers())
        {
            remembered.extend(reads[first..next_read].iter().map(|(_, key)| key.clone()));
        }
        let (spec, command) = match queued {
            Queued::Command(spec, command) => (spec, command),
            Queued::Refused(spec, error) => {
                let reply = out.len();
                write::write_error(out, error.to_string().as_bytes());
                conn.shared.stats.record(spec, Duration::ZERO, true);
                conn.shared.stats.error(&out[reply..]);
                continue;
            }
        };
        // Each command is counted as a client's would be (INFO commandstats, errorstats).
        let (started, reply) = (Instant::now(), out.len());
        if let Flow::Close = run_one(
            conn,
            command,
            &cache,
            (&mut transaction, &hold),
            now_ms,
            out,
        ) {
            flow = Flow::Close;
        }
        conn.shared
            .stats
            .replied(spec, started.elapsed(), &out[reply..]);
    }
    flow
}

/// Runs one queued command in the transaction (`transaction`, taken again with `hold`
/// after a command that runs with the locks released).
fn run_one<'k>(
    conn: &mut Connection,
    command: Command,
    cache: &'k Cache,
    (transaction, hold): (&mut Option<Transaction<'k>>, &dyn Fn() -> Transaction<'k>),
    now_ms: u64,
    out: &mut BytesMut,
) -> Flow {
    // INFO and CONFIG read or change keyspace-wide state through the shard
    // locks this transaction holds: they run with the locks released.
    let command = match command {
        // A client in MULTI expects a reply per command, as Redis words it.
        Command::Server(ServerCommand::Monitor) => {
            write::write_error(out, b"ERR MONITOR isn't allowed for DENY BLOCKING client");
            return Flow::Continue;
        }
        // It awaits another server, which a transaction holding the keyspace may not.
        Command::Server(ServerCommand::Migrate(_)) => {
            write::write_error(out, b"ERR MIGRATE cannot run inside a transaction on Quiver: it waits for the target server, and EXEC holds the keyspace");
            return Flow::Continue;
        }
        Command::Server(server @ (ServerCommand::Info { .. } | ServerCommand::Config(_))) => {
            *transaction = None;
            return execute_session(conn, SessionCommand::Server(server), out);
        }
        other => other,
    };
    let held = transaction.get_or_insert_with(hold);
    if let Command::Scripting(command) = command {
        // Inside EXEC the script runs in place, in the transaction.
        return crate::resp::command::scripting::exec::execute(
            conn,
            command,
            Some((cache, held)),
            out,
        );
    }
    let db_index = conn.session.db;
    let mut db = held
        .db(db_index)
        .expect("SELECT only accepts existing databases");
    let mut ctx = DataCtx {
        cache,
        db: &mut db,
        db_index,
        now_ms,
        protocol: conn.session.protocol,
        in_transaction: true,
        max_bulk_len: conn.shared.settings.limits.max_bulk_len_bytes as u64,
        woken: false,
    };
    match execute_data(&mut ctx, command, out) {
        Ok(Outcome::Done) => {}
        Ok(Outcome::Block { .. }) => write::write_null_array(out, conn.session.protocol),
        Ok(Outcome::Wait { .. }) => write::write_integer(out, 0),
        Err(SessionCommand::Transaction(TransactionCommand::Unwatch)) => {
            write::write_simple(out, b"OK")
        }
        // MULTI, EXEC, DISCARD and WATCH are answered when they are sent, never queued.
        Err(SessionCommand::Transaction(other)) => write::write_error(
            out,
            format!("ERR {other:?} cannot run inside a transaction").as_bytes(),
        ),
        Err(command) => return execute_session(conn, command, out),
    }
    Flow::Continue
}
