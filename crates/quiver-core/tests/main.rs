//! Integration tests of `quiver-core`: one binary, one module per concern.

mod cache;
mod durable;
mod streams;
