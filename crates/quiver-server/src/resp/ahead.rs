//! What a request will look up, for reading a pipeline ahead: each key its command names
//! and, for commands on a hash, set or sorted set, the field or member looked up in the
//! first key's value. A connection hands these for a batch of requests to
//! `Keyspace::warm` before running them (see `connection::Connection::next_request`).

use quiver_cache::keyspace::WarmTarget;
use quiver_resp::Request;
use quiver_resp::table;

/// The keys `request` names, by its command's key positions; the first comes with the
/// field or member the command looks up in its value, if any.
pub(super) fn targets(request: &Request) -> impl Iterator<Item = WarmTarget<'_>> {
    let spec = request.name().and_then(table::lookup);
    let member = spec
        .and_then(|spec| member_position(spec.name, request))
        .and_then(|pos| request.arg(pos));
    spec.into_iter()
        .flat_map(|spec| spec.key_positions(request.len()))
        .filter_map(|pos| request.arg(pos))
        .enumerate()
        .map(move |(i, key)| (key, member.filter(|_| i == 0)))
}

/// Whether `request` names more than one key.
pub(super) fn several_keys(request: &Request) -> bool {
    // Every command that names two keys has at least two arguments.
    request.len() >= 3 && targets(request).nth(1).is_some()
}

/// Position of the first field or member a command looks up in its key's value.
fn member_position(command: &str, request: &Request) -> Option<usize> {
    match command {
        "hset" | "hsetnx" | "hmset" | "hget" | "hmget" | "hdel" | "hexists" | "hincrby"
        | "hincrbyfloat" | "hstrlen" | "sadd" | "srem" | "sismember" | "smismember" | "zscore"
        | "zmscore" | "zrem" | "zrank" | "zrevrank" => Some(2),
        "zincrby" => Some(3),
        // ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ...
        "zadd" => {
            let options = (2..request.len())
                .take_while(|&pos| request.arg(pos).is_some_and(is_zadd_option))
                .count();
            Some(2 + options + 1)
        }
        _ => None,
    }
}

fn is_zadd_option(arg: &[u8]) -> bool {
    [&b"nx"[..], b"xx", b"gt", b"lt", b"ch", b"incr"]
        .iter()
        .any(|option| arg.eq_ignore_ascii_case(option))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets_of(args: &[&str]) -> Vec<(String, Option<String>)> {
        let request = Request::from_args(args.iter().map(|a| a.as_bytes()));
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        targets(&request)
            .map(|(key, member)| (text(key), member.map(text)))
            .collect()
    }

    fn key(k: &str, member: Option<&str>) -> (String, Option<String>) {
        (k.to_owned(), member.map(str::to_owned))
    }

    #[test]
    fn keys_and_members_by_command() {
        assert_eq!(targets_of(&["GET", "k"]), [key("k", None)]);
        assert_eq!(
            targets_of(&["MSET", "a", "1", "b", "2"]),
            [key("a", None), key("b", None)]
        );
        assert_eq!(
            targets_of(&["sadd", "s", "m1", "m2"]),
            [key("s", Some("m1"))]
        );
        assert_eq!(targets_of(&["HSET", "h", "f", "v"]), [key("h", Some("f"))]);
        assert_eq!(
            targets_of(&["ZINCRBY", "z", "2", "m"]),
            [key("z", Some("m"))]
        );
        assert_eq!(
            targets_of(&["ZADD", "z", "NX", "ch", "1.5", "m"]),
            [key("z", Some("m"))]
        );
        assert_eq!(targets_of(&["ZADD", "z", "1", "m"]), [key("z", Some("m"))]);
        // Too short to name its member: the key alone.
        assert_eq!(targets_of(&["ZADD", "z", "xx"]), [key("z", None)]);
        assert_eq!(targets_of(&["PING"]), []);
        assert_eq!(targets_of(&["NOSUCH", "k"]), []);
    }

    #[test]
    fn a_request_names_several_keys() {
        let several =
            |args: &[&str]| several_keys(&Request::from_args(args.iter().map(|a| a.as_bytes())));
        assert!(several(&["MSET", "a", "1", "b", "2"]));
        assert!(several(&["MGET", "a", "b"]));
        assert!(several(&["DEL", "a", "b"]));
        assert!(!several(&["SET", "a", "1"]));
        assert!(!several(&["GET", "a"]));
        assert!(!several(&["HSET", "h", "f", "v"]));
        assert!(!several(&["NOSUCH", "a", "b"]));
    }
}
