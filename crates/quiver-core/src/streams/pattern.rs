//! Subscription patterns: a stream name, or a name whose last level is a wildcard.
//!
//! - `*` matches exactly one level: `acme/orders/*` matches `acme/orders/created` but not
//!   `acme/orders/eu/created`. It needs at least `tenant/namespace/` before it, since a stream
//!   name has at least three levels.
//! - `>` matches one or more levels, a whole subtree: `acme/orders/>` matches
//!   `acme/orders/created` and `acme/orders/eu/created`; `acme/>` matches every stream of the
//!   tenant `acme`.
//!
//! A wildcard is always a whole level and always the last one; tenant is always literal.
//! These are the rules of every front end: `docs/wire-protocol.md` section 6 states the same
//! grammar for the native protocol, `tenant/>` included.

use std::fmt;
use std::sync::Arc;

use crate::streams::name::{MIN_NAME_LEVELS, NameError, StreamName, check_levels};

/// What a pattern matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// Exactly one stream.
    Exact(StreamName),
    /// `parent/*`: every stream whose name is `parent` plus one level.
    OneLevel {
        /// The levels before `*`, without the trailing `/`.
        parent: Arc<str>,
    },
    /// `prefix/>`: every stream whose name starts with `prefix/`.
    Subtree {
        /// The levels before `>`, without the trailing `/`.
        prefix: Arc<str>,
    },
}

/// A validated subscription pattern.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    text: Arc<str>,
    kind: PatternKind,
}

impl Pattern {
    /// Validates `text` as a pattern.
    pub fn new(text: &str) -> Result<Self, NameError> {
        let levels: Vec<&str> = text.split('/').collect();
        let (last, before) = levels.split_last().expect("split yields at least one item");
        if before.iter().any(|level| level.contains(['*', '>'])) {
            return Err(NameError::BadWildcard {
                pattern: text.to_owned(),
                rule: "a wildcard may only be the last level (`acme/orders/*`, `acme/orders/>`)",
            });
        }
        let count = check_levels(text, true)?;
        let head = &text[..text.len() - last.len()].trim_end_matches('/');
        let kind = match *last {
            "*" if count < MIN_NAME_LEVELS => {
                return Err(NameError::BadWildcard {
                    pattern: text.to_owned(),
                    rule: "`*` matches one level and stream names have at least three, so it needs `tenant/namespace/` before it",
                });
            }
            "*" => PatternKind::OneLevel {
                parent: Arc::from(*head),
            },
            ">" if count < 2 => {
                return Err(NameError::BadWildcard {
                    pattern: text.to_owned(),
                    rule: "`>` needs at least a tenant before it (`acme/>`)",
                });
            }
            ">" => PatternKind::Subtree {
                prefix: Arc::from(*head),
            },
            _ => PatternKind::Exact(StreamName::new(text)?),
        };
        Ok(Self {
            text: Arc::from(text),
            kind,
        })
    }

    /// The pattern as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What the pattern matches.
    pub fn kind(&self) -> &PatternKind {
        &self.kind
    }

    /// Whether the pattern has a wildcard.
    pub fn is_wildcard(&self) -> bool {
        !matches!(self.kind, PatternKind::Exact(_))
    }

    /// Whether `name` matches this pattern.
    pub fn matches(&self, name: &StreamName) -> bool {
        match &self.kind {
            PatternKind::Exact(exact) => exact == name,
            PatternKind::OneLevel { parent } => name.parent() == &**parent,
            PatternKind::Subtree { prefix } => {
                let name = name.as_str();
                name.len() > prefix.len()
                    && name.starts_with(&**prefix)
                    && name.as_bytes()[prefix.len()] == b'/'
            }
        }
    }
}

impl From<StreamName> for Pattern {
    fn from(name: StreamName) -> Self {
        Self {
            text: Arc::from(name.as_str()),
            kind: PatternKind::Exact(name),
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = NameError;

    fn from_str(text: &str) -> Result<Self, NameError> {
        Self::new(text)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", &*self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> StreamName {
        StreamName::new(text).unwrap()
    }

    fn matches(pattern: &str, stream: &str) -> bool {
        Pattern::new(pattern).unwrap().matches(&name(stream))
    }

    #[test]
    fn the_documented_table() {
        assert!(matches("acme/orders/created", "acme/orders/created"));
        assert!(!matches("acme/orders/created", "acme/orders/created/eu"));
        assert!(matches("acme/orders/*", "acme/orders/created"));
        assert!(!matches("acme/orders/*", "acme/orders/eu/created"));
        assert!(matches("acme/orders/>", "acme/orders/created"));
        assert!(matches("acme/orders/>", "acme/orders/eu/created"));
        assert!(!matches("acme/orders/>", "acme/billing/x"));
        assert!(matches("acme/orders/eu/*", "acme/orders/eu/created"));
        assert!(!matches("acme/orders/eu/*", "acme/orders/eu"));
        assert!(matches("acme/>", "acme/billing/x"));
        assert!(!matches("acme/>", "acmex/billing/x"));
        assert!(!matches("acme/orders/>", "acme/ordersx/created"));
    }

    #[test]
    fn refuses_misplaced_wildcards() {
        for bad in ["acme/*/x", "acme/orders/*/x", "*/a/b", ">", "acme/*", "*"] {
            let err = Pattern::new(bad).unwrap_err();
            assert!(
                matches!(err, NameError::BadWildcard { .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains(bad), "{err}");
        }
        for bad in ["acme/orders/a*", "acme/orders/>x"] {
            assert!(
                matches!(
                    Pattern::new(bad).unwrap_err(),
                    NameError::BadWildcard { .. }
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            Pattern::new("acme/or ders/>").unwrap_err(),
            NameError::BadChar { .. }
        ));
        assert!(matches!(
            Pattern::new("acme//>").unwrap_err(),
            NameError::EmptyLevel { .. }
        ));
        assert!(matches!(
            Pattern::new("acme/orders").unwrap_err(),
            NameError::LevelCount { .. }
        ));
    }

    #[test]
    fn kinds() {
        assert_eq!(
            Pattern::new("a/b/*").unwrap().kind(),
            &PatternKind::OneLevel {
                parent: Arc::from("a/b")
            }
        );
        assert_eq!(
            Pattern::new("a/>").unwrap().kind(),
            &PatternKind::Subtree {
                prefix: Arc::from("a")
            }
        );
        assert!(!Pattern::new("a/b/c").unwrap().is_wildcard());
    }
}
