//! Integration tests of the quiver-wire codec: byte-exact vectors, property tests, and
//! hostile input.

mod garbage;
mod roundtrip;
mod strategies;
mod streaming;
mod vectors;
