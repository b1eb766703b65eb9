//! MONITOR: every command the server runs, as a line to each monitoring client, in
//! Redis's format (`+1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"`). Commands
//! flagged admin or skip-monitor are not shown, nor requests refused before they run;
//! AUTH's and HELLO AUTH's secrets are redacted. A command runs with one atomic load
//! more while nobody monitors.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{BufMut, Bytes, BytesMut};
use quiver_resp::Request;
use tokio::sync::Notify;

use crate::clock::unix_micros;
use crate::resp::table::{CommandSpec, flag};

/// The monitoring clients of a server.
#[derive(Debug, Default)]
pub struct Monitors {
    /// How many clients monitor: commands check this first.
    active: AtomicUsize,
    feeds: Mutex<Vec<(u64, Arc<Feed>)>>,
}

/// The lines waiting for one monitoring client.
#[derive(Debug)]
pub struct Feed {
    lines: Mutex<BytesMut>,
    ready: Notify,
    /// Its lines outgrew the output buffer limit: the client is disconnected.
    overflowed: AtomicBool,
    limit: usize,
}

/// The client's lines outgrew `resp.max_output_buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflowed;

impl Feed {
    /// Moves the waiting lines to `out`.
    pub fn take(&self, out: &mut BytesMut) -> Result<(), Overflowed> {
        if self.overflowed.load(Ordering::Acquire) {
            return Err(Overflowed);
        }
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        out.extend_from_slice(&lines);
        lines.clear();
        Ok(())
    }

    /// Resolves when lines may be waiting.
    pub async fn ready(&self) {
        self.ready.notified().await;
    }

    fn push(&self, line: &[u8]) {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() + line.len() > self.limit {
            lines.clear();
            self.overflowed.store(true, Ordering::Release);
        } else {
            lines.extend_from_slice(line);
        }
        drop(lines);
        self.ready.notify_one();
    }
}

/// Where a command came from, as its line says.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    Client(&'a std::net::SocketAddr),
    Script,
}

impl Monitors {
    /// Whether anyone monitors.
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed) > 0
    }

    /// Adds client `id`, whose lines may wait up to `limit` bytes.
    pub fn add(&self, id: u64, limit: usize) -> Arc<Feed> {
        let feed = Arc::new(Feed {
            lines: Mutex::new(BytesMut::new()),
            ready: Notify::new(),
            overflowed: AtomicBool::new(false),
            limit,
        });
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        feeds.push((id, Arc::clone(&feed)));
        self.active.store(feeds.len(), Ordering::Relaxed);
        feed
    }

    /// Removes client `id`, if it monitors.
    pub fn remove(&self, id: u64) {
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        feeds.retain(|(client, _)| *client != id);
        self.active.store(feeds.len(), Ordering::Relaxed);
    }

    /// Shows `request` to every monitoring client, unless its command is one Redis
    /// does not show.
    pub fn feed(&self, spec: &CommandSpec, request: &Request, db: usize, origin: Origin<'_>) {
        if shows(spec) {
            self.feed_text(&shown_args(spec, request), db, origin);
        }
    }

    /// Shows `args` (from [`shown_args`]) to every monitoring client.
    pub fn feed_text(&self, args: &[u8], db: usize, origin: Origin<'_>) {
        let micros = unix_micros();
        let mut line = format!("+{}.{:06} [{db} ", micros / 1_000_000, micros % 1_000_000);
        match origin {
            Origin::Client(peer) => {
                let _ = write!(line, "{peer}");
            }
            Origin::Script => line.push_str("lua"),
        }
        line.push_str("] ");
        let mut bytes = BytesMut::with_capacity(line.len() + args.len() + 2);
        bytes.put_slice(line.as_bytes());
        bytes.put_slice(args);
        bytes.put_slice(b"\r\n");
        let feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        for (_, feed) in feeds.iter() {
            feed.push(&bytes);
        }
    }
}

/// EVAL, EVALSHA, FCALL and their read-only forms: skip-monitor in the table, yet shown
/// (before the commands they run), as Redis shows them.
fn is_script_call(spec: &CommandSpec) -> bool {
    matches!(
        spec.name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    )
}

/// Whether a command is shown at all (a MULTI queues the text of those that are).
pub fn shows(spec: &CommandSpec) -> bool {
    !spec.has(flag::ADMIN) && (!spec.has(flag::SKIP_MONITOR) || is_script_call(spec))
}

/// The arguments as a monitor line shows them: each quoted and escaped, the secrets of
/// AUTH and HELLO AUTH redacted.
pub fn shown_args(spec: &CommandSpec, request: &Request) -> Bytes {
    let args: Vec<&[u8]> = request.args().collect();
    let mut secret = vec![spec.name == "auth"; args.len()];
    if spec.name == "hello" {
        // HELLO protover [AUTH username password] [SETNAME name], options in any order.
        let mut i = 2;
        while i < args.len() {
            if args[i].eq_ignore_ascii_case(b"auth") {
                secret[i + 1..args.len().min(i + 3)].fill(true);
                i += 3;
            } else {
                i += if args[i].eq_ignore_ascii_case(b"setname") {
                    2
                } else {
                    1
                };
            }
        }
    }
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        if secret[i] && i > 0 {
            out.extend_from_slice(b"\"(redacted)\"");
        } else {
            quote(&mut out, arg);
        }
    }
    Bytes::from(out)
}

/// `arg` in double quotes, escaped as Redis's `sdscatrepr` does.
pub fn quote(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'"');
    for &byte in arg {
        match byte {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', byte]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(byte),
            _ => out.extend_from_slice(format!("\\x{byte:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(line: &[&str]) -> String {
        let request = Request::from_args(line);
        let spec = crate::resp::table::resolve(&request).unwrap();
        String::from_utf8(shown_args(spec, &request).to_vec()).unwrap()
    }

    #[test]
    fn arguments_are_quoted_and_secrets_redacted() {
        assert_eq!(
            shown(&["SET", "a", "x y\"z\n\\"]),
            r#""SET" "a" "x y\"z\n\\""#
        );
        assert_eq!(
            shown(&["set", "b", "\u{1}é"]),
            r#""set" "b" "\x01\xc3\xa9""#
        );
        assert_eq!(
            shown(&["auth", "u", "p"]),
            r#""auth" "(redacted)" "(redacted)""#
        );
        assert_eq!(
            shown(&["hello", "3", "AUTH", "u", "p", "SETNAME", "n"]),
            r#""hello" "3" "AUTH" "(redacted)" "(redacted)" "SETNAME" "n""#
        );
    }

    #[test]
    fn a_full_feed_disconnects_its_client() {
        let monitors = Monitors::default();
        let feed = monitors.add(1, 100);
        assert!(monitors.active());
        let request = Request::from_args(["get", "k"]);
        let spec = crate::resp::table::resolve(&request).unwrap();
        let peer: std::net::SocketAddr = "127.0.0.1:5".parse().unwrap();
        monitors.feed(spec, &request, 0, Origin::Client(&peer));
        let mut out = BytesMut::new();
        feed.take(&mut out).unwrap();
        let line = String::from_utf8(out.to_vec()).unwrap();
        assert!(line.starts_with('+') && line.ends_with(" [0 127.0.0.1:5] \"get\" \"k\"\r\n"));
        for _ in 0..10 {
            monitors.feed(spec, &request, 0, Origin::Script);
        }
        assert_eq!(feed.take(&mut out), Err(Overflowed));
        monitors.remove(1);
        assert!(!monitors.active());
    }
}
