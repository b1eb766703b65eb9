//! One ACL user: whether it may log in and with which passwords, and which commands,
//! keys and channels it may use; built by ACL SETUSER's rules, described as ACL LIST
//! and ACL GETUSER show it.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use quiver_core::cache::glob_match;
use quiver_resp::Request;

use crate::resp::table::{self, CommandSpec};

/// A key pattern and the access it grants (`~p` both, `%R~p` reading, `%W~p` writing).
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeyPattern {
    pattern: Bytes,
    read: bool,
    write: bool,
}

/// What a user may not do, and the argument that is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

/// One set of permissions: the user's own, or one of its selectors (`(…)` rules). A
/// command is allowed when one of a user's sets allows it whole.
#[derive(Debug, Clone)]
pub struct Selector {
    all_keys: bool,
    keys: Vec<KeyPattern>,
    all_channels: bool,
    channels: Vec<Bytes>,
    /// Started from `+@all` (commands added later are allowed) or `-@all`.
    all_commands: bool,
    /// The command rules after that start, as given (lowercase).
    rules: Vec<String>,
    /// The full names (`client|list`) the rules allow.
    allowed: HashSet<&'static str>,
    /// Of a command without subcommands that the rules do not allow, the first
    /// arguments it is allowed with (`+select|0`), compared without case.
    first_args: FirstArgs,
}

/// A command's allowed first arguments, by the command's name.
type FirstArgs = HashMap<&'static str, Vec<String>>;

impl Selector {
    /// No command and no key; every channel or none (`acl-pubsub-default`).
    fn new(all_channels: bool) -> Selector {
        Selector {
            all_keys: false,
            keys: Vec::new(),
            all_channels,
            channels: Vec::new(),
            all_commands: false,
            rules: Vec::new(),
            allowed: HashSet::new(),
            first_args: HashMap::new(),
        }
    }

    /// A selector from the rules between `(` and `)`, separated by spaces. A rule that
    /// ends with `)` is refused: written back (ACL LIST, ACL SAVE) it would close the
    /// selector early, and the file would not load.
    fn parse(rules: &[u8], all_channels: bool) -> Result<Selector, &'static str> {
        let mut selector = Selector::new(all_channels);
        for rule in rules.split(|&b| b == b' ').filter(|r| !r.is_empty()) {
            if rule.ends_with(b")") || !selector.apply(rule)? {
                return Err(SYNTAX);
            }
        }
        selector.settle();
        Ok(selector)
    }

    fn unrestricted(&self) -> bool {
        self.all_keys && self.all_channels && self.all_commands && self.rules.is_empty()
    }

    /// Applies a rule on commands, keys or channels; false when it is none of those.
    fn apply(&mut self, rule: &[u8]) -> Result<bool, &'static str> {
        if let Some((&first @ (b'~' | b'%' | b'&'), rest)) = rule.split_first() {
            self.apply_pattern(first, rest)?;
            return Ok(true);
        }
        let Ok(text) = std::str::from_utf8(rule) else {
            return Ok(false);
        };
        let lower = text.to_ascii_lowercase();
        match lower.as_str() {
            "allkeys" => {
                self.all_keys = true;
                self.keys.clear();
            }
            "resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            "allchannels" => {
                self.all_channels = true;
                self.channels.clear();
            }
            "resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            "allcommands" | "+@all" => self.set_all_commands(true),
            "nocommands" | "-@all" => self.set_all_commands(false),
            _ if lower.starts_with('+') || lower.starts_with('-') => {
                let rule = match target(&text[1..], lower.starts_with('+'))? {
                    Target::Commands(_) => lower,
                    // A first argument already allowed keeps its place and spelling.
                    Target::FirstArg(name, arg)
                        if allowed_by(self.all_commands, &self.rules)
                            .1
                            .get(name)
                            .is_some_and(|args| {
                                args.iter().any(|a| a.eq_ignore_ascii_case(&arg))
                            }) =>
                    {
                        return Ok(true);
                    }
                    // The command's name as the table spells it, the argument as given.
                    Target::FirstArg(name, arg) => format!("+{name}|{arg}"),
                };
                self.rules
                    .retain(|known| !known[1..].eq_ignore_ascii_case(&rule[1..]));
                self.rules.push(rule);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `~pattern`, `%R~pattern` and its kin, `&pattern`: bytes.
    fn apply_pattern(&mut self, first: u8, rest: &[u8]) -> Result<(), &'static str> {
        match first {
            // `~*` and `&*` are other names of `allkeys` and `allchannels`, as in Redis:
            // given again, they are no error.
            b'~' | b'&' if rest == b"*" => {
                if first == b'~' {
                    self.all_keys = true;
                    self.keys.clear();
                } else {
                    self.all_channels = true;
                    self.channels.clear();
                }
                Ok(())
            }
            b'~' => self.add_keys(rest, true, true),
            b'%' => {
                let split = rest.iter().position(|&b| b == b'~').ok_or(SYNTAX)?;
                let (grant, pattern) = (&rest[..split], &rest[split + 1..]);
                if grant.is_empty() || !grant.iter().all(|b| matches!(b, b'R' | b'W' | b'r' | b'w'))
                {
                    return Err(SYNTAX);
                }
                let has = |c: u8| grant.iter().any(|b| b.eq_ignore_ascii_case(&c));
                self.add_keys(pattern, has(b'R'), has(b'W'))
            }
            _ => {
                if self.all_channels {
                    return Err(
                        "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
                    );
                }
                if rest == b"*" {
                    self.all_channels = true;
                    self.channels.clear();
                } else if !self.channels.iter().any(|c| c == rest) {
                    self.channels.push(Bytes::copy_from_slice(rest));
                }
                Ok(())
            }
        }
    }

    fn add_keys(&mut self, pattern: &[u8], read: bool, write: bool) -> Result<(), &'static str> {
        if self.all_keys {
            return Err(
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            );
        }
        if pattern == b"*" && read && write {
            self.all_keys = true;
            self.keys.clear();
            return Ok(());
        }
        let pattern = Bytes::copy_from_slice(pattern);
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(known) => {
                known.read |= read;
                known.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern,
                read,
                write,
            }),
        }
        Ok(())
    }

    fn set_all_commands(&mut self, all: bool) {
        self.all_commands = all;
        self.rules.clear();
    }

    /// Recomputes the allowed commands from the rules, and keeps only the rules that
    /// change them (as Redis describes a user's commands by what they allow). Once per
    /// SETUSER: it costs rules² walks of the command table.
    fn settle(&mut self) {
        let allowed = allowed_by(self.all_commands, &self.rules);
        let mut i = 0;
        while i < self.rules.len() {
            let mut without = self.rules.clone();
            without.remove(i);
            if allowed_by(self.all_commands, &without) == allowed {
                self.rules = without;
            } else {
                i += 1;
            }
        }
        (self.allowed, self.first_args) = allowed;
    }

    /// Whether this set allows `request` (resolved to `spec`) whole.
    fn check(&self, spec: &CommandSpec, request: &Request) -> Result<(), Denied> {
        // AUTH and HELLO (flagged no-auth) are every user's, as in Redis.
        if !self.allowed.contains(spec.name)
            && !spec.has(table::flag::NO_AUTH)
            && !self.first_args.get(spec.name).is_some_and(|args| {
                let first = request.arg(1).unwrap_or_default();
                request.len() > 1
                    && args
                        .iter()
                        .any(|a| a.as_bytes().eq_ignore_ascii_case(first))
            })
        {
            return Err(Denied::Command);
        }
        if !self.all_keys && spec.has_keys() {
            for (pos, flags) in spec.get_keys(request).unwrap_or_default() {
                let flag = |name: &str| flags.iter().any(|f| f.eq_ignore_ascii_case(name));
                let read = flag("access");
                let write = flag("insert") || flag("delete") || flag("update");
                let key = request.arg(pos).unwrap_or_default();
                let granted = self.keys.iter().any(|k| {
                    (k.read || !read) && (k.write || !write) && glob_match(&k.pattern, key)
                });
                if !granted {
                    return Err(Denied::Key(pos));
                }
            }
        }
        if !self.all_channels {
            let literal = spec.name == "psubscribe";
            let positions = match spec.name {
                "publish" | "spublish" => 1..2.min(request.len()),
                "subscribe" | "ssubscribe" | "psubscribe" => 1..request.len(),
                _ => 0..0,
            };
            for pos in positions {
                let channel = request.arg(pos).unwrap_or_default();
                if !self.allows_channel(channel, literal) {
                    return Err(Denied::Channel(pos));
                }
            }
        }
        Ok(())
    }

    /// Whether this set's channel rules allow `channel`; a pattern (`literal`) must be
    /// one of the set's patterns as written, as PSUBSCRIBE's check wants.
    fn allows_channel(&self, channel: &[u8], literal: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|pattern| {
                if literal {
                    pattern == channel
                } else {
                    glob_match(pattern, channel)
                }
            })
    }

    /// The command rules, as ACL LIST and GETUSER show them: first arguments after the
    /// other rules (Redis lists them with their command in its own walk of the commands).
    pub fn commands(&self) -> String {
        let mut text = String::from(if self.all_commands { "+@all" } else { "-@all" });
        let first_arg = |rule: &&String| {
            rule.starts_with('+') && matches!(target(&rule[1..], true), Ok(Target::FirstArg(..)))
        };
        let (first_args, commands): (Vec<&String>, Vec<&String>) =
            self.rules.iter().partition(first_arg);
        for rule in commands.into_iter().chain(first_args) {
            text.push(' ');
            text.push_str(rule);
        }
        text
    }

    /// The key patterns (`~*` for every key).
    pub fn keys(&self) -> String {
        if self.all_keys {
            return "~*".to_owned();
        }
        let patterns = self.keys.iter().map(|k| {
            let grant = match (k.read, k.write) {
                (true, true) => "",
                (true, false) => "%R",
                _ => "%W",
            };
            format!("{grant}~{}", String::from_utf8_lossy(&k.pattern))
        });
        patterns.collect::<Vec<_>>().join(" ")
    }

    /// The channel patterns (`&*` for every channel).
    pub fn channels(&self) -> String {
        if self.all_channels {
            return "&*".to_owned();
        }
        let patterns = self
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)));
        patterns.collect::<Vec<_>>().join(" ")
    }

    /// Keys, channels and commands, as ACL LIST shows them.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        let keys = self.keys();
        if !keys.is_empty() {
            parts.push(keys);
        }
        if self.all_channels {
            parts.push("&*".to_owned());
        } else {
            parts.push("resetchannels".to_owned());
            let channels = self.channels();
            if !channels.is_empty() {
                parts.push(channels);
            }
        }
        parts.push(self.commands());
        parts.join(" ")
    }
}

/// One user; changed only as a whole (SETUSER builds a new one from a copy).
#[derive(Debug, Clone)]
pub struct User {
    pub name: Bytes,
    pub enabled: bool,
    pub nopass: bool,
    /// `sanitize-payload` (true) or `skip-sanitize-payload` (false), when given.
    sanitize: Option<bool>,
    /// SHA-256 of each password, in hex, in the order they were added.
    passwords: Vec<String>,
    /// The user's own permissions.
    pub root: Selector,
    /// Further sets of permissions (`(…)` rules).
    pub selectors: Vec<Selector>,
    /// Every command, key and channel: nothing to check.
    pub unrestricted: bool,
}

/// ACL CAT's categories, in Redis's order.
pub const CATEGORIES: [&str; 21] = [
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Every command of the table, subcommands included.
pub fn every_command() -> impl Iterator<Item = &'static CommandSpec> {
    table::commands()
        .iter()
        .flat_map(|spec| std::iter::once(*spec).chain(spec.subcommands.iter()))
}

/// The commands in `category` (without its `@`).
pub fn in_category(category: &str) -> impl Iterator<Item = &'static CommandSpec> + '_ {
    every_command().filter(move |spec| {
        table::acl_categories(spec)
            .iter()
            .any(|c| c[1..].eq_ignore_ascii_case(category))
    })
}

impl User {
    /// A new user as ACL SETUSER creates it: off, no password, no command, key or
    /// channel (or every channel when `acl-pubsub-default` is `allchannels`).
    pub fn new(name: Bytes, all_channels: bool) -> User {
        User {
            name,
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            root: Selector::new(all_channels),
            selectors: Vec::new(),
            unrestricted: false,
        }
    }

    /// Whether the user may still be subscribed to `channel` (a pattern when `pattern`):
    /// its own channel rules or a selector's allow it.
    pub fn allows_channel(&self, channel: &[u8], pattern: bool) -> bool {
        std::iter::once(&self.root)
            .chain(&self.selectors)
            .any(|set| set.allows_channel(channel, pattern))
    }

    /// The `default` user of a fresh server: every permission, and `password` if one
    /// is required.
    pub fn default_user(password: Option<&[u8]>) -> User {
        let mut user = User::new(Bytes::from_static(b"default"), true);
        for rule in ["on", "allkeys", "allcommands"] {
            user.apply(rule.as_bytes(), true).expect("a valid rule");
        }
        user.settle();
        match password {
            Some(password) => user.passwords.push(sha256_hex(password)),
            None => user.nopass = true,
        }
        user
    }

    /// Whether `password` logs this user in.
    pub fn accepts(&self, password: &[u8]) -> bool {
        self.enabled && (self.nopass || self.passwords.contains(&sha256_hex(password)))
    }

    /// Applies one ACL SETUSER rule (a selector `(…)` whole); `all_channels_default` is
    /// `acl-pubsub-default`. The error is Redis's reason.
    /// [`User::settle`] must follow the last rule.
    pub fn apply(&mut self, rule: &[u8], all_channels_default: bool) -> Result<(), &'static str> {
        // An empty rule does nothing, as in Redis.
        if rule.is_empty() || self.root.apply(rule)? {
            return Ok(());
        }
        match rule.split_first() {
            Some((b'>', password)) => {
                let hash = sha256_hex(password);
                if !self.passwords.contains(&hash) {
                    self.passwords.push(hash);
                }
                self.nopass = false;
                return Ok(());
            }
            Some((b'<', password)) => return self.remove_password(&sha256_hex(password)),
            Some((b'(', inner)) => {
                let inner = inner.strip_suffix(b")").ok_or(SYNTAX)?;
                self.selectors
                    .push(Selector::parse(inner, all_channels_default)?);
                return Ok(());
            }
            _ => {}
        }
        let text = std::str::from_utf8(rule).map_err(|_| SYNTAX)?;
        match text.to_ascii_lowercase().as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            "sanitize-payload" => self.sanitize = Some(true),
            "skip-sanitize-payload" => self.sanitize = Some(false),
            "clearselectors" => self.selectors.clear(),
            "reset" => {
                self.nopass = false;
                self.passwords.clear();
                self.selectors.clear();
                self.root = Selector::new(all_channels_default);
                self.enabled = false;
                self.sanitize = Some(true);
            }
            _ => match text.split_at_checked(1) {
                Some(("#", hash)) => {
                    check_hash(hash)?;
                    if !self.passwords.iter().any(|h| h == hash) {
                        self.passwords.push(hash.to_owned());
                    }
                    self.nopass = false;
                }
                Some(("!", hash)) => {
                    check_hash(hash)?;
                    self.remove_password(hash)?;
                }
                _ => return Err(SYNTAX),
            },
        }
        Ok(())
    }

    /// Works out what the rules applied allow (after the last of a SETUSER's rules).
    pub fn settle(&mut self) {
        self.root.settle();
        self.unrestricted = self.root.unrestricted();
    }

    fn remove_password(&mut self, hash: &str) -> Result<(), &'static str> {
        let before = self.passwords.len();
        self.passwords.retain(|h| h != hash);
        if self.passwords.len() == before {
            return Err("The password you are trying to remove from the user does not exist");
        }
        Ok(())
    }

    /// Whether this user may run `request` (resolved to `spec`): its own permissions
    /// or one of its selectors allow it whole. Otherwise the refusal Redis finds most
    /// telling (a channel over a key over a command, then the furthest argument).
    pub fn check(&self, spec: &CommandSpec, request: &Request) -> Result<(), Denied> {
        if self.unrestricted {
            return Ok(());
        }
        let mut relevant = Denied::Command;
        for selector in std::iter::once(&self.root).chain(&self.selectors) {
            match selector.check(spec, request) {
                Ok(()) => return Ok(()),
                Err(denied) if denied.rank() > relevant.rank() => relevant = denied,
                Err(_) => {}
            }
        }
        Err(relevant)
    }

    /// The user's flags, as ACL GETUSER lists them.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }

    pub fn passwords(&self) -> &[String] {
        &self.passwords
    }

    /// The user as ACL LIST shows it, and as an ACL file holds it.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("user {}", String::from_utf8_lossy(&self.name))];
        parts.extend(self.flags().into_iter().map(str::to_owned));
        parts.extend(self.passwords.iter().map(|h| format!("#{h}")));
        parts.push(self.root.describe());
        parts.extend(self.selectors.iter().map(|s| format!("({})", s.describe())));
        parts.join(" ")
    }
}

impl Denied {
    /// Redis's order of relevance: a channel, a key, a command; then the furthest
    /// argument.
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(pos) => (2, pos),
            Denied::Channel(pos) => (4, pos),
        }
    }
}

/// Joins the arguments of a selector written across several (`(+get` `~a*)`) into one,
/// as Redis does; the error names the argument whose `(` is never closed.
pub fn merge_selectors(args: &[Bytes]) -> Result<Vec<Bytes>, Bytes> {
    let mut merged = Vec::with_capacity(args.len());
    let mut open: Option<(Bytes, Vec<u8>)> = None;
    for arg in args {
        match &mut open {
            Some((_, joined)) => {
                joined.push(b' ');
                joined.extend_from_slice(arg);
                if arg.ends_with(b")") {
                    let (_, joined) = open.take().expect("open");
                    merged.push(Bytes::from(joined));
                }
            }
            None if arg.starts_with(b"(") && !arg.ends_with(b")") => {
                open = Some((arg.clone(), arg.to_vec()));
            }
            None => merged.push(arg.clone()),
        }
    }
    match open {
        Some((first, _)) => Err(first),
        None => Ok(merged),
    }
}

const SYNTAX: &str = "Syntax error";
const UNKNOWN_COMMAND: &str = "Unknown command or category name in ACL";

const FIRST_ARG_OF_SUBCOMMAND: &str = "Allowing first-arg of a subcommand is not supported";

/// What a command rule names.
enum Target {
    /// Commands by full name: a category's, a command with its subcommands, or
    /// `command|subcommand`.
    Commands(Vec<&'static str>),
    /// A command without subcommands with one first argument (`select|0`), which only a
    /// `+` rule may name.
    FirstArg(&'static str, String),
}

/// What the rule `+target` (`allow`) or `-target` names; the error is Redis's.
fn target(target: &str, allow: bool) -> Result<Target, &'static str> {
    let lower = target.to_ascii_lowercase();
    if let Some(category) = lower.strip_prefix('@') {
        if !CATEGORIES.contains(&category) {
            return Err(UNKNOWN_COMMAND);
        }
        return Ok(Target::Commands(
            in_category(category).map(|spec| spec.name).collect(),
        ));
    }
    let Some((name, arg)) = target.rsplit_once('|') else {
        let spec = table::lookup(target.as_bytes()).ok_or(UNKNOWN_COMMAND)?;
        return Ok(Target::Commands(
            std::iter::once(spec.name)
                .chain(spec.subcommands.iter().map(|s| s.name))
                .collect(),
        ));
    };
    // As Redis: what is before the last `|` must be a command (a subcommand takes no
    // first argument), and what follows it a subcommand of it or, for `+` only, any
    // first argument of a command that has no subcommands.
    let spec = match name.split_once('|') {
        Some((parent, sub)) if allow => {
            let parent = table::lookup(parent.as_bytes()).ok_or(UNKNOWN_COMMAND)?;
            parent.subcommand(sub.as_bytes()).ok_or(UNKNOWN_COMMAND)?;
            return Err(FIRST_ARG_OF_SUBCOMMAND);
        }
        Some(_) => return Err(UNKNOWN_COMMAND),
        None => table::lookup(name.as_bytes()).ok_or(UNKNOWN_COMMAND)?,
    };
    if arg.is_empty() && allow {
        return Err(SYNTAX);
    }
    match spec.subcommand(arg.as_bytes()) {
        Some(sub) => Ok(Target::Commands(vec![sub.name])),
        None if allow && spec.subcommands.is_empty() => {
            Ok(Target::FirstArg(spec.name, arg.to_owned()))
        }
        None => Err(UNKNOWN_COMMAND),
    }
}

/// The commands allowed from `+@all` (or none) and the rules after it, and the first
/// arguments allowed of commands not allowed whole. A rule on a command forgets its
/// first arguments, as in Redis.
fn allowed_by(all: bool, rules: &[String]) -> (HashSet<&'static str>, FirstArgs) {
    let mut allowed: HashSet<&'static str> = if all {
        every_command().map(|spec| spec.name).collect()
    } else {
        HashSet::new()
    };
    let mut first_args = FirstArgs::new();
    for rule in rules {
        let allow = rule.starts_with('+');
        match target(&rule[1..], allow) {
            Ok(Target::Commands(names)) => {
                for name in names {
                    first_args.remove(name);
                    if allow {
                        allowed.insert(name);
                    } else {
                        allowed.remove(name);
                    }
                }
            }
            Ok(Target::FirstArg(name, arg)) => {
                let args = first_args.entry(name).or_default();
                if !args.iter().any(|a| a.eq_ignore_ascii_case(&arg)) {
                    args.push(arg);
                }
            }
            Err(_) => {}
        }
    }
    first_args.retain(|name, _| !allowed.contains(name));
    (allowed, first_args)
}

fn check_hash(hash: &str) -> Result<(), &'static str> {
    let valid = hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if valid {
        Ok(())
    } else {
        Err(
            "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
        )
    }
}

/// SHA-256 of `data` in lowercase hex.
pub fn sha256_hex(data: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, data);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &[&str]) -> Result<User, &'static str> {
        let mut user = User::new(Bytes::from_static(b"u"), false);
        for rule in rules {
            user.apply(rule.as_bytes(), false)?;
        }
        user.settle();
        Ok(user)
    }

    #[test]
    fn describes_as_redis_lists() {
        let bob = user(&[
            "on", ">pw", "~k*", "%R~r*", "%W~w*", "&ch*", "+get", "+@hash", "-hdel", "-@all",
            "+set",
        ])
        .unwrap();
        assert_eq!(
            bob.describe(),
            format!(
                "user u on #{} ~k* %R~r* %W~w* resetchannels &ch* -@all +set",
                sha256_hex(b"pw")
            )
        );
        let alice = user(&[
            "on",
            "nopass",
            "allkeys",
            "allchannels",
            "+@all",
            "-flushall",
        ]);
        assert_eq!(
            alice.unwrap().describe(),
            "user u on nopass ~* &* +@all -flushall"
        );
        let compact = user(&["+@all", "-get", "+@read", "-config|set"]).unwrap();
        assert_eq!(compact.root.commands(), "+@all -config|set");
        let selectors = user(&["on", "nopass", "(+get ~a*)", "(+set ~b* &c)", "~k*", "+del"]);
        assert_eq!(
            selectors.unwrap().describe(),
            "user u on nopass ~k* resetchannels -@all +del (~a* resetchannels -@all +get) (~b* resetchannels &c -@all +set)"
        );
        assert_eq!(
            user(&["reset"]).unwrap().describe(),
            "user u off sanitize-payload resetchannels -@all"
        );
    }

    #[test]
    fn a_rule_for_every_command_settles_once() {
        let rules: Vec<String> = every_command()
            .map(|spec| format!("+{}", spec.name))
            .collect();
        let refs: Vec<&str> = rules.iter().map(String::as_str).collect();
        let all = user(&refs).unwrap();
        assert_eq!(all.root.allowed.len(), every_command().count());
        assert!(!all.unrestricted, "no key or channel yet");
    }

    #[test]
    fn refuses_what_redis_refuses() {
        assert_eq!(user(&["+nosuch"]).err(), Some(UNKNOWN_COMMAND));
        assert_eq!(user(&["+@nosuch"]).err(), Some(UNKNOWN_COMMAND));
        assert_eq!(user(&["bad"]).err(), Some(SYNTAX));
        assert_eq!(user(&["%X~e"]).err(), Some(SYNTAX));
        assert!(
            user(&["#abc"])
                .err()
                .unwrap()
                .starts_with("The password hash")
        );
        assert!(user(&["<nopw"]).err().unwrap().contains("does not exist"));
        assert!(
            user(&["allkeys", "~b"])
                .err()
                .unwrap()
                .starts_with("Adding a pattern")
        );
        assert_eq!(user(&["(+get ~a))"]).err(), Some(SYNTAX));
    }

    #[test]
    fn first_arguments_of_commands_without_subcommands() {
        let u = user(&[
            "~*",
            "+SELECT|Ab",
            "+select|0",
            "+select|ab",
            "+debug|object",
        ])
        .unwrap();
        assert_eq!(
            u.root.commands(),
            "-@all +select|Ab +select|0 +debug|object"
        );
        let check = |line: &[&str]| {
            let request = Request::from_args(line);
            u.check(table::resolve(&request).unwrap(), &request)
        };
        assert_eq!(check(&["select", "0"]), Ok(()));
        assert_eq!(check(&["SELECT", "AB"]), Ok(()));
        assert_eq!(check(&["select", "1"]), Err(Denied::Command));
        // A rule on the command itself forgets its first arguments.
        let reset = user(&["+select|0", "-select", "+get|x", "+@all", "-get"]).unwrap();
        assert_eq!(reset.root.commands(), "+@all -get");
        let again = user(&["+select|0", "-select", "+select|0"]).unwrap();
        assert_eq!(again.root.commands(), "-@all +select|0");
        // Shown last, as Redis shows them.
        let last = user(&["+select|0", "+get"]).unwrap();
        assert_eq!(last.root.commands(), "-@all +get +select|0");
        assert_eq!(user(&["+get|"]).err(), Some(SYNTAX));
        assert_eq!(user(&["-select|0"]).err(), Some(UNKNOWN_COMMAND));
        assert_eq!(user(&["+nosuch|0"]).err(), Some(UNKNOWN_COMMAND));
        assert_eq!(user(&["+select|0|1"]).err(), Some(UNKNOWN_COMMAND));
        assert_eq!(user(&["+config|nosuch"]).err(), Some(UNKNOWN_COMMAND));
        assert_eq!(
            user(&["+config|get|maxmemory"]).err(),
            Some(FIRST_ARG_OF_SUBCOMMAND)
        );
    }

    #[test]
    fn checks_commands_keys_and_channels() {
        let bob = user(&[
            "on",
            "~k*",
            "%R~r*",
            "%W~w*",
            "&ch*",
            "+get",
            "+set",
            "+publish",
            "+psubscribe",
            "+client|id",
        ])
        .unwrap();
        let check = |line: &[&str]| {
            let request = Request::from_args(line);
            bob.check(table::resolve(&request).unwrap(), &request)
        };
        assert_eq!(check(&["get", "k1"]), Ok(()));
        assert_eq!(check(&["get", "r1"]), Ok(()));
        assert_eq!(check(&["set", "r1", "x"]), Err(Denied::Key(1)));
        assert_eq!(check(&["set", "w1", "x"]), Ok(()));
        assert_eq!(check(&["get", "w1"]), Err(Denied::Key(1)));
        assert_eq!(check(&["del", "k1"]), Err(Denied::Command));
        assert_eq!(check(&["client", "id"]), Ok(()));
        assert_eq!(check(&["client", "list"]), Err(Denied::Command));
        assert_eq!(check(&["publish", "ch1", "m"]), Ok(()));
        assert_eq!(check(&["publish", "other", "m"]), Err(Denied::Channel(1)));
        assert_eq!(check(&["psubscribe", "ch*"]), Ok(()));
        assert_eq!(check(&["psubscribe", "ch1"]), Err(Denied::Channel(1)));
    }
}
