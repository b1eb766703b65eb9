//! `quiver log verify|inspect|dump DIR`: prints what the `quiver-log` tools
//! report. The work itself lives in `quiver_log::tools`.

use std::io::{self, Write};

use quiver_log::error::{OpenError, ReadError};
use quiver_log::tools::{self, VerifyError};

use crate::cli::LogCommand;

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

/// Runs one tool, writing its report to `out`.
pub fn run(command: &LogCommand, out: &mut dyn Write) -> Result<(), LogToolError> {
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
            writeln!(out, "{report}")?;
        }
        LogCommand::Inspect { dir } => writeln!(out, "{}", tools::inspect(dir)?)?,
        LogCommand::Dump { dir, from, count } => {
            for record in tools::dump(dir, *from, *count)? {
                writeln!(out, "{}", record?)?;
            }
        }
    }
    Ok(())
}
