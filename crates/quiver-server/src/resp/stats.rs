//! Per-command counters for `INFO commandstats`: one slot per command and
//! subcommand of the table, found by the address of its static table entry
//! in a hash map built once, updated with relaxed atomics so counting never
//! takes a lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::resp::table::{self, CommandSpec};

/// Calls, time and failures of one command.
#[derive(Debug, Default)]
pub struct Slot {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    pub rejected_calls: AtomicU64,
    pub failed_calls: AtomicU64,
    /// Calls by time taken (LATENCY HISTOGRAM): see [`crate::resp::latency::bucket`].
    pub histogram: [AtomicU64; crate::resp::latency::BUCKETS],
}

/// Every command's slot, sorted by full name (`client|list` after `client`).
#[derive(Debug)]
pub struct CommandStats {
    names: Vec<&'static str>,
    slots: Vec<Slot>,
    /// Table entry address -> index into `names` and `slots`.
    index: HashMap<usize, usize, foldhash::fast::FixedState>,
    pub total_commands: AtomicU64,
    pub total_connections: AtomicU64,
}

impl CommandStats {
    pub fn new() -> CommandStats {
        let mut specs: Vec<&'static CommandSpec> = table::commands()
            .iter()
            .flat_map(|spec| std::iter::once(*spec).chain(spec.subcommands.iter()))
            .collect();
        specs.sort_unstable_by_key(|spec| spec.name);
        let index = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| (address(spec), i))
            .collect();
        CommandStats {
            names: specs.iter().map(|spec| spec.name).collect(),
            slots: specs.iter().map(|_| Slot::default()).collect(),
            index,
            total_commands: AtomicU64::new(0),
            total_connections: AtomicU64::new(0),
        }
    }

    /// The slot of `spec`, a table entry.
    pub fn slot(&self, spec: &CommandSpec) -> Option<&Slot> {
        self.index.get(&address(spec)).map(|&i| &self.slots[i])
    }

    /// Every slot, with its command's full name.
    pub fn all(&self) -> impl Iterator<Item = (&'static str, &Slot)> + '_ {
        self.names.iter().copied().zip(&self.slots)
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
            ]
            .into_iter()
            .chain(&slot.histogram)
            {
                counter.store(0, Ordering::Relaxed);
            }
        }
        self.total_commands.store(0, Ordering::Relaxed);
        self.total_connections.store(0, Ordering::Relaxed);
    }
}

/// Table entries are statics, so their addresses identify them.
fn address(spec: &CommandSpec) -> usize {
    std::ptr::from_ref(spec) as usize
}
