//! Where a configuration value came from, lowest precedence first.

use std::fmt;
use std::path::PathBuf;

use super::profile::Profile;

/// The origin of one effective value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Built into Quiver.
    Default,
    /// Set by the chosen profile.
    Profile(Profile),
    /// Read from a TOML file.
    File(PathBuf),
    /// Read from an environment variable.
    Env(String),
    /// Given as a command-line flag (without the leading `--`).
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::Profile(profile) => write!(f, "profile {profile}"),
            Source::File(path) => write!(f, "file {}", path.display()),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(flag) => write!(f, "flag --{flag}"),
        }
    }
}
