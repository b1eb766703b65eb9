//! Walking the batches of a segment file with adaptive read-ahead, checking each one.

use std::io;

use bytes::Bytes;

use super::chunks::{CHUNKS, POOLED_BYTES};
use crate::format::batch::{BatchFault, check_crc};
use crate::format::record::RecordIter;
use crate::format::{BatchHeader, HEADER_BYTES};
use crate::storage::StorageFile;

/// First read-ahead; small so a tailing reader of small records reads little.
const READAHEAD_MIN_BYTES: usize = 16 << 10;
/// Largest read-ahead; sequential scans read this much per syscall (into a buffer kept
/// for reuse).
const READAHEAD_MAX_BYTES: usize = POOLED_BYTES;

/// A checked batch: header, position and its stored payload.
#[derive(Debug, Clone)]
pub struct ScannedBatch {
    pub position: u64,
    pub header: BatchHeader,
    pub stored: Bytes,
}

/// Why the scan stopped before `end`.
#[derive(Debug)]
pub enum ScanFault {
    /// Fewer bytes remain before `end` than the batch needs (a torn tail, when at the end).
    Incomplete {
        position: u64,
    },
    /// A header or CRC check failed.
    Bad {
        position: u64,
        fault: BatchFault,
    },
    Io {
        position: u64,
        source: io::Error,
    },
}

impl ScanFault {
    pub fn position(&self) -> u64 {
        match self {
            ScanFault::Incomplete { position }
            | ScanFault::Bad { position, .. }
            | ScanFault::Io { position, .. } => *position,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            ScanFault::Incomplete { .. } => "batch runs past the end of the file".to_string(),
            ScanFault::Bad { fault, .. } => fault.to_string(),
            ScanFault::Io { source, .. } => format!("I/O error: {source}"),
        }
    }
}

/// Reads batches from `pos` up to `end` of one file.
#[derive(Debug)]
pub struct BatchScanner<'a> {
    file: &'a dyn StorageFile,
    pos: u64,
    end: u64,
    chunk: Bytes,
    chunk_pos: u64,
    readahead: usize,
    check_records: bool,
}

impl<'a> BatchScanner<'a> {
    pub fn new(file: &'a dyn StorageFile, pos: u64, end: u64) -> BatchScanner<'a> {
        BatchScanner {
            file,
            pos,
            end,
            chunk: Bytes::new(),
            chunk_pos: pos,
            readahead: READAHEAD_MIN_BYTES,
            check_records: false,
        }
    }

    /// Also check that each batch's records fill its payload (recovery and verify do).
    pub fn checking_records(mut self) -> BatchScanner<'a> {
        self.check_records = true;
        self
    }

    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Bytes `[pos, pos+len)` from the chunk, refilling it when needed.
    fn bytes(&mut self, pos: u64, len: usize) -> io::Result<Bytes> {
        let chunk_end = self.chunk_pos + self.chunk.len() as u64;
        if pos < self.chunk_pos || pos + len as u64 > chunk_end {
            let want = (self.end - pos).min(len.max(self.readahead) as u64) as usize;
            self.chunk = CHUNKS.read(want, |buf| self.file.read_at(pos, buf))?;
            self.chunk_pos = pos;
            self.readahead = (self.readahead * 2).min(READAHEAD_MAX_BYTES);
        }
        let at = (pos - self.chunk_pos) as usize;
        Ok(self.chunk.slice(at..at + len))
    }

    /// The next checked batch, `Ok(None)` at `end`.
    pub fn next_batch(&mut self) -> Result<Option<ScannedBatch>, ScanFault> {
        let position = self.pos;
        if position >= self.end {
            return Ok(None);
        }
        if self.end - position < HEADER_BYTES as u64 {
            return Err(ScanFault::Incomplete { position });
        }
        let io = |source| ScanFault::Io { position, source };
        let hb = self.bytes(position, HEADER_BYTES).map_err(io)?;
        let mut harr = [0u8; HEADER_BYTES];
        harr.copy_from_slice(&hb);
        let header =
            BatchHeader::decode(&harr).map_err(|fault| ScanFault::Bad { position, fault })?;
        if header.total_len() > self.end - position {
            return Err(ScanFault::Incomplete { position });
        }
        let stored = self
            .bytes(position + HEADER_BYTES as u64, header.stored_len as usize)
            .map_err(io)?;
        check_crc(&header, &harr, &stored).map_err(|fault| ScanFault::Bad { position, fault })?;
        if self.check_records {
            let plain = crate::format::batch::plain_payload(&header, stored.clone())
                .map_err(|fault| ScanFault::Bad { position, fault })?;
            RecordIter::validate(&plain, header.count)
                .map_err(|fault| ScanFault::Bad { position, fault })?;
        }
        self.pos = position + header.total_len();
        Ok(Some(ScannedBatch {
            position,
            header,
            stored,
        }))
    }
}

/// Whether `file` holds nothing but zeros from `from` to `end`: the space the writer fills
/// ahead of data written for an fsync (`writer::ZERO_AHEAD_BYTES`), which ends the data
/// like the end of the file does. A batch never starts with a zero byte (its magic does
/// not).
pub fn zeros_to_end(file: &dyn StorageFile, from: u64, end: u64) -> io::Result<bool> {
    const CHUNK: u64 = 64 << 10;
    let mut buf = vec![0u8; CHUNK.min(end.saturating_sub(from)) as usize];
    let mut at = from;
    while at < end {
        let n = (end - at).min(CHUNK) as usize;
        file.read_at(at, &mut buf[..n])?;
        if buf[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        at += n as u64;
    }
    Ok(true)
}

/// Bytes read at a time while searching for a valid batch.
const SEARCH_CHUNK_BYTES: usize = 1 << 20;

/// Searches past the batch that failed at `fault` (up to `end`) for the start of a valid
/// batch (magic, header and CRC), returning its position. Used to tell a torn tail
/// (nothing valid after) from interior corruption. A batch whose intact header says it
/// runs past `end` is a torn write: nothing after it is searched, since a batch found
/// inside it would be part of its payload (a value can hold bytes that look like a
/// batch). A batch that fits but fails its check is searched past byte by byte, so that
/// a damaged length cannot hide the batches after it.
pub fn find_valid_batch_after(
    file: &dyn StorageFile,
    fault: u64,
    end: u64,
) -> io::Result<Option<u64>> {
    let mut start = fault + 1;
    if end - fault >= HEADER_BYTES as u64 {
        let mut header = [0u8; HEADER_BYTES];
        file.read_at(fault, &mut header)?;
        if let Ok(header) = BatchHeader::decode(&header)
            && fault.saturating_add(header.total_len()) > end
        {
            return Ok(None);
        }
    }
    let magic = crate::format::batch::BATCH_MAGIC;
    let mut buf = vec![
        0u8;
        SEARCH_CHUNK_BYTES
            .min(usize::try_from(end.saturating_sub(start)).unwrap_or(usize::MAX))
    ];
    while start.saturating_add(HEADER_BYTES as u64) <= end {
        let len = buf
            .len()
            .min(usize::try_from(end - start).unwrap_or(usize::MAX));
        let chunk = &mut buf[..len];
        file.read_at(start, chunk)?;
        for (k, _) in chunk.windows(4).enumerate().filter(|(_, w)| *w == magic) {
            let at = start + k as u64;
            let mut scanner = BatchScanner::new(file, at, end);
            if let Ok(Some(_)) = scanner.next_batch() {
                return Ok(Some(at));
            }
        }
        // The next chunk overlaps by 3 bytes: a magic across the boundary is found there.
        start += (len as u64).saturating_sub(3).max(1);
    }
    Ok(None)
}
