//! `quiver-core`: Quiver's broker logic.
//!
//! Owns the stream registry (tenant/namespace/stream), subscriptions and fan-out,
//! subscriber queues with their slow-subscriber policies, delivery batching, in-flight
//! budgets and broker metrics, durable streams over `quiver-log` and consumer groups
//! ([`streams`]); and the cache over `quiver-cache` with database selection,
//! transactions, blocking waits, lazy free and a change feed ([`cache`]).
//!
//! Never sees a frame, a RESP value, a socket or an HTTP request: transports in
//! `quiver-server` translate those into calls on this crate, and translate what it returns
//! ([`streams::Delivery`]: batches, lag notices, ends) back into their own frames.
//!
//! # Key design decisions
//!
//! **One lock per publish call, one allocation per batch, one wake per batch.** A stream's
//! state sits behind its own mutex, taken once per publish call: sequence numbers are
//! assigned, the messages appended to the pending batch, and a sealed batch is handed to
//! each subscription's queue while the lock is held, so every subscription sees the stream
//! in publish order under concurrent publishers. A sealed batch is one `Arc<Batch>` shared
//! by every subscription (payloads are `bytes::Bytes`, never copied); a subscription's
//! consumer is woken only when its queue goes from empty to non-empty. Nothing global is
//! locked or written per message: the registry is read once per publish (never, through a
//! [`streams::StreamHandle`]), and totals are summed from per-stream counters when read.
//!
//! **Encode once, through write-once slots on the batch.** Every [`streams::Batch`] carries
//! a small fixed array of `OnceLock<Bytes>` ([`streams::ENCODING_SLOTS`]). A transport
//! picks a slot per encoding it produces (the native protocol: with or without headers) and
//! calls [`streams::Batch::encoded`]: the first caller encodes, every other subscription's
//! connection gets the same refcounted bytes. We chose slots over a cache keyed by encoding
//! (a map behind a lock, or one shared across batches) because the slot lives and dies with
//! the batch (no eviction, no lookup lock), costs no allocation until used, and the number of
//! encodings a broker speaks is small and known when the server is built. Core only stores
//! the bytes; it never knows what they mean.
//!
//! **Sans-IO where it can be.** Time comes from a [`streams::Clock`]; batching by delay is
//! a set of deadlines that [`streams::Broker::flush_due`] serves for a given `now` (and
//! [`streams::Broker::run_flusher`] drives with tokio's timer, so paused-time tests control
//! it). The only waits, for room under the `block` policy and for in-flight budget, are
//! bounded by timeouts that end in typed errors.
//!
//! # Example
//!
//! ```
//! use quiver_core::streams::{Ack, Broker, BrokerConfig, Delivery, Message, Pattern, StreamName, SubscribeOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let broker = Broker::new(BrokerConfig::default());
//! tokio::spawn(broker.clone().run_flusher()); // drives batching by delay
//! let mut sub = broker.subscribe(Pattern::new("acme/orders/>")?, SubscribeOptions::default())?;
//! let stream = broker.stream(&StreamName::new("acme/orders/created")?)?;
//! let receipt = stream.publish(vec![Message::new("one"), Message::new("two")], Ack::Accepted, None).await?;
//! assert_eq!((receipt.first_sequence, receipt.count), (0, 2));
//! match sub.recv().await {
//!     Delivery::Batch(batch) => assert_eq!(batch.len(), 2), // one batch, shared by all subscribers
//!     Delivery::Lag { missed } => println!("lost {missed}"),
//!     Delivery::Ended(reason) => println!("ended: {reason}"),
//! }
//! # Ok(())
//! # }
//! ```

pub mod cache;
mod catalog;
pub mod pubsub;
pub mod streams;

pub use catalog::CatalogError;
