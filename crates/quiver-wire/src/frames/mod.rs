//! One type per frame, and [`Frame`], the union of them all.

mod admin;
mod cache;
mod connection;
mod event_batch;
mod groups;
pub(crate) mod payload;
mod publish;
mod subscribe;

use bytes::{Bytes, BytesMut};

pub use admin::{
    CreateStream, DeleteStream, DescribeStream, ListStreams, MAX_INTERVAL_MS, Policy, Storage,
    StreamDeleted, StreamInfo, StreamList, StreamSettings,
};
pub use cache::{
    CacheDelete, CacheDeleted, CacheGet, CacheNotFound, CacheOk, CacheSet, CacheValue,
};
pub use connection::{
    Capabilities, ErrorFrame, Goodbye, Hello, HelloOk, Ping, Pong, negotiate_version,
};
pub use event_batch::{
    EVENT_BATCH_PREFIX_LEN, Event, EventBatch, EventBatchBody, EventBatchEncoder, EventRef,
    EventRefs, Events,
};
pub use groups::{
    DeleteGroup, DescribeGroups, GroupAck, GroupAcked, GroupDeleted, GroupEvent, GroupEventBatch,
    GroupList, GroupNack, GroupSettings, GroupSummary, JoinGroup, MemberSummary, OffsetRange,
    ResetGroup,
};
pub use payload::FramePayload;
pub use publish::{AckMode, Message, Publish, PublishAck, PublishBatch};
pub use subscribe::{
    Lag, StartPosition, Subscribe, Subscribed, SubscriptionEnded, Unsubscribe, Unsubscribed,
};

use crate::header::{FrameType, REQUIRED_FLAGS_MASK};
use crate::reader::{DecodeError, Reader};
use crate::writer::EncodeError;

macro_rules! frame_enum {
    ($($variant:ident($ty:ty),)*) => {
        /// Any frame of protocol version 1.
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Frame {
            $(
                #[allow(missing_docs)]
                $variant($ty),
            )*
        }

        impl Frame {
            /// The frame's type byte.
            pub fn frame_type(&self) -> FrameType {
                match self {
                    $(Self::$variant(_) => <$ty as FramePayload>::TYPE,)*
                }
            }

            /// Encodes the frame with `request_id` at the end of `dst`.
            pub fn encode(&self, request_id: u32, dst: &mut BytesMut) -> Result<(), EncodeError> {
                match self {
                    $(Self::$variant(frame) => crate::codec::encode(request_id, frame, dst),)*
                }
            }

            /// Decodes a payload of type `frame_type` with header `flags`.
            pub fn decode_payload(frame_type: FrameType, flags: u16, payload: &Bytes) -> Result<Self, DecodeError> {
                Self::decode_at(frame_type, flags, payload, 0)
            }

            /// Decodes the payload that starts at `start` in `buf` and runs to its end.
            pub(crate) fn decode_at(frame_type: FrameType, flags: u16, buf: &Bytes, start: usize) -> Result<Self, DecodeError> {
                match frame_type {
                    $(<$ty as FramePayload>::TYPE => decode_at::<$ty>(flags, buf, start).map(Self::$variant),)*
                }
            }
        }

        $(
            impl From<$ty> for Frame {
                fn from(frame: $ty) -> Self {
                    Self::$variant(frame)
                }
            }
        )*
    };
}

frame_enum! {
    Hello(Hello),
    HelloOk(HelloOk),
    Ping(Ping),
    Pong(Pong),
    Error(ErrorFrame),
    Goodbye(Goodbye),
    Publish(Publish),
    PublishBatch(PublishBatch),
    PublishAck(PublishAck),
    Subscribe(Subscribe),
    Subscribed(Subscribed),
    Unsubscribe(Unsubscribe),
    Unsubscribed(Unsubscribed),
    EventBatch(EventBatch),
    Lag(Lag),
    SubscriptionEnded(SubscriptionEnded),
    CacheGet(CacheGet),
    CacheSet(CacheSet),
    CacheDelete(CacheDelete),
    CacheValue(CacheValue),
    CacheNotFound(CacheNotFound),
    CacheOk(CacheOk),
    CacheDeleted(CacheDeleted),
    CreateStream(CreateStream),
    StreamInfo(StreamInfo),
    DescribeStream(DescribeStream),
    DeleteStream(DeleteStream),
    StreamDeleted(StreamDeleted),
    ListStreams(ListStreams),
    StreamList(StreamList),
    JoinGroup(JoinGroup),
    GroupEventBatch(GroupEventBatch),
    GroupAck(GroupAck),
    GroupNack(GroupNack),
    GroupAcked(GroupAcked),
    DescribeGroups(DescribeGroups),
    GroupList(GroupList),
    ResetGroup(ResetGroup),
    DeleteGroup(DeleteGroup),
    GroupDeleted(GroupDeleted),
}

/// Decodes one typed payload: rejects unknown required flags, ignores unknown optional
/// ones, and requires the payload to be consumed exactly.
pub fn decode_typed<F: FramePayload>(flags: u16, payload: &Bytes) -> Result<F, DecodeError> {
    decode_at(flags, payload, 0)
}

fn decode_at<F: FramePayload>(flags: u16, buf: &Bytes, start: usize) -> Result<F, DecodeError> {
    let unknown_required = flags & !F::KNOWN_FLAGS & REQUIRED_FLAGS_MASK;
    if unknown_required != 0 {
        return Err(DecodeError::UnsupportedFlags {
            frame_type: F::TYPE,
            flags: unknown_required,
        });
    }
    let mut reader = Reader::new(buf, start);
    let frame = F::decode_payload(flags & F::KNOWN_FLAGS, &mut reader)?;
    reader.finish(F::TYPE)?;
    Ok(frame)
}
