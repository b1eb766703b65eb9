//! Integration tests of `quiver-core`: one binary, one module per concern.

mod durable;
mod streams;
