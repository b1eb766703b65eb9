//! One connection (TCP, or QUIC's control stream plus a unidirectional stream per
//! subscription for its deliveries): the Hello exchange, a writer task that coalesces queued frames into
//! few writes, and a reader task that routes replies to their requests by request id (so
//! many requests are in flight and replies may come in any order) and deliveries to their
//! subscriptions by subscription id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use quiver_wire::{Capabilities, Envelope, Frame, FramePayload, Hello, HelloOk, VERSION};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use crate::error::{ConnectError, RequestError};
use crate::quic;
use crate::subscription::{Resume, SubItem};
use crate::tls::ServerTrust;
use crate::url::{Target, Transport};

mod io;

pub(crate) use io::make_room;
pub use io::{Incoming, delivery};
use io::{read_loop, write_loop};

/// Frames queued for the writer before requesters wait.
const WRITE_QUEUE_FRAMES: usize = 1024;

/// Most bytes the writer gathers into one `write`.
const MAX_GATHER_BYTES: usize = 256 << 10;

/// Initial read buffer; it grows to hold one whole frame.
const READ_BUFFER_BYTES: usize = 64 << 10;

/// How long a connection whose client was dropped keeps running to write what was queued
/// and read the replies to it, waiting for the server to close its side. Past it the
/// connection is cut, whatever is still queued.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a [`Waiter::Callback`] is called with: the reply, or why there is none.
pub type Callback = Box<dyn FnOnce(Result<Frame, RequestError>) + Send>;

/// Who waits for the reply to a request.
enum Waiter {
    /// A plain request.
    Reply(oneshot::Sender<Result<Frame, RequestError>>),
    /// A Subscribe or JoinGroup: on Subscribed, the reader registers `route` under the
    /// new id before it reads the next frame, so no delivery can arrive unrouted.
    Subscribe {
        reply: oneshot::Sender<Result<Frame, RequestError>>,
        route: Route,
    },
    /// A request whose sender does not wait: called once, from the reader, with the reply
    /// (or from whoever closes the connection, with the reason).
    Callback(Callback),
}

impl Waiter {
    /// Hands `result` to whoever waits.
    fn answer(self, result: Result<Frame, RequestError>) {
        match self {
            Waiter::Reply(reply) | Waiter::Subscribe { reply, .. } => {
                let _ = reply.send(result);
            }
            Waiter::Callback(callback) => callback(result),
        }
    }
}

/// Where one subscription's deliveries go, and where the offsets it received are noted
/// (so that a reconnect resumes after them).
#[derive(Clone)]
pub struct Route {
    pub deliveries: mpsc::Sender<SubItem>,
    pub resume: Option<Arc<Resume>>,
}

#[derive(Default)]
struct Routes {
    pending: HashMap<u32, Waiter>,
    subscriptions: HashMap<u32, Route>,
    /// Set when the connection is over; new requests fail with it.
    closed: Option<String>,
    /// Set when the client is gone and the connection is finishing: new requests are
    /// refused, replies to earlier ones are still routed.
    finishing: bool,
}

impl Routes {
    /// Why a new request cannot be sent, if it cannot.
    fn refusal(&self) -> Option<RequestError> {
        if let Some(reason) = &self.closed {
            return Some(RequestError::Disconnected {
                reason: reason.clone(),
            });
        }
        self.finishing.then(|| RequestError::Disconnected {
            reason: "the client was closed".to_owned(),
        })
    }
}

/// A live connection, shared by the client and its subscriptions.
pub struct Connection {
    out: mpsc::Sender<Bytes>,
    routes: Mutex<Routes>,
    next_request_id: AtomicU32,
    /// What the server granted in HelloOk.
    pub granted: Capabilities,
    request_timeout: Duration,
    /// Whether subscriptions are told when the connection ends (no reconnect to wait for).
    end_subscriptions_on_close: bool,
    /// Becomes true when the connection ends.
    closed_signal: watch::Sender<bool>,
    /// Becomes true when the client is gone: the writer writes what is queued and shuts
    /// its side down, the reader reads until the server closes (at most
    /// [`CLOSE_TIMEOUT`]).
    finish_signal: watch::Sender<bool>,
    /// The reader and writer tasks, stopped when the client goes away.
    tasks: Mutex<Vec<AbortHandle>>,
    /// Bumped whenever a subscription is registered, so that a QUIC delivery stream whose
    /// first frame overtook its Subscribed reply can wait for the route.
    registered: watch::Sender<u64>,
    /// The QUIC connection, closed when this connection ends.
    quic: Option<quic::QuicParts>,
}

/// How to say Hello.
pub struct HelloParams {
    pub client_name: String,
    pub auth_token: Bytes,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub end_subscriptions_on_close: bool,
    /// How a QUIC server's certificate is trusted.
    pub trust: Option<ServerTrust>,
}

impl Connection {
    /// Connects to `target`, says Hello and starts the reader and writer tasks.
    pub async fn open(
        target: &Target,
        params: HelloParams,
    ) -> Result<Arc<Connection>, ConnectError> {
        let timeout = params.connect_timeout;
        let timed_out = |_| ConnectError::Timeout {
            addr: target.addr.clone(),
            after: timeout,
        };
        match target.transport {
            Transport::Tcp => {
                let attempt = async {
                    let io = |source| ConnectError::Io {
                        addr: target.addr.clone(),
                        source,
                    };
                    let stream = TcpStream::connect(&target.addr).await.map_err(io)?;
                    stream.set_nodelay(true).map_err(io)?;
                    let (mut reader, mut writer) = stream.into_split();
                    let (ok, leftover) =
                        handshake(&target.addr, &mut reader, &mut writer, &params).await?;
                    Ok::<_, ConnectError>((reader, writer, ok, leftover))
                };
                let (reader, writer, ok, leftover) = tokio::time::timeout(timeout, attempt)
                    .await
                    .map_err(timed_out)??;
                Ok(Self::start(reader, writer, ok, leftover, &params, None))
            }
            Transport::Quic => {
                let attempt = async {
                    let (parts, mut send, mut recv) =
                        quic::connect(target, params.trust.as_ref()).await?;
                    let (ok, leftover) =
                        handshake(&target.addr, &mut recv, &mut send, &params).await?;
                    Ok::<_, ConnectError>((parts, send, recv, ok, leftover))
                };
                let (parts, send, recv, ok, leftover) = tokio::time::timeout(timeout, attempt)
                    .await
                    .map_err(timed_out)??;
                let quic = parts.connection.clone();
                let connection = Self::start(recv, send, ok, leftover, &params, Some(parts));
                let acceptor = tokio::spawn(quic::accept_deliveries(quic, Arc::clone(&connection)));
                connection
                    .tasks
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(acceptor.abort_handle());
                Ok(connection)
            }
        }
    }

    fn start<R, W>(
        reader: R,
        writer: W,
        ok: HelloOk,
        leftover: BytesMut,
        params: &HelloParams,
        quic: Option<quic::QuicParts>,
    ) -> Arc<Connection>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, queue) = mpsc::channel(WRITE_QUEUE_FRAMES);
        let connection = Arc::new(Connection {
            out,
            routes: Mutex::default(),
            next_request_id: AtomicU32::new(2),
            granted: ok.capabilities,
            request_timeout: params.request_timeout,
            end_subscriptions_on_close: params.end_subscriptions_on_close,
            closed_signal: watch::Sender::new(false),
            finish_signal: watch::Sender::new(false),
            tasks: Mutex::default(),
            registered: watch::Sender::new(0),
            quic,
        });
        let finish = connection.finish_signal.subscribe();
        let writer = tokio::spawn(write_loop(writer, queue, finish));
        let reader = tokio::spawn(read_loop(reader, leftover, Arc::clone(&connection)));
        *connection
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner) =
            vec![writer.abort_handle(), reader.abort_handle()];
        connection
    }

    /// How long a request waits for its reply.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// A receiver told whenever a subscription is registered.
    pub fn registrations(&self) -> watch::Receiver<u64> {
        self.registered.subscribe()
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the connection is over.
    pub fn is_closed(&self) -> bool {
        self.routes().closed.is_some()
    }

    /// A receiver that becomes true when the connection ends.
    pub fn closed(&self) -> watch::Receiver<bool> {
        self.closed_signal.subscribe()
    }

    /// Closes the socket now: stops the reader and writer tasks.
    pub fn abort(&self) {
        self.close("the client was dropped".to_owned());
        self.stop_tasks();
    }

    fn stop_tasks(&self) {
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
    }

    /// Ends the connection once what is queued is written: new requests are refused, the
    /// writer writes every queued frame and shuts its side down, and the reader goes on
    /// routing replies until the server closes its side (it does once it has handled
    /// every frame), at most [`CLOSE_TIMEOUT`]. What a client queued before it was dropped
    /// (a publish with ack `none`, an unsubscribe) thus reaches the server.
    pub fn finish(&self) {
        let closed = {
            let mut routes = self.routes();
            routes.finishing = true;
            routes.closed.is_some()
        };
        self.finish_signal.send_replace(true);
        if closed {
            // Nothing is left to write or read: stop whatever task still runs.
            self.stop_tasks();
        }
    }

    /// Sends `frame` and waits for its reply (an Error reply becomes
    /// [`RequestError::Server`]).
    pub async fn request<F: FramePayload>(&self, frame: &F) -> Result<Frame, RequestError> {
        let (reply, answer) = oneshot::channel();
        self.send_request(frame, Waiter::Reply(reply), answer).await
    }

    /// Sends Subscribe (or JoinGroup); on success the reader routes deliveries for the new
    /// id along `route`.
    pub async fn subscribe<F: FramePayload>(
        &self,
        frame: &F,
        route: Route,
    ) -> Result<Frame, RequestError> {
        let (reply, answer) = oneshot::channel();
        self.send_request(frame, Waiter::Subscribe { reply, route }, answer)
            .await
    }

    async fn send_request<F: FramePayload>(
        &self,
        frame: &F,
        waiter: Waiter,
        answer: oneshot::Receiver<Result<Frame, RequestError>>,
    ) -> Result<Frame, RequestError> {
        let mut buf = BytesMut::new();
        let id = {
            let mut routes = self.routes();
            if let Some(refusal) = routes.refusal() {
                return Err(refusal);
            }
            let id = self.fresh_id(&routes);
            quiver_wire::encode(id, frame, &mut buf).map_err(RequestError::Encode)?;
            routes.pending.insert(id, waiter);
            id
        };
        // The request timeout covers the wait for room in the write queue too (a stalled
        // connection fills it), not only the wait for the reply.
        let deadline = tokio::time::Instant::now() + self.request_timeout;
        let timed_out = || {
            self.routes().pending.remove(&id);
            RequestError::Timeout {
                after: self.request_timeout,
            }
        };
        match tokio::time::timeout_at(deadline, self.out.send(buf.freeze())).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                self.routes().pending.remove(&id);
                return Err(self.disconnected());
            }
            Err(_) => return Err(timed_out()),
        }
        match tokio::time::timeout_at(deadline, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(self.disconnected()),
            Err(_) => Err(timed_out()),
        }
    }

    /// Sends `frame` and returns once it is queued for the socket; `callback` is called
    /// exactly once: by the reader with the reply, or with the reason there is none (the
    /// request could not be sent, the write queue had no room within the request timeout,
    /// the connection ended). The wait for the reply is not bounded here: the caller
    /// bounds its own wait.
    pub async fn request_then<F: FramePayload>(&self, frame: &F, callback: Callback) {
        let mut buf = BytesMut::new();
        let id = {
            let mut routes = self.routes();
            if let Some(refusal) = routes.refusal() {
                drop(routes);
                return callback(Err(refusal));
            }
            let id = self.fresh_id(&routes);
            if let Err(error) = quiver_wire::encode(id, frame, &mut buf) {
                drop(routes);
                return callback(Err(RequestError::Encode(error)));
            }
            routes.pending.insert(id, Waiter::Callback(callback));
            id
        };
        let failure =
            match tokio::time::timeout(self.request_timeout, self.out.send(buf.freeze())).await {
                Ok(Ok(())) => return,
                Ok(Err(_)) => self.disconnected(),
                // No room in the write queue within the request timeout.
                Err(_) => RequestError::Timeout {
                    after: self.request_timeout,
                },
            };
        // Unless the connection's close already answered it.
        let waiter = self.routes().pending.remove(&id);
        if let Some(waiter) = waiter {
            waiter.answer(Err(failure));
        }
    }

    /// Sends `frame` without waiting for a reply (Publish with ack `none`; a failure
    /// reply is logged by the reader); waits for room in the write queue at most the
    /// request timeout.
    pub async fn send<F: FramePayload>(&self, frame: &F) -> Result<(), RequestError> {
        let mut buf = BytesMut::new();
        let id = {
            let routes = self.routes();
            if let Some(refusal) = routes.refusal() {
                return Err(refusal);
            }
            self.fresh_id(&routes)
        };
        quiver_wire::encode(id, frame, &mut buf).map_err(RequestError::Encode)?;
        match tokio::time::timeout(self.request_timeout, self.out.send(buf.freeze())).await {
            Ok(sent) => sent.map_err(|_| self.disconnected()),
            Err(_) => Err(RequestError::Timeout {
                after: self.request_timeout,
            }),
        }
    }

    /// Queues `frame` if there is room, without waiting (used from `Drop`).
    pub fn try_send<F: FramePayload>(&self, frame: &F) {
        let mut buf = BytesMut::new();
        let id = self.fresh_id(&self.routes());
        if quiver_wire::encode(id, frame, &mut buf).is_ok() {
            let _ = self.out.try_send(buf.freeze());
        }
    }

    /// Stops routing deliveries for subscription `id`.
    pub fn forget_subscription(&self, id: u32) {
        self.routes().subscriptions.remove(&id);
    }

    /// A request id that is neither 0 (no reply) nor 1 (Hello) nor in flight.
    fn fresh_id(&self, routes: &Routes) -> u32 {
        loop {
            let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
            if id > 1 && !routes.pending.contains_key(&id) {
                return id;
            }
        }
    }

    fn disconnected(&self) -> RequestError {
        let reason = self.routes().closed.clone();
        RequestError::Disconnected {
            reason: reason.unwrap_or_else(|| "the connection ended".to_owned()),
        }
    }

    /// Ends the connection: fails every waiting request and ends every subscription.
    fn close(&self, reason: String) {
        let mut routes = self.routes();
        if routes.closed.is_some() {
            return;
        }
        let waiters: Vec<Waiter> = routes.pending.drain().map(|(_, waiter)| waiter).collect();
        for (_, route) in routes.subscriptions.drain() {
            if self.end_subscriptions_on_close {
                let _ = route
                    .deliveries
                    .try_send(SubItem::Disconnected(reason.clone()));
            }
        }
        routes.closed = Some(reason.clone());
        drop(routes);
        for waiter in waiters {
            waiter.answer(Err(RequestError::Disconnected {
                reason: reason.clone(),
            }));
        }
        if let Some(quic) = &self.quic {
            quic.close();
        }
        self.closed_signal.send_replace(true);
    }
}

/// Says Hello on `writer` and reads HelloOk from `reader`; returns it with any bytes read
/// past it.
async fn handshake<R, W>(
    addr: &str,
    reader: &mut R,
    writer: &mut W,
    params: &HelloParams,
) -> Result<(HelloOk, BytesMut), ConnectError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let io = |source| ConnectError::Io {
        addr: addr.to_owned(),
        source,
    };
    let hello = Hello {
        min_version: VERSION,
        max_version: VERSION,
        capabilities: Capabilities(
            Capabilities::HEADERS.0 | Capabilities::CACHE.0 | Capabilities::DURABLE.0,
        ),
        client_name: params.client_name.clone(),
        auth_token: params.auth_token.clone(),
    };
    let mut buf = BytesMut::new();
    quiver_wire::encode(1, &hello, &mut buf)
        .map_err(|error| ConnectError::Protocol(format!("Hello does not encode: {error}")))?;
    writer.write_all(&buf).await.map_err(io)?;
    writer.flush().await.map_err(io)?;
    buf.clear();
    loop {
        match quiver_wire::decode_next(&mut buf) {
            Ok(Some(Envelope {
                frame: Frame::HelloOk(ok),
                ..
            })) => return Ok((ok, buf)),
            Ok(Some(Envelope {
                frame: Frame::Error(error),
                ..
            })) => {
                return Err(ConnectError::Refused {
                    code: error.code,
                    message: error.message,
                });
            }
            Ok(Some(other)) => {
                return Err(ConnectError::Protocol(format!(
                    "expected HelloOk, got {:?}",
                    other.frame.frame_type()
                )));
            }
            Ok(None) => {}
            Err(error) => return Err(ConnectError::Protocol(error.to_string())),
        }
        if reader.read_buf(&mut buf).await.map_err(io)? == 0 {
            return Err(ConnectError::Protocol(
                "the server closed the connection during Hello".to_owned(),
            ));
        }
    }
}
