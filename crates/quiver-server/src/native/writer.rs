//! The writer task of one connection (or, over QUIC, of one stream): frames queued by the read loop and by the
//! subscription tasks are written in as few `write` calls as possible. Whatever is queued
//! when the task wakes is gathered (up to [`MAX_GATHER_CHUNKS`] chunks or
//! [`MAX_GATHER_BYTES`] bytes) and written with one vectored write; an event batch is two
//! chunks, its 20-byte prefix and the body shared by every subscriber, so the body is never
//! copied per connection.

use std::io::{self, IoSlice};

use bytes::{Bytes, BytesMut};
use quiver_wire::{EVENT_BATCH_PREFIX_LEN, FramePayload};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Frames queued for one connection before producers wait. Bounds the memory a connection
/// that does not read can pin (together with the subscription queues in the broker, which
/// apply the slow-subscriber policy once this is full).
pub const WRITE_QUEUE_FRAMES: usize = 256;

/// Most chunks handed to one vectored write (Linux accepts 1024 iovecs).
pub(crate) const MAX_GATHER_CHUNKS: usize = 256;

/// Most bytes gathered for one write: enough to amortise the syscall, small enough that one
/// write does not hold many megabytes of a connection's output hostage.
pub(crate) const MAX_GATHER_BYTES: usize = 1 << 20;

/// One frame to write.
#[derive(Debug)]
pub enum Outgoing {
    /// A whole encoded frame.
    Frame(Bytes),
    /// An event batch: the per-subscription prefix and the shared body.
    Batch {
        prefix: [u8; EVENT_BATCH_PREFIX_LEN],
        body: Bytes,
    },
}

impl Outgoing {
    /// Encodes `frame` with `request_id`. Frames built by the server from validated parts
    /// always encode; a failure is reported as an INTERNAL error frame instead.
    pub fn encode<F: FramePayload>(request_id: u32, frame: &F) -> Outgoing {
        let mut buf = BytesMut::new();
        match quiver_wire::encode(request_id, frame, &mut buf) {
            Ok(()) => Outgoing::Frame(buf.freeze()),
            Err(error) => {
                tracing::error!(%error, "a server frame failed to encode");
                let frame = quiver_wire::ErrorFrame::new(
                    quiver_wire::ErrorCode::INTERNAL,
                    &format!("the server could not encode its reply: {error}"),
                );
                let mut buf = BytesMut::new();
                quiver_wire::encode(request_id, &frame, &mut buf)
                    .expect("an error frame with a cut message always encodes");
                Outgoing::Frame(buf.freeze())
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Outgoing::Frame(bytes) => bytes.len(),
            Outgoing::Batch { body, .. } => EVENT_BATCH_PREFIX_LEN + body.len(),
        }
    }
}

/// The sending side, cloned into every producer of the connection.
pub type WriteQueue = mpsc::Sender<Outgoing>;

/// Creates a connection's write queue.
pub fn queue() -> (WriteQueue, mpsc::Receiver<Outgoing>) {
    mpsc::channel(WRITE_QUEUE_FRAMES)
}

/// Writes queued frames until every sender is gone (then shuts the write side down) or the
/// peer stops accepting bytes.
pub async fn run<W>(mut socket: W, mut queue: mpsc::Receiver<Outgoing>)
where
    W: AsyncWrite + Unpin,
{
    let mut gathered: Vec<Outgoing> = Vec::with_capacity(64);
    while let Some(first) = queue.recv().await {
        let mut bytes = first.len();
        gathered.push(first);
        while gathered.len() * 2 < MAX_GATHER_CHUNKS && bytes < MAX_GATHER_BYTES {
            match queue.try_recv() {
                Ok(next) => {
                    bytes += next.len();
                    gathered.push(next);
                }
                Err(_) => break,
            }
        }
        if let Err(error) = write_all(&mut socket, &gathered).await {
            tracing::debug!(%error, "native connection write failed");
            return;
        }
        gathered.clear();
    }
    let _ = socket.shutdown().await;
}

async fn write_all<W>(socket: &mut W, frames: &[Outgoing]) -> io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(frames.len() * 2);
    for frame in frames {
        match frame {
            Outgoing::Frame(bytes) => slices.push(IoSlice::new(bytes)),
            Outgoing::Batch { prefix, body } => {
                slices.push(IoSlice::new(prefix));
                slices.push(IoSlice::new(body));
            }
        }
    }
    let mut rest: &mut [IoSlice<'_>] = &mut slices;
    while !rest.is_empty() {
        let written = socket.write_vectored(rest).await?;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut rest, written);
    }
    Ok(())
}
