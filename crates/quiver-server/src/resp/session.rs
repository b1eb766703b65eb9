//! One RESP connection's state: protocol version, selected database,
//! authentication, name, and the MULTI queue and WATCHed keys.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;
use quiver_core::cache::WatchedKey;
use quiver_core::pubsub::{Subscriber, TrackingMode};
use quiver_resp::CommandError;
use quiver_resp::Protocol;

use crate::resp::command::Command;
use crate::resp::command::connection::ReplySwitch;
use crate::resp::table::CommandSpec;

/// Most commands one MULTI may queue: each is held in memory until EXEC.
pub const MAX_QUEUED_COMMANDS: usize = 100_000;

/// A command queued inside MULTI.
#[derive(Debug)]
pub enum Queued {
    /// It runs at EXEC.
    Command(&'static CommandSpec, Command),
    /// Its options were refused: Redis checks only the name and the arity when it
    /// queues, and answers this error in EXEC's reply.
    Refused(&'static CommandSpec, CommandError),
}

/// A MULTI in progress.
#[derive(Debug, Default)]
pub struct Multi {
    /// Commands queued for EXEC.
    pub queued: Vec<Queued>,
    /// A command failed to queue: EXEC must answer EXECABORT.
    pub aborted: bool,
    /// A queued command may write: EXEC waits out a CLIENT PAUSE WRITE.
    pub writes: bool,
    /// A queued command may grow memory: EXEC is refused while memory is over
    /// `maxmemory`.
    pub deny_oom: bool,
    /// Keys the queued reads name, remembered for client-side caching when EXEC runs
    /// them.
    /// Each with the read's place in the queue: a read is remembered if tracking
    /// remembers it when EXEC runs it (a queued `CLIENT CACHING` may come before it).
    pub reads: Vec<(usize, Bytes)>,
    /// What MONITOR shows of the queued commands when EXEC runs them (kept while
    /// anyone monitors).
    pub shown: Vec<Bytes>,
}

/// The state of one client connection.
#[derive(Debug)]
pub struct Session {
    pub id: u64,
    pub peer: SocketAddr,
    pub protocol: Protocol,
    pub db: usize,
    pub authenticated: bool,
    /// The user the client is logged in as (`default` until AUTH).
    pub user: std::sync::Arc<crate::resp::acl::User>,
    /// The users' generation `user` was read at: it is read again when they change.
    pub acl_generation: u64,
    pub name: Option<Bytes>,
    /// `CLIENT NO-EVICT ON` (flag `e`): kept for what clients see; Quiver does not evict
    /// clients (`maxmemory-clients` is accepted without effect).
    pub no_evict: bool,
    pub last_command_at: Instant,
    /// Full name of the last command run, as `CLIENT LIST` shows it.
    pub last_command: &'static str,
    pub multi: Option<Multi>,
    /// EXEC is running the queued commands (ACL LOG's `multi` context).
    pub in_exec: bool,
    pub watched: Vec<WatchedKey>,
    /// Channel, pattern and shard-channel subscriptions and client-side caching; `None`
    /// until the client subscribes or tracks.
    pub subscriber: Option<Subscriber>,
    /// `CLIENT TRACKING ON` as given; `None` while off.
    pub tracking: Option<Tracking>,
    /// The lines of MONITOR, once the client monitors.
    pub monitor: Option<std::sync::Arc<crate::resp::monitor::Feed>>,
    /// Which replies the client is sent (`CLIENT REPLY`).
    pub replies: Replies,
    /// A command that may write ran since the replies were last sent: they wait until
    /// its changes are as durable as the append-only file promises.
    pub wrote: std::sync::atomic::AtomicBool,
}

/// Client-side caching as the client turned it on.
#[derive(Debug, Clone)]
pub struct Tracking {
    pub mode: TrackingMode,
    /// The client invalidations are redirected to; 0 for none.
    pub redirect: u64,
    /// `CLIENT CACHING` was given for the next command.
    pub caching: bool,
}

impl Tracking {
    /// Whether the keys of the command that runs now are remembered: default mode, and
    /// OPTIN after `CLIENT CACHING YES`, OPTOUT unless `CLIENT CACHING NO`.
    pub fn remembers(&self) -> bool {
        let mode = &self.mode;
        !mode.bcast && (!(mode.optin || mode.optout) || mode.optin == self.caching)
    }
}

/// `CLIENT REPLY`'s state: OFF silences every reply until ON; SKIP silences the next
/// command's.
#[derive(Debug, Default, Clone, Copy)]
pub struct Replies {
    off: bool,
    skip_next: bool,
    skip: bool,
}

impl Replies {
    pub fn switch(&mut self, switch: ReplySwitch) {
        match switch {
            ReplySwitch::On => *self = Replies::default(),
            ReplySwitch::Off => self.off = true,
            ReplySwitch::Skip => self.skip_next = !self.off,
        }
    }

    /// Whether the reply of the command that just ran is left out; then on to the next
    /// command.
    pub fn silence(&mut self) -> bool {
        let silent = self.off || self.skip;
        self.skip = std::mem::take(&mut self.skip_next);
        silent
    }
}

impl Session {
    /// Whether the client holds any subscription (Redis's pub/sub context).
    pub fn subscribed(&self) -> bool {
        self.subscriber.as_ref().is_some_and(|s| !s.is_idle())
    }

    /// A new session, logged in as `default` when it needs no password.
    pub fn new(id: u64, peer: SocketAddr, acl: &crate::resp::acl::Acl) -> Session {
        let acl_generation = acl.generation();
        Session {
            id,
            peer,
            protocol: Protocol::Resp2,
            db: 0,
            authenticated: acl.open(),
            user: acl.default_user(),
            acl_generation,
            name: None,
            no_evict: false,
            last_command_at: Instant::now(),
            last_command: "NULL",
            multi: None,
            in_exec: false,
            watched: Vec::new(),
            subscriber: None,
            tracking: None,
            wrote: std::sync::atomic::AtomicBool::new(false),
            replies: Replies::default(),
            monitor: None,
        }
    }

    /// Reads the client's user again if the users changed since it was read.
    pub fn refresh_user(&mut self, acl: &crate::resp::acl::Acl) {
        let generation = acl.generation();
        if generation != self.acl_generation {
            self.acl_generation = generation;
            if let Some(user) = acl.user(&self.user.name) {
                self.user = user;
            }
        }
    }

    /// Back to a fresh connection's state, as `RESET` does: logged in as `default`
    /// when it needs no password.
    pub fn reset(&mut self, acl: &crate::resp::acl::Acl) {
        self.protocol = Protocol::Resp2;
        self.db = 0;
        self.name = None;
        self.multi = None;
        self.watched.clear();
        self.subscriber = None;
        self.tracking = None;
        self.replies = Replies::default();
        self.monitor = None;
        self.authenticated = acl.open();
        self.user = acl.default_user();
        self.acl_generation = acl.generation();
    }
}
