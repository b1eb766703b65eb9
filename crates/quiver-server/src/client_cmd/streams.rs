//! `quiver stream ls|info|rm|create`.

use quiver_client::{Client, Policy, Storage, StreamInfo, StreamOptions};
use serde_json::{Value, json};

use super::CommandError;
use super::output::{Out, bytes_human, table};
use super::time::{format_duration, format_rfc3339};

fn durability(storage: Storage) -> String {
    match storage {
        Storage::Live => "live".to_owned(),
        Storage::Buffered => "buffered".to_owned(),
        Storage::Os => "os".to_owned(),
        Storage::Interval { interval_ms } => format!("interval:{interval_ms}"),
        Storage::Sync => "sync".to_owned(),
    }
}

fn policy(policy: Policy) -> &'static str {
    match policy {
        Policy::DropNew => "drop_new",
        Policy::DropOld => "drop_old",
        Policy::Block => "block",
        Policy::Disconnect => "disconnect",
        Policy::Default => "default",
    }
}

fn stored(info: &StreamInfo) -> u64 {
    info.next_offset.saturating_sub(info.first_offset)
}

/// A stream's information as `--json` and the HTTP API give it.
pub(crate) fn to_json(info: &StreamInfo) -> Value {
    let s = &info.settings;
    let durable = s.storage != Storage::Live;
    let opt = |v: u64| if v == 0 { Value::Null } else { json!(v) };
    json!({
        "stream": info.stream.as_str(),
        "durability": durability(s.storage),
        "created_ms": info.created_ms,
        "first_offset": info.first_offset,
        "next_offset": info.next_offset,
        "stored_messages": if durable { json!(stored(info)) } else { Value::Null },
        "stored_bytes": info.stored_bytes,
        "max_age_ms": opt(s.max_age_ms),
        "max_bytes": opt(s.max_bytes),
        "max_messages": opt(s.max_messages),
        "keep_unacked": s.keep_unacked,
        "dedupe_window_ms": s.dedupe_window_ms,
        "policy": policy(s.policy),
        "subscribers": info.subscribers,
        "published": info.published,
        "groups": info.groups,
    })
}

pub async fn list(client: &Client, out: &mut Out) -> Result<(), CommandError> {
    let streams = client.list_streams().await?;
    if out.json() {
        for info in &streams {
            out.value(&to_json(info));
        }
        return Ok(());
    }
    if streams.is_empty() {
        out.line("no streams");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = streams
        .iter()
        .map(|info| {
            let durable = info.settings.storage != Storage::Live;
            vec![
                info.stream.to_string(),
                durability(info.settings.storage),
                if durable {
                    stored(info).to_string()
                } else {
                    "-".to_owned()
                },
                if durable {
                    bytes_human(info.stored_bytes)
                } else {
                    "-".to_owned()
                },
                info.subscribers.to_string(),
                info.groups.len().to_string(),
            ]
        })
        .collect();
    for line in table(
        &[
            "STREAM",
            "DURABILITY",
            "MESSAGES",
            "BYTES",
            "SUBSCRIBERS",
            "GROUPS",
        ],
        &rows,
    ) {
        out.line(&line);
    }
    Ok(())
}

fn print_info(out: &mut Out, info: &StreamInfo) {
    if out.json() {
        out.value(&to_json(info));
        return;
    }
    let s = &info.settings;
    let mut lines = vec![
        ("stream", info.stream.to_string()),
        ("durability", durability(s.storage)),
        ("created", format_rfc3339(info.created_ms)),
    ];
    if s.storage == Storage::Live {
        lines.push(("published", info.published.to_string()));
    } else {
        lines.push((
            "offsets",
            format!(
                "{} .. {} ({} stored, {})",
                info.first_offset,
                info.next_offset,
                stored(info),
                bytes_human(info.stored_bytes)
            ),
        ));
        let mut bounds = Vec::new();
        if s.max_age_ms > 0 {
            bounds.push(format!(
                "max age {}",
                format_duration(std::time::Duration::from_millis(s.max_age_ms))
            ));
        }
        if s.max_bytes > 0 {
            bounds.push(format!("max bytes {}", bytes_human(s.max_bytes)));
        }
        if s.max_messages > 0 {
            bounds.push(format!("max messages {}", s.max_messages));
        }
        if s.keep_unacked {
            bounds.push("keeps what groups have not acked".to_owned());
        }
        lines.push((
            "retention",
            if bounds.is_empty() {
                "none (keeps everything)".to_owned()
            } else {
                bounds.join(", ")
            },
        ));
        lines.push((
            "dedupe",
            if s.dedupe_window_ms == 0 {
                "off".to_owned()
            } else {
                format_duration(std::time::Duration::from_millis(s.dedupe_window_ms))
            },
        ));
        lines.push((
            "groups",
            if info.groups.is_empty() {
                "none".to_owned()
            } else {
                info.groups.join(", ")
            },
        ));
    }
    lines.push(("policy", policy(s.policy).to_owned()));
    lines.push(("subscribers", info.subscribers.to_string()));
    for (key, value) in lines {
        out.line(&format!("{key:<12}{value}"));
    }
}

pub async fn info(client: &Client, out: &mut Out, name: &str) -> Result<(), CommandError> {
    let info = client.describe_stream(name).await?;
    print_info(out, &info);
    Ok(())
}

pub async fn create(
    client: &Client,
    out: &mut Out,
    name: &str,
    options: StreamOptions,
) -> Result<(), CommandError> {
    let info = client.create_stream(name, options).await?;
    if !out.json() {
        out.line(&format!("created {name}"));
    }
    print_info(out, &info);
    Ok(())
}

pub async fn remove(client: &Client, out: &mut Out, name: &str) -> Result<(), CommandError> {
    client.delete_stream(name).await?;
    if out.json() {
        out.value(&json!({ "stream": name, "deleted": true }));
    } else {
        out.line(&format!("deleted {name}"));
    }
    Ok(())
}
