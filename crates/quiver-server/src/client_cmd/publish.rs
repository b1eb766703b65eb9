//! `quiver pub STREAM [MESSAGE|-]`: one message, or one per line of standard input.

use quiver_client::{AckMode, Client};
use serde_json::json;
use tokio::sync::mpsc;

use super::CommandError;
use super::output::Out;

/// What to publish.
#[derive(Debug, Clone)]
pub struct PublishArgs {
    pub stream: String,
    /// `None`: one message per line of standard input.
    pub message: Option<String>,
    /// `none`, `accepted` or `committed`.
    pub ack: String,
    pub headers: Vec<(String, String)>,
}

pub async fn run(client: &Client, out: &mut Out, args: PublishArgs) -> Result<(), CommandError> {
    let ack = match args.ack.as_str() {
        "none" => AckMode::None,
        "committed" => AckMode::Committed,
        _ => AckMode::Accepted,
    };
    let headers: Vec<(&str, &[u8])> = args
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_bytes()))
        .collect();
    let mut lines = match args.message {
        Some(message) => {
            let (sender, receiver) = mpsc::channel(1);
            sender.try_send(message).expect("room for one");
            receiver
        }
        None => stdin_lines(),
    };
    let (mut count, mut first, mut last) = (0u64, None, None);
    while let Some(line) = lines.recv().await {
        let acked = client
            .publish_with(&args.stream, &headers, line.into_bytes(), ack)
            .await?;
        let offset = acked.map(|a| a.first_sequence);
        count += 1;
        first = first.or(offset);
        last = offset.or(last);
        if out.json() {
            out.value(&json!({ "stream": args.stream, "offset": offset }));
        }
    }
    if !out.json() {
        let offsets = match (first, last) {
            (Some(a), Some(b)) if a == b => format!(" at offset {a}"),
            (Some(a), Some(b)) => format!(" at offsets {a}..={b}"),
            _ => String::new(),
        };
        let noun = if count == 1 { "message" } else { "messages" };
        out.line(&format!(
            "published {count} {noun} to {}{offsets}",
            args.stream
        ));
    }
    if ack == AckMode::None {
        // Wait for the queued frames to reach the server before the process ends.
        client.ping().await?;
    }
    Ok(())
}

/// Standard input's lines, read on a thread of their own.
fn stdin_lines() -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel(1024);
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if sender.blocking_send(line).is_err() {
                break;
            }
        }
    });
    receiver
}
