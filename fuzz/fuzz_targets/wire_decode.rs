//! Arbitrary bytes through the native protocol decoder: check + decode in a loop as a
//! transport would run it. Never panics, never loops: every step consumes a whole frame or
//! stops. Every frame that decodes re-encodes and decodes to the same frame.

#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver_wire::bytes::BytesMut;
use quiver_wire::limits::{self, HEADER_LEN};
use quiver_wire::{Frame, WireError, decode_next};

fuzz_target!(|data: &[u8]| {
    let mut buf = BytesMut::from(data);
    let max_steps = data.len() / HEADER_LEN + 1;
    for _ in 0..=max_steps {
        let before = buf.len();
        match decode_next(&mut buf) {
            Ok(Some(envelope)) => {
                if let Frame::EventBatch(batch) = &envelope.frame {
                    // A validated body iterates to exactly its count, both ways.
                    assert_eq!(batch.body.events().count(), batch.body.count());
                    assert_eq!(batch.body.event_refs().count(), batch.body.count());
                    for event in batch.body.event_refs() {
                        assert!(event.headers().count() <= limits::MAX_HEADER_COUNT);
                    }
                }
                assert!(
                    buf.len() + HEADER_LEN <= before,
                    "a frame consumes at least its header"
                );
                let mut out = BytesMut::new();
                envelope
                    .frame
                    .encode(envelope.request_id, &mut out)
                    .expect("a decoded frame re-encodes");
                let again = decode_next(&mut out)
                    .expect("re-encoded frame decodes")
                    .expect("whole frame");
                assert_eq!(again, envelope);
                assert!(out.is_empty());
            }
            Ok(None) | Err(WireError::Header(_)) => return,
            Err(error) => {
                assert!(
                    buf.len() + HEADER_LEN <= before,
                    "a bad payload is consumed"
                );
                let _ = (error.code(), error.request_id(), error.to_string());
            }
        }
    }
    panic!("decoding did not finish within {max_steps} steps");
});
