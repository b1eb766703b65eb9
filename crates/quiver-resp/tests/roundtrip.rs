//! Any request encodes and decodes back, however the bytes arrive.

use bytes::BytesMut;
use proptest::prelude::*;
use quiver_resp::{Decoder, ParseError, Request};

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

fn request_args() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(arg(), 1..12)
}

fn encode(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    Request::from_args(args).encode(&mut out);
    out
}

fn decoded_args(request: &Request) -> Vec<Vec<u8>> {
    request.args().map(<[u8]>::to_vec).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn split_at_every_byte_boundary(args in request_args()) {
        let frame = encode(&args);
        let decoder = Decoder::default();
        for split in 0..frame.len() {
            prop_assert_eq!(decoder.check(&frame[..split]), Err(ParseError::Incomplete));
        }
        prop_assert_eq!(decoder.check(&frame), Ok(frame.len()));
        let mut buf = BytesMut::new();
        for split in 0..=frame.len() {
            buf.clear();
            buf.extend_from_slice(&frame[..split]);
            let first = decoder.decode(&mut buf).unwrap();
            buf.extend_from_slice(&frame[split..]);
            let request = match first {
                Some(request) => request,
                None => decoder.decode(&mut buf).unwrap().expect("whole frame buffered"),
            };
            prop_assert_eq!(decoded_args(&request), args.clone());
            prop_assert!(buf.is_empty());
        }
    }

    #[test]
    fn pipelines_in_arbitrary_chunks(
        requests in prop::collection::vec(request_args(), 1..16),
        chunk in 1usize..64,
    ) {
        let mut stream = Vec::new();
        for args in &requests {
            stream.extend(encode(args));
        }
        let decoder = Decoder::default();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for piece in stream.chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(request) = decoder.decode(&mut buf).unwrap() {
                got.push(decoded_args(&request));
            }
        }
        prop_assert_eq!(got, requests);
    }

    #[test]
    fn inline_words_decode_as_split(words in prop::collection::vec("[a-zA-Z0-9_:.-]{1,12}", 1..10)) {
        let line = format!("{}\r\n", words.join(" "));
        let mut buf = BytesMut::from(line.as_bytes());
        let request = Decoder::default().decode(&mut buf).unwrap().unwrap();
        let want: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        prop_assert_eq!(decoded_args(&request), want);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let decoder = Decoder::default();
        let mut buf = BytesMut::from(&bytes[..]);
        let mut rounds = 0;
        while let Ok(Some(_request)) = decoder.decode(&mut buf) {
            rounds += 1;
            prop_assert!(rounds <= bytes.len(), "every request consumes at least one byte");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every finite, normal double written as a hexadecimal float (its 53-bit mantissa and
    /// power of two, the digits shifted by a random amount) reads back exactly.
    #[test]
    fn hexadecimal_floats_read_back_exactly(bits in any::<u64>(), shift in 0u32..8) {
        let value = f64::from_bits(bits);
        prop_assume!(value.is_normal());
        let exponent = i64::from(((bits >> 52) & 0x7ff) as u32) - 1075;
        let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
        // The mantissa's digits moved `4 * shift` bits left, the power down as much.
        let text = format!(
            "{}0x{:x}p{}",
            if value < 0.0 { "-" } else { "" },
            u128::from(mantissa) << (4 * shift),
            exponent - 4 * i64::from(shift)
        );
        prop_assert_eq!(quiver_resp::num::parse_f64(text.as_bytes()), Some(value), "{}", text);
    }
}
