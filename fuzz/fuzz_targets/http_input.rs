#![no_main]
//! Feeds arbitrary bytes to the HTTP gateway's parsers of request input: a path under
//! `/v1/streams/` (route words, %-escapes), the route label of any path, an NDJSON publish
//! batch and a `Last-Event-ID` header. Each must accept or refuse with an error, never
//! panic; a %-escaped byte string decodes to itself; an accepted batch holds 1 to 1000
//! messages.

use libfuzzer_sys::fuzz_target;
use quiver_server::http::gateway::inputs::{
    StreamRoute, classify, parse_batch, parse_last_event_id, parse_route, percent_decode,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(route) = parse_route(&text) {
        let name = match &route {
            StreamRoute::Stream(name) | StreamRoute::Messages(name) | StreamRoute::Events(name) => {
                name
            }
            StreamRoute::Group { stream, .. } => stream,
        };
        assert!(
            name.len() <= text.len(),
            "a route's name comes from the path"
        );
    }
    let _ = classify(&axum::http::Method::POST, &format!("/v1/streams/{text}"));
    let escaped: String = data.iter().map(|b| format!("%{b:02X}")).collect();
    assert_eq!(percent_decode(&escaped).as_deref(), Some(data));
    if let Ok(messages) = parse_batch(data, &[]) {
        assert!((1..=1000).contains(&messages.len()));
    }
    let _ = parse_last_event_id(&text);
});
