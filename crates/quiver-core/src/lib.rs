//! `quiver-core`: Quiver's broker logic.
//!
//! Owns the stream registry (tenant/namespace/stream), subscriptions and fan-out,
//! durable streams over `quiver-log`, consumer groups, the cache facade over
//! `quiver-cache`, and broker metrics.
//!
//! Never sees a frame, a RESP value, a socket or an HTTP request: transports in
//! `quiver-server` translate those into calls on this crate.
