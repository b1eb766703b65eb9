//! Every row of the command table reaches an implementation: a request of the row's
//! arity parses into a command that either runs here and writes exactly one reply, or
//! comes back, having written nothing, as a session command for the connection.

use bytes::BytesMut;
use quiver_core::cache::{Cache, CacheConfig};
use quiver_resp::{Protocol, Request};

use super::{DataCtx, SessionCommand, execute_data};
use crate::resp::command::Command;
use crate::resp::table::{self, CommandSpec};

/// A request for `spec`: its name (a subcommand as two words), then `1` up to its
/// arity, two more when it takes more.
fn sample(spec: &CommandSpec) -> Vec<String> {
    let mut words: Vec<String> = spec.name.split('|').map(str::to_owned).collect();
    let argc = if spec.arity > 0 {
        spec.arity as usize
    } else {
        spec.arity.unsigned_abs() as usize + 2
    };
    while words.len() < argc {
        words.push("1".to_owned());
    }
    words
}

/// Length of the first whole reply in `bytes`.
fn reply_len(bytes: &[u8]) -> Option<usize> {
    let line_end = bytes.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&bytes[1..line_end]).ok()?;
    let head = line_end + 2;
    let count = || line.parse::<i64>().ok();
    match bytes.first()? {
        b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some(head),
        b'$' | b'=' => match count()? {
            -1 => Some(head),
            len => Some(head + usize::try_from(len).ok()? + 2),
        },
        kind @ (b'*' | b'~' | b'%' | b'>') => {
            let n = count()?;
            if n < 0 {
                return Some(head);
            }
            let items = usize::try_from(n).ok()? * if *kind == b'%' { 2 } else { 1 };
            let mut pos = head;
            for _ in 0..items {
                pos += reply_len(&bytes[pos..])?;
            }
            Some(pos)
        }
        _ => None,
    }
}

#[test]
fn every_row_runs_and_writes_one_reply() {
    let cache = Cache::new(CacheConfig::default()).expect("default config");
    let rows = table::commands()
        .iter()
        .flat_map(|spec| std::iter::once(*spec).chain(spec.subcommands.iter()));
    let mut ran = 0;
    for spec in rows {
        let words = sample(spec);
        let request = Request::from_args(words.iter().map(String::as_bytes));
        let command = match Command::parse(&request) {
            Ok(command) => command,
            // Refused while parsing, with an error reply: the row is known.
            Err(_) => continue,
        };
        for protocol in [Protocol::Resp2, Protocol::Resp3] {
            let mut transaction = cache.transaction();
            let mut db = transaction.db(0).expect("database 0");
            let mut ctx = DataCtx {
                cache: &cache,
                db: &mut db,
                db_index: 0,
                now_ms: 1_700_000_000_000,
                protocol,
                // Blocking commands answer at once, as inside EXEC.
                in_transaction: true,
                max_bulk_len: quiver_resp::limits::DEFAULT_MAX_BULK_LEN_BYTES as u64,
                woken: false,
            };
            let mut out = BytesMut::new();
            match execute_data(&mut ctx, command.clone(), &mut out) {
                Ok(_) => {
                    assert_eq!(
                        reply_len(&out),
                        Some(out.len()),
                        "{words:?} must write one reply, wrote {:?}",
                        String::from_utf8_lossy(&out)
                    );
                    ran += 1;
                }
                Err(
                    SessionCommand::Transaction(_)
                    | SessionCommand::Connection(_)
                    | SessionCommand::PubSub(_)
                    | SessionCommand::Server(_)
                    | SessionCommand::Scripting(_),
                ) => assert!(out.is_empty(), "{words:?} wrote before it came back"),
            }
        }
    }
    assert!(ran > 150, "{ran} data rows ran");
}

#[test]
fn reply_lengths() {
    assert_eq!(reply_len(b"+OK\r\n"), Some(5));
    assert_eq!(reply_len(b"$3\r\nabc\r\n"), Some(9));
    assert_eq!(reply_len(b"*2\r\n:1\r\n$-1\r\n"), Some(13));
    assert_eq!(reply_len(b"%1\r\n+a\r\n+b\r\n"), Some(12));
    assert_eq!(reply_len(b"*2\r\n:1\r\n"), None);
}
