//! Typed commands: one variant per command, its options parsed and validated
//! with Redis's rules and error texts. Arguments stay `Bytes` slices of the
//! request (no copies).
//!
//! [`Command::parse`] = [`table::resolve`] (unknown command, subcommand and
//! arity errors) + [`Command::parse_resolved`] (options). Servers that must
//! check authentication or queue inside `MULTI` between the two call them
//! separately, as Redis does.

pub mod bitmap;
pub mod connection;
pub mod exec;
pub mod geo;
pub mod hash;
pub mod hyperloglog;
pub mod keys;
pub mod list;
pub mod pubsub;
pub mod scripting;
pub mod server;
pub mod set;
pub mod stream;
pub mod string;
pub mod transaction;
pub mod zset;

use bytes::Bytes;

pub use bitmap::BitmapCommand;
pub use connection::ConnectionCommand;
pub use geo::GeoCommand;
pub use hash::HashCommand;
pub use hyperloglog::HyperLogLogCommand;
pub use keys::KeysCommand;
pub use list::ListCommand;
pub use pubsub::PubSubCommand;
pub use scripting::ScriptingCommand;
pub use server::ServerCommand;
pub use set::SetCommand;
pub use stream::StreamCommand;
pub use string::StringCommand;
pub use transaction::TransactionCommand;
pub use zset::SortedSetCommand;

use crate::resp::table::{self, CommandSpec};
use quiver_resp::error::CommandError;
use quiver_resp::num::{parse_f64, parse_i64};
use quiver_resp::request::Request;

/// Every family's table entries.
pub(crate) const FAMILIES: [&[CommandSpec]; 15] = [
    string::SPECS,
    bitmap::SPECS,
    hyperloglog::SPECS,
    keys::SPECS,
    hash::SPECS,
    list::SPECS,
    set::SPECS,
    zset::SPECS,
    geo::SPECS,
    stream::SPECS,
    pubsub::SPECS,
    transaction::SPECS,
    connection::SPECS,
    server::SPECS,
    scripting::SPECS,
];

/// A parsed command, by family.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// String commands.
    String(StringCommand),
    /// Bitmap commands (on string values).
    Bitmap(BitmapCommand),
    /// HyperLogLog commands (on string values).
    HyperLogLog(HyperLogLogCommand),
    /// Commands on keys of any type.
    Keys(KeysCommand),
    /// Hash commands.
    Hash(HashCommand),
    /// List commands.
    List(ListCommand),
    /// Set commands.
    Set(SetCommand),
    /// Sorted set commands.
    SortedSet(SortedSetCommand),
    /// Geospatial commands (on sorted sets).
    Geo(GeoCommand),
    /// Stream commands.
    Stream(StreamCommand),
    /// Pub/sub commands.
    PubSub(PubSubCommand),
    /// `MULTI`, `EXEC`, `DISCARD`, `WATCH`, `UNWATCH`.
    Transaction(TransactionCommand),
    /// Connection commands.
    Connection(ConnectionCommand),
    /// Server commands.
    Server(ServerCommand),
    /// Scripts and functions.
    Scripting(ScriptingCommand),
}

impl Command {
    /// Resolves and parses `request` (which must not be empty).
    pub fn parse(request: &Request) -> Result<Command, CommandError> {
        let spec = table::resolve(request)?;
        Command::parse_resolved(spec, request)
    }

    /// Parses `request`'s options for `spec`, as returned by
    /// [`table::resolve`] for this request.
    pub fn parse_resolved(
        spec: &'static CommandSpec,
        request: &Request,
    ) -> Result<Command, CommandError> {
        let first = if spec.name.contains('|') { 2 } else { 1 };
        let mut args = Args {
            request,
            spec,
            pos: first,
        };
        (spec.parser)(&mut args)
    }
}

/// A cursor over a request's arguments, for the family parsers.
#[derive(Debug)]
pub struct Args<'a> {
    request: &'a Request,
    spec: &'static CommandSpec,
    pos: usize,
}

impl<'a> Args<'a> {
    /// The spec being parsed.
    pub(crate) fn spec(&self) -> &'static CommandSpec {
        self.spec
    }

    /// The command's name as the client sent it.
    pub(crate) fn name_as_sent(&self) -> &'a [u8] {
        self.request.arg(0).unwrap_or_default()
    }

    /// A subcommand's name as the client sent it (empty for a plain command).
    pub(crate) fn subcommand_as_sent(&self) -> &'a [u8] {
        if self.spec.name.contains('|') {
            self.request.arg(1).unwrap_or_default()
        } else {
            &[]
        }
    }

    /// Arguments not consumed yet.
    pub(crate) fn remaining(&self) -> usize {
        self.request.len().saturating_sub(self.pos)
    }

    /// Total argument count, the name included (Redis's `argc`).
    pub(crate) fn argc(&self) -> usize {
        self.request.len()
    }

    /// Redis's wrong-arity error for this command.
    pub(crate) fn arity_error(&self) -> CommandError {
        CommandError::WrongArity {
            command: self.spec.name,
        }
    }

    /// The next argument without consuming it.
    pub(crate) fn peek(&self) -> Option<&'a [u8]> {
        self.request.arg(self.pos)
    }

    /// The next argument as a zero-copy `Bytes`.
    pub(crate) fn next(&mut self) -> Result<Bytes, CommandError> {
        let arg = self
            .request
            .arg_bytes(self.pos)
            .ok_or_else(|| self.arity_error())?;
        self.pos += 1;
        Ok(arg)
    }

    /// The next argument, borrowed.
    pub(crate) fn next_slice(&mut self) -> Result<&'a [u8], CommandError> {
        let arg = self
            .request
            .arg(self.pos)
            .ok_or_else(|| self.arity_error())?;
        self.pos += 1;
        Ok(arg)
    }

    /// The next argument as an `i64` (`value is not an integer or out of range`).
    pub(crate) fn i64(&mut self) -> Result<i64, CommandError> {
        parse_i64(self.next_slice()?).ok_or(CommandError::NotInteger)
    }

    /// The next argument as an `i64`, or `error` if it is not one or is
    /// negative (Redis's `getPositiveLongFromObjectOrReply` with a message).
    pub(crate) fn non_negative(&mut self, error: CommandError) -> Result<i64, CommandError> {
        match parse_i64(self.next_slice()?) {
            Some(n) if n >= 0 => Ok(n),
            _ => Err(error),
        }
    }

    /// The next argument as an `f64` (`value is not a valid float`).
    pub(crate) fn f64(&mut self) -> Result<f64, CommandError> {
        parse_f64(self.next_slice()?).ok_or(CommandError::NotFloat)
    }

    /// All remaining arguments.
    pub(crate) fn rest(&mut self) -> Vec<Bytes> {
        let out = (self.pos..self.request.len())
            .filter_map(|i| self.request.arg_bytes(i))
            .collect();
        self.pos = self.request.len();
        out
    }

    /// The next `n` arguments.
    pub(crate) fn take(&mut self, n: usize) -> Result<Vec<Bytes>, CommandError> {
        if self.remaining() < n {
            return Err(CommandError::Syntax);
        }
        (0..n).map(|_| self.next()).collect()
    }

    /// Remaining arguments as pairs; an odd count is a wrong-arity error.
    pub(crate) fn pairs(&mut self) -> Result<Vec<(Bytes, Bytes)>, CommandError> {
        if !self.remaining().is_multiple_of(2) {
            return Err(self.arity_error());
        }
        let mut pairs = Vec::with_capacity(self.remaining() / 2);
        while self.remaining() > 0 {
            pairs.push((self.next()?, self.next()?));
        }
        Ok(pairs)
    }
}

/// Case-insensitive comparison of an argument with an option word.
pub(crate) fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Parses a command from whitespace-separated words.
    pub(crate) fn parse(line: &str) -> Result<Command, CommandError> {
        Command::parse(&Request::from_args(line.split_whitespace()))
    }

    /// The error text of parsing `line`.
    pub(crate) fn error(line: &str) -> String {
        parse(line).expect_err(line).to_string()
    }

    /// `Bytes` of a static string.
    pub(crate) fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }
}
