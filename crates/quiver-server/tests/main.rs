//! Integration tests of the `quiver` binary and its configuration, through
//! the public API and real processes on 127.0.0.1.

mod aof;
mod cli;
mod config;
mod crash;
mod differential;
mod docs;
mod http;
mod log_tools;
mod native;
mod persistence;
mod resp;
mod resp_acl;
mod resp_commands;
mod resp_data;
mod resp_migrate;
mod resp_pubsub;
mod resp_scripting;
mod resp_stats;
mod resp_vectors;
mod serve;
mod support;
