//! The cache servers `quiver-bench cache` can drive, behind one small enum: Quiver through
//! `quiver-client` (TCP or QUIC; the SDK multiplexes requests on one connection by
//! request id) and Redis through the `redis` crate's multiplexed connection (requests from
//! many tasks pipelined on one connection). Both clients therefore carry the same load
//! shape: many requests in flight on one connection, replies matched to their callers.

use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use quiver_client::{Client, ClientOptions};

/// Longest one request may wait for its reply before it counts as an error: far above any
/// latency worth measuring, far below a whole run.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a connection (TCP, or QUIC and TLS handshakes, and Hello) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Which system a `--target` URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    /// `quiver://` (TCP) or `quiver+quic://` (QUIC).
    Quiver,
    /// `redis://`.
    Redis,
}

impl CacheKind {
    /// The kind of `url`, from its scheme.
    pub fn of(url: &str) -> anyhow::Result<CacheKind> {
        if url.starts_with("quiver://") || url.starts_with("quiver+quic://") {
            Ok(CacheKind::Quiver)
        } else if url.starts_with("redis://") {
            Ok(CacheKind::Redis)
        } else {
            bail!(
                "unsupported --target {url:?}: expected quiver://host:port, quiver+quic://host:port?fingerprint=<hex> or redis://host:port"
            )
        }
    }
}

/// What a GET found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Hit,
    Miss,
}

/// One connection, shared (cloned) by the tasks that issue requests on it.
#[derive(Clone)]
pub enum CacheClient {
    Quiver(Client),
    Redis(redis::aio::MultiplexedConnection),
}

impl CacheClient {
    pub async fn connect(kind: CacheKind, url: &str) -> anyhow::Result<CacheClient> {
        Ok(match kind {
            CacheKind::Quiver => {
                let options = ClientOptions::default()
                    .reconnect(false)
                    .request_timeout(REQUEST_TIMEOUT);
                let client = Client::connect_with(url, options)
                    .await
                    .with_context(|| format!("connecting to {url}"))?;
                CacheClient::Quiver(client)
            }
            CacheKind::Redis => {
                let client =
                    redis::Client::open(url).with_context(|| format!("bad --target {url:?}"))?;
                // The crate's default response timeout (500 ms) would turn a slow reply
                // into an error; the bench measures it instead.
                let config = redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(REQUEST_TIMEOUT));
                let connection = client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .with_context(|| format!("connecting to {url}"))?;
                CacheClient::Redis(connection)
            }
        })
    }

    /// Sets `key` to `value`, with a TTL when `ttl_ms` is given.
    pub async fn set(
        &mut self,
        key: &Bytes,
        value: &Bytes,
        ttl_ms: Option<u64>,
    ) -> Result<(), String> {
        match self {
            CacheClient::Quiver(client) => client
                .cache_set(
                    key.clone(),
                    value.clone(),
                    ttl_ms.map(Duration::from_millis),
                )
                .await
                .map_err(|error| error.to_string()),
            CacheClient::Redis(connection) => {
                let mut cmd = redis::cmd("SET");
                cmd.arg(&key[..]).arg(&value[..]);
                if let Some(ttl_ms) = ttl_ms {
                    cmd.arg("PX").arg(ttl_ms);
                }
                cmd.query_async::<()>(connection)
                    .await
                    .map_err(|error| error.to_string())
            }
        }
    }

    /// Reads `key`; whether it was there.
    pub async fn get(&mut self, key: &Bytes) -> Result<Found, String> {
        let found = match self {
            CacheClient::Quiver(client) => client
                .cache_get(key.clone())
                .await
                .map_err(|error| error.to_string())?
                .is_some(),
            CacheClient::Redis(connection) => redis::cmd("GET")
                .arg(&key[..])
                .query_async::<Option<Vec<u8>>>(connection)
                .await
                .map_err(|error| error.to_string())?
                .is_some(),
        };
        Ok(if found { Found::Hit } else { Found::Miss })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_scheme() {
        assert_eq!(
            CacheKind::of("quiver://127.0.0.1:1").ok(),
            Some(CacheKind::Quiver)
        );
        assert_eq!(
            CacheKind::of("quiver+quic://127.0.0.1:1?fingerprint=ab").ok(),
            Some(CacheKind::Quiver)
        );
        assert_eq!(
            CacheKind::of("redis://127.0.0.1:1").ok(),
            Some(CacheKind::Redis)
        );
        let error = CacheKind::of("nats://127.0.0.1:1").expect_err("not a cache");
        assert!(error.to_string().contains("nats://"), "{error}");
    }
}
