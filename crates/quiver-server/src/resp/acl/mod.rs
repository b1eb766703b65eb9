//! Redis's access control lists: users with passwords, and the commands, keys and
//! channels each may use. `requirepass` is the `default` user's password, as in Redis.
//! A command checks its user with one atomic load and one branch while the user may do
//! everything (the `default` user unless changed).

pub mod log;
pub mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use bytes::Bytes;
use quiver_resp::CommandError;

use crate::resp::table::CommandSpec;

pub use user::{Denied, User};

/// The users of a server.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<Bytes, Arc<User>>>,
    /// Changes with every change to a user: sessions refresh theirs when it moves.
    generation: AtomicU64,
    /// `requirepass` as set (CONFIG GET shows it).
    requirepass: RwLock<Option<Bytes>>,
    /// ACL LOG.
    pub log: Mutex<log::Log>,
}

/// Why ACL LOAD refused a file, or SETUSER a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    pub rule: String,
    pub reason: &'static str,
}

impl Acl {
    /// The `default` user with every permission, and `requirepass` as its password.
    pub fn new(requirepass: Option<Bytes>) -> Acl {
        let default = User::default_user(requirepass.as_deref());
        let mut users = BTreeMap::new();
        users.insert(default.name.clone(), Arc::new(default));
        Acl {
            users: RwLock::new(users),
            generation: AtomicU64::new(0),
            requirepass: RwLock::new(requirepass),
            log: Mutex::new(log::Log::default()),
        }
    }

    /// The current generation of the users (see [`Acl::user`]).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The user named `name`, if any.
    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// The `default` user, which always exists.
    pub fn default_user(&self) -> Arc<User> {
        self.user(b"default")
            .expect("the default user is never removed")
    }

    /// Whether a new connection starts logged in (as `default`): it has no password and
    /// is on.
    pub fn open(&self) -> bool {
        let default = self.default_user();
        default.nopass && default.enabled
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        let users = self.users.read().unwrap_or_else(|p| p.into_inner());
        users.values().cloned().collect()
    }

    /// The user `name` if `password` logs it in.
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<Arc<User>> {
        self.user(name).filter(|user| user.accepts(password))
    }

    /// ACL SETUSER: applies `rules` to a copy of the user (a new one if absent) and
    /// stores it only if every rule is valid.
    pub fn set_user(
        &self,
        name: &[u8],
        rules: &[Bytes],
        all_channels: bool,
    ) -> Result<(), RuleError> {
        let mut users = self.users.write().unwrap_or_else(|p| p.into_inner());
        let rules = user::merge_selectors(rules).map_err(|first| RuleError {
            rule: String::from_utf8_lossy(&first).into_owned(),
            reason: UNMATCHED,
        })?;
        let mut user = match users.get(name) {
            Some(user) => User::clone(user),
            None => User::new(Bytes::copy_from_slice(name), all_channels),
        };
        for rule in &rules {
            user.apply(rule, all_channels).map_err(|reason| RuleError {
                rule: String::from_utf8_lossy(rule).into_owned(),
                reason,
            })?;
        }
        user.settle();
        users.insert(user.name.clone(), Arc::new(user));
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// ACL DELUSER: removes the users named (not `default`); how many there were.
    pub fn delete(&self, names: &[Bytes]) -> usize {
        let mut users = self.users.write().unwrap_or_else(|p| p.into_inner());
        let removed = names
            .iter()
            .filter(|name| users.remove(&name[..]).is_some())
            .count();
        self.generation.fetch_add(1, Ordering::AcqRel);
        removed
    }

    /// Replaces every user (ACL LOAD); a file without `default` gets a fresh one.
    pub fn replace(&self, loaded: Vec<User>) {
        let mut users: BTreeMap<Bytes, Arc<User>> = loaded
            .into_iter()
            .map(|user| (user.name.clone(), Arc::new(user)))
            .collect();
        users
            .entry(Bytes::from_static(b"default"))
            .or_insert_with(|| Arc::new(User::default_user(None)));
        *self.users.write().unwrap_or_else(|p| p.into_inner()) = users;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// `requirepass` as set.
    pub fn requirepass(&self) -> Option<Bytes> {
        self.requirepass
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// CONFIG SET requirepass: the `default` user's only password, or none (`nopass`).
    pub fn set_requirepass(&self, password: Option<Bytes>) {
        let rules = match &password {
            Some(password) => vec![
                Bytes::from_static(b"resetpass"),
                Bytes::from([b">".as_slice(), password].concat()),
            ],
            None => vec![Bytes::from_static(b"nopass")],
        };
        *self.requirepass.write().unwrap_or_else(|p| p.into_inner()) = password;
        self.set_user(b"default", &rules, true)
            .expect("password rules are valid");
    }

    /// Users from an ACL file's text (`user <name> <rule>...` per line, `#` comments);
    /// the error names the line.
    pub fn parse_file(text: &str, all_channels: bool) -> Result<Vec<User>, String> {
        let mut users: Vec<User> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_ascii_whitespace();
            let (Some("user"), Some(name)) = (words.next(), words.next()) else {
                return Err(format!(
                    "line {line_no}: should start with user keyword followed by the user name"
                ));
            };
            if users.iter().any(|u| u.name == name.as_bytes()) {
                return Err(format!("line {line_no}: duplicate user '{name}' found"));
            }
            let mut user = User::new(Bytes::copy_from_slice(name.as_bytes()), all_channels);
            let words: Vec<Bytes> = words
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect();
            let rules = user::merge_selectors(&words).map_err(|first| {
                format!(
                    "line {line_no}: {UNMATCHED} ('{}')",
                    String::from_utf8_lossy(&first)
                )
            })?;
            for rule in rules {
                user.apply(&rule, all_channels).map_err(|reason| {
                    format!(
                        "line {line_no}: {reason} ('{}')",
                        String::from_utf8_lossy(&rule)
                    )
                })?;
            }
            user.settle();
            users.push(user);
        }
        Ok(users)
    }
}

/// The NOPERM error of a refusal, in Redis's words.
pub fn no_permission(spec: &CommandSpec, denied: Denied) -> CommandError {
    let message = match denied {
        Denied::Command => format!(
            "this user has no permissions to run the '{}' command",
            spec.name
        ),
        Denied::Key(_) => {
            "this user has no permissions to access one of the keys used as arguments".to_owned()
        }
        Denied::Channel(_) => {
            "this user has no permissions to access one of the channels used as arguments"
                .to_owned()
        }
    };
    CommandError::Other {
        code: quiver_resp::ErrorCode::NoPerm,
        message: message.into(),
    }
}

/// A selector's `(` never closed.
pub const UNMATCHED: &str = "Unmatched parenthesis in acl selector";

/// Redis's message for a user name it refuses, if `name` is one.
pub fn invalid_name(name: &[u8]) -> Option<&'static str> {
    name.iter()
        .any(|&b| b == b' ' || b == 0)
        .then_some("ERR Usernames can't contain spaces or null characters")
}

/// Random hex for ACL GENPASS: `bits` rounded up to whole hex digits.
pub fn generate_password(bits: usize) -> String {
    use ring::rand::SecureRandom;
    let digits = bits.div_ceil(4);
    let mut bytes = vec![0u8; digits.div_ceil(2)];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .expect("the system's random source works");
    let mut hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    hex.truncate(digits);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirepass_is_the_default_users_password() {
        let acl = Acl::new(None);
        assert!(acl.open());
        let before = acl.generation();
        acl.set_requirepass(Some(Bytes::from_static(b"pw")));
        assert!(acl.generation() > before);
        assert!(!acl.open());
        assert!(acl.authenticate(b"default", b"pw").is_some());
        assert!(acl.authenticate(b"default", b"no").is_none());
        acl.set_requirepass(None);
        assert!(acl.open());
    }

    #[test]
    fn setuser_is_all_or_nothing_and_files_parse() {
        let acl = Acl::new(None);
        let rules = [Bytes::from_static(b"on"), Bytes::from_static(b"+nosuch")];
        let error = acl.set_user(b"bob", &rules, false).unwrap_err();
        assert_eq!(error.rule, "+nosuch");
        assert!(acl.user(b"bob").is_none());
        let users = Acl::parse_file("# users\nuser bob on >pw ~* +get\n", false).unwrap();
        assert_eq!(users[0].describe().split(' ').next_back(), Some("+get"));
        let error = Acl::parse_file("user bob on\nuser bob off\n", false).unwrap_err();
        assert!(error.contains("line 2"), "{error}");
        assert!(Acl::parse_file("bob on\n", false).is_err());
        assert_eq!(generate_password(5).len(), 2);
        assert_eq!(generate_password(256).len(), 64);
    }
}
