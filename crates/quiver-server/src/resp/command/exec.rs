//! Running typed commands. Data commands (strings, keys, hashes, lists, sets, sorted
//! sets) run against one database handle through their family's `exec` module, which
//! writes the reply straight into the connection's output buffer; transaction,
//! connection and server commands come back as a [`SessionCommand`] for the connection.
//! Also the reply writers the families share.

#[cfg(test)]
mod rows;
#[cfg(test)]
pub(crate) mod test_support;

use std::fmt::Display;

use bytes::{BufMut, Bytes, BytesMut};
use quiver_core::cache::{Cache, Db, ValueType};
use quiver_resp::Protocol;
use quiver_resp::encode::{
    OK, write_array_len, write_bulk, write_error, write_integer, write_null, write_set_len,
    write_simple,
};
use quiver_resp::num::MAX_I64_DIGITS;

use crate::resp::command::{
    Command, ConnectionCommand, PubSubCommand, ScriptingCommand, ServerCommand, TransactionCommand,
    bitmap, connection, geo, hash, hyperloglog, keys, list, pubsub, scripting, server, set, stream,
    string, transaction, zset,
};
use crate::resp::connection::{Connection, Flow};

/// Runs a transaction, connection or server command.
pub(in crate::resp) fn execute_session(
    conn: &mut Connection,
    command: SessionCommand,
    out: &mut BytesMut,
) -> Flow {
    match command {
        SessionCommand::Transaction(command) => transaction::exec::execute(conn, command, out),
        SessionCommand::Connection(command) => connection::exec::execute(conn, command, out),
        SessionCommand::PubSub(command) => pubsub::exec::execute(conn, command, out),
        SessionCommand::Server(command) => server::exec::execute(conn, command, out),
        SessionCommand::Scripting(command) => scripting::exec::execute(conn, command, None, out),
    }
}

/// `CLIENT HELP`, `CONFIG HELP`: the lines the command table holds.
pub(crate) fn container_help(container: &str, protocol: Protocol, out: &mut BytesMut) {
    let reply =
        crate::resp::table::lookup(container.as_bytes()).and_then(crate::resp::table::help_reply);
    reply
        .expect("containers with a HELP subcommand have help lines")
        .encode(protocol, out);
}

/// What a data command runs with.
#[derive(Debug)]
pub struct DataCtx<'a, 'k> {
    /// The node's cache: for what a command hands over beyond its database (freeing
    /// removed values in the background).
    pub cache: &'k Cache,
    /// The session's selected database (inside MULTI/EXEC: a handle whose
    /// shard locks the transaction already holds).
    pub db: &'a mut Db<'k>,
    /// Index of `db`.
    pub db_index: usize,
    /// Unix time in milliseconds, read once per command by the caller.
    pub now_ms: u64,
    /// The reply encoding the session negotiated.
    pub protocol: Protocol,
    /// True inside EXEC: blocking commands must not block (Redis answers as
    /// if their timeout had expired).
    pub in_transaction: bool,
    /// `proto-max-bulk-len`, which also bounds what a command builds on the side (LCS's
    /// table).
    pub max_bulk_len: u64,
    /// A blocked command runs again after it waited: a key of another type than it pops
    /// is passed over ([`DataCtx::servable`]).
    pub woken: bool,
}

impl DataCtx<'_, '_> {
    /// The keys a blocking command may be served from now: all of them on its first run
    /// (a key of another type is then an error); after it waited, those holding `wanted`
    /// or nothing, since Redis serves a blocked client only from keys of the type it
    /// waits for (it stays blocked when its key is made a hash).
    pub fn servable<'k>(&mut self, keys: &'k [Bytes], wanted: ValueType) -> Vec<&'k Bytes> {
        keys.iter()
            .filter(|key| {
                !self.woken
                    || self
                        .db
                        .key_type(key, self.now_ms)
                        .is_none_or(|found| found == wanted)
            })
            .collect()
    }
}

/// What became of a data command.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The reply is in the output buffer.
    Done,
    /// A blocking command (BLPOP, BRPOP, BLMOVE, XREAD BLOCK) found nothing to serve
    /// and wrote nothing: the connection waits until one of `keys` receives data (then
    /// runs the command again, or `retry` when the command fixed what it waits for:
    /// XREAD's `$`) or until the timeout passes (then replies null).
    Block {
        keys: Vec<Bytes>,
        /// `None` waits forever (a timeout of 0).
        timeout_ms: Option<u64>,
        retry: Option<Box<Command>>,
    },
    /// WAIT for replicas that do not exist: nothing was written; the connection answers
    /// 0 when the timeout passes (`None`: it waits until the client goes).
    Wait { timeout_ms: Option<u64> },
}

/// A command on the connection or the server rather than on keys: the connection
/// runs it with its session (`resp/commands.rs`, `resp/transaction.rs`).
#[derive(Debug)]
pub enum SessionCommand {
    Transaction(TransactionCommand),
    Connection(ConnectionCommand),
    PubSub(PubSubCommand),
    Server(ServerCommand),
    Scripting(ScriptingCommand),
}

/// Runs a data-family command (strings, keys, hashes, lists, sets, sorted
/// sets) and writes exactly one reply into `out`, or hands a connection, server
/// or transaction command back for the connection to run.
///
/// Blocking list commands return [`Outcome::Block`] without writing anything
/// when every key they wait on is empty outside a transaction.
pub fn execute_data(
    ctx: &mut DataCtx<'_, '_>,
    command: Command,
    out: &mut BytesMut,
) -> Result<Outcome, SessionCommand> {
    let done = Outcome::Done;
    match command {
        Command::String(c) => string::exec::execute(ctx, c, out),
        Command::Bitmap(c) => bitmap::exec::execute(ctx, c, out),
        Command::HyperLogLog(c) => hyperloglog::exec::execute(ctx, c, out),
        Command::Geo(c) => geo::exec::execute(ctx, c, out),
        Command::Keys(c) => return Ok(keys::exec::execute(ctx, c, out)),
        Command::Hash(c) => hash::exec::execute(ctx, c, out),
        Command::List(c) => return Ok(list::exec::execute(ctx, c, out)),
        Command::Set(c) => set::exec::execute(ctx, c, out),
        Command::SortedSet(c) => return Ok(zset::exec::execute(ctx, c, out)),
        Command::Stream(c) => return Ok(stream::exec::execute(ctx, c, out)),
        Command::Transaction(c) => return Err(SessionCommand::Transaction(c)),
        Command::Connection(c) => return Err(SessionCommand::Connection(c)),
        Command::PubSub(c) => return Err(SessionCommand::PubSub(c)),
        Command::Server(c) => return Err(SessionCommand::Server(c)),
        Command::Scripting(c) => return Err(SessionCommand::Scripting(c)),
    }
    Ok(done)
}

/// `+OK`.
pub(super) fn ok(out: &mut BytesMut) {
    out.put_slice(OK);
}

/// An error reply whose text is `error`'s Display (error code first).
pub(crate) fn error(out: &mut BytesMut, error: &dyn Display) {
    write_error(out, error.to_string().as_bytes());
}

/// Writes `result`'s value with `write`, or its error as an error reply.
pub(super) fn reply<T, E: Display>(
    out: &mut BytesMut,
    result: Result<T, E>,
    write: impl FnOnce(&mut BytesMut, T),
) {
    match result {
        Ok(value) => write(out, value),
        Err(e) => error(out, &e),
    }
}

/// An integer reply from a count.
pub(super) fn count(out: &mut BytesMut, n: usize) {
    write_integer(out, i64::try_from(n).unwrap_or(i64::MAX));
}

/// `:1` or `:0` (Redis's integer booleans, in RESP3 too).
pub(super) fn flag(out: &mut BytesMut, value: bool) {
    write_integer(out, i64::from(value));
}

/// A bulk string, or the null bulk string.
pub(super) fn bulk_or_null(out: &mut BytesMut, ctx: &DataCtx<'_, '_>, value: Option<&[u8]>) {
    match value {
        Some(value) => write_bulk(out, value),
        None => write_null(out, ctx.protocol),
    }
}

/// An array of bulk strings.
pub(super) fn bulks(out: &mut BytesMut, items: &[Bytes]) {
    write_array_len(out, items.len());
    items.iter().for_each(|item| write_bulk(out, item));
}

/// An array of bulk strings, a missing one as the null bulk string.
pub(super) fn optional_bulks(out: &mut BytesMut, ctx: &DataCtx<'_, '_>, items: &[Option<Bytes>]) {
    write_array_len(out, items.len());
    for item in items {
        bulk_or_null(out, ctx, item.as_deref());
    }
}

/// A set of bulk strings: RESP3 `~`, RESP2 an array.
pub(super) fn set_of(out: &mut BytesMut, ctx: &DataCtx<'_, '_>, items: &[Bytes]) {
    write_set_len(out, ctx.protocol, items.len());
    items.iter().for_each(|item| write_bulk(out, item));
}

/// The head of a `SCAN`-family reply: a two-element array of the next cursor
/// (a bulk string) and an array of `len` elements, which the caller writes.
pub(super) fn scan_head(out: &mut BytesMut, cursor: u64, len: usize) {
    write_array_len(out, 2);
    let mut digits = [0u8; MAX_U64_DIGITS];
    write_bulk(out, format_u64(cursor, &mut digits));
    write_array_len(out, len);
}

/// The most bytes a `u64` takes in decimal.
const MAX_U64_DIGITS: usize = 20;

const _: () = assert!(MAX_U64_DIGITS >= MAX_I64_DIGITS);

/// `value` in decimal, formatted on the stack.
fn format_u64(mut value: u64, buf: &mut [u8; MAX_U64_DIGITS]) -> &[u8] {
    let mut pos = buf.len();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &buf[pos..];
        }
    }
}

/// A `HELP` reply: one status line per text line, as Redis's `addReplyHelp`.
pub(super) fn help(out: &mut BytesMut, lines: &[&str]) {
    write_array_len(out, lines.len());
    for line in lines {
        write_simple(out, line.as_bytes());
    }
}

/// Borrowed views of owned arguments, for the keyspace's slice APIs.
pub(super) fn refs(items: &[Bytes]) -> Vec<&[u8]> {
    items.iter().map(|item| &item[..]).collect()
}

/// Borrowed views of owned pairs.
pub(super) fn pair_refs(pairs: &[(Bytes, Bytes)]) -> Vec<(&[u8], &[u8])> {
    pairs.iter().map(|(a, b)| (&a[..], &b[..])).collect()
}

/// A non-negative count argument as `usize` (counts were validated
/// non-negative by the parser; anything larger than memory saturates).
pub(super) fn to_usize(n: i64) -> usize {
    usize::try_from(n.max(0)).unwrap_or(usize::MAX)
}

/// A `SCAN` `COUNT` hint as `usize`.
pub(super) fn scan_count(count: u64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_u64() {
        let mut buf = [0u8; MAX_U64_DIGITS];
        assert_eq!(format_u64(0, &mut buf), b"0");
        assert_eq!(format_u64(u64::MAX, &mut buf), b"18446744073709551615");
    }

    #[test]
    fn non_data_commands_come_back() {
        let cache =
            quiver_core::cache::Cache::new(quiver_core::cache::CacheConfig::default()).unwrap();
        let mut db = cache.db(0).unwrap();
        let mut ctx = DataCtx {
            cache: &cache,
            db: &mut db,
            db_index: 0,
            now_ms: 1,
            protocol: quiver_resp::Protocol::Resp2,
            in_transaction: false,
            max_bulk_len: quiver_resp::limits::DEFAULT_MAX_BULK_LEN_BYTES as u64,
            woken: false,
        };
        for line in [
            &["PING"][..],
            &["MULTI"],
            &["EXEC"],
            &["SELECT", "1"],
            &["INFO"],
            &["PUBLISH", "c", "m"],
            &["EVAL", "return 1", "0"],
        ] {
            let command = Command::parse(&quiver_resp::Request::from_args(line)).unwrap();
            let mut out = BytesMut::new();
            let back = execute_data(&mut ctx, command.clone(), &mut out).expect_err("handed back");
            let back = match back {
                SessionCommand::Transaction(c) => Command::Transaction(c),
                SessionCommand::Connection(c) => Command::Connection(c),
                SessionCommand::PubSub(c) => Command::PubSub(c),
                SessionCommand::Server(c) => Command::Server(c),
                SessionCommand::Scripting(c) => Command::Scripting(c),
            };
            assert_eq!(back, command, "{line:?}");
            assert!(out.is_empty());
        }
    }
}
