//! Redis-style glob matching for KEYS, SCAN MATCH and the collection scans: `*`, `?`,
//! `[abc]`, `[^abc]`, `[a-z]` (reversed ranges match too), and `\` escaping the next byte.
//! Byte-oriented, as Redis's `stringmatchlen`, so it never fails on non-UTF-8 keys.

/// Nesting bound for `*` backtracking: each `*` recurses once, so a hostile pattern of many
/// stars could otherwise recurse without limit; Redis uses the same cap and treats an
/// over-deep pattern as a non-match.
const MAX_STAR_DEPTH: usize = 1000;

/// Whether `text` matches the glob `pattern`.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let mut skip_longer = false;
    match_from(pattern, text, &mut skip_longer, 0)
}

fn match_from(mut p: &[u8], mut s: &[u8], skip_longer: &mut bool, depth: usize) -> bool {
    if depth > MAX_STAR_DEPTH {
        return false;
    }
    while let Some(&c) = p.first() {
        match c {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                while !s.is_empty() {
                    if match_from(&p[1..], s, skip_longer, depth + 1) {
                        return true;
                    }
                    if *skip_longer {
                        // The rest of the pattern failed to match against a longer text
                        // already: a shorter suffix cannot match either.
                        return false;
                    }
                    s = &s[1..];
                }
                *skip_longer = true;
                return false;
            }
            b'?' => {
                if s.is_empty() {
                    return false;
                }
                s = &s[1..];
            }
            b'[' => {
                let Some((&b, rest)) = s.split_first() else {
                    return false;
                };
                let (matched, after) = match_class(&p[1..], b);
                if !matched {
                    return false;
                }
                p = after;
                s = rest;
                continue;
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if s.first() != Some(&p[0]) {
                    return false;
                }
                s = &s[1..];
            }
            _ => {
                if s.first() != Some(&c) {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
        if s.is_empty() {
            while p.first() == Some(&b'*') {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

/// Matches `b` against the class whose body starts at `p` (just after `[`); returns whether
/// it matched and the pattern after the closing `]` (or the end when it is unterminated).
fn match_class(mut p: &[u8], b: u8) -> (bool, &[u8]) {
    let negate = p.first() == Some(&b'^');
    if negate {
        p = &p[1..];
    }
    let mut matched = false;
    loop {
        match p {
            [] => break,
            [b'\\', esc, rest @ ..] => {
                matched |= *esc == b;
                p = rest;
            }
            [b']', rest @ ..] => {
                p = rest;
                return (matched != negate, p);
            }
            [lo, b'-', hi, rest @ ..] if *hi != b']' || rest.is_empty() => {
                let (lo, hi) = if lo <= hi { (*lo, *hi) } else { (*hi, *lo) };
                matched |= (lo..=hi).contains(&b);
                p = rest;
            }
            [c, rest @ ..] => {
                matched |= *c == b;
                p = rest;
            }
        }
    }
    // Unterminated class: Redis treats the end of the pattern as the end of the class.
    (matched != negate, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes())
    }

    #[test]
    fn literals_and_wildcards() {
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("abc", "abc"));
        assert!(!m("abc", "abd"));
        assert!(m("*", ""));
        assert!(m("*", "anything"));
        assert!(m("a*", "abc"));
        assert!(m("*c", "abc"));
        assert!(m("a*c", "ac"));
        assert!(m("a*c", "abbbc"));
        assert!(!m("a*c", "abbbd"));
        assert!(m("h?llo", "hello"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("**a**", "xxa"));
        assert!(m("user:*:name", "user:42:name"));
    }

    #[test]
    fn classes() {
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(!m("h[a-b]llo", "hcllo"));
        assert!(m("[z-a]", "m"), "reversed ranges match like Redis");
        assert!(m("[a-z]*", "key"));
        assert!(!m("[0-9]*", "key"));
        assert!(m("[\\]]", "]"));
        assert!(m("[a-]", "-") || m("[a-]", "a"));
    }

    #[test]
    fn escapes() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "a"));
        assert!(m("a\\?b", "a?b"));
        assert!(!m("a\\?b", "axb"));
        assert!(m("\\\\", "\\"));
    }

    #[test]
    fn pathological_pattern_terminates() {
        let p = "a*".repeat(50) + "b";
        let s = "a".repeat(60);
        assert!(!m(&p, &s));
    }
}
