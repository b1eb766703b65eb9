//! Consumer groups: a named committed offset per group, stored durably and atomically
//! (temp file, fsync, rename, directory fsync), CRC'd, never moved backwards by a commit.

use std::collections::BTreeMap;
use std::sync::PoisonError;

use crate::error::{GroupError, RecoveryError};
use crate::format::{u16_at, u32_at, u64_at};
use crate::log::Log;
use crate::storage::{Storage, read_all, write_atomic};

/// Longest group name: file-name safe on every filesystem.
pub const MAX_GROUP_NAME_BYTES: usize = 128;
const MAGIC: [u8; 4] = *b"QVLG";
const VERSION: u8 = 1;
const SUFFIX: &str = ".group";
/// Fixed bytes of a group file besides the name.
const FIXED_BYTES: usize = 28;

/// Where to move a group with `reset_group`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetTo {
    Earliest,
    Latest,
    Offset(u64),
    Timestamp(i64),
}

/// One group's durable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupState {
    /// Next offset to consume; everything below is acknowledged.
    pub next_offset: u64,
    pub generation: u64,
}

/// All groups of a log, as loaded and kept in memory.
#[derive(Debug, Default)]
pub struct Groups {
    map: BTreeMap<String, GroupState>,
}

/// Checks a group (or log) name: 1-128 bytes of `A-Z a-z 0-9 . _ -`, not starting with `.`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_GROUP_NAME_BYTES
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

fn encode(name: &str, s: GroupState) -> Vec<u8> {
    let mut b = Vec::with_capacity(FIXED_BYTES + name.len());
    b.extend_from_slice(&MAGIC);
    b.extend_from_slice(&[VERSION, 0]);
    b.extend_from_slice(&(name.len() as u16).to_le_bytes());
    b.extend_from_slice(&s.next_offset.to_le_bytes());
    b.extend_from_slice(&s.generation.to_le_bytes());
    b.extend_from_slice(name.as_bytes());
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes a group file, describing the fault if it is invalid.
pub fn decode(b: &[u8]) -> Result<(String, GroupState), String> {
    if b.len() < FIXED_BYTES || b[0..4] != MAGIC || b[4] != VERSION || b[5] != 0 {
        return Err("bad magic, version or length".to_string());
    }
    let name_len = usize::from(u16_at(b, 6));
    if b.len() != FIXED_BYTES + name_len {
        return Err(format!(
            "length {} does not match name length {name_len}",
            b.len()
        ));
    }
    let crc_at = b.len() - 4;
    let crc = crc32c::crc32c(&b[..crc_at]);
    if crc != u32_at(b, crc_at) {
        return Err(format!(
            "CRC mismatch: stored {:#010x}, computed {crc:#010x}",
            u32_at(b, crc_at)
        ));
    }
    let name =
        std::str::from_utf8(&b[24..24 + name_len]).map_err(|_| "name is not UTF-8".to_string())?;
    Ok((
        name.to_string(),
        GroupState {
            next_offset: u64_at(b, 8),
            generation: u64_at(b, 16),
        },
    ))
}

impl Groups {
    /// Loads every `<name>.group` file; a corrupt one is an error naming it.
    pub fn load(storage: &dyn Storage) -> Result<Groups, RecoveryError> {
        let mut map = BTreeMap::new();
        let names = storage.list().map_err(|source| RecoveryError::Io {
            file: "directory".to_string(),
            source,
        })?;
        for file in names.iter().filter(|n| n.ends_with(SUFFIX)) {
            let bytes = storage
                .open(file, false)
                .and_then(|f| read_all(&*f))
                .map_err(|source| RecoveryError::Io {
                    file: file.clone(),
                    source,
                })?;
            let (name, state) = decode(&bytes).map_err(|fault| RecoveryError::Group {
                file: file.clone(),
                fault,
            })?;
            if format!("{name}{SUFFIX}") != *file {
                return Err(RecoveryError::Group {
                    file: file.clone(),
                    fault: format!("holds group {name:?}"),
                });
            }
            map.insert(name, state);
        }
        Ok(Groups { map })
    }

    /// Checks every group against the recovered end of the log: a group past it lost
    /// records it had consumed (only a disk that dropped fsynced data, or a salvage cut,
    /// leaves one). Strict recovery refuses; salvage moves the group back to the end,
    /// rewriting its file, and returns what it moved.
    pub fn check_end(
        &mut self,
        storage: &dyn Storage,
        end: u64,
        salvage: bool,
    ) -> Result<Vec<(String, u64)>, RecoveryError> {
        let ahead: Vec<(String, u64)> = self
            .map
            .iter()
            .filter(|(_, state)| state.next_offset > end)
            .map(|(name, state)| (name.clone(), state.next_offset))
            .collect();
        for (name, next_offset) in &ahead {
            let file = format!("{name}{SUFFIX}");
            if !salvage {
                return Err(RecoveryError::Group {
                    file,
                    fault: format!(
                        "it points at offset {next_offset}, past the end of the log's data ({end}): records it consumed are missing; open in salvage mode to move it back to {end}"
                    ),
                });
            }
            self.store(storage, name, end)
                .map_err(|error| RecoveryError::Io {
                    file,
                    source: std::io::Error::other(error.to_string()),
                })?;
        }
        Ok(ahead)
    }

    pub fn list(&self) -> Vec<(String, GroupState)> {
        self.map.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Smallest next offset over all groups.
    pub fn min_next_offset(&self) -> Option<u64> {
        self.map.values().map(|s| s.next_offset).min()
    }

    fn store(
        &mut self,
        storage: &dyn Storage,
        name: &str,
        next_offset: u64,
    ) -> Result<u64, GroupError> {
        let generation = self.map.get(name).map_or(1, |s| s.generation + 1);
        let state = GroupState {
            next_offset,
            generation,
        };
        write_atomic(storage, &format!("{name}{SUFFIX}"), &encode(name, state)).map_err(
            |source| GroupError::Io {
                group: name.to_string(),
                source,
            },
        )?;
        self.map.insert(name.to_string(), state);
        Ok(next_offset)
    }
}

/// What a group write does with an offset below the log's first.
#[derive(Debug, Clone, Copy)]
enum Floor {
    /// Writes it as it is (a commit).
    None,
    /// Raises it to the first offset (a reset to the earliest, a time, the latest).
    Raise,
    /// Refuses it (a reset to an offset retention deleted).
    Refuse,
}

fn check_name(name: &str) -> Result<(), GroupError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(GroupError::Name {
            name: name.to_string(),
        })
    }
}

impl Log {
    /// Writes group `name`'s next offset. With `floor`, an offset below the log's first
    /// (checked under the groups lock, which retention holds while it deletes) is raised to
    /// it (`Floor::Raise`) or refused (`Floor::Refuse`).
    fn group_write(
        &self,
        name: &str,
        next_offset: u64,
        forward_only: bool,
        floor: Floor,
    ) -> Result<u64, GroupError> {
        check_name(name)?;
        let inner = self.inner();
        if inner.writer.is_none() {
            return Err(GroupError::ReadOnly);
        }
        let end = self.committed_offset();
        if next_offset > end {
            return Err(GroupError::OutOfRange {
                requested: next_offset,
                end,
            });
        }
        // A group never points past durable data: make the records below its new offset
        // durable first (free in `Sync` mode, one shared fsync otherwise).
        inner
            .make_durable(next_offset)
            .map_err(|e| GroupError::Io {
                group: name.to_string(),
                source: std::io::Error::other(e.to_string()),
            })?;
        let mut groups = inner.groups.lock().unwrap_or_else(PoisonError::into_inner);
        let first = self.first_offset();
        let next_offset = match floor {
            Floor::Raise => next_offset.max(first),
            Floor::Refuse if next_offset < first => {
                return Err(GroupError::BeforeStart {
                    requested: next_offset,
                    first,
                });
            }
            Floor::Refuse | Floor::None => next_offset,
        };
        if let Some(cur) = groups
            .map
            .get(name)
            .filter(|s| forward_only && s.next_offset > next_offset)
        {
            return Err(GroupError::Backwards {
                group: name.to_string(),
                current: cur.next_offset,
                requested: next_offset,
            });
        }
        groups.store(&*inner.shared.storage, name, next_offset)
    }

    /// Commits `next_offset` (the next offset the group will consume) for `group`.
    /// Never moves a group backwards; use [`Log::reset_group`] for that.
    pub fn commit_group(&self, group: &str, next_offset: u64) -> Result<(), GroupError> {
        self.group_write(group, next_offset, true, Floor::None)
            .map(|_| ())
    }

    /// Acknowledges everything up to and including `offset`.
    pub fn ack_group(&self, group: &str, offset: u64) -> Result<(), GroupError> {
        self.commit_group(group, offset.saturating_add(1))
    }

    /// Moves `group` anywhere, backwards included; returns its new next offset.
    pub fn reset_group(&self, group: &str, to: ResetTo) -> Result<u64, GroupError> {
        let (target, floor) = match to {
            ResetTo::Earliest => (self.first_offset(), Floor::Raise),
            ResetTo::Latest => (self.committed_offset(), Floor::Raise),
            ResetTo::Offset(o) => (o, Floor::Refuse),
            ResetTo::Timestamp(ts) => (
                self.offset_for_timestamp(ts)?
                    .unwrap_or(self.committed_offset()),
                Floor::Raise,
            ),
        };
        self.group_write(group, target, false, floor)
    }

    /// The group's next offset, `None` if it never committed.
    pub fn group_offset(&self, group: &str) -> Option<u64> {
        self.inner()
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .get(group)
            .map(|s| s.next_offset)
    }

    /// Records committed but not yet acknowledged by `group` (all of them if it is new).
    pub fn group_lag(&self, group: &str) -> u64 {
        let start = self
            .group_offset(group)
            .unwrap_or(0)
            .max(self.first_offset());
        self.committed_offset().saturating_sub(start)
    }

    /// Every group with its state.
    pub fn groups(&self) -> Vec<(String, GroupState)> {
        self.inner()
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .list()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_file_round_trips_and_rejects_flips() {
        let b = encode(
            "billing",
            GroupState {
                next_offset: 42,
                generation: 3,
            },
        );
        assert_eq!(
            decode(&b).unwrap(),
            (
                "billing".to_string(),
                GroupState {
                    next_offset: 42,
                    generation: 3
                }
            )
        );
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0x10;
            assert!(decode(&c).is_err(), "flip at {i} accepted");
        }
        assert!(
            valid_name("a.b_c-1")
                && !valid_name(".hidden")
                && !valid_name("a/b")
                && !valid_name("")
        );
    }
}
