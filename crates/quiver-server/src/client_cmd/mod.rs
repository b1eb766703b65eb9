//! `quiver stream|pub|sub|group|status`: a command line for people that talks to a running
//! server over the native protocol (the Rust SDK), the way `nats` and `redis-cli` are used;
//! `status` reads the HTTP listener's `/api/metrics`.
//!
//! The server is `--server quiver://HOST:PORT`, by default the `native.addr` of the
//! effective configuration (the same `QUIVER_*` variables and `--config` file apply), and
//! the token is `native.auth_token` unless `--token` is given. Output is readable by
//! default and JSON with `--json` (one object per line where there are many).
//!
//! Exit status: 0 done; 1 the server refused the request (or a subscription ended before
//! `--count` messages); 2 bad input (a name, a value, a flag); 3 the server could not be
//! reached.

pub(crate) mod args;
pub(crate) mod groups;
pub(crate) mod output;
mod publish;
mod status;
pub(crate) mod streams;
mod subscribe;
pub mod time;

use std::process::ExitCode;
use std::time::Duration;

use quiver_client::{Client, ClientOptions, ConnectError, RequestError, StartPosition};

pub use args::{client_commands, parse};

use crate::config::{Inputs, Loaded};

/// Where and how to connect, and how to print.
#[derive(Debug, Clone)]
pub struct Common {
    /// `--server`, or `None` for the configuration's `native.addr`.
    pub server: Option<String>,
    /// `--token`, or `None` for the configuration's `native.auth_token`.
    pub token: Option<String>,
    /// The config file and environment, for the defaults above.
    pub inputs: Inputs,
    /// `--json`.
    pub json: bool,
    /// `--timeout`: connect and per-request wait.
    pub timeout: Duration,
}

/// One client command.
#[derive(Debug, Clone)]
pub enum ClientCommand {
    StreamList,
    StreamInfo {
        name: String,
    },
    StreamRemove {
        name: String,
    },
    StreamCreate {
        name: String,
        options: quiver_client::StreamOptions,
    },
    Publish(publish::PublishArgs),
    Subscribe(subscribe::SubscribeArgs),
    GroupList {
        stream: String,
    },
    GroupInfo {
        stream: String,
        group: String,
    },
    GroupReset {
        stream: String,
        group: String,
        to: StartPosition,
    },
    GroupRemove {
        stream: String,
        group: String,
    },
    /// `quiver status`: the figures of the server's HTTP listener.
    Status {
        /// `--http`, or `None` for the configuration's `http.addr`.
        http: Option<String>,
    },
}

/// Why a command failed, and the exit status that says so.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Bad input (exit 2).
    #[error("{0}")]
    Input(String),
    /// The server could not be reached (exit 3).
    #[error("{0}")]
    Unreachable(String),
    /// The server refused, or the command could not finish (exit 1).
    #[error("{0}")]
    Refused(String),
}

impl CommandError {
    fn status(&self) -> u8 {
        match self {
            Self::Refused(_) => 1,
            Self::Input(_) => 2,
            Self::Unreachable(_) => 3,
        }
    }
}

impl From<RequestError> for CommandError {
    fn from(error: RequestError) -> Self {
        match error {
            // Refused before it was sent: what was asked is out of bounds.
            RequestError::InvalidName(_) | RequestError::Encode(_) => {
                Self::Input(error.to_string())
            }
            RequestError::Disconnected { .. } | RequestError::Timeout { .. } => {
                Self::Unreachable(error.to_string())
            }
            _ => Self::Refused(error.to_string()),
        }
    }
}

/// Runs `command` to completion; prints errors on standard error.
pub fn run(common: &Common, command: ClientCommand) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(execute(common, command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(error.status())
        }
    }
}

async fn execute(common: &Common, command: ClientCommand) -> Result<(), CommandError> {
    let mut out = output::Out::new(common.json);
    if let ClientCommand::Status { http } = &command {
        return status::run(common, &mut out, http.as_deref()).await;
    }
    let client = connect(common).await?;
    match command {
        ClientCommand::Status { .. } => unreachable!("answered above"),
        ClientCommand::StreamList => streams::list(&client, &mut out).await,
        ClientCommand::StreamInfo { name } => streams::info(&client, &mut out, &name).await,
        ClientCommand::StreamRemove { name } => streams::remove(&client, &mut out, &name).await,
        ClientCommand::StreamCreate { name, options } => {
            streams::create(&client, &mut out, &name, options).await
        }
        ClientCommand::Publish(args) => publish::run(&client, &mut out, args).await,
        ClientCommand::Subscribe(args) => subscribe::run(&client, &mut out, args).await,
        ClientCommand::GroupList { stream } => groups::list(&client, &mut out, &stream).await,
        ClientCommand::GroupInfo { stream, group } => {
            groups::info(&client, &mut out, &stream, &group).await
        }
        ClientCommand::GroupReset { stream, group, to } => {
            groups::reset(&client, &mut out, &stream, &group, to).await
        }
        ClientCommand::GroupRemove { stream, group } => {
            groups::remove(&client, &mut out, &stream, &group).await
        }
    }
}

/// Connects as `common` says; the server's address and token default to the effective
/// configuration's.
async fn connect(common: &Common) -> Result<Client, CommandError> {
    let loaded = Loaded::load(&common.inputs).map_err(|e| CommandError::Input(e.to_string()))?;
    let native = &loaded.config.native;
    let configured = format!("quiver://{}", native.listener.addr);
    let server = common.server.clone().unwrap_or_else(|| configured.clone());
    // The configured token goes only to the configured server, never to another host.
    let config_token = native
        .auth_token
        .clone()
        .filter(|_| server.trim_end_matches('/') == configured);
    let mut options = ClientOptions::default().reconnect(false);
    options.connect_timeout = common.timeout;
    options = options.request_timeout(common.timeout);
    if let Some(token) = common.token.clone().or(config_token) {
        options = options.auth_token(token);
    }
    Client::connect_with(&server, options)
        .await
        .map_err(|error| match error {
            ConnectError::InvalidUrl { .. } | ConnectError::UnsupportedScheme { .. } => {
                CommandError::Input(error.to_string())
            }
            ConnectError::Refused { .. } => CommandError::Refused(error.to_string()),
            ConnectError::Tls { .. } => CommandError::Input(format!(
                "{error}; over QUIC, pin the server's certificate with ?fingerprint=HEX in the quiver+quic:// URL (the server logs it at start-up)"
            )),
            _ => CommandError::Unreachable(format!(
                "{error}; is a server running there? start one with `quiver serve`, or say where with --server quiver://HOST:PORT"
            )),
        })
}
