//! One native session: the read loop, the same for TCP and QUIC's control stream. It checks and decodes each frame, answers Hello,
//! dispatches requests to the stream and cache handlers in arrival order (so a
//! connection's publishes reach the broker in the order they were sent), and answers bad
//! frames with an Error frame, closing the connection for the closing codes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use quiver_wire::limits::{HEADER_LEN, MAX_HELLO_LEN};
use quiver_wire::{
    AckMode, Capabilities, Direction, Envelope, ErrorCode, ErrorFrame, Frame, FrameType, Goodbye,
    MAGIC, Pong, VERSION, WireError,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;

use super::deliveries::{Deliveries, SameStream};
use super::session::Session;
use super::streams::{self, Publisher};
use super::writer::{self, Outgoing, WriteQueue};
use super::{NativeShared, admin, cache, groups};
use crate::serve::listener::ConnectionGuard;
use crate::serve::shutdown::Shutdown;

/// Initial capacity of a connection's read buffer; it grows to hold one whole frame (at
/// most the header plus `MAX_FRAME_LEN`, which `check` enforces before it is read).
const READ_BUFFER_BYTES: usize = 64 << 10;

/// How long a new connection may take to send its Hello; a connection that says nothing
/// would otherwise hold one of `native.max_connections` slots forever.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a closing connection waits for its queued frames (the final Error or
/// Goodbye) to be written before it drops them.
const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the read loop goes on after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Close,
}

/// Serves one TCP connection until the peer closes, a closing error, or shutdown.
pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    guard: ConnectionGuard,
    shared: Arc<NativeShared>,
    shutdown: Shutdown,
) {
    let (reader, writer) = stream.into_split();
    run(reader, writer, &SameStream, peer, &shared, &shutdown).await;
    drop(guard);
}

/// Runs one session over a control byte stream (`reader`, `writer`; the whole TCP
/// connection, or QUIC's control stream) until the peer closes, a closing error, or
/// shutdown; subscription deliveries go where `deliveries` says. Returns once the queued
/// frames are written (or [`CLOSE_WRITE_TIMEOUT`] passed).
pub async fn run<R, W, D>(
    mut reader: R,
    socket_writer: W,
    deliveries: &D,
    peer: SocketAddr,
    shared: &NativeShared,
    shutdown: &Shutdown,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
    D: Deliveries,
{
    let (out, queue) = writer::queue();
    let mut writer_task = tokio::spawn(writer::run(socket_writer, queue));
    let mut connection = Connection {
        shared,
        out,
        session: None,
        publisher: Publisher::new(shared),
        publish_replies: Vec::new(),
        deliveries,
    };
    let mut buf = BytesMut::with_capacity(READ_BUFFER_BYTES);
    let hello_deadline = tokio::time::Instant::now() + HELLO_TIMEOUT;
    'read: loop {
        let read = tokio::select! {
            read = reader.read_buf(&mut buf) => read,
            () = tokio::time::sleep_until(hello_deadline), if connection.session.is_none() => {
                let message = format!("no Hello within {HELLO_TIMEOUT:?}");
                error(&connection.out, 0, ErrorCode::HELLO_REQUIRED, &message).await;
                break;
            }
            () = shutdown.wait() => {
                // What is in flight ends first: commits are acknowledged, and every
                // subscription delivers what the broker queued for it and its
                // SubscriptionEnded; Goodbye comes last.
                connection.send_publish_replies().await;
                let _ = tokio::time::timeout(CLOSE_WRITE_TIMEOUT, connection.settle()).await;
                let goodbye = Goodbye {
                    code: ErrorCode::SHUTTING_DOWN,
                    message: "the server is shutting down".to_owned(),
                };
                let _ = connection.out.send(Outgoing::encode(0, &goodbye)).await;
                break;
            }
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        loop {
            // The replies to the publishes before a Goodbye or a closing error go first:
            // nothing follows those.
            if connection.session.is_none()
                && let Some((found, request_id)) = not_hello(&buf)
            {
                let message = format!("the first frame must be Hello, not {found:?}");
                error(
                    &connection.out,
                    request_id,
                    ErrorCode::HELLO_REQUIRED,
                    &message,
                )
                .await;
                break 'read;
            }
            let decoded = match connection.session {
                Some(_) => quiver_wire::decode_next(&mut buf),
                None => quiver_wire::decode_next_with_limit(&mut buf, MAX_HELLO_LEN),
            };
            let flow = match decoded {
                Ok(None) => break,
                Ok(Some(envelope)) => {
                    if matches!(envelope.frame, Frame::Goodbye(_)) {
                        connection.send_publish_replies().await;
                    }
                    connection.handle(envelope).await
                }
                Err(error) => {
                    if error.closes_connection() {
                        connection.send_publish_replies().await;
                    }
                    let flow = connection.bad_frame(&error, peer).await;
                    // A first frame that is not a whole, valid Hello ends the connection.
                    if connection.session.is_none() {
                        Flow::Close
                    } else {
                        flow
                    }
                }
            };
            if flow == Flow::Close {
                connection.send_publish_replies().await;
                break 'read;
            }
        }
        connection.send_publish_replies().await;
    }
    // However the session ended (the peer's end of stream, a closing error), the acks of
    // `committed` publishes still waiting for their log go out before the connection.
    let _ = tokio::time::timeout(CLOSE_WRITE_TIMEOUT, connection.publisher.settle()).await;
    if let Some(session) = connection.session.as_mut() {
        session.close();
    }
    drop(connection);
    // Every sender is gone once the subscription tasks have stopped, so the writer writes
    // what is queued and shuts the socket down.
    if tokio::time::timeout(CLOSE_WRITE_TIMEOUT, &mut writer_task)
        .await
        .is_err()
    {
        writer_task.abort();
    }
}

struct Connection<'a, D> {
    shared: &'a NativeShared,
    out: WriteQueue,
    session: Option<Session>,
    publisher: Publisher,
    /// Replies to the publishes of the current read, sent once the read is handled.
    publish_replies: Vec<Outgoing>,
    deliveries: &'a D,
}

/// The type and request id of the frame `buf` starts with, once its header is buffered
/// and says it is not a Hello (a bad header is left to the decoder's error).
fn not_hello(buf: &[u8]) -> Option<(FrameType, u32)> {
    let header = buf.get(..HEADER_LEN)?;
    if header[..2] != MAGIC || header[2] != VERSION {
        return None;
    }
    let kind = FrameType::from_u8(header[3]).filter(|kind| *kind != FrameType::Hello)?;
    let request_id = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    Some((kind, request_id))
}

/// Whether the server answers `frame` with its request id: not a Pong, an Error, or a
/// publish with ack `none` (which may carry any id).
fn wants_reply(frame: &Frame) -> bool {
    match frame {
        Frame::Pong(_) | Frame::Error(_) => false,
        Frame::Publish(publish) => publish.ack != AckMode::None,
        Frame::PublishBatch(batch) => batch.ack != AckMode::None,
        _ => true,
    }
}

/// Queues `frame`. A send fails only when the writer stopped (the peer is gone); the read
/// loop then ends on its next read.
async fn send(out: &WriteQueue, frame: Outgoing) {
    let _ = out.send(frame).await;
}

/// Queues an Error frame; closing codes end the connection.
async fn error(out: &WriteQueue, request_id: u32, code: ErrorCode, message: &str) -> Flow {
    send(
        out,
        Outgoing::encode(request_id, &ErrorFrame::new(code, message)),
    )
    .await;
    if code.closes_connection() {
        Flow::Close
    } else {
        Flow::Continue
    }
}

impl<D: Deliveries> Connection<'_, D> {
    /// Sends the held publish replies. The publishes woke their subscribers' delivery
    /// tasks; yielding first lets those write the deliveries before the acks wake this
    /// connection's writer, so acknowledging a publish does not delay its delivery. Once
    /// per read, not per publish, so pipelined publishes pay it once.
    async fn send_publish_replies(&mut self) {
        if self.publish_replies.is_empty() {
            return;
        }
        tokio::task::yield_now().await;
        for reply in self.publish_replies.drain(..) {
            send(&self.out, reply).await;
        }
    }

    /// Waits for what is in flight at shutdown: the acks of `committed` publishes, and
    /// the subscriptions, which end once they delivered what the broker queued for them.
    async fn settle(&mut self) {
        self.publisher.settle().await;
        if let Some(session) = self.session.as_mut() {
            session.ended().await;
        }
    }

    async fn bad_frame(&self, wire_error: &WireError, peer: SocketAddr) -> Flow {
        tracing::debug!(%peer, error = %wire_error, "bad native frame");
        let frame = wire_error.to_error_frame();
        send(&self.out, Outgoing::encode(wire_error.request_id(), &frame)).await;
        if wire_error.closes_connection() {
            Flow::Close
        } else {
            Flow::Continue
        }
    }

    async fn handle(&mut self, envelope: Envelope) -> Flow {
        let Envelope { request_id, frame } = envelope;
        if frame.frame_type().direction() == Direction::ServerToClient {
            let message = format!(
                "{:?} frames are sent by the server, not by a client",
                frame.frame_type()
            );
            return error(
                &self.out,
                request_id,
                ErrorCode::PROTOCOL_VIOLATION,
                &message,
            )
            .await;
        }
        if self.session.is_none() {
            return self.hello(request_id, frame).await;
        }
        let Connection {
            shared,
            out,
            session,
            publisher,
            publish_replies,
            deliveries,
        } = self;
        let session = session.as_mut().expect("checked just above");
        if publisher.pending(request_id) && wants_reply(&frame) {
            let message = format!(
                "request id {request_id} is in flight (a committed publish not yet acknowledged)"
            );
            return error(out, request_id, ErrorCode::PROTOCOL_VIOLATION, &message).await;
        }
        match frame {
            Frame::Hello(_) => {
                let message = "a second Hello on one connection";
                error(out, request_id, ErrorCode::PROTOCOL_VIOLATION, message).await
            }
            Frame::Ping(_) => {
                send(out, Outgoing::encode(request_id, &Pong)).await;
                Flow::Continue
            }
            Frame::Pong(_) => Flow::Continue,
            Frame::Error(reported) => {
                tracing::debug!(code = %reported.code, message = %reported.message, "native client reported an error");
                if reported.code.closes_connection() {
                    Flow::Close
                } else {
                    Flow::Continue
                }
            }
            Frame::Goodbye(_) => {
                // The requests in flight are answered first.
                let _ = tokio::time::timeout(CLOSE_WRITE_TIMEOUT, publisher.settle()).await;
                let goodbye = Goodbye {
                    code: ErrorCode::NORMAL_CLOSE,
                    message: "goodbye".to_owned(),
                };
                send(out, Outgoing::encode(request_id, &goodbye)).await;
                Flow::Close
            }
            Frame::Publish(publish) => {
                let message = streams::message(&publish.headers, publish.payload);
                let reply = publisher
                    .publish(
                        shared,
                        out,
                        request_id,
                        &publish.stream,
                        publish.ack,
                        vec![message],
                    )
                    .await;
                publish_replies.extend(reply);
                Flow::Continue
            }
            Frame::PublishBatch(batch) => {
                let messages = batch
                    .messages
                    .into_iter()
                    .map(|m| streams::message(&m.headers, m.payload))
                    .collect();
                let reply = publisher
                    .publish(shared, out, request_id, &batch.stream, batch.ack, messages)
                    .await;
                publish_replies.extend(reply);
                Flow::Continue
            }
            Frame::Subscribe(subscribe) => {
                streams::subscribe(shared, session, out, *deliveries, request_id, subscribe).await;
                Flow::Continue
            }
            Frame::Unsubscribe(unsubscribe) => {
                streams::unsubscribe(session, out, request_id, unsubscribe.subscription_id).await;
                Flow::Continue
            }
            Frame::CreateStream(_)
            | Frame::DescribeStream(_)
            | Frame::DeleteStream(_)
            | Frame::ListStreams(_)
            | Frame::JoinGroup(_)
            | Frame::GroupAck(_)
            | Frame::GroupNack(_)
            | Frame::DescribeGroups(_)
            | Frame::ResetGroup(_)
            | Frame::DeleteGroup(_)
                if !session.granted(Capabilities::DURABLE) =>
            {
                let message = format!(
                    "{:?} needs the DURABLE capability (a server with a data directory); ask for it in Hello",
                    frame.frame_type()
                );
                error(out, request_id, ErrorCode::UNSUPPORTED, &message).await
            }
            Frame::CreateStream(create) => {
                send(out, admin::create(shared, request_id, create).await).await;
                Flow::Continue
            }
            Frame::DescribeStream(describe) => {
                send(out, admin::describe(shared, request_id, &describe)).await;
                Flow::Continue
            }
            Frame::DeleteStream(delete) => {
                send(out, admin::delete(shared, request_id, delete).await).await;
                Flow::Continue
            }
            Frame::ListStreams(list) => {
                send(out, admin::list(shared, request_id, &list)).await;
                Flow::Continue
            }
            Frame::JoinGroup(join) => {
                groups::join(shared, session, out, *deliveries, request_id, join).await;
                Flow::Continue
            }
            Frame::GroupAck(ack) => {
                send(out, groups::ack(session, request_id, &ack)).await;
                Flow::Continue
            }
            Frame::GroupNack(nack) => {
                send(out, groups::nack(session, request_id, &nack)).await;
                Flow::Continue
            }
            Frame::DescribeGroups(describe) => {
                send(out, groups::describe(shared, request_id, &describe)).await;
                Flow::Continue
            }
            Frame::ResetGroup(reset) => {
                send(out, groups::reset(shared, request_id, reset).await).await;
                Flow::Continue
            }
            Frame::DeleteGroup(delete) => {
                send(out, groups::delete(shared, request_id, delete).await).await;
                Flow::Continue
            }
            Frame::CacheGet(_) | Frame::CacheSet(_) | Frame::CacheDelete(_)
                if !session.granted(Capabilities::CACHE) =>
            {
                let message = "cache frames need the CACHE capability; ask for it in Hello";
                error(out, request_id, ErrorCode::UNSUPPORTED, message).await
            }
            Frame::CacheGet(get) => {
                let reply = cache::unheld(&shared.cache, request_id, || {
                    cache::get(&shared.cache, request_id, &get)
                });
                send(out, reply.await).await;
                Flow::Continue
            }
            Frame::CacheSet(set) => {
                let reply = cache::write(&shared.cache, request_id, || {
                    cache::set(&shared.cache, request_id, &set)
                });
                send(out, reply.await).await;
                Flow::Continue
            }
            Frame::CacheDelete(delete) => {
                let reply = cache::write(&shared.cache, request_id, || {
                    cache::delete(&shared.cache, request_id, &delete)
                });
                send(out, reply.await).await;
                Flow::Continue
            }
            other => {
                let message = format!(
                    "{:?} frames are not handled by this server",
                    other.frame_type()
                );
                error(out, request_id, ErrorCode::UNSUPPORTED, &message).await
            }
        }
    }

    async fn hello(&mut self, request_id: u32, frame: Frame) -> Flow {
        let Frame::Hello(hello) = frame else {
            let message = format!(
                "the first frame must be Hello, not {:?}",
                frame.frame_type()
            );
            return error(&self.out, request_id, ErrorCode::HELLO_REQUIRED, &message).await;
        };
        let durable = self.shared.broker.has_storage();
        match Session::open(&hello, &self.shared.settings, durable) {
            Ok((session, ok)) => {
                self.session = Some(session);
                send(&self.out, Outgoing::encode(request_id, &ok)).await;
                Flow::Continue
            }
            Err(refusal) => {
                let code = refusal.code;
                send(&self.out, Outgoing::encode(request_id, &refusal)).await;
                if code.closes_connection() {
                    Flow::Close
                } else {
                    Flow::Continue
                }
            }
        }
    }
}
