//! A consumer group's state file: binary, little-endian, closed by a CRC32C
//! (`docs/catalog-format.md`).
//!
//! ```text
//! "QVGR" | version u8 = 2 | stream (u8 len, bytes) | group (u8 len, bytes)
//! ack_wait_ms u64 | max_deliveries u32 | max_in_flight u32 | dead_letter (u8 len, bytes; 0 = default)
//! next u64 | acked u64 | redelivered u64 | dead_lettered u64 | lost_to_retention u64
//! pending count u32 | count x (offset u64, deliveries u32)
//! crc32c u32 over everything before it
//! ```
//!
//! Version 1, written before the lost-to-retention counter, has no `lost_to_retention`
//! and is still read (the counter starts at 0). A build that knows only version 1 refuses
//! version 2 files as unknown.

use std::time::Duration;

use super::{seal, unseal};
use crate::streams::StreamName;
use crate::streams::groups::GroupConfig;

const MAGIC: &[u8; 4] = b"QVGR";
const VERSION: u8 = 2;
/// The version without `lost_to_retention`.
const VERSION_1: u8 = 1;

/// One group's durable state: where it is, what is pending, and its counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupSnapshot {
    pub(crate) stream: StreamName,
    pub(crate) group: String,
    pub(crate) config: GroupConfig,
    /// Next offset never delivered.
    pub(crate) next: u64,
    pub(crate) acked: u64,
    pub(crate) redelivered: u64,
    pub(crate) dead_lettered: u64,
    pub(crate) lost_to_retention: u64,
    /// Delivered, not acknowledged: (offset, deliveries so far), in offset order.
    pub(crate) pending: Vec<(u64, u32)>,
}

impl GroupSnapshot {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(96 + self.pending.len() * 12);
        b.extend_from_slice(MAGIC);
        b.push(VERSION);
        put8(&mut b, self.stream.as_str().as_bytes());
        put8(&mut b, self.group.as_bytes());
        let ack_wait_ms = u64::try_from(self.config.ack_wait.as_millis()).unwrap_or(u64::MAX);
        b.extend_from_slice(&ack_wait_ms.to_le_bytes());
        b.extend_from_slice(&self.config.max_deliveries.to_le_bytes());
        b.extend_from_slice(&self.config.max_in_flight.to_le_bytes());
        let dead = self.config.dead_letter.as_ref().map_or("", |n| n.as_str());
        put8(&mut b, dead.as_bytes());
        let counters = [
            self.next,
            self.acked,
            self.redelivered,
            self.dead_lettered,
            self.lost_to_retention,
        ];
        for value in counters {
            b.extend_from_slice(&value.to_le_bytes());
        }
        let count = u32::try_from(self.pending.len()).expect("pending is bounded far below u32");
        b.extend_from_slice(&count.to_le_bytes());
        for (offset, deliveries) in &self.pending {
            b.extend_from_slice(&offset.to_le_bytes());
            b.extend_from_slice(&deliveries.to_le_bytes());
        }
        seal(b)
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<GroupSnapshot, String> {
        let body = unseal(bytes)?;
        let mut r = Reader(body);
        if r.take(4)? != MAGIC {
            return Err("not a group file (bad magic)".to_owned());
        }
        let version = r.u8()?;
        if version != VERSION && version != VERSION_1 {
            return Err(format!(
                "version {version} is not known; expected {VERSION_1} or {VERSION}"
            ));
        }
        let stream = StreamName::new(r.str8()?).map_err(|e| e.to_string())?;
        let group = r.str8()?.to_owned();
        let ack_wait = Duration::from_millis(r.u64()?);
        let max_deliveries = r.u32()?;
        let max_in_flight = r.u32()?;
        let dead_letter = match r.str8()? {
            "" => None,
            name => Some(StreamName::new(name).map_err(|e| e.to_string())?),
        };
        let (next, acked, redelivered, dead_lettered) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
        let lost_to_retention = if version == VERSION_1 { 0 } else { r.u64()? };
        let count = r.u32()? as usize;
        if count.checked_mul(12) != Some(r.0.len()) {
            return Err(format!(
                "{count} pending entries do not fill the {} bytes left",
                r.0.len()
            ));
        }
        let mut pending = Vec::with_capacity(count);
        let mut previous = None;
        for _ in 0..count {
            let offset = r.u64()?;
            if previous.is_some_and(|p| p >= offset) || offset >= next {
                return Err(format!(
                    "pending offset {offset} is out of order or not below {next}"
                ));
            }
            previous = Some(offset);
            pending.push((offset, r.u32()?));
        }
        let config = GroupConfig {
            ack_wait,
            max_deliveries,
            max_in_flight,
            dead_letter,
        };
        config.validate().map_err(|e| e.to_string())?;
        Ok(GroupSnapshot {
            stream,
            group,
            config,
            next,
            acked,
            redelivered,
            dead_lettered,
            lost_to_retention,
            pending,
        })
    }
}

fn put8(b: &mut Vec<u8>, bytes: &[u8]) {
    let len = u8::try_from(bytes.len()).expect("names are at most 255 bytes");
    b.push(len);
    b.extend_from_slice(bytes);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("truncated".to_owned());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn str8(&mut self) -> Result<&'a str, String> {
        let len = usize::from(self.u8()?);
        std::str::from_utf8(self.take(len)?).map_err(|_| "a name is not UTF-8".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> GroupSnapshot {
        GroupSnapshot {
            stream: StreamName::new("acme/orders/created").unwrap(),
            group: "billing".to_owned(),
            config: GroupConfig {
                ack_wait: Duration::from_secs(30),
                max_deliveries: 5,
                max_in_flight: 100,
                dead_letter: Some(StreamName::new("acme/orders/dead").unwrap()),
            },
            next: 1000,
            acked: 990,
            redelivered: 3,
            dead_lettered: 1,
            lost_to_retention: 6,
            pending: vec![(7, 2), (998, 1)],
        }
    }

    #[test]
    fn snapshots_round_trip_and_refuse_damage() {
        let snapshot = snapshot();
        let bytes = snapshot.encode();
        assert_eq!(GroupSnapshot::decode(&bytes).unwrap(), snapshot);
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x20;
            assert!(
                GroupSnapshot::decode(&damaged).is_err(),
                "flip at {at} accepted"
            );
        }
        assert!(GroupSnapshot::decode(&bytes[..bytes.len() - 1]).is_err());
    }

    /// A version 1 file (before the lost-to-retention counter) still loads.
    #[test]
    fn version_1_files_load_with_no_loss_counted() {
        let snapshot = GroupSnapshot {
            lost_to_retention: 0,
            ..snapshot()
        };
        // Version 1: the same bytes without the counter, sealed again.
        let encoded = snapshot.encode();
        let mut body = encoded[..encoded.len() - 4].to_vec();
        body[4] = VERSION_1;
        let pending_bytes = 4 + 12 * snapshot.pending.len();
        let counter_at = body.len() - pending_bytes - 8;
        body.drain(counter_at..counter_at + 8);
        assert_eq!(GroupSnapshot::decode(&seal(body)).unwrap(), snapshot);
    }
}
