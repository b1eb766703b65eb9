//! Unit tests of request decoding.

use bytes::{Bytes, BytesMut};

use super::*;
use crate::limits::Limits;

fn decoder() -> Decoder {
    Decoder::default()
}

fn decode_all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ParseError> {
    let mut buf = BytesMut::from(input);
    let mut out = Vec::new();
    while let Some(request) = decoder().decode(&mut buf)? {
        out.push(request.args().map(<[u8]>::to_vec).collect());
    }
    Ok(out)
}

fn args(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

fn err_text(input: &[u8]) -> String {
    decode_all(input).unwrap_err().to_string()
}

#[test]
fn multibulk_request() {
    let input = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
    assert_eq!(decoder().check(input), Ok(input.len()));
    assert_eq!(
        decode_all(input).unwrap(),
        vec![args(&["SET", "key", "value"])]
    );
}

#[test]
fn arguments_share_the_frame() {
    let frame = Bytes::from_static(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    let request = decoder().parse(frame.clone()).unwrap();
    assert_eq!(request.data().as_ptr(), frame.as_ptr());
    assert_eq!(request.arg_bytes(1).unwrap().as_ptr(), frame[17..].as_ptr());
}

#[test]
fn pipeline_of_mixed_requests() {
    let input = b"*1\r\n$4\r\nPING\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\nGET a\n";
    assert_eq!(
        decode_all(input).unwrap(),
        vec![
            args(&["PING"]),
            args(&["PING"]),
            args(&["ECHO", ""]),
            args(&["GET", "a"])
        ]
    );
}

#[test]
fn every_prefix_is_incomplete() {
    let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n";
    for end in 0..input.len() {
        assert_eq!(
            decoder().check(&input[..end]),
            Err(ParseError::Incomplete),
            "prefix {end}"
        );
    }
    assert_eq!(decoder().check(input), Ok(input.len()));
}

#[test]
fn empty_requests_are_decoded_empty() {
    for input in [
        &b"*0\r\n"[..],
        b"*-1\r\n",
        b"*-10\r\n",
        b"\r\n",
        b"\n",
        b"   \r\n",
    ] {
        let requests = decode_all(input).unwrap();
        assert_eq!(
            requests,
            vec![Vec::<Vec<u8>>::new()],
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn protocol_error_texts_are_redis_texts() {
    assert_eq!(
        err_text(b"*20000000\r\n"),
        "ERR Protocol error: invalid multibulk length"
    );
    assert_eq!(
        err_text(b"*abc\r\n"),
        "ERR Protocol error: invalid multibulk length"
    );
    assert_eq!(
        err_text(b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n"),
        "ERR Protocol error: expected '$', got 'f'"
    );
    assert_eq!(
        err_text(b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n"),
        "ERR Protocol error: invalid bulk length"
    );
    assert_eq!(
        err_text(b"*1\r\n$2000000000\r\n"),
        "ERR Protocol error: invalid bulk length"
    );
    assert_eq!(
        err_text(b"*1\r\n$1x\r\n"),
        "ERR Protocol error: invalid bulk length"
    );
    assert_eq!(
        err_text(b"SET a \"foo\r\n"),
        "ERR Protocol error: unbalanced quotes in request"
    );
    assert_eq!(
        err_text(b"SET a \"foo\"bar\r\n"),
        "ERR Protocol error: unbalanced quotes in request"
    );
    assert_eq!(
        err_text(b"SET a 'foo\n"),
        "ERR Protocol error: unbalanced quotes in request"
    );
    let long = vec![b'a'; 64 * 1024 + 1];
    assert_eq!(
        err_text(&long),
        "ERR Protocol error: too big inline request"
    );
    let mut count = b"*".to_vec();
    count.extend(vec![b'1'; 64 * 1024 + 1]);
    assert_eq!(
        err_text(&count),
        "ERR Protocol error: too big mbulk count string"
    );
    let mut bulk = b"*1\r\n$".to_vec();
    bulk.extend(vec![b'1'; 64 * 1024 + 1]);
    assert_eq!(
        err_text(&bulk),
        "ERR Protocol error: too big bulk count string"
    );
}

#[test]
fn limits_are_configurable_and_checked_before_data() {
    let limits = Limits {
        max_bulk_len_bytes: 4,
        max_multibulk_len: 2,
        max_inline_len_bytes: 8,
        ..Limits::default()
    };
    let d = Decoder::new(limits);
    assert_eq!(d.check(b"*1\r\n$4\r\nPING\r\n"), Ok(14));
    assert_eq!(d.check(b"*1\r\n$5\r\n"), Err(ParseError::InvalidBulkLength));
    assert_eq!(d.check(b"*3\r\n"), Err(ParseError::InvalidMultibulkLength));
    assert_eq!(d.check(b"PING 123"), Err(ParseError::Incomplete));
    assert_eq!(d.check(b"PING 1234"), Err(ParseError::TooBigInline));
    assert_eq!(d.check(b"PING 123\n"), Ok(9));
    let small = Decoder::new(Limits {
        max_query_buffer_bytes: 16,
        ..Limits::default()
    });
    assert_eq!(
        small.check(b"*1\r\n$100\r\n0123456789"),
        Err(ParseError::QueryBufferLimit {
            buffered_bytes: 20,
            limit_bytes: 16
        })
    );
}

#[test]
fn unauthenticated_limits() {
    let d = Decoder::new(Limits::default().unauthenticated());
    assert_eq!(
        d.check(b"*11\r\n"),
        Err(ParseError::UnauthenticatedMultibulkLength)
    );
    assert_eq!(
        d.check(b"*2\r\n$4\r\nAUTH\r\n$16385\r\n"),
        Err(ParseError::UnauthenticatedBulkLength)
    );
    assert_eq!(
        d.check(b"*20000000\r\n"),
        Err(ParseError::InvalidMultibulkLength)
    );
    assert_eq!(
        ParseError::UnauthenticatedMultibulkLength.to_string(),
        "ERR Protocol error: unauthenticated multibulk length"
    );
    assert_eq!(d.check(b"*10\r\n"), Err(ParseError::Incomplete));
}

#[test]
fn inline_splitting_follows_sdssplitargs() {
    let cases: &[(&[u8], &[&[u8]])] = &[
        (b"set a b\r\n", &[b"set", b"a", b"b"]),
        (b"  set \t a   b  \n", &[b"set", b"a", b"b"]),
        (b"set \"a b\" 'c d'\r\n", &[b"set", b"a b", b"c d"]),
        (
            b"set \"\\x41\\n\\t\\\\\\\"\" x\n",
            &[b"set", b"A\n\t\\\"", b"x"],
        ),
        (b"set \"\\x4g\" x\n", &[b"set", b"x4g", b"x"]),
        (b"set 'it\\'s' \"\"\n", &[b"set", b"it's", b""]),
        (b"set a\"b c\"\n", &[b"set", b"ab c"]),
        (b"echo 'a\\nb'\n", &[b"echo", b"a\\nb"]),
        (b"get a\0ignored\n", &[b"get", b"a"]),
        (b"get \x0bkey\n", &[b"get", b"key"]),
    ];
    for (input, want) in cases {
        let got = decode_all(input).unwrap();
        let want: Vec<Vec<u8>> = want.iter().map(|a| a.to_vec()).collect();
        assert_eq!(got, vec![want], "{:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn parse_never_reads_past_a_bad_frame() {
    for input in [
        &b"*"[..],
        b"*1",
        b"*1\r",
        b"*1\r\n$",
        b"*1\r\n$3\r\nab",
        b"\"",
        b"x",
    ] {
        assert_eq!(
            decoder().parse(Bytes::copy_from_slice(input)).unwrap_err(),
            ParseError::Incomplete
        );
    }
}
