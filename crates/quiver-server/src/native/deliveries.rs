//! Where a subscription's deliveries are written: the one seam between the shared session
//! logic and a transport. TCP writes every frame on its one connection ([`SameStream`]);
//! QUIC opens a unidirectional stream per subscription so that one slow subscription does
//! not hold up another.

use std::future::Future;

use super::writer::WriteQueue;

/// Opens the queue that carries one subscription's EventBatch, Lag and SubscriptionEnded
/// frames.
pub trait Deliveries: Sync {
    /// The queue for subscription `subscription_id`; `control` is the connection's control
    /// queue (replies). An `Err` says why no queue could be opened; the Subscribe is then
    /// refused with that text.
    fn open(
        &self,
        subscription_id: u32,
        control: &WriteQueue,
    ) -> impl Future<Output = Result<WriteQueue, String>> + Send;
}

/// Deliveries share the connection's one byte stream (TCP).
#[derive(Debug, Clone, Copy, Default)]
pub struct SameStream;

impl Deliveries for SameStream {
    async fn open(
        &self,
        _subscription_id: u32,
        control: &WriteQueue,
    ) -> Result<WriteQueue, String> {
        Ok(control.clone())
    }
}
