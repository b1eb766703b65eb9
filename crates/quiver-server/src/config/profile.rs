//! Profiles: named sets of defaults for the keys whose best value depends on
//! what the deployment optimizes for. A profile sits between the built-in
//! defaults and the config file, so anything set explicitly still wins.

use std::fmt;
use std::str::FromStr;

/// A named trade-off between latency, throughput and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    /// Sensible for most deployments: OS-tuned socket buffers, moderate limits.
    Balanced,
    /// Smallest queueing delay: small socket buffers so data does not wait in them.
    Latency,
    /// Most work per syscall: large socket buffers and deep accept backlogs.
    Throughput,
    /// Smallest footprint: small buffers and fewer connections.
    LowMemory,
}

impl Profile {
    /// Every profile, in the order the docs list them.
    pub const ALL: [Profile; 4] = [
        Profile::Balanced,
        Profile::Latency,
        Profile::Throughput,
        Profile::LowMemory,
    ];

    /// The name used in files, env vars and flags.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Balanced => "balanced",
            Profile::Latency => "latency",
            Profile::Throughput => "throughput",
            Profile::LowMemory => "low-memory",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        Profile::ALL
            .into_iter()
            .find(|profile| profile.name() == text.trim())
            .ok_or(())
    }
}
