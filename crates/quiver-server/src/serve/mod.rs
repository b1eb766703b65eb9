//! Running the server: open and lock the data directory, bind every listener,
//! serve until SIGINT/SIGTERM, then drain in-flight work up to the drain
//! timeout and return (the binary then exits 0).

pub mod data_dir;
pub mod listener;
pub mod shutdown;
pub mod state;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use tokio::time::timeout_at;

use crate::config::Config;
use crate::http;
use data_dir::{DataDir, DataDirError};
use listener::{Listener, ListenerStats};
use shutdown::Shutdown;
use state::{Readiness, ServerState};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("cannot bind the {listener} listener on {addr}: {error} (set {key} to a free address)")]
    Bind {
        listener: &'static str,
        key: &'static str,
        addr: SocketAddr,
        error: io::Error,
    },
    #[error("cannot install signal handlers: {0}")]
    Signals(io::Error),
}

/// Runs the server until a shutdown signal, then drains and returns.
pub async fn run(config: Config) -> Result<(), ServeError> {
    let readiness = Readiness::default();
    let data_dir = DataDir::open(&config.data_dir)?;
    tracing::info!(path = %data_dir.path().display(), "data directory opened and locked");
    readiness.set_storage_open();

    let http_listener =
        Listener::bind("http", &config.http, &config.net).map_err(|error| ServeError::Bind {
            listener: "http",
            key: "http.addr",
            addr: config.http.addr,
            error,
        })?;
    let state = Arc::new(ServerState {
        started: Instant::now(),
        profile: config.profile,
        readiness,
        listeners: vec![http_listener.stats()],
    });

    // Data listeners (added by the transports) stop on `shutdown`; the
    // operations listener keeps answering /health and /ready (503 while
    // draining) until they have drained, then stops on `ops_shutdown`.
    let shutdown = Shutdown::new();
    let ops_shutdown = Shutdown::new();
    let signals = tokio::spawn(shutdown::watch_signals(shutdown.clone()));
    let ops_task = tokio::spawn(http::serve_ops(
        http_listener,
        Arc::clone(&state),
        ops_shutdown.clone(),
    ));

    for listener in &state.listeners {
        tracing::info!(listener = listener.name, addr = %listener.addr, "listening");
    }
    state.readiness.set_listeners_bound();
    tracing::info!(profile = %config.profile, "quiver ready");

    tokio::select! {
        () = shutdown.wait() => {}
        result = signals => {
            if let Ok(Err(error)) = result {
                return Err(ServeError::Signals(error));
            }
        }
    }
    state.readiness.set_draining();
    let deadline = tokio::time::Instant::now() + config.shutdown.drain_timeout;
    let data_listeners: Vec<&Arc<ListenerStats>> = state
        .listeners
        .iter()
        .filter(|listener| listener.name != "http")
        .collect();
    for listener in data_listeners {
        drain(listener, deadline).await;
    }
    ops_shutdown.trigger();
    let _ = ops_task.await;
    for listener in state
        .listeners
        .iter()
        .filter(|listener| listener.name == "http")
    {
        drain(listener, deadline).await;
    }
    drop(data_dir);
    tracing::info!("shutdown complete");
    Ok(())
}

/// Waits until `listener` has no open connection or `deadline` passes.
async fn drain(listener: &ListenerStats, deadline: tokio::time::Instant) {
    if timeout_at(deadline, listener.wait_idle()).await.is_err() {
        tracing::warn!(
            listener = listener.name,
            open = listener.open(),
            "drain timeout reached; closing the remaining connections"
        );
    }
}
