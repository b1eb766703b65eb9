//! Running pub/sub commands, and writing what a subscriber's mailbox delivers.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use quiver_core::pubsub::{Entry, Published, Route, Space};
use quiver_core::streams::{Ack, PublishError, Receipt};
use quiver_resp::Protocol;
use quiver_resp::encode as write;

use crate::resp::RespShared;
use crate::resp::command::exec::{container_help, error};
use crate::resp::command::pubsub::PubSubCommand;
use crate::resp::connection::{Connection, Flow};

/// A publish to a stream-named channel that has to wait (the stream's `block` policy or
/// the in-flight budget): the connection awaits it, then replies `receivers`.
pub(in crate::resp) struct PendingPublish {
    pub(in crate::resp) publish:
        Pin<Box<dyn Future<Output = Result<Receipt, PublishError>> + Send>>,
    pub(in crate::resp) receivers: u64,
}

impl std::fmt::Debug for PendingPublish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingPublish")
            .field("receivers", &self.receivers)
            .finish_non_exhaustive()
    }
}

/// Runs a pub/sub command.
pub(in crate::resp) fn execute(
    conn: &mut Connection,
    command: PubSubCommand,
    out: &mut BytesMut,
) -> Flow {
    let protocol = conn.session.protocol;
    match command {
        PubSubCommand::Subscribe { space, names } => {
            let subscriber = conn.subscriber();
            for name in names {
                subscriber.subscribe(space, name.clone());
                let count = subscriber.count(space) + paired_count(subscriber, space);
                confirm(out, protocol, subscribe_word(space), Some(&name), count);
            }
        }
        PubSubCommand::Unsubscribe { space, mut names } => {
            let Some(subscriber) = conn.session.subscriber.as_mut() else {
                // Subscribed to nothing: one confirmation per name, or one without a name.
                if names.is_empty() {
                    confirm(out, protocol, unsubscribe_word(space), None, 0);
                }
                for name in &names {
                    confirm(out, protocol, unsubscribe_word(space), Some(name), 0);
                }
                return Flow::Continue;
            };
            if names.is_empty() {
                names = subscriber.names(space);
            }
            if names.is_empty() {
                let count = subscriber.count(space) + paired_count(subscriber, space);
                confirm(out, protocol, unsubscribe_word(space), None, count);
            }
            for name in names {
                subscriber.unsubscribe(space, &name);
                let count = subscriber.count(space) + paired_count(subscriber, space);
                confirm(out, protocol, unsubscribe_word(space), Some(&name), count);
            }
            // Out of the subscribed context: messages still queued are written first.
            if subscriber.is_idle() && conn.session.tracking.is_none() && conn.deliver(out).is_ok()
            {
                conn.session.subscriber = None;
            }
        }
        PubSubCommand::Publish { channel, message } => {
            match conn.shared.pubsub.publish(channel, message) {
                Ok(Route::Delivered(receivers)) => published(conn, out, receivers),
                Ok(Route::Stream {
                    stream,
                    message,
                    receivers,
                }) => {
                    let mut publish: Pin<Box<dyn Future<Output = _> + Send>> =
                        Box::pin(async move {
                            stream.publish(vec![message], Ack::Accepted, None).await
                        });
                    let mut cx = Context::from_waker(Waker::noop());
                    match publish.as_mut().poll(&mut cx) {
                        Poll::Ready(result) => publish_reply(conn, out, result, receivers),
                        // Inside EXEC nothing may wait: the publish is not made.
                        Poll::Pending if conn.session.multi.is_some() => error(
                            out,
                            &"ERR publish would wait for room in the stream (policy block or in-flight budget); not published inside MULTI",
                        ),
                        Poll::Pending => {
                            return Flow::Publish(Box::new(PendingPublish { publish, receivers }));
                        }
                    }
                }
                Err(err) => error(out, &format!("ERR {err}")),
            }
        }
        PubSubCommand::SPublish { channel, message } => {
            let receivers = conn.shared.pubsub.spublish(channel, message);
            published(conn, out, receivers);
        }
        other => execute_detached(&conn.shared, other, protocol, out),
    }
    Flow::Continue
}

/// Runs a pub/sub command that needs no connection (a script's PUBLISH and PUBSUB):
/// a publish that would have to wait for room in its stream is not made.
pub(in crate::resp) fn execute_detached(
    shared: &RespShared,
    command: PubSubCommand,
    protocol: Protocol,
    out: &mut BytesMut,
) {
    let count = |out: &mut BytesMut, n: u64| {
        write::write_integer(out, i64::try_from(n).unwrap_or(i64::MAX))
    };
    match command {
        PubSubCommand::Publish { channel, message } => {
            match shared.pubsub.publish(channel, message) {
                Ok(Route::Delivered(receivers)) => count(out, receivers),
                Ok(Route::Stream {
                    stream,
                    message,
                    receivers,
                }) => {
                    let publish = stream.publish(vec![message], Ack::Accepted, None);
                    let mut publish = std::pin::pin!(publish);
                    let mut cx = Context::from_waker(Waker::noop());
                    match publish.as_mut().poll(&mut cx) {
                        Poll::Ready(Ok(_)) => count(out, receivers),
                        Poll::Ready(Err(err)) => error(out, &format!("ERR {err}")),
                        Poll::Pending => error(
                            out,
                            &"ERR publish would wait for room in the stream (policy block or in-flight budget); not published inside a script",
                        ),
                    }
                }
                Err(err) => error(out, &format!("ERR {err}")),
            }
        }
        PubSubCommand::SPublish { channel, message } => {
            count(out, shared.pubsub.spublish(channel, message))
        }
        PubSubCommand::Channels { space, pattern } => {
            let names = shared.pubsub.channels(space, pattern.as_deref());
            write::write_array_len(out, names.len());
            for name in names {
                write::write_bulk(out, &name);
            }
        }
        PubSubCommand::NumSub { space, channels } => {
            write::write_array_len(out, channels.len() * 2);
            for channel in channels {
                let subscribers = shared.pubsub.numsub(space, &channel);
                write::write_bulk(out, &channel);
                count(out, subscribers);
            }
        }
        PubSubCommand::NumPat => count(out, shared.pubsub.stats().patterns),
        PubSubCommand::Help => container_help("pubsub", protocol, out),
        _ => error(out, &"ERR This Redis command is not allowed from script"),
    }
}

/// The reply of a publish to a stream-named channel, once the broker took it.
pub(in crate::resp) fn publish_reply(
    conn: &mut Connection,
    out: &mut BytesMut,
    result: Result<Receipt, PublishError>,
    receivers: u64,
) {
    match result {
        Ok(_) => published(conn, out, receivers),
        Err(err) => error(out, &format!("ERR {err}")),
    }
}

/// PUBLISH's reply. A publisher subscribed to the channel itself (RESP3) gets the
/// message before the reply, as Redis writes it.
fn published(conn: &mut Connection, out: &mut BytesMut, receivers: u64) {
    conn.published |= receivers > 0;
    // A limit that closed this very subscriber is reported by the read loop.
    let _ = conn.deliver(out);
    write::write_integer(out, i64::try_from(receivers).unwrap_or(i64::MAX));
}

/// Redis counts channels and patterns together, shard channels apart.
fn paired_count(subscriber: &quiver_core::pubsub::Subscriber, space: Space) -> usize {
    match space {
        Space::Channel => subscriber.count(Space::Pattern),
        Space::Pattern => subscriber.count(Space::Channel),
        Space::Shard => 0,
    }
}

fn subscribe_word(space: Space) -> &'static [u8] {
    match space {
        Space::Channel => b"subscribe",
        Space::Pattern => b"psubscribe",
        Space::Shard => b"ssubscribe",
    }
}

fn unsubscribe_word(space: Space) -> &'static [u8] {
    match space {
        Space::Channel => b"unsubscribe",
        Space::Pattern => b"punsubscribe",
        Space::Shard => b"sunsubscribe",
    }
}

/// One (un)subscribe confirmation: `[kind, name or null, count]`, a push in RESP3.
fn confirm(
    out: &mut BytesMut,
    protocol: Protocol,
    word: &[u8],
    name: Option<&Bytes>,
    count: usize,
) {
    write::write_push_len(out, protocol, 3);
    write::write_bulk(out, word);
    match name {
        Some(name) => write::write_bulk(out, name),
        None => write::write_null(out, protocol),
    }
    write::write_integer(out, i64::try_from(count).unwrap_or(i64::MAX));
}

/// The encoding slot of a protocol in [`Published::write_encoded`].
fn slot(protocol: Protocol) -> usize {
    match protocol {
        Protocol::Resp2 => 0,
        Protocol::Resp3 => 1,
    }
}

/// Writes `entries` as Redis writes them: `message` (or `smessage`) pushes encoded once
/// per protocol and shared by every subscriber, `pmessage` pushes per subscriber, and
/// client-side caching's invalidations: a push in RESP3; in RESP2, only to a client that
/// other clients redirect to and that is subscribed, as a `__redis__:invalidate` message.
pub(in crate::resp) fn write_entries(
    out: &mut BytesMut,
    protocol: Protocol,
    subscribed: bool,
    entries: &[Entry],
) {
    for entry in entries {
        match entry {
            Entry::Message {
                pattern: None,
                published,
            } => {
                published.write_encoded(slot(protocol), out, |p, out| encode(p, protocol, out));
            }
            Entry::Message {
                pattern: Some(pattern),
                published,
            } => {
                for payload in published.payloads() {
                    write::write_push_len(out, protocol, 4);
                    write::write_bulk(out, b"pmessage");
                    write::write_bulk(out, pattern);
                    write::write_bulk(out, published.channel());
                    write::write_bulk(out, payload);
                }
            }
            Entry::Invalidate { keys, redirected } => {
                match protocol {
                    Protocol::Resp3 => {
                        write::write_push_len(out, protocol, 2);
                        write::write_bulk(out, b"invalidate");
                    }
                    Protocol::Resp2 if *redirected && subscribed => {
                        write::write_array_len(out, 3);
                        write::write_bulk(out, b"message");
                        write::write_bulk(out, b"__redis__:invalidate");
                    }
                    // Nowhere to say it: RESP2 has no pushes outside pub/sub.
                    Protocol::Resp2 => continue,
                }
                match keys {
                    Some(keys) => {
                        write::write_array_len(out, keys.len());
                        for key in keys.iter() {
                            write::write_bulk(out, key);
                        }
                    }
                    None => write::write_null(out, protocol),
                }
            }
            Entry::RedirectBroken { client } => {
                if protocol == Protocol::Resp3 {
                    write::write_push_len(out, protocol, 2);
                    write::write_bulk(out, b"tracking-redir-broken");
                    write::write_integer(out, i64::try_from(*client).unwrap_or(i64::MAX));
                }
            }
        }
    }
}

fn encode(published: &Published, protocol: Protocol, out: &mut BytesMut) {
    let word: &[u8] = if published.is_shard() {
        b"smessage"
    } else {
        b"message"
    };
    for payload in published.payloads() {
        write::write_push_len(out, protocol, 3);
        write::write_bulk(out, word);
        write::write_bulk(out, published.channel());
        write::write_bulk(out, payload);
    }
}
