//! What a request will look up, for reading a pipeline ahead: each key its command names
//! and, for commands on a hash, set or sorted set, the field or member looked up in the
//! first key's value. A connection hands these for a batch of requests to
//! `Keyspace::warm` before running them (see `connection::Connection::next_request`).

use quiver_core::cache::WarmTarget;

use crate::resp::connection::{Found, is_script_call};

/// The keys a request names, by its command's key positions; the first comes with the
/// field or member the command looks up in its value, if any. None for a script call:
/// the script thread reads its keys ahead itself, right before it runs it.
pub(super) fn targets((request, command): &Found) -> impl Iterator<Item = WarmTarget<'_>> {
    let spec = command.filter(|_| !is_script_call(request));
    let member = spec
        .and_then(|spec| spec.member_position(request))
        .and_then(|pos| request.arg(pos));
    spec.into_iter()
        .flat_map(|spec| spec.key_positions(request))
        .filter_map(|pos| request.arg(pos))
        .enumerate()
        .map(move |(i, key)| (key, member.filter(|_| i == 0)))
}

/// Whether a request names more than one key.
pub(super) fn several_keys(found: &Found) -> bool {
    // Every command that names two keys has at least two arguments.
    found.0.len() >= 3 && targets(found).nth(1).is_some()
}

#[cfg(test)]
mod tests {
    use quiver_resp::Request;

    use super::*;
    use crate::resp::table;

    fn found(args: &[&str]) -> Found {
        let request = Request::from_args(args.iter().map(|a| a.as_bytes()));
        let command = request.name().and_then(table::lookup);
        (request, command)
    }

    fn targets_of(args: &[&str]) -> Vec<(String, Option<String>)> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        targets(&found(args))
            .map(|(key, member)| (text(key), member.map(text)))
            .collect()
    }

    fn key(k: &str, member: Option<&str>) -> (String, Option<String>) {
        (k.to_owned(), member.map(str::to_owned))
    }

    #[test]
    fn keys_and_members_by_command() {
        assert_eq!(targets_of(&["GET", "k"]), [key("k", None)]);
        assert_eq!(targets_of(&["evalsha", "f00", "1", "k"]), []);
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
        let several = |args: &[&str]| several_keys(&found(args));
        assert!(several(&["MSET", "a", "1", "b", "2"]));
        assert!(several(&["MGET", "a", "b"]));
        assert!(several(&["DEL", "a", "b"]));
        assert!(!several(&["SET", "a", "1"]));
        assert!(!several(&["GET", "a"]));
        assert!(!several(&["HSET", "h", "f", "v"]));
        assert!(!several(&["NOSUCH", "a", "b"]));
    }
}
