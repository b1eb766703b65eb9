//! A stream definition file: UTF-8 text, one `key value` pair per line in a fixed order,
//! closed by a `crc32c` line over every byte before it (`docs/catalog-format.md`).

use std::fmt::Write as _;
use std::time::Duration;

use crate::streams::durable::{DurableConfig, Retention, durability_name, parse_durability};
use crate::streams::{
    BatchConfig, BlockTimeout, QueueLimits, SlowPolicy, StreamConfig, StreamName,
};

const MAGIC_LINE: &str = "quiver-stream 1";

/// A stream as created: its name, settings and creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamDef {
    pub(crate) name: StreamName,
    pub(crate) config: StreamConfig,
    pub(crate) created_ms: u64,
}

fn opt(value: Option<u64>) -> String {
    value.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl StreamDef {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let c = &self.config;
        let mut text = String::new();
        let mut line = |key: &str, value: &dyn std::fmt::Display| {
            let _ = writeln!(text, "{key} {value}");
        };
        line("quiver-stream", &1);
        line("name", &self.name);
        line("created_ms", &self.created_ms);
        line("policy", &c.policy);
        line("batch_max_events", &c.batch.max_events());
        line("batch_max_bytes", &c.batch.max_bytes());
        line("batch_max_delay_us", &c.batch.max_delay().as_micros());
        line("queue_max_events", &c.queue.max_events());
        line("queue_max_bytes", &c.queue.max_bytes());
        line("block_timeout_ms", &ms(c.block_timeout.duration()));
        match &c.durable {
            None => line("durability", &"none"),
            Some(d) => {
                line("durability", &durability_name(d.durability));
                line("max_age_ms", &opt(d.retention.max_age.map(ms)));
                line("max_bytes", &opt(d.retention.max_bytes));
                line("max_messages", &opt(d.retention.max_messages));
                line("keep_unacked", &d.retention.keep_unacked);
                line("dedupe_window_ms", &ms(d.dedupe_window));
            }
        }
        let crc = crc32c::crc32c(text.as_bytes());
        let _ = writeln!(text, "crc32c {crc:08x}");
        text.into_bytes()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<StreamDef, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?;
        let body_end = text
            .trim_end_matches('\n')
            .rfind('\n')
            .map(|at| at + 1)
            .ok_or("no checksum line")?;
        let (body, crc_line) = text.split_at(body_end);
        let stored = crc_line
            .trim_end()
            .strip_prefix("crc32c ")
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .ok_or("the last line is not `crc32c <hex>`")?;
        let computed = crc32c::crc32c(body.as_bytes());
        if stored != computed {
            return Err(format!(
                "checksum mismatch: stored {stored:08x}, computed {computed:08x}"
            ));
        }
        let mut lines = Fields(body.lines());
        if lines.0.next() != Some(MAGIC_LINE) {
            return Err(format!("the first line is not `{MAGIC_LINE}`"));
        }
        let name = StreamName::new(lines.text("name")?).map_err(|e| e.to_string())?;
        let created_ms = lines.number("created_ms")?;
        let policy: SlowPolicy = lines.text("policy")?.parse().map_err(|e| format!("{e}"))?;
        let bad = |e: crate::streams::ConfigError| e.to_string();
        let batch = BatchConfig::new(
            u32::try_from(lines.number("batch_max_events")?).map_err(|e| e.to_string())?,
            lines.number("batch_max_bytes")?,
            Duration::from_micros(lines.number("batch_max_delay_us")?),
        )
        .map_err(bad)?;
        let queue = QueueLimits::new(
            u32::try_from(lines.number("queue_max_events")?).map_err(|e| e.to_string())?,
            lines.number("queue_max_bytes")?,
        )
        .map_err(bad)?;
        let block_timeout =
            BlockTimeout::new(Duration::from_millis(lines.number("block_timeout_ms")?))
                .map_err(bad)?;
        let durable = match lines.text("durability")? {
            "none" => None,
            text => Some(DurableConfig {
                durability: parse_durability(text).map_err(|e| e.to_string())?,
                retention: Retention {
                    max_age: lines.optional("max_age_ms")?.map(Duration::from_millis),
                    max_bytes: lines.optional("max_bytes")?,
                    max_messages: lines.optional("max_messages")?,
                    keep_unacked: match lines.text("keep_unacked")? {
                        "true" => true,
                        "false" => false,
                        other => return Err(format!("keep_unacked {other:?} is not a boolean")),
                    },
                },
                dedupe_window: Duration::from_millis(lines.number("dedupe_window_ms")?),
            }),
        };
        if let Some(extra) = lines.0.next() {
            return Err(format!("unexpected line {extra:?}"));
        }
        Ok(StreamDef {
            name,
            config: StreamConfig {
                batch,
                queue,
                policy,
                block_timeout,
                durable,
            },
            created_ms,
        })
    }
}

/// The `key value` lines of a definition, read in their fixed order.
struct Fields<'a>(std::str::Lines<'a>);

impl<'a> Fields<'a> {
    fn text(&mut self, key: &str) -> Result<&'a str, String> {
        let line = self.0.next().ok_or_else(|| format!("missing `{key}`"))?;
        line.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(' '))
            .ok_or_else(|| format!("expected `{key}`, found {line:?}"))
    }

    fn number(&mut self, key: &str) -> Result<u64, String> {
        let text = self.text(key)?;
        text.parse()
            .map_err(|_| format!("{key} {text:?} is not a whole number"))
    }

    fn optional(&mut self, key: &str) -> Result<Option<u64>, String> {
        match self.text(key)? {
            "none" => Ok(None),
            text => text
                .parse()
                .map(Some)
                .map_err(|_| format!("{key} {text:?} is neither `none` nor a whole number")),
        }
    }
}

#[cfg(test)]
mod tests {
    use quiver_log::Durability;

    use super::*;

    #[test]
    fn definitions_round_trip_and_refuse_damage() {
        let mut config = StreamConfig {
            policy: SlowPolicy::Block,
            ..StreamConfig::default()
        };
        config.durable = Some(DurableConfig {
            durability: Durability::Interval { interval_ms: 20 },
            retention: Retention {
                max_age: Some(Duration::from_secs(3600)),
                max_bytes: None,
                max_messages: Some(10),
                keep_unacked: true,
            },
            dedupe_window: Duration::from_secs(60),
        });
        let def = StreamDef {
            name: StreamName::new("acme/orders/eu/created").unwrap(),
            config,
            created_ms: 1_700_000_000_000,
        };
        let bytes = def.encode();
        assert_eq!(StreamDef::decode(&bytes).unwrap(), def);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("durability interval:20\n"), "{text}");
        for at in 0..bytes.len() - 1 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x01;
            assert!(
                StreamDef::decode(&damaged).is_err(),
                "flip at {at} accepted"
            );
        }
        let live = StreamDef {
            config: StreamConfig::default(),
            ..def
        };
        assert_eq!(StreamDef::decode(&live.encode()).unwrap(), live);
    }
}
