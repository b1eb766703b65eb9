//! The differential test: the same command sequences go to redis-server 7 and to
//! Quiver, and the replies, errors included, must be equal in RESP2 and RESP3.
//!
//! Two sources of sequences: the hand-written cases in `cases.txt` (every family),
//! and random sequences over a small key space (`random.rs`), seeded. A reply that
//! differs is a bug in Quiver or a deliberate departure listed in
//! `docs/redis-compatibility.md` (and left out of the cases).
//!
//! redis-server comes from the system (`REDIS_SERVER` names another binary). Without
//! it the tests say so and pass, unless `DIFFERENTIAL_REQUIRE_REDIS=1` (CI sets it). A longer
//! random run: `DIFFERENTIAL_COMMANDS=200000 DIFFERENTIAL_SEED=7 cargo test --test main
//! differential -- --nocapture`; `DIFFERENTIAL_SEQUENCE=N` with the same seed replays
//! sequence N alone and prints its commands up to the difference.

mod random;
mod reply;

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reply::Reply;

use crate::support::Server;

/// How a reply is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// Byte for byte, types included.
    Exact,
    /// Elements sorted first: the order is not defined (SMEMBERS, KEYS...).
    Unordered,
    /// A flat array sorted two by two (HGETALL in RESP2), maps sorted.
    UnorderedPairs,
    /// Sent to both, replies not compared (random results, server details).
    Ignore,
    /// Exact, but an integer that is a client id of the block's connections is compared
    /// as which connection it names (`CLIENT TRACKINGINFO`'s redirect).
    ClientIds,
}

/// Most differences listed in one failure.
const MAX_REPORTED: usize = 40;

/// A redis-server on a Unix socket in its own directory, killed on drop.
struct Redis {
    child: Child,
    socket: PathBuf,
}

impl Redis {
    /// Starts redis-server, or `None` when it is not installed and not required.
    fn start(dir: &Path) -> Option<Redis> {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let socket = dir.join("redis.sock");
        let spawned = Command::new(&binary)
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--loglevel", "warning", "--dir"])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(error) if std::env::var_os("DIFFERENTIAL_REQUIRE_REDIS").is_none() => {
                eprintln!("differential test skipped: cannot start {binary}: {error}");
                return None;
            }
            Err(error) => {
                panic!("cannot start {binary} (DIFFERENTIAL_REQUIRE_REDIS is set): {error}")
            }
        };
        let redis = Redis { child, socket };
        let deadline = Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&redis.socket).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The replies compared are Redis 7.0's; a later Redis differs on purpose
        // (listpack encodings, new errors).
        let version = redis.version();
        if !version.starts_with("7.0.") {
            assert!(
                std::env::var_os("DIFFERENTIAL_REQUIRE_REDIS").is_none(),
                "{binary} is redis {version}; the differential test needs 7.0"
            );
            eprintln!("differential test skipped: {binary} is redis {version}, not 7.0");
            return None;
        }
        Some(redis)
    }
}

impl Redis {
    /// `redis_version` from `INFO server`.
    fn version(&self) -> String {
        let mut peer = Peer::unix(self);
        let info = match peer.call(&args(&["INFO", "server"])) {
            Reply::Bulk(text) => String::from_utf8_lossy(&text).into_owned(),
            other => panic!("INFO server: {other}"),
        };
        info.lines()
            .find_map(|line| line.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .trim()
            .to_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection that sends commands and reads replies.
struct Peer {
    reader: BufReader<Box<dyn std::io::Read>>,
    writer: Box<dyn Write>,
}

impl Peer {
    fn tcp(server: &Server) -> Peer {
        let stream = TcpStream::connect(server.resp).expect("connect to Quiver");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        let reader = stream.try_clone().expect("clone");
        Peer {
            reader: BufReader::new(Box::new(reader)),
            writer: Box::new(stream),
        }
    }

    fn unix(redis: &Redis) -> Peer {
        let stream = UnixStream::connect(&redis.socket).expect("connect to redis-server");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let reader = stream.try_clone().expect("clone");
        Peer {
            reader: BufReader::new(Box::new(reader)),
            writer: Box::new(stream),
        }
    }

    fn call(&mut self, args: &[Vec<u8>]) -> Reply {
        if args.first().is_some_and(|word| word == b"!SEND") {
            self.send(&args[1..]);
            return Reply::Simple(b"(sent)".to_vec());
        }
        self.send(args);
        Reply::read(&mut self.reader)
            .unwrap_or_else(|error| panic!("reading the reply to {}: {error}", show(args)))
    }

    /// Sends a command without reading its reply (a blocking one, read later).
    fn send(&mut self, args: &[Vec<u8>]) {
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            request.extend_from_slice(arg);
            request.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&request).expect("send");
    }

    /// The messages pushed to this pattern subscriber before the reply to a PING sent
    /// now.
    fn pushed(&mut self, server: &str) -> Vec<Reply> {
        self.send(&args(&["PING"]));
        let mut messages = Vec::new();
        loop {
            match self.read(server) {
                Reply::Array(items) | Reply::Push(items)
                    if items.first() == Some(&Reply::Bulk(b"pmessage".to_vec())) =>
                {
                    messages.push(Reply::Array(items));
                }
                _ => return messages,
            }
        }
    }

    /// The next reply, without sending anything (a message pushed to a subscriber).
    fn read(&mut self, server: &str) -> Reply {
        Reply::read(&mut self.reader)
            .unwrap_or_else(|error| panic!("reading a message {server} pushed: {error}"))
    }
}

/// Both servers, and the differences found so far.
struct Pair {
    redis: Redis,
    quiver: Server,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    differences: Vec<String>,
}

/// A connection to each server, on the same protocol, with empty databases; and more
/// pairs of connections for the cases that need several clients (`@2 SUBSCRIBE c`).
struct Session {
    redis: Peer,
    quiver: Peer,
    /// Inside MULTI: how each queued command's reply is compared in EXEC's.
    queued: Option<Vec<Compare>>,
    /// Connections 2, 3, ... (redis, quiver), opened when a case first names them.
    others: Vec<(Peer, Peer)>,
    /// `CLIENT ID` of connections 1, 2, ... on each server (redis, quiver), for `$ID<n>`.
    ids: Vec<(Vec<u8>, Vec<u8>)>,
    resp3: bool,
}

/// A reply as compared, or `None` when it is not compared.
fn compared(reply: Reply, compare: Compare) -> Option<Reply> {
    match compare {
        Compare::Exact | Compare::ClientIds => Some(reply),
        Compare::Unordered => Some(reply.sorted()),
        Compare::UnorderedPairs => Some(reply.sorted_pairs()),
        Compare::Ignore => None,
    }
}

/// EXEC's array with each element as its command's comparison asks (an ignored one
/// becomes null).
fn exec_reply(reply: Reply, compares: &[Compare]) -> Reply {
    let Reply::Array(items) = reply else {
        return reply;
    };
    let items = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let compare = compares.get(i).copied().unwrap_or(Compare::Exact);
            compared(item, compare).unwrap_or(Reply::Null)
        })
        .collect();
    Reply::Array(items)
}

impl Pair {
    fn start() -> Option<Pair> {
        let redis_dir = tempfile::tempdir().expect("temp dir");
        let redis = Redis::start(redis_dir.path())?;
        let quiver_dir = tempfile::tempdir().expect("temp dir");
        let quiver = Server::start(quiver_dir.path(), &[]);
        Some(Pair {
            redis,
            quiver,
            _dirs: (redis_dir, quiver_dir),
            differences: Vec::new(),
        })
    }

    /// New connections speaking RESP3 when `resp3`, after FLUSHALL.
    fn session(&self, resp3: bool) -> Session {
        let mut session = Session {
            redis: Peer::unix(&self.redis),
            quiver: Peer::tcp(&self.quiver),
            queued: None,
            others: Vec::new(),
            ids: Vec::new(),
            resp3,
        };
        if resp3 {
            session.both(&args(&["HELLO", "3"]));
        }
        let ids = session.both(&args(&["CLIENT", "ID"]));
        session.ids.push(client_ids(ids));
        session.both(&args(&["FLUSHALL"]));
        session
    }

    /// Sends `command` to both; records a difference (with `context`) and returns
    /// false when the replies differ.
    fn check(
        &mut self,
        session: &mut Session,
        command: &[Vec<u8>],
        compare: Compare,
        context: &str,
    ) -> bool {
        self.check_on(session, 1, command, compare, context)
    }

    /// [`check`](Self::check) on connection `conn` (1 is the session's own; MULTI is
    /// followed there only). `!READ` sends nothing and compares the next reply (a
    /// pub/sub message).
    fn check_on(
        &mut self,
        session: &mut Session,
        conn: usize,
        command: &[Vec<u8>],
        compare: Compare,
        context: &str,
    ) -> bool {
        let (redis_command, quiver_command) = session.with_ids(command);
        if redis_command != quiver_command || conn > 1 {
            let (redis, quiver) = if redis_command != quiver_command {
                session.call_each(conn, self, &redis_command, &quiver_command)
            } else {
                session.other(conn, self, command)
            };
            let (redis, quiver) = match (compared(redis, compare), compared(quiver, compare)) {
                (Some(redis), Some(quiver)) => (redis, quiver),
                _ => return true,
            };
            if redis == quiver {
                return true;
            }
            self.differences.push(format!(
                "{context}: @{conn} {}\n    redis:  {redis}\n    quiver: {quiver}",
                show(command)
            ));
            return false;
        }
        let (redis, quiver) = if command == [b"!READ".to_vec()] {
            (
                session.redis.read("redis-server"),
                session.quiver.read("Quiver"),
            )
        } else {
            session.both(command)
        };
        let (redis, quiver) = match compare {
            Compare::ClientIds => session.ids_named(redis, quiver),
            _ => (redis, quiver),
        };
        let name = command[0].to_ascii_uppercase();
        // Inside MULTI, each queued command's reply comes back in EXEC's array: compare it
        // there the way the command asks.
        let in_multi = session.queued.is_some();
        let (redis, quiver) = match (&name[..], session.queued.as_mut()) {
            (b"EXEC", Some(_)) => {
                let compares = session.queued.take().unwrap_or_default();
                (exec_reply(redis, &compares), exec_reply(quiver, &compares))
            }
            (b"DISCARD", _) => {
                session.queued = None;
                (redis, quiver)
            }
            (_, Some(queued)) if redis == Reply::Simple(b"QUEUED".to_vec()) => {
                queued.push(compare);
                (redis, quiver)
            }
            _ => match (compared(redis, compare), compared(quiver, compare)) {
                (Some(redis), Some(quiver)) => (redis, quiver),
                _ => return true,
            },
        };
        if &name[..] == b"MULTI" && !in_multi && redis == Reply::ok() {
            session.queued = Some(Vec::new());
        }
        if redis == quiver {
            return true;
        }
        self.differences.push(format!(
            "{context}: {}\n    redis:  {redis}\n    quiver: {quiver}",
            show(command)
        ));
        false
    }

    /// Compares the keyspace events connection 2 (subscribed to them) was sent since the
    /// last call; records a difference and returns false when they differ.
    fn check_events(&mut self, session: &mut Session, command: &[Vec<u8>], context: &str) -> bool {
        let (redis, quiver) = &mut session.others[0];
        let (mut redis, mut quiver) = (redis.pushed("redis-server"), quiver.pushed("Quiver"));
        // SORT of a set looks its BY and GET keys up in the set's own layout order.
        if command[0].eq_ignore_ascii_case(b"sort") || command[0].eq_ignore_ascii_case(b"sort_ro") {
            redis = sorted(redis);
            quiver = sorted(quiver);
        }
        if redis == quiver {
            return true;
        }
        let list = |events: Vec<Reply>| {
            events
                .iter()
                .map(|event| event.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.differences.push(format!(
            "{context}: keyspace events of {}
    redis:  [{}]
    quiver: [{}]",
            show(command),
            list(redis),
            list(quiver)
        ));
        false
    }

    /// Fails with every difference found.
    fn finish(self, what: &str) {
        if self.differences.is_empty() {
            return;
        }
        let shown: Vec<&String> = self.differences.iter().take(MAX_REPORTED).collect();
        panic!(
            "{} differences from redis-server in {what}:\n{}",
            self.differences.len(),
            shown
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

impl Session {
    fn both(&mut self, command: &[Vec<u8>]) -> (Reply, Reply) {
        (self.redis.call(command), self.quiver.call(command))
    }

    /// Both replies with the block's client ids named (see [`Compare::ClientIds`]).
    fn ids_named(&self, redis: Reply, quiver: Reply) -> (Reply, Reply) {
        let number = |id: &Vec<u8>| String::from_utf8_lossy(id).parse().unwrap_or(-1);
        let redis_ids: Vec<i64> = self.ids.iter().map(|(r, _)| number(r)).collect();
        let quiver_ids: Vec<i64> = self.ids.iter().map(|(_, q)| number(q)).collect();
        (
            redis.with_ids_named(&redis_ids),
            quiver.with_ids_named(&quiver_ids),
        )
    }

    /// `command` for each server: a word `$ID<n>` becomes that server's `CLIENT ID` of
    /// the block's connection n (opened before).
    fn with_ids(&self, command: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let pick = |word: &Vec<u8>, quiver: bool| {
            let n: Option<usize> = word
                .strip_prefix(b"$ID")
                .and_then(|n| std::str::from_utf8(n).ok()?.parse().ok());
            match n.and_then(|n| self.ids.get(n.checked_sub(1)?)) {
                Some((redis, quiver_id)) => {
                    if quiver {
                        quiver_id.clone()
                    } else {
                        redis.clone()
                    }
                }
                None => word.clone(),
            }
        };
        (
            command.iter().map(|w| pick(w, false)).collect(),
            command.iter().map(|w| pick(w, true)).collect(),
        )
    }

    /// Sends each server its own form of a command on connection `conn`.
    fn call_each(
        &mut self,
        conn: usize,
        pair: &Pair,
        redis_command: &[Vec<u8>],
        quiver_command: &[Vec<u8>],
    ) -> (Reply, Reply) {
        if conn > 1 {
            self.open(conn, pair);
            let (redis, quiver) = &mut self.others[conn - 2];
            return (redis.call(redis_command), quiver.call(quiver_command));
        }
        (
            self.redis.call(redis_command),
            self.quiver.call(quiver_command),
        )
    }

    /// Opens connections up to `conn`.
    fn open(&mut self, conn: usize, pair: &Pair) {
        while self.others.len() < conn - 1 {
            let mut peers = (Peer::unix(&pair.redis), Peer::tcp(&pair.quiver));
            if self.resp3 {
                let hello = args(&["HELLO", "3"]);
                peers.0.call(&hello);
                peers.1.call(&hello);
            }
            let id = args(&["CLIENT", "ID"]);
            let ids = (peers.0.call(&id), peers.1.call(&id));
            self.ids.push(client_ids(ids));
            self.others.push(peers);
        }
    }

    /// Sends `command` on connection `conn` (2 or more) of both servers, opening it
    /// first if needed; `!READ` only reads.
    fn other(&mut self, conn: usize, pair: &Pair, command: &[Vec<u8>]) -> (Reply, Reply) {
        self.open(conn, pair);
        let (redis, quiver) = &mut self.others[conn - 2];
        if command == [b"!READ".to_vec()] {
            return (redis.read("redis-server"), quiver.read("Quiver"));
        }
        let replies = (redis.call(command), quiver.call(command));
        if command.first().is_some_and(|word| word == b"!SEND") {
            wait_blocked(pair);
        }
        replies
    }
}

/// Waits (at most a second) until each server reports a blocked client, so that what the
/// block sends next finds the command `!SEND` sent waiting, on both servers alike; asked
/// on a connection of its own, closed after.
fn wait_blocked(pair: &Pair) {
    for mut peer in [Peer::unix(&pair.redis), Peer::tcp(&pair.quiver)] {
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            let blocked = match peer.call(&args(&["INFO", "clients"])) {
                Reply::Bulk(text) => String::from_utf8_lossy(&text)
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("blocked_clients:")?
                            .trim()
                            .parse::<u64>()
                            .ok()
                    })
                    .unwrap_or(0),
                _ => 0,
            };
            if blocked > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The ids `CLIENT ID` answered, as words.
fn client_ids((redis, quiver): (Reply, Reply)) -> (Vec<u8>, Vec<u8>) {
    let text = |reply: Reply| match reply {
        Reply::Integer(id) => id.to_string().into_bytes(),
        other => panic!("CLIENT ID answered {other}"),
    };
    (text(redis), text(quiver))
}

fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|word| word.as_bytes().to_vec()).collect()
}

/// A command as a line, for reports.
fn show(command: &[Vec<u8>]) -> String {
    command
        .iter()
        .map(|arg| {
            let text = String::from_utf8_lossy(arg);
            if text.is_empty() || text.contains(|c: char| c.is_whitespace() || c == '"') {
                format!("{text:?}")
            } else {
                text.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line of `cases.txt`: a command, the connection it goes on, and how its reply
/// is compared.
struct CaseLine {
    line: usize,
    conn: usize,
    compare: Compare,
    command: Vec<Vec<u8>>,
}

/// The cases: blocks separated by blank lines, each run on fresh connections after
/// FLUSHALL. A line is a command; a leading `~` compares it unordered, `%` as
/// field/value pairs, `?` not at all, `&` naming client ids by connection; then `@N ` sends it on the block's connection N
/// (2, 3, ...; 1 by default). `!READ` reads a pushed message instead of sending, and
/// `!SEND command` sends without reading (a blocking command, read later); a word
/// `$ID<n>` is each server's `CLIENT ID` of connection n; `#` starts a comment line.
fn cases() -> Vec<Vec<CaseLine>> {
    let text = include_str!("cases.txt");
    let mut blocks = vec![Vec::new()];
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.starts_with('#') {
            continue;
        }
        if trimmed.is_empty() {
            if blocks.last().is_some_and(|block| !block.is_empty()) {
                blocks.push(Vec::new());
            }
            continue;
        }
        let (compare, rest) = match trimmed.split_at(1) {
            ("~", rest) => (Compare::Unordered, rest),
            ("%", rest) => (Compare::UnorderedPairs, rest),
            ("?", rest) => (Compare::Ignore, rest),
            ("&", rest) => (Compare::ClientIds, rest),
            _ => (Compare::Exact, trimmed),
        };
        let (conn, rest) = match rest.trim_start().strip_prefix('@') {
            Some(tagged) => {
                let (number, rest) = tagged.split_once(' ').unwrap_or((tagged, ""));
                let conn = number
                    .parse()
                    .unwrap_or_else(|_| panic!("cases.txt line {line_no}: bad connection"));
                (conn, rest)
            }
            None => (1, rest),
        };
        let command =
            split_words(rest).unwrap_or_else(|error| panic!("cases.txt line {line_no}: {error}"));
        blocks.last_mut().expect("a block").push(CaseLine {
            line: line_no,
            conn,
            compare,
            command,
        });
    }
    blocks.retain(|block| !block.is_empty());
    blocks
}

/// Words separated by spaces; `"…"` quotes a word, with `\"`, `\\`, `\r`, `\n`, `\t`
/// and `\xHH` escapes inside.
fn split_words(line: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut words = Vec::new();
    let mut chars = line.trim().chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = Vec::new();
        if c == '"' {
            chars.next();
            loop {
                match chars.next().ok_or("unterminated quote")? {
                    '"' => break,
                    '\\' => match chars.next().ok_or("dangling backslash")? {
                        'r' => word.push(b'\r'),
                        'n' => word.push(b'\n'),
                        't' => word.push(b'\t'),
                        'x' => {
                            let hex: String = chars.by_ref().take(2).collect();
                            word.push(
                                u8::from_str_radix(&hex, 16)
                                    .map_err(|_| format!("bad \\x escape {hex:?}"))?,
                            );
                        }
                        other => word.extend_from_slice(other.to_string().as_bytes()),
                    },
                    other => word.extend_from_slice(other.to_string().as_bytes()),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.extend_from_slice(c.to_string().as_bytes());
                chars.next();
            }
        }
        words.push(word);
    }
    if words.is_empty() {
        return Err("no command".into());
    }
    Ok(words)
}

#[test]
fn hand_written_cases_match_redis() {
    let Some(mut pair) = Pair::start() else {
        return;
    };
    let blocks = cases();
    let mut commands = 0;
    for resp3 in [false, true] {
        let protocol = if resp3 { "RESP3" } else { "RESP2" };
        for block in &blocks {
            let mut session = pair.session(resp3);
            for case in block {
                commands += 1;
                let context = format!("cases.txt:{} {protocol}", case.line);
                pair.check_on(
                    &mut session,
                    case.conn,
                    &case.command,
                    case.compare,
                    &context,
                );
            }
        }
    }
    eprintln!(
        "differential: {commands} hand-written commands, {} differences",
        pair.differences.len()
    );
    pair.finish("the hand-written cases");
}

/// Every row of Quiver's command table against redis-server's: `COMMAND INFO` (name,
/// arity, flags, key positions, ACL categories, tips, key specifications with their
/// flags, subcommands), `COMMAND GETKEYS` and `COMMAND GETKEYSANDFLAGS` on a request of
/// the command's arity.
#[test]
fn command_table_matches_redis() {
    let Some(mut pair) = Pair::start() else {
        return;
    };
    let mut session = pair.session(true);
    let names = match session.quiver.call(&args(&["COMMAND", "LIST"])) {
        Reply::Array(names) => names,
        other => panic!("COMMAND LIST: {other}"),
    };
    assert!(names.len() > 100, "{} commands", names.len());
    for name in names {
        let Reply::Bulk(name) = name else {
            panic!("COMMAND LIST holds {name}");
        };
        let info = vec![b"COMMAND".to_vec(), b"INFO".to_vec(), name.clone()];
        let (redis, quiver) = session.both(&info);
        let quiver = comparable_info(quiver, None);
        let redis = comparable_info(redis, Some(&quiver));
        if redis != quiver {
            pair.differences.push(format!(
                "COMMAND INFO {}\n    redis:  {redis}\n    quiver: {quiver}",
                String::from_utf8_lossy(&name)
            ));
            continue;
        }
        for entry in command_entries(&quiver) {
            if let Some(request) = sample_request(entry) {
                for subcommand in ["GETKEYS", "GETKEYSANDFLAGS"] {
                    let mut getkeys = args(&["COMMAND", subcommand]);
                    getkeys.extend(request.iter().cloned());
                    pair.check(&mut session, &getkeys, Compare::Exact, "command table");
                }
            }
        }
    }
    pair.finish("the command table");
}

/// A `COMMAND INFO` reply as compared: sets sorted (their order means nothing), but for
/// the ACL categories (field 6), which Redis lists in ACL CAT's order and RESP2 clients
/// see as an ordered array; and, for redis-server's reply, only the subcommands Quiver's
/// `like` has.
fn comparable_info(reply: Reply, like: Option<&Reply>) -> Reply {
    let subcommand_names = |reply: &Reply| -> Vec<Reply> {
        command_entries(reply)
            .iter()
            .skip(1)
            .filter_map(|entry| entry.first().cloned())
            .collect()
    };
    let keep = like.map(subcommand_names);
    let Reply::Array(commands) = reply else {
        return reply;
    };
    let command = |fields: Vec<Reply>| {
        let fields = fields
            .into_iter()
            .enumerate()
            .map(|(at, field)| match field {
                Reply::Set(items) if at != 6 => Reply::Set(sorted(items)),
                other => other,
            })
            .collect();
        Reply::Array(fields)
    };
    Reply::Array(
        commands
            .into_iter()
            .map(|entry| {
                let Reply::Array(mut fields) = entry else {
                    return entry;
                };
                if let Some(Reply::Array(subs)) = fields.get_mut(9) {
                    if let Some(keep) = &keep {
                        subs.retain(|sub| {
                            matches!(sub, Reply::Array(f) if f.first().is_some_and(|n| keep.contains(n)))
                        });
                    }
                    let mut all: Vec<Reply> = std::mem::take(subs)
                        .into_iter()
                        .map(|sub| match sub {
                            Reply::Array(f) => command(f),
                            other => other,
                        })
                        .collect();
                    all.sort();
                    *subs = all;
                }
                command(fields)
            })
            .collect(),
    )
}

fn sorted(mut items: Vec<Reply>) -> Vec<Reply> {
    items.sort();
    items
}

/// The entries of one `COMMAND INFO` reply: each command and its subcommands.
fn command_entries(info: &Reply) -> Vec<&[Reply]> {
    let mut entries = Vec::new();
    let Reply::Array(commands) = info else {
        return entries;
    };
    for command in commands {
        if let Reply::Array(fields) = command {
            entries.push(fields.as_slice());
            if let Some(Reply::Array(subs)) = fields.get(9) {
                for sub in subs {
                    if let Reply::Array(fields) = sub {
                        entries.push(fields.as_slice());
                    }
                }
            }
        }
    }
    entries
}

/// A request for a `COMMAND INFO` entry that takes keys: its name (a subcommand as two
/// words), then `k1`, `k2`... up to its arity (two more when variadic), with `1` where a
/// key specification counts keys.
fn sample_request(entry: &[Reply]) -> Option<Vec<Vec<u8>>> {
    let (Reply::Bulk(name), Reply::Integer(arity)) = (entry.first()?, entry.get(1)?) else {
        return None;
    };
    let specs = match entry.get(8)? {
        Reply::Set(specs) | Reply::Array(specs) if !specs.is_empty() => specs,
        _ => return None,
    };
    let mut request: Vec<Vec<u8>> = name.split(|&b| b == b'|').map(<[u8]>::to_vec).collect();
    let argc = if *arity > 0 {
        *arity as usize
    } else {
        (-*arity) as usize + 2
    };
    let mut numkeys = None;
    for spec in specs {
        let text = spec.to_string();
        if text.contains("\"keynum\"") {
            let index = text
                .split("\"index\": :")
                .nth(1)?
                .split('}')
                .next()?
                .parse::<usize>()
                .ok()?;
            numkeys = Some(index);
        }
    }
    let mut n = 0;
    while request.len() < argc.max(numkeys.map_or(0, |at| at + 2)) {
        n += 1;
        request.push(if numkeys == Some(request.len()) {
            b"1".to_vec()
        } else {
            format!("k{n}").into_bytes()
        });
    }
    Some(request)
}

#[test]
fn random_sequences_match_redis() {
    let Some(mut pair) = Pair::start() else {
        return;
    };
    let seed = env_number("DIFFERENTIAL_SEED", 0x0d1f_f5ee_d000_0001);
    let total = env_number("DIFFERENTIAL_COMMANDS", 4_000);
    // Only this sequence (the ones before it are drawn, not sent): to replay a report.
    let only = std::env::var("DIFFERENTIAL_SEQUENCE")
        .ok()
        .map(|_| env_number("DIFFERENTIAL_SEQUENCE", 0));
    let mut rng = random::Rng::new(seed);
    let mut sent = 0;
    let mut sequence = 0;
    while sent < total {
        // A whole sequence is drawn first, so sequence N is the same whatever came before.
        let commands: Vec<_> = (0..random::SEQUENCE_LEN)
            .map(|_| random::command(&mut rng))
            .collect();
        if only.is_some_and(|only| only != sequence) {
            sequence += 1;
            continue;
        }
        let resp3 = sequence % 2 == 1;
        // Every third sequence, connection 2 watches every keyspace event and they are
        // compared after each command.
        let notify = sequence % 3 == 2;
        let mut session = pair.session(resp3);
        if notify {
            session.both(&args(&[
                "CONFIG",
                "SET",
                "notify-keyspace-events",
                KEYSPACE_EVENTS,
            ]));
            let subscribe = args(&["PSUBSCRIBE", "__key*__:*"]);
            pair.check_on(&mut session, 2, &subscribe, Compare::Exact, "subscribing");
        }
        for (step, (command, compare)) in commands.iter().enumerate() {
            sent += 1;
            let context = format!(
                "seed {seed:#x} sequence {sequence} step {step} {}",
                if resp3 { "RESP3" } else { "RESP2" }
            );
            // After a difference the two key spaces may differ: start a new sequence.
            if !pair.check(&mut session, command, *compare, &context)
                || (notify && !pair.check_events(&mut session, command, &context))
            {
                if only.is_some() {
                    let before: Vec<String> =
                        commands[..step].iter().map(|(c, _)| show(c)).collect();
                    eprintln!(
                        "sequence {sequence} before the difference:\n  {}",
                        before.join("\n  ")
                    );
                }
                break;
            }
        }
        if notify {
            session.both(&args(&["CONFIG", "SET", "notify-keyspace-events", ""]));
        }
        sequence += 1;
        if only.is_some() {
            break;
        }
    }
    eprintln!(
        "differential: {sent} random commands in {sequence} sequences (seed {seed:#x}), {} differences",
        pair.differences.len()
    );
    pair.finish(&format!("random sequences (seed {seed:#x})"));
}

/// The keyspace events the random sequences watch: every class, key misses and new keys
/// included.
const KEYSPACE_EVENTS: &str = "KEAmn";

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={text:?} is not a number"))
        }
        Err(_) => default,
    }
}

/// FUNCTION DUMP's payload moves libraries both ways: dumped by redis-server (its
/// code LZF-compressed) and restored into Quiver, then dumped by Quiver and restored into redis-server, the
/// functions callable on each side (Redis checks the version and CRC64 Quiver wrote).
#[test]
fn function_dump_moves_between_servers() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let mut session = pair.session(false);
    session.both(&args(&["FUNCTION", "FLUSH"]));
    let library = "#!lua name=moved\nredis.register_function{function_name='twice', callback=function(keys, args) return tonumber(args[1]) * 2 end, flags={'no-writes'}}";
    let loaded = session.redis.call(&args(&["FUNCTION", "LOAD", library]));
    assert_eq!(loaded, Reply::Bulk(b"moved".to_vec()));
    let Reply::Bulk(payload) = session.redis.call(&args(&["FUNCTION", "DUMP"])) else {
        panic!("redis FUNCTION DUMP");
    };
    let restore = |payload: &[u8]| {
        vec![
            b"FUNCTION".to_vec(),
            b"RESTORE".to_vec(),
            payload.to_vec(),
            b"REPLACE".to_vec(),
        ]
    };
    assert_eq!(
        session.quiver.call(&restore(&payload)),
        Reply::Simple(b"OK".to_vec())
    );
    let call = args(&["FCALL_RO", "twice", "0", "21"]);
    assert_eq!(session.quiver.call(&call), Reply::Integer(42));
    let Reply::Bulk(ours) = session.quiver.call(&args(&["FUNCTION", "DUMP"])) else {
        panic!("quiver FUNCTION DUMP");
    };
    // Redis compresses the code with LZF; Quiver writes it plain, which Redis reads.
    session.redis.call(&args(&["FUNCTION", "FLUSH"]));
    assert_eq!(
        session.redis.call(&restore(&ours)),
        Reply::Simple(b"OK".to_vec())
    );
    assert_eq!(session.redis.call(&call), Reply::Integer(42));
    // A damaged payload is refused by both, and nothing changes.
    let mut damaged = ours.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0xff;
    let (redis, quiver) = session.both(&restore(&damaged));
    assert_eq!(redis, quiver);
    assert_eq!(session.quiver.call(&call), Reply::Integer(42));
    session.both(&args(&["FUNCTION", "FLUSH"]));
}

/// MONITOR shows the same commands as redis-server, in the same order and form: script
/// calls before the commands they run (`lua`), a transaction's commands when EXEC runs
/// them, syntax errors but not unknown commands, admin commands not at all, secrets
/// redacted, the database after SELECT.
#[test]
fn monitor_shows_what_redis_shows() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let mut session = pair.session(false);
    let mut watchers = (Peer::unix(&pair.redis), Peer::tcp(&pair.quiver));
    let ok = Reply::Simple(b"OK".to_vec());
    assert_eq!(watchers.0.call(&args(&["MONITOR"])), ok);
    assert_eq!(watchers.1.call(&args(&["MONITOR"])), ok);
    let sequence: [&[&str]; 14] = [
        &["SET", "a", "x y\"z\n\u{1}\\"],
        &[
            "EVAL",
            "redis.call('set','k','v') return redis.call('get','k')",
            "0",
        ],
        &["CONFIG", "GET", "maxmemory"],
        &["NOSUCH"],
        &["GET"],
        &["SET", "a", "b", "NX", "XX"],
        &["MULTI"],
        &["SET", "m", "1"],
        &["INCR", "m"],
        &["EXEC"],
        &["AUTH", "secret"],
        &["HELLO", "2", "AUTH", "user", "secret", "SETNAME", "n"],
        &["SELECT", "2"],
        &["PING"],
    ];
    for command in sequence {
        session.both(&args(command));
    }
    // `<time> [<db> <address>] <args>`, the time checked and the address named by kind.
    let lines = |peer: &mut Peer, server: &str| {
        let mut lines = Vec::new();
        loop {
            let Reply::Simple(line) = peer.read(server) else {
                panic!("{server} sent MONITOR something other than a status line");
            };
            let line = String::from_utf8(line).expect("UTF-8");
            let (time, rest) = line.split_once(' ').expect("a time first");
            let (seconds, micros) = time.split_once('.').expect("seconds.micros");
            assert!(
                seconds.parse::<u64>().is_ok() && micros.len() == 6,
                "{line}"
            );
            let (place, shown) = rest.split_once("] ").expect("[db address]");
            let (db, address) = place[1..].split_once(' ').expect("db and address");
            let kind = if address == "lua" { "lua" } else { "client" };
            lines.push(format!("[{db} {kind}] {shown}"));
            if shown == "\"PING\"" {
                return lines;
            }
        }
    };
    let redis = lines(&mut watchers.0, "redis-server");
    let quiver = lines(&mut watchers.1, "Quiver");
    assert_eq!(quiver, redis);
    assert!(redis.len() > 10, "{redis:?}");
}
