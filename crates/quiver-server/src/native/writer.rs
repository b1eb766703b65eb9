//! The writer task of one connection (or, over QUIC, of one stream): frames queued by the read loop and by the
//! subscription tasks are written in as few `write` calls as possible. Whatever is queued
//! when the task wakes is gathered (up to [`MAX_GATHER_CHUNKS`] chunks or
//! [`MAX_GATHER_BYTES`] bytes) and written with one vectored write; an event batch is two
//! chunks, its 20-byte prefix and the body shared by every subscriber, so the body is never
//! copied per connection.

use std::io::{self, IoSlice};

use bytes::{Bytes, BytesMut};
use quiver_wire::{EVENT_BATCH_PREFIX_LEN, FramePayload};
use std::sync::Arc;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use tokio::sync::{Semaphore, mpsc};

/// Bytes of frames queued for one connection (over QUIC, for one stream) before producers
/// wait. Bounds the memory a peer that does not read can pin, whatever the size of its
/// frames; once it is full, the subscription queues in the broker fill and apply the
/// slow-subscriber policy. A frame larger than this waits until the queue is empty.
pub const WRITE_QUEUE_BYTES: usize = 4 << 20;

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
#[derive(Debug, Clone)]
pub struct WriteQueue {
    frames: mpsc::UnboundedSender<Outgoing>,
    room: Arc<Semaphore>,
}

/// The writer's side: the frames, and the room it gives back once they are written.
#[derive(Debug)]
pub struct Queued {
    frames: mpsc::UnboundedReceiver<Outgoing>,
    room: Arc<Semaphore>,
}

/// The writer is gone (the peer is): nothing more is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// Creates a connection's (or a QUIC stream's) write queue.
pub fn queue() -> (WriteQueue, Queued) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let room = Arc::new(Semaphore::new(WRITE_QUEUE_BYTES));
    let queue = WriteQueue {
        frames: sender,
        room: Arc::clone(&room),
    };
    let queued = Queued {
        frames: receiver,
        room,
    };
    (queue, queued)
}

impl Outgoing {
    /// The room the frame takes in a write queue.
    pub(crate) fn room(&self) -> u32 {
        self.len().min(WRITE_QUEUE_BYTES) as u32
    }
}

impl WriteQueue {
    /// Queues `frame`, waiting for room in the queue.
    pub async fn send(&self, frame: Outgoing) -> Result<(), Closed> {
        let room = self
            .room
            .acquire_many(frame.room())
            .await
            .map_err(|_| Closed)?;
        room.forget();
        self.frames.send(frame).map_err(|_| Closed)
    }
}

impl Queued {
    /// The next frame; `None` once every sender is gone.
    pub async fn recv(&mut self) -> Option<Outgoing> {
        self.frames.recv().await
    }

    /// The next frame if one is queued.
    pub fn try_recv(&mut self) -> Option<Outgoing> {
        self.frames.try_recv().ok()
    }

    /// Gives back `room` (the sum of [`Outgoing::room`]) of frames written.
    pub fn written(&self, room: usize) {
        self.room.add_permits(room);
    }
}

impl Drop for Queued {
    /// Senders waiting for room learn that nothing more is written.
    fn drop(&mut self) {
        self.room.close();
    }
}

/// Writes queued frames until every sender is gone (then shuts the write side down) or the
/// peer stops accepting bytes.
pub async fn run<W>(mut socket: W, mut queue: Queued)
where
    W: AsyncWrite + Unpin,
{
    let mut gathered: Vec<Outgoing> = Vec::with_capacity(64);
    while let Some(first) = queue.recv().await {
        let mut bytes = first.len();
        let mut room = first.room() as usize;
        gathered.push(first);
        while gathered.len() * 2 < MAX_GATHER_CHUNKS && bytes < MAX_GATHER_BYTES {
            let Some(next) = queue.try_recv() else { break };
            bytes += next.len();
            room += next.room() as usize;
            gathered.push(next);
        }
        if let Err(error) = write_all(&mut socket, &gathered).await {
            tracing::debug!(%error, "native connection write failed");
            return;
        }
        gathered.clear();
        queue.written(room);
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
