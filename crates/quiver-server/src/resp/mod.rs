//! The RESP transport: Redis's protocol (RESP2, RESP3, inline) on its own
//! listener. Each connection decodes pipelined requests, resolves them in
//! the command table, parses them into typed commands, runs data commands
//! against the cache keyspace and session commands against its own state,
//! and writes all replies of one read in one `write`.

pub mod acl;
mod ahead;
mod clients;
pub mod command;
mod connection;
mod info;
pub(crate) mod latency;
pub(crate) mod monitor;
mod pause;
pub mod redis_config;
pub mod script;
mod session;
pub mod slowlog;
mod stats;
pub mod table;
pub mod threads;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clients::Clients;
use quiver_core::cache::Cache;
use quiver_core::pubsub::PubSub;
use quiver_resp::Limits;
use stats::CommandStats;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::clock::unix_ms;
use crate::serve::listener::Listener;
use crate::serve::shutdown::Shutdown;

/// Settings of the RESP transport that do not change at run time.
#[derive(Debug, Clone)]
pub struct RespSettings {
    /// Decoder limits for an authenticated client.
    pub limits: Limits,
    /// Replies buffered for one client beyond this close the connection.
    pub max_output_buffer_bytes: usize,
    /// Close a connection idle this long; `None` never does (Redis `timeout 0`).
    pub idle_timeout: Option<Duration>,
}

/// Settings `CONFIG SET` may change while the server runs (`requirepass` is the
/// `default` user's password, kept with the users).
#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// Refuse non-loopback clients while no password is set.
    pub protected_mode: bool,
}

/// State shared by every RESP connection.
#[derive(Debug)]
pub struct RespShared {
    /// The node's cache.
    pub cache: Arc<Cache>,
    /// The node's Redis channels.
    pub pubsub: PubSub,
    pub settings: RespSettings,
    pub runtime: RwLock<RuntimeSettings>,
    pub started: Instant,
    pub listen_addr: SocketAddr,
    /// The listener's connection limit (`maxclients`).
    pub max_clients: u32,
    /// Lua scripts and function libraries.
    pub scripts: script::Scripts,
    /// SLOWLOG's entries and settings.
    pub slowlog: slowlog::SlowLog,
    /// Redis parameters kept without effect (CONFIG SET and GET).
    pub stored_params: redis_config::StoredParams,
    /// The configuration file the server read, which CONFIG REWRITE rewrites.
    pub config_file: std::sync::OnceLock<std::path::PathBuf>,
    /// The server's shutdown, once serving starts (SHUTDOWN fires it).
    stop: std::sync::OnceLock<Shutdown>,
    clients: Clients,
    stats: CommandStats,
    /// CLIENT PAUSE in force.
    pause: pause::Pause,
    /// LATENCY's events.
    latency: latency::Latency,
    /// MONITOR's clients.
    monitors: monitor::Monitors,
    /// The users (ACL).
    pub acl: acl::Acl,
}

impl RespShared {
    pub fn new(
        cache: Arc<Cache>,
        pubsub: PubSub,
        settings: RespSettings,
        runtime: RuntimeSettings,
        requirepass: Option<Bytes>,
        listen_addr: SocketAddr,
        max_clients: u32,
    ) -> RespShared {
        let scripts = script::Scripts::new(Arc::clone(&cache), script::DEFAULT_BUSY_THRESHOLD_MS);
        RespShared {
            cache,
            pubsub,
            settings,
            runtime: RwLock::new(runtime),
            started: Instant::now(),
            listen_addr,
            max_clients,
            scripts,
            slowlog: slowlog::SlowLog::default(),
            stored_params: redis_config::StoredParams::default(),
            config_file: std::sync::OnceLock::new(),
            stop: std::sync::OnceLock::new(),
            clients: Clients::default(),
            stats: CommandStats::new(),
            pause: pause::Pause::default(),
            latency: latency::Latency::default(),
            monitors: monitor::Monitors::default(),
            acl: acl::Acl::new(requirepass),
        }
    }

    /// Starts the server's shutdown (SHUTDOWN).
    fn shut_down(&self) {
        if let Some(stop) = self.stop.get() {
            stop.trigger();
        }
    }

    fn runtime(&self) -> RuntimeSettings {
        self.runtime
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Logs an ACL refusal (ACL LOG), keeping `acllog-max-len` entries.
    fn log_refusal(&self, refusal: acl::log::Refusal) {
        let max_len = self
            .stored_params
            .get("acllog-max-len")
            .parse()
            .unwrap_or(128);
        let mut log = self.acl.log.lock().unwrap_or_else(|p| p.into_inner());
        log.add(refusal, max_len);
    }

    /// Protected mode: with no password set, only loopback clients get in.
    fn refuses(&self, peer: IpAddr) -> bool {
        let runtime = self.runtime();
        runtime.protected_mode && self.acl.default_user().nopass && !is_loopback(peer)
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// What a client refused by protected mode is told, in the spirit of Redis's text.
const PROTECTED_MODE_REPLY: &[u8] = b"-DENIED Quiver is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. To accept connections from other computers, do one of: 1) set a password (resp.requirepass, or CONFIG SET requirepass from the loopback interface); 2) turn protected mode off (resp.protected_mode = false, or CONFIG SET protected-mode no from the loopback interface) after making sure the port is not reachable from the internet.\r\n";

/// Serves RESP on `listener` until `shutdown` fires, each connection on one
/// of `threads`; expires keys in the background meanwhile.
pub async fn serve_resp(
    listener: Listener,
    threads: Arc<threads::Threads>,
    shared: Arc<RespShared>,
    shutdown: Shutdown,
) {
    let _ = shared.stop.set(shutdown.clone());
    let expiry = tokio::spawn(Arc::clone(&shared.cache).run_active_expiry(unix_ms));
    // The totals INFO's instantaneous rates come from.
    let sampler = {
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(stats::SAMPLE_EVERY);
            loop {
                every.tick().await;
                shared.stats.sample(Instant::now());
            }
        })
    };
    let admit = |stream, peer, guard| {
        let shared = Arc::clone(&shared);
        let shutdown = shutdown.clone();
        let serve =
            move |stream, seat| connection::serve(stream, peer, guard, shared, shutdown, seat);
        if let Err(error) = threads.adopt(stream, serve) {
            tracing::warn!(%peer, %error, "connection dropped: not movable to a connection thread");
        }
    };
    let over_limit = |stream, _limit| {
        shared.stats.refused_connection();
        refuse(stream)
    };
    listener
        .accept_loop(shutdown.clone(), admit, over_limit)
        .await;
    expiry.abort();
    sampler.abort();
}

/// Redis's reply to a client over `maxclients`.
async fn refuse(mut stream: TcpStream) {
    let _ = stream
        .write_all(b"-ERR max number of clients reached\r\n")
        .await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_detection_covers_v4_v6_and_mapped() {
        assert!(is_loopback("127.0.0.1".parse().expect("ip")));
        assert!(is_loopback("127.8.9.1".parse().expect("ip")));
        assert!(is_loopback("::1".parse().expect("ip")));
        assert!(is_loopback("::ffff:127.0.0.1".parse().expect("ip")));
        assert!(!is_loopback("10.0.0.1".parse().expect("ip")));
        assert!(!is_loopback("::ffff:10.0.0.1".parse().expect("ip")));
    }

    #[test]
    fn protected_mode_refuses_only_remote_clients_without_a_password() {
        let cache =
            Arc::new(Cache::new(quiver_core::cache::CacheConfig::default()).expect("cache"));
        let settings = RespSettings {
            limits: Limits::REDIS_DEFAULT,
            max_output_buffer_bytes: 1 << 20,
            idle_timeout: None,
        };
        let runtime = RuntimeSettings {
            protected_mode: true,
        };
        let broker = quiver_core::streams::Broker::new(Default::default());
        let shared = RespShared::new(
            Arc::clone(&cache),
            PubSub::new(broker, cache, Default::default()),
            settings,
            runtime,
            None,
            "0.0.0.0:6379".parse().expect("addr"),
            10,
        );
        let remote: IpAddr = "192.0.2.7".parse().expect("ip");
        assert!(shared.refuses(remote));
        assert!(!shared.refuses("127.0.0.1".parse().expect("ip")));
        shared.acl.set_requirepass(Some(Bytes::from_static(b"pw")));
        assert!(!shared.refuses(remote));
        shared.acl.set_requirepass(None);
        shared.runtime.write().expect("lock").protected_mode = false;
        assert!(!shared.refuses(remote));
    }
}
