//! The tap: a listener every stream offers its sealed batches to, after its subscriptions.
//! The node's Redis channels use it to see what native and QUIC publishers send to
//! streams (see [`crate::pubsub`]). One per broker, set once.

use std::sync::{Arc, OnceLock};

use crate::streams::batch::Batch;

/// What listens to every stream's batches. Called with the stream's lock held, in
/// sequence order: it must not call back into the broker.
pub(crate) trait BatchTap: Send + Sync {
    fn offer(&self, batch: &Arc<Batch>);
}

/// The broker's tap, shared by its streams; empty until a listener is set.
#[derive(Default)]
pub(crate) struct TapSlot(OnceLock<Arc<dyn BatchTap>>);

impl TapSlot {
    /// Sets the listener; false if one was set already.
    pub(crate) fn set(&self, tap: Arc<dyn BatchTap>) -> bool {
        self.0.set(tap).is_ok()
    }

    /// Offers `batch` to the listener, if there is one.
    pub(crate) fn offer(&self, batch: &Arc<Batch>) {
        if let Some(tap) = self.0.get() {
            tap.offer(batch);
        }
    }
}
