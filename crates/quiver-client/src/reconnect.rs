//! What a client keeps across connections: the current connection, the live
//! subscriptions (so they can be made again), and the task that reconnects with
//! exponential backoff when the connection ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use quiver_wire::{Capabilities, Frame, JoinGroup, Subscribe, Unsubscribe};
use tokio::sync::{mpsc, watch};

use crate::ClientOptions;
use crate::connection::{Connection, HelloParams, Route};
use crate::error::{ConnectError, RequestError};
use crate::subscription::{Resume, SubItem};
use crate::url::Target;

/// What made a subscription: a Subscribe, or a JoinGroup (a group membership).
#[derive(Debug, Clone)]
pub(crate) enum Request {
    Subscribe(Subscribe),
    Join(JoinGroup),
}

impl Request {
    /// The request to send on `connection`: a Subscribe resumes the durable streams it
    /// received from after their last event (when the server keeps durable streams). A
    /// queue group's member does not: a queue group starts at the live end, and its
    /// other members had what was published meanwhile.
    fn again(&self, resume: Option<&Resume>, connection: &Connection) -> Request {
        let durable = connection.granted.contains(Capabilities::DURABLE);
        match (self, resume) {
            (Request::Subscribe(subscribe), Some(resume))
                if durable && subscribe.group.is_none() =>
            {
                Request::Subscribe(Subscribe {
                    resume: resume.entries(),
                    ..subscribe.clone()
                })
            }
            _ => self.clone(),
        }
    }

    async fn send(&self, connection: &Connection, route: Route) -> Result<Frame, RequestError> {
        match self {
            Request::Subscribe(subscribe) => connection.subscribe(subscribe, route).await,
            Request::Join(join) => connection.subscribe(join, route).await,
        }
    }
}

/// A subscription as the client made it, to make it again after a reconnect.
struct Record {
    request: Request,
    route: Route,
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
        } else {
            tokio::spawn(release_on_close(Arc::downgrade(&shared), closed));
        }
        Ok(shared)
    }

    /// The connection requests go to now.
    pub fn connection(&self) -> Arc<Connection> {
        Arc::clone(&lock(&self.current))
    }

    /// Subscribes (or joins a group) and records it; returns its client-local id.
    pub(crate) async fn subscribe(
        &self,
        request: Request,
        deliveries: mpsc::Sender<SubItem>,
    ) -> Result<u64, RequestError> {
        let connection = self.connection();
        let resume = match &request {
            Request::Subscribe(_) => Some(Arc::new(Resume::default())),
            Request::Join(_) => None,
        };
        let route = Route { deliveries, resume };
        let server_id = match request.send(&connection, route.clone()).await? {
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
                route,
                server_id,
            },
        );
        Ok(local)
    }

    /// The server's id of subscription `local` on the current connection.
    pub fn server_id(&self, local: u64) -> Option<u32> {
        lock(&self.subscriptions).get(&local).map(|r| r.server_id)
    }

    /// Forgets subscription `local`; the server's id for it on the current connection.
    pub fn forget(&self, local: u64) -> Option<u32> {
        let record = lock(&self.subscriptions).remove(&local)?;
        self.connection().forget_subscription(record.server_id);
        Some(record.server_id)
    }

    /// Ends subscription `local` (a subscription or a group membership) and waits for the
    /// server to confirm; nothing to do when it is already forgotten.
    pub async fn unsubscribe(&self, local: u64) -> Result<(), RequestError> {
        let Some(server_id) = self.forget(local) else {
            return Ok(());
        };
        let request = Unsubscribe {
            subscription_id: server_id,
        };
        self.connection().request(&request).await.map(|_| ())
    }

    /// Ends subscription `local` without waiting (its handle was dropped).
    pub fn unsubscribe_dropped(&self, local: u64) {
        if let Some(server_id) = self.forget(local) {
            let connection = self.connection();
            if !connection.is_closed() {
                connection.try_send(&Unsubscribe {
                    subscription_id: server_id,
                });
            }
        }
    }

    /// Makes every recorded subscription again on `connection`, telling each subscriber
    /// first; durable streams resume after the last event received.
    async fn resubscribe(&self, connection: &Connection) {
        let records: Vec<(u64, Request, Route)> = lock(&self.subscriptions)
            .iter()
            .map(|(local, r)| {
                let request = r.request.again(r.route.resume.as_deref(), connection);
                (*local, request, r.route.clone())
            })
            .collect();
        for (local, request, route) in records {
            let _ = route.deliveries.send(SubItem::Resubscribed).await;
            match request.send(connection, route.clone()).await {
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
                    let _ = route.deliveries.send(SubItem::Disconnected(message)).await;
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

/// Without reconnecting: once the connection ends, forgets every subscription, so that
/// each one's channel closes after what it holds (its reader then sees the end, even when
/// the end notice found its buffer full).
async fn release_on_close(shared: Weak<Shared>, mut closed: watch::Receiver<bool>) {
    let _ = closed.wait_for(|closed| *closed).await;
    if let Some(shared) = shared.upgrade() {
        lock(&shared.subscriptions).clear();
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
