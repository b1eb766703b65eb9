//! Every frame round-trips: encode, check, decode gives the same frame and the same bytes.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use quiver_wire::*;

use crate::strategies;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_frame_round_trips(frame in strategies::frame(), request_id in any::<u32>()) {
        let mut buf = BytesMut::new();
        frame.encode(request_id, &mut buf).expect("generated frames are within limits");
        let info = check(&buf).expect("an encoded frame passes check");
        prop_assert_eq!(info.frame_len, buf.len());
        prop_assert_eq!(info.header.request_id, request_id);
        prop_assert_eq!(info.header.frame_type, frame.frame_type());
        let bytes = buf.freeze();
        let decoded = decode(&info, &bytes).expect("an encoded frame decodes");
        prop_assert_eq!(&decoded, &frame);
        let mut again = BytesMut::new();
        decoded.encode(request_id, &mut again).expect("re-encode");
        prop_assert_eq!(again.freeze(), bytes);
    }

    #[test]
    fn shared_body_with_prefix_equals_the_encoded_frame(
        body in strategies::event_batch_body(),
        subscription_id in 1..=u32::MAX,
    ) {
        let mut whole = BytesMut::new();
        encode(0, &EventBatch { subscription_id, body: body.clone() }, &mut whole).expect("encode");
        let mut spliced = BytesMut::from(&body.prefix(subscription_id)[..]);
        spliced.extend_from_slice(body.as_bytes());
        prop_assert_eq!(&whole, &spliced);
        let Some(Envelope { frame: Frame::EventBatch(batch), .. }) = decode_next(&mut spliced).expect("decodes") else {
            return Err(TestCaseError::fail("not an event batch"));
        };
        prop_assert_eq!(batch.body.events().count(), body.count());
    }

    #[test]
    fn events_iterate_back_to_what_was_encoded(
        stream in strategies::stream_name(),
        events in proptest::collection::vec(
            (any::<u64>(), any::<u64>(), strategies::headers(), proptest::collection::vec(any::<u8>(), 0..40)),
            1..8,
        ),
    ) {
        let events: Vec<Event> = events
            .into_iter()
            .map(|(sequence, timestamp_ms, headers, payload)| Event { sequence, timestamp_ms, headers, payload: Bytes::from(payload) })
            .collect();
        let mut scratch = BytesMut::new();
        let body = EventBatchBody::encode(&stream, &events, &mut scratch).expect("encode");
        prop_assert_eq!(body.stream(), &stream);
        prop_assert_eq!(&body.events().collect::<Vec<_>>(), &events);
        for (borrowed, owned) in body.event_refs().zip(&events) {
            prop_assert_eq!(borrowed.sequence, owned.sequence);
            prop_assert_eq!(borrowed.timestamp_ms, owned.timestamp_ms);
            prop_assert_eq!(borrowed.payload, &owned.payload[..]);
            prop_assert!(borrowed.headers().eq(owned.headers.iter()));
        }
        prop_assert_eq!(body.event_refs().count(), events.len());
    }
}
