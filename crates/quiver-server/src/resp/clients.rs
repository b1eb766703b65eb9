//! The registry of connected RESP clients: ids, what `CLIENT LIST` and
//! `CLIENT INFO` show, and the kill switch `CLIENT KILL` pulls.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::Notify;

use quiver_core::pubsub::{Inbox, Space};

use super::session::Session;

/// CLIENT UNBLOCK … TIMEOUT.
pub const UNBLOCK_TIMEOUT: u8 = 1;
/// CLIENT UNBLOCK … ERROR.
pub const UNBLOCK_ERROR: u8 = 2;

/// What other connections may see and do to one client.
#[derive(Debug)]
pub struct ClientHandle {
    pub id: u64,
    pub peer: SocketAddr,
    pub local: SocketAddr,
    pub created: Instant,
    /// The latest `CLIENT LIST` line fields that change: refreshed by the
    /// connection after each command (cheap: a short string under a
    /// per-client lock nobody else holds for long).
    pub view: Mutex<ClientView>,
    /// Notified to make the connection look up: it closes when `killed` is set
    /// (`CLIENT KILL`), else it starts reading its inbox (another client redirects
    /// invalidations to it).
    pub kill: Notify,
    pub killed: AtomicBool,
    /// Its user's channel rules changed: the connection checks its subscriptions against
    /// them when it looks up, and closes if one is no longer allowed.
    pub recheck_channels: AtomicBool,
    /// The connection waits in a blocking command (BLPOP, XREAD BLOCK, WAIT...).
    pub blocked: AtomicBool,
    /// `CLIENT UNBLOCK` asked it to stop waiting: [`UNBLOCK_TIMEOUT`] or
    /// [`UNBLOCK_ERROR`]; 0 otherwise.
    pub unblock: std::sync::atomic::AtomicU8,
    /// Where messages for this client go, subscribed or not (client-side caching
    /// redirects to it).
    pub inbox: Inbox,
}

/// The changing part of a client's `CLIENT LIST` line.
#[derive(Debug, Default, Clone)]
pub struct ClientView {
    pub name: String,
    pub db: usize,
    pub last_command: &'static str,
    pub last_command_at: Option<Instant>,
    pub multi: Option<usize>,
    pub protocol: i64,
    /// Channel, pattern and shard-channel subscriptions.
    pub subscriptions: [usize; 3],
    pub no_evict: bool,
    pub monitor: bool,
    /// `CLIENT TRACKING on` (and in broadcasting mode).
    pub tracking: bool,
    pub broadcast: bool,
    /// The user the client is logged in as.
    pub user: String,
}

impl ClientView {
    /// `CLIENT LIST` flags, in Redis's order: `O` monitoring, `P` subscribed, `x` in
    /// MULTI, `b` blocked (`blocked`), `t` tracking keys, `B` in broadcasting mode, `e`
    /// not to be evicted; `N` for none.
    pub fn flags(&self, blocked: bool) -> String {
        let mut flags = String::new();
        if self.monitor {
            flags.push('O');
        }
        if self.is_subscriber() {
            flags.push('P');
        }
        if self.multi.is_some() {
            flags.push('x');
        }
        if blocked {
            flags.push('b');
        }
        if self.tracking {
            flags.push('t');
        }
        if self.broadcast {
            flags.push('B');
        }
        if self.no_evict {
            flags.push('e');
        }
        if flags.is_empty() {
            flags.push('N');
        }
        flags
    }

    /// Whether the client holds a subscription (`CLIENT LIST` flag `P`, type `pubsub`).
    pub fn is_subscriber(&self) -> bool {
        self.subscriptions.iter().any(|&count| count > 0)
    }
}

/// Every connected client by id.
#[derive(Debug, Default)]
pub struct Clients {
    next_id: AtomicU64,
    map: Mutex<BTreeMap<u64, Arc<ClientHandle>>>,
}

impl Clients {
    /// A fresh client id (Redis numbers clients from 1, never reusing ids).
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Adds a connected client.
    pub fn register(
        &self,
        id: u64,
        peer: SocketAddr,
        local: SocketAddr,
        inbox: Inbox,
    ) -> Arc<ClientHandle> {
        let handle = Arc::new(ClientHandle {
            id,
            peer,
            local,
            created: Instant::now(),
            view: Mutex::new(ClientView {
                protocol: 2,
                last_command: "NULL",
                ..ClientView::default()
            }),
            kill: Notify::new(),
            killed: AtomicBool::new(false),
            recheck_channels: AtomicBool::new(false),
            blocked: AtomicBool::new(false),
            unblock: std::sync::atomic::AtomicU8::new(0),
            inbox,
        });
        self.lock().insert(id, Arc::clone(&handle));
        handle
    }

    /// Removes a client that has disconnected.
    pub fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// How many clients are connected.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// The client with id `id`, if connected.
    pub fn get(&self, id: u64) -> Option<Arc<ClientHandle>> {
        self.lock().get(&id).cloned()
    }

    /// Every client, by ascending id.
    pub fn all(&self) -> Vec<Arc<ClientHandle>> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<ClientHandle>>> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (inserts and removes are single calls), so poisoning is ignored.
        self.map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ClientHandle {
    /// Closes the connection (`CLIENT KILL`).
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.kill.notify_one();
    }

    /// CLIENT UNBLOCK: a blocked connection stops waiting and answers as on a timeout,
    /// or with an `UNBLOCKED` error; whether it was blocked.
    pub fn unblock(&self, error: bool) -> bool {
        if !self.blocked.load(Ordering::Acquire) {
            return false;
        }
        let reason = if error {
            UNBLOCK_ERROR
        } else {
            UNBLOCK_TIMEOUT
        };
        self.unblock.store(reason, Ordering::Release);
        self.kill.notify_one();
        true
    }

    /// Makes the connection check its subscriptions against its user's channel rules.
    pub fn recheck_channels(&self) {
        self.recheck_channels.store(true, Ordering::Release);
        self.kill.notify_one();
    }

    /// Makes the connection read its inbox from now on.
    pub fn wake_inbox(&self) {
        self.kill.notify_one();
    }

    /// Publishes the session's current state for `CLIENT LIST`.
    pub fn update(&self, session: &Session) {
        let mut view = self
            .view
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        view.db = session.db;
        view.last_command = session.last_command;
        view.last_command_at = Some(session.last_command_at);
        view.multi = session.multi.as_ref().map(|multi| multi.queued.len());
        view.protocol = session.protocol.version();
        view.no_evict = session.no_evict;
        view.monitor = session.monitor.is_some();
        view.tracking = session.tracking.is_some();
        view.broadcast = session.tracking.as_ref().is_some_and(|t| t.mode.bcast);
        if view.user.as_bytes() != &session.user.name[..] {
            view.user = String::from_utf8_lossy(&session.user.name).into_owned();
        }
        view.subscriptions = session.subscriber.as_ref().map_or([0; 3], |subscriber| {
            [Space::Channel, Space::Pattern, Space::Shard].map(|space| subscriber.count(space))
        });
        if view.name.as_bytes() != session.name.as_deref().unwrap_or_default() {
            view.name =
                String::from_utf8_lossy(session.name.as_deref().unwrap_or_default()).into_owned();
        }
    }

    /// The latest published view.
    pub fn view(&self) -> ClientView {
        self.view
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// One `CLIENT LIST` line (without the trailing newline), in Redis's format.
    pub fn line(&self) -> String {
        let view = self.view();
        let idle = view.last_command_at.map_or(0, |at| at.elapsed().as_secs());
        let mut line = String::with_capacity(160);
        let _ = write!(
            line,
            "id={} addr={} laddr={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} cmd={} user={} resp={}",
            self.id,
            self.peer,
            self.local,
            view.name,
            self.created.elapsed().as_secs(),
            idle,
            view.flags(self.blocked.load(Ordering::Acquire)),
            view.db,
            view.subscriptions[0],
            view.subscriptions[1],
            view.subscriptions[2],
            view.multi
                .map_or(-1, |queued| i64::try_from(queued).unwrap_or(i64::MAX)),
            view.last_command,
            view.user,
            view.protocol,
        );
        line
    }
}
