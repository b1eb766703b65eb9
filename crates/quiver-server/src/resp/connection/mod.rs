//! One RESP connection: read, decode every complete request, run each, and
//! write the replies of one read with one `write`. Blocking pops park the
//! connection until a push, a timeout, `CLIENT KILL` or shutdown. Between
//! reads the connection may move, with all its state, to another connection
//! thread (see `resp::threads`).

mod block;
mod classify;
mod refuse;
mod scripts;

pub(in crate::resp) use classify::is_script_call;
use classify::{may_write, runs_inside_multi};

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quiver_core::cache::ChangeOrigin;
use quiver_core::pubsub::{Closed, Entry};
use quiver_resp::encode as write;
use quiver_resp::{CommandError, Decoder, ErrorCode, ParseError, Protocol, Request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{ReadHalf, WriteHalf};

use super::ahead;
use super::clients::ClientHandle;
use super::command::exec::{DataCtx, Outcome, execute_data, execute_session};
use super::command::pubsub::exec::{PendingPublish, write_entries};
use super::session::{Queued, Session};
use super::{PROTECTED_MODE_REPLY, RespShared, monitor};
use crate::clock::unix_ms;
use crate::resp::command::scripting::exec::Done;
use crate::resp::command::{Command, KeysCommand};
use crate::resp::table::{self, CommandSpec, Group, flag};
use crate::resp::threads::{self, Seat};
use crate::serve::listener::ConnectionGuard;
use crate::serve::shutdown::Shutdown;
use block::{Blocked, Parked};
use scripts::drain_scripts;

/// Most requests decoded ahead of the one running, so that the keys of a
/// pipeline's requests are looked up together (see `next_request`).
const DECODE_AHEAD: usize = 15;

/// Bytes asked of the kernel per read, at first.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// Most bytes asked of the kernel per read. A read that fills all its room doubles the
/// next one's, up to this, so a client whose pipelines outgrow a chunk (64 PUBLISH of
/// 256 B are 19.5 KB) has each read in one `read` and answered in one `write`, as Redis
/// reads as much as its query buffer has room for.
const MAX_READ_CHUNK_BYTES: usize = 256 * 1024;

/// Replies are written out once this many bytes are pending, even in the
/// middle of a pipeline, so one deep pipeline cannot pile up replies.
const FLUSH_THRESHOLD_BYTES: usize = 64 * 1024;

/// What the loop does after a command.
#[derive(Debug)]
pub(super) enum Flow {
    Continue,
    /// Flush the replies, then close (QUIT, a fatal error).
    Close,
    /// Wait for a key to receive data, then run the command again.
    Block(Box<Blocked>),
    /// Wait for a publish to a stream-named channel, then reply.
    Publish(Box<PendingPublish>),
    /// MIGRATE waiting for its target server: await it, then finish it.
    Migrate(Box<crate::resp::command::keys::migrate::PendingMigrate>),
    /// EVAL, EVALSHA or FCALL running on the script thread: its reply comes here.
    Script(tokio::sync::oneshot::Receiver<Done>),
    /// CLIENT PAUSE holds the command until then: wait, then handle it again.
    Paused(Instant),
}

/// Why the read loop stopped.
enum End {
    Closed,
    /// The connection continues on another connection thread.
    Move(usize),
}

/// Runs one accepted connection to its end.
pub(super) async fn serve(
    mut stream: TcpStream,
    peer: SocketAddr,
    guard: ConnectionGuard,
    shared: Arc<RespShared>,
    shutdown: Shutdown,
    seat: Seat,
) {
    if shared.refuses(peer.ip()) {
        shared.stats.refused_connection();
        let _ = stream.write_all(PROTECTED_MODE_REPLY).await;
        drop(guard);
        return;
    }
    let local = stream.local_addr().unwrap_or(shared.listen_addr);
    let id = shared.clients.next_id();
    shared
        .stats
        .total_connections
        .fetch_add(1, Ordering::Relaxed);
    let handle = shared
        .clients
        .register(id, peer, local, shared.pubsub.inbox());
    let session = Session::new(id, peer, &shared.acl);
    let authenticated = session.authenticated;
    let connection = Connection {
        session,
        decoder: Decoder::new(if authenticated {
            shared.settings.limits
        } else {
            shared.settings.limits.unauthenticated()
        }),
        ahead: VecDeque::new(),
        handle: Arc::clone(&handle),
        shared: Arc::clone(&shared),
        now_ms: unix_ms(),
        clock: Instant::now(),
        entries: Vec::new(),
        silent: false,
        published: false,
        woken: false,
    };
    handle.update(&connection.session);
    let live = Live {
        connection,
        input: BytesMut::with_capacity(READ_CHUNK_BYTES),
        shutdown,
        _guard: guard,
    };
    drive(live, stream, seat).await;
}

/// Everything a connection carries from one connection thread to another.
/// Dropping it ends the connection's registrations.
struct Live {
    connection: Connection,
    /// Received bytes not yet decoded (part of a request, or a pipeline's rest).
    input: BytesMut,
    shutdown: Shutdown,
    _guard: ConnectionGuard,
}

impl Drop for Live {
    fn drop(&mut self) {
        let shared = &self.connection.shared;
        // Both take shard locks: while a script holds them, done once it lets them go.
        let watched = std::mem::take(&mut self.connection.session.watched);
        let subscriber = self.connection.session.subscriber.take();
        let cache = Arc::clone(&shared.cache);
        shared.cache.hold().after_release(move || {
            for watched in &watched {
                cache.unwatch(watched);
            }
            drop(subscriber);
        });
        shared.clients.remove(self.connection.session.id);
        if self.connection.session.monitor.is_some() {
            shared.monitors.remove(self.connection.session.id);
        }
    }
}

/// Runs the connection's read loop on the current thread until it ends or
/// moves to another thread.
async fn drive(mut live: Live, mut stream: TcpStream, seat: Seat) {
    let end = {
        let (reader, writer) = stream.split();
        let Live {
            connection,
            input,
            shutdown,
            ..
        } = &mut live;
        connection.run(reader, writer, input, shutdown, &seat).await
    };
    if let Err(End::Move(target)) = end {
        relocate(live, stream, seat, target);
    }
}

fn relocate(live: Live, stream: TcpStream, seat: Seat, target: usize) {
    let client = live.connection.session.id;
    let serve = move |stream, seat| drive(live, stream, seat);
    if let Err(error) = seat.relocate(target, stream, serve) {
        tracing::warn!(client, %error, "closing client: could not move it to another connection thread");
    }
}

pub(super) struct Connection {
    pub(super) session: Session,
    pub(super) decoder: Decoder,
    /// Requests decoded ahead of the one running, with their commands (see
    /// `next_request`).
    ahead: VecDeque<Found>,
    pub(super) handle: Arc<ClientHandle>,
    pub(super) shared: Arc<RespShared>,
    /// Unix time in ms for the commands of the current read: read once per
    /// batch, as Redis reads its clock once per event-loop turn.
    now_ms: u64,
    /// When the previous command ended; each command's time is measured from
    /// here, so timing costs one clock read per command.
    clock: Instant,
    /// Deliveries taken from the subscriber's mailbox (kept to reuse its allocation).
    entries: Vec<Entry>,
    /// The reply of the last request is left out (`CLIENT REPLY OFF` or `SKIP`).
    silent: bool,
    /// A request of the current read published to subscribers.
    pub(super) published: bool,
    /// The command running is a blocked one run again (`DataCtx::woken`).
    pub(super) woken: bool,
}

impl Connection {
    async fn run(
        &mut self,
        mut reader: ReadHalf<'_>,
        mut writer: WriteHalf<'_>,
        input: &mut BytesMut,
        shutdown: &Shutdown,
        seat: &Seat,
    ) -> Result<(), End> {
        let mut output = BytesMut::with_capacity(READ_CHUNK_BYTES);
        // Replies of script calls still running, in the order they were sent.
        let mut scripts = VecDeque::new();
        // Whether the last read filled all the room it had: more input is
        // likely waiting in the socket.
        let mut filled = false;
        let mut chunk = READ_CHUNK_BYTES;
        loop {
            let mut served = 0;
            loop {
                let (request, command) = match self.next_request(input) {
                    Ok(Some(found)) => found,
                    Ok(None) => break,
                    Err(error) => {
                        drain_scripts(&mut scripts, &mut output, &self.shared, shutdown).await?;
                        if error.replies() {
                            let before = output.len();
                            write::write_error(&mut output, error.to_string().as_bytes());
                            self.shared.stats.error(&output[before..]);
                        } else {
                            tracing::info!(client = self.session.id, peer = %self.session.peer, %error, "closing client");
                        }
                        flush(&mut writer, &mut output, &self.session, &self.shared).await?;
                        return Err(End::Closed);
                    }
                };
                if request.is_empty() {
                    continue;
                }
                served += 1;
                // Script calls queue behind this client's earlier ones on the script
                // thread without waiting for their replies (the replies are written in
                // order); anything else waits for them first, and for the script thread
                // to let the keyspace go, here rather than on the keyspace.
                if !scripts.is_empty() || self.shared.scripts.holding() {
                    let script_call = is_script_call(&request);
                    if !scripts.is_empty() && (!script_call || self.shared.scripts.busy()) {
                        drain_scripts(&mut scripts, &mut output, &self.shared, shutdown).await?;
                    }
                    self.wait_for_script(&request, shutdown).await?;
                }
                let mut flow = self.handle_request(&request, command, &mut output);
                while let Flow::Paused(until) = flow {
                    // Replies of earlier script calls go out before the wait, and what
                    // they did (a SCRIPT LOAD of a `no-writes` script) is taken into
                    // account: the request is looked at again once they are in.
                    if !scripts.is_empty() {
                        drain_scripts(&mut scripts, &mut output, &self.shared, shutdown).await?;
                        self.wait_for_script(&request, shutdown).await?;
                        flow = self.handle_request(&request, command, &mut output);
                        continue;
                    }
                    flush(&mut writer, &mut output, &self.session, &self.shared).await?;
                    // CLIENT LIST shows the command that waits.
                    self.handle.update(&self.session);
                    tokio::select! {
                        biased;
                        () = self.handle.kill.notified() => if self.handle.killed.load(Ordering::Acquire) {
                            return Err(End::Closed);
                        },
                        () = shutdown.wait() => return Err(End::Closed),
                        () = self.shared.pause.wait(until) => {}
                    }
                    // Its time starts now, and a script may have taken the keyspace.
                    self.now_ms = unix_ms();
                    self.clock = Instant::now();
                    self.wait_for_script(&request, shutdown).await?;
                    flow = self.handle_request(&request, command, &mut output);
                }
                match flow {
                    Flow::Continue | Flow::Paused(_) => {}
                    Flow::Close => {
                        flush(&mut writer, &mut output, &self.session, &self.shared).await?;
                        return Err(End::Closed);
                    }
                    Flow::Block(blocked) => {
                        // Unblockable, and shown by CLIENT LIST, before the client can
                        // see it waits.
                        self.handle.unblock.store(0, Ordering::Release);
                        self.handle.blocked.store(true, Ordering::Release);
                        self.handle.update(&self.session);
                        flush(&mut writer, &mut output, &self.session, &self.shared).await?;
                        let parked = Parked {
                            reader: &mut reader,
                            input,
                            shutdown,
                        };
                        let (silent, before, spec) = (self.silent, output.len(), blocked.spec);
                        self.block(*blocked, parked, &mut output).await?;
                        self.count_late_reply(spec, &output[before..]);
                        if silent {
                            output.clear();
                        }
                    }
                    Flow::Script(reply) => {
                        // Its failure is counted when the reply comes.
                        let called = table::resolve_found(&request, command).ok();
                        scripts.push_back((reply, self.silent, called));
                    }
                    Flow::Migrate(pending) => {
                        let (silent, before) = (self.silent, output.len());
                        self.migrate(*pending, shutdown, &mut output).await?;
                        if let Some(spec) = command {
                            self.count_late_reply(spec, &output[before..]);
                        }
                        if silent {
                            output.truncate(before);
                        }
                    }
                    Flow::Publish(pending) => {
                        let (silent, before) = (self.silent, output.len());
                        let result = pending.publish.await;
                        super::command::pubsub::exec::publish_reply(
                            self,
                            &mut output,
                            result,
                            pending.receivers,
                        );
                        self.shared.stats.error(&output[before..]);
                        if silent {
                            output.truncate(before);
                        }
                    }
                }
                if output.len() > self.shared.settings.max_output_buffer_bytes {
                    tracing::warn!(
                        client = self.session.id,
                        peer = %self.session.peer,
                        pending = output.len(),
                        limit = self.shared.settings.max_output_buffer_bytes,
                        "closing client: output buffer limit reached (resp.max_output_buffer)"
                    );
                    return Err(End::Closed);
                }
                if output.len() >= FLUSH_THRESHOLD_BYTES {
                    flush(&mut writer, &mut output, &self.session, &self.shared).await?;
                }
            }
            if !scripts.is_empty() {
                drain_scripts(&mut scripts, &mut output, &self.shared, shutdown).await?;
            }
            // The replies of a pipeline go out after the thread's other ready connections
            // have been served: a client waiting on several of them is woken once for the
            // burst (ARCHITECTURE.md, RESP connection threads). Not a publisher's: the
            // ready ones would be its subscribers, and its next messages would wait for
            // their deliveries.
            if threads::is_pipeline(served) && !self.published && !output.is_empty() {
                tokio::task::yield_now().await;
            }
            self.published = false;
            flush(&mut writer, &mut output, &self.session, &self.shared).await?;
            seat.served(served);
            self.handle.update(&self.session);
            if shutdown.is_triggered() {
                return Err(End::Closed);
            }
            if let Some(target) = seat.move_wanted() {
                return Err(End::Move(target));
            }
            if filled {
                // A deep pipeline is served a chunk at a time, taking turns
                // with the thread's other connections (as Redis serves one
                // read per client per turn of its event loop): each of them
                // gets its first replies without waiting for the whole of
                // this one.
                tokio::task::yield_now().await;
                chunk = (chunk * 2).min(MAX_READ_CHUNK_BYTES);
            }
            input.reserve(chunk);
            let room = input.capacity() - input.len();
            // Subscribers and monitors are never idle, as in Redis.
            let idle = self
                .shared
                .settings
                .idle_timeout
                .filter(|_| !self.session.subscribed() && self.session.monitor.is_none());
            // Biased: a CLIENT KILL or shutdown that is already pending wins
            // over input that arrived at the same time.
            let read = tokio::select! {
                biased;
                () = self.handle.kill.notified() => None,
                () = shutdown.wait() => return Err(End::Closed),
                () = messages(self.session.subscriber.as_ref()) => None,
                () = monitor_lines(self.session.monitor.as_deref()) => None,
                read = reader.read_buf(input) => Some(read),
                () = sleep_or_forever(idle) => {
                    tracing::debug!(client = self.session.id, "closing idle client (resp.idle_timeout)");
                    return Err(End::Closed);
                }
            };
            let Some(read) = read else {
                if self.handle.killed.load(Ordering::Acquire) || self.channels_revoked() {
                    return Err(End::Closed);
                }
                // Woken for messages or MONITOR's lines, or to read the inbox another
                // client redirects to.
                self.subscriber();
                if self.deliver(&mut output).is_err() {
                    return Err(End::Closed);
                }
                if let Some(feed) = &self.session.monitor
                    && feed.take(&mut output).is_err()
                {
                    tracing::info!(client = self.session.id, peer = %self.session.peer, "closing client: MONITOR's lines outgrew resp.max_output_buffer");
                    return Err(End::Closed);
                }
                flush(&mut writer, &mut output, &self.session, &self.shared).await?;
                filled = false;
                continue;
            };
            match read {
                Ok(0) | Err(_) => return Err(End::Closed),
                Ok(read) => {
                    self.shared.stats.read(read);
                    filled = read == room;
                }
            }
            self.now_ms = unix_ms();
            self.clock = Instant::now();
        }
    }

    /// The next request and its command (found once, here): one decoded ahead,
    /// or the next in `input`. When `input` holds several, up to
    /// [`DECODE_AHEAD`] more are decoded and the keys of all of them read ahead
    /// (see [`quiver_core::cache::Cache::warm`]). A request that fails to
    /// decode ahead is left in `input`, so its error comes in order, after the
    /// replies of the requests before it.
    fn next_request(&mut self, input: &mut BytesMut) -> Result<Option<Found>, ParseError> {
        if let Some(found) = self.ahead.pop_front() {
            return Ok(Some(found));
        }
        let Some(first) = self.decoder.decode(input)? else {
            return Ok(None);
        };
        let first = found(first);
        if !self.session.authenticated {
            return Ok(Some(first));
        }
        while self.ahead.len() < DECODE_AHEAD && !input.is_empty() {
            match self.decoder.decode(input) {
                Ok(Some(request)) => self.ahead.push_back(found(request)),
                Ok(None) | Err(_) => break,
            }
        }
        // A lone request gains only when it names several keys (MSET, MGET).
        if !self.ahead.is_empty() || ahead::several_keys(&first) {
            let targets = std::iter::once(&first)
                .chain(&self.ahead)
                .flat_map(ahead::targets);
            self.shared.cache.warm(self.session.db, targets);
        }
        Ok(Some(first))
    }

    /// The client's subscriber (its subscriptions, tracking and inbox), made on first use.
    pub(super) fn subscriber(&mut self) -> &mut quiver_core::pubsub::Subscriber {
        let (pubsub, id, inbox) = (&self.shared.pubsub, self.session.id, &self.handle.inbox);
        self.session
            .subscriber
            .get_or_insert_with(|| pubsub.subscriber(id, inbox.clone()))
    }

    /// Writes what the subscriber's mailbox holds (messages published before the
    /// command about to run come before its reply, as in Redis). Fails when an output
    /// limit disconnected the subscriber: the connection must close.
    pub(super) fn deliver(&mut self, out: &mut BytesMut) -> Result<(), Closed> {
        let Some(subscriber) = &self.session.subscriber else {
            return Ok(());
        };
        let result = subscriber.drain(&mut self.entries);
        let subscribed = !subscriber.is_idle();
        write_entries(out, self.session.protocol, subscribed, &self.entries);
        self.entries.clear();
        if let Err(closed) = &result {
            tracing::info!(client = self.session.id, peer = %self.session.peer, %closed, "closing client");
        }
        result
    }

    /// Resolves, authorizes, queues or runs one request, and leaves its reply out when
    /// `CLIENT REPLY` says so (`self.silent` tells the caller, for a reply that comes
    /// later).
    fn handle_request(
        &mut self,
        request: &Request,
        command: Option<&'static CommandSpec>,
        out: &mut BytesMut,
    ) -> Flow {
        if self.session.subscriber.is_some() && self.deliver(out).is_err() {
            return Flow::Close;
        }
        let before = out.len();
        let flow = self.dispatch(request, command, out);
        if !matches!(flow, Flow::Paused(_)) {
            self.silent = self.session.replies.silence();
            if self.silent {
                out.truncate(before);
            }
        }
        flow
    }

    fn dispatch(
        &mut self,
        request: &Request,
        command: Option<&'static CommandSpec>,
        out: &mut BytesMut,
    ) -> Flow {
        let spec = match table::resolve_found(request, command) {
            Ok(spec) => spec,
            Err(error) => {
                // A wrong arity is the command's rejected call, as in Redis.
                let rejected = match error {
                    CommandError::WrongArity { command: name } => command.and_then(|spec| {
                        if spec.name == name {
                            Some(spec)
                        } else {
                            request.arg(1).and_then(|sub| spec.subcommand(sub))
                        }
                    }),
                    _ if error.code() == ErrorCode::ExecAbort => command,
                    _ => None,
                };
                // CLIENT LIST shows the command looked up, or NULL, as Redis does.
                self.session.last_command = rejected.map_or("NULL", |spec| spec.name);
                return self.refuse(rejected, &error, out);
            }
        };
        // The command CLIENT LIST and ACL LOG show, also when it is refused, as in Redis.
        self.session.last_command = spec.name;
        if !self.session.authenticated && !spec.has(flag::NO_AUTH) {
            return self.refuse(Some(spec), &CommandError::NoAuth, out);
        }
        if let Err(error) = self.authorize(spec, request) {
            return self.refuse(Some(spec), &error, out);
        }
        if self.session.multi.is_some() && spec.has(flag::NO_MULTI) {
            let error = CommandError::Message("Command not allowed inside a transaction");
            return self.refuse(Some(spec), &error, out);
        }
        if self.shared.scripts.busy() && !spec.has(flag::ALLOW_BUSY) {
            let error = CommandError::Other {
                code: ErrorCode::Busy,
                message: self.shared.scripts.busy_error()["BUSY ".len()..].into(),
            };
            return self.refuse(Some(spec), &error, out);
        }
        if self.refused_for_memory(spec) {
            return self.refuse(Some(spec), &CommandError::Oom, out);
        }
        if self.session.subscribed()
            && self.session.protocol == Protocol::Resp2
            && !spec.has(flag::SUBSCRIBED_OK)
        {
            let error = CommandError::Other {
                code: ErrorCode::Err,
                message: format!("Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", spec.name).into(),
            };
            return self.refuse(Some(spec), &error, out);
        }
        if let Some(error) = self.refused_for_persistence(spec) {
            return self.refuse(Some(spec), &error, out);
        }
        let writes = may_write(spec)
            || spec.name == "exec" && self.session.multi.as_ref().is_some_and(|m| m.writes);
        // A script call that declares `no-writes` does not write (asked only when it
        // matters: under a pause, or queued in MULTI).
        let read_only_script = || {
            matches!(spec.name, "eval" | "evalsha" | "fcall")
                && self.shared.scripts.declared_read_only(request)
        };
        if let Some(until) = self.shared.pause.holds(writes)
            && !read_only_script()
        {
            return Flow::Paused(until);
        }
        if spec.has(flag::WRITE) || matches!(spec.name, "eval" | "evalsha" | "fcall" | "exec") {
            self.session.wrote.store(true, Ordering::Relaxed);
        }
        // MONITOR shows a script call before the commands it runs, a queued command when
        // EXEC runs it, anything else once it ran.
        let monitored = self.shared.monitors.active() && monitor::shows(spec);
        let queues = self.session.multi.is_some() && !runs_inside_multi(spec);
        if monitored
            && queues
            && let Some(multi) = &mut self.session.multi
        {
            multi.shown.push(monitor::shown_args(spec, request));
        } else if monitored && is_script_call(request) {
            self.show(spec, request);
        }
        let show_after = monitored && !queues && !is_script_call(request);
        // What EXEC must check of a queued command (also of one whose options fail).
        let writes = writes && !(queues && read_only_script());
        if queues && let Some(multi) = &mut self.session.multi {
            multi.writes |= writes;
            multi.deny_oom |= spec.has(flag::DENYOOM);
        }
        let before = out.len();
        let flow = match Command::parse_resolved(spec, request) {
            Ok(command) if queues => {
                if spec.has(flag::READONLY)
                    && self.session.tracking.is_some()
                    && let Some(multi) = &mut self.session.multi
                {
                    let at = multi.queued.len();
                    let keys = spec
                        .key_positions(request)
                        .filter_map(|pos| request.arg(pos));
                    multi
                        .reads
                        .extend(keys.map(|key| (at, bytes::Bytes::copy_from_slice(key))));
                }
                return self.queue(Queued::Command(spec, command), out);
            }
            Ok(command) => self.execute(spec, command, out),
            // Inside MULTI, Redis checks only the name and the arity when it queues; the
            // options are refused in EXEC's reply.
            Err(error) if self.session.multi.is_some() => {
                return self.queue(Queued::Refused(spec, error), out);
            }
            // Otherwise wrong options are the command's own failure, as in Redis (where
            // the command reads them): a failed call, in the slow log like any other.
            Err(error) => {
                write::write_error(out, error.to_string().as_bytes());
                // A scripting command's errors are counted by the engine, which this
                // one never reached.
                if spec.group == Group::Scripting {
                    self.shared.stats.error(&out[before..]);
                }
                Flow::Continue
            }
        };
        // What follows a command that ran: MONITOR, client-side caching, the slow log,
        // latency and the command's statistics.
        if show_after {
            self.show(spec, request);
        }
        self.after_tracked(spec, request);
        let ended = Instant::now();
        let elapsed = ended.saturating_duration_since(self.clock);
        self.clock = ended;
        self.session.last_command_at = ended;
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if self.shared.slowlog.is_slow(micros) && !spec.has(flag::SKIP_SLOWLOG) {
            let session = &self.session;
            let name = session.name.as_ref();
            self.shared
                .slowlog
                .record(request, micros, session.peer, name);
        }
        self.shared
            .latency
            .command(spec.has(flag::FAST), elapsed, self.now_ms / 1000);
        self.shared.stats.replied(spec, elapsed, &out[before..]);
        flow
    }

    /// Counts a reply that came after its command was counted (a blocked command's, a
    /// MIGRATE's): its error, and the command's failure.
    fn count_late_reply(&self, spec: &CommandSpec, reply: &[u8]) {
        let stats = &self.shared.stats;
        stats.error(reply);
        if reply.first() == Some(&b'-') {
            stats.failed(spec);
        }
    }

    /// Shows `request` to the monitoring clients.
    fn show(&self, spec: &CommandSpec, request: &Request) {
        let origin = monitor::Origin::Client(&self.session.peer);
        self.shared
            .monitors
            .feed(spec, request, self.session.db, origin);
    }

    /// Client-side caching after a command: the keys of a read are remembered, and
    /// `CLIENT CACHING` applies to one command (any but `CLIENT`, outside MULTI).
    fn after_tracked(&mut self, spec: &CommandSpec, request: &Request) {
        let Some(tracking) = &mut self.session.tracking else {
            return;
        };
        // A read-only script call's keys are not remembered: the keys its commands read are,
        // on the script thread.
        let remembers =
            spec.has(flag::READONLY) && spec.group != Group::Scripting && tracking.remembers();
        if self.session.multi.is_none() && !spec.name.starts_with("client") {
            tracking.caching = false;
        }
        if remembers && let Some(subscriber) = &self.session.subscriber {
            subscriber.remember(
                spec.key_positions(request)
                    .filter_map(|pos| request.arg(pos)),
            );
        }
    }

    /// Runs a command outside a transaction.
    fn execute(
        &mut self,
        spec: &'static CommandSpec,
        command: Command,
        out: &mut BytesMut,
    ) -> Flow {
        // What a blocked command runs again (WAIT waits without the flag, as in Redis).
        let waits = matches!(command, Command::Keys(KeysCommand::Wait { .. }));
        let retry = (spec.has(flag::BLOCKING) || waits).then(|| command.clone());
        // What the command changes is this client's doing (client-side caching's NOLOOP).
        let _origin = ChangeOrigin::enter(self.session.id);
        let cache = Arc::clone(&self.shared.cache);
        let mut db = cache
            .db(self.session.db)
            .expect("SELECT only accepts existing databases");
        let mut ctx = DataCtx {
            cache: &cache,
            db: &mut db,
            db_index: self.session.db,
            now_ms: self.now_ms,
            protocol: self.session.protocol,
            in_transaction: false,
            max_bulk_len: self.shared.settings.limits.max_bulk_len_bytes as u64,
            woken: self.woken,
        };
        match execute_data(&mut ctx, command, out) {
            Ok(outcome) => {
                // After a block too: nothing was written, but lookups may have expired keys.
                cache.after_command();
                match outcome {
                    Outcome::Done => Flow::Continue,
                    Outcome::Block {
                        keys,
                        timeout_ms,
                        retry: fixed,
                    } => Flow::Block(Box::new(Blocked {
                        spec,
                        command: fixed
                            .map(|command| *command)
                            .or(retry)
                            .expect("only commands flagged blocking block"),
                        keys,
                        deadline: timeout_ms.map(|ms| Instant::now() + Duration::from_millis(ms)),
                        timeout_reply: None,
                    })),
                    Outcome::Wait { timeout_ms } => Flow::Block(Box::new(Blocked {
                        spec,
                        command: retry.expect("WAIT keeps itself to run again"),
                        keys: Vec::new(),
                        deadline: timeout_ms.map(|ms| Instant::now() + Duration::from_millis(ms)),
                        timeout_reply: Some(0),
                    })),
                }
            }
            Err(command) => execute_session(self, command, out),
        }
    }
}

/// A request and the command its name names, if any.
pub(super) type Found = (Request, Option<&'static CommandSpec>);

fn found(request: Request) -> Found {
    let command = request.name().and_then(table::lookup);
    (request, command)
}

/// Writes `output` out. A subscriber that an output limit disconnects meanwhile ends
/// the write (its client may never read again).
async fn flush(
    writer: &mut WriteHalf<'_>,
    output: &mut BytesMut,
    session: &Session,
    shared: &RespShared,
) -> Result<(), End> {
    if output.is_empty() {
        return Ok(());
    }
    let cache = &shared.cache;
    // Replies go out only once the writes before them are as durable as `appendfsync`
    // promises; if the journal failed they never go out.
    if session.wrote.swap(false, Ordering::Relaxed)
        && let Err(error) = cache.wait_durable(session.id).await
    {
        tracing::error!(client = session.id, %error, "closing client: its writes could not be journaled");
        output.clear();
        return Err(End::Closed);
    }
    let result = match &session.subscriber {
        None => writer.write_all(output).await,
        Some(subscriber) => tokio::select! {
            result = writer.write_all(output) => result,
            closed = subscriber.cut() => {
                tracing::info!(client = session.id, peer = %session.peer, %closed, "closing client");
                return Err(End::Closed);
            }
        },
    };
    shared.stats.wrote(output.len());
    output.clear();
    result.map_err(|_| End::Closed)
}

/// Resolves when MONITOR's feed (if any) may have lines; never without one.
async fn monitor_lines(feed: Option<&monitor::Feed>) {
    match feed {
        Some(feed) => feed.ready().await,
        None => std::future::pending().await,
    }
}

/// Resolves when the subscriber (if any) may have deliveries; never without one.
async fn messages(subscriber: Option<&quiver_core::pubsub::Subscriber>) {
    match subscriber {
        Some(subscriber) => subscriber.ready().await,
        None => std::future::pending().await,
    }
}

async fn sleep_or_forever(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}
