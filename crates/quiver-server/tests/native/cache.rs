//! Cache frames through the SDK.

use std::time::Duration;

use quiver_core::streams::BrokerConfig;

use super::{NativeServer, Transport};

async fn set_get_delete_with_ttl(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    assert_eq!(client.cache_get("missing").await.expect("get"), None);
    client.cache_set("k", "v", None).await.expect("set");
    client
        .cache_set("short", "lived", Some(Duration::from_millis(50)))
        .await
        .expect("set with ttl");
    assert_eq!(
        client.cache_get("k").await.expect("get").as_deref(),
        Some(&b"v"[..])
    );
    assert_eq!(
        client.cache_get("short").await.expect("get").as_deref(),
        Some(&b"lived"[..])
    );
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(
        client.cache_get("short").await.expect("get"),
        None,
        "expired"
    );
    assert_eq!(
        client
            .cache_delete(["k", "short", "nope"])
            .await
            .expect("delete"),
        1
    );
    assert_eq!(client.cache_get("k").await.expect("get"), None);
    // Binary keys and an empty key, as in Redis.
    client
        .cache_set(vec![0u8, 255], vec![1u8, 2], None)
        .await
        .expect("binary");
    client
        .cache_set("", "empty key", None)
        .await
        .expect("empty key");
    assert_eq!(
        client
            .cache_get(vec![0u8, 255])
            .await
            .expect("get")
            .as_deref(),
        Some(&[1u8, 2][..])
    );
    assert_eq!(
        client.cache_get("").await.expect("get").as_deref(),
        Some(&b"empty key"[..])
    );
}

/// A value of the largest size: its reply is one frame larger than a connection's
/// (or a QUIC stream's) whole write queue, which still carries it.
async fn the_largest_value_goes_both_ways(transport: Transport) {
    let server = NativeServer::over(transport, BrokerConfig::default()).await;
    let client = server.client().await;
    let value = vec![7u8; quiver_wire::limits::MAX_CACHE_VALUE_LEN];
    client
        .cache_set("big", value.clone(), None)
        .await
        .expect("set");
    for _ in 0..3 {
        let read = client.cache_get("big").await.expect("get");
        assert_eq!(read.as_deref(), Some(&value[..]));
    }
}

super::over_both!(set_get_delete_with_ttl, the_largest_value_goes_both_ways,);
