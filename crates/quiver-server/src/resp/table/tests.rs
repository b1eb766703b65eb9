//! The command table: lookups, arity, and COMMAND replies.

use bytes::Bytes;
use quiver_resp::encode::{Protocol, Reply};

use super::*;
use crate::resp::command::server::{CommandCommand, ListFilter};

const ISSUE_COMMANDS: &str = "GET SET SETNX SETEX PSETEX MGET MSET MSETNX GETSET GETDEL GETEX APPEND STRLEN GETRANGE \
    SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT DEL UNLINK EXISTS TOUCH EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL \
    EXPIRETIME PEXPIRETIME PERSIST TYPE KEYS SCAN RENAME RENAMENX COPY RANDOMKEY DBSIZE FLUSHDB FLUSHALL OBJECT MEMORY \
    HSET HSETNX HGET HMSET HMGET HDEL HEXISTS HLEN HGETALL HKEYS HVALS HINCRBY HINCRBYFLOAT HSTRLEN HRANDFIELD HSCAN \
    LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH BLPOP BRPOP \
    BLMOVE SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SMOVE SINTER SUNION SDIFF SINTERSTORE \
    SUNIONSTORE SDIFFSTORE SINTERCARD SSCAN ZADD ZREM ZSCORE ZMSCORE ZINCRBY ZCARD ZCOUNT ZLEXCOUNT ZRANGE \
    ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGE ZRANK ZREVRANK ZPOPMIN ZPOPMAX ZRANGESTORE ZUNIONSTORE \
    ZINTERSTORE ZREMRANGEBYSCORE ZREMRANGEBYRANK ZREMRANGEBYLEX ZSCAN MULTI EXEC DISCARD WATCH UNWATCH PING ECHO \
    HELLO AUTH SELECT QUIT RESET CLIENT INFO CONFIG COMMAND TIME";

#[test]
fn every_issue_command_is_in_the_table() {
    for name in ISSUE_COMMANDS.split_whitespace() {
        let spec = lookup(name.as_bytes()).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(spec.name, name.to_ascii_lowercase());
        assert!(!spec.summary.is_empty() && !spec.since.is_empty());
    }
    for (container, subs) in [
        ("client", "id setname getname list kill info reply"),
        ("config", "get set resetstat"),
        ("command", "count info docs"),
        ("object", "encoding freq idletime"),
        ("memory", "usage stats doctor malloc-stats purge"),
    ] {
        let spec = lookup(container.as_bytes()).unwrap();
        for sub in subs.split_whitespace() {
            let found = spec
                .subcommand(sub.to_ascii_uppercase().as_bytes())
                .unwrap_or_else(|| panic!("{container} {sub}"));
            assert_eq!(found.name, format!("{container}|{sub}"));
        }
    }
}

#[test]
fn names_are_unique_sorted_lowercase() {
    let names: Vec<&str> = commands().iter().map(|s| s.name).collect();
    for pair in names.windows(2) {
        assert!(pair[0] < pair[1], "{pair:?}");
    }
    assert!(names.iter().all(|n| *n == n.to_ascii_lowercase()));
    // `lookup` takes a longer name for unknown without comparing.
    assert!(names.iter().all(|n| n.len() <= MAX_NAME), "{names:?}");
}

#[test]
fn lookup_is_case_insensitive() {
    assert_eq!(lookup(b"gEt").unwrap().name, "get");
    assert_eq!(
        lookup(b"ZREVRANGEBYSCORE").unwrap().name,
        "zrevrangebyscore"
    );
    assert!(lookup(b"ge").is_none());
    assert!(lookup(b"gett").is_none());
    assert!(lookup(b"").is_none());
    assert!(lookup(&[b'a'; MAX_NAME + 1]).is_none());
    // A name the word form pads with zeros is not the same name.
    assert!(lookup(b"get\0").is_none());
    assert_eq!(
        lookup(b"GeoRadiusByMember_RO").unwrap().name,
        "georadiusbymember_ro"
    );
}

#[test]
fn lowered_names_lower_capitals_alone() {
    // Every byte value, in every position.
    for b in 0..=255u8 {
        for at in 0..MAX_NAME {
            let mut name = [b'x'; MAX_NAME];
            name[at] = b;
            let lower = name.to_ascii_lowercase();
            let word = |half: &[u8]| u128::from_le_bytes(half.try_into().unwrap());
            assert_eq!(
                lowered_name(&name),
                Some([word(&lower[..16]), word(&lower[16..])]),
                "{b:#x} at {at}"
            );
        }
    }
    assert_eq!(lowered_name(b""), Some([0, 0]));
    assert_eq!(lowered_name(&[b'A'; MAX_NAME + 1]), None);
}

#[test]
fn arity_follows_redis_convention() {
    let get = lookup(b"get").unwrap();
    assert!(get.accepts(2) && !get.accepts(1) && !get.accepts(3));
    let set = lookup(b"set").unwrap();
    assert!(set.accepts(3) && set.accepts(9) && !set.accepts(2));
}

#[test]
fn resolve_errors() {
    let err = |args: &[&str]| resolve(&Request::from_args(args)).unwrap_err().to_string();
    assert_eq!(
        err(&["foo", "a", "b"]),
        "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
    );
    assert_eq!(
        err(&["GET"]),
        "ERR wrong number of arguments for 'get' command"
    );
    assert_eq!(
        err(&["client", "nope"]),
        "ERR unknown subcommand 'nope'. Try CLIENT HELP."
    );
    assert_eq!(
        resolve(&Request::from_args(["client", "KILL", "x"]))
            .unwrap()
            .name,
        "client|kill"
    );
}

#[test]
fn command_info_shape() {
    let get = info_reply(lookup(b"get").unwrap());
    let resp2 = String::from_utf8(get.to_vec(Protocol::Resp2)).unwrap();
    assert!(
        resp2.starts_with("*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n"),
        "{resp2}"
    );
    let resp3 = String::from_utf8(get.to_vec(Protocol::Resp3)).unwrap();
    assert!(
        resp3.starts_with("*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n"),
        "{resp3}"
    );
    let client = info_reply(lookup(b"client").unwrap());
    match client {
        Reply::Array(items) => assert!(matches!(&items[9], Reply::Array(subs) if subs.len() == 16)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn command_subcommand_replies() {
    let count = command_reply(&CommandCommand::Count);
    assert_eq!(count, Reply::Integer(commands().len() as i64));
    let info = command_reply(&CommandCommand::Info {
        names: vec![Bytes::from_static(b"GET"), Bytes::from_static(b"nope")],
    });
    match info {
        Reply::Array(items) => assert_eq!((items.len(), &items[1]), (2, &Reply::Null)),
        other => panic!("{other:?}"),
    }
    let docs = command_reply(&CommandCommand::Docs {
        names: vec![Bytes::from_static(b"get")],
    });
    let resp3 = String::from_utf8(docs.to_vec(Protocol::Resp3)).unwrap();
    assert_eq!(
        resp3,
        "%1\r\n$3\r\nget\r\n%4\r\n$7\r\nsummary\r\n$34\r\nReturns the string value of a key.\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$9\r\narguments\r\n*1\r\n%2\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n"
    );
    let list = command_reply(&CommandCommand::List {
        filter: Some(ListFilter::Pattern(Bytes::from_static(b"z*store"))),
    });
    assert_eq!(
        list,
        Reply::Array(
            ["zdiffstore", "zinterstore", "zrangestore", "zunionstore"]
                .into_iter()
                .map(Reply::bulk_static)
                .collect()
        )
    );
    let blocking = command_reply(&CommandCommand::List {
        filter: Some(ListFilter::AclCat(Bytes::from_static(b"blocking"))),
    });
    assert_eq!(
        blocking,
        Reply::Array(
            [
                "blmove",
                "blmpop",
                "blpop",
                "brpop",
                "brpoplpush",
                "bzmpop",
                "bzpopmax",
                "bzpopmin",
                "xread",
                "xreadgroup"
            ]
            .into_iter()
            .map(Reply::bulk_static)
            .collect()
        )
    );
}

#[test]
fn lookup_buckets_stay_small() {
    let largest = INDEX.buckets.iter().map(Vec::len).max().unwrap_or(0);
    assert!(largest <= 4, "largest lookup bucket holds {largest} names");
    for spec in commands() {
        assert_eq!(
            lookup(spec.name.to_ascii_uppercase().as_bytes()).map(|s| s.name),
            Some(spec.name)
        );
    }
}

#[test]
fn container_help_lists_subcommands() {
    let help = help_reply(lookup(b"object").unwrap()).unwrap();
    let text = String::from_utf8(help.to_vec(Protocol::Resp2)).unwrap();
    assert!(text.starts_with("*11\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+ENCODING key\r\n"), "{text}");
    assert!(
        text.ends_with("+HELP\r\n+    Print this help.\r\n"),
        "{text}"
    );
    assert!(help_reply(lookup(b"get").unwrap()).is_none());
}

#[test]
fn key_positions_follow_the_key_spec() {
    let request = |line: &str| Request::from_args(line.split_whitespace());
    let positions = |line: &str| -> Vec<usize> {
        let request = request(line);
        lookup(request.name().unwrap())
            .unwrap()
            .key_positions(&request)
            .collect()
    };
    assert_eq!(positions("get k"), [1]);
    assert_eq!(positions("mset a 1 b 2 c 3"), [1, 3, 5]);
    assert_eq!(positions("del a b c"), [1, 2, 3]);
    assert_eq!(positions("rpoplpush a b"), [1, 2]);
    assert_eq!(positions("ping"), [] as [usize; 0]);
    // A request shorter than the spec names no key past its end.
    assert_eq!(positions("lmove a"), [1]);
    // Keys counted by `numkeys`, after the range.
    assert_eq!(positions("zunionstore d 2 a b WEIGHTS 1 2"), [1, 3, 4]);
    assert_eq!(positions("sintercard 2 a b LIMIT 1"), [2, 3]);
    assert_eq!(positions("zunionstore d x a b"), [1]);
    assert_eq!(positions("sintercard 3 a b"), [] as [usize; 0]);
}

#[test]
fn getkeys_refuses_bad_counts_and_keyless_commands() {
    let get_keys = |line: &str| {
        let request = Request::from_args(line.split_whitespace());
        lookup(request.name().unwrap())
            .unwrap()
            .get_keys(&request)
            .map_err(|error| error.to_string())
    };
    assert_eq!(
        get_keys("zinterstore d 1 a"),
        Ok(vec![(1, &["OW", "update"][..]), (3, &["RO", "access"][..])])
    );
    let invalid = Err("ERR Invalid arguments specified for command".to_owned());
    assert_eq!(get_keys("zinterstore d 0 a"), invalid);
    assert_eq!(get_keys("zinterstore d 3 a b"), invalid);
    assert_eq!(get_keys("lmove"), invalid);
}

#[test]
fn every_key_specification_has_its_flags() {
    for spec in commands() {
        for spec in std::iter::once(*spec).chain(spec.subcommands.iter()) {
            let ranges = match (spec.first_key > 0, spec.first_key_apart) {
                (false, _) => 0,
                (true, false) => 1,
                (true, true) => 2,
            };
            let specs = ranges
                + usize::from(spec.numkeys > 0)
                + usize::from(spec.keys_after.is_some())
                + usize::from(spec.keys_instead.is_some())
                + 2 * usize::from(spec.store_options.is_some())
                + spec.unknown_keys.len();
            assert_eq!(spec.key_flags.len(), specs, "{}", spec.name);
            assert!(
                spec.key_flags.iter().all(|flags| !flags.is_empty()),
                "{}",
                spec.name
            );
        }
    }
}
