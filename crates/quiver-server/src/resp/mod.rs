//! The RESP transport: Redis's protocol (RESP2, RESP3, inline) on its own
//! listener, turning decoded requests into typed commands and executing them
//! against the cache keyspace, with replies encoded for the session's
//! protocol version.

pub mod exec;
