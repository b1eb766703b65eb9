//! `dump`: records of a log directory from an offset (read-only open).

use std::fmt;
use std::path::Path;

use crate::config::LogConfig;
use crate::error::{OpenError, ReadError};
use crate::log::Log;
use crate::read::{LogIter, Record};

/// A record as dumped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpRecord(pub Record);

impl fmt::Display for DumpRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.0;
        write!(
            f,
            "{} ts={} len={}",
            r.offset,
            r.timestamp_ms,
            r.value.len()
        )?;
        for h in &r.headers {
            write!(
                f,
                " {}={}",
                String::from_utf8_lossy(&h.key),
                String::from_utf8_lossy(&h.value)
            )?;
        }
        write!(f, " {}", String::from_utf8_lossy(&r.value).escape_debug())
    }
}

/// Iterator over at most `count` records from `from`; keeps the log open.
#[derive(Debug)]
pub struct Dump {
    _log: Log,
    iter: LogIter,
    left: u64,
}

impl Iterator for Dump {
    type Item = Result<DumpRecord, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.iter.next().map(|r| r.map(DumpRecord))
    }
}

/// Dumps up to `count` records of the log in `dir` starting at `from`.
pub fn dump(dir: &Path, from: u64, count: u64) -> Result<Dump, OpenError> {
    let log = Log::open_read_only(dir, LogConfig::default())?;
    let iter = log.iter(from);
    Ok(Dump {
        _log: log,
        iter,
        left: count,
    })
}
