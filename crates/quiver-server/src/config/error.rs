//! Configuration errors: each names the key, where its value came from, the
//! value, and what is allowed, so one line tells the user what to fix.

use std::io;
use std::path::PathBuf;

use super::source::Source;

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value that does not parse or is out of range.
    #[error("invalid value for `{key}` (from {origin}): {value:?}; expected {allowed}")]
    InvalidValue {
        key: &'static str,
        origin: Source,
        value: String,
        allowed: String,
    },
    /// A key no version of Quiver knows, in the file or the environment.
    #[error("unknown key `{key}` in {origin}{}", suggestion_text(.suggestion))]
    UnknownKey {
        key: String,
        origin: Source,
        suggestion: Option<String>,
    },
    /// A `QUIVER_*` environment variable that names no key.
    #[error("unknown environment variable {var}{}", suggestion_text(.suggestion))]
    UnknownEnvVar {
        var: String,
        suggestion: Option<String>,
    },
    /// The config file could not be read.
    #[error("cannot read config file {}: {error}", .path.display())]
    FileRead { path: PathBuf, error: io::Error },
    /// The config file is not valid TOML.
    #[error("config file {} is not valid TOML: {message}", .path.display())]
    FileSyntax { path: PathBuf, message: String },
}

fn suggestion_text(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(name) => format!("; did you mean `{name}`?"),
        None => "; `quiver config` lists every key".to_owned(),
    }
}
