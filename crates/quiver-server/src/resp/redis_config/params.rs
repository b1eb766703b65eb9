//! Every configuration parameter of Redis 7.0, as `CONFIG GET` names and shows them:
//! type, bounds, default and flags, checked against redis-server 7.0.15 (names,
//! defaults and error texts) and Redis's `config.c` (types and flags). An alias has an
//! entry of its own pointing at its primary (and the primary back at it).

/// How a parameter's value is read and checked.
pub(crate) enum Kind {
    /// yes/no.
    Bool,
    /// An integer within min..=max (inclusive). `memory`: accepts Redis memory units (k, kb, m, mb, g, gb). `percent`: may also be given as a negative percentage "N%" (Redis PERCENT_CONFIG). `octal`: written and shown in octal (unixsocketperm).
    Int {
        min: i64,
        max: i64,
        memory: bool,
        percent: bool,
        octal: bool,
    },
    /// One of the listed words (case-insensitive); `multi`: several space-separated words allowed (MULTI_ARG enum).
    Enum {
        values: &'static [&'static str],
        multi: bool,
    },
    /// Any string (createStringConfig / createSDSConfig).
    Str,
    /// A special parameter with its own parser in Redis (save, client-output-buffer-limit, oom-score-adj-values, notify-keyspace-events, dir, bind, ...).
    Special,
}

pub(crate) struct Param {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub kind: Kind,
    /// The value `CONFIG GET` shows on a fresh redis-server 7.0.15 started as above (for `dir`, put "" and say so in a comment).
    pub default: &'static str,
    /// Bit set of the flags below.
    pub flags: u16,
}

pub(crate) const IMMUTABLE: u16 = 1;
pub(crate) const SENSITIVE: u16 = 2;
pub(crate) const DEBUG: u16 = 4;
pub(crate) const HIDDEN: u16 = 8;
pub(crate) const PROTECTED: u16 = 16;
pub(crate) const DENY_LOADING: u16 = 32;

#[rustfmt::skip]
pub(crate) const PARAMS: &[Param] = &[
    Param { name: "acl-pubsub-default", alias: None, kind: Kind::Enum { values: &["allchannels", "resetchannels"], multi: false }, default: "resetchannels", flags: 0 },
    Param { name: "aclfile", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // C type: unsigned long
    Param { name: "acllog-max-len", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "128", flags: 0 },
    // C type: int
    Param { name: "active-defrag-cycle-max", alias: None, kind: Kind::Int { min: 1, max: 99, memory: false, percent: false, octal: false }, default: "25", flags: 0 },
    // C type: int
    Param { name: "active-defrag-cycle-min", alias: None, kind: Kind::Int { min: 1, max: 99, memory: false, percent: false, octal: false }, default: "1", flags: 0 },
    // C type: size_t
    Param { name: "active-defrag-ignore-bytes", alias: None, kind: Kind::Int { min: 1, max: i64::MAX, memory: true, percent: false, octal: false }, default: "104857600", flags: 0 },
    // C type: unsigned long
    Param { name: "active-defrag-max-scan-fields", alias: None, kind: Kind::Int { min: 1, max: i64::MAX, memory: false, percent: false, octal: false }, default: "1000", flags: 0 },
    // C type: int
    Param { name: "active-defrag-threshold-lower", alias: None, kind: Kind::Int { min: 0, max: 1000, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // C type: int
    Param { name: "active-defrag-threshold-upper", alias: None, kind: Kind::Int { min: 0, max: 1000, memory: false, percent: false, octal: false }, default: "100", flags: 0 },
    // C type: int
    Param { name: "active-expire-effort", alias: None, kind: Kind::Int { min: 1, max: 10, memory: false, percent: false, octal: false }, default: "1", flags: 0 },
    // yes is refused on this build: "Active defragmentation cannot be enabled: ..."
    Param { name: "activedefrag", alias: None, kind: Kind::Bool, default: "no", flags: DEBUG },
    Param { name: "activerehashing", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "always-show-logo", alias: None, kind: Kind::Bool, default: "no", flags: IMMUTABLE },
    Param { name: "aof-disable-auto-gc", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "aof-load-truncated", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "aof-rewrite-incremental-fsync", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "aof-timestamp-enabled", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "aof-use-rdb-preamble", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "aof_rewrite_cpulist", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // validated at startup: non-empty plain dir name
    Param { name: "appenddirname", alias: None, kind: Kind::Str, default: "appendonlydir", flags: IMMUTABLE },
    // validated at startup: non-empty plain file name
    Param { name: "appendfilename", alias: None, kind: Kind::Str, default: "appendonly.aof", flags: IMMUTABLE },
    Param { name: "appendfsync", alias: None, kind: Kind::Enum { values: &["everysec", "always", "no"], multi: false }, default: "everysec", flags: 0 },
    Param { name: "appendonly", alias: None, kind: Kind::Bool, default: "no", flags: DENY_LOADING },
    // C type: off_t
    Param { name: "auto-aof-rewrite-min-size", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "67108864", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "auto-aof-rewrite-percentage", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "100", flags: 0 },
    Param { name: "bgsave_cpulist", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // default "* -::*"; up to 16 addresses; "" = no TCP listening
    Param { name: "bind", alias: None, kind: Kind::Special, default: "* -::*", flags: 0 },
    Param { name: "bind-source-addr", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "bio_cpulist", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // C type: long long
    Param { name: "busy-reply-threshold", alias: Some("lua-time-limit"), kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "5000", flags: 0 },
    // groups of 4 words: <normal|slave|replica|pubsub> <hard> <soft> <seconds>
    Param { name: "client-output-buffer-limit", alias: None, kind: Kind::Special, default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", flags: 0 },
    // C type: size_t
    Param { name: "client-query-buffer-limit", alias: None, kind: Kind::Int { min: 1048576, max: i64::MAX, memory: true, percent: false, octal: false }, default: "1073741824", flags: DEBUG },
    Param { name: "cluster-allow-pubsubshard-when-down", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "cluster-allow-reads-when-down", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "cluster-allow-replica-migration", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // C type: int
    Param { name: "cluster-announce-bus-port", alias: None, kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    // validated: < 256 chars, [A-Za-z0-9.-] only
    Param { name: "cluster-announce-hostname", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "cluster-announce-ip", alias: None, kind: Kind::Str, default: "", flags: 0 },
    // C type: int
    Param { name: "cluster-announce-port", alias: None, kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    // C type: int
    Param { name: "cluster-announce-tls-port", alias: None, kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    Param { name: "cluster-config-file", alias: None, kind: Kind::Str, default: "nodes.conf", flags: IMMUTABLE },
    Param { name: "cluster-enabled", alias: None, kind: Kind::Bool, default: "no", flags: IMMUTABLE },
    // C type: unsigned long long; max = ULLONG_MAX (18446744073709551615, real upper bound is u64::MAX; written as i64::MAX here)
    Param { name: "cluster-link-sendbuf-limit", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "0", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "cluster-migration-barrier", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "1", flags: 0 },
    // C type: long long
    Param { name: "cluster-node-timeout", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "15000", flags: 0 },
    // C type: int
    Param { name: "cluster-port", alias: None, kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: IMMUTABLE },
    Param { name: "cluster-preferred-endpoint-type", alias: None, kind: Kind::Enum { values: &["ip", "hostname", "unknown-endpoint"], multi: false }, default: "ip", flags: 0 },
    Param { name: "cluster-replica-no-failover", alias: Some("cluster-slave-no-failover"), kind: Kind::Bool, default: "no", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "cluster-replica-validity-factor", alias: Some("cluster-slave-validity-factor"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    Param { name: "cluster-require-full-coverage", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // alias of cluster-replica-no-failover
    Param { name: "cluster-slave-no-failover", alias: Some("cluster-replica-no-failover"), kind: Kind::Bool, default: "no", flags: 0 },
    // alias of cluster-replica-validity-factor
    // C type: int; max = INT_MAX
    Param { name: "cluster-slave-validity-factor", alias: Some("cluster-replica-validity-factor"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    Param { name: "crash-log-enabled", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "crash-memcheck-enabled", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // probe server showed "yes" because of --daemonize yes; built-in default is no
    Param { name: "daemonize", alias: None, kind: Kind::Bool, default: "no", flags: IMMUTABLE },
    // C type: int; max = INT_MAX
    Param { name: "databases", alias: None, kind: Kind::Int { min: 1, max: 2147483647, memory: false, percent: false, octal: false }, default: "16", flags: IMMUTABLE },
    // validated: must be a plain file name ("dbfilename can't be a path, just a filename")
    Param { name: "dbfilename", alias: None, kind: Kind::Str, default: "dump.rdb", flags: PROTECTED },
    // default: "" placeholder
    // default: the server's working directory at startup (the probe server showed /tmp/config_params); set = chdir(), error text = strerror(errno)
    Param { name: "dir", alias: None, kind: Kind::Special, default: "", flags: PROTECTED | DENY_LOADING },
    Param { name: "disable-thp", alias: None, kind: Kind::Bool, default: "yes", flags: IMMUTABLE },
    Param { name: "dynamic-hz", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "enable-debug-command", alias: None, kind: Kind::Enum { values: &["no", "yes", "local"], multi: false }, default: "no", flags: IMMUTABLE },
    Param { name: "enable-module-command", alias: None, kind: Kind::Enum { values: &["no", "yes", "local"], multi: false }, default: "no", flags: IMMUTABLE },
    Param { name: "enable-protected-configs", alias: None, kind: Kind::Enum { values: &["no", "yes", "local"], multi: false }, default: "no", flags: IMMUTABLE },
    // C type: size_t
    Param { name: "hash-max-listpack-entries", alias: Some("hash-max-ziplist-entries"), kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "512", flags: 0 },
    // C type: size_t
    Param { name: "hash-max-listpack-value", alias: Some("hash-max-ziplist-value"), kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "64", flags: 0 },
    // alias of hash-max-listpack-entries
    // C type: size_t
    Param { name: "hash-max-ziplist-entries", alias: Some("hash-max-listpack-entries"), kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "512", flags: 0 },
    // alias of hash-max-listpack-value
    // C type: size_t
    Param { name: "hash-max-ziplist-value", alias: Some("hash-max-listpack-value"), kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "64", flags: 0 },
    // C type: size_t
    Param { name: "hll-sparse-max-bytes", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "3000", flags: 0 },
    // C type: int; max = INT_MAX
    // accepts 0..=INT_MAX but the value is clamped to 1..=500 after set (CONFIG GET shows the clamped value)
    Param { name: "hz", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    Param { name: "ignore-warnings", alias: None, kind: Kind::Str, default: "", flags: 0 },
    // C type: int
    Param { name: "io-threads", alias: None, kind: Kind::Int { min: 1, max: 128, memory: false, percent: false, octal: false }, default: "1", flags: IMMUTABLE | DEBUG },
    Param { name: "io-threads-do-reads", alias: None, kind: Kind::Bool, default: "no", flags: IMMUTABLE | DEBUG },
    Param { name: "jemalloc-bg-thread", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // C type: int; min = INT_MIN, max = INT_MAX
    Param { name: "key-load-delay", alias: None, kind: Kind::Int { min: -2147483648, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: HIDDEN },
    // C type: long long
    Param { name: "latency-monitor-threshold", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    Param { name: "latency-tracking", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // space-separated doubles in 0.0..=100.0; "" = none
    Param { name: "latency-tracking-info-percentiles", alias: None, kind: Kind::Special, default: "50 99 99.9", flags: 0 },
    Param { name: "lazyfree-lazy-eviction", alias: None, kind: Kind::Bool, default: "no", flags: DEBUG },
    Param { name: "lazyfree-lazy-expire", alias: None, kind: Kind::Bool, default: "no", flags: DEBUG },
    Param { name: "lazyfree-lazy-server-del", alias: None, kind: Kind::Bool, default: "no", flags: DEBUG },
    Param { name: "lazyfree-lazy-user-del", alias: None, kind: Kind::Bool, default: "no", flags: DEBUG },
    Param { name: "lazyfree-lazy-user-flush", alias: None, kind: Kind::Bool, default: "no", flags: DEBUG },
    // C type: int; max = INT_MAX
    Param { name: "lfu-decay-time", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "1", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "lfu-log-factor", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "list-compress-depth", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: DEBUG },
    // C type: int; min = INT_MIN, max = INT_MAX
    Param { name: "list-max-listpack-size", alias: Some("list-max-ziplist-size"), kind: Kind::Int { min: -2147483648, max: 2147483647, memory: false, percent: false, octal: false }, default: "-2", flags: 0 },
    // alias of list-max-listpack-size
    // C type: int; min = INT_MIN, max = INT_MAX
    Param { name: "list-max-ziplist-size", alias: Some("list-max-listpack-size"), kind: Kind::Int { min: -2147483648, max: 2147483647, memory: false, percent: false, octal: false }, default: "-2", flags: 0 },
    // C type: off_t; max = INT_MAX
    Param { name: "loading-process-events-interval-bytes", alias: None, kind: Kind::Int { min: 1024, max: 2147483647, memory: false, percent: false, octal: false }, default: "2097152", flags: HIDDEN },
    Param { name: "logfile", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    Param { name: "loglevel", alias: None, kind: Kind::Enum { values: &["debug", "verbose", "notice", "warning"], multi: false }, default: "notice", flags: 0 },
    // Debian 7.0.15-1~deb12u10 security backport; not in upstream 7.0 config.c copies found; flags from probing
    Param { name: "lua-enable-deprecated-api", alias: None, kind: Kind::Bool, default: "no", flags: IMMUTABLE | HIDDEN },
    // alias of busy-reply-threshold
    // C type: long long
    Param { name: "lua-time-limit", alias: Some("busy-reply-threshold"), kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "5000", flags: 0 },
    // sds string
    Param { name: "masterauth", alias: None, kind: Kind::Str, default: "", flags: SENSITIVE },
    Param { name: "masteruser", alias: None, kind: Kind::Str, default: "", flags: SENSITIVE },
    // C type: unsigned int; max = UINT_MAX
    // apply may fail: "The operating system is not able to handle the specified number of clients, try with N"
    Param { name: "maxclients", alias: None, kind: Kind::Int { min: 1, max: 4294967295, memory: false, percent: false, octal: false }, default: "10000", flags: 0 },
    // C type: unsigned long long; max = ULLONG_MAX (18446744073709551615, real upper bound is u64::MAX; written as i64::MAX here)
    Param { name: "maxmemory", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "0", flags: 0 },
    // C type: ssize_t
    // N% is stored as -N (so min -100 = 100%); CONFIG GET shows "N%" for percentages, plain bytes otherwise
    Param { name: "maxmemory-clients", alias: None, kind: Kind::Int { min: -100, max: i64::MAX, memory: true, percent: true, octal: false }, default: "0", flags: 0 },
    // C type: int
    Param { name: "maxmemory-eviction-tenacity", alias: None, kind: Kind::Int { min: 0, max: 100, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    Param { name: "maxmemory-policy", alias: None, kind: Kind::Enum { values: &["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"], multi: false }, default: "noeviction", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "maxmemory-samples", alias: None, kind: Kind::Int { min: 1, max: 2147483647, memory: false, percent: false, octal: false }, default: "5", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "min-replicas-max-lag", alias: Some("min-slaves-max-lag"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "min-replicas-to-write", alias: Some("min-slaves-to-write"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    // alias of min-replicas-max-lag
    // C type: int; max = INT_MAX
    Param { name: "min-slaves-max-lag", alias: Some("min-replicas-max-lag"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // alias of min-replicas-to-write
    // C type: int; max = INT_MAX
    Param { name: "min-slaves-to-write", alias: Some("min-replicas-to-write"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    Param { name: "no-appendfsync-on-rewrite", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    // characters from "Ag$lshzxeKEtmdn"
    Param { name: "notify-keyspace-events", alias: None, kind: Kind::Special, default: "", flags: 0 },
    Param { name: "oom-score-adj", alias: None, kind: Kind::Enum { values: &["no", "yes", "relative", "absolute"], multi: false }, default: "no", flags: 0 },
    // exactly 3 integers in -2000..=2000
    Param { name: "oom-score-adj-values", alias: None, kind: Kind::Special, default: "0 200 800", flags: 0 },
    // probe server showed "/var/run/redis.pid" (implied by --daemonize yes); built-in default is empty
    Param { name: "pidfile", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // C type: int
    // probe server showed "6395" because of --port 6395; built-in default is 6379
    Param { name: "port", alias: None, kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "6379", flags: 0 },
    // validated: "template format is invalid or contains unknown variables" (empty is invalid too)
    Param { name: "proc-title-template", alias: None, kind: Kind::Str, default: "{title} {listen-addr} {server-mode}", flags: 0 },
    Param { name: "propagation-error-behavior", alias: None, kind: Kind::Enum { values: &["ignore", "panic", "panic-on-replicas"], multi: false }, default: "ignore", flags: 0 },
    Param { name: "protected-mode", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // C type: long long
    Param { name: "proto-max-bulk-len", alias: None, kind: Kind::Int { min: 1048576, max: i64::MAX, memory: true, percent: false, octal: false }, default: "536870912", flags: DEBUG },
    Param { name: "rdb-del-sync-files", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    // C type: int; min = INT_MIN, max = INT_MAX
    Param { name: "rdb-key-save-delay", alias: None, kind: Kind::Int { min: -2147483648, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: HIDDEN },
    Param { name: "rdb-save-incremental-fsync", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "rdbchecksum", alias: None, kind: Kind::Bool, default: "yes", flags: IMMUTABLE },
    Param { name: "rdbcompression", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // C type: long long
    Param { name: "repl-backlog-size", alias: None, kind: Kind::Int { min: 1, max: i64::MAX, memory: true, percent: false, octal: false }, default: "1048576", flags: 0 },
    // C type: time_t
    Param { name: "repl-backlog-ttl", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "3600", flags: 0 },
    Param { name: "repl-disable-tcp-nodelay", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "repl-diskless-load", alias: None, kind: Kind::Enum { values: &["disabled", "on-empty-db", "swapdb"], multi: false }, default: "disabled", flags: DEBUG | DENY_LOADING },
    Param { name: "repl-diskless-sync", alias: None, kind: Kind::Bool, default: "yes", flags: DEBUG },
    // C type: int; max = INT_MAX
    Param { name: "repl-diskless-sync-delay", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "5", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "repl-diskless-sync-max-replicas", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "repl-ping-replica-period", alias: Some("repl-ping-slave-period"), kind: Kind::Int { min: 1, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // alias of repl-ping-replica-period
    // C type: int; max = INT_MAX
    Param { name: "repl-ping-slave-period", alias: Some("repl-ping-replica-period"), kind: Kind::Int { min: 1, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "repl-timeout", alias: None, kind: Kind::Int { min: 1, max: 2147483647, memory: false, percent: false, octal: false }, default: "60", flags: 0 },
    Param { name: "replica-announce-ip", alias: Some("slave-announce-ip"), kind: Kind::Str, default: "", flags: 0 },
    // C type: int
    Param { name: "replica-announce-port", alias: Some("slave-announce-port"), kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    Param { name: "replica-announced", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "replica-ignore-disk-write-errors", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "replica-ignore-maxmemory", alias: Some("slave-ignore-maxmemory"), kind: Kind::Bool, default: "yes", flags: 0 },
    Param { name: "replica-lazy-flush", alias: Some("slave-lazy-flush"), kind: Kind::Bool, default: "no", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "replica-priority", alias: Some("slave-priority"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "100", flags: 0 },
    Param { name: "replica-read-only", alias: Some("slave-read-only"), kind: Kind::Bool, default: "yes", flags: DEBUG },
    Param { name: "replica-serve-stale-data", alias: Some("slave-serve-stale-data"), kind: Kind::Bool, default: "yes", flags: 0 },
    // "<host> <port>" or "" ; immutable via CONFIG SET (use REPLICAOF)
    Param { name: "replicaof", alias: Some("slaveof"), kind: Kind::Special, default: "", flags: IMMUTABLE },
    // sds string; empty = no password
    Param { name: "requirepass", alias: None, kind: Kind::Str, default: "", flags: SENSITIVE },
    Param { name: "sanitize-dump-payload", alias: None, kind: Kind::Enum { values: &["no", "yes", "clients"], multi: false }, default: "no", flags: DEBUG },
    // probe server showed "" because of --save ''; built-in default is "3600 1 300 100 60 10000"
    Param { name: "save", alias: None, kind: Kind::Special, default: "3600 1 300 100 60 10000", flags: 0 },
    Param { name: "server_cpulist", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // C type: size_t
    Param { name: "set-max-intset-entries", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "512", flags: 0 },
    Param { name: "set-proc-title", alias: None, kind: Kind::Bool, default: "yes", flags: IMMUTABLE },
    // bit flags; "save"+"nosave" together refused; CONFIG GET lists set words in table order
    Param { name: "shutdown-on-sigint", alias: None, kind: Kind::Enum { values: &["default", "save", "nosave", "now", "force"], multi: true }, default: "default", flags: 0 },
    // bit flags; "save"+"nosave" together refused; CONFIG GET lists set words in table order
    Param { name: "shutdown-on-sigterm", alias: None, kind: Kind::Enum { values: &["default", "save", "nosave", "now", "force"], multi: true }, default: "default", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "shutdown-timeout", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "10", flags: 0 },
    // alias of replica-announce-ip
    Param { name: "slave-announce-ip", alias: Some("replica-announce-ip"), kind: Kind::Str, default: "", flags: 0 },
    // alias of replica-announce-port
    // C type: int
    Param { name: "slave-announce-port", alias: Some("replica-announce-port"), kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    // alias of replica-ignore-maxmemory
    Param { name: "slave-ignore-maxmemory", alias: Some("replica-ignore-maxmemory"), kind: Kind::Bool, default: "yes", flags: 0 },
    // alias of replica-lazy-flush
    Param { name: "slave-lazy-flush", alias: Some("replica-lazy-flush"), kind: Kind::Bool, default: "no", flags: 0 },
    // alias of replica-priority
    // C type: int; max = INT_MAX
    Param { name: "slave-priority", alias: Some("replica-priority"), kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "100", flags: 0 },
    // alias of replica-read-only
    Param { name: "slave-read-only", alias: Some("replica-read-only"), kind: Kind::Bool, default: "yes", flags: DEBUG },
    // alias of replica-serve-stale-data
    Param { name: "slave-serve-stale-data", alias: Some("replica-serve-stale-data"), kind: Kind::Bool, default: "yes", flags: 0 },
    // alias of replicaof
    // "<host> <port>" or "" ; immutable via CONFIG SET (use REPLICAOF)
    Param { name: "slaveof", alias: Some("replicaof"), kind: Kind::Special, default: "", flags: IMMUTABLE },
    // C type: long long
    Param { name: "slowlog-log-slower-than", alias: None, kind: Kind::Int { min: -1, max: i64::MAX, memory: false, percent: false, octal: false }, default: "10000", flags: 0 },
    // C type: unsigned long
    Param { name: "slowlog-max-len", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "128", flags: 0 },
    // C type: unsigned int; max = UINT_MAX
    Param { name: "socket-mark-id", alias: None, kind: Kind::Int { min: 0, max: 4294967295, memory: false, percent: false, octal: false }, default: "0", flags: IMMUTABLE },
    Param { name: "stop-writes-on-bgsave-error", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // C type: size_t
    Param { name: "stream-node-max-bytes", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "4096", flags: 0 },
    // C type: long long
    Param { name: "stream-node-max-entries", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "100", flags: 0 },
    Param { name: "supervised", alias: None, kind: Kind::Enum { values: &["upstart", "systemd", "auto", "no"], multi: false }, default: "no", flags: IMMUTABLE },
    Param { name: "syslog-enabled", alias: None, kind: Kind::Bool, default: "no", flags: IMMUTABLE },
    Param { name: "syslog-facility", alias: None, kind: Kind::Enum { values: &["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"], multi: false }, default: "local0", flags: IMMUTABLE },
    Param { name: "syslog-ident", alias: None, kind: Kind::Str, default: "redis", flags: IMMUTABLE },
    // C type: int; max = INT_MAX
    Param { name: "tcp-backlog", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "511", flags: IMMUTABLE },
    // C type: int; max = INT_MAX
    Param { name: "tcp-keepalive", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "300", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "timeout", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    Param { name: "tls-auth-clients", alias: None, kind: Kind::Enum { values: &["no", "yes", "optional"], multi: false }, default: "yes", flags: 0 },
    Param { name: "tls-ca-cert-dir", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-ca-cert-file", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-cert-file", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-ciphers", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-ciphersuites", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-client-cert-file", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-client-key-file", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-client-key-file-pass", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-cluster", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "tls-dh-params-file", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-key-file", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-key-file-pass", alias: None, kind: Kind::Str, default: "", flags: 0 },
    // C type: int
    Param { name: "tls-port", alias: None, kind: Kind::Int { min: 0, max: 65535, memory: false, percent: false, octal: false }, default: "0", flags: 0 },
    Param { name: "tls-prefer-server-ciphers", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    Param { name: "tls-protocols", alias: None, kind: Kind::Str, default: "", flags: 0 },
    Param { name: "tls-replication", alias: None, kind: Kind::Bool, default: "no", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "tls-session-cache-size", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "20480", flags: 0 },
    // C type: int; max = INT_MAX
    Param { name: "tls-session-cache-timeout", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "300", flags: 0 },
    Param { name: "tls-session-caching", alias: None, kind: Kind::Bool, default: "yes", flags: 0 },
    // C type: size_t
    Param { name: "tracking-table-max-keys", alias: None, kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "1000000", flags: 0 },
    Param { name: "unixsocket", alias: None, kind: Kind::Str, default: "", flags: IMMUTABLE },
    // C type: unsigned int; bounds 0..=0o777, range error shows them in octal ("between 0 and 777")
    Param { name: "unixsocketperm", alias: None, kind: Kind::Int { min: 0, max: 0o777, memory: false, percent: false, octal: true }, default: "0", flags: IMMUTABLE },
    Param { name: "use-exit-on-panic", alias: None, kind: Kind::Bool, default: "no", flags: HIDDEN },
    // C type: int; max = INT_MAX
    Param { name: "watchdog-period", alias: None, kind: Kind::Int { min: 0, max: 2147483647, memory: false, percent: false, octal: false }, default: "0", flags: HIDDEN },
    // C type: size_t
    Param { name: "zset-max-listpack-entries", alias: Some("zset-max-ziplist-entries"), kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "128", flags: 0 },
    // C type: size_t
    Param { name: "zset-max-listpack-value", alias: Some("zset-max-ziplist-value"), kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "64", flags: 0 },
    // alias of zset-max-listpack-entries
    // C type: size_t
    Param { name: "zset-max-ziplist-entries", alias: Some("zset-max-listpack-entries"), kind: Kind::Int { min: 0, max: i64::MAX, memory: false, percent: false, octal: false }, default: "128", flags: 0 },
    // alias of zset-max-listpack-value
    // C type: size_t
    Param { name: "zset-max-ziplist-value", alias: Some("zset-max-listpack-value"), kind: Kind::Int { min: 0, max: i64::MAX, memory: true, percent: false, octal: false }, default: "64", flags: 0 },
];
