//! Following a log that another process writes: a read-only open picks up newly committed
//! batches and segments with [`Log::refresh`]. It never repairs anything: a batch that is
//! incomplete or fails its checks is simply not visible yet.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use crate::error::RecoveryError;
use crate::format::IndexEntry;
use crate::log::{Inner, Log};
use crate::recovery::scan::scan;
use crate::segment::{Segment, parse_segment_name, segment_name};
use crate::writer::Written;

/// How often a tailing reader of a read-only log re-reads the directory. Another process's
/// commits cannot wake this one, so this is the one place that polls.
pub const FOLLOW_POLL_MS: u64 = 5;

impl Log {
    /// For read-only opens: makes records another process committed since the last look
    /// visible, and forgets segments retention deleted. Returns the new committed end.
    /// A writer's own log is always current, so this is a no-op there.
    pub fn refresh(&self) -> Result<u64, RecoveryError> {
        refresh(self.inner())
    }
}

fn io(file: &str) -> impl FnOnce(std::io::Error) -> RecoveryError + '_ {
    move |source| RecoveryError::Io {
        file: file.to_string(),
        source,
    }
}

pub(crate) fn refresh(inner: &Arc<Inner>) -> Result<u64, RecoveryError> {
    let shared = &inner.shared;
    if inner.writer.is_some() {
        return Ok(shared.committed_next());
    }
    let _one_at_a_time = inner
        .refreshing
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let names = shared.storage.list().map_err(io("directory"))?;
    let mut bases: Vec<u64> = names.iter().filter_map(|n| parse_segment_name(n)).collect();
    bases.sort_unstable();
    if let Some(&first) = bases.first() {
        shared
            .segments
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|s| s.base >= first);
    }
    loop {
        let last = shared
            .segments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .last()
            .cloned();
        let seg = match last {
            Some(seg) => seg,
            None => match bases.first() {
                Some(&base) => add_segment(inner, base)?,
                None => return Ok(shared.committed_next()),
            },
        };
        extend(inner, &seg)?;
        let end = seg.end_offset.load(Ordering::Acquire);
        // The writer created the next segment only after this one was complete.
        if !bases.contains(&end) || end == seg.base {
            return Ok(shared.committed_next());
        }
        add_segment(inner, end)?;
    }
}

fn add_segment(inner: &Arc<Inner>, base: u64) -> Result<Arc<Segment>, RecoveryError> {
    let name = segment_name(base);
    let file = inner.shared.storage.open(&name, false).map_err(io(&name))?;
    let seg = Arc::new(Segment::new(
        base,
        file,
        vec![IndexEntry::START],
        0,
        base,
        i64::MIN,
    ));
    inner
        .shared
        .segments
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .push(seg.clone());
    Ok(seg)
}

/// Scans `seg` past its committed bytes and publishes every complete, valid batch.
fn extend(inner: &Arc<Inner>, seg: &Arc<Segment>) -> Result<(), RecoveryError> {
    let len = seg.file.len().map_err(io(&seg.name))?;
    let from = seg.committed_len();
    if len <= from {
        return Ok(());
    }
    let end = seg.end_offset.load(Ordering::Acquire);
    let start = IndexEntry::point(
        (end - seg.base) as u32,
        from as u32,
        seg.max_ts_ms.load(Ordering::Acquire),
    );
    let last_pos = seg
        .index
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .last()
        .map_or(0, |e| e.position);
    let found = scan(
        &*seg.file,
        seg.base,
        start,
        len,
        vec![IndexEntry {
            position: last_pos,
            ..start
        }],
        u64::from(inner.config.index_interval_bytes),
    );
    if found.end_pos == from {
        return Ok(());
    }
    seg.index
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(found.entries.into_iter().skip(1));
    seg.max_ts_ms.fetch_max(found.max_ts_ms, Ordering::AcqRel);
    seg.end_offset.store(found.next_offset, Ordering::Release);
    inner.shared.publish(&Written {
        segment: seg.clone(),
        len: found.end_pos,
        next_offset: found.next_offset,
    });
    Ok(())
}
