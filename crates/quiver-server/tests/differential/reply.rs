//! Reading RESP2 and RESP3 replies into a tree that keeps every type distinction
//! (a null bulk string is not a null array, a set is not an array), so two servers'
//! replies compare exactly.

use std::fmt;
use std::io::{self, BufRead};

/// One reply.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reply {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Integer(i64),
    Bulk(Vec<u8>),
    /// RESP2 `$-1`.
    NullBulk,
    /// RESP2 `*-1`.
    NullArray,
    /// RESP3 `_`.
    Null,
    Array(Vec<Reply>),
    Map(Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    /// RESP3 `,` as its text.
    Double(Vec<u8>),
    Boolean(bool),
    Verbatim(Vec<u8>),
    BigNumber(Vec<u8>),
    Push(Vec<Reply>),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple(b"OK".to_vec())
    }

    /// Reads one reply.
    pub fn read(input: &mut impl BufRead) -> io::Result<Reply> {
        let line = read_line(input)?;
        let (&kind, rest) = line
            .split_first()
            .ok_or_else(|| invalid("empty reply line"))?;
        let number = || -> io::Result<i64> {
            std::str::from_utf8(rest)
                .ok()
                .and_then(|text| text.parse().ok())
                .ok_or_else(|| invalid(&format!("bad length {:?}", String::from_utf8_lossy(rest))))
        };
        Ok(match kind {
            b'+' => Reply::Simple(rest.to_vec()),
            b'-' => Reply::Error(rest.to_vec()),
            b':' => Reply::Integer(number()?),
            b'$' => match number()? {
                -1 => Reply::NullBulk,
                len => Reply::Bulk(read_blob(input, len)?),
            },
            b'=' => Reply::Verbatim(read_blob(input, number()?)?),
            b'*' => match number()? {
                -1 => Reply::NullArray,
                len => Reply::Array(read_many(input, len)?),
            },
            b'~' => Reply::Set(read_many(input, number()?)?),
            b'>' => Reply::Push(read_many(input, number()?)?),
            b'%' => {
                let len = number()?;
                let mut pairs = Vec::new();
                for _ in 0..len {
                    pairs.push((Reply::read(input)?, Reply::read(input)?));
                }
                Reply::Map(pairs)
            }
            b'_' => Reply::Null,
            b',' => Reply::Double(rest.to_vec()),
            b'#' => Reply::Boolean(rest == b"t"),
            b'(' => Reply::BigNumber(rest.to_vec()),
            other => return Err(invalid(&format!("unknown reply type {:?}", other as char))),
        })
    }

    /// The same reply with the elements of every array, set and map sorted, for
    /// commands whose order Redis does not define.
    pub fn sorted(self) -> Reply {
        match self {
            Reply::Array(mut items) | Reply::Set(mut items) => {
                items = items.into_iter().map(Reply::sorted).collect();
                items.sort();
                Reply::Array(items)
            }
            Reply::Map(mut pairs) => {
                pairs.sort();
                Reply::Map(pairs)
            }
            other => other,
        }
    }

    /// The reply with every integer that is one of `ids` replaced by its place among
    /// them (client ids differ between servers; where one is named is what is compared).
    pub fn with_ids_named(self, ids: &[i64]) -> Reply {
        let named = |items: Vec<Reply>| items.into_iter().map(|r| r.with_ids_named(ids)).collect();
        match self {
            Reply::Integer(n) => match ids.iter().position(|&id| id == n) {
                Some(at) => {
                    Reply::Simple(format!("<client id of connection {}>", at + 1).into_bytes())
                }
                None => Reply::Integer(n),
            },
            Reply::Array(items) => Reply::Array(named(items)),
            Reply::Set(items) => Reply::Set(named(items)),
            Reply::Push(items) => Reply::Push(named(items)),
            Reply::Map(pairs) => Reply::Map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.with_ids_named(ids), v.with_ids_named(ids)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// The same flat array with its elements sorted two by two (field, value), for
    /// `HGETALL` in RESP2.
    pub fn sorted_pairs(self) -> Reply {
        match self {
            Reply::Array(items) if items.len() % 2 == 0 => {
                let mut pairs: Vec<(Reply, Reply)> = items
                    .chunks(2)
                    .map(|pair| (pair[0].clone(), pair[1].clone()))
                    .collect();
                pairs.sort();
                Reply::Array(pairs.into_iter().flat_map(|(a, b)| [a, b]).collect())
            }
            other => other.sorted(),
        }
    }
}

fn read_line(input: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    input.read_until(b'\n', &mut line)?;
    if !line.ends_with(b"\r\n") {
        return Err(invalid(&format!(
            "reply line without CRLF: {:?}",
            String::from_utf8_lossy(&line)
        )));
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

fn read_blob(input: &mut impl BufRead, len: i64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(len).map_err(|_| invalid("negative blob length"))?;
    let mut blob = vec![0; len + 2];
    input.read_exact(&mut blob)?;
    if !blob.ends_with(b"\r\n") {
        return Err(invalid("blob without CRLF"));
    }
    blob.truncate(len);
    Ok(blob)
}

fn read_many(input: &mut impl BufRead, len: i64) -> io::Result<Vec<Reply>> {
    (0..len).map(|_| Reply::read(input)).collect()
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let list = |f: &mut fmt::Formatter<'_>, open: &str, items: &[Reply]| {
            write!(f, "{open}")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{item}")?;
            }
            write!(f, "]")
        };
        match self {
            Reply::Simple(s) => write!(f, "+{}", text(s)),
            Reply::Error(e) => write!(f, "-{}", text(e)),
            Reply::Integer(n) => write!(f, ":{n}"),
            Reply::Bulk(b) => write!(f, "{:?}", text(b)),
            Reply::NullBulk => write!(f, "$-1"),
            Reply::NullArray => write!(f, "*-1"),
            Reply::Null => write!(f, "_"),
            Reply::Array(items) => list(f, "[", items),
            Reply::Set(items) => list(f, "~[", items),
            Reply::Push(items) => list(f, ">[", items),
            Reply::Map(pairs) => {
                write!(f, "{{")?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                write!(f, "}}")
            }
            Reply::Double(d) => write!(f, ",{}", text(d)),
            Reply::Boolean(b) => write!(f, "#{}", if *b { 't' } else { 'f' }),
            Reply::Verbatim(v) => write!(f, "={:?}", text(v)),
            Reply::BigNumber(n) => write!(f, "({}", text(n)),
        }
    }
}
