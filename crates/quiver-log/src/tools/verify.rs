//! `verify`: checks every batch CRC, record layout, offset sequence, index entry and group
//! file of a log directory, stopping at the first fault.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::format::IndexEntry;
use crate::segment::scan::zeros_to_end;
use crate::segment::{BatchScanner, index_name, parse_segment_name};
use crate::storage::{FileStorage, Storage, read_all};

/// What a clean verify saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub segments: usize,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
    pub first_offset: u64,
    pub next_offset: u64,
    pub index_entries: u64,
    pub groups: usize,
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ok: {} segments, {} batches, {} records (offsets {}..{}), {} bytes, {} index entries, {} groups",
            self.segments,
            self.batches,
            self.records,
            self.first_offset,
            self.next_offset,
            self.bytes,
            self.index_entries,
            self.groups
        )
    }
}

/// The first fault found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    #[error("{file} at byte {position}: {fault}")]
    Fault {
        file: String,
        position: u64,
        fault: String,
    },
    #[error("cannot read {file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
}

fn fault(file: &str, position: u64, what: impl Into<String>) -> VerifyError {
    VerifyError::Fault {
        file: file.to_string(),
        position,
        fault: what.into(),
    }
}

/// Verifies the log in `dir` (read-only; safe while a writer appends, though the batch
/// being written may then show as a torn tail).
pub fn verify(dir: &Path) -> Result<VerifyReport, VerifyError> {
    let storage = FileStorage::new(dir, false).map_err(|source| VerifyError::Io {
        file: dir.display().to_string(),
        source,
    })?;
    verify_storage(Arc::new(storage))
}

/// [`verify`] over any backend.
pub fn verify_storage(storage: Arc<dyn Storage>) -> Result<VerifyReport, VerifyError> {
    let names = storage.list().map_err(|source| VerifyError::Io {
        file: storage.describe(),
        source,
    })?;
    let mut bases: Vec<u64> = names.iter().filter_map(|n| parse_segment_name(n)).collect();
    bases.sort_unstable();
    let mut r = VerifyReport {
        segments: bases.len(),
        first_offset: bases.first().copied().unwrap_or(0),
        ..VerifyReport::default()
    };
    let mut next = r.first_offset;
    for &base in &bases {
        let name = crate::segment::segment_name(base);
        if base != next {
            return Err(fault(
                &name,
                0,
                format!("segment starts at offset {base}, previous ends at {next}"),
            ));
        }
        let io = |source| VerifyError::Io {
            file: name.clone(),
            source,
        };
        let file = storage.open(&name, false).map_err(io)?;
        let len = file.len().map_err(|source| VerifyError::Io {
            file: name.clone(),
            source,
        })?;
        let mut scanner = BatchScanner::new(&*file, 0, len).checking_records();
        let mut boundaries: Vec<(u64, u64)> = Vec::new();
        let mut data_len = len;
        loop {
            match scanner.next_batch() {
                Ok(None) => break,
                Ok(Some(b)) => {
                    if b.header.base_offset != next {
                        return Err(fault(
                            &name,
                            b.position,
                            format!(
                                "batch starts at offset {}, expected {next}",
                                b.header.base_offset
                            ),
                        ));
                    }
                    boundaries.push((b.position, next));
                    next = b.header.next_offset();
                    r.batches += 1;
                    r.records += u64::from(b.header.count);
                }
                Err(f) => {
                    // Zeros to the end: written ahead of the data, which ends here.
                    if zeros_to_end(&*file, f.position(), len).map_err(io)? {
                        data_len = f.position();
                        break;
                    }
                    return Err(fault(&name, f.position(), f.describe()));
                }
            }
        }
        boundaries.push((data_len, next));
        r.bytes += data_len;
        r.index_entries += verify_index(&*storage, base, &boundaries)?;
    }
    r.next_offset = next;
    r.groups = verify_groups(&*storage, &names)?;
    if let Err(f) = crate::watermark::read(&*storage) {
        return Err(fault(crate::watermark::WATERMARK_FILE, 0, f));
    }
    Ok(r)
}

/// Checks that every index entry names a batch boundary with the right offset.
fn verify_index(
    storage: &dyn Storage,
    base: u64,
    boundaries: &[(u64, u64)],
) -> Result<u64, VerifyError> {
    let idx = index_name(base);
    let Ok(file) = storage.open(&idx, false) else {
        return Ok(0);
    };
    let bytes = read_all(&*file).map_err(|source| VerifyError::Io {
        file: idx.clone(),
        source,
    })?;
    let Some(entries) = crate::format::index::decode(&bytes, base) else {
        return Err(fault(&idx, 0, "bad index header"));
    };
    let expected_len =
        crate::format::INDEX_HEADER_BYTES + entries.len() * crate::format::INDEX_ENTRY_BYTES;
    if bytes.len() != expected_len {
        return Err(fault(
            &idx,
            expected_len as u64,
            "index entry fails its CRC or order",
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        let at = (crate::format::INDEX_HEADER_BYTES + i * crate::format::INDEX_ENTRY_BYTES) as u64;
        let ok = boundaries
            .binary_search_by_key(&u64::from(e.position), |b| b.0)
            .is_ok_and(|k| boundaries[k].1 == base + u64::from(e.rel_offset));
        if !ok && *e != IndexEntry::START {
            return Err(fault(
                &idx,
                at,
                format!(
                    "entry (offset {}, byte {}) is not a batch boundary",
                    base + u64::from(e.rel_offset),
                    e.position
                ),
            ));
        }
    }
    Ok(entries.len() as u64)
}

fn verify_groups(storage: &dyn Storage, names: &[String]) -> Result<usize, VerifyError> {
    let mut n = 0;
    for name in names.iter().filter(|n| n.ends_with(".group")) {
        let bytes = storage
            .open(name, false)
            .and_then(|f| read_all(&*f))
            .map_err(|source| VerifyError::Io {
                file: name.clone(),
                source,
            })?;
        crate::groups::decode(&bytes).map_err(|f| fault(name, 0, f))?;
        n += 1;
    }
    Ok(n)
}
