//! CONFIG GET, SET, RESETSTAT and REWRITE: Redis's parameters, the ones that act on
//! Quiver (the `LIVE` table) and the ones kept without effect.

use bytes::{Bytes, BytesMut};
use quiver_core::cache::aof::AppendFsync;
use quiver_core::cache::limits;
use quiver_core::cache::persist::{parse_save_rules, render_save_rules};
use quiver_core::cache::{EventClasses, EvictionPolicy, MAX_SAMPLES};
use quiver_core::pubsub::OutputLimits;
use quiver_resp::Reply;
use quiver_resp::encode as write;

use crate::clock::unix_ms;
use crate::resp::command::exec::container_help;
use crate::resp::command::server::ConfigCommand;
use crate::resp::connection::Connection;
use crate::resp::redis_config::params::{HIDDEN, IMMUTABLE, PARAMS, PROTECTED, Param};
use crate::resp::redis_config::{self};
use crate::resp::{RespShared, slowlog};

/// A parameter that acts on Quiver: how its value is read from the node and, for one that
/// changes at run time, applied to it (a checked value, see [`redis_config::check`]).
struct Live {
    name: &'static str,
    get: fn(&RespShared) -> String,
    set: Option<fn(&RespShared, &str)>,
}

fn yes_no(on: bool) -> String {
    if on { "yes" } else { "no" }.to_owned()
}

/// A checked number (0 if it somehow is not one), and the same as a size.
fn number(value: &str) -> u64 {
    value.parse().unwrap_or(0)
}

fn size(value: &str) -> usize {
    usize::try_from(number(value)).unwrap_or(usize::MAX)
}

fn lfu(value: &str) -> u32 {
    u32::try_from(number(value)).unwrap_or(u32::MAX)
}

fn limit(limit: &'static limits::Limit) -> String {
    limit.get().to_string()
}

fn runtime_mut(
    shared: &RespShared,
) -> std::sync::RwLockWriteGuard<'_, crate::resp::RuntimeSettings> {
    shared
        .runtime
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Every parameter that acts on Quiver (by primary name); the others are kept in
/// [`redis_config::StoredParams`] without effect.
const LIVE: &[Live] = &[
    Live {
        name: "maxmemory",
        get: |s| s.cache.max_memory_bytes().to_string(),
        set: Some(|s, v| s.cache.set_max_memory_bytes(number(v))),
    },
    Live {
        name: "maxmemory-policy",
        get: |s| s.cache.policy().name().to_owned(),
        set: Some(|s, v| {
            if let Ok(policy) = v.parse::<EvictionPolicy>() {
                s.cache.set_policy(policy);
            }
        }),
    },
    Live {
        name: "maxmemory-samples",
        get: |s| s.cache.max_memory_samples().to_string(),
        // Checked against Quiver's limit by `refusal`.
        set: Some(|s, v| {
            let _ = s.cache.set_max_memory_samples(size(v));
        }),
    },
    Live {
        name: "lfu-log-factor",
        get: |s| s.cache.lfu_settings().0.to_string(),
        set: Some(|s, v| s.cache.set_lfu_settings(lfu(v), s.cache.lfu_settings().1)),
    },
    Live {
        name: "lfu-decay-time",
        get: |s| s.cache.lfu_settings().1.to_string(),
        set: Some(|s, v| s.cache.set_lfu_settings(s.cache.lfu_settings().0, lfu(v))),
    },
    Live {
        name: "hll-sparse-max-bytes",
        get: |s| s.cache.hll_sparse_max_bytes().to_string(),
        set: Some(|s, v| s.cache.set_hll_sparse_max_bytes(size(v))),
    },
    Live {
        name: "hash-max-listpack-entries",
        get: |_| limit(&limits::HASH_MAX_ENTRIES),
        set: Some(|_, v| limits::HASH_MAX_ENTRIES.set(size(v))),
    },
    Live {
        name: "hash-max-listpack-value",
        get: |_| limit(&limits::HASH_MAX_VALUE),
        set: Some(|_, v| limits::HASH_MAX_VALUE.set(size(v))),
    },
    Live {
        name: "zset-max-listpack-entries",
        get: |_| limit(&limits::ZSET_MAX_ENTRIES),
        set: Some(|_, v| limits::ZSET_MAX_ENTRIES.set(size(v))),
    },
    Live {
        name: "zset-max-listpack-value",
        get: |_| limit(&limits::ZSET_MAX_VALUE),
        set: Some(|_, v| limits::ZSET_MAX_VALUE.set(size(v))),
    },
    Live {
        name: "set-max-intset-entries",
        get: |_| limit(&limits::SET_MAX_INTSET_ENTRIES),
        set: Some(|_, v| limits::SET_MAX_INTSET_ENTRIES.set(size(v))),
    },
    Live {
        name: "requirepass",
        get: |s| {
            s.acl
                .requirepass()
                .map(|pass| String::from_utf8_lossy(&pass).into_owned())
                .unwrap_or_default()
        },
        set: Some(|s, v| {
            s.acl
                .set_requirepass((!v.is_empty()).then(|| Bytes::copy_from_slice(v.as_bytes())));
        }),
    },
    Live {
        name: "protected-mode",
        get: |s| yes_no(s.runtime().protected_mode),
        set: Some(|s, v| runtime_mut(s).protected_mode = v == "yes"),
    },
    Live {
        name: "client-output-buffer-limit",
        get: output_limits,
        // Only the pubsub class gets here (`refusal`).
        set: Some(|s, v| {
            let classes = redis_config::parse_output_limits(v).unwrap_or_default();
            if let Some((_, limit)) = classes.iter().find(|(class, _)| *class == "pubsub") {
                s.pubsub.set_limits(OutputLimits {
                    hard_bytes: limit.hard,
                    soft_bytes: limit.soft,
                    soft_period: std::time::Duration::from_secs(limit.seconds),
                });
            }
        }),
    },
    Live {
        name: "notify-keyspace-events",
        get: |s| s.cache.notify_events().to_string(),
        set: Some(|s, v| {
            if let Some(classes) = EventClasses::parse(v) {
                s.pubsub.set_notify_events(classes);
            }
        }),
    },
    Live {
        name: "busy-reply-threshold",
        get: |s| s.scripts.busy_threshold_ms().to_string(),
        set: Some(|s, v| s.scripts.set_busy_threshold_ms(number(v))),
    },
    Live {
        name: "slowlog-log-slower-than",
        get: |s| s.slowlog.threshold_us().to_string(),
        set: Some(|s, v| {
            s.slowlog
                .set_threshold_us(v.parse().unwrap_or(slowlog::DEFAULT_THRESHOLD_US));
        }),
    },
    Live {
        name: "latency-monitor-threshold",
        get: |s| s.latency.threshold_ms().to_string(),
        set: Some(|s, v| s.latency.set_threshold_ms(number(v))),
    },
    Live {
        name: "latency-tracking",
        get: |s| yes_no(s.stats.tracking()),
        set: Some(|s, v| s.stats.set_tracking(v == "yes")),
    },
    Live {
        name: "slowlog-max-len",
        get: |s| s.slowlog.max_len().to_string(),
        set: Some(|s, v| s.slowlog.set_max_len(size(v))),
    },
    // Set when Quiver starts, with its own keys (`redis_config::QUIVER_KEYS`).
    Live {
        name: "databases",
        get: |s| s.cache.databases().to_string(),
        set: None,
    },
    Live {
        name: "maxclients",
        get: |s| s.max_clients.to_string(),
        set: None,
    },
    Live {
        name: "timeout",
        get: |s| {
            s.settings
                .idle_timeout
                .map_or(0, |idle| idle.as_secs())
                .to_string()
        },
        set: None,
    },
    Live {
        name: "proto-max-bulk-len",
        get: |s| s.settings.limits.max_bulk_len_bytes.to_string(),
        set: None,
    },
    Live {
        name: "client-query-buffer-limit",
        get: |s| s.settings.limits.max_query_buffer_bytes.to_string(),
        set: None,
    },
    Live {
        name: "port",
        get: |s| s.listen_addr.port().to_string(),
        set: None,
    },
    Live {
        name: "bind",
        get: |s| s.listen_addr.ip().to_string(),
        set: None,
    },
    Live {
        name: "save",
        get: |s| render_save_rules(&s.cache.persistence().rules()),
        set: Some(|s, v| {
            if let Ok(rules) = parse_save_rules(v) {
                s.cache.persistence().set_rules(rules);
            }
        }),
    },
    Live {
        name: "stop-writes-on-bgsave-error",
        get: |s| yes_no(s.cache.persistence().stop_writes_on_error()),
        set: Some(|s, v| s.cache.persistence().set_stop_writes_on_error(v == "yes")),
    },
    Live {
        name: "dbfilename",
        get: |s| s.cache.persistence().file_name(),
        // Checked by `refusal`.
        set: Some(|s, v| {
            let _ = s.cache.persistence().set_file_name(v);
        }),
    },
    Live {
        name: "dir",
        get: |s| s.cache.persistence().dir().display().to_string(),
        // Checked by `refusal`.
        set: Some(|s, v| {
            let _ = s.cache.persistence().set_dir(std::path::Path::new(v));
        }),
    },
    Live {
        name: "appendonly",
        get: |s| yes_no(s.cache.append_only().enabled()),
        // Applied first, by `apply_all`: turning it on may fail.
        set: Some(|_, _| {}),
    },
    Live {
        name: "appendfsync",
        get: |s| s.cache.append_only().fsync().as_str().to_owned(),
        set: Some(|s, v| {
            if let Some(fsync) = AppendFsync::parse(v) {
                s.cache.append_only().set_fsync(fsync);
            }
        }),
    },
    Live {
        name: "auto-aof-rewrite-percentage",
        get: |s| s.cache.append_only().auto_rewrite().0.to_string(),
        set: Some(|s, v| {
            let aof = s.cache.append_only();
            aof.set_auto_rewrite(number(v), aof.auto_rewrite().1);
        }),
    },
    Live {
        name: "auto-aof-rewrite-min-size",
        get: |s| s.cache.append_only().auto_rewrite().1.to_string(),
        set: Some(|s, v| {
            let aof = s.cache.append_only();
            aof.set_auto_rewrite(aof.auto_rewrite().0, number(v));
        }),
    },
];

/// Turns the append-only file on or off (`appendonly`); turning it on opens the log and
/// starts writing its base in the background.
fn set_appendonly(shared: &RespShared, value: &str) -> Result<(), String> {
    let cache = &shared.cache;
    match (value == "yes", cache.append_only().enabled()) {
        (true, false) => cache
            .start_aof(true, unix_ms)
            .map_err(|error| format!("cannot turn the append-only file on: {error}")),
        (false, true) => {
            cache.stop_aof();
            Ok(())
        }
        _ => Ok(()),
    }
}

fn live(name: &str) -> Option<&'static Live> {
    LIVE.iter().find(|live| live.name == name)
}

/// The current value of `param`, as CONFIG GET shows it.
fn param_value(shared: &RespShared, param: &Param) -> String {
    let primary = redis_config::primary(param);
    match live(primary) {
        Some(live) => (live.get)(shared),
        None => shared.stored_params.get(primary),
    }
}

/// Why Quiver refuses a value Redis would take (`None`: it is applied or kept).
fn refusal(shared: &RespShared, name: &str, value: &str) -> Option<String> {
    let live = live(name)?;
    match name {
        "maxmemory-samples" => value
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= MAX_SAMPLES)
            .is_none()
            .then(|| format!("Quiver samples at most {MAX_SAMPLES} keys per eviction round")),
        "client-output-buffer-limit" => {
            let classes = redis_config::parse_output_limits(value).ok()?;
            classes.iter().find(|(class, _)| *class != "pubsub").map(|(class, _)| {
                format!(
                    "Quiver sets only the pubsub class at run time; normal clients are bounded by resp.max_output_buffer in the configuration file, and there are no replicas (got class {class})"
                )
            })
        }
        "dir" if !std::path::Path::new(value).is_dir() => {
            Some(format!("{value:?} is not an existing directory"))
        }
        _ if live.set.is_some() => None,
        _ => {
            let current = (live.get)(shared);
            (value != current).then(|| {
                format!(
                    "Quiver sets {name} when it starts, with {} in its configuration; it is {current} now",
                    redis_config::quiver_key(name).unwrap_or("its own key")
                )
            })
        }
    }
}

/// Checks every change for what Quiver refuses, then applies them all (or none): `Err`
/// names the parameter and the reason.
fn apply_all(
    shared: &RespShared,
    changes: Vec<(&'static str, String)>,
) -> Result<(), (&'static str, String)> {
    for (name, value) in &changes {
        if let Some(reason) = refusal(shared, name, value) {
            return Err((name, reason));
        }
    }
    // The one change that may fail as it is made goes first, so a failure applies none.
    if let Some((name, value)) = changes.iter().find(|(name, _)| *name == "appendonly") {
        set_appendonly(shared, value).map_err(|reason| (*name, reason))?;
    }
    for (name, value) in changes {
        shared.stored_params.touch(name);
        match live(name) {
            Some(live) => {
                if let Some(set) = live.set {
                    set(shared, &value);
                }
            }
            None => shared.stored_params.set(name, value),
        }
    }
    Ok(())
}

pub(super) fn config(conn: &mut Connection, command: ConfigCommand, out: &mut BytesMut) {
    let protocol = conn.session.protocol;
    match command {
        ConfigCommand::Get { patterns } => {
            config_get(conn, &patterns).encode(protocol, out);
        }
        ConfigCommand::Set { pairs } => match config_set(conn, &pairs) {
            Ok(()) => write::write_simple(out, b"OK"),
            Err(message) => write::write_error(out, message.as_bytes()),
        },
        ConfigCommand::ResetStat => {
            conn.shared.stats.reset();
            conn.shared.cache.reset_stats();
            write::write_simple(out, b"OK");
        }
        ConfigCommand::Rewrite => match rewrite(&conn.shared) {
            Ok(()) => write::write_simple(out, b"OK"),
            Err(message) => write::write_error(out, message.as_bytes()),
        },
        ConfigCommand::Help => container_help("config", protocol, out),
    }
}

/// Applies the Redis parameters of the configuration (`resp.redis_config`) as the server
/// starts; those Quiver sets with keys of its own are refused, naming the key.
pub(crate) fn apply_start_params(
    shared: &RespShared,
    entries: &[(String, String)],
) -> Result<(), String> {
    let mut changes = Vec::with_capacity(entries.len());
    for (name, value) in entries {
        // Checked when read: a known parameter that no key of Quiver's sets.
        let param = redis_config::find(name.as_bytes()).expect("checked when read");
        changes.push((redis_config::primary(param), value.clone()));
    }
    apply_all(shared, changes).map_err(|(name, reason)| format!("{name}: {reason}"))
}

/// CONFIG REWRITE: the parameters set since the start (by the file or CONFIG SET), with
/// their current values, written as the file's `[resp.redis_config]` table; the rest
/// of the file is kept line for line. The new file replaces the old one atomically.
fn rewrite(shared: &RespShared) -> Result<(), String> {
    let Some(path) = shared.config_file.get() else {
        return Err("ERR The server is running without a config file".to_owned());
    };
    let failed = |error: &dyn std::fmt::Display| format!("ERR Rewriting config file: {error}");
    let text = std::fs::read_to_string(path).map_err(|e| failed(&e))?;
    let lines: Vec<String> = shared
        .stored_params
        .touched()
        .into_iter()
        .filter_map(|name| redis_config::find(name.as_bytes()))
        .map(|param| {
            let value = toml::Value::String(param_value(shared, param));
            format!("{} = {value}", param.name)
        })
        .collect();
    let rewritten = replace_table(&text, "resp.redis_config", &lines);
    if rewritten.parse::<toml::Table>().is_err() {
        return Err(failed(&format!(
            "{} sets resp.redis_config other than as a [resp.redis_config] table",
            path.display()
        )));
    }
    replace_file(path, rewritten.as_bytes()).map_err(|e| failed(&e))
}

/// Replaces the file at `path` with `content`: a temporary file beside it, fsynced,
/// renamed over it, then the directory fsynced, so a crash leaves the old file or the
/// new one.
pub(super) fn replace_file(path: &std::path::Path, content: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(content)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    std::fs::File::open(dir)?.sync_all()
}

/// `text` with the body of the TOML table `[name]` replaced by `lines` (the table
/// appended when the file has none).
fn replace_table(text: &str, name: &str, lines: &[String]) -> String {
    let header = format!("[{name}]");
    let mut out = String::with_capacity(text.len() + 64);
    let mut inside = false;
    let mut found = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed == header {
            inside = true;
            found = true;
            out.push_str(line);
            out.push('\n');
            for entry in lines {
                out.push_str(entry);
                out.push('\n');
            }
            continue;
        }
        if inside && trimmed.starts_with('[') {
            inside = false;
            out.push('\n');
        }
        if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !found {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&header);
        out.push('\n');
        for entry in lines {
            out.push_str(entry);
            out.push('\n');
        }
    }
    out
}

/// CONFIG GET: the parameters matching any pattern (a glob over the names, any case,
/// hidden ones left out; or a name, shown as asked), each once.
fn config_get(conn: &Connection, patterns: &[Bytes]) -> Reply {
    let mut shown: Vec<(&'static str, Reply)> = Vec::new();
    for pattern in patterns {
        if !redis_config::is_glob(pattern) {
            if let Some(param) = redis_config::find(pattern)
                && !shown.iter().any(|(name, _)| *name == param.name)
            {
                shown.push((param.name, Reply::bulk(pattern.clone())));
            }
            continue;
        }
        let lower = pattern.to_ascii_lowercase();
        for param in PARAMS {
            if param.flags & HIDDEN == 0
                && quiver_core::cache::glob_match(&lower, param.name.as_bytes())
                && !shown.iter().any(|(name, _)| *name == param.name)
            {
                shown.push((param.name, Reply::bulk_static(param.name)));
            }
        }
    }
    Reply::Map(
        shown
            .into_iter()
            .map(|(name, label)| {
                let param = redis_config::find(name.as_bytes()).expect("listed above");
                (label, Reply::bulk(param_value(&conn.shared, param)))
            })
            .collect(),
    )
}

/// CONFIG SET: every pair checked as Redis does (names first, then values), then
/// applied all together or not at all, with Redis's error texts.
fn config_set(conn: &mut Connection, pairs: &[(Bytes, Bytes)]) -> Result<(), String> {
    let failed = |name: &str, reason: &str| {
        format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")
    };
    let mut params: Vec<&'static Param> = Vec::with_capacity(pairs.len());
    for (name, _) in pairs {
        let typed = String::from_utf8_lossy(name);
        let Some(param) = redis_config::find(name) else {
            return Err(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{typed}'"
            ));
        };
        if param.flags & IMMUTABLE != 0 {
            return Err(failed(&typed, "can't set immutable config"));
        }
        if param.flags & PROTECTED != 0 {
            return Err(failed(&typed, "can't set protected config"));
        }
        if params.iter().any(|p| p.name == param.name) {
            return Err(failed(&typed, "duplicate parameter"));
        }
        params.push(param);
    }
    let mut changes = Vec::with_capacity(pairs.len());
    for (param, (_, value)) in params.iter().zip(pairs) {
        let value =
            redis_config::check(param, value).map_err(|reason| failed(param.name, &reason))?;
        changes.push((redis_config::primary(param), value));
    }
    apply_all(&conn.shared, changes).map_err(|(name, reason)| {
        // Redis names the parameter as the table does (an alias as given).
        let shown = params
            .iter()
            .find(|p| redis_config::primary(p) == name)
            .map_or(name, |p| p.name);
        failed(shown, &reason)
    })
}

/// `client-output-buffer-limit` as Redis shows it. Normal clients have one hard limit,
/// `resp.max_output_buffer`; there are no replicas.
fn output_limits(shared: &RespShared) -> String {
    let pubsub = shared.pubsub.limits();
    format!(
        "normal {} 0 0 slave 0 0 0 pubsub {} {} {}",
        shared.settings.max_output_buffer_bytes,
        pubsub.hard_bytes,
        pubsub.soft_bytes,
        pubsub.soft_period.as_secs()
    )
}
