//! `quiver group ls|info|reset|rm`.

use quiver_client::{Client, GroupSummary, StartPosition};
use serde_json::{Value, json};

use super::CommandError;
use super::output::{Out, table};
use super::time::format_duration;

/// A group's information as `--json` and the HTTP API give it.
pub(crate) fn to_json(stream: &str, group: &GroupSummary) -> Value {
    json!({
        "stream": stream,
        "group": group.name,
        "ack_wait_ms": group.settings.ack_wait_ms,
        "max_deliveries": group.settings.max_deliveries,
        "max_in_flight": group.settings.max_in_flight,
        "dead_letter": group.settings.dead_letter.as_ref().map(|s| s.to_string()),
        "next": group.next,
        "floor": group.floor,
        "end": group.end,
        "pending": group.pending,
        "ready": group.ready,
        "lag": group.lag,
        "acked": group.acked,
        "redelivered": group.redelivered,
        "dead_lettered": group.dead_lettered,
        "lost_to_retention": group.lost_to_retention,
        "member_count": group.member_count,
        "members": group.members.iter().map(|m| json!({
            "name": m.name,
            "pending": m.pending,
            "delivered": m.delivered,
            "acked": m.acked,
        })).collect::<Vec<_>>(),
    })
}

pub async fn list(client: &Client, out: &mut Out, stream: &str) -> Result<(), CommandError> {
    let groups = client.describe_groups(stream, None).await?;
    if out.json() {
        for group in &groups {
            out.value(&to_json(stream, group));
        }
        return Ok(());
    }
    if groups.is_empty() {
        out.line(&format!("{stream} has no consumer groups"));
        return Ok(());
    }
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            vec![
                g.name.clone(),
                g.next.to_string(),
                g.floor.to_string(),
                g.pending.to_string(),
                g.lag.to_string(),
                g.redelivered.to_string(),
                g.dead_lettered.to_string(),
                g.member_count.to_string(),
            ]
        })
        .collect();
    for line in table(
        &[
            "GROUP",
            "NEXT",
            "ACKED<",
            "PENDING",
            "LAG",
            "REDELIVERED",
            "DEAD",
            "MEMBERS",
        ],
        &rows,
    ) {
        out.line(&line);
    }
    Ok(())
}

fn print(out: &mut Out, stream: &str, group: &GroupSummary) {
    if out.json() {
        out.value(&to_json(stream, group));
        return;
    }
    let settings = &group.settings;
    let dead = settings
        .dead_letter
        .as_ref()
        .map_or_else(|| "-".to_owned(), |s| s.to_string());
    let deliveries = if settings.max_deliveries == 0 {
        "unlimited".to_owned()
    } else {
        settings.max_deliveries.to_string()
    };
    let lines = [
        ("group", format!("{} of {stream}", group.name)),
        (
            "settings",
            format!(
                "ack wait {}, max deliveries {deliveries}, max in flight {} per member",
                format_duration(std::time::Duration::from_millis(u64::from(
                    settings.ack_wait_ms
                ))),
                settings.max_in_flight
            ),
        ),
        ("dead letter", dead),
        (
            "position",
            format!(
                "next {} of {} (everything below {} acked)",
                group.next, group.end, group.floor
            ),
        ),
        (
            "pending",
            format!(
                "{} ({} ready to be delivered again)",
                group.pending, group.ready
            ),
        ),
        ("lag", group.lag.to_string()),
        (
            "totals",
            format!(
                "{} acked, {} redelivered, {} dead-lettered, {} lost to retention",
                group.acked, group.redelivered, group.dead_lettered, group.lost_to_retention
            ),
        ),
        ("members", group.member_count.to_string()),
    ];
    for (key, value) in lines {
        out.line(&format!("{key:<12}{value}"));
    }
    if !group.members.is_empty() {
        let rows: Vec<Vec<String>> = group
            .members
            .iter()
            .map(|m| {
                vec![
                    format!("  {}", m.name),
                    m.pending.to_string(),
                    m.delivered.to_string(),
                    m.acked.to_string(),
                ]
            })
            .collect();
        for line in table(&["  MEMBER", "PENDING", "DELIVERED", "ACKED"], &rows) {
            out.line(&line);
        }
    }
}

pub async fn info(
    client: &Client,
    out: &mut Out,
    stream: &str,
    group: &str,
) -> Result<(), CommandError> {
    let groups = client.describe_groups(stream, Some(group)).await?;
    for found in &groups {
        print(out, stream, found);
    }
    Ok(())
}

pub async fn reset(
    client: &Client,
    out: &mut Out,
    stream: &str,
    group: &str,
    to: StartPosition,
) -> Result<(), CommandError> {
    let reset = client.reset_group(stream, group, to).await?;
    if !out.json() {
        out.line(&format!(
            "reset {group} of {stream} to offset {}",
            reset.next
        ));
    }
    print(out, stream, &reset);
    Ok(())
}

pub async fn remove(
    client: &Client,
    out: &mut Out,
    stream: &str,
    group: &str,
) -> Result<(), CommandError> {
    client.delete_group(stream, group).await?;
    if out.json() {
        out.value(&json!({ "stream": stream, "group": group, "deleted": true }));
    } else {
        out.line(&format!("deleted group {group} of {stream}"));
    }
    Ok(())
}
