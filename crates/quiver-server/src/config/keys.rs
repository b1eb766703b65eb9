//! The registry of every configuration key: its name, kind, default, the values
//! profiles give it and what it means. Env var and flag names derive from the
//! key name by one rule, so they cannot drift apart.

use std::time::Duration;

use super::profile::Profile;

/// What kind of value a key holds; decides parsing and the "allowed" text of errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A filesystem path.
    Path,
    /// `host:port` with a numeric IP (port 0 picks a free port).
    SocketAddr,
    /// A whole number in an inclusive range.
    Integer { min: u64, max: u64 },
    /// `auto`, or a number of threads from 1 to `max`.
    Threads { max: u64 },
    /// A byte size such as `64MiB`, from `min` to `max` bytes.
    Size { min: u64, max: u64 },
    /// A duration such as `250us` or `2s`, from `min` to `max`.
    Duration { min: Duration, max: Duration },
    /// `true` or `false`.
    Bool,
    /// A `tracing` filter: a level (`info`) or directives (`quiver=debug,warn`).
    LogFilter,
    /// Free text of at most `max_len` bytes; empty means "not set".
    Text { max_len: usize },
    /// Redis `notify-keyspace-events` letters (`KEA`, `Ex`...); empty is off.
    KeyspaceEvents,
    /// Durable-stream rules: `PATTERN [key=value ...]`, separated by `;` (or, in the
    /// file, an array of tables).
    DurableRules,
    /// Redis configuration parameters: `name value` pairs separated by `;` (or, in the
    /// file, a table of names and values).
    RedisParams,
}

/// One configuration key.
#[derive(Debug)]
pub struct Key {
    /// Dotted name as written in the file, e.g. `http.addr`.
    pub name: &'static str,
    /// What the value is.
    pub kind: Kind,
    /// Built-in default, in the canonical text form.
    pub default: &'static str,
    /// Values that profiles set instead of the default.
    pub profiles: &'static [(Profile, &'static str)],
    /// One-line meaning, shown by `quiver config --help` and in the docs.
    pub doc: &'static str,
}

impl Key {
    /// `http.addr` -> `QUIVER_HTTP_ADDR`.
    pub fn env_var(&self) -> String {
        format!(
            "QUIVER_{}",
            self.name.replace('.', "_").to_ascii_uppercase()
        )
    }

    /// `http.addr` -> `http-addr` (used as `--http-addr`).
    pub fn flag(&self) -> String {
        self.name.replace(['.', '_'], "-")
    }

    /// The value this key takes under `profile` before any file, env or flag.
    pub fn profile_value(&self, profile: Profile) -> Option<&'static str> {
        self.profiles
            .iter()
            .find(|(p, _)| *p == profile)
            .map(|(_, value)| *value)
    }
}

/// The key that picks the profile; it is resolved before every other key.
pub const PROFILE_KEY: &str = "profile";

const PROFILE_NAMES: &[&str] = &["balanced", "latency", "throughput", "low-memory"];

/// Most connections one listener serves at once. Each costs a task and buffers,
/// so the bound keeps a flood of clients from exhausting memory.
const MAX_CONNECTIONS_LIMIT: u64 = 1_000_000;

/// Most connection threads a listener may ask for: far beyond any core count
/// that benefits, low enough that a typo cannot exhaust the process's threads.
const MAX_IO_THREADS: u64 = 256;

/// Largest socket buffer that may be asked for: the kernel takes an `int` and
/// doubles it, and anything beyond this is memory no single connection needs.
const SOCKET_BUFFER_LIMIT: u64 = 256 << 20;

/// Every key, in the order `quiver config` prints them.
pub const KEYS: &[Key] = &[
    Key {
        name: PROFILE_KEY,
        kind: Kind::Choice(PROFILE_NAMES),
        default: "balanced",
        profiles: &[],
        doc: "Named set of defaults: balanced, latency, throughput or low-memory.",
    },
    Key {
        name: "data_dir",
        kind: Kind::Path,
        default: "./quiver-data",
        profiles: &[],
        doc: "Directory for all stored data; created on start and locked against a second server.",
    },
    Key {
        name: "log.level",
        kind: Kind::LogFilter,
        default: "info",
        profiles: &[],
        doc: "Log filter: a level (error, warn, info, debug, trace) or tracing directives. RUST_LOG, when set, wins.",
    },
    Key {
        name: "log.format",
        kind: Kind::Choice(&["pretty", "json"]),
        default: "pretty",
        profiles: &[],
        doc: "Log line format: pretty (human) or json (one object per line).",
    },
    Key {
        name: "http.addr",
        kind: Kind::SocketAddr,
        default: "127.0.0.1:8080",
        profiles: &[],
        doc: "Address of the HTTP listener: the REST and Server-Sent Events gateway (/v1), the status page and the operations routes (/health, /ready, /metrics).",
    },
    Key {
        name: "http.max_connections",
        kind: Kind::Integer {
            min: 1,
            max: MAX_CONNECTIONS_LIMIT,
        },
        default: "1024",
        profiles: &[(Profile::Throughput, "4096"), (Profile::LowMemory, "128")],
        doc: "Most open connections on the HTTP listener; further ones are refused with 503.",
    },
    Key {
        name: "http.max_ccu",
        kind: Kind::Integer {
            min: 1,
            max: MAX_CONNECTIONS_LIMIT,
        },
        default: "512",
        profiles: &[(Profile::LowMemory, "64")],
        doc: "Most data requests (/v1, not event streams) in the gateway at once: those served plus those waiting; one more gets 503 with Retry-After.",
    },
    Key {
        name: "http.utilization",
        kind: Kind::Integer { min: 1, max: 100 },
        default: "67",
        profiles: &[],
        doc: "Percent of http.max_ccu served at once (the normal capacity); the rest of http.max_ccu is a wait queue that absorbs spikes.",
    },
    Key {
        name: "http.queue_timeout",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(3600),
        },
        default: "1s",
        profiles: &[],
        doc: "How long a request waits in the admission queue for a place before it gets 503.",
    },
    Key {
        name: "http.refusal_pause",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(60),
        },
        default: "1s",
        profiles: &[],
        doc: "A 503 refusal for want of admission starts a pause on its connection: refusals on that connection during the pause are sent when it ends, so a client that retries at once without honouring Retry-After costs the server two refusals per pause, and admitted requests are never delayed. 0s: every refusal is sent at once.",
    },
    Key {
        name: "http.max_event_streams",
        kind: Kind::Integer {
            min: 0,
            max: MAX_CONNECTIONS_LIMIT,
        },
        default: "1024",
        profiles: &[(Profile::LowMemory, "128")],
        doc: "Most Server-Sent Events subscriptions open at once, counted apart from http.max_ccu so that they cannot starve requests; one more gets 503.",
    },
    Key {
        name: "http.ready_utilization",
        kind: Kind::Integer { min: 1, max: 100 },
        default: "90",
        profiles: &[],
        doc: "/ready answers 503 while the gateway's admission utilization (requests in it / http.max_ccu, in percent) is at or above this.",
    },
    Key {
        name: "http.max_body",
        kind: Kind::Size {
            min: 1,
            max: 1 << 30,
        },
        default: "8MiB",
        profiles: &[(Profile::LowMemory, "1MiB")],
        doc: "Largest request body; a larger one gets 413 before it is read.",
    },
    Key {
        name: "http.header_timeout",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(3600),
        },
        default: "10s",
        profiles: &[],
        doc: "An HTTP/1.1 client that does not send a request's whole head within this long is disconnected (slowloris).",
    },
    Key {
        name: "http.body_timeout",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(3600),
        },
        default: "30s",
        profiles: &[],
        doc: "A request body not received whole within this long gets 408.",
    },
    Key {
        name: "http.rate_limit",
        kind: Kind::Integer {
            min: 0,
            max: 100_000_000,
        },
        default: "0",
        profiles: &[],
        doc: "Requests per second one client address may make to the /v1 data routes; beyond it, 429 with Retry-After. 0 is no limit.",
    },
    Key {
        name: "http.rate_burst",
        kind: Kind::Integer {
            min: 0,
            max: 100_000_000,
        },
        default: "0",
        profiles: &[],
        doc: "Requests a client may make at once above http.rate_limit after a quiet spell; 0 means one second's worth (http.rate_limit).",
    },
    Key {
        name: "http.event_heartbeat",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(3600),
        },
        default: "15s",
        profiles: &[],
        doc: "How often an idle Server-Sent Events stream gets a comment line, so that proxies keep it open and the client sees the server alive.",
    },
    Key {
        name: "http.consumer_idle",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(86_400),
        },
        default: "60s",
        profiles: &[],
        doc: "A consumer-group consumer of the REST API that made no request this long is dropped at the next fetch: it leaves its group, and what it held goes to the others.",
    },
    Key {
        name: "resp.addr",
        kind: Kind::SocketAddr,
        default: "127.0.0.1:6379",
        profiles: &[],
        doc: "Address of the Redis-protocol (RESP2/RESP3) listener of the cache.",
    },
    Key {
        name: "resp.max_connections",
        kind: Kind::Integer {
            min: 1,
            max: MAX_CONNECTIONS_LIMIT,
        },
        default: "10000",
        profiles: &[(Profile::LowMemory, "1000")],
        doc: "Most open RESP connections (Redis `maxclients`); further ones get `-ERR max number of clients reached`.",
    },
    Key {
        name: "resp.requirepass",
        kind: Kind::Text { max_len: 512 },
        default: "",
        profiles: &[],
        doc: "Password of the default user (Redis `requirepass`); empty lets every client in.",
    },
    Key {
        name: "resp.protected_mode",
        kind: Kind::Bool,
        default: "true",
        profiles: &[],
        doc: "With no password set, refuse clients that are not on the loopback interface (Redis `protected-mode`).",
    },
    Key {
        name: "resp.idle_timeout",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(31_536_000),
        },
        default: "0s",
        profiles: &[],
        doc: "Close a RESP client idle this long; 0s never does (Redis `timeout`).",
    },
    Key {
        name: "resp.max_output_buffer",
        kind: Kind::Size {
            min: 1 << 20,
            max: 1 << 40,
        },
        default: "256MiB",
        profiles: &[(Profile::LowMemory, "32MiB")],
        doc: "Replies pending for one client beyond this close its connection.",
    },
    Key {
        name: "resp.pubsub_output_hard",
        kind: Kind::Size {
            min: 0,
            max: 1 << 40,
        },
        default: "32MiB",
        profiles: &[],
        doc: "A subscriber with this many bytes of messages undelivered is disconnected; 0 is no limit (the hard limit of Redis `client-output-buffer-limit pubsub`).",
    },
    Key {
        name: "resp.pubsub_output_soft",
        kind: Kind::Size {
            min: 0,
            max: 1 << 40,
        },
        default: "8MiB",
        profiles: &[],
        doc: "A subscriber above this many bytes undelivered for longer than `resp.pubsub_output_soft_period` is disconnected; 0 is no limit (the soft limit of Redis `client-output-buffer-limit pubsub`).",
    },
    Key {
        name: "resp.pubsub_output_soft_period",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(31_536_000),
        },
        default: "60s",
        profiles: &[],
        doc: "How long a subscriber may stay above `resp.pubsub_output_soft`.",
    },
    Key {
        name: "resp.notify_keyspace_events",
        kind: Kind::KeyspaceEvents,
        default: "",
        profiles: &[],
        doc: "Keyspace events published (Redis `notify-keyspace-events`): `K` on `__keyspace@<db>__:<key>`, `E` on `__keyevent@<db>__:<event>`, for the classes `g$lshzxetdnm` (`A` is `g$lshzxetd`); empty is off. They also reach native subscribers of the stream `quiver/cache/keyspace`.",
    },
    Key {
        name: "resp.busy_reply_threshold",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(31_536_000),
        },
        default: "5s",
        profiles: &[],
        doc: "How long a Lua script or function runs before other clients are answered `BUSY` and SCRIPT KILL or FUNCTION KILL may stop it (Redis `busy-reply-threshold`, also `lua-time-limit`, in milliseconds there).",
    },
    Key {
        name: "resp.max_query_buffer",
        kind: Kind::Size {
            min: 1 << 20,
            max: 1 << 40,
        },
        default: "1GiB",
        profiles: &[(Profile::LowMemory, "64MiB")],
        doc: "Bytes one client may buffer without completing a request (Redis `client-query-buffer-limit`).",
    },
    Key {
        name: "resp.io_threads",
        kind: Kind::Threads {
            max: MAX_IO_THREADS,
        },
        default: "auto",
        profiles: &[(Profile::LowMemory, "1")],
        doc: "Threads that serve RESP connections, each with its own event loop: a number means exactly that many, all serving; auto means one per CPU core, of which one serves at first and more join only while they raise the request rate.",
    },
    Key {
        name: "resp.busy_poll",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_millis(1),
        },
        default: "50us",
        profiles: &[],
        doc: "Longest a RESP connection thread keeps polling for requests after its last before it sleeps; adapts to the load, and 0s never polls.",
    },
    Key {
        name: "resp.balance_trace",
        kind: Kind::Text { max_len: 4096 },
        default: "",
        profiles: &[],
        doc: "File where the connection-thread balancer (resp.io_threads = auto) writes every tick's measurements and decision, for diagnosis; empty writes none.",
    },
    Key {
        name: "resp.redis_config",
        kind: Kind::RedisParams,
        default: "",
        profiles: &[],
        doc: "Redis configuration parameters applied when the server starts, as CONFIG SET would, checked with Redis's rules: in the file a table `[resp.redis_config]` of `name = value`, elsewhere `name value; name value`. CONFIG REWRITE writes this table.",
    },
    Key {
        name: "resp.max_bulk_len",
        kind: Kind::Size {
            min: 1 << 20,
            max: 1 << 40,
        },
        default: "512MiB",
        profiles: &[],
        doc: "Largest single argument (Redis `proto-max-bulk-len`).",
    },
    Key {
        name: "native.addr",
        kind: Kind::SocketAddr,
        default: "127.0.0.1:7070",
        profiles: &[],
        doc: "Address of the native-protocol (TCP) listener: streams and cache for Quiver clients.",
    },
    Key {
        name: "native.max_connections",
        kind: Kind::Integer {
            min: 1,
            max: MAX_CONNECTIONS_LIMIT,
        },
        default: "10000",
        profiles: &[(Profile::LowMemory, "1000")],
        doc: "Most open native connections; a client beyond it gets an OVERLOADED error frame and is closed.",
    },
    Key {
        name: "native.auth_token",
        kind: Kind::Text { max_len: 4096 },
        default: "",
        profiles: &[],
        doc: "Token a native client must present in Hello; empty lets every client in.",
    },
    Key {
        name: "quic.enabled",
        kind: Kind::Bool,
        default: "true",
        profiles: &[],
        doc: "Whether the native protocol is also served over QUIC on quic.addr.",
    },
    Key {
        name: "quic.addr",
        kind: Kind::SocketAddr,
        default: "127.0.0.1:7071",
        profiles: &[],
        doc: "UDP address of the native-protocol QUIC listener (same frames as native.addr).",
    },
    Key {
        name: "quic.max_connections",
        kind: Kind::Integer {
            min: 1,
            max: MAX_CONNECTIONS_LIMIT,
        },
        default: "10000",
        profiles: &[(Profile::LowMemory, "1000")],
        doc: "Most open QUIC connections; a connection attempt beyond it is refused.",
    },
    Key {
        name: "quic.cert",
        kind: Kind::Text { max_len: 4096 },
        default: "",
        profiles: &[],
        doc: "PEM certificate chain for QUIC; empty (with quic.key empty): a self-signed certificate kept in the data directory.",
    },
    Key {
        name: "quic.key",
        kind: Kind::Text { max_len: 4096 },
        default: "",
        profiles: &[],
        doc: "PEM private key of quic.cert; set both or neither.",
    },
    Key {
        name: "streams.batch_max_events",
        kind: Kind::Integer { min: 1, max: 4096 },
        default: "256",
        profiles: &[(Profile::Latency, "64"), (Profile::Throughput, "1024")],
        doc: "Most events in one delivery batch of a stream.",
    },
    Key {
        name: "streams.batch_max_bytes",
        kind: Kind::Size {
            min: 1,
            max: 4 << 20,
        },
        default: "1MiB",
        profiles: &[
            (Profile::Latency, "256KiB"),
            (Profile::Throughput, "4MiB"),
            (Profile::LowMemory, "256KiB"),
        ],
        doc: "Most payload bytes in one delivery batch of a stream.",
    },
    Key {
        name: "streams.batch_max_delay",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(1),
        },
        default: "0s",
        profiles: &[(Profile::Throughput, "1ms")],
        doc: "Longest a published event waits for more to fill its batch; 0s delivers at the end of each publish.",
    },
    Key {
        name: "streams.queue_max_events",
        kind: Kind::Integer {
            min: 1,
            max: 1 << 20,
        },
        default: "8192",
        profiles: &[
            (Profile::Latency, "1024"),
            (Profile::Throughput, "65536"),
            (Profile::LowMemory, "1024"),
        ],
        doc: "Events one subscription may have queued before the slow-subscriber policy applies.",
    },
    Key {
        name: "streams.queue_max_bytes",
        kind: Kind::Size {
            min: 1,
            max: 1 << 30,
        },
        default: "8MiB",
        profiles: &[(Profile::Throughput, "64MiB"), (Profile::LowMemory, "1MiB")],
        doc: "Payload bytes one subscription may have queued before the slow-subscriber policy applies.",
    },
    Key {
        name: "streams.slow_policy",
        kind: Kind::Choice(&["drop_old", "drop_new", "block", "disconnect"]),
        default: "drop_old",
        profiles: &[],
        doc: "What a full subscription queue does: drop_old, drop_new, block (publishers wait) or disconnect.",
    },
    Key {
        name: "streams.block_timeout",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(60),
        },
        default: "5s",
        profiles: &[],
        doc: "Under the block policy, how long a publish waits for room before it fails.",
    },
    Key {
        name: "streams.durable",
        kind: Kind::DurableRules,
        default: "",
        profiles: &[],
        doc: "Streams made durable by name when first used: rules `PATTERN [durability=os|buffered|sync|interval:MS] [max_age=DURATION] [max_bytes=SIZE] [max_messages=N] [keep_unacked=BOOL] [dedupe_window=DURATION]` separated by `;`; the first match wins.",
    },
    Key {
        name: "streams.dedupe_window",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(24 * 3600),
        },
        default: "2m",
        profiles: &[],
        doc: "How long a durable stream remembers message ids (header Quiver-Msg-Id) to drop retried publishes, unless its rule says otherwise; 0s turns it off.",
    },
    Key {
        name: "streams.max_durable",
        kind: Kind::Integer {
            min: 1,
            max: 100_000,
        },
        default: "4096",
        profiles: &[],
        doc: "Most durable streams at once; each holds open files and up to two threads of its log.",
    },
    Key {
        name: "streams.segment_size",
        kind: Kind::Size {
            min: 64 << 10,
            max: 1 << 30,
        },
        default: "64MiB",
        profiles: &[(Profile::LowMemory, "8MiB")],
        doc: "Size of one log segment of a durable stream (preallocated); retention frees storage a segment at a time.",
    },
    Key {
        name: "streams.retention_interval",
        kind: Kind::Duration {
            min: Duration::from_millis(1),
            max: Duration::from_secs(3600),
        },
        default: "1s",
        profiles: &[],
        doc: "How often durable streams' retention runs.",
    },
    Key {
        name: "streams.recovery",
        kind: Kind::Choice(&["strict", "salvage"]),
        default: "strict",
        profiles: &[],
        doc: "What start-up does with corruption inside a durable stream's log: strict refuses to start, naming the file and byte; salvage keeps what is before the damage. A torn tail is always cut.",
    },
    Key {
        name: "streams.group_ack_wait",
        kind: Kind::Duration {
            min: Duration::from_millis(1),
            max: Duration::from_secs(24 * 3600),
        },
        default: "30s",
        profiles: &[],
        doc: "Default ack wait of consumer groups: a message held longer without an ack is delivered again.",
    },
    Key {
        name: "streams.group_max_deliveries",
        kind: Kind::Integer {
            min: 0,
            max: 1_000_000,
        },
        default: "5",
        profiles: &[],
        doc: "Default deliveries after which a consumer group dead-letters a message; 0 never does.",
    },
    Key {
        name: "streams.group_max_in_flight",
        kind: Kind::Integer {
            min: 1,
            max: 1 << 20,
        },
        default: "1000",
        profiles: &[],
        doc: "Default most unacknowledged messages one group member holds per stream.",
    },
    Key {
        name: "streams.group_flush_interval",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(60),
        },
        default: "100ms",
        profiles: &[],
        doc: "How often a consumer group whose state changed writes it to the catalog; a crash loses at most this much of acks (those messages are delivered again).",
    },
    Key {
        name: "cache.databases",
        kind: Kind::Integer { min: 1, max: 1024 },
        default: "16",
        profiles: &[],
        doc: "Number of numbered databases (Redis `databases`).",
    },
    Key {
        name: "cache.max_memory",
        kind: Kind::Size {
            min: 0,
            max: 1 << 50,
        },
        default: "0B",
        profiles: &[],
        doc: "Memory bound of the keyspace as INFO's used_memory counts it; 0B is unbounded (Redis `maxmemory`).",
    },
    Key {
        name: "cache.eviction_policy",
        kind: Kind::Choice(&[
            "noeviction",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
        ]),
        default: "noeviction",
        profiles: &[],
        doc: "What to evict at cache.max_memory (Redis `maxmemory-policy`); noeviction answers OOM to writes.",
    },
    Key {
        name: "cache.save",
        kind: Kind::Text { max_len: 512 },
        default: "3600 1 300 100 60 10000",
        profiles: &[],
        doc: "Snapshot rules (Redis `save`): pairs of seconds and changes; a background snapshot is written when at least that many keys changed within that many seconds. Empty: only SAVE, BGSAVE and SHUTDOWN SAVE write one. The file is cache/dump.rdb in data_dir, loaded at start-up.",
    },
    Key {
        name: "cache.appendonly",
        kind: Kind::Bool,
        default: "false",
        profiles: &[],
        doc: "Journal every change of the cache in an append-only log (Redis `appendonly`): cache/appendonlydir in data_dir, a base snapshot plus a quiver-log log, replayed at start-up.",
    },
    Key {
        name: "cache.appendfsync",
        kind: Kind::Choice(&["always", "everysec", "no"]),
        default: "everysec",
        profiles: &[],
        doc: "When the append-only log is fsynced (Redis `appendfsync`): always before the reply (group commit), everysec once a second, no when the OS decides. Every mode writes the log before replying, so a crash of the process loses nothing acknowledged.",
    },
    Key {
        name: "cache.aof_recover",
        kind: Kind::Bool,
        default: "false",
        profiles: &[],
        doc: "Start even if the append-only log is damaged inside: keep the records before the damage and drop the rest (reported in the log). Off: such a log stops the start-up with the file and position.",
    },
    Key {
        name: "net.backlog",
        kind: Kind::Integer {
            min: 1,
            max: 65_535,
        },
        default: "1024",
        profiles: &[(Profile::Throughput, "4096"), (Profile::LowMemory, "128")],
        doc: "Accept backlog of every listening socket (the kernel caps it at net.core.somaxconn).",
    },
    Key {
        name: "net.nodelay",
        kind: Kind::Bool,
        default: "true",
        profiles: &[],
        doc: "Disable Nagle's algorithm on accepted TCP connections; Quiver coalesces writes itself.",
    },
    Key {
        name: "net.send_buffer",
        kind: Kind::Size {
            min: 0,
            max: SOCKET_BUFFER_LIMIT,
        },
        default: "0B",
        profiles: &[
            (Profile::Latency, "256KiB"),
            (Profile::Throughput, "4MiB"),
            (Profile::LowMemory, "64KiB"),
        ],
        doc: "SO_SNDBUF of accepted connections; 0B leaves the kernel's auto-tuning in charge.",
    },
    Key {
        name: "net.recv_buffer",
        kind: Kind::Size {
            min: 0,
            max: SOCKET_BUFFER_LIMIT,
        },
        default: "0B",
        profiles: &[
            (Profile::Latency, "256KiB"),
            (Profile::Throughput, "4MiB"),
            (Profile::LowMemory, "64KiB"),
        ],
        doc: "SO_RCVBUF of accepted connections; 0B leaves the kernel's auto-tuning in charge.",
    },
    Key {
        name: "net.keepalive",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(7_200),
        },
        default: "60s",
        profiles: &[],
        doc: "Idle time before TCP keepalive probes start on accepted connections; 0s turns keepalive off.",
    },
    Key {
        name: "shutdown.drain_timeout",
        kind: Kind::Duration {
            min: Duration::ZERO,
            max: Duration::from_secs(3_600),
        },
        default: "10s",
        profiles: &[],
        doc: "On SIGINT/SIGTERM, how long in-flight work may take to finish before the process exits.",
    },
];

/// Looks a key up by its dotted name.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

/// The known key closest to `name` by edit distance, if any is close enough to
/// be a plausible typo.
pub fn nearest(name: &str) -> Option<&'static str> {
    KEYS.iter()
        .map(|key| (edit_distance(name, key.name), key.name))
        .filter(|(distance, key)| *distance <= key.len().max(4) / 3 + 1)
        .min()
        .map(|(_, key)| key)
}

/// Levenshtein distance over bytes (key names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_env_and_flag() {
        let key = find("http.addr").expect("http.addr is a key");
        assert_eq!(key.env_var(), "QUIVER_HTTP_ADDR");
        assert_eq!(key.flag(), "http-addr");
        let key = find("shutdown.drain_timeout").expect("key exists");
        assert_eq!(key.env_var(), "QUIVER_SHUTDOWN_DRAIN_TIMEOUT");
        assert_eq!(key.flag(), "shutdown-drain-timeout");
    }

    #[test]
    fn typos_find_the_nearest_key() {
        assert_eq!(nearest("http.adr"), Some("http.addr"));
        assert_eq!(nearest("datadir"), Some("data_dir"));
        assert_eq!(
            nearest("shutdown.drain_timout"),
            Some("shutdown.drain_timeout")
        );
        assert_eq!(nearest("completely.unrelated.thing"), None);
    }

    #[test]
    fn names_are_unique_and_profiles_known() {
        for (i, key) in KEYS.iter().enumerate() {
            assert!(
                KEYS[i + 1..].iter().all(|other| other.name != key.name),
                "{}",
                key.name
            );
        }
    }
}
