//! `quiver-server`: the `quiver` binary and everything that touches the
//! outside world: configuration (file, env, flags, profiles), listeners and
//! their limits, graceful shutdown, the data directory lock, logging, the
//! offline `quiver log` tools, and the transports as modules (`http`, `resp`, `native` over TCP, `quic`: the native protocol over QUIC).
//!
//! It holds no business logic: transports translate their protocol into calls
//! on `quiver-core` and back.

pub mod cli;
pub mod client_cmd;
pub mod clock;
pub mod config;
pub mod http;
pub mod log_tools;
pub mod logging;
pub mod native;
pub mod quic;
pub mod resp;
pub mod serve;
