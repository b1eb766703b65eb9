//! A command's argument syntax (its table row's `syntax`, as Redis's documentation
//! writes it) translated into the `arguments` tree of `COMMAND DOCS` (from which
//! `redis-cli` builds its hints).
//!
//! The notation: `[...]` optional, `(...)` a group, `a|b` one of, `...` after
//! an item repeats it, an UPPERCASE word is a literal token (followed by a
//! lowercase word or a group it introduces that argument), a lowercase word
//! is a value.

use quiver_resp::encode::Reply;

/// One argument of the `COMMAND DOCS` tree.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Arg {
    name: String,
    kind: &'static str,
    token: Option<String>,
    optional: bool,
    multiple: bool,
    children: Vec<Arg>,
}

impl Arg {
    fn value(name: &str) -> Arg {
        Arg {
            name: name.to_owned(),
            kind: value_type(name),
            token: None,
            optional: false,
            multiple: false,
            children: Vec::new(),
        }
    }

    fn pure_token(token: &str) -> Arg {
        Arg {
            name: token.to_ascii_lowercase(),
            kind: "pure-token",
            token: Some(token.to_owned()),
            optional: false,
            multiple: false,
            children: Vec::new(),
        }
    }

    fn group(kind: &'static str, children: Vec<Arg>) -> Arg {
        let name = children
            .first()
            .map_or_else(String::new, |child| child.name.clone());
        Arg {
            name,
            kind,
            token: None,
            optional: false,
            multiple: false,
            children,
        }
    }

    fn reply(&self) -> Reply {
        let mut fields = vec![
            (Reply::bulk_static("name"), Reply::bulk(&self.name)),
            (Reply::bulk_static("type"), Reply::bulk_static(self.kind)),
        ];
        if let Some(token) = &self.token {
            fields.push((Reply::bulk_static("token"), Reply::bulk(token)));
        }
        let flags: Vec<Reply> = [(self.optional, "optional"), (self.multiple, "multiple")]
            .into_iter()
            .filter(|(set, _)| *set)
            .map(|(_, flag)| Reply::simple(flag))
            .collect();
        if !flags.is_empty() {
            fields.push((Reply::bulk_static("flags"), Reply::Set(flags)));
        }
        if !self.children.is_empty() {
            fields.push((
                Reply::bulk_static("arguments"),
                Reply::Array(self.children.iter().map(Arg::reply).collect()),
            ));
        }
        Reply::Map(fields)
    }
}

/// The value type `COMMAND DOCS` reports for an argument name.
fn value_type(name: &str) -> &'static str {
    match name {
        "key" | "newkey" | "source" | "destination" | "dst" | "src" => "key",
        "pattern" => "pattern",
        "unix-time-seconds" | "unix-time-milliseconds" => "unix-time",
        "seconds" | "milliseconds" | "count" | "offset" | "start" | "stop" | "end" | "index"
        | "numkeys" | "cursor" | "rank" | "len" | "num-matches" | "limit" | "destination-db"
        | "protover" | "client-id" | "decrement" => "integer",
        "score" | "weight" | "timeout" => "double",
        _ => "string",
    }
}

fn is_token(word: &str) -> bool {
    word.bytes().any(|b| b.is_ascii_uppercase()) && !word.bytes().any(|b| b.is_ascii_lowercase())
}

/// The `COMMAND DOCS` `arguments` array for `syntax`.
pub(crate) fn arguments_reply(syntax: &str) -> Option<Reply> {
    let args = parse(syntax);
    (!args.is_empty()).then(|| Reply::Array(args.iter().map(Arg::reply).collect()))
}

/// Parses the notation into argument trees.
fn parse(syntax: &str) -> Vec<Arg> {
    let spaced = syntax
        .replace('[', " [ ")
        .replace(']', " ] ")
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace('|', " | ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut pos = 0;
    let alternatives = alternatives(&tokens, &mut pos);
    alternatives.into_iter().next().unwrap_or_default()
}

/// `seq ('|' seq)*` until a closing bracket or the end.
fn alternatives(tokens: &[&str], pos: &mut usize) -> Vec<Vec<Arg>> {
    let mut alternatives = vec![sequence(tokens, pos)];
    while tokens.get(*pos) == Some(&"|") {
        *pos += 1;
        alternatives.push(sequence(tokens, pos));
    }
    alternatives
}

/// Items until `|`, `]`, `)` or the end, tokens joined to what they introduce.
fn sequence(tokens: &[&str], pos: &mut usize) -> Vec<Arg> {
    let mut items: Vec<(Arg, bool)> = Vec::new(); // (argument, is a bare token word)
    while let Some(&token) = tokens.get(*pos) {
        let item = match token {
            "|" | "]" | ")" => break,
            "[" | "(" => {
                *pos += 1;
                let inner = alternatives(tokens, pos);
                *pos += 1; // the closing bracket
                let mut arg = combine(inner);
                arg.optional |= token == "[";
                (arg, false)
            }
            word => {
                *pos += 1;
                let (word, multiple) = match word.strip_suffix("...") {
                    Some(stripped) => (stripped, true),
                    None => (word, false),
                };
                let mut arg = if is_token(word) {
                    Arg::pure_token(word)
                } else {
                    Arg::value(word)
                };
                arg.multiple = multiple;
                (arg, is_token(word) && !multiple)
            }
        };
        let mut item = item;
        if tokens.get(*pos) == Some(&"...") {
            *pos += 1;
            item.0.multiple = true;
        }
        items.push(item);
    }
    let mut out: Vec<Arg> = Vec::new();
    let mut pending_token: Option<Arg> = None;
    for (arg, bare_token) in items {
        if let Some(token) = pending_token.take() {
            if arg.kind != "pure-token" {
                let mut arg = arg;
                arg.token = token.token;
                out.push(arg);
                continue;
            }
            out.push(token);
        }
        if bare_token {
            pending_token = Some(arg);
        } else {
            out.push(arg);
        }
    }
    out.extend(pending_token);
    out
}

/// A bracketed group: one of its alternatives, a block of several
/// arguments, or the single argument it holds.
fn combine(mut alternatives: Vec<Vec<Arg>>) -> Arg {
    if alternatives.len() > 1 {
        let children = alternatives.into_iter().map(single).collect();
        return Arg::group("oneof", children);
    }
    single(alternatives.pop().unwrap_or_default())
}

fn single(mut seq: Vec<Arg>) -> Arg {
    if seq.len() == 1 {
        return seq.pop().expect("length checked");
    }
    Arg::group("block", seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `redis-cli` prints as the hint for an argument list.
    fn hint(args: &[Arg]) -> String {
        args.iter().map(hint_one).collect::<Vec<_>>().join(" ")
    }

    fn hint_one(arg: &Arg) -> String {
        let token = arg
            .token
            .as_deref()
            .map(|t| format!("{t} "))
            .unwrap_or_default();
        let repeat = match arg.kind {
            "oneof" => arg
                .children
                .iter()
                .map(hint_one)
                .collect::<Vec<_>>()
                .join("|"),
            "block" => hint(&arg.children),
            "pure-token" => String::new(),
            _ => arg.name.clone(),
        };
        let token = if arg.kind == "pure-token" {
            token.trim_end().to_owned()
        } else {
            token
        };
        let mut out = format!("{token}{repeat}");
        if arg.multiple {
            out = format!("{out} [{repeat} ...]");
        }
        if arg.optional {
            format!("[{out}]")
        } else {
            out
        }
    }

    #[test]
    fn notation_becomes_redis_cli_hints() {
        let cases = [
            ("key", "key"),
            ("key...", "key [key ...]"),
            ("(key value)...", "key value [key value ...]"),
            (
                "key value [NX|XX] [GET] [EX seconds|PX milliseconds|KEEPTTL]",
                "key value [NX|XX] [GET] [EX seconds|PX milliseconds|KEEPTTL]",
            ),
            (
                "key (BEFORE|AFTER) pivot element",
                "key BEFORE|AFTER pivot element",
            ),
            (
                "destination numkeys key... [WEIGHTS weight...] [AGGREGATE (SUM|MIN|MAX)]",
                "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]",
            ),
            ("key [count [WITHVALUES]]", "key [count [WITHVALUES]]"),
            ("[LIMIT offset count]", "[LIMIT offset count]"),
        ];
        for (syntax, want) in cases {
            assert_eq!(hint(&parse(syntax)), want, "{syntax}");
        }
    }

    #[test]
    fn every_command_with_arguments_has_a_syntax() {
        for spec in super::super::commands() {
            let all = std::iter::once(*spec).chain(spec.subcommands.iter());
            for spec in all {
                let takes_args =
                    spec.arity < -1 || spec.arity > 1 + i32::from(spec.name.contains('|'));
                let container = !spec.subcommands.is_empty();
                if takes_args && !container && !spec.name.ends_with("|help") {
                    assert!(!spec.syntax.is_empty(), "{} has no syntax", spec.name);
                }
            }
        }
    }
}
