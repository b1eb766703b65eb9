//! Typed command parsing over generated requests: every table command, with
//! option words, numbers and junk in any order, parses or fails with an error
//! reply, never panics.

use bytes::Bytes;
use proptest::prelude::*;
use quiver_resp::{CommandError, ErrorCode, Protocol, Reply, Request};
use quiver_server::resp::command::Command;
use quiver_server::resp::table;

const WORDS: &[&str] = &[
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "KEEPTTL",
    "GET",
    "PERSIST",
    "MATCH",
    "COUNT",
    "TYPE",
    "LIMIT",
    "WITHSCORES",
    "BYSCORE",
    "BYLEX",
    "REV",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "RANK",
    "MAXLEN",
    "AUTH",
    "SETNAME",
    "ID",
    "SKIPME",
    "yes",
    "no",
    "ADDR",
    "DB",
    "REPLACE",
    "SAMPLES",
    "ASYNC",
    "SYNC",
    "FILTERBY",
    "PATTERN",
    "WITHVALUES",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "1.5",
    "-inf",
    "+inf",
    "(1",
    "[a",
    "(a",
    "-",
    "+",
    "nan",
    "9223372036854775807",
    "-9223372036854775808",
    "",
    "key",
    "*",
];

fn word() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(WORDS).prop_map(|w| w.as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..6),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    let names: Vec<&'static str> = table::commands().iter().map(|spec| spec.name).collect();
    let subs: Vec<&'static str> = table::commands()
        .iter()
        .flat_map(|spec| spec.subcommands.iter().map(|sub| sub.short_name()))
        .collect();
    (
        prop::sample::select(names),
        prop::sample::select(subs),
        prop::collection::vec(word(), 0..10),
        any::<bool>(),
    )
        .prop_map(|(name, sub, rest, with_sub)| {
            let mut args: Vec<Vec<u8>> = vec![name.as_bytes().to_vec()];
            if with_sub {
                args.push(sub.as_bytes().to_vec());
            }
            args.extend(rest);
            Request::from_args(args)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parsing_never_panics(request in request()) {
        match Command::parse(&request) {
            Ok(_) => {}
            Err(error) => {
                let text = error.to_string();
                prop_assert!(text.starts_with(error.code().as_str()), "{}", text);
                let reply = Reply::from(error).to_vec(Protocol::Resp2);
                prop_assert_eq!(reply.iter().filter(|&&b| b == b'\n').count(), 1);
            }
        }
    }
}

#[test]
fn unknown_command_and_arity_texts() {
    let err = |args: &[&str]| {
        Command::parse(&Request::from_args(args))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(&["foo", "a", "b"]),
        "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
    );
    assert_eq!(
        err(&["get"]),
        "ERR wrong number of arguments for 'get' command"
    );
    assert_eq!(
        err(&["GET", "a", "b"]),
        "ERR wrong number of arguments for 'get' command"
    );
    let wrongtype = CommandError::WrongType;
    assert_eq!(wrongtype.code(), ErrorCode::WrongType);
    assert_eq!(
        Reply::from(wrongtype).to_vec(Protocol::Resp3),
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    );
}

#[test]
fn arguments_are_slices_of_the_request() {
    let request = Request::from_args(["SET", "key", "value"]);
    let command = Command::parse(&request).unwrap();
    let Command::String(quiver_server::resp::command::StringCommand::Set(set)) = command else {
        panic!("not a SET");
    };
    let data: &Bytes = request.data();
    let range = data.as_ptr() as usize..data.as_ptr() as usize + data.len();
    assert!(range.contains(&(set.key.as_ptr() as usize)));
    assert!(range.contains(&(set.value.as_ptr() as usize)));
}
