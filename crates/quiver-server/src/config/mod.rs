//! Configuration in two layers (raw text with sources, then a typed `Config`
//! that cannot hold an invalid value). Sources, lowest to highest: built-in
//! defaults, profile, TOML file, `QUIVER_*` environment, command-line flags.
//! Every key is listed once in [`keys::KEYS`]; its env var and flag derive from
//! its name (`http.addr` -> `QUIVER_HTTP_ADDR`, `--http-addr`).

pub mod error;
pub mod keys;
pub mod profile;
pub mod raw;
mod render;
pub mod rules;
pub mod source;
mod typed;
pub mod value;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

pub use error::ConfigError;
pub use profile::Profile;
pub use raw::{Inputs, RawConfig};
pub use source::Source;
use typed::Value;

/// The effective configuration, fully checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub profile: Profile,
    /// Directory for stored data; locked while a server runs.
    pub data_dir: PathBuf,
    pub log: LogConfig,
    /// The HTTP listener and its gateway.
    pub http: HttpConfig,
    /// The Redis-protocol listener.
    pub resp: RespConfig,
    /// The native-protocol (TCP) listener.
    pub native: NativeConfig,
    /// The native protocol over QUIC.
    pub quic: QuicConfig,
    /// The streams broker's batching, queues and slow-subscriber policy.
    pub streams: StreamsSettings,
    /// The cache keyspace.
    pub cache: CacheSettings,
    pub net: NetConfig,
    pub shutdown: ShutdownConfig,
    /// The file the configuration was read from, if any (CONFIG REWRITE writes to it).
    pub config_file: Option<PathBuf>,
}

/// How log lines are filtered and printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// A checked `tracing` filter.
    pub level: String,
    pub format: LogFormat,
}

/// The shape of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Pretty,
    Json,
}

/// One listener's address and connection bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    pub addr: SocketAddr,
    pub max_connections: NonZeroU32,
}

/// The HTTP listener: its gateway's admission control, limits and timeouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    pub listener: ListenerConfig,
    pub max_ccu: u32,
    /// Percent of `max_ccu` served at once.
    pub utilization: u32,
    pub queue_timeout: Duration,
    pub refusal_pause: Duration,
    pub max_event_streams: u32,
    /// Percent of `max_ccu` in use at which `/ready` answers 503.
    pub ready_utilization: u32,
    pub max_body_bytes: u64,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    /// Requests per second per client; 0: no limit.
    pub rate_limit: u32,
    /// Requests at once above the rate; 0: `rate_limit`.
    pub rate_burst: u32,
    pub event_heartbeat: Duration,
    pub consumer_idle: Duration,
}

/// The RESP (Redis protocol) listener and its client limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespConfig {
    pub listener: ListenerConfig,
    /// `None`: no password.
    pub requirepass: Option<String>,
    pub protected_mode: bool,
    /// `None`: never close idle clients.
    pub idle_timeout: Option<Duration>,
    pub max_output_buffer_bytes: u64,
    /// Redis's `client-output-buffer-limit pubsub`.
    pub pubsub_output: quiver_core::pubsub::OutputLimits,
    /// Redis's `notify-keyspace-events`.
    pub notify_keyspace_events: quiver_core::cache::EventClasses,
    /// How long a script runs before other clients are answered BUSY (Redis's
    /// `busy-reply-threshold`).
    pub busy_reply_threshold: Duration,
    pub max_query_buffer_bytes: u64,
    pub max_bulk_len_bytes: u64,
    /// Connection threads; `None`: one per core, as many serving as the
    /// balancer decides.
    pub io_threads: Option<u32>,
    /// How long a connection thread polls for work before it sleeps; zero
    /// never polls.
    pub busy_poll: Duration,
    /// Where the balancer writes its trace; `None`: nowhere.
    pub balance_trace: Option<PathBuf>,
    /// Redis parameters applied at start (`resp.redis_config`), checked.
    pub redis_config: Vec<(String, String)>,
}

/// The native-protocol listener and its authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeConfig {
    pub listener: ListenerConfig,
    /// `None`: no token required.
    pub auth_token: Option<String>,
}

/// The native protocol over QUIC: its UDP listener and TLS identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicConfig {
    /// `false`: no QUIC listener is bound.
    pub enabled: bool,
    pub listener: ListenerConfig,
    /// `None`: a self-signed certificate kept in the data directory.
    pub identity: Option<QuicIdentityFiles>,
}

/// Configured PEM files of the QUIC server's certificate chain and private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicIdentityFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The streams broker's defaults for every stream (ranges checked by the key registry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsSettings {
    pub batch_max_events: u32,
    pub batch_max_bytes: u64,
    pub batch_max_delay: Duration,
    pub queue_max_events: u32,
    pub queue_max_bytes: u64,
    /// One of `drop_old`, `drop_new`, `block`, `disconnect`, checked.
    pub slow_policy: String,
    pub block_timeout: Duration,
    /// Streams made durable by name.
    pub durable: Vec<rules::RuleSpec>,
    pub dedupe_window: Duration,
    pub max_durable: u32,
    pub segment_bytes: u64,
    pub retention_interval: Duration,
    /// `true`: salvage (keep what is before damage); `false`: strict.
    pub salvage: bool,
    pub group_ack_wait: Duration,
    pub group_max_deliveries: u32,
    pub group_max_in_flight: u32,
    pub group_flush_interval: Duration,
}

/// The cache keyspace's size and eviction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSettings {
    pub databases: u32,
    /// 0: unbounded.
    pub max_memory_bytes: u64,
    /// One of Redis's policy names, checked.
    pub eviction_policy: String,
    /// Redis's `save` rules as written (checked when the server starts).
    pub save: String,
    /// Journal changes in the append-only file.
    pub appendonly: bool,
    /// `always`, `everysec` or `no`.
    pub appendfsync: String,
    /// Open a damaged append-only log keeping what is before the damage.
    pub aof_recover: bool,
}

/// Socket options shared by every TCP listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetConfig {
    pub backlog: u32,
    pub nodelay: bool,
    /// `None` leaves the kernel's auto-tuning in charge.
    pub send_buffer_bytes: Option<u32>,
    pub recv_buffer_bytes: Option<u32>,
    /// `None` turns TCP keepalive off.
    pub keepalive: Option<Duration>,
}

/// Graceful shutdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownConfig {
    pub drain_timeout: Duration,
}

/// The checked configuration together with each value's source.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Every key's canonical value and source, in registry order.
    pub values: Vec<(&'static keys::Key, String, Source)>,
}

impl Loaded {
    /// Loads and checks the configuration from all sources.
    pub fn load(inputs: &Inputs) -> Result<Loaded, ConfigError> {
        let raw = RawConfig::gather(inputs)?;
        let checked = raw
            .entries
            .iter()
            .map(|entry| Value::check(entry).map(|value| (entry, value)))
            .collect::<Result<Vec<_>, _>>()?;
        let find = |name: &str| {
            checked
                .iter()
                .find(|(entry, _)| entry.key.name == name)
                .map(|(_, value)| value.clone())
                .expect("every registry key is checked")
        };
        check_together(&raw, "quic.cert", "quic.key")?;
        check_text(
            &raw,
            "cache.save",
            "pairs of seconds and changes (for example \"3600 1 300 100\"), or empty for none",
            |text| quiver_core::cache::persist::parse_save_rules(text).is_ok(),
        )?;
        let mut config = Config::from_values(find);
        config.config_file = raw::config_file(inputs);
        let values = checked
            .iter()
            .map(|(entry, value)| (entry.key, value.to_string(), entry.source.clone()))
            .collect();
        Ok(Loaded { config, values })
    }

    /// The effective configuration as TOML, each key commented with its source.
    pub fn to_toml(&self) -> String {
        render::to_toml(self)
    }
}

/// Refuses the text of `key` unless it is `valid` (a text key with a grammar of its own,
/// which `allowed` describes).
fn check_text(
    raw: &RawConfig,
    key: &str,
    allowed: &str,
    valid: impl Fn(&str) -> bool,
) -> Result<(), ConfigError> {
    let entry = raw.entry(key);
    if valid(&entry.text) {
        return Ok(());
    }
    Err(ConfigError::InvalidValue {
        key: entry.key.name,
        origin: entry.source.clone(),
        value: entry.text.clone(),
        allowed: allowed.to_owned(),
    })
}

/// Refuses `a` set without `b` or `b` without `a` (files that only work as a pair), even
/// where they are not used yet (`quic.enabled = false`).
fn check_together(raw: &RawConfig, a: &str, b: &str) -> Result<(), ConfigError> {
    let (a, b) = (raw.entry(a), raw.entry(b));
    let alone = match (a.text.is_empty(), b.text.is_empty()) {
        (false, true) => a,
        (true, false) => b,
        _ => return Ok(()),
    };
    let other = if std::ptr::eq(alone, a) { b } else { a };
    Err(ConfigError::InvalidValue {
        key: alone.key.name,
        origin: alone.source.clone(),
        value: alone.text.clone(),
        allowed: format!(
            "{} set too (the two go together), or neither",
            other.key.name
        ),
    })
}

impl Config {
    /// Builds the typed config; `value(name)` returns the checked value of a key,
    /// whose variant matches the key's kind by construction.
    fn from_values(value: impl Fn(&str) -> Value) -> Config {
        let text = |name: &str| match value(name) {
            Value::Text(text) => text,
            other => unreachable!("{name} is a text key, got {other:?}"),
        };
        let integer = |name: &str| match value(name) {
            Value::Integer(number) => number,
            other => unreachable!("{name} is an integer key, got {other:?}"),
        };
        let size = |name: &str| match value(name) {
            Value::Size(0) => None,
            Value::Size(bytes) => {
                Some(u32::try_from(bytes).expect("sizes are capped below u32::MAX"))
            }
            other => unreachable!("{name} is a size key, got {other:?}"),
        };
        let bytes = |name: &str| match value(name) {
            Value::Size(bytes) => bytes,
            other => unreachable!("{name} is a size key, got {other:?}"),
        };
        let addr = |name: &str| match value(name) {
            Value::Addr(addr) => addr,
            other => unreachable!("{name} is an address key, got {other:?}"),
        };
        let connections = |name: &str| {
            NonZeroU32::new(u32::try_from(integer(name)).expect("bounded by the key's range"))
                .expect("the key's range starts at 1")
        };
        let duration = |name: &str| match value(name) {
            Value::Duration(duration) => duration,
            other => unreachable!("{name} is a duration key, got {other:?}"),
        };
        let keepalive = duration("net.keepalive");
        let idle_timeout = duration("resp.idle_timeout");
        let requirepass = text("resp.requirepass");
        let auth_token = text("native.auth_token");
        let (quic_cert, quic_key) = (text("quic.cert"), text("quic.key"));
        let small = |name: &str| u32::try_from(integer(name)).expect("bounded by the key's range");
        Config {
            profile: text(keys::PROFILE_KEY)
                .parse()
                .expect("profile is a checked choice"),
            data_dir: match value("data_dir") {
                Value::Path(path) => path,
                other => unreachable!("data_dir is a path key, got {other:?}"),
            },
            log: LogConfig {
                level: text("log.level"),
                format: if text("log.format") == "json" {
                    LogFormat::Json
                } else {
                    LogFormat::Pretty
                },
            },
            http: HttpConfig {
                listener: ListenerConfig {
                    addr: addr("http.addr"),
                    max_connections: connections("http.max_connections"),
                },
                max_ccu: small("http.max_ccu"),
                utilization: small("http.utilization"),
                queue_timeout: duration("http.queue_timeout"),
                refusal_pause: duration("http.refusal_pause"),
                max_event_streams: small("http.max_event_streams"),
                ready_utilization: small("http.ready_utilization"),
                max_body_bytes: bytes("http.max_body"),
                header_timeout: duration("http.header_timeout"),
                body_timeout: duration("http.body_timeout"),
                rate_limit: small("http.rate_limit"),
                rate_burst: small("http.rate_burst"),
                event_heartbeat: duration("http.event_heartbeat"),
                consumer_idle: duration("http.consumer_idle"),
            },
            resp: RespConfig {
                listener: ListenerConfig {
                    addr: addr("resp.addr"),
                    max_connections: connections("resp.max_connections"),
                },
                requirepass: (!requirepass.is_empty()).then_some(requirepass),
                protected_mode: matches!(value("resp.protected_mode"), Value::Bool(true)),
                idle_timeout: (!idle_timeout.is_zero()).then_some(idle_timeout),
                max_output_buffer_bytes: bytes("resp.max_output_buffer"),
                pubsub_output: quiver_core::pubsub::OutputLimits {
                    hard_bytes: bytes("resp.pubsub_output_hard"),
                    soft_bytes: bytes("resp.pubsub_output_soft"),
                    soft_period: duration("resp.pubsub_output_soft_period"),
                },
                notify_keyspace_events: quiver_core::cache::EventClasses::parse(&text(
                    "resp.notify_keyspace_events",
                ))
                .expect("checked when read"),
                busy_reply_threshold: duration("resp.busy_reply_threshold"),
                max_query_buffer_bytes: bytes("resp.max_query_buffer"),
                max_bulk_len_bytes: bytes("resp.max_bulk_len"),
                io_threads: match value("resp.io_threads") {
                    Value::Integer(threads) => {
                        Some(u32::try_from(threads).expect("bounded by the key's range"))
                    }
                    _ => None,
                },
                busy_poll: duration("resp.busy_poll"),
                balance_trace: Some(text("resp.balance_trace"))
                    .filter(|path| !path.is_empty())
                    .map(PathBuf::from),
                redis_config: crate::resp::redis_config::parse_entries(&text("resp.redis_config"))
                    .expect("checked when read"),
            },
            native: NativeConfig {
                listener: ListenerConfig {
                    addr: addr("native.addr"),
                    max_connections: connections("native.max_connections"),
                },
                auth_token: (!auth_token.is_empty()).then_some(auth_token),
            },
            quic: QuicConfig {
                enabled: matches!(value("quic.enabled"), Value::Bool(true)),
                listener: ListenerConfig {
                    addr: addr("quic.addr"),
                    max_connections: connections("quic.max_connections"),
                },
                identity: (!quic_cert.is_empty() || !quic_key.is_empty()).then(|| {
                    QuicIdentityFiles {
                        cert: PathBuf::from(quic_cert),
                        key: PathBuf::from(quic_key),
                    }
                }),
            },
            streams: StreamsSettings {
                batch_max_events: small("streams.batch_max_events"),
                batch_max_bytes: bytes("streams.batch_max_bytes"),
                batch_max_delay: duration("streams.batch_max_delay"),
                queue_max_events: small("streams.queue_max_events"),
                queue_max_bytes: bytes("streams.queue_max_bytes"),
                slow_policy: text("streams.slow_policy"),
                block_timeout: duration("streams.block_timeout"),
                durable: rules::parse(&text("streams.durable"))
                    .expect("streams.durable is checked rules"),
                dedupe_window: duration("streams.dedupe_window"),
                max_durable: small("streams.max_durable"),
                segment_bytes: bytes("streams.segment_size"),
                retention_interval: duration("streams.retention_interval"),
                salvage: text("streams.recovery") == "salvage",
                group_ack_wait: duration("streams.group_ack_wait"),
                group_max_deliveries: small("streams.group_max_deliveries"),
                group_max_in_flight: small("streams.group_max_in_flight"),
                group_flush_interval: duration("streams.group_flush_interval"),
            },
            cache: CacheSettings {
                databases: u32::try_from(integer("cache.databases"))
                    .expect("bounded by the key's range"),
                max_memory_bytes: bytes("cache.max_memory"),
                eviction_policy: text("cache.eviction_policy"),
                save: text("cache.save"),
                appendonly: matches!(value("cache.appendonly"), Value::Bool(true)),
                appendfsync: text("cache.appendfsync"),
                aof_recover: matches!(value("cache.aof_recover"), Value::Bool(true)),
            },
            net: NetConfig {
                backlog: u32::try_from(integer("net.backlog")).expect("bounded by the key's range"),
                nodelay: matches!(value("net.nodelay"), Value::Bool(true)),
                send_buffer_bytes: size("net.send_buffer"),
                recv_buffer_bytes: size("net.recv_buffer"),
                keepalive: (!keepalive.is_zero()).then_some(keepalive),
            },
            shutdown: ShutdownConfig {
                drain_timeout: duration("shutdown.drain_timeout"),
            },
            config_file: None,
        }
    }
}
