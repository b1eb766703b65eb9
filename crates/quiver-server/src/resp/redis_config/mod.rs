//! Redis's configuration parameters for CONFIG GET and CONFIG SET: every parameter of
//! Redis 7.0 ([`params::PARAMS`]) is known, its values are checked with Redis's rules
//! and error texts and shown in Redis's canonical form. Parameters that act on Quiver
//! are read from and applied to the node (see the server family's CONFIG); the rest
//! are kept here and reported, without effect.

pub(crate) mod params;

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use params::{Kind, PARAMS, Param};

/// The alias names: each shares its value with the primary its entry names.
const ALIASES: [&str; 19] = [
    "slaveof",
    "slave-priority",
    "slave-read-only",
    "slave-serve-stale-data",
    "slave-lazy-flush",
    "slave-ignore-maxmemory",
    "slave-announce-ip",
    "slave-announce-port",
    "cluster-slave-no-failover",
    "cluster-slave-validity-factor",
    "repl-ping-slave-period",
    "min-slaves-to-write",
    "min-slaves-max-lag",
    "lua-time-limit",
    "list-max-ziplist-size",
    "hash-max-ziplist-entries",
    "hash-max-ziplist-value",
    "zset-max-ziplist-entries",
    "zset-max-ziplist-value",
];

/// Memory parameters whose C type is `unsigned long long`: up to `u64::MAX`.
const UNSIGNED_64: [&str; 2] = ["maxmemory", "cluster-link-sendbuf-limit"];

/// The parameter named `name` (any case).
pub(crate) fn find(name: &[u8]) -> Option<&'static Param> {
    PARAMS
        .iter()
        .find(|param| param.name.as_bytes().eq_ignore_ascii_case(name))
}

/// The name a parameter's value is kept under: the primary's for an alias.
pub(crate) fn primary(param: &Param) -> &'static str {
    match param.alias {
        Some(primary) if ALIASES.contains(&param.name) => primary,
        _ => param.name,
    }
}

/// Whether `pattern` has glob characters (otherwise CONFIG GET matches it exactly and
/// shows the name as it was asked).
pub(crate) fn is_glob(pattern: &[u8]) -> bool {
    pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'['))
}

/// Parameters Quiver sets with keys of its own, read when it starts: the key to use.
pub(crate) const QUIVER_KEYS: [(&str, &str); 9] = [
    ("appendonly", "cache.appendonly"),
    ("appendfsync", "cache.appendfsync"),
    ("databases", "cache.databases"),
    ("maxclients", "resp.max_connections"),
    ("timeout", "resp.idle_timeout"),
    ("proto-max-bulk-len", "resp.max_bulk_len"),
    ("client-query-buffer-limit", "resp.max_query_buffer"),
    ("port", "resp.addr"),
    ("bind", "resp.addr"),
];

/// The Quiver key that sets `name`, if it is one of [`QUIVER_KEYS`].
pub(crate) fn quiver_key(name: &str) -> Option<&'static str> {
    QUIVER_KEYS
        .iter()
        .find(|(redis, _)| *redis == name)
        .map(|(_, key)| *key)
}

/// The values of the parameters without effect in Quiver, as CONFIG SET left them, and
/// the names set since the start (by the configuration file or CONFIG SET), which
/// CONFIG REWRITE writes.
#[derive(Debug, Default)]
pub struct StoredParams {
    values: Mutex<HashMap<&'static str, String>>,
    touched: Mutex<BTreeSet<&'static str>>,
}

impl StoredParams {
    /// The value of the parameter kept under `primary`: as set, or its default.
    pub(crate) fn get(&self, primary: &'static str) -> String {
        let values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        match values.get(primary) {
            Some(value) => value.clone(),
            None => find(primary.as_bytes()).map_or_else(String::new, |p| p.default.to_owned()),
        }
    }

    /// Notes that the parameter kept under `primary` was set.
    pub(crate) fn touch(&self, primary: &'static str) {
        self.touched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(primary);
    }

    /// The parameters set since the start, by name.
    pub(crate) fn touched(&self) -> Vec<&'static str> {
        let touched = self.touched.lock().unwrap_or_else(|p| p.into_inner());
        touched.iter().copied().collect()
    }

    /// Keeps `value` for the parameter kept under `primary`.
    pub(crate) fn set(&self, primary: &'static str, value: String) {
        self.values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(primary, value);
    }
}

/// Reads `name value; name value` (a name, then its value up to the `;`): each name a
/// Redis parameter, each value checked; the result in canonical form.
pub(crate) fn parse_entries(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut entries: Vec<(String, String)> = Vec::new();
    for item in text
        .split(';')
        .map(str::trim)
        .filter(|item| !item.is_empty())
    {
        let (name, value) = item.split_once(' ').unwrap_or((item, ""));
        let param = find(name.as_bytes()).ok_or_else(|| {
            format!("`name value` pairs separated by `;`, each name a Redis 7.0 configuration parameter (unknown: {name:?})")
        })?;
        if let Some(key) = quiver_key(primary(param)) {
            return Err(format!(
                "a parameter Quiver has no key of its own for (set {name} with {key})"
            ));
        }
        let value = value.trim();
        let shown = check(param, value.as_bytes()).map_err(|reason| {
            format!("a valid value for {}: {reason} (got {value:?})", param.name)
        })?;
        // What is given is kept as given when it means the same (event letters).
        let kept = if param.name == "notify-keyspace-events" {
            value.to_owned()
        } else {
            shown
        };
        entries.retain(|(n, _)| n != param.name);
        entries.push((param.name.to_owned(), kept));
    }
    Ok(entries)
}

/// The canonical text form [`parse_entries`] reads back.
pub(crate) fn render_entries(entries: &[(String, String)]) -> String {
    entries
        .iter()
        .map(|(name, value)| {
            if value.is_empty() {
                name.clone()
            } else {
                format!("{name} {value}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The file's `[resp.redis_config]` table as the text form (strings, integers, and
/// booleans as yes/no).
pub(crate) fn entries_from_table(table: &toml::Table) -> Result<String, String> {
    let mut items = Vec::with_capacity(table.len());
    for (name, value) in table {
        let value = match value {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(number) => number.to_string(),
            toml::Value::Boolean(flag) => if *flag { "yes" } else { "no" }.to_owned(),
            other => {
                return Err(format!(
                    "a string, an integer or a boolean for {name} (got {other})"
                ));
            }
        };
        if value.contains(';') {
            return Err(format!("a value without `;` for {name}"));
        }
        items.push(format!("{name} {value}"));
    }
    let text = items.join("; ");
    parse_entries(&text)?;
    Ok(text)
}

/// Checks `value` for `param` as Redis does and returns it in the form CONFIG GET
/// shows, or the reason Redis gives (the text after `- ` in its error).
pub(crate) fn check(param: &Param, value: &[u8]) -> Result<String, String> {
    let text = std::str::from_utf8(value).map_err(|_| reason_for(param))?;
    match &param.kind {
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "yes" => Ok("yes".to_owned()),
            "no" => Ok("no".to_owned()),
            _ => Err("argument must be 'yes' or 'no'".to_owned()),
        },
        Kind::Int {
            min,
            max,
            memory,
            percent,
            octal,
        } => check_int(param, text, *min, *max, *memory, *percent, *octal),
        Kind::Enum { values, multi } => {
            let chosen = check_enum(text, values, *multi)?;
            let words: Vec<&str> = chosen.split(' ').collect();
            if param.name.starts_with("shutdown-on-sig")
                && words.contains(&"save")
                && words.contains(&"nosave")
            {
                return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
            }
            Ok(chosen)
        }
        Kind::Str => check_text(param.name, text),
        Kind::Special => check_special(param.name, text),
    }
}

/// The reason for a value that is not text (Redis reads bytes; these never pass).
fn reason_for(param: &Param) -> String {
    match &param.kind {
        Kind::Bool => "argument must be 'yes' or 'no'".to_owned(),
        Kind::Int { memory: true, .. } => "argument must be a memory value".to_owned(),
        Kind::Int { .. } => "argument couldn't be parsed into an integer".to_owned(),
        Kind::Enum { values, .. } => enum_reason(values),
        Kind::Str | Kind::Special => "argument must be text".to_owned(),
    }
}

fn enum_reason(values: &[&str]) -> String {
    format!(
        "argument(s) must be one of the following: {}",
        values.join(", ")
    )
}

/// Redis's `string2ll`: an optional minus and digits, no leading zero, no `-0`.
pub(crate) fn strict_i64(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    canonical.then(|| text.parse().ok()).flatten()
}

/// Redis's `memtoull`: digits with an optional unit; an empty number reads as 0 and a
/// number too large saturates, as there.
pub(crate) fn memory_value(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1_000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    let number = if digits.is_empty() {
        0
    } else {
        digits.parse::<u64>().unwrap_or(u64::MAX)
    };
    Some(number.wrapping_mul(multiplier))
}

#[allow(clippy::too_many_arguments)]
fn check_int(
    param: &Param,
    text: &str,
    min: i64,
    max: i64,
    memory: bool,
    percent: bool,
    octal: bool,
) -> Result<String, String> {
    let range = |min: &dyn std::fmt::Display, max: &dyn std::fmt::Display| {
        format!("argument must be between {min} and {max} inclusive")
    };
    if octal {
        let value = u32::from_str_radix(text, 8)
            .map_err(|_| "argument couldn't be parsed as an octal number".to_owned())?;
        if i64::from(value) > max {
            return Err(range(&format!("{min:o}"), &format!("{max:o}")));
        }
        return Ok(format!("{value:o}"));
    }
    if percent && let Some(number) = text.strip_suffix('%') {
        let n = strict_i64(number)
            .filter(|n| *n >= 0)
            .ok_or_else(|| "argument must be a memory or percent value".to_owned())?;
        if n > 100 {
            return Err("percentage argument must be less or equal to 100".to_owned());
        }
        return Ok(if n == 0 {
            "0".to_owned()
        } else {
            format!("{n}%")
        });
    }
    if memory {
        let value = memory_value(text).ok_or_else(|| {
            if percent {
                "argument must be a memory or percent value".to_owned()
            } else {
                "argument must be a memory value".to_owned()
            }
        })?;
        let limit = if UNSIGNED_64.contains(&param.name) {
            u64::MAX
        } else {
            max as u64
        };
        // A percent parameter's negative minimum stands for its percentages.
        let floor = min.max(0) as u64;
        if value < floor || value > limit {
            return Err(range(&floor, &limit));
        }
        // Redis grows a replication backlog smaller than 16 KiB to that size.
        if param.name == "repl-backlog-size" {
            return Ok(value.max(16 * 1024).to_string());
        }
        return Ok(value.to_string());
    }
    let value =
        strict_i64(text).ok_or_else(|| "argument couldn't be parsed into an integer".to_owned())?;
    if value < min || value > max {
        return Err(range(&min, &max));
    }
    // Redis keeps `hz` within 1..=500 whatever it was given.
    if param.name == "hz" {
        return Ok(value.clamp(1, 500).to_string());
    }
    Ok(value.to_string())
}

fn check_enum(text: &str, values: &[&str], multi: bool) -> Result<String, String> {
    let pick = |word: &str| {
        values
            .iter()
            .position(|v| v.eq_ignore_ascii_case(word))
            .ok_or_else(|| enum_reason(values))
    };
    if !multi {
        return pick(text).map(|i| values[i].to_owned());
    }
    let mut chosen = vec![false; values.len()];
    for word in text.split(' ') {
        chosen[pick(word)?] = true;
    }
    // The first word names the empty set (`default`): shown only alone.
    let shown: Vec<&str> = values
        .iter()
        .zip(&chosen)
        .skip(1)
        .filter(|(_, on)| **on)
        .map(|(v, _)| *v)
        .collect();
    Ok(if shown.is_empty() {
        values[0].to_owned()
    } else {
        shown.join(" ")
    })
}

fn check_text(name: &str, text: &str) -> Result<String, String> {
    match name {
        "dbfilename" if text.contains('/') => {
            Err("dbfilename can't be a path, just a filename".to_owned())
        }
        "proc-title-template" if !valid_title_template(text) => {
            Err("template format is invalid or contains unknown variables".to_owned())
        }
        "cluster-announce-hostname" if text.len() >= 256 => {
            Err("Hostnames must be less than 256 characters".to_owned())
        }
        "cluster-announce-hostname"
            if !text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') =>
        {
            Err("Hostnames may only contain alphanumeric characters, hyphens or dots".to_owned())
        }
        _ => Ok(text.to_owned()),
    }
}

/// `proc-title-template`: every `{...}` a known variable, and something besides spaces shown.
fn valid_title_template(text: &str) -> bool {
    // Redis expands the template with an empty title (and no unix socket or config
    // file): it must name only known variables and leave something besides spaces.
    let mut shown = false;
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{{") {
            shown = true;
            rest = after;
        } else if let Some(after) = rest.strip_prefix('{') {
            let Some(close) = after.find('}') else {
                return false;
            };
            match &after[..close] {
                "listen-addr" | "port" | "tls-port" => shown = true,
                "title" | "server-mode" | "unixsocket" | "config-file" => {}
                _ => return false,
            }
            rest = &after[close + 1..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            shown |= c != ' ';
            rest = &rest[c.len_utf8()..];
        }
    }
    shown
}

fn check_special(name: &str, text: &str) -> Result<String, String> {
    match name {
        "save" => check_save(text),
        "client-output-buffer-limit" => check_output_limits(text),
        "oom-score-adj-values" => {
            let words: Vec<&str> = text.split(' ').collect();
            if text.is_empty() || words.len() != 3 {
                return Err("wrong number of arguments".to_owned());
            }
            for word in &words {
                if !strict_i64(word).is_some_and(|n| (-2000..=2000).contains(&n)) {
                    return Err(
                        "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
                            .to_owned(),
                    );
                }
            }
            Ok(words.join(" "))
        }
        // Kept as given: the display drops letters that `A` implies but the set keeps.
        "notify-keyspace-events" => quiver_core::cache::EventClasses::parse(text)
            .map(|_| text.to_owned())
            .ok_or_else(|| "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_owned()),
        "latency-tracking-info-percentiles" => {
            if text.is_empty() {
                return Ok(String::new());
            }
            let mut shown = Vec::new();
            for word in text.split(' ') {
                let value: f64 = word
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| {
                        "Invalid latency-tracking-info-percentiles parameters".to_owned()
                    })?;
                if !(0.0..=100.0).contains(&value) {
                    return Err(
                        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                            .to_owned(),
                    );
                }
                let fixed = format!("{value:.6}");
                shown.push(fixed.trim_end_matches('0').trim_end_matches('.').to_owned());
            }
            Ok(shown.join(" "))
        }
        "bind" => {
            let words: Vec<&str> = text.split(' ').collect();
            if words.len() > 16 {
                return Err("Too many bind addresses specified.".to_owned());
            }
            Ok(text.to_owned())
        }
        // dir, replicaof, slaveof: refused before their value is read (protected or
        // immutable); the text is kept as given.
        _ => Ok(text.to_owned()),
    }
}

/// `save`: pairs of seconds (at least 1) and changes (at least 0); empty for none.
fn check_save(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Ok(String::new());
    }
    let invalid = || "Invalid save parameters".to_owned();
    let words: Vec<&str> = text.split(' ').collect();
    if !words.len().is_multiple_of(2) {
        return Err(invalid());
    }
    let mut shown = Vec::with_capacity(words.len());
    for pair in words.chunks(2) {
        let seconds = pair[0].parse::<i64>().ok().filter(|s| *s >= 1);
        let changes = pair[1].parse::<i64>().ok().filter(|c| *c >= 0);
        let (Some(seconds), Some(changes)) = (seconds, changes) else {
            return Err(invalid());
        };
        shown.push(format!("{seconds} {changes}"));
    }
    Ok(shown.join(" "))
}

/// One class of `client-output-buffer-limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClassLimit {
    pub hard: u64,
    pub soft: u64,
    pub seconds: u64,
}

/// `client-output-buffer-limit`: groups of `class hard soft seconds`; the classes
/// given, in Redis's order (normal, slave, pubsub), as Redis's text.
pub(crate) fn parse_output_limits(text: &str) -> Result<Vec<(&'static str, ClassLimit)>, String> {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".to_owned());
    }
    let mut classes = Vec::new();
    for group in words.chunks(4) {
        let class = match group[0].to_ascii_lowercase().as_str() {
            "normal" => "normal",
            "slave" | "replica" => "slave",
            "pubsub" => "pubsub",
            _ => {
                return Err(
                    "Invalid client class specified in buffer limit configuration.".to_owned(),
                );
            }
        };
        let bad = || {
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.".to_owned()
        };
        let hard = memory_value(group[1]).ok_or_else(bad)?;
        let soft = memory_value(group[2]).ok_or_else(bad)?;
        let seconds = strict_i64(group[3])
            .and_then(|s| u64::try_from(s).ok())
            .ok_or_else(bad)?;
        classes.retain(|(name, _)| *name != class);
        classes.push((
            class,
            ClassLimit {
                hard,
                soft,
                seconds,
            },
        ));
    }
    Ok(classes)
}

fn check_output_limits(text: &str) -> Result<String, String> {
    parse_output_limits(text)?;
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_named(name: &str, value: &str) -> Result<String, String> {
        check(find(name.as_bytes()).expect("known"), value.as_bytes())
    }

    #[test]
    fn every_name_is_known_once_and_aliases_point_both_ways() {
        for param in PARAMS {
            assert_eq!(
                PARAMS.iter().filter(|p| p.name == param.name).count(),
                1,
                "{}",
                param.name
            );
            if let Some(other) = param.alias {
                assert_eq!(
                    find(other.as_bytes()).and_then(|p| p.alias),
                    Some(param.name)
                );
            }
            assert!(
                check(param, param.default.as_bytes()).is_ok()
                    || matches!(param.kind, Kind::Special),
                "default of {}",
                param.name
            );
        }
        assert_eq!(
            primary(find(b"lua-time-limit").unwrap()),
            "busy-reply-threshold"
        );
        assert_eq!(
            primary(find(b"busy-reply-threshold").unwrap()),
            "busy-reply-threshold"
        );
    }

    #[test]
    fn values_are_checked_and_shown_as_redis_does() {
        assert_eq!(
            check_named("hz", "abc"),
            Err("argument couldn't be parsed into an integer".into())
        );
        assert_eq!(
            check_named("hz", "010"),
            Err("argument couldn't be parsed into an integer".into())
        );
        assert_eq!(check_named("hz", "1000000"), Ok("500".into()));
        assert_eq!(
            check_named("hz", "-1"),
            Err("argument must be between 0 and 2147483647 inclusive".into())
        );
        assert_eq!(check_named("maxmemory", "1kb"), Ok("1024".into()));
        assert_eq!(check_named("maxmemory", ""), Ok("0".into()));
        assert_eq!(
            check_named("maxmemory", "18446744073709551616"),
            Ok("18446744073709551615".into())
        );
        assert_eq!(
            check_named("maxmemory", "1.5mb"),
            Err("argument must be a memory value".into())
        );
        assert_eq!(check_named("maxmemory-clients", "10%"), Ok("10%".into()));
        assert_eq!(
            check_named("maxmemory-clients", "101%"),
            Err("percentage argument must be less or equal to 100".into())
        );
        assert_eq!(check_named("activerehashing", "YES"), Ok("yes".into()));
        assert_eq!(
            check_named("maxmemory-policy", "ALLKEYS-LRU"),
            Ok("allkeys-lru".into())
        );
        assert_eq!(
            check_named("save", "3600 1 300 100"),
            Ok("3600 1 300 100".into())
        );
        assert_eq!(
            check_named("save", "1 2 3"),
            Err("Invalid save parameters".into())
        );
        assert_eq!(
            check_named("shutdown-on-sigterm", "nosave force now"),
            Ok("nosave now force".into())
        );
        assert_eq!(
            check_named("latency-tracking-info-percentiles", "99.99 50"),
            Ok("99.99 50".into())
        );
    }
}
