//! Stream names (`tenant/namespace/stream[/more]`) and patterns with a trailing `*` (one
//! level) or `>` (one or more levels). Validated once; held as `Bytes` so a decoded name
//! is a slice of the frame, not a copy.

use std::fmt;

use bytes::Bytes;
use thiserror::Error;

use crate::limits::{MAX_LEVEL_LEN, MAX_NAME_LEN, MAX_NAME_LEVELS, MIN_NAME_LEVELS};

/// Why a name, pattern or group is invalid. Every variant names the offending value.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// Longer than [`MAX_NAME_LEN`].
    #[error("name {name:?} is {len} bytes; at most {MAX_NAME_LEN} are allowed")]
    TooLong {
        /// The name, lossily decoded.
        name: String,
        /// Its length in bytes.
        len: usize,
    },
    /// Fewer than [`MIN_NAME_LEVELS`] or more than [`MAX_NAME_LEVELS`] levels.
    #[error(
        "name {name:?} has {levels} levels; names are tenant/namespace/stream with \
         {MIN_NAME_LEVELS} to {MAX_NAME_LEVELS} levels separated by '/'"
    )]
    LevelCount {
        /// The name, lossily decoded.
        name: String,
        /// Levels found.
        levels: usize,
    },
    /// A level is empty or longer than [`MAX_LEVEL_LEN`].
    #[error("level {level} of {name:?} is {len} bytes; levels have 1 to {MAX_LEVEL_LEN} bytes")]
    LevelLength {
        /// The name, lossily decoded.
        name: String,
        /// Index of the level, from 0.
        level: usize,
        /// Its length.
        len: usize,
    },
    /// A byte outside `A-Z a-z 0-9 _ - .`.
    #[error(
        "name {name:?} has byte {byte:#04x} at offset {offset}; allowed are A-Z a-z 0-9 _ - . \
         (and '/' between levels)"
    )]
    InvalidByte {
        /// The name, lossily decoded.
        name: String,
        /// Byte offset.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// A wildcard in a stream name, or not as the last level from the third on.
    #[error(
        "name {name:?} has a wildcard at level {level}; wildcards ('*' one level, '>' one or \
         more) are allowed only in patterns, as the last level, '*' from the third level on and \
         '>' from the second"
    )]
    MisplacedWildcard {
        /// The name, lossily decoded.
        name: String,
        /// Index of the level, from 0.
        level: usize,
    },
}

/// The wildcard at the end of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Wildcard {
    None,
    One,
    Tail,
}

/// A validated stream name, e.g. `acme/orders/created`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamName(Bytes);

/// A validated stream pattern, e.g. `acme/orders/*` or `acme/orders/>`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct StreamPattern {
    raw: Bytes,
    wildcard: Wildcard,
}

impl StreamName {
    /// Validates `name`.
    pub fn new(name: &str) -> Result<Self, NameError> {
        Self::from_bytes(Bytes::copy_from_slice(name.as_bytes()))
    }

    /// Validates `raw` without copying it.
    pub fn from_bytes(raw: Bytes) -> Result<Self, NameError> {
        match validate(&raw)? {
            Wildcard::None => Ok(Self(raw)),
            _ => Err(NameError::MisplacedWildcard {
                name: lossy(&raw),
                level: level_count(&raw) - 1,
            }),
        }
    }

    /// Wraps bytes this crate validated before (a slice of an encoded name).
    pub(crate) fn from_validated(raw: Bytes) -> Self {
        debug_assert!(
            validate(&raw) == Ok(Wildcard::None),
            "only validated names are wrapped"
        );
        Self(raw)
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("a StreamName holds validated ASCII")
    }

    /// The name's bytes, shared with the frame it came from.
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }

    /// The tenant (first level).
    pub fn tenant(&self) -> &str {
        self.as_str().split('/').next().unwrap_or_default()
    }

    /// The namespace (second level).
    pub fn namespace(&self) -> &str {
        self.as_str().split('/').nth(1).unwrap_or_default()
    }
}

impl StreamPattern {
    /// Validates `pattern`.
    pub fn new(pattern: &str) -> Result<Self, NameError> {
        Self::from_bytes(Bytes::copy_from_slice(pattern.as_bytes()))
    }

    /// Validates `raw` without copying it.
    pub fn from_bytes(raw: Bytes) -> Result<Self, NameError> {
        let wildcard = validate(&raw)?;
        Ok(Self { raw, wildcard })
    }

    /// The pattern as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.raw).expect("a StreamPattern holds validated ASCII")
    }

    /// The pattern's bytes.
    pub fn as_bytes(&self) -> &Bytes {
        &self.raw
    }

    /// Whether the pattern has no wildcard (it names exactly one stream).
    pub fn is_literal(&self) -> bool {
        self.wildcard == Wildcard::None
    }

    /// Whether `name` is one of the streams this pattern selects.
    pub fn matches(&self, name: &StreamName) -> bool {
        let pattern: &[u8] = &self.raw;
        let name: &[u8] = &name.0;
        match self.wildcard {
            Wildcard::None => pattern == name,
            Wildcard::One => {
                // Pattern "p/*": name is "p/" followed by exactly one level.
                let prefix = &pattern[..pattern.len() - 1];
                name.len() > prefix.len()
                    && name.starts_with(prefix)
                    && !name[prefix.len()..].contains(&b'/')
            }
            Wildcard::Tail => {
                // Pattern "p/>": name is "p/" followed by one or more levels.
                let prefix = &pattern[..pattern.len() - 1];
                name.len() > prefix.len() && name.starts_with(prefix)
            }
        }
    }
}

/// Validates a queue group name: one level (`A-Z a-z 0-9 _ - .`, 1 to 64 bytes).
pub fn validate_group(group: &str) -> Result<(), NameError> {
    let bytes = group.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_LEVEL_LEN {
        return Err(NameError::LevelLength {
            name: group.to_owned(),
            level: 0,
            len: bytes.len(),
        });
    }
    match bytes.iter().position(|&b| !is_level_byte(b)) {
        Some(offset) => Err(NameError::InvalidByte {
            name: group.to_owned(),
            offset,
            byte: bytes[offset],
        }),
        None => Ok(()),
    }
}

fn validate(raw: &[u8]) -> Result<Wildcard, NameError> {
    if is_plain_name(raw) {
        return Ok(Wildcard::None);
    }
    validate_slowly(raw)
}

/// One pass for the common case, a valid name without wildcards (every publish).
fn is_plain_name(raw: &[u8]) -> bool {
    let mut levels = 1;
    let mut level_len = 0;
    for &b in raw {
        if b == b'/' {
            if level_len == 0 || level_len > MAX_LEVEL_LEN {
                return false;
            }
            levels += 1;
            level_len = 0;
        } else if is_level_byte(b) {
            level_len += 1;
        } else {
            return false;
        }
    }
    raw.len() <= MAX_NAME_LEN
        && (1..=MAX_LEVEL_LEN).contains(&level_len)
        && (MIN_NAME_LEVELS..=MAX_NAME_LEVELS).contains(&levels)
}

/// Full validation with a precise error; also the path for patterns with a wildcard.
fn validate_slowly(raw: &[u8]) -> Result<Wildcard, NameError> {
    if raw.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong {
            name: lossy(raw),
            len: raw.len(),
        });
    }
    let levels = level_count(raw);
    // `tenant/>` (a whole tenant) is the one pattern with fewer than MIN_NAME_LEVELS levels.
    let tenant_subtree = levels == 2 && raw.ends_with(b"/>");
    if !tenant_subtree && !(MIN_NAME_LEVELS..=MAX_NAME_LEVELS).contains(&levels) {
        return Err(NameError::LevelCount {
            name: lossy(raw),
            levels,
        });
    }
    let mut wildcard = Wildcard::None;
    let mut start = 0;
    for (level, part) in raw.split(|&b| b == b'/').enumerate() {
        if part.is_empty() || part.len() > MAX_LEVEL_LEN {
            return Err(NameError::LevelLength {
                name: lossy(raw),
                level,
                len: part.len(),
            });
        }
        if part == b"*" || part == b">" {
            // `*` needs tenant/namespace before it (a name has at least three levels);
            // `>` needs only the tenant.
            let first_level = if part == b"*" { 2 } else { 1 };
            if level + 1 != levels || level < first_level {
                return Err(NameError::MisplacedWildcard {
                    name: lossy(raw),
                    level,
                });
            }
            wildcard = if part == b"*" {
                Wildcard::One
            } else {
                Wildcard::Tail
            };
        } else if let Some(i) = part.iter().position(|&b| !is_level_byte(b)) {
            let byte = part[i];
            if byte == b'*' || byte == b'>' {
                return Err(NameError::MisplacedWildcard {
                    name: lossy(raw),
                    level,
                });
            }
            return Err(NameError::InvalidByte {
                name: lossy(raw),
                offset: start + i,
                byte,
            });
        }
        start += part.len() + 1;
    }
    Ok(wildcard)
}

fn level_count(raw: &[u8]) -> usize {
    raw.iter().filter(|&&b| b == b'/').count() + 1
}

const fn level_byte_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.';
        b += 1;
    }
    table
}

static LEVEL_BYTES: [bool; 256] = level_byte_table();

fn is_level_byte(b: u8) -> bool {
    LEVEL_BYTES[b as usize]
}

fn lossy(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

impl fmt::Debug for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StreamName({:?})", self.as_str())
    }
}

impl fmt::Display for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for StreamPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StreamPattern({:?})", self.as_str())
    }
}

impl fmt::Display for StreamPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> StreamName {
        StreamName::new(s).expect("valid test name")
    }

    fn pattern(s: &str) -> StreamPattern {
        StreamPattern::new(s).expect("valid test pattern")
    }

    #[test]
    fn valid_names() {
        for s in ["acme/orders/created", "a/b/c", "A-1/b_2/c.3/d/e/f/g/h"] {
            assert_eq!(name(s).as_str(), s);
        }
        let n = name("acme/orders/created");
        assert_eq!((n.tenant(), n.namespace()), ("acme", "orders"));
    }

    #[test]
    fn invalid_names_say_why() {
        assert!(matches!(
            StreamName::new("acme/orders"),
            Err(NameError::LevelCount { levels: 2, .. })
        ));
        assert!(matches!(
            StreamName::new("a/b/c/d/e/f/g/h/i"),
            Err(NameError::LevelCount { levels: 9, .. })
        ));
        assert!(matches!(
            StreamName::new("a//c"),
            Err(NameError::LevelLength {
                level: 1,
                len: 0,
                ..
            })
        ));
        assert!(matches!(
            StreamName::new("a/b/"),
            Err(NameError::LevelLength { level: 2, .. })
        ));
        assert!(matches!(
            StreamName::new("a/b/c d"),
            Err(NameError::InvalidByte {
                offset: 5,
                byte: b' ',
                ..
            })
        ));
        assert!(matches!(
            StreamName::new("a/b/*"),
            Err(NameError::MisplacedWildcard { level: 2, .. })
        ));
        let long = format!("a/b/{}", "c".repeat(65));
        assert!(matches!(
            StreamName::new(&long),
            Err(NameError::LevelLength { len: 65, .. })
        ));
        let too_long = vec!["x".repeat(64); 5].join("/");
        assert!(matches!(
            StreamName::new(&too_long),
            Err(NameError::TooLong { len: 324, .. })
        ));
        let err = StreamName::new("acme/orders").expect_err("two levels");
        assert!(err.to_string().contains("\"acme/orders\""), "{err}");
    }

    #[test]
    fn invalid_patterns() {
        for s in [
            "acme/*/x",
            "acme/orders/*/x",
            "acme/orders/a*",
            "*/b/c",
            "a/b/>x",
        ] {
            assert!(
                matches!(
                    StreamPattern::new(s),
                    Err(NameError::MisplacedWildcard { .. })
                ),
                "{s} should be rejected"
            );
        }
        assert!(StreamPattern::new("acme/orders").is_err());
        assert!(matches!(
            StreamPattern::new("acme/*"),
            Err(NameError::LevelCount { levels: 2, .. })
        ));
        assert!(matches!(
            StreamPattern::new(">"),
            Err(NameError::LevelCount { levels: 1, .. })
        ));
        assert!(matches!(
            StreamName::new("acme/>"),
            Err(NameError::MisplacedWildcard { .. })
        ));
        // A whole tenant, as quiver-core allows.
        assert!(StreamPattern::new("acme/>").is_ok());
    }

    #[test]
    fn matching() {
        let cases = [
            ("acme/orders/created", "acme/orders/created", true),
            ("acme/orders/created", "acme/orders/created/eu", false),
            ("acme/orders/*", "acme/orders/created", true),
            ("acme/orders/*", "acme/orders/eu/created", false),
            ("acme/orders/*", "acme/ordersx/created", false),
            ("acme/orders/>", "acme/orders/created", true),
            ("acme/orders/>", "acme/orders/eu/created", true),
            ("acme/orders/>", "acme/billing/x", false),
            ("acme/orders/>", "acme/ordersx/y", false),
            ("acme/orders/eu/*", "acme/orders/eu/created", true),
            ("acme/orders/eu/*", "acme/orders/eu/x/y", false),
            ("acme/orders/eu/>", "acme/orders/eu/x/y", true),
            ("acme/>", "acme/orders/created", true),
            ("acme/>", "acmex/orders/created", false),
            ("acme/orders/eu/*", "acme/orders/created", false),
        ];
        for (p, n, expected) in cases {
            assert_eq!(pattern(p).matches(&name(n)), expected, "{p} vs {n}");
        }
        assert!(pattern("a/b/c").is_literal());
        assert!(!pattern("a/b/*").is_literal());
    }

    #[test]
    fn fast_path_agrees_with_full_validation() {
        let samples = [
            "a/b/c",
            "a/b",
            "a/b/c/d/e/f/g/h",
            "a/b/c/d/e/f/g/h/i",
            "a//c",
            "a/b/",
            "/a/b",
            "a/b/*",
            "a/b/>",
            "a/b/c d",
            "a/b/c\u{e9}",
            "",
        ];
        for s in samples {
            let plain = is_plain_name(s.as_bytes());
            let full = validate_slowly(s.as_bytes());
            assert_eq!(plain, full == Ok(Wildcard::None), "{s:?}");
        }
        let long_level = format!("a/b/{}", "c".repeat(MAX_LEVEL_LEN + 1));
        assert!(!is_plain_name(long_level.as_bytes()));
        let max_level = format!("a/b/{}", "c".repeat(MAX_LEVEL_LEN));
        assert!(is_plain_name(max_level.as_bytes()));
        let too_long = vec!["x".repeat(MAX_LEVEL_LEN); 5].join("/");
        assert!(!is_plain_name(too_long.as_bytes()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn fast_path_agrees_on_random_names(s in "[ab/*> .\u{e9}-]{0,24}") {
            let full = validate_slowly(s.as_bytes());
            proptest::prop_assert_eq!(is_plain_name(s.as_bytes()), full == Ok(Wildcard::None), "{:?}", s);
        }
    }

    #[test]
    fn groups() {
        assert!(validate_group("workers-1").is_ok());
        assert!(validate_group("").is_err());
        assert!(validate_group("a/b").is_err());
        assert!(validate_group(&"g".repeat(65)).is_err());
    }
}
