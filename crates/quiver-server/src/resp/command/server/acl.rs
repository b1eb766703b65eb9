//! ACL's subcommands: their table entries, their parsing and how they run.

use bytes::{Bytes, BytesMut};
use quiver_resp::encode as write;
use quiver_resp::{CommandError, Reply, Request};

use super::specs::c;
use super::{Args, Command, ServerCommand, is};
use crate::resp::acl::{self, Acl, Denied};
use crate::resp::command::exec::container_help;
use crate::resp::connection::Connection;
use crate::resp::table::flag::{ADMIN, LOADING, NOSCRIPT, STALE};
use crate::resp::table::{self, CommandSpec};

/// An ACL subcommand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AclCommand {
    Cat {
        category: Option<Bytes>,
    },
    DelUser {
        names: Vec<Bytes>,
    },
    DryRun {
        user: Bytes,
        args: Vec<Bytes>,
    },
    GenPass {
        bits: usize,
    },
    GetUser {
        name: Bytes,
    },
    List,
    Load,
    /// `ACL LOG [count|RESET]` (`None`: RESET).
    Log {
        count: Option<usize>,
    },
    Save,
    SetUser {
        name: Bytes,
        rules: Vec<Bytes>,
    },
    Users,
    WhoAmI,
    Help,
}

fn acl(command: AclCommand) -> Result<Command, CommandError> {
    Ok(Command::Server(ServerCommand::Acl(command)))
}

const ADMIN_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;
const OPEN_FLAGS: u32 = NOSCRIPT | LOADING | STALE;

pub(super) const ACL_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "acl|cat",
        -2,
        OPEN_FLAGS,
        "6.0.0",
        "Lists the ACL categories, or the commands inside a category.",
        |a| {
            at_most_one(a)?;
            let category = (a.remaining() > 0).then(|| a.next()).transpose()?;
            acl(AclCommand::Cat { category })
        },
    )
    .with_syntax("[category]"),
    c(
        "acl|deluser",
        -3,
        ADMIN_FLAGS,
        "6.0.0",
        "Deletes ACL users, and terminates their connections.",
        |a| acl(AclCommand::DelUser { names: a.rest() }),
    )
    .with_syntax("username [username ...]"),
    c(
        "acl|dryrun",
        -4,
        ADMIN_FLAGS,
        "7.0.0",
        "Simulates the execution of a command by a user, without executing the command.",
        |a| {
            let user = a.next()?;
            acl(AclCommand::DryRun {
                user,
                args: a.rest(),
            })
        },
    )
    .with_syntax("username command [arg [arg ...]]"),
    c(
        "acl|genpass",
        -2,
        OPEN_FLAGS,
        "6.0.0",
        "Generates a pseudorandom, secure password that can be used to identify ACL users.",
        |a| {
            let bits = match a.remaining() {
                0 => 256,
                _ => usize::try_from(a.i64()?)
                    .ok()
                    .filter(|bits| (1..=4096).contains(bits))
                    .ok_or(CommandError::Message("ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"))?,
            };
            acl(AclCommand::GenPass { bits })
        },
    )
    .with_syntax("[bits]"),
    c(
        "acl|getuser",
        3,
        ADMIN_FLAGS,
        "6.0.0",
        "Lists the ACL rules of a user.",
        |a| acl(AclCommand::GetUser { name: a.next()? }),
    )
    .with_syntax("username"),
    c(
        "acl|help",
        2,
        LOADING | STALE,
        "6.0.0",
        "Returns helpful text about the different subcommands.",
        |_| acl(AclCommand::Help),
    ),
    c(
        "acl|list",
        2,
        ADMIN_FLAGS,
        "6.0.0",
        "Dumps the effective rules in ACL file format.",
        |_| acl(AclCommand::List),
    ),
    c(
        "acl|load",
        2,
        ADMIN_FLAGS,
        "6.0.0",
        "Reloads the rules from the configured ACL file.",
        |_| acl(AclCommand::Load),
    ),
    c(
        "acl|log",
        -2,
        ADMIN_FLAGS,
        "6.0.0",
        "Lists recent security events generated due to commands rejected by ACL rules.",
        parse_log,
    )
    .with_syntax("[count|RESET]"),
    c(
        "acl|save",
        2,
        ADMIN_FLAGS,
        "6.0.0",
        "Saves the effective ACL rules in the configured ACL file.",
        |_| acl(AclCommand::Save),
    ),
    c(
        "acl|setuser",
        -3,
        ADMIN_FLAGS,
        "6.0.0",
        "Creates and modifies an ACL user and its rules.",
        |a| {
            let name = a.next()?;
            acl(AclCommand::SetUser {
                name,
                rules: a.rest(),
            })
        },
    )
    .with_syntax("username [rule [rule ...]]"),
    c(
        "acl|users",
        2,
        ADMIN_FLAGS,
        "6.0.0",
        "Lists all ACL users.",
        |_| acl(AclCommand::Users),
    ),
    c(
        "acl|whoami",
        2,
        OPEN_FLAGS,
        "6.0.0",
        "Returns the authenticated username of the current connection.",
        |_| acl(AclCommand::WhoAmI),
    ),
];

/// Redis's refusal of more arguments than ACL CAT and ACL LOG take.
fn at_most_one(a: &Args<'_>) -> Result<(), CommandError> {
    if a.remaining() <= 1 {
        return Ok(());
    }
    let sub = String::from_utf8_lossy(a.subcommand_as_sent());
    Err(CommandError::Other {
        code: quiver_resp::ErrorCode::Err,
        message: format!(
            "unknown subcommand or wrong number of arguments for '{sub}'. Try ACL HELP."
        )
        .into(),
    })
}

fn parse_log(a: &mut Args<'_>) -> Result<Command, CommandError> {
    at_most_one(a)?;
    let count = match a.peek() {
        None => Some(10),
        Some(word) if is(word, "reset") => None,
        // A negative count lists nothing, as in Redis.
        Some(_) => Some(usize::try_from(a.i64()?).unwrap_or(0)),
    };
    acl(AclCommand::Log { count })
}

/// Runs an ACL subcommand.
pub(super) fn execute(conn: &mut Connection, command: AclCommand, out: &mut BytesMut) {
    let protocol = conn.session.protocol;
    let shared = &conn.shared;
    let acl = &shared.acl;
    let fail = |out: &mut BytesMut, text: &str| write::write_error(out, text.as_bytes());
    match command {
        AclCommand::Cat { category: None } => {
            let names = acl::user::CATEGORIES.iter().map(Reply::bulk);
            Reply::Array(names.collect()).encode(protocol, out);
        }
        AclCommand::Cat {
            category: Some(category),
        } => {
            let name = String::from_utf8_lossy(&category).to_ascii_lowercase();
            if !acl::user::CATEGORIES.contains(&name.as_str()) {
                let message = format!(
                    "ERR Unknown category '{}'",
                    String::from_utf8_lossy(&category)
                );
                return fail(out, &message);
            }
            let names = acl::user::in_category(&name).map(|spec| Reply::bulk(spec.name));
            Reply::Array(names.collect()).encode(protocol, out);
        }
        AclCommand::DelUser { names } => {
            if names.iter().any(|name| &name[..] == b"default") {
                return fail(out, "ERR The 'default' user cannot be removed");
            }
            let removed = acl.delete(&names);
            disconnect_removed(conn);
            write::write_integer(out, i64::try_from(removed).unwrap_or(i64::MAX));
        }
        AclCommand::DryRun { user, args } => dry_run(acl, &user, args, out),
        AclCommand::GenPass { bits } => {
            write::write_bulk(out, acl::generate_password(bits).as_bytes())
        }
        AclCommand::GetUser { name } => match acl.user(&name) {
            None => write::write_null(out, protocol),
            Some(user) => {
                let text = |s: &str| Reply::bulk(s);
                let strings =
                    |items: Vec<&str>| Reply::Array(items.into_iter().map(text).collect());
                let passwords = user.passwords().iter().map(String::as_str).collect();
                let flags = Reply::Set(user.flags().into_iter().map(text).collect());
                let permissions = |s: &acl::user::Selector| {
                    [
                        (text("commands"), text(&s.commands())),
                        (text("keys"), text(&s.keys())),
                        (text("channels"), text(&s.channels())),
                    ]
                };
                let selectors = user
                    .selectors
                    .iter()
                    .map(|s| Reply::Map(permissions(s).to_vec()));
                let mut fields = vec![
                    (text("flags"), flags),
                    (text("passwords"), strings(passwords)),
                ];
                fields.extend(permissions(&user.root));
                fields.push((text("selectors"), Reply::Array(selectors.collect())));
                Reply::Map(fields).encode(protocol, out);
            }
        },
        AclCommand::List => {
            let lines = acl
                .users()
                .iter()
                .map(|u| Reply::bulk(u.describe()))
                .collect();
            Reply::Array(lines).encode(protocol, out);
        }
        AclCommand::Users => {
            let names = acl
                .users()
                .iter()
                .map(|u| Reply::Bulk(u.name.clone()))
                .collect();
            Reply::Array(names).encode(protocol, out);
        }
        AclCommand::WhoAmI => write::write_bulk(out, &conn.session.user.name),
        AclCommand::SetUser { name, rules } => {
            if let Some(message) = acl::invalid_name(&name) {
                return fail(out, message);
            }
            match acl.set_user(&name, &rules, all_channels(conn)) {
                Ok(()) => {
                    recheck_subscribers(conn, Some(&name));
                    write::write_simple(out, b"OK");
                }
                Err(error) if error.reason == acl::UNMATCHED => fail(
                    out,
                    &format!("ERR {} starting at '{}'.", error.reason, error.rule),
                ),
                Err(error) => fail(
                    out,
                    &format!(
                        "ERR Error in ACL SETUSER modifier '{}': {}",
                        error.rule, error.reason
                    ),
                ),
            }
        }
        AclCommand::Log { count: None } => {
            acl.log.lock().unwrap_or_else(|p| p.into_inner()).reset();
            write::write_simple(out, b"OK");
        }
        AclCommand::Log { count: Some(count) } => {
            let log = acl.log.lock().unwrap_or_else(|p| p.into_inner());
            log.reply(count).encode(protocol, out);
        }
        AclCommand::Save => match acl_file(conn) {
            None => fail(out, NO_ACL_FILE),
            Some(path) => match save(acl, &path) {
                Ok(()) => write::write_simple(out, b"OK"),
                Err(error) => {
                    tracing::error!(path = %path.display(), %error, "ACL SAVE failed");
                    fail(
                        out,
                        "ERR There was an error trying to save the ACLs. Please check the server logs for more information",
                    );
                }
            },
        },
        AclCommand::Load => match acl_file(conn) {
            None => fail(out, NO_ACL_FILE),
            Some(path) => match load(acl, &path, all_channels(conn)) {
                Ok(()) => {
                    disconnect_removed(conn);
                    recheck_subscribers(conn, None);
                    write::write_simple(out, b"OK");
                }
                Err(error) => fail(out, &format!("ERR {error}")),
            },
        },
        AclCommand::Help => container_help("acl", protocol, out),
    }
}

const NO_ACL_FILE: &str = "ERR This Quiver instance is not configured to use an ACL file: set aclfile in resp.redis_config to save users to it and load them from it.";

/// `acl-pubsub-default allchannels`: new users may use every channel.
fn all_channels(conn: &Connection) -> bool {
    conn.shared.stored_params.get("acl-pubsub-default") == "allchannels"
}

/// The `aclfile` parameter, when set.
fn acl_file(conn: &Connection) -> Option<std::path::PathBuf> {
    let path = conn.shared.stored_params.get("aclfile");
    (!path.is_empty()).then(|| std::path::PathBuf::from(path))
}

/// ACL SAVE: every user's ACL LIST line, replacing the file as CONFIG REWRITE does
/// (a temporary file, synced, renamed, the directory synced).
fn save(acl: &Acl, path: &std::path::Path) -> std::io::Result<()> {
    let mut text = String::new();
    for user in acl.users() {
        text.push_str(&user.describe());
        text.push('\n');
    }
    super::config::replace_file(path, text.as_bytes())
}

/// Loads the users of the ACL file at `path`, all or none; the error says which line
/// was wrong.
pub(crate) fn load(acl: &Acl, path: &std::path::Path, all_channels: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "Error loading ACLs, opening file '{}': {error}",
            path.display()
        )
    })?;
    let users = Acl::parse_file(&text, all_channels).map_err(|error| {
        format!(
            "{}:{error}. WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
            path.display()
        )
    })?;
    acl.replace(users);
    Ok(())
}

/// Closes the connections whose user no longer exists, as Redis does.
fn disconnect_removed(conn: &Connection) {
    let acl = &conn.shared.acl;
    for client in conn.shared.clients.all() {
        if acl.user(client.view().user.as_bytes()).is_none() {
            client.kill();
        }
    }
}

/// After a change to `user`'s rules (every user's when `None`): its subscribed clients
/// check their channels, and those subscribed to a channel or pattern it may no longer
/// use close, as Redis closes them.
fn recheck_subscribers(conn: &Connection, user: Option<&[u8]>) {
    for client in conn.shared.clients.all() {
        let view = client.view();
        if view.is_subscriber() && user.is_none_or(|name| view.user.as_bytes() == name) {
            client.recheck_channels();
        }
    }
}

/// ACL DRYRUN: whether `user` may run `args`, as a status or the reason it may not.
fn dry_run(acl: &Acl, user: &[u8], args: Vec<Bytes>, out: &mut BytesMut) {
    let Some(user_found) = acl.user(user) else {
        let message = format!("ERR User '{}' not found", String::from_utf8_lossy(user));
        return write::write_error(out, message.as_bytes());
    };
    let request = Request::from_args(args);
    let spec = match table::resolve(&request) {
        Ok(spec) => spec,
        Err(CommandError::WrongArity { command }) => {
            let message = format!("ERR wrong number of arguments for '{command}' command");
            return write::write_error(out, message.as_bytes());
        }
        Err(_) => {
            let name = request.arg(0).unwrap_or_default();
            let message = format!("ERR Command '{}' not found", String::from_utf8_lossy(name));
            return write::write_error(out, message.as_bytes());
        }
    };
    let arg =
        |pos: usize| String::from_utf8_lossy(request.arg(pos).unwrap_or_default()).into_owned();
    let verdict = match user_found.check(spec, &request) {
        Ok(()) => return write::write_simple(out, b"OK"),
        Err(Denied::Command) => format!(
            "This user has no permissions to run the '{}' command",
            spec.name
        ),
        Err(Denied::Key(pos)) => format!(
            "This user has no permissions to access the '{}' key",
            arg(pos)
        ),
        Err(Denied::Channel(pos)) => {
            format!(
                "This user has no permissions to access the '{}' channel",
                arg(pos)
            )
        }
    };
    write::write_bulk(out, verdict.as_bytes());
}
