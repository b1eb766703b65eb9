#![no_main]
//! Arbitrary bytes into the RESP request decoder and typed command parser:
//! never panics, never loops (every decoded request consumes bytes).

use libfuzzer_sys::fuzz_target;
use quiver_resp::bytes::BytesMut;
use quiver_resp::{Decoder, Limits};
use quiver_server::resp::command::Command;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_query_buffer_bytes: 1 << 20,
        ..Limits::default()
    };
    for decoder in [Decoder::new(limits), Decoder::new(limits.unauthenticated())] {
        let mut buf = BytesMut::from(data);
        loop {
            let before = buf.len();
            match decoder.decode(&mut buf) {
                Ok(Some(request)) => {
                    assert!(buf.len() < before, "a decoded request consumed bytes");
                    if !request.is_empty() {
                        let _ = Command::parse(&request);
                    }
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
});
