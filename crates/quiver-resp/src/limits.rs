//! Size limits applied while decoding requests, with Redis's defaults.

/// Redis's `proto-max-bulk-len` default: the largest single argument (512 MiB).
/// Larger bulk lengths are refused before any byte of the argument is read.
pub const DEFAULT_MAX_BULK_LEN_BYTES: usize = 512 * 1024 * 1024;

/// Redis's limit on the element count of one multibulk request (1024 * 1024).
/// Bounds the argument vector a peer can make the server allocate.
pub const DEFAULT_MAX_MULTIBULK_LEN: usize = 1024 * 1024;

/// Redis's `PROTO_INLINE_MAX_SIZE` (64 KiB): the longest inline request line,
/// and the longest `*N` / `$N` header line that may sit in the buffer without
/// its `\r`.
pub const DEFAULT_MAX_INLINE_LEN_BYTES: usize = 64 * 1024;

/// Redis's `client-query-buffer-limit` default (1 GiB): the most bytes a client
/// may have buffered while a request is still incomplete.
pub const DEFAULT_MAX_QUERY_BUFFER_BYTES: usize = 1024 * 1024 * 1024;

/// Redis's limit on the element count of a request from a client that has not
/// authenticated yet (when a password is required): enough for `AUTH` and
/// `HELLO ... AUTH user pass SETNAME name`, too few to make the server allocate.
pub const UNAUTHENTICATED_MAX_MULTIBULK_LEN: usize = 10;

/// Redis's limit on one argument from a client that has not authenticated yet.
pub const UNAUTHENTICATED_MAX_BULK_LEN_BYTES: usize = 16 * 1024;

// A header line must fit in the query buffer, or no request could ever be read.
const _: () = assert!(DEFAULT_MAX_INLINE_LEN_BYTES < DEFAULT_MAX_QUERY_BUFFER_BYTES);
const _: () = assert!(DEFAULT_MAX_BULK_LEN_BYTES < DEFAULT_MAX_QUERY_BUFFER_BYTES);
const _: () = assert!(UNAUTHENTICATED_MAX_MULTIBULK_LEN <= DEFAULT_MAX_MULTIBULK_LEN);
const _: () = assert!(UNAUTHENTICATED_MAX_BULK_LEN_BYTES <= DEFAULT_MAX_BULK_LEN_BYTES);

/// The limits one connection's decoder enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest bulk argument (`proto-max-bulk-len`).
    pub max_bulk_len_bytes: usize,
    /// Most elements in one multibulk request.
    pub max_multibulk_len: usize,
    /// Longest inline request line or header line.
    pub max_inline_len_bytes: usize,
    /// Most bytes buffered while one request is incomplete
    /// (`client-query-buffer-limit`).
    pub max_query_buffer_bytes: usize,
    /// The client has not authenticated while a password is required: Redis
    /// then also refuses more than [`UNAUTHENTICATED_MAX_MULTIBULK_LEN`]
    /// elements and arguments over [`UNAUTHENTICATED_MAX_BULK_LEN_BYTES`],
    /// with their own error texts.
    pub unauthenticated: bool,
}

impl Limits {
    /// Redis's defaults for an authenticated (or password-less) client.
    pub const REDIS_DEFAULT: Limits = Limits {
        max_bulk_len_bytes: DEFAULT_MAX_BULK_LEN_BYTES,
        max_multibulk_len: DEFAULT_MAX_MULTIBULK_LEN,
        max_inline_len_bytes: DEFAULT_MAX_INLINE_LEN_BYTES,
        max_query_buffer_bytes: DEFAULT_MAX_QUERY_BUFFER_BYTES,
        unauthenticated: false,
    };

    /// These limits, further restricted for a client that must still
    /// authenticate.
    pub fn unauthenticated(self) -> Limits {
        Limits {
            unauthenticated: true,
            ..self
        }
    }

    /// These limits for a client that has authenticated.
    pub fn authenticated(self) -> Limits {
        Limits {
            unauthenticated: false,
            ..self
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::REDIS_DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_redis_defaults() {
        let limits = Limits::default();
        assert_eq!(limits.max_bulk_len_bytes, 536_870_912);
        assert_eq!(limits.max_multibulk_len, 1_048_576);
        assert_eq!(limits.max_inline_len_bytes, 65_536);
        assert_eq!(limits.max_query_buffer_bytes, 1_073_741_824);
        assert!(!limits.unauthenticated);
        assert!(limits.unauthenticated().unauthenticated);
        assert!(!limits.unauthenticated().authenticated().unauthenticated);
    }
}
