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
            sender
                .try_send(Ok(message.into_bytes()))
                .expect("room for one");
            receiver
        }
        None => stdin_lines(),
    };
    let (mut count, mut first, mut last) = (0u64, None, None::<u64>);
    while let Some(line) = lines.recv().await {
        let line = line.map_err(|error| {
            CommandError::Input(format!(
                "standard input could not be read after {count} messages: {error}"
            ))
        })?;
        let acked = client
            .publish_with(&args.stream, &headers, line, ack)
            .await
            .map_err(|error| after(count, first, last, error.into()))?;
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
            (Some(a), Some(b)) => format!(" at offsets {a} to {b}"),
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

/// Standard input's lines as bytes (any bytes: a message need not be text), without
/// their `\n` or `\r\n`, read on a thread of their own; a read error ends them.
fn stdin_lines() -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    use std::io::BufRead;
    let (sender, receiver) = mpsc::channel(1024);
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        loop {
            let mut line = Vec::new();
            let read = match input.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                        if line.last() == Some(&b'\r') {
                            line.pop();
                        }
                    }
                    Ok(line)
                }
                Err(error) => Err(error),
            };
            let failed = read.is_err();
            if sender.blocking_send(read).is_err() || failed {
                break;
            }
        }
    });
    receiver
}

/// `error` on line `count + 1`, saying what was published before it.
fn after(count: u64, first: Option<u64>, last: Option<u64>, error: CommandError) -> CommandError {
    if count == 0 {
        return error;
    }
    let offsets = match (first, last) {
        (Some(a), Some(b)) => format!(" (offsets {a} to {b})"),
        _ => String::new(),
    };
    let text = format!(
        "line {}: {error}; the {count} lines before it were published{offsets}",
        count + 1
    );
    match error {
        CommandError::Input(_) => CommandError::Input(text),
        CommandError::Refused(_) => CommandError::Refused(text),
        CommandError::Unreachable(_) => CommandError::Unreachable(text),
    }
}
