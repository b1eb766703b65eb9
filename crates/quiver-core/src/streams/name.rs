//! Stream names: `tenant/namespace/stream`, validated once, then cheap to clone and hash.
//!
//! The grammar is the one `docs/wire-protocol.md` (section 6) gives: 3 to
//! [`MAX_NAME_LEVELS`] levels separated by `/`, each level 1 to [`MAX_LEVEL_LEN`] bytes of
//! `A-Z a-z 0-9 _ - .`, the whole name at most [`MAX_NAME_LEN`] bytes. Core checks it
//! itself because a name can reach the broker from any transport (native, HTTP, RESP).

use std::fmt;
use std::sync::Arc;

use thiserror::Error;

/// Most bytes in a whole name or pattern: fits the wire's `u8` length prefix, and names are
/// hashed and compared on every publish.
pub const MAX_NAME_LEN: usize = 255;

/// Most bytes in one level (tenant, namespace or a stream level): names are identifiers.
pub const MAX_LEVEL_LEN: usize = 64;

/// Most levels in a name: bounds the work of wildcard matching (one index probe per level).
pub const MAX_NAME_LEVELS: usize = 8;

/// Fewest levels in a stream name: tenant, namespace and at least one stream level.
pub const MIN_NAME_LEVELS: usize = 3;

const _: () = assert!(MAX_NAME_LEVELS * (MAX_LEVEL_LEN + 1) >= MAX_NAME_LEN);
const _: () = assert!(MIN_NAME_LEVELS <= MAX_NAME_LEVELS);

/// Why a stream name or pattern was refused. Every variant names the offending text and
/// the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum NameError {
    /// The whole name is longer than [`MAX_NAME_LEN`].
    #[error("name {name:?} is {len} bytes long; at most {MAX_NAME_LEN} bytes are allowed")]
    TooLong { name: String, len: usize },
    /// Fewer than [`MIN_NAME_LEVELS`] or more than [`MAX_NAME_LEVELS`] levels.
    #[error(
        "name {name:?} has {levels} levels; a stream name has {MIN_NAME_LEVELS} to {MAX_NAME_LEVELS} levels (`tenant/namespace/stream`)"
    )]
    LevelCount { name: String, levels: usize },
    /// A level is empty (`a//b`, a leading or trailing `/`).
    #[error(
        "name {name:?} has an empty level at position {position}; levels are 1 to {MAX_LEVEL_LEN} bytes"
    )]
    EmptyLevel { name: String, position: usize },
    /// A level is longer than [`MAX_LEVEL_LEN`].
    #[error(
        "level {level:?} of name {name:?} is {len} bytes long; at most {MAX_LEVEL_LEN} bytes are allowed"
    )]
    LevelTooLong {
        name: String,
        level: String,
        len: usize,
    },
    /// A byte outside `A-Z a-z 0-9 _ - .`.
    #[error(
        "name {name:?} contains {byte:?} at byte {offset}; levels may contain only A-Z a-z 0-9 _ - ."
    )]
    BadChar {
        name: String,
        byte: char,
        offset: usize,
    },
    /// A wildcard where a literal level is required (stream names never hold wildcards).
    #[error(
        "name {name:?} contains the wildcard {wildcard:?}; a stream name is literal, only subscription patterns take wildcards"
    )]
    WildcardInName { name: String, wildcard: char },
    /// A wildcard that is not the last level, or one too high up (see [`crate::streams::Pattern`]).
    #[error("pattern {pattern:?}: {rule}")]
    BadWildcard { pattern: String, rule: &'static str },
}

/// Whether `byte` may appear in a level.
pub(crate) fn is_level_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// Checks the length and characters of every level of `text`, allowing a wildcard as the
/// last level when `wildcard_ok`. Returns the number of levels.
pub(crate) fn check_levels(text: &str, wildcard_ok: bool) -> Result<usize, NameError> {
    if text.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong {
            name: clip(text),
            len: text.len(),
        });
    }
    let levels = text.split('/').count();
    if levels > MAX_NAME_LEVELS {
        return Err(NameError::LevelCount {
            name: text.to_owned(),
            levels,
        });
    }
    let mut offset = 0;
    for (position, level) in text.split('/').enumerate() {
        check_level(
            text,
            level,
            offset,
            position,
            wildcard_ok && position + 1 == levels,
        )?;
        offset += level.len() + 1;
    }
    Ok(levels)
}

fn check_level(
    text: &str,
    level: &str,
    offset: usize,
    position: usize,
    last_may_be_wildcard: bool,
) -> Result<(), NameError> {
    if level.is_empty() {
        return Err(NameError::EmptyLevel {
            name: text.to_owned(),
            position,
        });
    }
    if level.len() > MAX_LEVEL_LEN {
        return Err(NameError::LevelTooLong {
            name: text.to_owned(),
            level: level.to_owned(),
            len: level.len(),
        });
    }
    if (level == "*" || level == ">") && last_may_be_wildcard {
        return Ok(());
    }
    for (i, &byte) in level.as_bytes().iter().enumerate() {
        if is_level_byte(byte) {
            continue;
        }
        if byte == b'*' || byte == b'>' {
            return Err(wildcard_error(text, byte as char, last_may_be_wildcard));
        }
        let ch = text[offset + i..]
            .chars()
            .next()
            .unwrap_or(char::REPLACEMENT_CHARACTER);
        return Err(NameError::BadChar {
            name: text.to_owned(),
            byte: ch,
            offset: offset + i,
        });
    }
    Ok(())
}

fn wildcard_error(text: &str, wildcard: char, in_pattern_last_level: bool) -> NameError {
    if in_pattern_last_level {
        NameError::BadWildcard {
            pattern: text.to_owned(),
            rule: "a wildcard is a whole level on its own (`*` or `>`), not part of one",
        }
    } else {
        NameError::WildcardInName {
            name: text.to_owned(),
            wildcard,
        }
    }
}

/// Shortens an over-long name for an error message (it is already known to be too long).
fn clip(text: &str) -> String {
    let mut end = MAX_NAME_LEN.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// A validated stream name, `tenant/namespace/stream[/more]`. Cloning is a refcount bump.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamName(Arc<str>);

impl StreamName {
    /// Validates `text` as a stream name.
    pub fn new(text: &str) -> Result<Self, NameError> {
        let levels = check_levels(text, false)?;
        if levels < MIN_NAME_LEVELS {
            return Err(NameError::LevelCount {
                name: text.to_owned(),
                levels,
            });
        }
        Ok(Self(Arc::from(text)))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The levels of the name, tenant first.
    pub fn levels(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// The tenant (first level).
    pub fn tenant(&self) -> &str {
        self.levels()
            .next()
            .expect("a validated name has at least three levels")
    }

    /// The name without its last level (`a/b/c` -> `a/b`).
    pub fn parent(&self) -> &str {
        let cut = self
            .0
            .rfind('/')
            .expect("a validated name has at least three levels");
        &self.0[..cut]
    }
}

impl fmt::Display for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StreamName({:?})", &*self.0)
    }
}

impl std::str::FromStr for StreamName {
    type Err = NameError;

    fn from_str(text: &str) -> Result<Self, NameError> {
        Self::new(text)
    }
}

impl AsRef<str> for StreamName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for StreamName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_names() {
        for ok in [
            "a/b/c",
            "acme/orders/eu/created",
            "A-1/b_2/c.3",
            "t/n/s/4/5/6/7/8",
        ] {
            let name = StreamName::new(ok).unwrap();
            assert_eq!(name.as_str(), ok);
        }
        let name = StreamName::new("acme/orders/eu/created").unwrap();
        assert_eq!(name.tenant(), "acme");
        assert_eq!(name.parent(), "acme/orders/eu");
    }

    #[test]
    fn refuses_bad_names_with_the_rule() {
        let too_few = StreamName::new("acme/orders").unwrap_err();
        assert!(matches!(too_few, NameError::LevelCount { levels: 2, .. }));
        assert!(too_few.to_string().contains("acme/orders"));
        let too_many = StreamName::new("a/b/c/d/e/f/g/h/i").unwrap_err();
        assert!(matches!(too_many, NameError::LevelCount { levels: 9, .. }));
        assert!(matches!(
            StreamName::new("a//c").unwrap_err(),
            NameError::EmptyLevel { position: 1, .. }
        ));
        assert!(matches!(
            StreamName::new("/a/b/c").unwrap_err(),
            NameError::EmptyLevel { position: 0, .. }
        ));
        assert!(matches!(
            StreamName::new("a/b/c/").unwrap_err(),
            NameError::EmptyLevel { position: 3, .. }
        ));
        let bad = StreamName::new("a/b c/d").unwrap_err();
        assert_eq!(
            bad,
            NameError::BadChar {
                name: "a/b c/d".into(),
                byte: ' ',
                offset: 3
            }
        );
        assert!(matches!(
            StreamName::new("a/b/é").unwrap_err(),
            NameError::BadChar { byte: 'é', .. }
        ));
        assert!(matches!(
            StreamName::new("a/b/*").unwrap_err(),
            NameError::WildcardInName { wildcard: '*', .. }
        ));
        assert!(matches!(
            StreamName::new("a/b/>").unwrap_err(),
            NameError::WildcardInName { .. }
        ));
    }

    #[test]
    fn enforces_lengths() {
        let level = "x".repeat(MAX_LEVEL_LEN);
        assert!(StreamName::new(&format!("a/b/{level}")).is_ok());
        let long_level = format!("a/b/{level}x");
        assert!(matches!(
            StreamName::new(&long_level).unwrap_err(),
            NameError::LevelTooLong { len: 65, .. }
        ));
        let long = vec!["y".repeat(60); 5].join("/");
        let err = StreamName::new(&long).unwrap_err();
        assert!(matches!(err, NameError::TooLong { len: 304, .. }));
        assert!(err.to_string().contains("at most 255 bytes"));
    }
}
