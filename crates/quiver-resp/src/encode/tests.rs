//! Byte-exact RESP2 and RESP3 encodings.

use bytes::{Bytes, BytesMut};

use super::*;

fn both(reply: &Reply) -> (String, String) {
    let text = |p| String::from_utf8(reply.to_vec(p)).unwrap();
    (text(Protocol::Resp2), text(Protocol::Resp3))
}

fn check(reply: Reply, resp2: &str, resp3: &str) {
    assert_eq!(
        both(&reply),
        (resp2.to_owned(), resp3.to_owned()),
        "{reply:?}"
    );
}

#[test]
fn scalars() {
    check(Reply::ok(), "+OK\r\n", "+OK\r\n");
    check(
        Reply::Error(Bytes::from_static(b"ERR bad")),
        "-ERR bad\r\n",
        "-ERR bad\r\n",
    );
    check(Reply::Integer(-7), ":-7\r\n", ":-7\r\n");
    check(Reply::bulk("abc"), "$3\r\nabc\r\n", "$3\r\nabc\r\n");
    check(Reply::bulk(""), "$0\r\n\r\n", "$0\r\n\r\n");
    check(Reply::Null, "$-1\r\n", "_\r\n");
    check(Reply::NullArray, "*-1\r\n", "_\r\n");
    check(Reply::Boolean(true), ":1\r\n", "#t\r\n");
    check(Reply::Boolean(false), ":0\r\n", "#f\r\n");
    check(
        Reply::BigNumber(Bytes::from_static(
            b"3492890328409238509324850943850943825024385",
        )),
        "$43\r\n3492890328409238509324850943850943825024385\r\n",
        "(3492890328409238509324850943850943825024385\r\n",
    );
    check(
        Reply::Verbatim {
            format: *b"txt",
            text: Bytes::from_static(b"Some string"),
        },
        "$11\r\nSome string\r\n",
        "=15\r\ntxt:Some string\r\n",
    );
}

#[test]
fn doubles() {
    check(Reply::Double(1.5), "$3\r\n1.5\r\n", ",1.5\r\n");
    check(
        Reply::Double(0.1),
        "$19\r\n0.10000000000000001\r\n",
        ",0.10000000000000001\r\n",
    );
    check(Reply::Double(f64::INFINITY), "$3\r\ninf\r\n", ",inf\r\n");
    check(
        Reply::Double(f64::NEG_INFINITY),
        "$4\r\n-inf\r\n",
        ",-inf\r\n",
    );
    check(Reply::Double(10.0), "$2\r\n10\r\n", ",10\r\n");
}

#[test]
fn aggregates() {
    check(
        Reply::Array(vec![Reply::Integer(1), Reply::bulk("a")]),
        "*2\r\n:1\r\n$1\r\na\r\n",
        "*2\r\n:1\r\n$1\r\na\r\n",
    );
    check(Reply::Array(vec![]), "*0\r\n", "*0\r\n");
    check(
        Reply::Map(vec![
            (Reply::bulk("k"), Reply::Integer(1)),
            (Reply::bulk("j"), Reply::Null),
        ]),
        "*4\r\n$1\r\nk\r\n:1\r\n$1\r\nj\r\n$-1\r\n",
        "%2\r\n$1\r\nk\r\n:1\r\n$1\r\nj\r\n_\r\n",
    );
    check(
        Reply::Set(vec![Reply::bulk("x")]),
        "*1\r\n$1\r\nx\r\n",
        "~1\r\n$1\r\nx\r\n",
    );
    check(
        Reply::Push(vec![Reply::bulk("message"), Reply::bulk("c")]),
        "*2\r\n$7\r\nmessage\r\n$1\r\nc\r\n",
        ">2\r\n$7\r\nmessage\r\n$1\r\nc\r\n",
    );
}

#[test]
fn errors_stay_on_one_line() {
    check(
        Reply::Error(Bytes::from_static(b"ERR a\r\nb\nc")),
        "-ERR a  b c\r\n",
        "-ERR a  b c\r\n",
    );
}

#[test]
fn direct_writers_match_reply_tree() {
    let mut out = BytesMut::new();
    write_bulk(&mut out, b"value");
    write_integer(&mut out, i64::MIN);
    write_bulk_integer(&mut out, 42);
    out.extend_from_slice(OK);
    assert_eq!(
        &out[..],
        b"$5\r\nvalue\r\n:-9223372036854775808\r\n$2\r\n42\r\n+OK\r\n"
    );
    assert_eq!(Protocol::from_version(3), Some(Protocol::Resp3));
    assert_eq!(Protocol::from_version(4), None);
    assert_eq!(Protocol::Resp2.version(), 2);
}
