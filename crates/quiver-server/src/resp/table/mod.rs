//! The command table: name, arity, flags, key positions, summary and version
//! of every command Quiver's cache serves, as `COMMAND`, `COMMAND INFO`,
//! `COMMAND COUNT` and `COMMAND DOCS` report them.
//!
//! Each command family declares its entries next to its parsers
//! (`command/<family>.rs`); this module merges them into one index sorted by
//! name, looked up case-insensitively without allocating.

mod reply;
mod syntax;

use std::sync::LazyLock;

pub(crate) use reply::acl_categories;
pub use reply::{command_reply, docs_reply, help_reply, info_reply, lookup_full, name_bytes};

use crate::resp::command::{self, Args, Command};
use quiver_resp::error::CommandError;
use quiver_resp::request::Request;

/// Command flags, as `COMMAND INFO` names them.
pub mod flag {
    /// May modify the keyspace.
    pub const WRITE: u32 = 1;
    /// Only reads the keyspace.
    pub const READONLY: u32 = 1 << 1;
    /// May grow memory use: refused with `OOM` over `maxmemory`.
    pub const DENYOOM: u32 = 1 << 2;
    /// Administrative.
    pub const ADMIN: u32 = 1 << 3;
    /// Not allowed from scripts.
    pub const NOSCRIPT: u32 = 1 << 4;
    /// May block the client.
    pub const BLOCKING: u32 = 1 << 5;
    /// Allowed while loading the data set.
    pub const LOADING: u32 = 1 << 6;
    /// Allowed on a stale replica.
    pub const STALE: u32 = 1 << 7;
    /// O(1) or O(log N), never delays the server.
    pub const FAST: u32 = 1 << 8;
    /// Allowed before authenticating.
    pub const NO_AUTH: u32 = 1 << 9;
    /// Key positions depend on the arguments (`numkeys`).
    pub const MOVABLE_KEYS: u32 = 1 << 10;
    /// Allowed while a script is busy.
    pub const ALLOW_BUSY: u32 = 1 << 11;
    /// Not logged in the slow log.
    pub const SKIP_SLOWLOG: u32 = 1 << 12;
    /// A pub/sub command (in `@pubsub`).
    pub const PUBSUB: u32 = 1 << 13;
    /// Allowed to a RESP2 client that holds subscriptions (Quiver's own flag, not in
    /// `COMMAND INFO`: Redis allows exactly the (un)subscribe commands, PING, QUIT and
    /// RESET there).
    pub const SUBSCRIBED_OK: u32 = 1 << 14;
    /// Refused while a replica loads its data asynchronously (kept for `COMMAND INFO`).
    pub const NO_ASYNC_LOADING: u32 = 1 << 15;
    /// Not shown to MONITOR (the scripting commands).
    pub const SKIP_MONITOR: u32 = 1 << 16;
    /// May be called with no key at all though it takes keys (EVAL's `numkeys` 0).
    pub const NO_MANDATORY_KEYS: u32 = 1 << 17;
    /// Refused inside MULTI (SHUTDOWN).
    pub const NO_MULTI: u32 = 1 << 18;

    /// Every flag with its `COMMAND INFO` name, in Redis's order.
    pub const NAMES: [(u32, &str); 18] = [
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
        (MOVABLE_KEYS, "movablekeys"),
    ];
}

/// The group `COMMAND DOCS` files a command under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// Strings.
    String,
    /// Bitmaps.
    Bitmap,
    /// Keys of any type.
    Generic,
    /// Hashes.
    Hash,
    /// Lists.
    List,
    /// Sets.
    Set,
    /// Sorted sets.
    SortedSet,
    /// Streams.
    Stream,
    /// Pub/sub.
    PubSub,
    /// Transactions.
    Transactions,
    /// Connection management.
    Connection,
    /// Server management.
    Server,
    /// Scripts and functions.
    Scripting,
    /// HyperLogLog (on string values).
    HyperLogLog,
    /// Geospatial indexes (on sorted sets).
    Geo,
}

impl Group {
    /// The name `COMMAND DOCS` reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::String => "string",
            Group::Bitmap => "bitmap",
            Group::Generic => "generic",
            Group::Hash => "hash",
            Group::List => "list",
            Group::Set => "set",
            Group::SortedSet => "sorted-set",
            Group::Stream => "stream",
            Group::PubSub => "pubsub",
            Group::Transactions => "transactions",
            Group::Connection => "connection",
            Group::Server => "server",
            Group::Scripting => "scripting",
            Group::HyperLogLog => "hyperloglog",
            Group::Geo => "geo",
        }
    }

    /// The ACL category of the group.
    pub fn acl_category(self) -> &'static str {
        match self {
            Group::String => "@string",
            Group::Bitmap => "@bitmap",
            Group::Generic => "@keyspace",
            Group::Hash => "@hash",
            Group::List => "@list",
            Group::Set => "@set",
            Group::SortedSet => "@sortedset",
            Group::Stream => "@stream",
            Group::PubSub => "@pubsub",
            Group::Transactions => "@transaction",
            Group::Connection => "@connection",
            Group::Server => "@admin",
            Group::Scripting => "@scripting",
            Group::HyperLogLog => "@hyperloglog",
            Group::Geo => "@geo",
        }
    }
}

/// Parses a command's arguments once its spec and arity are known.
pub(crate) type Parser = fn(&mut Args<'_>) -> Result<Command, CommandError>;

/// One command (or subcommand) of the table.
#[derive(Debug)]
pub struct CommandSpec {
    /// Lower-case name; subcommands are `container|sub` as in Redis 7.
    pub name: &'static str,
    /// Redis's arity: exact argument count with the name, or at least
    /// `-arity` when negative.
    pub arity: i32,
    /// Bits of [`flag`].
    pub flags: u32,
    /// Position of the first key (0: none).
    pub first_key: i32,
    /// Position of the last key (negative: from the end).
    pub last_key: i32,
    /// Step between keys.
    pub key_step: i32,
    /// The documentation group.
    pub group: Group,
    /// The Redis version that introduced the command.
    pub since: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Subcommands of a container command (`CLIENT`, `CONFIG`...).
    pub subcommands: &'static [CommandSpec],
    /// Position of a `numkeys` argument followed by that many keys, beyond the
    /// first/last/step range (0: none). Such commands carry the `movablekeys` flag.
    pub numkeys: usize,
    /// The keys follow this keyword and take half of the arguments after it (XREAD's
    /// `STREAMS key... id...`). Such commands carry the `movablekeys` flag.
    pub keys_after: Option<(&'static str, usize)>,
    /// The keys may instead follow this keyword, looked for from argument `.1` on, to
    /// the end (MIGRATE's `KEYS`), over the options `.2` names with the count of values
    /// each takes (`AUTH password`); the first key position then holds no key, and must
    /// be empty. Its key specification searches from the second-to-last argument back,
    /// as Redis's does.
    pub keys_instead: Option<(&'static str, usize, &'static [OptionValues])>,
    /// The field or member the command looks up in its first key's value, for
    /// reading a pipeline ahead.
    pub member: MemberAt,
    /// The first key plays another part than the rest (a source or a destination) and
    /// has a key specification of its own, as Redis reports it.
    pub first_key_apart: bool,
    /// The arguments after the name, as Redis's documentation writes them (see
    /// `syntax.rs` for the notation); empty for a command without arguments.
    pub syntax: &'static str,
    /// The ACL category of its kind, when it is not its group's (`DBSIZE` is a server
    /// command in `@keyspace`); server commands have none unless they say so.
    pub acl_category: Option<&'static str>,
    /// In `@dangerous` without being an admin command (`KEYS`, `FLUSHALL`...).
    pub dangerous: bool,
    /// The flags of each key specification (`RW`, `access`, `update`...), in the order
    /// `COMMAND INFO` lists the specifications.
    pub key_flags: &'static [&'static [&'static str]],
    /// Its key positions hold names that are not keys (shard channels: `not_key`).
    pub not_keys: bool,
    /// The note on the first key specification, if any.
    pub key_note: Option<&'static str>,
    /// Key specifications Redis cannot locate (`unknown`), after the others, each with
    /// its note (SORT's BY/GET patterns and STORE).
    pub unknown_keys: &'static [&'static str],
    /// A `STORE key` option after the first key names a destination key (SORT); the
    /// last one counts, as in Redis.
    pub store_key: bool,
    /// `STORE key` and `STOREDIST key` options name a destination key (GEORADIUS): they
    /// are looked for from argument `.0` on (the last one counts), and each keyword has
    /// a key specification starting its search at argument `.1`.
    pub store_options: Option<(usize, usize)>,
    /// Command tips (`nondeterministic_output`, `request_policy:...`).
    pub tips: &'static [&'static str],
    /// For a command whose key flags depend on its arguments (`variable_flags`): the
    /// flags of its first key in a given request.
    pub variable_key_flags: Option<fn(&Request) -> &'static [&'static str]>,
    pub(crate) parser: Parser,
}

/// An option and how many values follow it (`("AUTH", 1)`).
pub type OptionValues = (&'static str, usize);

/// Where a command names the field or member it looks up in its first key's value.
#[derive(Debug, Clone, Copy)]
pub enum MemberAt {
    /// Nowhere: the command looks up keys only.
    None,
    /// At this argument position.
    At(usize),
    /// Where this function finds it, after options (`ZADD key [NX|XX]... score member`).
    Find(fn(&Request) -> Option<usize>),
}

impl CommandSpec {
    /// A table entry.
    #[allow(clippy::too_many_arguments)]
    pub(crate) const fn new(
        group: Group,
        name: &'static str,
        arity: i32,
        flags: u32,
        keys: (i32, i32, i32),
        since: &'static str,
        summary: &'static str,
        parser: Parser,
    ) -> CommandSpec {
        CommandSpec {
            name,
            arity,
            flags,
            first_key: keys.0,
            last_key: keys.1,
            key_step: keys.2,
            group,
            since,
            summary,
            subcommands: &[],
            numkeys: 0,
            keys_after: None,
            keys_instead: None,
            not_keys: false,
            member: MemberAt::None,
            first_key_apart: false,
            syntax: "",
            acl_category: None,
            dangerous: false,
            key_flags: &[],
            key_note: None,
            unknown_keys: &[],
            store_key: false,
            store_options: None,
            tips: &[],
            variable_key_flags: None,
            parser,
        }
    }

    /// This entry with the flags of its key specifications.
    pub(crate) const fn with_key_flags(
        self,
        key_flags: &'static [&'static [&'static str]],
    ) -> CommandSpec {
        CommandSpec { key_flags, ..self }
    }

    /// This entry with a note on its first key specification.
    /// This entry with key specifications of type `unknown`, one per note (after the
    /// others); with `store`, a `STORE key` option names a destination key.
    pub(crate) const fn with_unknown_keys(
        self,
        notes: &'static [&'static str],
        store: bool,
    ) -> CommandSpec {
        CommandSpec {
            unknown_keys: notes,
            store_key: store,
            ..self
        }
    }

    pub(crate) const fn with_key_note(self, note: &'static str) -> CommandSpec {
        CommandSpec {
            key_note: Some(note),
            ..self
        }
    }

    /// This entry with the flags of its first key decided by `flags` per request.
    pub(crate) const fn with_variable_key_flags(
        self,
        flags: fn(&Request) -> &'static [&'static str],
    ) -> CommandSpec {
        CommandSpec {
            variable_key_flags: Some(flags),
            ..self
        }
    }

    /// This entry with command tips.
    pub(crate) const fn with_tips(self, tips: &'static [&'static str]) -> CommandSpec {
        CommandSpec { tips, ..self }
    }

    /// This entry in the ACL category `category` rather than its group's.
    pub(crate) const fn with_acl_category(self, category: &'static str) -> CommandSpec {
        CommandSpec {
            acl_category: Some(category),
            ..self
        }
    }

    /// This entry in `@dangerous`.
    pub(crate) const fn dangerous(self) -> CommandSpec {
        CommandSpec {
            dangerous: true,
            ..self
        }
    }

    /// This entry with its argument syntax.
    pub(crate) const fn with_syntax(self, syntax: &'static str) -> CommandSpec {
        CommandSpec { syntax, ..self }
    }

    /// This entry with `STORE`/`STOREDIST` destination options (see
    /// [`CommandSpec::store_options`]).
    pub(crate) const fn with_store_options(self, from: usize, startfrom: usize) -> CommandSpec {
        CommandSpec {
            store_options: Some((from, startfrom)),
            ..self
        }
    }

    /// This entry with its first key in a key specification of its own.
    pub(crate) const fn with_first_key_apart(self) -> CommandSpec {
        CommandSpec {
            first_key_apart: true,
            ..self
        }
    }

    /// This entry with names at its key positions that are not keys (`not_key`).
    pub(crate) const fn with_names_not_keys(self) -> CommandSpec {
        CommandSpec {
            key_flags: &[&["not_key"]],
            not_keys: true,
            ..self
        }
    }

    /// This entry with its keys after `keyword` (looked for from argument `from` on),
    /// half of the arguments that follow it.
    pub(crate) const fn with_keys_after(self, keyword: &'static str, from: usize) -> CommandSpec {
        CommandSpec {
            keys_after: Some((keyword, from)),
            ..self
        }
    }

    /// This entry with other key positions (first, last, step).
    pub(crate) const fn with_keys(self, (first, last, step): (i32, i32, i32)) -> CommandSpec {
        CommandSpec {
            first_key: first,
            last_key: last,
            key_step: step,
            ..self
        }
    }

    /// This entry with its keys after `keyword` instead, when the request has it (see
    /// [`CommandSpec::keys_instead`]).
    pub(crate) const fn with_keys_instead(
        self,
        keyword: &'static str,
        from: usize,
        options: &'static [OptionValues],
    ) -> CommandSpec {
        CommandSpec {
            keys_instead: Some((keyword, from, options)),
            ..self
        }
    }

    /// This entry with a `numkeys` argument at `position`, followed by the keys.
    pub(crate) const fn with_numkeys(self, position: usize) -> CommandSpec {
        CommandSpec {
            numkeys: position,
            ..self
        }
    }

    /// This entry with the member it looks up at `member`.
    pub(crate) const fn with_member(self, member: MemberAt) -> CommandSpec {
        CommandSpec { member, ..self }
    }

    /// This entry as a container of `subcommands`.
    pub(crate) const fn with_subcommands(self, subcommands: &'static [CommandSpec]) -> CommandSpec {
        CommandSpec {
            subcommands,
            ..self
        }
    }

    /// True when the command has `flag` (a [`flag`] constant).
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Positions of the keys in `request`, by the command's first key, last key and
    /// step, then the keys its `numkeys` argument counts (none when that argument is
    /// not a count the request holds), as `COMMAND GETKEYS` reports them.
    pub fn key_positions(&self, request: &Request) -> impl Iterator<Item = usize> + use<> {
        let counted = self.counted_keys(request).unwrap_or(0..0);
        let instead = self.keys_instead_of_first(request);
        let argc = if self.not_keys || instead.is_some() {
            0
        } else {
            request.len()
        };
        let after = self.keys_after_keyword(request);
        let store = self.store_positions(request);
        self.range_positions(argc)
            .chain(counted)
            .chain(after)
            .chain(store)
            .chain(instead.unwrap_or(0..0))
    }

    /// The positions of the keys after [`CommandSpec::keys_instead`]'s keyword, when the
    /// request has it (none when the first key position is not empty), found as
    /// Redis's MIGRATE finds them: the values of the options are skipped.
    fn keys_instead_of_first(&self, request: &Request) -> Option<std::ops::Range<usize>> {
        let (keyword, from, options) = self.keys_instead?;
        let mut pos = from;
        while let Some(arg) = request.arg(pos) {
            if arg.eq_ignore_ascii_case(keyword.as_bytes()) {
                let first = usize::try_from(self.first_key).unwrap_or(0);
                if request.arg(first).is_some_and(|key| !key.is_empty()) {
                    return Some(0..0);
                }
                return Some(pos + 1..request.len());
            }
            let skip = options
                .iter()
                .find(|(option, _)| arg.eq_ignore_ascii_case(option.as_bytes()))
                .map_or(0, |(_, values)| *values);
            pos += 1 + skip;
        }
        None
    }

    /// Where the destinations of `STORE key` options are. GEORADIUS: what its two key
    /// specifications find (the first `STORE`, the first `STOREDIST`, each searched from
    /// its start), and the destination the command writes (the last of either) if that
    /// is another. SORT's rule: `LIMIT`, `GET` and `BY` skip their arguments, the last
    /// `STORE` counts.
    fn store_positions(&self, request: &Request) -> Vec<usize> {
        if let Some((from, startfrom)) = self.store_options {
            let keyword = |word: &[u8]| {
                (startfrom..request.len().saturating_sub(1))
                    .find(|&pos| {
                        request
                            .arg(pos)
                            .is_some_and(|a| a.eq_ignore_ascii_case(word))
                    })
                    .map(|pos| pos + 1)
            };
            let mut found: Vec<usize> = [keyword(b"store"), keyword(b"storedist")]
                .into_iter()
                .flatten()
                .collect();
            let mut written = None;
            let mut pos = from;
            while pos < request.len() {
                let arg = request.arg(pos).unwrap_or_default();
                let store =
                    arg.eq_ignore_ascii_case(b"store") || arg.eq_ignore_ascii_case(b"storedist");
                if store && pos + 1 < request.len() {
                    written = Some(pos + 1);
                    pos += 1;
                }
                pos += 1;
            }
            if let Some(pos) = written.filter(|pos| !found.contains(pos)) {
                found.push(pos);
            }
            return found;
        }
        self.store_position(request).into_iter().collect()
    }

    /// SORT's destination (see [`CommandSpec::store_positions`]).
    fn store_position(&self, request: &Request) -> Option<usize> {
        if !self.store_key {
            return None;
        }
        let mut found = None;
        let mut pos = 2;
        while pos < request.len() {
            let arg = request.arg(pos).unwrap_or_default();
            let word = |w: &str| arg.eq_ignore_ascii_case(w.as_bytes());
            if word("limit") {
                pos += 2;
            } else if word("get") || word("by") {
                pos += 1;
            } else if word("store") && pos + 1 < request.len() {
                found = Some(pos + 1);
            }
            pos += 1;
        }
        found
    }

    /// The positions of the keys after the keyword: half of what follows its first
    /// occurrence (none without it).
    fn keys_after_keyword(&self, request: &Request) -> std::ops::Range<usize> {
        let Some((keyword, from)) = self.keys_after else {
            return 0..0;
        };
        let found = (from..request.len()).find(|&pos| {
            request
                .arg(pos)
                .is_some_and(|arg| arg.eq_ignore_ascii_case(keyword.as_bytes()))
        });
        match found {
            Some(pos) => pos + 1..pos + 1 + (request.len() - pos - 1) / 2,
            None => 0..0,
        }
    }

    /// Whether the command takes keys at all: key positions, and not only names that
    /// are positioned like keys but are not keys (shard channels, `not_key`).
    pub fn has_keys(&self) -> bool {
        (self.first_key > 0 || self.numkeys > 0 || self.keys_after.is_some()) && !self.not_keys
    }

    /// `COMMAND GETKEYS` and `GETKEYSANDFLAGS`: the key positions of `request`, each
    /// with the flags of the key specification that finds it, or Redis's error when its
    /// `numkeys` is not a count of keys the request holds, or it names no key.
    pub fn get_keys(
        &self,
        request: &Request,
    ) -> Result<Vec<(usize, &'static [&'static str])>, CommandError> {
        let invalid = CommandError::Message("Invalid arguments specified for command");
        // A command whose keys are optional (EVAL, FCALL) has none when its count says
        // none, or is not a count Redis takes.
        let optional = self.has(flag::NO_MANDATORY_KEYS);
        let Some(counted) = self.counted_keys(request) else {
            return if optional {
                Ok(Vec::new())
            } else {
                Err(invalid)
            };
        };
        let ranges = usize::from(self.first_key > 0) + usize::from(self.first_key_apart);
        let flags = |index: usize| self.key_flags.get(index).copied().unwrap_or_default();
        let first = usize::try_from(self.first_key).unwrap_or(0);
        let instead = self.keys_instead_of_first(request);
        let argc = if instead.is_some() { 0 } else { request.len() };
        let mut keys: Vec<(usize, &'static [&'static str])> = self
            .range_positions(argc)
            .map(|pos| {
                let apart = self.first_key_apart && pos != first;
                (pos, flags(usize::from(apart)))
            })
            .chain(counted.map(|pos| (pos, flags(ranges))))
            .chain(self.keys_after_keyword(request).map(|pos| (pos, flags(0))))
            .chain(
                self.store_positions(request)
                    .into_iter()
                    .map(|pos| (pos, flags(self.key_flags.len().saturating_sub(1)))),
            )
            // Found as MIGRATE's own key finder finds them, with its flags: the first.
            .chain(instead.unwrap_or(0..0).map(|pos| (pos, flags(0))))
            .collect();
        if let (Some(variable), Some((_, first))) = (self.variable_key_flags, keys.first_mut()) {
            *first = variable(request);
        }
        if keys.is_empty() && !optional {
            return Err(invalid);
        }
        Ok(keys)
    }

    /// The positions its `numkeys` argument counts: empty without one, `None` when
    /// it is not a count from 1 that the request holds.
    fn counted_keys(&self, request: &Request) -> Option<std::ops::Range<usize>> {
        if self.numkeys == 0 {
            return Some(0..0);
        }
        let count = quiver_resp::num::parse_i64(request.arg(self.numkeys)?)?;
        let count = usize::try_from(count).ok().filter(|&n| n > 0)?;
        let first = self.numkeys + 1;
        (first + count <= request.len()).then_some(first..first + count)
    }

    /// Positions by the first key, last key and step, in a request of `argc`
    /// arguments (name included), as `COMMAND INFO` reports them.
    fn range_positions(&self, argc: usize) -> impl Iterator<Item = usize> + use<> {
        let argc = i64::try_from(argc).unwrap_or(i64::MAX);
        let first = i64::from(self.first_key);
        let last = match i64::from(self.last_key) {
            _ if first <= 0 => 0,
            from_end if from_end < 0 => argc + from_end,
            last => last.min(argc - 1),
        };
        let step = usize::try_from(self.key_step).unwrap_or(1).max(1);
        (first.max(1)..=last)
            .step_by(step)
            .filter_map(|pos| usize::try_from(pos).ok())
    }

    /// Position of the field or member `request` looks up in its first key's value.
    pub fn member_position(&self, request: &Request) -> Option<usize> {
        match self.member {
            MemberAt::None => None,
            MemberAt::At(position) => Some(position),
            MemberAt::Find(find) => find(request),
        }
    }

    /// True when `argc` arguments (name included) satisfy the arity.
    pub fn accepts(&self, argc: usize) -> bool {
        let argc = i64::try_from(argc).unwrap_or(i64::MAX);
        let arity = i64::from(self.arity);
        if arity >= 0 {
            argc == arity
        } else {
            argc >= -arity
        }
    }

    /// The last part of the name: `kill` for `client|kill`.
    pub fn short_name(&self) -> &'static str {
        self.name.rsplit('|').next().unwrap_or(self.name)
    }

    /// The subcommand named `name`, case-insensitively.
    pub fn subcommand(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        self.subcommands
            .iter()
            .find(|sub| sub.short_name().as_bytes().eq_ignore_ascii_case(name))
    }
}

/// Hash buckets for [`lookup`]: with a few hundred names in 256 buckets most
/// buckets hold one name or two, so a lookup is one hash and one or two compares.
const BUCKETS: usize = 256;

/// The table, sorted by name, and its lookup buckets of names as numbers
/// ([`lowered_name`]).
struct Index {
    sorted: Vec<&'static CommandSpec>,
    buckets: Vec<Vec<(LoweredName, usize, &'static CommandSpec)>>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut sorted: Vec<&'static CommandSpec> = command::FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .collect();
    sorted.sort_by(|a, b| a.name.cmp(b.name));
    let mut buckets = vec![Vec::new(); BUCKETS];
    for spec in &sorted {
        let name = spec.name.as_bytes();
        let lowered = lowered_name(name).expect("command names are at most MAX_NAME bytes");
        buckets[bucket(lowered)].push((lowered, name.len(), *spec));
    }
    Index { sorted, buckets }
});

/// Longer than every command's name: a longer name is unknown without a look.
const MAX_NAME: usize = 32;

/// A name of at most [`MAX_NAME`] bytes as two little-endian numbers,
/// zero-padded, ASCII capitals lowered.
type LoweredName = [u128; 2];

/// `name` as a [`LoweredName`], if it is short enough: all its bytes lowered
/// in a few word operations rather than a byte at a time.
fn lowered_name(name: &[u8]) -> Option<LoweredName> {
    if name.len() > MAX_NAME {
        return None;
    }
    let mut bytes = [0u8; MAX_NAME];
    bytes[..name.len()].copy_from_slice(name);
    let (low, high) = bytes.split_at(MAX_NAME / 2);
    let half = |b: &[u8]| lowered_word(u128::from_le_bytes(b.try_into().expect("16 bytes")));
    Some([half(low), half(high)])
}

/// `word`'s sixteen bytes with their ASCII capitals lowered.
fn lowered_word(word: u128) -> u128 {
    const LOW7: u128 = u128::from_le_bytes([0x7f; 16]);
    const HIGH: u128 = u128::from_le_bytes([0x80; 16]);
    // Per byte, with its high bit cleared (so no sum carries into the next
    // byte): the sum's high bit says whether it is at least 'A' (0x41), or
    // above 'Z' (0x5a).
    let low = word & LOW7;
    let from_a = low + u128::from_le_bytes([0x80 - 0x41; 16]);
    let past_z = low + u128::from_le_bytes([0x80 - 0x5b; 16]);
    let capital = from_a & !past_z & !word & HIGH;
    // 0x80 >> 2 is 0x20, the bit that lowers a capital.
    word | (capital >> 2)
}

fn bucket([low, high]: LoweredName) -> usize {
    let folded = (low as u64) ^ ((low >> 64) as u64) ^ (high as u64) ^ ((high >> 64) as u64);
    (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % BUCKETS
}

/// Every top-level command, sorted by name.
pub fn commands() -> &'static [&'static CommandSpec] {
    &INDEX.sorted
}

/// The command named `name`, case-insensitively, without allocating.
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    let lowered = lowered_name(name)?;
    INDEX.buckets[bucket(lowered)]
        .iter()
        .find(|&&(l, len, _)| l == lowered && len == name.len())
        .map(|&(_, _, spec)| spec)
}

/// The spec that will run `request`: the command, or for a container command
/// its subcommand, with the arity checked. Errors are Redis's unknown command,
/// unknown subcommand and wrong arity replies. Servers call this before the
/// authentication check and when queueing inside `MULTI`, and parse the
/// options ([`Command::parse_resolved`]) when the command runs, as Redis does.
pub fn resolve(request: &Request) -> Result<&'static CommandSpec, CommandError> {
    resolve_found(request, request.name().and_then(lookup))
}

/// [`resolve`] with the request's command already looked up (`found`, what
/// [`lookup`] answered for its name).
pub fn resolve_found(
    request: &Request,
    found: Option<&'static CommandSpec>,
) -> Result<&'static CommandSpec, CommandError> {
    request.name().ok_or(CommandError::Syntax)?;
    let Some(spec) = found else {
        let args = (1..request.len()).filter_map(|i| request.arg_bytes(i));
        let name = request.arg_bytes(0).unwrap_or_default();
        return Err(CommandError::unknown_command(name, args));
    };
    if !spec.accepts(request.len()) {
        let error = CommandError::WrongArity { command: spec.name };
        if spec.name == "exec" {
            return Err(CommandError::exec_abort(&error));
        }
        return Err(error);
    }
    if spec.subcommands.is_empty() || request.len() < 2 {
        return Ok(spec);
    }
    let sub_name = request.arg(1).unwrap_or_default();
    let Some(sub) = spec.subcommand(sub_name) else {
        return Err(CommandError::UnknownSubcommand {
            command: spec.name,
            subcommand: request.arg_bytes(1).unwrap_or_default(),
        });
    };
    if !sub.accepts(request.len()) {
        return Err(CommandError::WrongArity { command: sub.name });
    }
    Ok(sub)
}

#[cfg(test)]
mod tests;
