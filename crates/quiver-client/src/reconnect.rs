//! What a client keeps across connections: the current connection, the live
//! subscriptions (so they can be made again), and the task that reconnects with
//! exponential backoff when the connection ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use quiver_wire::{Frame, Subscribe};
use tokio::sync::{mpsc, watch};

use crate::ClientOptions;
use crate::connection::{Connection, HelloParams};
use crate::error::{ConnectError, RequestError};
use crate::subscription::SubItem;
use crate::url::Target;

/// A subscription as the client made it, to make it again after a reconnect.
struct Record {
    request: Subscribe,
    deliveries: mpsc::Sender<SubItem>,
    /// The id the current connection's server gave it.
    server_id: u32,
}

/// Shared by a client's clones and its subscriptions.
pub struct Shared {
    target: Target,
    options: ClientOptions,
    current: Mutex<Arc<Connection>>,
    subscriptions: Mutex<HashMap<u64, Record>>,
    next_local_id: AtomicU64,
}

impl Shared {
    /// Connects, and starts the reconnecting task when the options ask for it.
    pub async fn connect(
        target: Target,
        options: ClientOptions,
    ) -> Result<Arc<Shared>, ConnectError> {
        let connection = Connection::open(&target, params(&options)).await?;
        let closed = connection.closed();
        let reconnect = options.reconnect;
        let shared = Arc::new(Shared {
            target,
            options,
            current: Mutex::new(connection),
            subscriptions: Mutex::default(),
            next_local_id: AtomicU64::new(1),
        });
        if reconnect {
            tokio::spawn(supervise(Arc::downgrade(&shared), closed));
        }
        Ok(shared)
    }

    /// The connection requests go to now.
    pub fn connection(&self) -> Arc<Connection> {
        Arc::clone(&lock(&self.current))
    }

    /// Subscribes and records the subscription; returns its client-local id.
    pub async fn subscribe(
        &self,
        request: Subscribe,
        deliveries: mpsc::Sender<SubItem>,
    ) -> Result<u64, RequestError> {
        let connection = self.connection();
        let server_id = match connection.subscribe(&request, deliveries.clone()).await? {
            Frame::Subscribed(subscribed) => subscribed.subscription_id,
            other => {
                return Err(RequestError::UnexpectedReply {
                    request: "Subscribe",
                    got: format!("{:?}", other.frame_type()),
                });
            }
        };
        let local = self.next_local_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.subscriptions).insert(
            local,
            Record {
                request,
                deliveries,
                server_id,
            },
        );
        Ok(local)
    }

    /// Forgets subscription `local`; the server's id for it on the current connection.
    pub fn forget(&self, local: u64) -> Option<u32> {
        let record = lock(&self.subscriptions).remove(&local)?;
        self.connection().forget_subscription(record.server_id);
        Some(record.server_id)
    }

    /// Makes every recorded subscription again on `connection`, telling each subscriber
    /// first that events published while disconnected were not delivered.
    async fn resubscribe(&self, connection: &Connection) {
        let records: Vec<(u64, Subscribe, mpsc::Sender<SubItem>)> = lock(&self.subscriptions)
            .iter()
            .map(|(local, r)| (*local, r.request.clone(), r.deliveries.clone()))
            .collect();
        for (local, request, deliveries) in records {
            let _ = deliveries.send(SubItem::Resubscribed).await;
            match connection.subscribe(&request, deliveries.clone()).await {
                Ok(Frame::Subscribed(subscribed)) => {
                    if let Some(record) = lock(&self.subscriptions).get_mut(&local) {
                        record.server_id = subscribed.subscription_id;
                    }
                }
                other => {
                    lock(&self.subscriptions).remove(&local);
                    let message = match other {
                        Err(error) => {
                            format!("could not subscribe again after reconnecting: {error}")
                        }
                        Ok(frame) => {
                            format!("unexpected reply {:?} to Subscribe", frame.frame_type())
                        }
                    };
                    let _ = deliveries.send(SubItem::Disconnected(message)).await;
                }
            }
        }
    }
}

impl Drop for Shared {
    /// The client and its subscriptions are gone: the connection writes what they queued
    /// (publishes with ack `none`, unsubscribes) and then closes.
    fn drop(&mut self) {
        lock(&self.current).finish();
    }
}

/// The Hello parameters of `options`.
pub fn params(options: &ClientOptions) -> HelloParams {
    HelloParams {
        client_name: options.client_name.clone(),
        auth_token: options.auth_token.clone().unwrap_or_default(),
        connect_timeout: options.connect_timeout,
        request_timeout: options.request_timeout,
        end_subscriptions_on_close: !options.reconnect,
        trust: options.server_trust.clone(),
    }
}

/// Waits for the connection to end, then reconnects with exponential backoff (from
/// `reconnect_delay_min` to `reconnect_delay_max`) and subscribes again; ends when the
/// client and its subscriptions are gone.
async fn supervise(shared: Weak<Shared>, mut closed: watch::Receiver<bool>) {
    loop {
        let _ = closed.wait_for(|closed| *closed).await;
        let mut delay = match shared.upgrade() {
            Some(shared) => shared.options.reconnect_delay_min,
            None => return,
        };
        let connection = loop {
            let Some(strong) = shared.upgrade() else {
                return;
            };
            let (target, options) = (strong.target.clone(), strong.options.clone());
            drop(strong);
            match Connection::open(&target, params(&options)).await {
                Ok(connection) => break connection,
                Err(error) => tracing::debug!(%error, ?delay, "reconnect failed; retrying"),
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(options.reconnect_delay_max);
        };
        let Some(strong) = shared.upgrade() else {
            connection.abort();
            return;
        };
        closed = connection.closed();
        *lock(&strong.current) = Arc::clone(&connection);
        tracing::debug!(addr = %strong.target.addr, "reconnected");
        strong.resubscribe(&connection).await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Backoff bounds, also the defaults of [`ClientOptions`].
pub const RECONNECT_DELAY_MIN: Duration = Duration::from_millis(50);
/// See [`RECONNECT_DELAY_MIN`].
pub const RECONNECT_DELAY_MAX: Duration = Duration::from_secs(5);
