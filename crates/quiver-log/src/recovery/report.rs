//! What recovery reports: cuts made, indexes rebuilt, the watermark.

use std::fmt;

/// Why bytes were cut on open.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TruncationReason {
    /// An incomplete or CRC-failing batch at the end of the log.
    TornTail,
    /// Interior corruption cut in salvage mode.
    Salvaged,
    /// A whole segment after a salvaged corruption or gap.
    DroppedSegment,
}

impl fmt::Display for TruncationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::TornTail => "a torn tail",
            Self::Salvaged => "corruption, cut in salvage mode",
            Self::DroppedSegment => "a segment after a cut",
        })
    }
}

/// One cut made (or, read-only, that would be made) by recovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    pub file: String,
    pub position: u64,
    pub bytes_cut: u64,
    pub reason: TruncationReason,
    pub detail: String,
}

/// What recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// A read-only open: the cuts below were not made, only found.
    pub read_only: bool,
    pub segments: usize,
    pub first_offset: u64,
    pub next_offset: u64,
    pub truncations: Vec<Truncation>,
    pub indexes_rebuilt: Vec<String>,
    pub temp_files_removed: Vec<String>,
    /// Set when the committed watermark was ahead of the data (salvage mode only).
    pub watermark_lost: Option<(u64, u64)>,
    /// Why the watermark file could not be read (salvage mode only: it was written
    /// again, and nothing guarded the cuts).
    pub watermark_damaged: Option<String>,
    /// Consumer groups that pointed past the data, with where they pointed; each was
    /// moved back to the end (salvage mode only).
    pub groups_moved_back: Vec<(String, u64)>,
}

impl RecoveryReport {
    /// Total bytes cut.
    pub fn bytes_cut(&self) -> u64 {
        self.truncations.iter().map(|t| t.bytes_cut).sum()
    }

    /// Whether recovery changed nothing that holds data.
    pub fn is_clean(&self) -> bool {
        self.truncations.is_empty()
            && self.watermark_lost.is_none()
            && self.watermark_damaged.is_none()
            && self.groups_moved_back.is_empty()
    }
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recovered {} segments, offsets {}..{}",
            self.segments, self.first_offset, self.next_offset
        )?;
        let cut = if self.read_only {
            "would cut (read-only: nothing changed)"
        } else {
            "cut"
        };
        for t in &self.truncations {
            write!(
                f,
                "; {cut} {} bytes of {} at byte {} ({}: {})",
                t.bytes_cut, t.file, t.position, t.reason, t.detail
            )?;
        }
        if !self.indexes_rebuilt.is_empty() {
            write!(f, "; rebuilt index {}", self.indexes_rebuilt.join(", "))?;
        }
        if let Some((wm, end)) = self.watermark_lost {
            write!(f, "; watermark {wm} was ahead of the data end {end}")?;
        }
        if let Some(fault) = &self.watermark_damaged {
            let then = if self.read_only {
                "a writer would write it again"
            } else {
                "it was written again"
            };
            write!(f, "; the watermark was unreadable ({fault}); {then}")?;
        }
        for (group, offset) in &self.groups_moved_back {
            write!(
                f,
                "; group {group} pointed at {offset}, moved back to {}",
                self.next_offset
            )?;
        }
        Ok(())
    }
}
