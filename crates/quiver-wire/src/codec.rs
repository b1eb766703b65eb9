//! Encoding a frame into a buffer, and decoding frames out of a receive buffer.

use bytes::{Bytes, BytesMut};
use thiserror::Error;

use crate::error_code::ErrorCode;
use crate::frames::{ErrorFrame, Frame, FramePayload};
use crate::header::{CheckError, FrameHeader, FrameInfo, VERSION, check_with_limit};
use crate::limits::{HEADER_LEN, MAX_FRAME_LEN};
use crate::reader::DecodeError;
use crate::writer::EncodeError;

/// A decoded frame and the request id it carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The request this frame is or answers; 0 for pushed frames.
    pub request_id: u32,
    /// The frame.
    pub frame: Frame,
}

/// Why the receive buffer holds no valid next frame.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireError {
    /// The header is bad: the byte stream cannot be resynchronised; answer
    /// [`WireError::code`] with request id 0 and close.
    #[error(transparent)]
    Header(CheckError),
    /// The header was good and the frame has been consumed, but its payload is not.
    #[error("frame with request id {request_id}: {error}")]
    Payload {
        /// The frame's request id, for the Error reply.
        request_id: u32,
        /// What is wrong.
        error: DecodeError,
    },
}

impl WireError {
    /// The code to answer with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Header(error) => error.code().unwrap_or(ErrorCode::MALFORMED_FRAME),
            Self::Payload { error, .. } => error.code(),
        }
    }

    /// The request id to answer with (0 when the header was unreadable).
    pub fn request_id(&self) -> u32 {
        match self {
            Self::Header(_) => 0,
            Self::Payload { request_id, .. } => *request_id,
        }
    }

    /// The Error frame to answer with (send it with [`Self::request_id`]).
    pub fn to_error_frame(&self) -> ErrorFrame {
        ErrorFrame::new(self.code(), &self.to_string())
    }

    /// Whether the connection must be closed after the Error reply.
    pub fn closes_connection(&self) -> bool {
        self.code().closes_connection()
    }
}

/// Appends `frame` with `request_id` to `dst`: header, payload, and the payload length
/// patched in. Allocation-free when `dst` has the capacity. On error `dst` is unchanged.
pub fn encode<F: FramePayload>(
    request_id: u32,
    frame: &F,
    dst: &mut BytesMut,
) -> Result<(), EncodeError> {
    let start = dst.len();
    let header = FrameHeader {
        version: VERSION,
        frame_type: F::TYPE,
        flags: frame.flags(),
        request_id,
        payload_len: 0,
    };
    dst.extend_from_slice(&header.to_bytes());
    if let Err(error) = frame.encode_payload(dst) {
        dst.truncate(start);
        return Err(error);
    }
    let len = dst.len() - start - HEADER_LEN;
    if len > MAX_FRAME_LEN {
        dst.truncate(start);
        return Err(EncodeError::FrameTooLarge {
            len,
            max: MAX_FRAME_LEN,
        });
    }
    dst[start + 12..start + HEADER_LEN].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(())
}

/// Decodes one whole frame (`frame` holds exactly the bytes `info` describes, as returned
/// by [`check`](crate::check)); the payload fields are slices of `frame`.
pub fn decode(info: &FrameInfo, frame: &Bytes) -> Result<Frame, DecodeError> {
    debug_assert_eq!(
        frame.len(),
        info.frame_len,
        "decode takes exactly the frame check found"
    );
    Frame::decode_at(info.header.frame_type, info.header.flags, frame, HEADER_LEN)
}

/// Takes the next frame out of a receive buffer: `Ok(None)` until a whole frame is
/// buffered; on [`WireError::Payload`] the bad frame has been consumed and, for a
/// non-closing code, decoding may go on.
pub fn decode_next(buf: &mut BytesMut) -> Result<Option<Envelope>, WireError> {
    decode_next_with_limit(buf, MAX_FRAME_LEN)
}

/// [`decode_next`] with a payload limit lower than [`MAX_FRAME_LEN`]: a server reads a
/// connection's first frame with [`MAX_HELLO_LEN`](crate::limits::MAX_HELLO_LEN).
pub fn decode_next_with_limit(
    buf: &mut BytesMut,
    max_payload_len: usize,
) -> Result<Option<Envelope>, WireError> {
    let info = match check_with_limit(buf, max_payload_len) {
        Ok(info) => info,
        Err(CheckError::Incomplete) => return Ok(None),
        Err(error) => return Err(WireError::Header(error)),
    };
    let request_id = info.header.request_id;
    let frame = buf.split_to(info.frame_len).freeze();
    match decode(&info, &frame) {
        Ok(frame) => Ok(Some(Envelope { request_id, frame })),
        Err(error) => Err(WireError::Payload { request_id, error }),
    }
}
