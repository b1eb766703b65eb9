//! The `quiver` binary: parse the command line, load the configuration, then
//! serve, print the configuration or run a log tool. Errors reach the user as
//! one line naming what to fix; exit status 2 means bad input or environment,
//! 1 means `quiver log verify` found damaged data.

use std::process::ExitCode;

use quiver_server::cli::{self, Invocation};
use quiver_server::config::Loaded;
use quiver_server::log_tools::{self, LogToolError};
use quiver_server::{logging, serve};

fn main() -> ExitCode {
    // Variables that are not UTF-8 are left alone, unless they are Quiver's own.
    let mut env: Vec<(String, String)> = Vec::new();
    for (key, value) in std::env::vars_os() {
        match (key.into_string(), value.into_string()) {
            (Ok(key), Ok(value)) => env.push((key, value)),
            (Ok(key), Err(_)) if key.starts_with("QUIVER_") => {
                eprintln!("error: environment variable {key} is not UTF-8 text");
                return ExitCode::from(2);
            }
            _ => {}
        }
    }
    let invocation = match cli::parse(std::env::args_os(), env) {
        Ok(invocation) => invocation,
        Err(error) => error.exit(),
    };
    let invocation = match invocation {
        Invocation::Client(parsed) => {
            let (common, command) = *parsed;
            return quiver_server::client_cmd::run(&common, command);
        }
        Invocation::Invalid(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
        other => other,
    };
    match run(invocation) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            let data_fault = matches!(error.downcast_ref(), Some(LogToolError::Fault(_)));
            ExitCode::from(if data_fault { 1 } else { 2 })
        }
    }
}

fn run(invocation: Invocation) -> anyhow::Result<()> {
    match invocation {
        Invocation::Config(inputs) => {
            print!("{}", Loaded::load(&inputs)?.to_toml());
        }
        Invocation::Log(command, json) => {
            log_tools::run(&command, json, &mut std::io::stdout().lock())?
        }
        Invocation::Client(_) | Invocation::Invalid(_) => {
            unreachable!("client commands are run before")
        }
        Invocation::Serve(inputs) => {
            let loaded = Loaded::load(&inputs)?;
            logging::init(&loaded.config.log)?;
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(serve::run(loaded.config))?;
        }
    }
    Ok(())
}
