//! Cache frames over the native protocol: CacheGet, CacheSet (with TTL) and CacheDelete
//! against database 0 of the node's cache, the one the RESP listener serves.

use quiver_core::cache::{BUSY_TEXT, Cache, OpError, SetExpiry, SetOptions};
use quiver_wire::{
    CacheDelete, CacheDeleted, CacheGet, CacheNotFound, CacheOk, CacheSet, CacheValue, ErrorCode,
    ErrorFrame,
};

use super::writer::Outgoing;
use crate::clock::unix_ms;

/// The database native cache frames address (Redis's default database).
const NATIVE_DB: usize = 0;

/// Answers CacheGet.
pub fn get(cache: &Cache, request_id: u32, request: &CacheGet) -> Outgoing {
    let result = cache
        .db(NATIVE_DB)
        .and_then(|mut db| db.get(&request.key, unix_ms()));
    // A read may expire the key.
    cache.after_command();
    match result {
        Ok(Some(value)) if value.len() > quiver_wire::limits::MAX_CACHE_VALUE_LEN => {
            let message = format!(
                "the value is {} bytes, over the native protocol's {} (MAX_CACHE_VALUE_LEN); read it over RESP or HTTP",
                value.len(),
                quiver_wire::limits::MAX_CACHE_VALUE_LEN
            );
            let frame = ErrorFrame::new(ErrorCode::LIMIT_EXCEEDED, &message);
            Outgoing::encode(request_id, &frame)
        }
        Ok(Some(value)) => Outgoing::encode(request_id, &CacheValue { value }),
        Ok(None) => Outgoing::encode(request_id, &CacheNotFound),
        Err(error) => Outgoing::encode(request_id, &op_error(&error)),
    }
}

/// Answers CacheSet; a TTL of 0 stores the value without expiry.
pub fn set(cache: &Cache, request_id: u32, request: &CacheSet) -> Outgoing {
    let now_ms = unix_ms();
    let expiry = match request.ttl_ms {
        0 => SetExpiry::Clear,
        ttl_ms => match SetExpiry::after(now_ms, ttl_ms) {
            Some(expiry) => expiry,
            None => {
                let message = format!(
                    "ttl {ttl_ms} ms is too large: the expiry time must fit in 63 bits of unix milliseconds (at most {} ms from now)",
                    i64::MAX as u64 - now_ms
                );
                let frame = ErrorFrame::new(ErrorCode::INVALID_ARGUMENT, &message);
                return Outgoing::encode(request_id, &frame);
            }
        },
    };
    let options = SetOptions {
        expiry,
        ..SetOptions::default()
    };
    let result = cache
        .db(NATIVE_DB)
        .and_then(|mut db| db.set(&request.key, &request.value, options, now_ms));
    cache.after_command();
    match result {
        Ok(_) => Outgoing::encode(request_id, &CacheOk),
        Err(error) => Outgoing::encode(request_id, &op_error(&error)),
    }
}

/// Answers CacheDelete with the number of keys that existed.
pub fn delete(cache: &Cache, request_id: u32, request: &CacheDelete) -> Outgoing {
    let keys: Vec<&[u8]> = request.keys.iter().map(|key| &key[..]).collect();
    match cache.db(NATIVE_DB) {
        Ok(mut db) => {
            let count = db.del(&keys, unix_ms());
            cache.after_command();
            let count = u32::try_from(count).unwrap_or(u32::MAX);
            Outgoing::encode(request_id, &CacheDeleted { count })
        }
        Err(error) => Outgoing::encode(request_id, &op_error(&error)),
    }
}

/// Runs `op` on the keyspace once a script no longer holds it, without holding this
/// thread meanwhile; refused (`OVERLOADED`) while a script is busy.
pub async fn unheld(cache: &Cache, request_id: u32, op: impl FnOnce() -> Outgoing) -> Outgoing {
    if !cache.hold().enter().await {
        return Outgoing::encode(
            request_id,
            &ErrorFrame::new(ErrorCode::OVERLOADED, BUSY_TEXT),
        );
    }
    op()
}

/// Makes a write, refused while persistence fails (RESP's MISCONF); the reply comes once
/// what it changed is as durable as `appendfsync` promises, an error frame instead if it
/// could not be journaled.
pub async fn write(cache: &Cache, request_id: u32, make: impl FnOnce() -> Outgoing) -> Outgoing {
    let reply = unheld(cache, request_id, || {
        if cache.refuses_writes() {
            let message =
                "writes are refused: the cache cannot persist to disk (see the server log)";
            return Outgoing::encode(request_id, &ErrorFrame::new(ErrorCode::INTERNAL, message));
        }
        make()
    })
    .await;
    match cache.wait_durable(0).await {
        Ok(()) => reply,
        Err(error) => Outgoing::encode(
            request_id,
            &ErrorFrame::new(ErrorCode::INTERNAL, &error.to_string()),
        ),
    }
}

fn op_error(error: &OpError) -> ErrorFrame {
    let code = match error {
        OpError::OutOfMemory => ErrorCode::OVERLOADED,
        OpError::WrongType => ErrorCode::UNSUPPORTED,
        _ => ErrorCode::INTERNAL,
    };
    ErrorFrame::new(code, &error.to_string())
}
