//! Listener plumbing shared by every TCP transport: bind with the configured
//! backlog, apply socket options to each accepted connection, enforce the
//! connection limit with a protocol-specific refusal, count connections for
//! metrics, and stop accepting on shutdown while tracking what is still open.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use socket2::{Domain, Protocol, SockRef, Socket, TcpKeepalive, Type};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use super::shutdown::Shutdown;
use crate::config::{ListenerConfig, NetConfig};

/// How long a refused client gets to receive its refusal before we hang up.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Counters of one listener, read by `/metrics`.
#[derive(Debug)]
pub struct ListenerStats {
    /// Short name used in metrics and logs, e.g. `http`.
    pub name: &'static str,
    pub addr: SocketAddr,
    pub max_connections: u32,
    pub accepted_total: AtomicU64,
    pub refused_total: AtomicU64,
    /// Open connections; a watch so shutdown can await zero.
    open: watch::Sender<u64>,
}

impl ListenerStats {
    /// Connections open right now.
    pub fn open(&self) -> u64 {
        *self.open.borrow()
    }

    /// Resolves when no connection is open.
    pub async fn wait_idle(&self) {
        let mut receiver = self.open.subscribe();
        // `self` owns the sender, so the channel stays open while we wait.
        let _ = receiver.wait_for(|open| *open == 0).await;
    }
}

impl ListenerStats {
    /// Counters for a listener that is not a [`Listener`] (QUIC binds UDP itself).
    pub fn new(name: &'static str, addr: SocketAddr, max_connections: u32) -> Arc<ListenerStats> {
        Arc::new(ListenerStats {
            name,
            addr,
            max_connections,
            accepted_total: AtomicU64::new(0),
            refused_total: AtomicU64::new(0),
            open: watch::Sender::new(0),
        })
    }

    /// Takes one of `slots` for a new connection and counts it, or counts a refusal and
    /// returns `None` when every slot is taken.
    pub fn admit(self: &Arc<Self>, slots: &Arc<Semaphore>) -> Option<ConnectionGuard> {
        match Arc::clone(slots).try_acquire_owned() {
            Ok(permit) => {
                self.accepted_total.fetch_add(1, Ordering::Relaxed);
                self.open.send_modify(|open| *open += 1);
                Some(ConnectionGuard {
                    stats: Arc::clone(self),
                    _permit: permit,
                })
            }
            Err(_) => {
                self.refused_total.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

/// Held by each connection task; closing it updates the open count and frees
/// a connection slot.
#[derive(Debug)]
pub struct ConnectionGuard {
    stats: Arc<ListenerStats>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.stats.open.send_modify(|open| *open -= 1);
    }
}

/// A bound TCP listener that has not started accepting yet.
#[derive(Debug)]
pub struct Listener {
    tcp: TcpListener,
    net: NetConfig,
    slots: Arc<Semaphore>,
    stats: Arc<ListenerStats>,
}

impl Listener {
    /// Binds `config.addr` with the configured backlog.
    pub fn bind(
        name: &'static str,
        config: &ListenerConfig,
        net: &NetConfig,
    ) -> io::Result<Listener> {
        let socket = Socket::new(
            Domain::for_address(config.addr),
            Type::STREAM,
            Some(Protocol::TCP),
        )?;
        socket.set_reuse_address(true)?;
        socket.set_nonblocking(true)?;
        socket.bind(&config.addr.into())?;
        socket.listen(i32::try_from(net.backlog).unwrap_or(i32::MAX))?;
        let tcp = TcpListener::from_std(socket.into())?;
        let addr = tcp.local_addr()?;
        let max_connections = config.max_connections.get();
        let stats = ListenerStats::new(name, addr, max_connections);
        let slots = Arc::new(Semaphore::new(max_connections as usize));
        Ok(Listener {
            tcp,
            net: net.clone(),
            slots,
            stats,
        })
    }

    /// The listener's counters (shared with the accept loop).
    pub fn stats(&self) -> Arc<ListenerStats> {
        Arc::clone(&self.stats)
    }

    /// Accepts until `shutdown` fires. Each admitted connection runs
    /// `handle(stream, peer, guard)` on its own task; a connection over the limit
    /// runs `refuse(stream, limit)` instead, which should tell the client why.
    pub async fn run<H, HF, R, RF>(self, shutdown: Shutdown, handle: H, refuse: R)
    where
        H: Fn(TcpStream, SocketAddr, ConnectionGuard) -> HF,
        HF: Future<Output = ()> + Send + 'static,
        R: Fn(TcpStream, u32) -> RF,
        RF: Future<Output = ()> + Send + 'static,
    {
        let admit = |stream, peer, guard| {
            tokio::spawn(handle(stream, peer, guard));
        };
        self.accept_loop(shutdown, admit, refuse).await;
    }

    /// Accepts connections until `shutdown` fires, handing each admitted one
    /// to `admit` (which decides where it runs) and each refused one to
    /// `refuse`.
    pub async fn accept_loop<A, R, RF>(self, shutdown: Shutdown, admit: A, refuse: R)
    where
        A: Fn(TcpStream, SocketAddr, ConnectionGuard),
        R: Fn(TcpStream, u32) -> RF,
        RF: Future<Output = ()> + Send + 'static,
    {
        // Refusals are logged at most once a second (a flood of them would flood the log);
        // each is counted in the listener's figures.
        let mut refusals_logged: Option<tokio::time::Instant> = None;
        let mut refusals_since = 0u64;
        loop {
            let accepted = tokio::select! {
                accepted = self.tcp.accept() => accepted,
                () = shutdown.wait() => break,
            };
            let (stream, peer) = match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Typically EMFILE or ECONNABORTED: back off briefly instead of spinning.
                    tracing::warn!(listener = self.stats.name, %error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            if let Err(error) = apply_socket_options(&stream, &self.net) {
                tracing::debug!(listener = self.stats.name, %peer, %error, "socket options not applied");
            }
            match self.stats.admit(&self.slots) {
                Some(guard) => admit(stream, peer, guard),
                None => {
                    refusals_since += 1;
                    let now = tokio::time::Instant::now();
                    if refusals_logged.is_none_or(|at| now - at >= Duration::from_secs(1)) {
                        tracing::warn!(
                            listener = self.stats.name,
                            %peer,
                            limit = self.stats.max_connections,
                            refused = refusals_since,
                            "connections refused: connection limit reached (count since the last such line)"
                        );
                        refusals_logged = Some(now);
                        refusals_since = 0;
                    }
                    let refusal = refuse(stream, self.stats.max_connections);
                    tokio::spawn(async move {
                        let _ = tokio::time::timeout(REFUSAL_TIMEOUT, refusal).await;
                    });
                }
            }
        }
    }
}

fn apply_socket_options(stream: &TcpStream, net: &NetConfig) -> io::Result<()> {
    stream.set_nodelay(net.nodelay)?;
    let socket = SockRef::from(stream);
    if let Some(bytes) = net.send_buffer_bytes {
        socket.set_send_buffer_size(bytes as usize)?;
    }
    if let Some(bytes) = net.recv_buffer_bytes {
        socket.set_recv_buffer_size(bytes as usize)?;
    }
    if let Some(idle) = net.keepalive {
        socket.set_tcp_keepalive(&TcpKeepalive::new().with_time(idle))?;
    }
    Ok(())
}
