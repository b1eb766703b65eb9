//! Log output through `tracing`: a filter from `log.level` (or `RUST_LOG`,
//! which wins when set), pretty or JSON lines, written to standard error so
//! that standard output stays clean for command results.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoggingError {
    #[error("RUST_LOG={value:?} is not a valid log filter: {message}")]
    BadRustLog { value: String, message: String },
}

/// Installs the global subscriber. Call once, before anything logs.
pub fn init(config: &LogConfig) -> Result<(), LoggingError> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => {
            EnvFilter::builder()
                .parse(&value)
                .map_err(|error| LoggingError::BadRustLog {
                    value,
                    message: error.to_string(),
                })?
        }
        _ => EnvFilter::builder()
            .parse(&config.level)
            .expect("log.level was checked when the config was loaded"),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match config.format {
        LogFormat::Pretty => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
    Ok(())
}
