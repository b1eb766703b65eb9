//! The raw layer: every key's text value and its source, gathered from the
//! built-in defaults, the profile, the TOML file, the environment and flags, in
//! that order of precedence. No value is interpreted here beyond its key name.

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::keys::{self, KEYS, Key, PROFILE_KEY};
use super::profile::Profile;
use super::source::Source;

/// Env var that names the config file when `--config` is not given.
pub const CONFIG_FILE_ENV: &str = "QUIVER_CONFIG";

/// What the process was started with; passed in so loading never reads globals.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    /// `--config FILE`, if given (wins over `QUIVER_CONFIG`).
    pub config_file: Option<PathBuf>,
    /// The process environment; only `QUIVER_*` variables are looked at.
    pub env: Vec<(String, String)>,
    /// Key flags from the command line: (key name, value).
    pub flags: Vec<(&'static str, String)>,
}

/// One key's text value and where it came from.
#[derive(Debug, Clone)]
pub struct RawEntry {
    pub key: &'static Key,
    pub text: String,
    pub source: Source,
}

/// Every key with its text value, in registry order.
#[derive(Debug, Clone)]
pub struct RawConfig {
    pub entries: Vec<RawEntry>,
}

impl RawConfig {
    /// Gathers all layers. Unknown keys in the file or environment are errors.
    pub fn gather(inputs: &Inputs) -> Result<RawConfig, ConfigError> {
        let mut raw = RawConfig {
            entries: KEYS
                .iter()
                .map(|key| RawEntry {
                    key,
                    text: key.default.to_owned(),
                    source: Source::Default,
                })
                .collect(),
        };
        if let Some(path) = config_file(inputs) {
            for (name, text) in read_file(&path)? {
                raw.set(&name, text, Source::File(path.clone()))?;
            }
        }
        for (var, text) in &inputs.env {
            if let Some(key) = key_for_env(var)? {
                raw.set(key.name, text.clone(), Source::Env(var.clone()))?;
            }
        }
        for (name, text) in &inputs.flags {
            let key = keys::find(name).expect("flags are built from the key registry");
            raw.set(name, text.clone(), Source::Flag(key.flag()))?;
        }
        raw.apply_profile()?;
        Ok(raw)
    }

    /// The entry of a key by name.
    pub fn entry(&self, name: &str) -> &RawEntry {
        self.entries
            .iter()
            .find(|entry| entry.key.name == name)
            .expect("every registry key has an entry")
    }

    fn set(&mut self, name: &str, text: String, source: Source) -> Result<(), ConfigError> {
        let Some(entry) = self.entries.iter_mut().find(|entry| entry.key.name == name) else {
            return Err(ConfigError::UnknownKey {
                key: name.to_owned(),
                origin: source,
                suggestion: keys::nearest(name).map(str::to_owned),
            });
        };
        entry.text = text;
        entry.source = source;
        Ok(())
    }

    /// Replaces values still at their default with the chosen profile's values.
    fn apply_profile(&mut self) -> Result<(), ConfigError> {
        let chosen = self.entry(PROFILE_KEY).clone();
        let profile: Profile = chosen
            .text
            .parse()
            .map_err(|()| ConfigError::InvalidValue {
                key: PROFILE_KEY,
                origin: chosen.source.clone(),
                value: chosen.text.clone(),
                allowed: "one of balanced, latency, throughput, low-memory".to_owned(),
            })?;
        for entry in &mut self.entries {
            if entry.source != Source::Default {
                continue;
            }
            if let Some(value) = entry.key.profile_value(profile) {
                entry.text = value.to_owned();
                entry.source = Source::Profile(profile);
            }
        }
        Ok(())
    }
}

pub(crate) fn config_file(inputs: &Inputs) -> Option<PathBuf> {
    inputs.config_file.clone().or_else(|| {
        inputs
            .env
            .iter()
            // Empty is unset, as for a shell's `QUIVER_CONFIG=`.
            .find(|(var, path)| var == CONFIG_FILE_ENV && !path.is_empty())
            .map(|(_, path)| PathBuf::from(path))
    })
}

/// Maps `QUIVER_HTTP_ADDR` to its key; other variables are not Quiver's.
fn key_for_env(var: &str) -> Result<Option<&'static Key>, ConfigError> {
    if !var.starts_with("QUIVER_") || var == CONFIG_FILE_ENV {
        return Ok(None);
    }
    if let Some(key) = KEYS.iter().find(|key| key.env_var() == var) {
        return Ok(Some(key));
    }
    let as_key = var["QUIVER_".len()..]
        .to_ascii_lowercase()
        .replacen('_', ".", 1);
    Err(ConfigError::UnknownEnvVar {
        var: var.to_owned(),
        suggestion: keys::nearest(&as_key)
            .and_then(keys::find)
            .map(Key::env_var),
    })
}

/// Reads a TOML file into `(dotted key, text value)` pairs.
fn read_file(path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| ConfigError::FileRead {
        path: path.to_owned(),
        error,
    })?;
    let table: toml::Table =
        text.parse()
            .map_err(|error: toml::de::Error| ConfigError::FileSyntax {
                path: path.to_owned(),
                message: match error.span() {
                    Some(span) => {
                        let before = &text[..span.start.min(text.len())];
                        let line = before.matches('\n').count() + 1;
                        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                        format!(
                            "line {line}, column {column}: {}",
                            error.message().trim_end()
                        )
                    }
                    None => error.message().trim_end().to_owned(),
                },
            })?;
    let mut pairs = Vec::new();
    flatten(path, "", &table, &mut pairs)?;
    Ok(pairs)
}

/// The file's array of rule tables as the rules' text form.
fn rules_from_tables(
    path: &Path,
    dotted: &str,
    items: &[toml::Value],
) -> Result<String, ConfigError> {
    let key = keys::find(dotted).expect("checked by the caller");
    let mut rules = Vec::with_capacity(items.len());
    for item in items {
        let rule = match item {
            toml::Value::Table(table) => super::rules::from_table(table),
            other => Err(format!("{other} is not a table")),
        };
        rules.push(rule.map_err(|message| ConfigError::InvalidValue {
            key: key.name,
            origin: Source::File(path.to_owned()),
            value: item.to_string(),
            allowed: format!("{}: {message}", super::rules::HELP),
        })?);
    }
    Ok(rules.join("; "))
}

fn flatten(
    path: &Path,
    prefix: &str,
    table: &toml::Table,
    pairs: &mut Vec<(String, String)>,
) -> Result<(), ConfigError> {
    for (name, value) in table {
        let dotted = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let text = match value {
            toml::Value::Table(inner)
                if keys::find(&dotted).is_some_and(|key| key.kind == keys::Kind::RedisParams) =>
            {
                crate::resp::redis_config::entries_from_table(inner).map_err(|allowed| {
                    ConfigError::InvalidValue {
                        key: keys::find(&dotted).expect("checked above").name,
                        origin: Source::File(path.to_owned()),
                        value: value.to_string(),
                        allowed,
                    }
                })?
            }
            toml::Value::Table(inner) => {
                flatten(path, &dotted, inner, pairs)?;
                continue;
            }
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(number) => number.to_string(),
            toml::Value::Boolean(flag) => flag.to_string(),
            toml::Value::Array(items)
                if keys::find(&dotted).is_some_and(|key| key.kind == keys::Kind::DurableRules) =>
            {
                rules_from_tables(path, &dotted, items)?
            }
            other => {
                let Some(key) = keys::find(&dotted) else {
                    return Err(ConfigError::UnknownKey {
                        key: dotted.clone(),
                        origin: Source::File(path.to_owned()),
                        suggestion: keys::nearest(&dotted).map(str::to_owned),
                    });
                };
                return Err(ConfigError::InvalidValue {
                    key: key.name,
                    origin: Source::File(path.to_owned()),
                    value: other.to_string(),
                    allowed: format!(
                        "a string, a whole number or a boolean, as `quiver config` prints it (the default is {:?})",
                        key.default
                    ),
                });
            }
        };
        pairs.push((dotted, text));
    }
    Ok(())
}
