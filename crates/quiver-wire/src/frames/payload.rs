//! The contract every typed frame implements, and small shared field codecs.

use bytes::{BufMut, BytesMut};

use crate::header::FrameType;
use crate::limits::MAX_NAME_LEN;
use crate::name::{StreamName, StreamPattern};
use crate::reader::{DecodeError, Reader};
use crate::writer::EncodeError;

/// One frame type's payload: how it is encoded and decoded. Implemented by every typed
/// frame; [`crate::encode`] writes the header around it.
pub trait FramePayload: Sized {
    /// The type byte.
    const TYPE: FrameType;

    /// The flag bits this type defines; others are unknown to it.
    const KNOWN_FLAGS: u16 = 0;

    /// The flag bits to put in the header (canonical: derived from the content).
    fn flags(&self) -> u16 {
        0
    }

    /// Appends the payload to `dst`, checking every limit.
    fn encode_payload(&self, dst: &mut BytesMut) -> Result<(), EncodeError>;

    /// Decodes the payload; `flags` holds only [`Self::KNOWN_FLAGS`] bits. The caller
    /// checks that the payload was consumed exactly.
    fn decode_payload(flags: u16, reader: &mut Reader) -> Result<Self, DecodeError>;
}

pub(crate) fn read_stream(
    reader: &mut Reader,
    field: &'static str,
) -> Result<StreamName, DecodeError> {
    let raw = reader.bytes8(field, MAX_NAME_LEN)?;
    StreamName::from_bytes(raw).map_err(|source| DecodeError::InvalidName { field, source })
}

pub(crate) fn read_pattern(
    reader: &mut Reader,
    field: &'static str,
) -> Result<StreamPattern, DecodeError> {
    let raw = reader.bytes8(field, MAX_NAME_LEN)?;
    StreamPattern::from_bytes(raw).map_err(|source| DecodeError::InvalidName { field, source })
}

/// Writes a validated name (at most [`MAX_NAME_LEN`] bytes, so its length fits `u8`).
pub(crate) fn put_name(dst: &mut BytesMut, raw: &[u8]) {
    debug_assert!(
        raw.len() <= MAX_NAME_LEN,
        "names are validated to {MAX_NAME_LEN} bytes"
    );
    dst.put_u8(raw.len() as u8);
    dst.put_slice(raw);
}

pub(crate) fn read_subscription_id(reader: &mut Reader) -> Result<u32, DecodeError> {
    match reader.u32("subscription id")? {
        0 => Err(DecodeError::UnknownValue {
            field: "subscription id",
            value: 0,
            allowed: "1..=4294967295",
        }),
        id => Ok(id),
    }
}

/// A frame with an empty payload.
macro_rules! empty_frame {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;

        impl $crate::frames::payload::FramePayload for $name {
            const TYPE: $crate::header::FrameType = $crate::header::FrameType::$name;

            fn encode_payload(&self, _dst: &mut bytes::BytesMut) -> Result<(), $crate::writer::EncodeError> {
                Ok(())
            }

            fn decode_payload(
                _flags: u16,
                _reader: &mut $crate::reader::Reader,
            ) -> Result<Self, $crate::reader::DecodeError> {
                Ok(Self)
            }
        }
    };
}

/// A frame whose payload is one non-zero subscription id.
macro_rules! subscription_id_frame {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            /// The subscription, as numbered by Subscribed (never 0).
            pub subscription_id: u32,
        }

        impl $crate::frames::payload::FramePayload for $name {
            const TYPE: $crate::header::FrameType = $crate::header::FrameType::$name;

            fn encode_payload(&self, dst: &mut bytes::BytesMut) -> Result<(), $crate::writer::EncodeError> {
                $crate::writer::put_subscription_id(dst, self.subscription_id)
            }

            fn decode_payload(
                _flags: u16,
                reader: &mut $crate::reader::Reader,
            ) -> Result<Self, $crate::reader::DecodeError> {
                let subscription_id = $crate::frames::payload::read_subscription_id(reader)?;
                Ok(Self { subscription_id })
            }
        }
    };
}

pub(crate) use {empty_frame, subscription_id_frame};
