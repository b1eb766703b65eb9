//! Hard limits of protocol version 1. Each is checked before anything is allocated or
//! sliced; `docs/wire-protocol.md` section 8 gives the same table.

/// Length of the fixed frame header; read before anything else.
pub const HEADER_LEN: usize = 16;

/// Largest payload of one frame. Bounds one connection's read buffer while leaving room for
/// a full batch of 256 B to 4 KiB messages. A server may announce less in HelloOk.
pub const MAX_FRAME_LEN: usize = 8 * 1024 * 1024;

/// Largest payload of one message (NATS's default). Bigger blobs belong in the cache or a
/// log, not in a live stream.
pub const MAX_MESSAGE_LEN: usize = 1024 * 1024;

/// Most messages in a PublishBatch or events in an EventBatch: bounds per-batch work and
/// latency, and fits the `u16` count.
pub const MAX_BATCH_COUNT: usize = 4096;

/// Longest stream name or pattern: fits the `u8` length; names are hashed and compared on
/// every publish.
pub const MAX_NAME_LEN: usize = 255;

/// Longest level of a name (and longest queue group name).
pub const MAX_LEVEL_LEN: usize = 64;

/// Fewest levels of a name: `tenant/namespace/stream`.
pub const MIN_NAME_LEVELS: usize = 3;

/// Most levels of a name: bounds wildcard matching work.
pub const MAX_NAME_LEVELS: usize = 8;

/// Most headers on one message: headers are metadata, not a second payload.
pub const MAX_HEADER_COUNT: usize = 32;

/// Longest header key: fits its `u8` length.
pub const MAX_HEADER_KEY_LEN: usize = 255;

/// Longest header value.
pub const MAX_HEADER_VALUE_LEN: usize = 4096;

/// Longest client or server name in Hello/HelloOk: fits its `u8` length.
pub const MAX_CLIENT_NAME_LEN: usize = 255;

/// Longest auth token: room for a JWT, not for a document.
pub const MAX_AUTH_TOKEN_LEN: usize = 4096;

/// Longest Hello payload: versions, capabilities, the longest client name and auth token
/// with their length prefixes. A server reads no more than this before a Hello.
pub const MAX_HELLO_LEN: usize = 1 + 1 + 8 + 1 + MAX_CLIENT_NAME_LEN + 2 + MAX_AUTH_TOKEN_LEN;

/// Longest error or goodbye message: a sentence, not a log.
pub const MAX_ERROR_TEXT_LEN: usize = 1024;

/// Longest cache key: keys are identifiers; fits the `u16` length.
pub const MAX_CACHE_KEY_LEN: usize = 16 * 1024;

/// Largest cache value: a value plus its key fits in one frame.
pub const MAX_CACHE_VALUE_LEN: usize = 4 * 1024 * 1024;

/// Most keys in one CacheDelete.
pub const MAX_DELETE_KEYS: usize = 1024;

/// Most offset ranges in one GroupAck or GroupNack.
pub const MAX_ACK_RANGES: usize = 4096;

/// Most streams in one StreamList page (a page is cut short, with `more` set, when the
/// next entry would not fit one frame).
pub const MAX_LIST_STREAMS: usize = 1024;

/// Most groups in one GroupList or StreamInfo.
pub const MAX_GROUPS_LISTED: usize = 256;

/// Most members listed per group in a GroupList (the count says how many there are).
pub const MAX_MEMBERS_LISTED: usize = 256;

/// Longest group member name.
pub const MAX_MEMBER_NAME_LEN: usize = 64;

/// Most streams one Subscribe resumes at their own offsets.
pub const MAX_RESUME_STREAMS: usize = 1024;

/// Largest UDP payload either QUIC endpoint accepts, and the ceiling of its path MTU
/// discovery (QUIC's own default is 1452, for Ethernet). On paths that carry larger
/// datagrams (loopback, jumbo frames) each packet then holds up to four times the stream
/// data, so the per-packet work (packet protection, acknowledgements, loss bookkeeping) is
/// paid four times less often; on a 1500-byte path discovery stops where it did before.
/// The ceiling is what fits a send batch: the QUIC library sends up to
/// [`QUIC_SEND_BATCH_DATAGRAMS`] datagrams in one segmentation-offload write, which the
/// kernel refuses above 65,507 bytes (an IPv4 packet), and a refused batch is lost.
pub const QUIC_MAX_UDP_PAYLOAD_BYTES: u16 = 6_500;

/// Receive buffer each QUIC endpoint asks the kernel for on its UDP socket. Datagrams that
/// arrive while the buffer is full are dropped, and QUIC answers a loss by cutting its
/// sending rate: the kernel's usual default (208 KiB, about 32 datagrams of
/// [`QUIC_MAX_UDP_PAYLOAD_BYTES`]) is less than one window of a fast sender. The kernel
/// grants at most `net.core.rmem_max`.
pub const QUIC_UDP_RECEIVE_BUFFER_BYTES: usize = 4 << 20;

/// Most datagrams the QUIC library (quinn 0.11) puts in one segmentation-offload write.
pub const QUIC_SEND_BATCH_DATAGRAMS: usize = 10;

/// Bytes a Publish needs besides its payload and headers: name, ack, payload length.
const PUBLISH_OVERHEAD: usize = 1 + MAX_NAME_LEN + 1 + 4;

/// Largest encoded header block.
pub(crate) const MAX_HEADERS_BLOCK_LEN: usize =
    1 + MAX_HEADER_COUNT * (1 + MAX_HEADER_KEY_LEN + 2 + MAX_HEADER_VALUE_LEN);

const _: () = assert!(MAX_MESSAGE_LEN + MAX_HEADERS_BLOCK_LEN + PUBLISH_OVERHEAD <= MAX_FRAME_LEN);
const _: () = assert!(MAX_CACHE_VALUE_LEN + MAX_CACHE_KEY_LEN + 2 + 8 + 4 <= MAX_FRAME_LEN);
const _: () = assert!(MAX_FRAME_LEN <= u32::MAX as usize);
const _: () = assert!(QUIC_MAX_UDP_PAYLOAD_BYTES as usize * QUIC_SEND_BATCH_DATAGRAMS <= 65_507);
const _: () = assert!(QUIC_MAX_UDP_PAYLOAD_BYTES >= 1_452);
const _: () = assert!(MAX_BATCH_COUNT <= u16::MAX as usize);
const _: () = assert!(MAX_DELETE_KEYS <= u16::MAX as usize);
const _: () = assert!(MAX_NAME_LEN <= u8::MAX as usize);
const _: () = assert!(MAX_HEADER_COUNT <= u8::MAX as usize);
const _: () = assert!(MAX_HEADER_KEY_LEN <= u8::MAX as usize);
const _: () = assert!(MAX_HEADER_VALUE_LEN <= u16::MAX as usize);
const _: () = assert!(MAX_CLIENT_NAME_LEN <= u8::MAX as usize);
const _: () = assert!(MAX_AUTH_TOKEN_LEN <= u16::MAX as usize);
const _: () = assert!(MAX_ERROR_TEXT_LEN <= u16::MAX as usize);
const _: () = assert!(MAX_CACHE_KEY_LEN <= u16::MAX as usize);
const _: () = assert!(MAX_LEVEL_LEN * MIN_NAME_LEVELS < MAX_NAME_LEN);
const _: () = assert!(MAX_ACK_RANGES <= u16::MAX as usize);
const _: () = assert!(MAX_LIST_STREAMS <= u16::MAX as usize);
const _: () = assert!(MAX_GROUPS_LISTED <= u16::MAX as usize);
const _: () = assert!(MAX_MEMBERS_LISTED <= u16::MAX as usize);
const _: () = assert!(MAX_MEMBER_NAME_LEN <= u8::MAX as usize);
const _: () = assert!(MAX_RESUME_STREAMS <= u16::MAX as usize);
// A full GroupList and a full resume list fit one frame. (A StreamList page is cut short,
// with its `more` flag set, when its next entry would not fit.)
const _: () = assert!(
    MAX_GROUPS_LISTED
        * (1 + MAX_LEVEL_LEN
            + 1
            + MAX_NAME_LEN
            + 100
            + MAX_MEMBERS_LISTED * (1 + MAX_MEMBER_NAME_LEN + 20))
        <= MAX_FRAME_LEN
);
const _: () = assert!(MAX_RESUME_STREAMS * (1 + MAX_NAME_LEN + 8) <= MAX_FRAME_LEN);
