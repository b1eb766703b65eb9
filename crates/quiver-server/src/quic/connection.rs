//! One QUIC connection: the handshake, the control stream running the shared native
//! session, and a unidirectional stream per subscription for its deliveries.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::native::NativeShared;
use crate::native::connection;
use crate::native::deliveries::Deliveries;
use crate::native::writer::{self, Outgoing, Queued, WriteQueue};
use crate::serve::listener::ConnectionGuard;
use crate::serve::shutdown::Shutdown;

/// How long the TLS handshake and then the opening of the control stream may take; a
/// connection that does neither would otherwise hold a `quic.max_connections` slot.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);

/// How long opening a delivery stream may wait for the client to grant one; past it the
/// Subscribe is refused instead of stalling the control stream.
const OPEN_STREAM_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the server waits, after its control stream ended, for the client to read
/// what was sent and close the connection, before it closes it itself (closing at once
/// would discard frames still in flight, such as a final Goodbye).
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Application close code: the session is over (the frames said why).
const CLOSE_CODE: u32 = 0;

/// Serves one connection attempt until the session ends.
pub async fn serve(
    incoming: quinn::Incoming,
    guard: ConnectionGuard,
    shared: Arc<NativeShared>,
    shutdown: Shutdown,
) {
    let peer = incoming.remote_address();
    let connecting = match incoming.accept() {
        Ok(connecting) => connecting,
        Err(error) => {
            tracing::debug!(%peer, %error, "QUIC connection attempt failed");
            return;
        }
    };
    let quic = match tokio::time::timeout(OPEN_TIMEOUT, connecting).await {
        Ok(Ok(quic)) => quic,
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, "QUIC handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "QUIC handshake timed out");
            return;
        }
    };
    let control = tokio::select! {
        control = tokio::time::timeout(OPEN_TIMEOUT, quic.accept_bi()) => control,
        () = shutdown.wait() => {
            quic.close(CLOSE_CODE.into(), b"the server is shutting down");
            return;
        }
    };
    let Ok(Ok((send, recv))) = control else {
        quic.close(CLOSE_CODE.into(), b"no control stream");
        return;
    };
    let deliveries = UniStreams { quic: quic.clone() };
    connection::run(recv, send, &deliveries, peer, &shared, &shutdown).await;
    let _ = tokio::time::timeout(CLOSE_WAIT, quic.closed()).await;
    quic.close(CLOSE_CODE.into(), b"closed");
    drop(guard);
}

/// Each subscription's deliveries on a unidirectional stream of their own, written by
/// their own writer task.
struct UniStreams {
    quic: quinn::Connection,
}

impl Deliveries for UniStreams {
    async fn open(
        &self,
        _subscription_id: u32,
        _control: &WriteQueue,
    ) -> Result<WriteQueue, String> {
        let send = tokio::time::timeout(OPEN_STREAM_TIMEOUT, self.quic.open_uni())
            .await
            .map_err(|_| {
                format!(
                    "the client granted no unidirectional stream within {OPEN_STREAM_TIMEOUT:?}"
                )
            })?
            .map_err(|error| error.to_string())?;
        let (queue, receiver) = writer::queue();
        tokio::spawn(write_deliveries(send, receiver));
        Ok(queue)
    }
}

/// The writer of one delivery stream: like the TCP writer it gathers whatever is queued,
/// but hands quinn the chunks themselves, so an event batch's shared body is queued on
/// the stream without being copied (only its 20-byte prefix is).
async fn write_deliveries(mut send: quinn::SendStream, mut queue: Queued) {
    let mut chunks: Vec<Bytes> = Vec::with_capacity(64);
    while let Some(first) = queue.recv().await {
        let mut bytes = first.len();
        let mut room = first.room() as usize;
        push_chunks(&mut chunks, first);
        while chunks.len() < writer::MAX_GATHER_CHUNKS && bytes < writer::MAX_GATHER_BYTES {
            let Some(next) = queue.try_recv() else { break };
            bytes += next.len();
            room += next.room() as usize;
            push_chunks(&mut chunks, next);
        }
        if let Err(error) = send.write_all_chunks(&mut chunks).await {
            tracing::debug!(%error, "QUIC delivery stream write failed");
            return;
        }
        chunks.clear();
        queue.written(room);
    }
    let _ = send.finish();
}

fn push_chunks(chunks: &mut Vec<Bytes>, frame: Outgoing) {
    match frame {
        Outgoing::Frame(bytes) => chunks.push(bytes),
        Outgoing::Batch { prefix, body } => {
            chunks.push(Bytes::copy_from_slice(&prefix));
            chunks.push(body);
        }
    }
}
