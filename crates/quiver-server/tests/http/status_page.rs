//! The status page in headless Chromium (Debian's `chromium`), driven over the DevTools
//! protocol on a pipe: the page loads from a running server, its figures change as traffic
//! flows, and a screenshot is taken. With `UPDATE_STATUS_SCREENSHOT=1` the screenshot
//! replaces `docs/status-page.png`.
//!
//! Without Chromium the test says so and passes, unless `STATUS_PAGE_REQUIRE_CHROMIUM` is
//! set (CI sets it, and installs Chromium).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::support::Server;

/// Chromium with its DevTools protocol on stdin (commands) and stdout (replies).
struct Browser {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
    session: Option<String>,
}

impl Browser {
    fn start(profile: &std::path::Path) -> Option<Browser> {
        let chromium = ["chromium", "chromium-browser"]
            .into_iter()
            .find(|name| Command::new(name).arg("--version").output().is_ok())?;
        // The protocol pipe is fds 3 (commands in) and 4 (replies out): the shell maps
        // them from the pipes this test holds.
        let script = format!(
            "exec {chromium} --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
             --disable-background-networking --disable-component-update --disable-sync \
             --user-data-dir={} --remote-debugging-pipe 3<&0 4>&1 </dev/null >/dev/null 2>/dev/null",
            profile.display()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .ok()?;
        let input = child.stdin.take()?;
        let output = BufReader::new(child.stdout.take()?);
        Some(Browser {
            child,
            input,
            output,
            next_id: 1,
            session: None,
        })
    }

    /// Sends a command (to the page once attached) and returns its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = &self.session
            && !method.starts_with("Target.")
            && !method.starts_with("Browser.")
        {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.input.write_all(&bytes).expect("write to chromium");
        loop {
            let mut reply = Vec::new();
            self.output
                .read_until(0, &mut reply)
                .expect("read from chromium");
            assert!(!reply.is_empty(), "chromium closed its pipe");
            reply.pop();
            let reply: Value = serde_json::from_slice(&reply).expect("a JSON message");
            if reply["id"] == id {
                assert!(reply["error"].is_null(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    fn open(&mut self, url: &str) {
        let target = self.call("Target.createTarget", json!({ "url": url }));
        let attached = self.call(
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        self.session = Some(attached["sessionId"].as_str().unwrap().to_owned());
    }

    fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        );
        result["result"]["value"].clone()
    }
}

impl Drop for Browser {
    /// Closes Chromium (its helper processes go with it), killing it if it lingers.
    fn drop(&mut self) {
        let close = format!("{}\0", json!({ "id": 0, "method": "Browser.close" }));
        let _ = self.input.write_all(close.as_bytes());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Publishes and reads cache keys over raw HTTP/1.1 until `stop`.
fn traffic(addr: SocketAddr, stop: Arc<AtomicBool>) {
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let requests = [
            format!(
                "POST /v1/streams/acme/page/orders/messages HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nConnection: close\r\n\r\nm{:04}",
                i % 10_000
            ),
            format!(
                "PUT /v1/cache/0/page{} HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nConnection: close\r\n\r\nv",
                i % 10
            ),
            format!(
                "GET /v1/cache/0/page{} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                i % 20
            ),
        ];
        for request in requests {
            let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
                return;
            };
            stream.write_all(request.as_bytes()).expect("send");
            let mut reply = Vec::new();
            let _ = stream.read_to_end(&mut reply);
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_status_page_shows_live_figures_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut browser) = Browser::start(&dir.path().join("chromium-profile")) else {
        assert!(
            std::env::var_os("STATUS_PAGE_REQUIRE_CHROMIUM").is_none(),
            "STATUS_PAGE_REQUIRE_CHROMIUM is set but chromium cannot be started"
        );
        eprintln!("skipped: chromium is not installed");
        return;
    };
    let server = Server::start(
        &dir.path().join("data"),
        &["--cache-save", "", "--streams-durable", "acme/page/>"],
    );
    let stop = Arc::new(AtomicBool::new(false));
    let publisher = {
        let stop = Arc::clone(&stop);
        let addr = server.http;
        std::thread::spawn(move || traffic(addr, stop))
    };
    browser.open(&format!("http://{}/", server.http));

    let deadline = Instant::now() + Duration::from_secs(30);
    let (first, last) = loop {
        // Null until the page has loaded.
        let figures = browser.eval(
            "(() => { const p = document.getElementById('published-total'); \
              if (!p) return null; \
              return [Number(document.getElementById('updates').textContent), \
                      Number(p.dataset.first || -1), Number(p.dataset.value || -1), \
                      document.getElementById('live').textContent]; })()",
        );
        let updates = figures[0].as_u64().unwrap_or(0);
        let first = figures[1].as_i64().unwrap_or(-1);
        let last = figures[2].as_i64().unwrap_or(-1);
        if updates >= 3 && last > first && first >= 0 {
            assert_eq!(figures[3], "live");
            break (first, last);
        }
        assert!(
            Instant::now() < deadline,
            "the page's figures did not change within 30 s: {figures}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(last > first, "published went from {first} to {last}");
    let row = browser.eval(
        "(() => { const r = document.querySelector('tr[data-stream=\"acme/page/orders\"]'); \
          return r ? Array.from(r.cells).map(c => c.textContent) : null; })()",
    );
    assert_eq!(row[1], "durable", "{row}");
    let keys = browser.eval("document.getElementById('cache-keys').textContent");
    assert_ne!(keys, "0", "the cache's keys show");
    let hit_rate = browser.eval("document.getElementById('cache-hit-rate').textContent");
    assert!(hit_rate.as_str().unwrap().ends_with('%'), "{hit_rate}");
    let listeners = browser.eval("document.getElementById('listeners').rows.length");
    assert_eq!(listeners, 4, "http, resp, native and quic");

    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": false }),
    );
    let shot = browser.call("Page.captureScreenshot", json!({ "format": "png" }));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG screenshot");
    if std::env::var_os("UPDATE_STATUS_SCREENSHOT").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/status-page.png");
        std::fs::write(path, &png).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    publisher.join().unwrap();
}
