//! The connection's two tasks: the writer, which gathers queued frames into few writes, and
//! the reader, which routes replies to their requests and deliveries to their
//! subscriptions.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use quiver_wire::{Envelope, ErrorFrame, Frame, Pong, Unsubscribe};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

use super::{CLOSE_TIMEOUT, Connection, MAX_GATHER_BYTES, READ_BUFFER_BYTES, Route, Waiter};
use crate::error::RequestError;
use crate::subscription::SubItem;

/// Writes queued frames until the connection ends, or, once `finish` is true, until the
/// queue is empty; then shuts the write side down.
pub(super) async fn write_loop<W>(
    mut socket: W,
    mut queue: mpsc::Receiver<Bytes>,
    mut finish: watch::Receiver<bool>,
) where
    W: AsyncWrite + Unpin,
{
    let mut buf = BytesMut::with_capacity(MAX_GATHER_BYTES);
    let finished = finish.wait_for(|finish| *finish);
    tokio::pin!(finished);
    loop {
        let first = tokio::select! {
            biased;
            first = queue.recv() => first,
            // Polled only when the queue is empty: everything queued has been written.
            _ = &mut finished => None,
        };
        let Some(first) = first else {
            break;
        };
        buf.extend_from_slice(&first);
        while buf.len() < MAX_GATHER_BYTES {
            match queue.try_recv() {
                Ok(next) => buf.extend_from_slice(&next),
                Err(_) => break,
            }
        }
        if socket.write_all(&buf).await.is_err() {
            return;
        }
        buf.clear();
    }
    let _ = socket.shutdown().await;
}

pub(super) async fn read_loop<R>(mut socket: R, mut buf: BytesMut, connection: Arc<Connection>)
where
    R: AsyncRead + Unpin,
{
    let mut finish = connection.finish_signal.subscribe();
    let finished = finish.wait_for(|finish| *finish);
    tokio::pin!(finished);
    let mut deadline = None;
    let reason = loop {
        let envelope = match quiver_wire::decode_next(&mut buf) {
            Ok(Some(envelope)) => envelope,
            Ok(None) => {
                make_room(&mut buf, READ_BUFFER_BYTES);
                let read = tokio::select! {
                    read = socket.read_buf(&mut buf) => read,
                    _ = &mut finished, if deadline.is_none() => {
                        deadline = Some(tokio::time::Instant::now() + CLOSE_TIMEOUT);
                        continue;
                    }
                    () = sleep_until_some(deadline) => {
                        connection.close("the server did not close within the close timeout".to_owned());
                        connection.stop_tasks();
                        return;
                    }
                };
                match read {
                    Ok(0) => break "the server closed the connection".to_owned(),
                    Ok(_) => continue,
                    Err(error) => break format!("read failed: {error}"),
                }
            }
            Err(error) => break format!("the server sent a bad frame: {error}"),
        };
        if let Some(reason) = route(&connection, envelope).await {
            break reason;
        }
    };
    tracing::debug!(%reason, "quiver connection closed");
    connection.close(reason);
}

/// Makes room in a receive buffer before a read: the rest of the frame being received, if
/// its header says it is larger, else `read_bytes`. Decoded frames keep slices of the
/// buffer alive, so a read may find it shared and full; asking for a whole read's worth
/// (never a few bytes, which would cost a system call per few bytes) and for a large
/// frame's whole length at once (instead of growing, and copying, read after read) keeps
/// each frame's bytes copied into the buffer once.
pub(crate) fn make_room(buf: &mut BytesMut, read_bytes: usize) {
    let frame_rest =
        quiver_wire::announced_frame_len(buf).map_or(0, |len| len - buf.len().min(len));
    if buf.capacity() - buf.len() < frame_rest.max(read_bytes / 4) {
        buf.reserve(frame_rest.max(read_bytes));
    }
}

/// Sleeps until `deadline`, or forever when there is none.
async fn sleep_until_some(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Routes one frame; `Some(reason)` ends the connection.
async fn route(connection: &Connection, envelope: Envelope) -> Option<String> {
    let Envelope { request_id, frame } = envelope;
    let frame = match delivery(frame) {
        Incoming::Delivery(id, item) => {
            if let Some(route) = connection.delivery_target(id, &item) {
                // Waiting here is backpressure: a subscription that is not read slows this
                // connection's reads, and the server's slow-subscriber policy takes over.
                route.deliver(item).await;
            }
            return None;
        }
        Incoming::Other(frame) => frame,
    };
    match frame {
        Frame::Ping(_) => {
            let mut buf = BytesMut::new();
            if quiver_wire::encode(request_id, &Pong, &mut buf).is_ok() {
                let _ = connection.out.send(buf.freeze()).await;
            }
            None
        }
        Frame::Goodbye(goodbye) => Some(format!(
            "the server said goodbye: {}: {}",
            goodbye.code, goodbye.message
        )),
        Frame::Error(error) if request_id == 0 || error.code.closes_connection() => Some(format!(
            "the server closed the connection: {}: {}",
            error.code, error.message
        )),
        reply => {
            answer(connection, request_id, reply);
            None
        }
    }
}

/// A frame the reader got: a subscription's delivery, or anything else.
pub enum Incoming {
    /// For subscription (or membership) `id`.
    Delivery(u32, SubItem),
    /// A reply, a ping, a goodbye.
    Other(Frame),
}

/// Sorts a frame into a delivery (subscription id, item) or another frame.
pub fn delivery(frame: Frame) -> Incoming {
    match frame {
        Frame::EventBatch(batch) => {
            Incoming::Delivery(batch.subscription_id, SubItem::Batch(batch.body))
        }
        Frame::GroupEventBatch(batch) => {
            Incoming::Delivery(batch.subscription_id, SubItem::GroupBatch(batch))
        }
        Frame::Lag(lag) => Incoming::Delivery(lag.subscription_id, SubItem::Lag(lag.missed)),
        Frame::SubscriptionEnded(ended) => Incoming::Delivery(
            ended.subscription_id,
            SubItem::Ended(ended.code, ended.message),
        ),
        other => Incoming::Other(other),
    }
}

impl Connection {
    /// Where subscription `id`'s `item` goes (`None`: nobody holds it); an end removes
    /// the route. The server's end for its shutdown goes nowhere when the client
    /// reconnects: the subscription is made again on the next server (resuming its
    /// durable streams), not ended.
    pub fn delivery_target(&self, id: u32, item: &SubItem) -> Option<Route> {
        let mut routes = self.routes();
        match item {
            SubItem::Ended(code, _) => {
                let route = routes.subscriptions.remove(&id);
                let restarting = *code == quiver_wire::ErrorCode::SHUTTING_DOWN
                    && !self.end_subscriptions_on_close;
                route.filter(|_| !restarting)
            }
            _ => routes.subscriptions.get(&id).cloned(),
        }
    }
}

impl Route {
    /// Notes what a batch carries for a later resume, then hands the item on (waiting for
    /// room: backpressure).
    pub async fn deliver(&self, item: SubItem) {
        if let (Some(resume), SubItem::Batch(body)) = (&self.resume, &item) {
            resume.note(body);
        }
        let _ = self.deliveries.send(item).await;
    }
}

fn answer(connection: &Connection, request_id: u32, frame: Frame) {
    let mut routes = connection.routes();
    let Some(waiter) = routes.pending.remove(&request_id) else {
        match &frame {
            Frame::Error(ErrorFrame { code, message }) => {
                tracing::warn!(request_id, %code, %message, "the server refused a request sent without a reply");
            }
            // The Subscribe timed out before this came: end the subscription nobody holds.
            Frame::Subscribed(subscribed) => {
                drop(routes);
                connection.try_send(&Unsubscribe {
                    subscription_id: subscribed.subscription_id,
                });
            }
            _ => {}
        }
        return;
    };
    let result = match frame {
        Frame::Error(ErrorFrame { code, message }) => Err(RequestError::Server { code, message }),
        other => Ok(other),
    };
    let reply = match waiter {
        Waiter::Reply(reply) => reply,
        Waiter::Subscribe { reply, route } => {
            if let Ok(Frame::Subscribed(subscribed)) = &result {
                routes
                    .subscriptions
                    .insert(subscribed.subscription_id, route);
                connection.registered.send_modify(|count| *count += 1);
            }
            reply
        }
        Waiter::Callback(callback) => {
            drop(routes);
            return callback(result);
        }
    };
    let _ = reply.send(result);
}

#[cfg(test)]
mod tests {
    use quiver_wire::{FrameHeader, FrameType, VERSION};

    use super::*;

    #[test]
    fn room_for_a_whole_read_or_the_rest_of_a_large_frame() {
        let mut buf = BytesMut::new();
        make_room(&mut buf, 1024);
        assert!(
            buf.capacity() >= 1024,
            "an empty buffer gets a read's worth"
        );

        let header = FrameHeader {
            version: VERSION,
            frame_type: FrameType::EventBatch,
            flags: 0,
            request_id: 0,
            payload_len: 300_000,
        };
        let mut buf = BytesMut::with_capacity(1024);
        buf.extend_from_slice(&header.to_bytes());
        buf.extend_from_slice(&[0; 100]);
        make_room(&mut buf, 1024);
        assert!(
            buf.capacity() >= 16 + 300_000,
            "room for the whole frame at once, not a read's worth"
        );
        let at = buf.as_ptr();
        make_room(&mut buf, 1024);
        assert_eq!(buf.as_ptr(), at, "nothing more while the room is there");
    }
}
