//! What a request is, by its name or its command's flags: whether it may write, runs
//! at once inside MULTI, is a script call, or takes shard locks while a script is busy.

use quiver_resp::request::Request;

use crate::resp::table::{CommandSpec, flag};

/// Whether a command may write (or, in Redis's words, replicate): what a CLIENT PAUSE
/// WRITE holds (a script call that declares `no-writes` aside: `declared_read_only`).
pub(super) fn may_write(spec: &CommandSpec) -> bool {
    spec.has(flag::WRITE)
        || matches!(
            spec.name,
            "eval" | "evalsha" | "fcall" | "publish" | "spublish" | "pfcount"
        )
}

/// Commands that run at once even inside MULTI instead of being queued.
pub(super) fn runs_inside_multi(spec: &CommandSpec) -> bool {
    matches!(
        spec.name,
        "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
    )
}

/// Commands allowed while a script is busy that take shard locks: WATCH (its keys'
/// versions), RESET and CLIENT TRACKING (the change feed). UNWATCH and DISCARD let their
/// watches go later instead (`unwatch_all`).
pub(super) fn needs_shards(request: &Request) -> bool {
    let named = |name: &[u8]| request.name().is_some_and(|n| n.eq_ignore_ascii_case(name));
    named(b"watch")
        || named(b"reset")
        || named(b"client")
            && request
                .arg(1)
                .is_some_and(|sub| sub.eq_ignore_ascii_case(b"tracking"))
}

/// EVAL, EVALSHA, FCALL and their read-only forms, by name.
pub(in crate::resp) fn is_script_call(request: &Request) -> bool {
    const CALLS: [&[u8]; 6] = [
        b"eval",
        b"evalsha",
        b"eval_ro",
        b"evalsha_ro",
        b"fcall",
        b"fcall_ro",
    ];
    request.name().is_some_and(|name| {
        (4..=10).contains(&name.len()) && CALLS.iter().any(|call| name.eq_ignore_ascii_case(call))
    })
}
