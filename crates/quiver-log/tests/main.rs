//! Integration tests of quiver-log: one binary, one module per concern.

mod common;
mod concurrency;
mod contract;
mod crash;
mod fixtures;
mod model;
mod recovery;
mod tools;
