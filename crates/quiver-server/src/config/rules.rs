//! `streams.durable`: rules that make streams durable by name.
//!
//! Text form (environment, flags, and a string in the file): rules separated by `;`, each a
//! stream pattern followed by `key=value` settings:
//!
//! ```text
//! acme/orders/> durability=sync max_age=168h; acme/audit/> keep_unacked=true
//! ```
//!
//! In the file, the same as an array of tables, each with a `pattern` and the settings:
//!
//! ```toml
//! [[streams.durable]]
//! pattern = "acme/orders/>"
//! durability = "sync"
//! max_age = "168h"
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use quiver_core::streams::Pattern;
use quiver_core::streams::durable::{Durability, durability_name, parse_durability};

use super::value;

/// What a rule accepts, for error messages.
pub const HELP: &str = "rules `PATTERN [durability=buffered|os|interval:MS|sync] [max_age=DURATION] [max_bytes=SIZE] [max_messages=N] [keep_unacked=BOOL] [dedupe_window=DURATION]` separated by `;`";

/// One rule as configured: settings left out take their defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub pattern: String,
    pub durability: Durability,
    pub max_age: Option<Duration>,
    pub max_bytes: Option<u64>,
    pub max_messages: Option<u64>,
    pub keep_unacked: bool,
    /// `None`: `streams.dedupe_window`.
    pub dedupe_window: Option<Duration>,
}

/// Parses the text form.
pub fn parse(text: &str) -> Result<Vec<RuleSpec>, String> {
    text.split(';')
        .map(str::trim)
        .filter(|rule| !rule.is_empty())
        .map(parse_rule)
        .collect()
}

fn parse_rule(text: &str) -> Result<RuleSpec, String> {
    let mut words = text.split_whitespace();
    let pattern = words.next().expect("a rule is not empty");
    Pattern::new(pattern).map_err(|error| format!("rule {text:?}: {error}"))?;
    let mut rule = RuleSpec {
        pattern: pattern.to_owned(),
        durability: Durability::Os,
        max_age: None,
        max_bytes: None,
        max_messages: None,
        keep_unacked: false,
        dedupe_window: None,
    };
    for setting in words {
        let (key, value) = setting
            .split_once('=')
            .ok_or_else(|| format!("rule {text:?}: {setting:?} is not key=value"))?;
        let bad = |what: &str| format!("rule {text:?}: {key}={value:?} is not {what}");
        match key {
            "durability" => {
                rule.durability = parse_durability(value).map_err(|error| error.to_string())?;
            }
            "max_age" => {
                rule.max_age = Some(
                    value::parse_duration(value)
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| bad("a duration above 0"))?,
                );
            }
            "max_bytes" => {
                rule.max_bytes = Some(
                    value::parse_size(value)
                        .filter(|b| *b > 0)
                        .ok_or_else(|| bad("a size above 0"))?,
                );
            }
            "max_messages" => {
                rule.max_messages = Some(
                    value
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| bad("a whole number above 0"))?,
                );
            }
            "keep_unacked" => {
                rule.keep_unacked = value::parse_bool(value).ok_or_else(|| bad("true or false"))?;
            }
            "dedupe_window" => {
                rule.dedupe_window = Some(
                    value::parse_duration(value)
                        .filter(|d| *d <= Duration::from_secs(24 * 3600))
                        .ok_or_else(|| bad("a duration of at most 24h"))?,
                );
            }
            other => return Err(format!("rule {text:?}: unknown setting {other:?}")),
        }
    }
    Ok(rule)
}

/// The canonical text form, which [`parse`] reads back to the same rules.
pub fn render(rules: &[RuleSpec]) -> String {
    let mut out = String::new();
    for (i, rule) in rules.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        let _ = write!(
            out,
            "{} durability={}",
            rule.pattern,
            durability_name(rule.durability)
        );
        if let Some(age) = rule.max_age {
            let _ = write!(out, " max_age={}", value::render_duration(age));
        }
        if let Some(bytes) = rule.max_bytes {
            let _ = write!(out, " max_bytes={}", value::render_size(bytes));
        }
        if let Some(count) = rule.max_messages {
            let _ = write!(out, " max_messages={count}");
        }
        if rule.keep_unacked {
            out.push_str(" keep_unacked=true");
        }
        if let Some(window) = rule.dedupe_window {
            let _ = write!(out, " dedupe_window={}", value::render_duration(window));
        }
    }
    out
}

/// One table of the file's `[[streams.durable]]` array as a rule in the text form.
pub fn from_table(table: &toml::Table) -> Result<String, String> {
    let mut pattern = None;
    let mut settings = Vec::new();
    for (key, value) in table {
        let text = match value {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(number) => number.to_string(),
            toml::Value::Boolean(flag) => flag.to_string(),
            other => {
                return Err(format!(
                    "{key} = {other} is not a string, integer or boolean"
                ));
            }
        };
        if text.contains([';', '=']) || text.split_whitespace().count() != 1 {
            return Err(format!("{key} = {text:?} holds a space, `;` or `=`"));
        }
        if key == "pattern" {
            pattern = Some(text);
        } else {
            settings.push(format!("{key}={text}"));
        }
    }
    let pattern = pattern.ok_or("a rule table needs a `pattern`")?;
    Ok(std::iter::once(pattern)
        .chain(settings)
        .collect::<Vec<_>>()
        .join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_render_and_refuse_nonsense() {
        let rules = parse(
            "acme/orders/> durability=sync max_age=7h max_bytes=1GiB; acme/audit/* keep_unacked=yes dedupe_window=0",
        )
        .unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].durability, Durability::Sync);
        assert_eq!(rules[0].max_bytes, Some(1 << 30));
        assert!(rules[1].keep_unacked);
        assert_eq!(rules[1].dedupe_window, Some(Duration::ZERO));
        let text = render(&rules);
        assert_eq!(parse(&text).unwrap(), rules);
        assert!(parse("").unwrap().is_empty());
        for bad in [
            "acme/*/x",
            "a/b/c durability=fsync",
            "a/b/c max_age=0s",
            "a/b/c speed=fast",
            "a/b/c max_messages=lots",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let mut table = toml::Table::new();
        table.insert("pattern".into(), toml::Value::String("acme/x/>".into()));
        table.insert("max_messages".into(), toml::Value::Integer(10));
        let line = from_table(&table).unwrap();
        assert_eq!(parse(&line).unwrap()[0].max_messages, Some(10));
    }
}
