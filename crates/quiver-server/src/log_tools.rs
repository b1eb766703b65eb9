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
            let report = tools::verify(dir).map_err(LogToolError::Fault)?;
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
