//! `quiver log verify|inspect|dump DIR`: prints what the `quiver-log` tools
//! report. The work itself lives in `quiver_log::tools`.

use std::io::{self, Write};

use bytes::Bytes;
use quiver_log::error::{OpenError, ReadError};
use quiver_log::read::Record;
use quiver_log::tools::{self, Inspection, VerifyError, VerifyReport};
use serde_json::{Map, Value, json};

use crate::cli::LogCommand;
use crate::client_cmd::output::{headers_json, put_payload};

/// Why a log tool stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogToolError {
    /// `verify` found a fault: the data is damaged (exit status 1).
    #[error("verify failed: {0}")]
    Fault(VerifyError),
    /// `verify` could not read the directory, or it holds no log (exit status 2).
    #[error("cannot verify: {0}")]
    NotALog(String),
    #[error("cannot open the log: {0}")]
    Open(#[from] OpenError),
    #[error("cannot read the log: {0}")]
    Read(#[from] ReadError),
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
}

/// Runs one tool, writing its report to `out`: text, or with `json` one JSON object (a
/// line per record for `dump`).
pub fn run(command: &LogCommand, json: bool, out: &mut dyn Write) -> Result<(), LogToolError> {
    match command {
        LogCommand::Verify { dir } => {
            let report = tools::verify(dir).map_err(|error| match error {
                VerifyError::Io { .. } => LogToolError::NotALog(error.to_string()),
                fault => LogToolError::Fault(fault),
            })?;
            if report.segments == 0 {
                return Err(LogToolError::NotALog(format!(
                    "{} holds no log segment (files named like 00000000000000000000.log); give a log's directory, such as a durable stream's, streams/<tenant>/<namespace>/<stream> in the data directory, or cache/appendonlydir/log",
                    dir.display()
                )));
            }
            match json {
                true => writeln!(out, "{}", verify_json(&report))?,
                false => writeln!(out, "{report}")?,
            }
        }
        LogCommand::Inspect { dir } => {
            let inspection = tools::inspect(dir)?;
            match json {
                true => writeln!(out, "{}", inspect_json(&inspection))?,
                false => writeln!(out, "{inspection}")?,
            }
        }
        LogCommand::Dump { dir, from, count } => {
            for record in tools::dump(dir, *from, *count)? {
                let record = record?;
                match json {
                    true => writeln!(out, "{}", record_json(&record.0))?,
                    false => writeln!(out, "{record}")?,
                }
            }
        }
    }
    Ok(())
}

fn verify_json(report: &VerifyReport) -> Value {
    json!({
        "ok": true,
        "segments": report.segments,
        "batches": report.batches,
        "records": report.records,
        "bytes": report.bytes,
        "first_offset": report.first_offset,
        "next_offset": report.next_offset,
        "index_entries": report.index_entries,
        "groups": report.groups,
    })
}

fn inspect_json(inspection: &Inspection) -> Value {
    let segments: Vec<Value> = inspection
        .segments
        .iter()
        .map(|s| {
            json!({
                "file": s.file,
                "base_offset": s.base_offset,
                "next_offset": s.next_offset,
                "bytes": s.bytes,
                "index_entries": s.index_entries,
            })
        })
        .collect();
    let groups: Map<String, Value> = inspection
        .groups
        .iter()
        .map(|(name, next)| (name.clone(), json!({ "next_offset": next })))
        .collect();
    json!({
        "first_offset": inspection.first_offset,
        "next_offset": inspection.next_offset,
        "bytes": inspection.bytes,
        "segments": segments,
        "groups": groups,
        "recovery": inspection.recovery,
    })
}

/// A record as `quiver sub --json` prints a message: text where it is UTF-8, else base64.
fn record_json(record: &Record) -> Value {
    let headers: Vec<(String, Bytes)> = record
        .headers
        .iter()
        .map(|h| {
            (
                String::from_utf8_lossy(&h.key).into_owned(),
                h.value.clone(),
            )
        })
        .collect();
    let mut object = Map::new();
    object.insert("offset".to_owned(), json!(record.offset));
    object.insert("timestamp_ms".to_owned(), json!(record.timestamp_ms));
    object.insert("headers".to_owned(), headers_json(&headers));
    put_payload(&mut object, &record.value);
    Value::Object(object)
}
