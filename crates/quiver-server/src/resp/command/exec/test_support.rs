//! Running commands through [`execute_data`] on a real keyspace, for the
//! family tests: each call parses a request as a client would send it and
//! returns the outcome and the exact reply bytes.

use bytes::BytesMut;
use quiver_core::cache::{Cache, CacheConfig};
use quiver_resp::{Protocol, Request};

use super::{DataCtx, Outcome, execute_data};
use crate::resp::command::Command;

/// The Unix time the tests run at, in milliseconds.
pub(crate) const NOW_MS: u64 = 1_700_000_000_000;

/// A cache and a clock.
pub(crate) struct Tester {
    pub(crate) cache: Cache,
    pub(crate) now_ms: u64,
}

impl Tester {
    pub(crate) fn new() -> Tester {
        Tester::with_config(CacheConfig {
            shards: 8,
            ..CacheConfig::default()
        })
    }

    pub(crate) fn with_config(config: CacheConfig) -> Tester {
        Tester {
            cache: Cache::new(config).expect("the default config is valid"),
            now_ms: NOW_MS,
        }
    }

    /// Runs `args` on database `db_index` (inside a transaction when `in_tx`).
    pub(crate) fn exec_args(
        &self,
        db_index: usize,
        protocol: Protocol,
        in_tx: bool,
        args: &[&[u8]],
    ) -> (Outcome, String) {
        let mut out = BytesMut::new();
        // Parse errors are answered as the connection answers them.
        let command = match Command::parse(&Request::from_args(args)) {
            Ok(command) => command,
            Err(e) => {
                quiver_resp::encode::write_error(&mut out, e.to_string().as_bytes());
                return (Outcome::Done, String::from_utf8_lossy(&out).into_owned());
            }
        };
        let outcome = if in_tx {
            let mut tx = self.cache.transaction();
            let mut db = tx.db(db_index).expect("database exists");
            let mut ctx = DataCtx {
                cache: &self.cache,
                db: &mut db,
                db_index,
                now_ms: self.now_ms,
                protocol,
                in_transaction: true,
                max_bulk_len: quiver_resp::limits::DEFAULT_MAX_BULK_LEN_BYTES as u64,
                woken: false,
            };
            execute_data(&mut ctx, command, &mut out)
        } else {
            let mut db = self.cache.db(db_index).expect("database exists");
            let mut ctx = DataCtx {
                cache: &self.cache,
                db: &mut db,
                db_index,
                now_ms: self.now_ms,
                protocol,
                in_transaction: false,
                max_bulk_len: quiver_resp::limits::DEFAULT_MAX_BULK_LEN_BYTES as u64,
                woken: false,
            };
            execute_data(&mut ctx, command, &mut out)
        };
        let outcome = outcome.expect("a data command");
        (outcome, String::from_utf8_lossy(&out).into_owned())
    }

    /// Runs a whitespace-separated command line in database 0.
    pub(crate) fn exec(&self, protocol: Protocol, in_tx: bool, line: &str) -> (Outcome, String) {
        let args: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        self.exec_args(0, protocol, in_tx, &args)
    }

    /// The RESP2 reply to `line`, which must complete.
    pub(crate) fn r2(&self, line: &str) -> String {
        let (outcome, reply) = self.exec(Protocol::Resp2, false, line);
        assert_eq!(outcome, Outcome::Done, "{line}");
        reply
    }

    /// The RESP3 reply to `line`, which must complete.
    pub(crate) fn r3(&self, line: &str) -> String {
        let (outcome, reply) = self.exec(Protocol::Resp3, false, line);
        assert_eq!(outcome, Outcome::Done, "{line}");
        reply
    }
}

/// `ERR ...` and `WRONGTYPE ...` replies of the tests.
pub(crate) const WRONGTYPE: &str =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
pub(crate) const NOT_INTEGER: &str = "-ERR value is not an integer or out of range\r\n";
pub(crate) const SYNTAX: &str = "-ERR syntax error\r\n";
