//! Executing typed RESP commands. Data commands (strings, keys, hashes,
//! lists, sets, sorted sets) run against one database handle and write their
//! reply straight into the connection's output buffer; connection, server and
//! transaction commands need the session and live beside the connection.

mod data;
mod hashes;
mod keys;
mod lists;
#[cfg(test)]
mod rows;
mod sets;
mod strings;
#[cfg(test)]
mod test_support;
mod zsets;

pub use data::execute_data;

use bytes::Bytes;
use quiver_core::cache::{Cache, Db};
use quiver_resp::Protocol;
use quiver_resp::command::{ConnectionCommand, ServerCommand, TransactionCommand};

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
}

/// What became of a data command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The reply is in the output buffer.
    Done,
    /// A blocking command (BLPOP, BRPOP, BLMOVE) found every key empty and wrote
    /// nothing: the connection waits until one of `keys` is pushed to (then runs
    /// the command again) or until the timeout passes (then replies null).
    Block {
        keys: Vec<Bytes>,
        /// `None` waits forever (a timeout of 0).
        timeout_ms: Option<u64>,
    },
}

/// A command on the connection or the server rather than on keys: the connection
/// runs it with its session (`resp/commands.rs`, `resp/transaction.rs`).
#[derive(Debug)]
pub enum SessionCommand {
    Transaction(TransactionCommand),
    Connection(ConnectionCommand),
    Server(ServerCommand),
}
