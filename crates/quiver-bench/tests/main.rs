//! `quiver-bench` end to end: the binary against an in-process Quiver server (TCP and
//! QUIC listeners on 127.0.0.1 port 0), with small counts so the suite stays quick.

mod cache;
mod pubsub;
mod support;
