//! `quiver sub PATTERN`: print messages as they come, from a start position, optionally
//! as a member of a consumer group (acking each message once printed).

use std::sync::Arc;

use bytes::Bytes;
use quiver_client::{
    Client, ConsumerEvent, ErrorCode, GroupOptions, RequestError, StartPosition, SubscribeOptions,
    SubscriptionEvent,
};
use serde_json::{Map, Value, json};

use super::CommandError;
use super::output::{Out, headers_json, put_payload, readable};
use super::time::format_rfc3339;

/// What to subscribe to.
#[derive(Debug, Clone)]
pub struct SubscribeArgs {
    pub pattern: String,
    /// `None`: latest, or for a group the earliest message.
    pub from: Option<StartPosition>,
    /// Stop after this many messages; 0: never.
    pub count: u64,
    pub group: Option<String>,
}

/// One message to print.
struct Shown<'a> {
    stream: &'a str,
    offset: u64,
    timestamp_ms: u64,
    headers: &'a [(String, Bytes)],
    payload: &'a Bytes,
    deliveries: Option<u32>,
}

fn show(out: &mut Out, message: &Shown<'_>) {
    if out.json() {
        let mut object = Map::new();
        object.insert("stream".to_owned(), json!(message.stream));
        object.insert("offset".to_owned(), json!(message.offset));
        object.insert("timestamp_ms".to_owned(), json!(message.timestamp_ms));
        if let Some(deliveries) = message.deliveries {
            object.insert("deliveries".to_owned(), json!(deliveries));
        }
        object.insert("headers".to_owned(), headers_json(message.headers));
        put_payload(&mut object, message.payload);
        out.value(&Value::Object(object));
        return;
    }
    let mut line = format!(
        "[{} #{} {}",
        message.stream,
        message.offset,
        format_rfc3339(message.timestamp_ms)
    );
    if let Some(deliveries) = message.deliveries.filter(|d| *d > 1) {
        line.push_str(&format!(" delivery {deliveries}"));
    }
    line.push(']');
    for (key, value) in message.headers {
        line.push_str(&format!(" {key}={}", readable(value)));
    }
    line.push(' ');
    line.push_str(&readable(message.payload));
    out.line(&line);
}

pub async fn run(client: &Client, out: &mut Out, args: SubscribeArgs) -> Result<(), CommandError> {
    if let Some(group) = &args.group {
        let member = format!("quiver-cli-{}", std::process::id());
        let start = args.from.unwrap_or(StartPosition::Earliest);
        let mut options = GroupOptions::default().member(member).start(start);
        // Take no more than is printed: a message handed out and never shown would count
        // as a delivery, towards the group's dead-letter limit, once this member leaves.
        if args.count > 0 {
            options = options.limit(u32::try_from(args.count).unwrap_or(u32::MAX));
        }
        match client.join_group(&args.pattern, group, options).await {
            Ok(consumer) => return consume(out, consumer, args.count).await,
            // A live stream (or one not published to yet, which no durable rule makes
            // durable) has no consumer groups: share it as a queue group instead.
            Err(RequestError::Server { code, .. })
                if code == ErrorCode::UNSUPPORTED || code == ErrorCode::NOT_FOUND =>
            {
                if args.from.is_some_and(|from| from != StartPosition::Latest) {
                    return Err(CommandError::Input(format!(
                        "{} is a live stream: its queue group {group} can only start at latest",
                        args.pattern
                    )));
                }
            }
            Err(error) => return Err(error.into()),
        }
    }
    let mut options = SubscribeOptions::default().start(args.from.unwrap_or(StartPosition::Latest));
    if let Some(group) = &args.group {
        options = options.queue_group(group.clone());
    }
    let mut subscription = client.subscribe(&args.pattern, options).await?;
    let mut seen = 0u64;
    while args.count == 0 || seen < args.count {
        match subscription.next().await {
            Some(SubscriptionEvent::Event(event)) => {
                show(
                    out,
                    &Shown {
                        stream: &event.stream,
                        offset: event.sequence,
                        timestamp_ms: event.timestamp_ms,
                        headers: &event.headers,
                        payload: &event.payload,
                        deliveries: None,
                    },
                );
                seen += 1;
            }
            Some(SubscriptionEvent::Lag { missed }) => {
                eprintln!(
                    "# missed {missed} messages (this subscriber was too slow for the stream's policy, or they were deleted by retention)"
                );
            }
            Some(SubscriptionEvent::Resubscribed) => eprintln!("# reconnected"),
            Some(SubscriptionEvent::Ended { message, .. }) => {
                return ended(args.count, seen, &message);
            }
            Some(_) => {}
            None => return ended(args.count, seen, "the subscription ended"),
        }
    }
    Ok(())
}

async fn consume(
    out: &mut Out,
    mut consumer: quiver_client::GroupConsumer,
    count: u64,
) -> Result<(), CommandError> {
    let mut seen = 0u64;
    while count == 0 || seen < count {
        match consumer.next().await {
            Some(ConsumerEvent::Message(message)) => {
                let stream: Arc<str> = Arc::clone(&message.stream);
                show(
                    out,
                    &Shown {
                        stream: &stream,
                        offset: message.offset,
                        timestamp_ms: message.timestamp_ms,
                        headers: &message.headers,
                        payload: &message.payload,
                        deliveries: Some(message.deliveries),
                    },
                );
                consumer.ack(&message).await?;
                seen += 1;
            }
            Some(ConsumerEvent::Rejoined) => eprintln!("# rejoined the group"),
            Some(ConsumerEvent::Ended { message, .. }) => return ended(count, seen, &message),
            Some(_) => {}
            None => return ended(count, seen, "the membership ended"),
        }
    }
    consumer.leave().await?;
    Ok(())
}

fn ended(count: u64, seen: u64, why: &str) -> Result<(), CommandError> {
    if count == 0 {
        return Err(CommandError::Refused(format!(
            "{why} after {seen} messages"
        )));
    }
    Err(CommandError::Refused(format!(
        "{why} after {seen} of {count} messages"
    )))
}
