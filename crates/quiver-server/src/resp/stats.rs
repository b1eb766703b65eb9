//! Per-command counters for `INFO commandstats`: one slot per command and
//! subcommand of the table, found by binary search on the name, updated with
//! relaxed atomics so counting never takes a lock.

use std::sync::atomic::{AtomicU64, Ordering};

use quiver_resp::table::{self, CommandSpec};

/// Calls, time and failures of one command.
#[derive(Debug, Default)]
pub struct Slot {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    pub rejected_calls: AtomicU64,
    pub failed_calls: AtomicU64,
}

/// Every command's slot, sorted by full name (`client|list` after `client`).
#[derive(Debug)]
pub struct CommandStats {
    names: Vec<&'static str>,
    slots: Vec<Slot>,
    pub total_commands: AtomicU64,
    pub total_connections: AtomicU64,
}

impl CommandStats {
    pub fn new() -> CommandStats {
        let mut names: Vec<&'static str> = table::commands()
            .iter()
            .flat_map(|spec| {
                std::iter::once(spec.name).chain(spec.subcommands.iter().map(|sub| sub.name))
            })
            .collect();
        names.sort_unstable();
        let slots = names.iter().map(|_| Slot::default()).collect();
        CommandStats {
            names,
            slots,
            total_commands: AtomicU64::new(0),
            total_connections: AtomicU64::new(0),
        }
    }

    /// The slot of `spec`.
    pub fn slot(&self, spec: &CommandSpec) -> Option<&Slot> {
        self.names
            .binary_search(&spec.name)
            .ok()
            .map(|index| &self.slots[index])
    }

    /// Every slot that was used, with its command's name.
    pub fn used(&self) -> impl Iterator<Item = (&'static str, &Slot)> + '_ {
        self.names
            .iter()
            .copied()
            .zip(&self.slots)
            .filter(|(_, slot)| {
                slot.calls.load(Ordering::Relaxed) + slot.rejected_calls.load(Ordering::Relaxed) > 0
            })
    }

    /// Zeroes every counter (`CONFIG RESETSTAT`).
    pub fn reset(&self) {
        for slot in &self.slots {
            for counter in [
                &slot.calls,
                &slot.usec,
                &slot.rejected_calls,
                &slot.failed_calls,
            ] {
                counter.store(0, Ordering::Relaxed);
            }
        }
        self.total_commands.store(0, Ordering::Relaxed);
        self.total_connections.store(0, Ordering::Relaxed);
    }
}
