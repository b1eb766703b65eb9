//! `COMMAND`, `COMMAND INFO`, `COMMAND DOCS`, `COMMAND COUNT` and
//! `COMMAND LIST` replies, built from the table in Redis 7's shapes.

use bytes::Bytes;
use quiver_resp::encode::Reply;
use quiver_resp::request::Request;

use super::{CommandSpec, commands, flag, lookup};
use crate::resp::command::server::{CommandCommand, ListFilter};

/// The reply to a `COMMAND` subcommand.
pub fn command_reply(command: &CommandCommand) -> Reply {
    match command {
        CommandCommand::All => {
            Reply::Array(commands().iter().map(|spec| info_reply(spec)).collect())
        }
        CommandCommand::Count => {
            Reply::Integer(i64::try_from(commands().len()).unwrap_or(i64::MAX))
        }
        CommandCommand::Info { names } if names.is_empty() => command_reply(&CommandCommand::All),
        CommandCommand::Info { names } => Reply::Array(
            names
                .iter()
                .map(|name| lookup_full(name).map_or(Reply::Null, info_reply))
                .collect(),
        ),
        CommandCommand::Docs { names } => {
            let specs: Vec<&CommandSpec> = if names.is_empty() {
                commands().to_vec()
            } else {
                names.iter().filter_map(|name| lookup_full(name)).collect()
            };
            Reply::Map(
                specs
                    .into_iter()
                    .map(|spec| (Reply::bulk_static(spec.name), docs_reply(spec)))
                    .collect(),
            )
        }
        CommandCommand::GetKeys { args } => get_keys_reply(args, false),
        CommandCommand::GetKeysAndFlags { args } => get_keys_reply(args, true),
        // Subcommands are listed too, as `container|sub`, as Redis 7.0 does.
        CommandCommand::List { filter } => Reply::Array(
            commands()
                .iter()
                .flat_map(|spec| std::iter::once(*spec).chain(spec.subcommands.iter()))
                .filter(|spec| list_filter_matches(spec, filter.as_ref()))
                .map(|spec| Reply::bulk_static(spec.name))
                .collect(),
        ),
        CommandCommand::Help => Reply::Array(
            [
                "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "(no subcommand)",
                "    Return details about all commands.",
                "COUNT",
                "    Return the total number of commands in this server.",
                "LIST",
                "    Return a list of all commands in this server.",
                "INFO [<command-name> ...]",
                "    Return details about multiple commands.",
                "DOCS [<command-name> ...]",
                "    Return documentation details about multiple commands.",
                "GETKEYS <full-command>",
                "    Return the keys from a full command.",
                "GETKEYSANDFLAGS <full-command>",
                "    Return the keys and the access flags from a full command.",
                "HELP",
                "    Print this help.",
            ]
            .into_iter()
            .map(Reply::simple)
            .collect(),
        ),
    }
}

/// `COMMAND GETKEYS`: the keys `args` (a command and its arguments) names; with
/// `with_flags` (`GETKEYSANDFLAGS`), each as a pair of the key and its flags.
fn get_keys_reply(args: &[Bytes], with_flags: bool) -> Reply {
    let request = Request::from_args(args);
    let error = |text: &'static str| Reply::Error(Bytes::from_static(text.as_bytes()));
    let Some(spec) = args.first().and_then(|name| lookup(name)) else {
        return error("ERR Invalid command specified");
    };
    let spec = match args.get(1).filter(|_| !spec.subcommands.is_empty()) {
        Some(sub) => match spec.subcommand(sub) {
            Some(sub) => sub,
            None => return error("ERR Invalid command specified"),
        },
        None => spec,
    };
    if !spec.has_keys() {
        return error("ERR The command has no key arguments");
    }
    if !spec.accepts(args.len()) {
        return error("ERR Invalid number of arguments specified for command");
    }
    match spec.get_keys(&request) {
        Ok(keys) => Reply::Array(
            keys.into_iter()
                .filter_map(|(pos, flags)| Some((args.get(pos)?.clone(), flags)))
                .map(|(key, flags)| match with_flags {
                    false => Reply::Bulk(key),
                    true => Reply::Array(vec![
                        Reply::Bulk(key),
                        Reply::Set(flags.iter().map(|flag| Reply::simple(flag)).collect()),
                    ]),
                })
                .collect(),
        ),
        Err(err) => Reply::error(&err),
    }
}

/// A command or `container|sub` subcommand by name.
pub fn lookup_full(name: &[u8]) -> Option<&'static CommandSpec> {
    match name.iter().position(|&b| b == b'|') {
        None => lookup(name),
        Some(bar) => lookup(&name[..bar])?.subcommand(&name[bar + 1..]),
    }
}

/// One command's `COMMAND INFO` entry: name, arity, flags, first key, last
/// key, step, ACL categories, tips, key specifications, subcommands.
pub fn info_reply(spec: &CommandSpec) -> Reply {
    let flags = flag::NAMES
        .iter()
        .filter(|(bit, _)| spec.has(*bit))
        .map(|(_, name)| Reply::simple(name))
        .collect();
    Reply::Array(vec![
        Reply::bulk_static(spec.name),
        Reply::Integer(i64::from(spec.arity)),
        Reply::Set(flags),
        Reply::Integer(i64::from(spec.first_key)),
        Reply::Integer(i64::from(spec.last_key)),
        Reply::Integer(i64::from(spec.key_step)),
        Reply::Set(
            acl_categories(spec)
                .into_iter()
                .map(Reply::simple)
                .collect(),
        ),
        Reply::Set(
            spec.tips
                .iter()
                .map(|tip| Reply::bulk_static(tip))
                .collect(),
        ),
        Reply::Set(key_specs(spec)),
        // Redis sends no subcommands as an empty set, and some as an array.
        if spec.subcommands.is_empty() {
            Reply::Set(Vec::new())
        } else {
            Reply::Array(spec.subcommands.iter().map(info_reply).collect())
        },
    ])
}

/// One command's `COMMAND DOCS` map.
pub fn docs_reply(spec: &CommandSpec) -> Reply {
    let mut fields = vec![
        (
            Reply::bulk_static("summary"),
            Reply::bulk_static(spec.summary),
        ),
        (Reply::bulk_static("since"), Reply::bulk_static(spec.since)),
        (
            Reply::bulk_static("group"),
            Reply::bulk_static(spec.group.as_str()),
        ),
    ];
    if let Some(arguments) = super::syntax::arguments_reply(spec.syntax) {
        fields.push((Reply::bulk_static("arguments"), arguments));
    }
    if !spec.subcommands.is_empty() {
        let subs = spec
            .subcommands
            .iter()
            .map(|sub| (Reply::bulk_static(sub.name), docs_reply(sub)))
            .collect();
        fields.push((Reply::bulk_static("subcommands"), Reply::Map(subs)));
    }
    Reply::Map(fields)
}

/// ACL categories derived from the flags, the group and the row's own category, as
/// Redis 7.0 assigns them (checked against `COMMAND INFO` of redis-server 7.0.15).
pub(crate) fn acl_categories(spec: &CommandSpec) -> Vec<&'static str> {
    if !spec.subcommands.is_empty() {
        // Containers carry only `@slow` (and `COMMAND` its category).
        return in_redis_order(std::iter::once("@slow").chain(spec.acl_category).collect());
    }
    let mut categories = Vec::with_capacity(5);
    if spec.has(flag::WRITE) {
        categories.push("@write");
    }
    // Redis files the read-only scripting commands in `@scripting` alone.
    if spec.has(flag::READONLY) && spec.group != super::Group::Scripting {
        categories.push("@read");
    }
    let group = match spec.acl_category {
        Some(category) => Some(category),
        None if spec.group == super::Group::Server => None,
        // Redis derives `@pubsub` from the flag (`PUBSUB HELP` has neither).
        None if spec.group == super::Group::PubSub && !spec.has(flag::PUBSUB) => None,
        None => Some(spec.group.acl_category()),
    };
    // One or more, separated by spaces (SORT is in `@set @sortedset @list`).
    categories.extend(group.into_iter().flat_map(|names| names.split(' ')));
    if spec.has(flag::ADMIN) {
        categories.push("@admin");
    }
    if spec.has(flag::ADMIN) || spec.dangerous {
        categories.push("@dangerous");
    }
    if spec.has(flag::BLOCKING) {
        categories.push("@blocking");
    }
    categories.push(if spec.has(flag::FAST) {
        "@fast"
    } else {
        "@slow"
    });
    in_redis_order(categories)
}

/// Categories in the order Redis lists them (that of ACL CAT).
fn in_redis_order(mut categories: Vec<&'static str>) -> Vec<&'static str> {
    let rank = |category: &&str| {
        crate::resp::acl::user::CATEGORIES
            .iter()
            .position(|known| category.strip_prefix('@') == Some(*known))
            .unwrap_or(usize::MAX)
    };
    categories.sort_by_key(rank);
    categories
}

/// The key specifications: a range from the legacy first/last/step triple, and
/// the keys a `numkeys` argument counts.
fn key_specs(spec: &CommandSpec) -> Vec<Reply> {
    let text = |s: &'static str| Reply::bulk_static(s);
    let int = |n: usize| Reply::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    let noted = |i: usize, note: Option<&'static str>, begin: Reply, kind: &'static str, find| {
        let flags = spec.key_flags.get(i).copied().unwrap_or_default();
        let mut fields = Vec::with_capacity(4);
        if let Some(note) = note {
            fields.push((text("notes"), text(note)));
        }
        fields.push((
            text("flags"),
            Reply::Set(flags.iter().map(|flag| Reply::simple(flag)).collect()),
        ));
        fields.push((text("begin_search"), begin));
        fields.push((
            text("find_keys"),
            Reply::Map(vec![
                (text("type"), text(kind)),
                (text("spec"), Reply::Map(find)),
            ]),
        ));
        Reply::Map(fields)
    };
    let key_spec = |i: usize, begin: Reply, kind: &'static str, find: Vec<(Reply, Reply)>| {
        noted(i, spec.key_note.filter(|_| i == 0), begin, kind, find)
    };
    let at_index = |index: usize| {
        Reply::Map(vec![
            (text("type"), text("index")),
            (text("spec"), Reply::Map(vec![(text("index"), int(index))])),
        ])
    };
    let range = |i: usize, first: i32, last: i32| {
        // `lastkey` counts from the first key, or from the end when negative.
        let last = if last < 0 { last } else { last - first };
        key_spec(
            i,
            at_index(usize::try_from(first).unwrap_or(0)),
            "range",
            vec![
                (text("lastkey"), Reply::Integer(i64::from(last))),
                (text("keystep"), Reply::Integer(i64::from(spec.key_step))),
                (text("limit"), Reply::Integer(0)),
            ],
        )
    };
    let mut specs = Vec::with_capacity(2);
    if spec.first_key > 0 && spec.first_key_apart {
        specs.push(range(0, spec.first_key, spec.first_key));
        specs.push(range(1, spec.first_key + 1, spec.last_key));
    } else if spec.first_key > 0 {
        specs.push(range(0, spec.first_key, spec.last_key));
    }
    if spec.numkeys > 0 {
        specs.push(key_spec(
            specs.len(),
            at_index(spec.numkeys),
            "keynum",
            vec![
                (text("keynumidx"), Reply::Integer(0)),
                (text("firstkey"), Reply::Integer(1)),
                (text("keystep"), Reply::Integer(1)),
            ],
        ));
    }
    // A key specification found after a keyword searched from `startfrom`, running
    // to `lastkey` (from the keyword) with at most `limit` of the rest.
    let mut after_keyword = |keyword: &'static str, startfrom: i64, lastkey: i64, limit: i64| {
        let begin = Reply::Map(vec![
            (text("type"), text("keyword")),
            (
                text("spec"),
                Reply::Map(vec![
                    (text("keyword"), text(keyword)),
                    (text("startfrom"), Reply::Integer(startfrom)),
                ]),
            ),
        ]);
        let find = vec![
            (text("lastkey"), Reply::Integer(lastkey)),
            (text("keystep"), Reply::Integer(1)),
            (text("limit"), Reply::Integer(limit)),
        ];
        specs.push(key_spec(specs.len(), begin, "range", find));
    };
    if let Some((keyword, from)) = spec.keys_after {
        after_keyword(keyword, from as i64, -1, 2);
    }
    if let Some((keyword, _, _)) = spec.keys_instead {
        after_keyword(keyword, -2, -1, 0);
    }
    if let Some((_, startfrom)) = spec.store_options {
        for keyword in ["STORE", "STOREDIST"] {
            after_keyword(keyword, startfrom as i64, 0, 0);
        }
    }
    for note in spec.unknown_keys {
        let unknown = Reply::Map(vec![
            (text("type"), text("unknown")),
            (text("spec"), Reply::Map(Vec::new())),
        ]);
        specs.push(noted(
            specs.len(),
            Some(note),
            unknown,
            "unknown",
            Vec::new(),
        ));
    }
    specs
}

fn list_filter_matches(spec: &CommandSpec, filter: Option<&ListFilter>) -> bool {
    match filter {
        None => true,
        Some(ListFilter::Module(_)) => false,
        Some(ListFilter::AclCat(category)) => {
            let wanted: &[u8] = category.strip_prefix(b"@").unwrap_or(category);
            acl_categories(spec)
                .iter()
                .any(|c| c.as_bytes()[1..].eq_ignore_ascii_case(wanted))
        }
        Some(ListFilter::Pattern(pattern)) => glob_match(pattern, spec.name.as_bytes()),
    }
}

/// Redis's glob rules (`*`, `?`, `[a-z]`, `[^x]`, `\x`), case-insensitive
/// as `COMMAND LIST FILTERBY PATTERN` matches.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let (mut star_p, mut star_t) = (None, 0);
    while t < text.len() {
        let step = match pattern.get(p) {
            Some(b'*') => {
                star_p = Some(p);
                star_t = t;
                p += 1;
                continue;
            }
            Some(b'?') => Some(1),
            Some(b'[') => class_match(&pattern[p..], text[t]),
            Some(b'\\') if p + 1 < pattern.len() => {
                (pattern[p + 1].eq_ignore_ascii_case(&text[t])).then_some(2)
            }
            Some(c) => c.eq_ignore_ascii_case(&text[t]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                p += len;
                t += 1;
            }
            None => match star_p {
                Some(sp) => {
                    p = sp + 1;
                    star_t += 1;
                    t = star_t;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Matches `c` against the class at the start of `pattern` (`[...]`);
/// returns the class length on a match.
fn class_match(pattern: &[u8], c: u8) -> Option<usize> {
    let mut i = 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let c = c.to_ascii_lowercase();
    while i < pattern.len() && pattern[i] != b']' {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            matched |= pattern[i + 1].to_ascii_lowercase() == c;
            i += 2;
        } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' && pattern[i + 2] != b']' {
            let (lo, hi) = (
                pattern[i].to_ascii_lowercase(),
                pattern[i + 2].to_ascii_lowercase(),
            );
            matched |= (lo.min(hi)..=lo.max(hi)).contains(&c);
            i += 3;
        } else {
            matched |= pattern[i].to_ascii_lowercase() == c;
            i += 1;
        }
    }
    let len = (i + 1).min(pattern.len());
    (matched != negate).then_some(len)
}

/// A name as a static-free `Bytes` (for callers building their own replies).
pub fn name_bytes(spec: &CommandSpec) -> Bytes {
    Bytes::from_static(spec.name.as_bytes())
}

/// The reply to `<CONTAINER> HELP` (`CLIENT HELP`, `CONFIG HELP`, ...) in
/// Redis's shape: a usage line, then each subcommand with its syntax and
/// summary, then `HELP`. `None` for a command without subcommands.
pub fn help_reply(container: &CommandSpec) -> Option<Reply> {
    if container.subcommands.is_empty() {
        return None;
    }
    let upper = container.name.to_ascii_uppercase();
    let mut lines = vec![format!(
        "{upper} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    )];
    for sub in container
        .subcommands
        .iter()
        .filter(|sub| sub.short_name() != "help")
    {
        let usage = format!("{} {}", sub.short_name().to_ascii_uppercase(), sub.syntax);
        lines.push(usage.trim_end().to_owned());
        lines.push(format!("    {}", sub.summary));
    }
    lines.push("HELP".to_owned());
    lines.push("    Print this help.".to_owned());
    Some(Reply::Array(
        lines
            .into_iter()
            .map(|line| Reply::Simple(Bytes::from(line)))
            .collect(),
    ))
}
