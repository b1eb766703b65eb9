//! Starting `quiver serve` as a child process on 127.0.0.1 port 0 and talking
//! to it over raw sockets. Every child is killed and reaped on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long a child may take to start listening; generous for a loaded CI box.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `quiver serve`.
pub struct Server {
    child: Child,
    pub http: SocketAddr,
    pub resp: SocketAddr,
    pub native: SocketAddr,
    /// The QUIC listener (UDP).
    pub quic: SocketAddr,
    /// Log lines up to and including the last `listening` line.
    pub startup_log: Vec<String>,
    lines: Receiver<String>,
}

/// Outcome of a start attempt that may be refused.
pub enum Started {
    Running(Server),
    Exited { status: ExitStatus, stderr: String },
}

impl Server {
    /// Starts a server on `data_dir` with an ephemeral HTTP port and JSON logs.
    pub fn start(data_dir: &Path, extra: &[&str]) -> Server {
        match Server::try_start(data_dir, extra) {
            Started::Running(server) => server,
            Started::Exited { status, stderr } => panic!("server exited with {status}: {stderr}"),
        }
    }

    pub fn try_start(data_dir: &Path, extra: &[&str]) -> Started {
        let mut child = Command::new(env!("CARGO_BIN_EXE_quiver"))
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args([
                "--http-addr",
                "127.0.0.1:0",
                "--resp-addr",
                "127.0.0.1:0",
                "--native-addr",
                "127.0.0.1:0",
                "--quic-addr",
                "127.0.0.1:0",
                "--log-format",
                "json",
                "--log-level",
                "info",
            ])
            .args(extra)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn quiver");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + START_TIMEOUT;
        let mut seen = Vec::new();
        let (mut http, mut resp, mut native, mut quic) = (None, None, None, None);
        while Instant::now() < deadline {
            match lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    http = http.or_else(|| listening_addr(&line, "http"));
                    resp = resp.or_else(|| listening_addr(&line, "resp"));
                    native = native.or_else(|| listening_addr(&line, "native"));
                    quic = quic.or_else(|| listening_addr(&line, "quic"));
                    seen.push(line);
                    if let (Some(http), Some(resp), Some(native), Some(quic)) =
                        (http, resp, native, quic)
                    {
                        return Started::Running(Server {
                            child,
                            http,
                            resp,
                            native,
                            quic,
                            startup_log: seen,
                            lines,
                        });
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Ok(Some(status)) = child.try_wait() {
                return exited(status, seen, &lines);
            }
        }
        let _ = child.kill();
        let status = child.wait().expect("reap child");
        exited(status, seen, &lines)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a signal by name (`TERM`, `INT`) with the system's `kill`.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Waits up to `timeout` for a log line containing `needle`.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in a JSON `listening` log line of `listener`, if this is one.
pub fn listening_addr(line: &str, listener: &str) -> Option<SocketAddr> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    if value["message"] != "listening" || value["listener"] != listener {
        return None;
    }
    value["addr"].as_str()?.parse().ok()
}

/// The QUIC certificate fingerprint the server logged at start-up.
pub fn logged_fingerprint(server: &Server) -> String {
    let line = server
        .startup_log
        .iter()
        .find(|line| line.contains("fingerprint"))
        .expect("the server logs its QUIC certificate fingerprint");
    let value: serde_json::Value = serde_json::from_str(line).expect("JSON log line");
    let fingerprint = value["fingerprint"].as_str().expect("fingerprint field");
    assert_eq!(fingerprint.len(), 64, "{line}");
    fingerprint.to_owned()
}

/// A `redis` crate connection to the server's RESP listener.
/// One field of `INFO section`, as text.
pub fn info_field(con: &mut redis::Connection, section: &str, field: &str) -> String {
    let info: String = redis::cmd("INFO").arg(section).query(con).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {info}"))
        .to_owned()
}

/// The error a command answered, as `CODE detail`.
pub fn error_text<T: std::fmt::Debug>(result: redis::RedisResult<T>) -> String {
    let error = result.expect_err("the server should answer an error");
    format!(
        "{} {}",
        error.code().unwrap_or("?"),
        error.detail().unwrap_or_default()
    )
}

pub fn redis_connection(server: &Server) -> redis::Connection {
    let client = redis::Client::open(format!("redis://{}/", server.resp)).expect("redis url");
    client
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("connect to the RESP listener")
}

/// A connection to `addr` whose reads give up after 10 s.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
}

/// Sends raw bytes and reads until the server closes or `expect_len` bytes arrived.
pub fn raw_exchange(addr: SocketAddr, request: &[u8], expect_len: usize) -> Vec<u8> {
    let mut stream = connect(addr);
    stream.write_all(request).expect("send");
    read_up_to(&mut stream, expect_len)
}

/// Reads until `expect_len` bytes arrived or the stream ends or times out.
pub fn read_up_to(stream: &mut TcpStream, expect_len: usize) -> Vec<u8> {
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    while reply.len() < expect_len {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => reply.extend_from_slice(&chunk[..n]),
        }
    }
    reply
}

/// One HTTP/1.1 GET with `Connection: close`: (status code, headers+body text).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = connect(addr);
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    read_response(&mut stream)
}

/// Reads a whole `Connection: close` response.
pub fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read response");
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    (status, text)
}

/// A server that stopped while starting, with all it wrote: the reader thread sends
/// what is still in the pipe after the exit, then stops (bounded, in case a child of
/// the process holds the pipe open).
fn exited(status: ExitStatus, mut seen: Vec<String>, lines: &mpsc::Receiver<String>) -> Started {
    let until = Instant::now() + Duration::from_secs(5);
    while let Ok(line) = lines.recv_timeout(until.saturating_duration_since(Instant::now())) {
        seen.push(line);
    }
    Started::Exited {
        status,
        stderr: seen.join("\n"),
    }
}
