//! Interprets raw text by each key's kind into a typed value with a canonical
//! text form, or an error naming the key, the source, the value and what is
//! allowed.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::error::ConfigError;
use super::keys::Kind;
use super::raw::RawEntry;
use super::value::{self, DURATION_HELP, SIZE_HELP};

/// A checked value of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A choice word or a log filter.
    Text(String),
    Path(PathBuf),
    Addr(SocketAddr),
    Integer(u64),
    /// Bytes.
    Size(u64),
    Duration(Duration),
    Bool(bool),
}

impl Value {
    /// Checks `entry.text` against `entry.key.kind`.
    pub fn check(entry: &RawEntry) -> Result<Value, ConfigError> {
        let text = entry.text.trim();
        let invalid = |allowed: String| ConfigError::InvalidValue {
            key: entry.key.name,
            origin: entry.source.clone(),
            value: entry.text.clone(),
            allowed,
        };
        match entry.key.kind {
            Kind::Choice(words) => words
                .iter()
                .find(|word| **word == text)
                .map(|word| Value::Text((*word).to_owned()))
                .ok_or_else(|| invalid(format!("one of {}", words.join(", ")))),
            Kind::Path if text.is_empty() => Err(invalid("a non-empty path".to_owned())),
            Kind::Path => Ok(Value::Path(PathBuf::from(text))),
            Kind::SocketAddr => text.parse().map(Value::Addr).map_err(|_| {
                invalid("a socket address with a numeric IP, e.g. 127.0.0.1:8080 or [::1]:0".to_owned())
            }),
            Kind::Integer { min, max } => text
                .parse::<u64>()
                .ok()
                .filter(|number| (min..=max).contains(number))
                .map(Value::Integer)
                .ok_or_else(|| invalid(format!("a whole number from {min} to {max}"))),
            Kind::Threads { .. } if text == "auto" => Ok(Value::Text("auto".to_owned())),
            Kind::Threads { max } => text
                .parse::<u64>()
                .ok()
                .filter(|number| (1..=max).contains(number))
                .map(Value::Integer)
                .ok_or_else(|| invalid(format!("auto, or a whole number from 1 to {max}"))),
            Kind::Size { min, max } => value::parse_size(text)
                .filter(|bytes| (min..=max).contains(bytes))
                .map(Value::Size)
                .ok_or_else(|| {
                    let range = if min == 0 {
                        format!("at most {}", value::render_size(max))
                    } else {
                        format!(
                            "from {} to {}",
                            value::render_size(min),
                            value::render_size(max)
                        )
                    };
                    invalid(format!("{SIZE_HELP}, {range}"))
                }),
            Kind::Duration { min, max } => value::parse_duration(text)
                .filter(|duration| (min..=max).contains(duration))
                .map(Value::Duration)
                .ok_or_else(|| {
                    let range = if min.is_zero() {
                        format!("(0 alone is allowed), at most {}", value::render_duration(max))
                    } else {
                        format!(
                            "from {} to {}",
                            value::render_duration(min),
                            value::render_duration(max)
                        )
                    };
                    let sep = if min.is_zero() { " " } else { ", " };
                    invalid(format!("{DURATION_HELP}{sep}{range}"))
                }),
            Kind::Text { max_len } if entry.text.len() > max_len => {
                Err(invalid(format!("text of at most {max_len} bytes")))
            }
            Kind::Text { .. } => Ok(Value::Text(entry.text.clone())),
            Kind::KeyspaceEvents => quiver_core::cache::EventClasses::parse(text)
                .map(|classes| Value::Text(classes.to_string()))
                .ok_or_else(|| {
                    invalid("the letters of Redis notify-keyspace-events: K E g $ l s h z x e t d n m A".to_owned())
                }),
            Kind::Bool => value::parse_bool(text)
                .map(Value::Bool)
                .ok_or_else(|| invalid("true or false".to_owned())),
            Kind::RedisParams => crate::resp::redis_config::parse_entries(text)
                .map(|entries| Value::Text(crate::resp::redis_config::render_entries(&entries)))
                .map_err(invalid),
            Kind::DurableRules => super::rules::parse(text)
                .map(|rules| Value::Text(super::rules::render(&rules)))
                .map_err(|message| invalid(format!("{}: {message}", super::rules::HELP))),
            Kind::LogFilter => tracing_subscriber::EnvFilter::builder()
                .parse(text)
                .map(|_| Value::Text(text.to_owned()))
                .map_err(|error| {
                    invalid(format!(
                        "a level (error, warn, info, debug, trace) or tracing directives such as quiver=debug,warn ({error})"
                    ))
                }),
        }
    }
}

impl fmt::Display for Value {
    /// The canonical text form, which `check` reads back to the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Text(text) => f.write_str(text),
            Value::Path(path) => write!(f, "{}", path.display()),
            Value::Addr(addr) => write!(f, "{addr}"),
            Value::Integer(number) => write!(f, "{number}"),
            Value::Size(bytes) => f.write_str(&value::render_size(*bytes)),
            Value::Duration(duration) => f.write_str(&value::render_duration(*duration)),
            Value::Bool(flag) => write!(f, "{flag}"),
        }
    }
}
