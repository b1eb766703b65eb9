//! MIGRATE: moves keys to another server that speaks RESP (Redis, Valkey or Quiver).
//! The keys are serialized as DUMP serializes them, sent as `RESTORE key ttl payload
//! [REPLACE]` after `AUTH` and `SELECT`, and removed here once the target has
//! acknowledged each (unless COPY). The transfer is awaited by the connection, so its
//! thread serves other clients meanwhile; the keys are watched from the moment they are
//! read, and a key written while it was in transit is kept here rather than removed.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use quiver_core::cache::{Cache, ChangeOrigin, WatchedKey};
use quiver_resp::encode as write;
use quiver_resp::error::CommandError;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::super::{Args, Command, is};
use crate::clock::unix_ms;
use crate::resp::command::server::ServerCommand;
use crate::resp::connection::{Connection, Flow};

/// The timeout Redis uses when MIGRATE is given 0 or less, in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 1000;
/// Longest reply line read from the target (Redis reads into 1 KiB too).
const MAX_LINE: usize = 1024;

/// `MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
/// AUTH2 username password] [KEYS key...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migrate {
    host: Bytes,
    port: Bytes,
    keys: Vec<Bytes>,
    db: i64,
    timeout_ms: u64,
    copy: bool,
    replace: bool,
    /// `AUTH password` (no user) or `AUTH2 username password`.
    auth: Option<(Option<Bytes>, Bytes)>,
}

/// Parses MIGRATE's arguments in Redis's order: the options first, then the timeout
/// and the database.
pub(super) fn parse(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let host = args.next()?;
    let port = args.next()?;
    let key = args.next()?;
    let db = args.next()?;
    let timeout = args.next()?;
    let (mut copy, mut replace, mut auth, mut keys) = (false, false, None, vec![key.clone()]);
    while let Some(word) = args.peek() {
        args.next_slice()?;
        if is(word, "copy") {
            copy = true;
        } else if is(word, "replace") {
            replace = true;
        } else if is(word, "auth") {
            let password = args.next().map_err(|_| CommandError::Syntax)?;
            auth = Some((None, password));
        } else if is(word, "auth2") {
            if args.remaining() < 2 {
                return Err(CommandError::Syntax);
            }
            let user = args.next()?;
            auth = Some((Some(user), args.next()?));
        } else if is(word, "keys") {
            if !key.is_empty() {
                return Err(CommandError::Message(
                    "When using MIGRATE KEYS option, the key argument must be set to the empty string",
                ));
            }
            keys = args.rest();
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let number = |arg: &Bytes| quiver_resp::num::parse_i64(arg).ok_or(CommandError::NotInteger);
    let timeout_ms = number(&timeout)?;
    let db = number(&db)?;
    Ok(Command::Server(ServerCommand::Migrate(Box::new(Migrate {
        host,
        port,
        keys,
        db,
        timeout_ms: u64::try_from(timeout_ms)
            .ok()
            .filter(|&ms| ms > 0)
            .unwrap_or(DEFAULT_TIMEOUT_MS),
        copy,
        replace,
        auth,
    }))))
}

/// A transfer under way: what the connection awaits, then finishes with [`finish`].
pub(in crate::resp) struct PendingMigrate {
    /// Where the keys are watched: they stop being watched when this is dropped, also
    /// when the connection ends before the transfer does.
    cache: Arc<Cache>,
    /// Every key named, watched since it was read.
    watched: Vec<WatchedKey>,
    /// The keys sent, in order: their name and their place in `watched`.
    sent: Vec<(Bytes, usize)>,
    /// Replies that come before the keys' (AUTH, SELECT).
    head: usize,
    copy: bool,
    /// The exchange with the target, which the connection awaits.
    pub(in crate::resp) transfer: std::pin::Pin<Box<dyn Future<Output = Transfer> + Send>>,
}

impl Drop for PendingMigrate {
    fn drop(&mut self) {
        for watch in &self.watched {
            self.cache.unwatch(watch);
        }
    }
}

impl std::fmt::Debug for PendingMigrate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingMigrate")
            .field("keys", &self.sent.len())
            .finish_non_exhaustive()
    }
}

/// What the target answered: the first line of each reply read, and what stopped the
/// exchange before every reply was read.
#[derive(Debug, Default)]
pub(in crate::resp) struct Transfer {
    replies: Vec<Vec<u8>>,
    failure: Option<&'static str>,
}

const CONNECT_FAILED: &str = "IOERR error or timeout connecting to the client";
const WRITE_FAILED: &str = "IOERR error or timeout writing to target instance";
const READ_FAILED: &str = "IOERR error or timeout reading to target instance";

/// Reads the keys and starts the transfer; answers at once when there is nothing to send
/// (`NOKEY`) or MIGRATE cannot run here.
pub(in crate::resp) fn start(conn: &mut Connection, migrate: Migrate, out: &mut BytesMut) -> Flow {
    let cache = &conn.shared.cache;
    let (db_index, now_ms) = (conn.session.db, unix_ms());
    // Watched first: a change from now on keeps the key here.
    let mut watched = Vec::with_capacity(migrate.keys.len());
    for key in &migrate.keys {
        watched.push(
            cache
                .watch(db_index, key, now_ms)
                .expect("SELECT only accepts existing databases"),
        );
    }
    let mut request = BytesMut::new();
    let mut sent = Vec::new();
    {
        let mut held = cache.transaction();
        let mut db = held
            .db(db_index)
            .expect("SELECT only accepts existing databases");
        for (at, key) in migrate.keys.iter().enumerate() {
            let Some(payload) = db.dump(key, now_ms) else {
                continue;
            };
            // Milliseconds left (0: none), at least 1 for a key that expires.
            let ttl = match db.pttl(key, now_ms) {
                -1 => 0,
                left => left.max(1),
            };
            let ttl = ttl.to_string();
            let mut words: Vec<&[u8]> = vec![b"RESTORE", key, ttl.as_bytes(), &payload];
            if migrate.replace {
                words.push(b"REPLACE");
            }
            write_command(&mut request, &words);
            sent.push((key.clone(), at));
        }
    }
    if sent.is_empty() {
        for watch in &watched {
            cache.unwatch(watch);
        }
        write::write_simple(out, b"NOKEY");
        return Flow::Continue;
    }
    let mut head = BytesMut::new();
    if let Some((user, password)) = &migrate.auth {
        match user {
            Some(user) => write_command(&mut head, &[b"AUTH", user, password]),
            None => write_command(&mut head, &[b"AUTH", password]),
        }
    }
    let head_replies = 1 + usize::from(migrate.auth.is_some());
    let expected = head_replies + sent.len();
    write_command(&mut head, &[b"SELECT", migrate.db.to_string().as_bytes()]);
    head.extend_from_slice(&request);
    let timeout = Duration::from_millis(migrate.timeout_ms);
    let target = (
        String::from_utf8_lossy(&migrate.host).into_owned(),
        std::str::from_utf8(&migrate.port)
            .ok()
            .and_then(|port| port.parse::<u16>().ok()),
    );
    Flow::Migrate(Box::new(PendingMigrate {
        cache: Arc::clone(cache),
        watched,
        sent,
        head: head_replies,
        copy: migrate.copy,
        transfer: Box::pin(transfer(target, head.freeze(), expected, timeout)),
    }))
}

/// A command in RESP.
fn write_command(out: &mut BytesMut, words: &[&[u8]]) {
    write::write_array_len(out, words.len());
    for word in words {
        write::write_bulk(out, word);
    }
}

/// Connects, sends `request` and reads the first line of `expected` replies, each step
/// within `timeout`.
async fn transfer(
    (host, port): (String, Option<u16>),
    request: Bytes,
    expected: usize,
    timeout: Duration,
) -> Transfer {
    let mut done = Transfer::default();
    let connected = match port {
        Some(port) => {
            tokio::time::timeout(timeout, TcpStream::connect((host.as_str(), port))).await
        }
        None => Ok(Err(std::io::ErrorKind::InvalidInput.into())),
    };
    let Ok(Ok(stream)) = connected else {
        done.failure = Some(CONNECT_FAILED);
        return done;
    };
    let _ = stream.set_nodelay(true);
    let mut stream = BufReader::new(stream);
    let written = tokio::time::timeout(timeout, stream.get_mut().write_all(&request)).await;
    if !matches!(written, Ok(Ok(()))) {
        done.failure = Some(WRITE_FAILED);
        return done;
    }
    let mut line = Vec::with_capacity(64);
    while done.replies.len() < expected {
        line.clear();
        let read = tokio::time::timeout(timeout, read_line(&mut stream, &mut line)).await;
        if !matches!(read, Ok(Ok(true))) {
            done.failure = Some(READ_FAILED);
            return done;
        }
        done.replies.push(line.clone());
    }
    done
}

/// One reply line, without its `\r\n`, at most [`MAX_LINE`] bytes kept; false at the end
/// of the stream.
async fn read_line(stream: &mut BufReader<TcpStream>, line: &mut Vec<u8>) -> std::io::Result<bool> {
    loop {
        let buffer = stream.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(false);
        }
        let (take, end) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&buffer[..take.min(room)]);
        stream.consume(take);
        if end {
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            return Ok(true);
        }
    }
}

/// Removes the keys the target took (unless COPY, and unless they changed meanwhile)
/// and answers as Redis does: `OK`, the target's first error, or the I/O failure.
pub(in crate::resp) fn finish(
    conn: &mut Connection,
    pending: PendingMigrate,
    transfer: Transfer,
    out: &mut BytesMut,
) {
    let cache = &conn.shared.cache;
    let (watched, sent, head, copy) = (&pending.watched, &pending.sent, pending.head, pending.copy);
    let Transfer { replies, failure } = transfer;
    let failed = |line: &Vec<u8>| line.first() == Some(&b'-');
    // An error to AUTH or SELECT fails every key.
    let (head_replies, key_replies) = replies.split_at(head.min(replies.len()));
    let head_error = head_replies.iter().find(|line| failed(line)).cloned();
    let failed_head = head_error.is_some();
    let mut target_error = head_error;
    let now_ms = unix_ms();
    let mut changed = 0;
    // A key named twice is removed once (the second removal would see the first's change).
    let mut removed = std::collections::HashSet::new();
    // What MIGRATE removes is this client's doing (client-side caching's NOLOOP).
    let _origin = ChangeOrigin::enter(conn.session.id);
    {
        let mut held = cache.transaction();
        for ((key, at), reply) in sent.iter().zip(key_replies) {
            // As in Redis, a key the target took is removed even after another's error.
            if failed_head || failed(reply) {
                target_error.get_or_insert_with(|| reply.clone());
                continue;
            }
            let watch = &watched[*at];
            if copy || removed.contains(key) {
                continue;
            }
            if held.watched_unchanged(std::slice::from_ref(watch), now_ms) {
                removed.insert(key);
                let mut db = held
                    .db(conn.session.db)
                    .expect("SELECT only accepts existing databases");
                db.del(&[key], now_ms);
            } else {
                changed += 1;
            }
        }
    }
    drop(pending);
    cache.after_command();
    match (target_error, failure) {
        (Some(error), _) => {
            let text = String::from_utf8_lossy(&error[1..]);
            write::write_error(
                out,
                format!("ERR Target instance replied with error: {text}").as_bytes(),
            );
        }
        (None, Some(failure)) => write::write_error(out, failure.as_bytes()),
        (None, None) if changed > 0 => write::write_error(
            out,
            format!("ERR {changed} of the keys were written while MIGRATE sent them: the target holds them as they were sent, and they were kept here with their new values").as_bytes(),
        ),
        (None, None) => write::write_simple(out, b"OK"),
    }
}
