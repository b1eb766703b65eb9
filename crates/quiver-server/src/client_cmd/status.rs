//! `quiver status`: a running server's figures, read from its HTTP listener's
//! `/api/metrics` (the status page's source), as a few readable lines or the JSON itself.

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::output::{Out, bytes_human, table};
use super::time::format_duration;
use super::{CommandError, Common};
use crate::config::Loaded;

/// Most bytes of a reply read.
const MAX_REPLY: u64 = 64 << 20;

pub async fn run(common: &Common, out: &mut Out, http: Option<&str>) -> Result<(), CommandError> {
    let addr = match http {
        Some(addr) => addr.to_owned(),
        None => {
            let loaded =
                Loaded::load(&common.inputs).map_err(|e| CommandError::Input(e.to_string()))?;
            let mut addr = loaded.config.http.listener.addr;
            if addr.ip().is_unspecified() {
                addr.set_ip([127, 0, 0, 1].into());
            }
            addr.to_string()
        }
    };
    let figures = tokio::time::timeout(common.timeout, fetch(&addr))
        .await
        .map_err(|_| {
            CommandError::Unreachable(format!("{addr} did not answer within the timeout"))
        })??;
    if out.json() {
        out.value(&figures);
        return Ok(());
    }
    print(out, &figures);
    Ok(())
}

/// `GET /api/metrics` over one HTTP/1.1 connection.
async fn fetch(addr: &str) -> Result<Value, CommandError> {
    let mut stream = TcpStream::connect(addr).await.map_err(|error| {
        CommandError::Unreachable(format!(
            "cannot reach the HTTP listener at {addr}: {error}; is a server running there? say where with --http HOST:PORT"
        ))
    })?;
    let request = format!("GET /api/metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let io = |error: std::io::Error| CommandError::Unreachable(format!("{addr}: {error}"));
    stream.write_all(request.as_bytes()).await.map_err(io)?;
    let mut reply = Vec::new();
    stream
        .take(MAX_REPLY)
        .read_to_end(&mut reply)
        .await
        .map_err(io)?;
    let text = String::from_utf8_lossy(&reply);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    if !head.starts_with("HTTP/") {
        return Err(CommandError::Unreachable(format!(
            "{addr} does not speak HTTP: is it Quiver's HTTP listener (http.addr)? say where with --http HOST:PORT"
        )));
    }
    if !head.starts_with("HTTP/1.1 200") {
        let status = head.lines().next().unwrap_or_default();
        return Err(CommandError::Refused(format!("{addr} answered {status}")));
    }
    serde_json::from_str(body).map_err(|error| {
        CommandError::Refused(format!("{addr} sent figures that are not JSON: {error}"))
    })
}

fn print(out: &mut Out, f: &Value) {
    let n = |v: &Value| v.as_u64().map_or("-".to_owned(), |n| n.to_string());
    let a = &f["admission"];
    let uptime = format_duration(std::time::Duration::from_secs(
        f["uptime_seconds"].as_f64().unwrap_or(0.0) as u64,
    ));
    out.line(&format!(
        "up {uptime}, process memory {}",
        f["process"]["resident_bytes"]
            .as_u64()
            .map_or("-".to_owned(), bytes_human)
    ));
    out.line(&format!(
        "admission: {:.1} % ({} of {} in the gateway, {} waiting, normal capacity {}); refused {} (full) + {} (queue timeout), rate limited {}; event streams {} of {}",
        a["utilization_percent"].as_f64().unwrap_or(0.0),
        n(&a["ccu"]),
        n(&a["max_ccu"]),
        n(&a["queue"]),
        n(&a["normal_capacity"]),
        n(&a["refused_full"]),
        n(&a["refused_queue_timeout"]),
        n(&a["rate_limited"]),
        n(&a["event_streams"]),
        n(&a["max_event_streams"]),
    ));
    let c = &f["cache"];
    out.line(&format!(
        "cache: {} keys, {}, hit rate {}",
        n(&c["keys"]),
        c["used_memory_bytes"]
            .as_u64()
            .map_or("-".to_owned(), bytes_human),
        c["hit_rate"]
            .as_f64()
            .map_or("-".to_owned(), |r| format!("{:.1} %", r * 100.0)),
    ));
    let listeners: Vec<Vec<String>> = f["listeners"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            vec![
                l["name"].as_str().unwrap_or_default().to_owned(),
                l["addr"].as_str().unwrap_or_default().to_owned(),
                n(&l["open"]),
                n(&l["max"]),
            ]
        })
        .collect();
    out.line("");
    for line in table(&["LISTENER", "ADDRESS", "OPEN", "MAX"], &listeners) {
        out.line(&line);
    }
    let streams: Vec<Vec<String>> = f["streams"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let groups: Vec<String> = s["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| {
                    format!(
                        "{} (lag {})",
                        g["name"].as_str().unwrap_or_default(),
                        n(&g["lag"])
                    )
                })
                .collect();
            vec![
                s["name"].as_str().unwrap_or_default().to_owned(),
                if s["durable"].as_bool() == Some(true) {
                    "durable"
                } else {
                    "live"
                }
                .to_owned(),
                n(&s["published"]),
                n(&s["subscribers"]),
                n(&s["dropped"]),
                n(&s["stored_messages"]),
                if groups.is_empty() {
                    "-".to_owned()
                } else {
                    groups.join(", ")
                },
            ]
        })
        .collect();
    out.line("");
    if streams.is_empty() {
        out.line("no streams");
        return;
    }
    let header = [
        "STREAM",
        "KIND",
        "PUBLISHED",
        "SUBSCRIBERS",
        "DROPPED",
        "STORED",
        "GROUPS",
    ];
    for line in table(&header, &streams) {
        out.line(&line);
    }
}
