//! A stream of frames cut at arbitrary points decodes to the same frames.

use bytes::BytesMut;
use proptest::collection::vec;
use proptest::prelude::*;
use quiver_wire::*;

use crate::strategies;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn frames_split_anywhere_decode_the_same(
        frames in vec((strategies::frame(), any::<u32>()), 1..8),
        cuts in vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut wire = BytesMut::new();
        for (frame, request_id) in &frames {
            frame.encode(*request_id, &mut wire).expect("encode");
        }
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(wire.len() + 1)).collect();
        points.push(wire.len());
        points.sort_unstable();
        let mut received = BytesMut::new();
        let mut decoded = Vec::new();
        let mut at = 0;
        for point in points {
            received.extend_from_slice(&wire[at..point]);
            at = point;
            while let Some(envelope) = decode_next(&mut received).expect("valid stream") {
                decoded.push((envelope.frame, envelope.request_id));
            }
        }
        prop_assert!(received.is_empty());
        prop_assert_eq!(decoded, frames);
    }
}
