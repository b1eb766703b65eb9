//! Running the server: open and lock the data directory, bind every listener,
//! serve until SIGINT/SIGTERM, then drain in-flight work up to the drain
//! timeout and return (the binary then exits 0).

pub mod data_dir;
pub mod listener;
pub mod shutdown;
pub mod state;

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tokio::time::timeout_at;

use bytes::Bytes;
use quiver_core::cache::aof::{AofError, AppendFsync};
use quiver_core::cache::{Cache, CacheConfig};
use quiver_core::pubsub::PubSub;
use quiver_core::streams::durable::{
    DurableConfig, DurableRule, RecoveryMode, Retention, StorageConfig,
};
use quiver_core::streams::groups::GroupDefaults;
use quiver_core::streams::{
    BatchConfig, BlockTimeout, Broker, BrokerConfig, Pattern, QueueLimits, StreamConfig,
};
use quiver_resp::Limits;

use crate::config::{Config, ListenerConfig};
use crate::{http, native, quic, resp};
use data_dir::{DataDir, DataDirError};
use listener::{Listener, ListenerStats};
use shutdown::Shutdown;
use state::{Readiness, ServerState};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("cannot bind the {listener} listener on {addr}: {error} (set {key} to a free address)")]
    Bind {
        listener: &'static str,
        key: &'static str,
        addr: SocketAddr,
        error: io::Error,
    },
    #[error(transparent)]
    Quic(#[from] quic::QuicError),
    #[error("cannot start the connection threads: {0}")]
    Threads(io::Error),
    #[error("cannot install signal handlers: {0}")]
    Signals(io::Error),
    #[error("invalid cache settings: {0}")]
    Cache(#[from] quiver_core::cache::ConfigError),
    #[error("invalid streams settings: {0}")]
    Streams(#[from] quiver_core::streams::ConfigError),
    #[error("invalid setting {key}: {message}")]
    Setting { key: &'static str, message: String },
    #[error("cannot open the durable streams: {0}")]
    Storage(#[from] quiver_core::streams::OpenError),
}

/// Points the cache's snapshots at `cache/dump.rdb` in the data directory with the
/// configured rules.
fn configure_snapshots(cache: &Cache, config: &Config, data_dir: &Path) -> Result<(), ServeError> {
    let setting = |message: String| ServeError::Setting {
        key: "cache.save",
        message,
    };
    let rules =
        quiver_core::cache::persist::parse_save_rules(&config.cache.save).map_err(setting)?;
    let dir = data_dir.join("cache");
    std::fs::create_dir_all(&dir).map_err(|e| ServeError::Setting {
        key: "data_dir",
        message: format!("cannot create {}: {e}", dir.display()),
    })?;
    let persistence = cache.persistence();
    persistence.set_rules(rules);
    persistence.set_dir(&dir).map_err(setting)?;
    let aof = cache.append_only();
    aof.set_fsync(
        AppendFsync::parse(&config.cache.appendfsync).expect("a choice of the key's values"),
    );
    aof.set_recover(config.cache.aof_recover);
    Ok(())
}

/// Loads what the cache persisted (the snapshot, or with `cache.appendonly` the
/// append-only file's base and log) and its function libraries, then turns the
/// append-only file on if configured; from then on snapshots carry the libraries loaded.
fn load_cache_snapshot(
    cache: &Arc<Cache>,
    shared: &Arc<resp::RespShared>,
    config: &Config,
) -> Result<(), ServeError> {
    let persistence = cache.persistence();
    let started = Instant::now();
    let aof = config.cache.appendonly;
    let failed = |message: String| ServeError::Setting {
        key: if aof { "cache.appendonly" } else { "data_dir" },
        message,
    };
    let load = cache
        .load_persisted(aof, crate::clock::unix_ms())
        .map_err(|error| {
            failed(match error {
                AofError::Record { .. } | AofError::Log { .. } => format!(
                    "{error}; cache.aof_recover = true (--cache-aof-recover) starts keeping what is before the damage"
                ),
                _ => format!(
                    "{error}; move the file aside to start with an empty cache, or fix it with redis-check-rdb"
                ),
            })
        })?;
    if let Some(report) = &load.snapshot {
        tracing::info!(
            keys = report.keys,
            expired = report.expired,
            records = load.records,
            libraries = load.libraries.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "cache loaded"
        );
    }
    if !load.libraries.is_empty() {
        shared
            .scripts
            .restore_libraries(&load.libraries)
            .map_err(|message| {
                failed(format!(
                    "the function libraries persisted do not load: {message}"
                ))
            })?;
    }
    // Weak: the cache must not keep the RESP state (which holds the cache) alive. Set
    // before the start-up base below, which writes the libraries too.
    let records = Arc::downgrade(shared);
    persistence.set_records(Arc::new(move || {
        records
            .upgrade()
            .map(|s| s.scripts.library_records())
            .unwrap_or_default()
    }));
    if aof {
        let start = |now| {
            cache.start_aof(false, now)?;
            if load.base_current {
                return Ok(());
            }
            // Before any client: the base the log goes on from.
            cache.rewrite_now(now)
        };
        start(crate::clock::unix_ms).map_err(|error: AofError| failed(error.to_string()))?;
    }
    Ok(())
}

/// Runs the server until a shutdown signal, then drains and returns.
pub async fn run(config: Config) -> Result<(), ServeError> {
    // First: a signal during start-up is a shutdown once the server is up.
    let shutdown = Shutdown::new();
    tokio::spawn(
        shutdown::Signals::install()
            .map_err(ServeError::Signals)?
            .watch(shutdown.clone()),
    );
    let readiness = Readiness::default();
    let data_dir = DataDir::open(&config.data_dir)?;
    tracing::info!(path = %data_dir.path().display(), "data directory opened and locked");
    readiness.set_storage_open();

    let cache = Arc::new(Cache::new(cache_config(&config))?);
    configure_snapshots(&cache, &config, data_dir.path())?;
    let http_listener = bind("http", "http.addr", &config.http.listener, &config)?;
    let resp_listener = bind("resp", "resp.addr", &config.resp.listener, &config)?;
    let resp_threads = Arc::new(
        resp::threads::Threads::start(resp::threads::Settings {
            count: config
                .resp
                .io_threads
                .map_or(resp::threads::Count::Auto, |threads| {
                    resp::threads::Count::Fixed(threads as usize)
                }),
            poll: config.resp.busy_poll,
            trace: config.resp.balance_trace.clone(),
        })
        .map_err(ServeError::Threads)?,
    );
    tracing::debug!(
        threads = resp_threads.count(),
        "RESP connection threads started"
    );
    let native_listener = bind("native", "native.addr", &config.native.listener, &config)?;
    let quic_listener = bind_quic(&config, data_dir.path())?;
    let broker = open_broker(&config, data_dir.path())?;
    let flusher = tokio::spawn(broker.clone().run_flusher());
    let retention = tokio::spawn(broker.clone().run_retention());
    let native_shared = Arc::new(native::NativeShared {
        broker: broker.clone(),
        cache: Arc::clone(&cache),
        settings: native::NativeSettings {
            auth_token: config.native.auth_token.clone().map(Bytes::from),
        },
    });
    let pubsub = PubSub::new(
        broker.clone(),
        Arc::clone(&cache),
        config.resp.pubsub_output,
    );
    pubsub.set_notify_events(config.resp.notify_keyspace_events);
    let resp_shared = Arc::new(resp::RespShared::new(
        Arc::clone(&cache),
        pubsub.clone(),
        resp_settings(&config),
        resp::RuntimeSettings {
            protected_mode: config.resp.protected_mode,
        },
        config.resp.requirepass.clone().map(Bytes::from),
        resp_listener.stats().addr,
        config.resp.listener.max_connections.get(),
    ));
    if let Some(path) = &config.config_file {
        let _ = resp_shared.config_file.set(path.clone());
    }
    resp_shared.scripts.set_busy_threshold_ms(
        u64::try_from(config.resp.busy_reply_threshold.as_millis()).unwrap_or(u64::MAX),
    );
    resp::command::server::config::apply_start_params(&resp_shared, &config.resp.redis_config)
        .map_err(|message| ServeError::Setting {
            key: "resp.redis_config",
            message,
        })?;
    let acl_file = resp_shared.stored_params.get("aclfile");
    if !acl_file.is_empty() {
        let all_channels = resp_shared.stored_params.get("acl-pubsub-default") == "allchannels";
        let path = std::path::Path::new(&acl_file);
        resp::command::server::acl::load(&resp_shared.acl, path, all_channels).map_err(
            |message| ServeError::Setting {
                key: "resp.redis_config",
                message,
            },
        )?;
    }
    // After the Redis parameters, which may name other snapshot rules or file.
    load_cache_snapshot(&cache, &resp_shared, &config)?;
    // Kept until the final snapshot, which writes the function libraries it holds.
    let resp_state = Arc::clone(&resp_shared);
    let state = Arc::new(ServerState {
        started: Instant::now(),
        profile: config.profile,
        readiness,
        listeners: [
            http_listener.stats(),
            resp_listener.stats(),
            native_listener.stats(),
        ]
        .into_iter()
        .chain(quic_listener.as_ref().map(quic::QuicListener::stats))
        .collect(),
        broker: broker.clone(),
        pubsub,
        cache: Arc::clone(&cache),
        gateway: http::gateway::Gateway::new(
            &config.http,
            broker.clone(),
            Arc::clone(&cache),
            config.native.auth_token.as_deref(),
        ),
    });

    // Data listeners (RESP, native, QUIC) stop on `shutdown`; the operations
    // listener keeps answering /health and /ready (503 while draining) until
    // they have drained, then stops on `ops_shutdown`.
    let ops_shutdown = Shutdown::new();
    let tasks = Tasks {
        ops: tokio::spawn(http::serve_http(
            http_listener,
            Arc::clone(&state),
            http::HttpLimits {
                header_timeout: (!config.http.header_timeout.is_zero())
                    .then_some(config.http.header_timeout),
                refusal_pause: config.http.refusal_pause,
            },
            ops_shutdown.clone(),
        )),
        data: [
            tokio::spawn(resp::serve_resp(
                resp_listener,
                Arc::clone(&resp_threads),
                resp_shared,
                shutdown.clone(),
            )),
            tokio::spawn(native::serve_native(
                native_listener,
                Arc::clone(&native_shared),
                shutdown.clone(),
            )),
        ]
        .into_iter()
        .chain(quic_listener.map(|listener| {
            tokio::spawn(quic::serve_quic(listener, native_shared, shutdown.clone()))
        }))
        .collect(),
        flusher,
        retention,
    };

    // Ready before the `listening` lines, so whoever waits for them finds /ready 200.
    state.readiness.set_listeners_bound();
    for listener in &state.listeners {
        tracing::info!(listener = listener.name, addr = %listener.addr, "listening");
    }
    tracing::info!(profile = %config.profile, "quiver ready");

    shutdown.wait().await;
    let deadline = tokio::time::Instant::now() + config.shutdown.drain_timeout;
    drain_all(&state, tasks, &ops_shutdown, deadline).await;
    // A running script holds the keys it works on until it ends: the save would wait
    // for it, and a script that never ends would make a stop that never ends.
    let scripts = &resp_state.scripts;
    save_cache_at_shutdown(&cache, &|| scripts.running() || scripts.holding()).await;
    drop(resp_state);
    // The append-only log: what was journaled is synced, the log closed.
    let closing = Arc::clone(&cache);
    let _ = tokio::task::spawn_blocking(move || closing.close_aof()).await;
    // Durable streams: appends finish, logs are synced and closed, group state written.
    let closing = state.broker.clone();
    let _ = tokio::task::spawn_blocking(move || closing.close()).await;
    // Only now: dropping the threads ends whatever connection outlived the drain.
    drop(resp_threads);
    drop(data_dir);
    tracing::info!("shutdown complete");
    Ok(())
}

/// How long a stop waits for a running script to end before it gives up the last
/// cache snapshot.
const SCRIPT_WAIT_AT_STOP: std::time::Duration = std::time::Duration::from_secs(5);

/// Writes a final snapshot when `save` rules are set and no SHUTDOWN command decided
/// otherwise, as Redis does when it is stopped (after a background save that is running
/// ends). Not while a script runs past [`SCRIPT_WAIT_AT_STOP`]: it holds the keys it works
/// on until it ends, which a script that never ends would make a stop that never ends.
async fn save_cache_at_shutdown(cache: &Arc<Cache>, script_busy: &dyn Fn() -> bool) {
    use quiver_core::cache::persist::SaveError;
    if !cache.persistence().saves_at_stop() {
        return;
    }
    // A short script (any script call holds its keys for its run) is waited for; one
    // still running after that would hold the save, and a stop, as long as it runs.
    let waited = tokio::time::Instant::now() + SCRIPT_WAIT_AT_STOP;
    while script_busy() {
        if tokio::time::Instant::now() >= waited {
            tracing::error!("a script is still running: no last cache snapshot is written");
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let cache = Arc::clone(cache);
    let _ = tokio::task::spawn_blocking(move || {
        loop {
            match cache.save(crate::clock::unix_ms()) {
                Err(SaveError::InProgress) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Ok(stats) => {
                    tracing::info!(keys = stats.keys, "final cache snapshot written");
                    break;
                }
                Err(error) => {
                    tracing::error!(%error, "the final cache snapshot could not be written");
                    break;
                }
            }
        }
    })
    .await;
}

fn bind(
    name: &'static str,
    key: &'static str,
    listener: &ListenerConfig,
    config: &Config,
) -> Result<Listener, ServeError> {
    Listener::bind(name, listener, &config.net).map_err(|error| ServeError::Bind {
        listener: name,
        key,
        addr: listener.addr,
        error,
    })
}

/// Binds the QUIC listener when `quic.enabled`, logging its certificate's fingerprint.
fn bind_quic(
    config: &Config,
    data_dir: &std::path::Path,
) -> Result<Option<quic::QuicListener>, ServeError> {
    if !config.quic.enabled {
        return Ok(None);
    }
    let identity = quic::identity(&config.quic, data_dir)?;
    let listener = quic::QuicListener::bind(&config.quic.listener, identity)?;
    tracing::info!(
        fingerprint = listener.fingerprint(),
        "QUIC certificate SHA-256 fingerprint (clients pin it)"
    );
    Ok(Some(listener))
}

fn cache_config(config: &Config) -> CacheConfig {
    CacheConfig {
        databases: config.cache.databases as usize,
        max_memory_bytes: config.cache.max_memory_bytes,
        policy: config
            .cache
            .eviction_policy
            .parse()
            .expect("cache.eviction_policy is a checked choice"),
        ..CacheConfig::default()
    }
}

fn broker_config(config: &Config) -> Result<BrokerConfig, quiver_core::streams::ConfigError> {
    let streams = &config.streams;
    let default_stream = StreamConfig {
        batch: BatchConfig::new(
            streams.batch_max_events,
            streams.batch_max_bytes,
            streams.batch_max_delay,
        )?,
        queue: QueueLimits::new(streams.queue_max_events, streams.queue_max_bytes)?,
        policy: streams
            .slow_policy
            .parse()
            .expect("streams.slow_policy is a checked choice"),
        block_timeout: BlockTimeout::new(streams.block_timeout)?,
        durable: None,
    };
    Ok(BrokerConfig {
        default_stream,
        ..BrokerConfig::default()
    })
}

/// The broker on the data directory: the catalog's streams made again, their logs
/// recovered (what start-up repaired or moved aside is logged).
fn open_broker(config: &Config, data_dir: &std::path::Path) -> Result<Broker, ServeError> {
    let storage = storage_config(config, data_dir)?;
    let started = Instant::now();
    let (broker, report) = Broker::open(broker_config(config)?, storage)?;
    tracing::info!(
        streams = report.streams,
        durable = report.durable,
        took_ms = started.elapsed().as_millis() as u64,
        "streams opened"
    );
    for (stream, cut) in &report.repaired {
        tracing::warn!(%stream, repair = %cut, "a torn tail of a durable stream's log was cut (a crash during a write)");
    }
    for (from, to) in &report.orphaned {
        tracing::warn!(
            from = %from.display(),
            to = %to.display(),
            "stream data that no catalog entry claims was moved aside; delete it or restore its catalog entry"
        );
    }
    Ok(broker)
}

fn storage_config(
    config: &Config,
    data_dir: &std::path::Path,
) -> Result<StorageConfig, ServeError> {
    let streams = &config.streams;
    let groups = GroupDefaults {
        ack_wait: streams.group_ack_wait,
        max_deliveries: streams.group_max_deliveries,
        max_in_flight: streams.group_max_in_flight,
        flush_interval: streams.group_flush_interval,
    };
    groups
        .config()
        .validate()
        .map_err(|error| ServeError::Setting {
            key: "streams.group_ack_wait",
            message: error.to_string(),
        })?;
    let rules = streams
        .durable
        .iter()
        .map(|rule| DurableRule {
            pattern: Pattern::new(&rule.pattern).expect("rules are checked patterns"),
            config: DurableConfig {
                durability: rule.durability,
                retention: Retention {
                    max_age: rule.max_age,
                    max_bytes: rule.max_bytes,
                    max_messages: rule.max_messages,
                    keep_unacked: rule.keep_unacked,
                },
                dedupe_window: rule.dedupe_window.unwrap_or(streams.dedupe_window),
            },
        })
        .collect();
    let mut storage = StorageConfig::new(data_dir);
    storage.rules = rules;
    storage.max_durable_streams = streams.max_durable as usize;
    storage.segment_bytes = streams.segment_bytes;
    storage.retention_interval = streams.retention_interval;
    storage.recovery = if streams.salvage {
        RecoveryMode::Salvage
    } else {
        RecoveryMode::Strict
    };
    storage.groups = groups;
    Ok(storage)
}

fn resp_settings(config: &Config) -> resp::RespSettings {
    let size = |bytes: u64| usize::try_from(bytes).unwrap_or(usize::MAX);
    resp::RespSettings {
        limits: Limits {
            max_bulk_len_bytes: size(config.resp.max_bulk_len_bytes),
            max_query_buffer_bytes: size(config.resp.max_query_buffer_bytes),
            ..Limits::REDIS_DEFAULT
        },
        max_output_buffer_bytes: size(config.resp.max_output_buffer_bytes),
        idle_timeout: config.resp.idle_timeout,
    }
}

/// The tasks of a running server, stopped in this order by [`drain_all`].
struct Tasks {
    /// The data listeners' accept loops.
    data: Vec<tokio::task::JoinHandle<()>>,
    /// The broker's batch flusher.
    flusher: tokio::task::JoinHandle<()>,
    /// The durable streams' retention.
    retention: tokio::task::JoinHandle<()>,
    /// The HTTP listener; it returns its connection threads, dropped after the drain.
    ops: tokio::task::JoinHandle<Option<http::threads::HttpThreads>>,
}

/// The drain: `/ready` turns 503, the broker flushes and ends subscriptions,
/// the data listeners' connections finish, then the operations listener's,
/// all bounded by `deadline`.
async fn drain_all(
    state: &ServerState,
    tasks: Tasks,
    ops_shutdown: &Shutdown,
    deadline: tokio::time::Instant,
) {
    state.readiness.set_draining();
    // Pending batches go out and every subscription ends after what it has queued.
    state.broker.shutdown();
    let (ops, data): (Vec<_>, Vec<_>) = state
        .listeners
        .iter()
        .partition(|listener| listener.name == "http");
    for listener in data {
        drain(listener, deadline).await;
    }
    for task in tasks.data {
        let _ = task.await;
    }
    tasks.flusher.abort();
    tasks.retention.abort();
    ops_shutdown.trigger();
    let http_threads = tasks.ops.await.ok().flatten();
    for listener in ops {
        drain(listener, deadline).await;
    }
    // Whatever HTTP connection outlived the drain ends here, before the stores close.
    drop(http_threads);
}

/// Waits until `listener` has no open connection or `deadline` passes.
async fn drain(listener: &ListenerStats, deadline: tokio::time::Instant) {
    if timeout_at(deadline, listener.wait_idle()).await.is_err() {
        tracing::warn!(
            listener = listener.name,
            open = listener.open(),
            "drain timeout reached; closing the remaining connections"
        );
    }
}
