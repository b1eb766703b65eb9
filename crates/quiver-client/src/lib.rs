//! `quiver-client`: the async Rust SDK for Quiver's native protocol.
//!
//! Speaks only the frames of `quiver-wire` over TCP or QUIC; it never links the
//! broker, the log or the cache. The SDK itself arrives with the streams work;
//! until then this crate exports nothing.
