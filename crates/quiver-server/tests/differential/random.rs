//! Random command sequences over a small key space: few keys, few members and a mix
//! of valid and invalid numbers, so types collide, values grow and shrink, and error
//! paths are taken as often as the others. Only commands whose reply does not depend
//! on chance or on the clock are drawn.

use super::Compare;

/// Commands in one sequence (one pair of connections, from empty databases).
pub const SEQUENCE_LEN: usize = 60;

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const KEYS: &[&str] = &["k1", "k2", "k3", "{x}"];
const MEMBERS: &[&str] = &["a", "b", "c", "d", "aa", "", "10", "-1"];
const VALUES: &[&str] = &["v", "hello", "1", "42", "-7", "3.5", "", "abc"];
const INTEGERS: &[&str] = &["0", "1", "2", "3", "-1", "-2", "10", "-100", "x", "1.5"];
const FLOATS: &[&str] = &[
    "0", "1", "2.5", "-1.25", "10", "inf", "-inf", "nan", "x", "1e3",
];
const SCORES: &[&str] = &["0", "1", "2", "2.5", "-3", "+inf", "-inf", "(1", "(2", "x"];
const LEX: &[&str] = &["-", "+", "[a", "(a", "[c", "(b", "[", "a"];
/// The sorted set the lexicographic commands work on, all of its scores 0.
const LEX_KEY: &str = "zlex";

/// A command and how its reply is compared.
pub fn command(rng: &mut Rng) -> (Vec<Vec<u8>>, Compare) {
    let key = rng.pick(KEYS);
    let other = rng.pick(KEYS);
    let mut compare = Compare::Exact;
    let mut words: Vec<String> = match rng.below(76) {
        0..=9 => string(rng, key, other),
        70..=72 => hyperloglog(rng, key, other),
        73..=75 => geo(rng, key, other, &mut compare),
        61..=64 => bitmap(rng, key),
        65..=69 => stream(rng, key),
        10..=19 => generic(rng, key, other, &mut compare),
        20..=29 => hash(rng, key, &mut compare),
        30..=39 => list(rng, key, other),
        40..=49 => set(rng, key, other, &mut compare),
        50..=59 => zset(rng, key, other),
        _ => transaction(rng, key),
    }
    .into_iter()
    .map(str::to_owned)
    .collect();
    // Now and then one argument too few: the arity and syntax errors.
    if words.len() > 1 && rng.chance(3) {
        words.pop();
    }
    // Now and then the same command from a script: its reply converted to Lua and back,
    // its errors as `redis.pcall` returns them, its events fired from inside the script.
    if rng.chance(8) {
        let script = rng.pick(&[
            "return redis.pcall(unpack(ARGV))",
            "redis.setresp(3) return redis.pcall(unpack(ARGV))",
        ]);
        let wrapped = ["EVAL", script, "0"].map(str::to_owned);
        words.splice(0..0, wrapped);
    }
    (words.into_iter().map(String::into_bytes).collect(), compare)
}

fn bitmap<'a>(rng: &mut Rng, key: &'a str) -> Vec<&'a str> {
    let offset = rng.pick(&["0", "1", "7", "8", "15", "100", "-1", "x"]);
    match rng.below(6) {
        0 => vec!["SETBIT", key, offset, rng.pick(&["0", "1", "2"])],
        1 => vec!["GETBIT", key, offset],
        2 => {
            let mut words = vec!["BITPOS", key, rng.pick(&["0", "1", "1", "0", "x"])];
            for _ in 0..rng.below(3) {
                words.push(rng.pick(INTEGERS));
            }
            if rng.chance(30) {
                words.push(rng.pick(&["BIT", "BYTE", "BAD"]));
            }
            words
        }
        4 => {
            let mut words = vec!["BITFIELD", key];
            for _ in 0..=rng.below(3) {
                let kind = rng.pick(&["i8", "u8", "i4", "u3", "i64", "u63", "x1"]);
                let at = rng.pick(&["0", "3", "8", "#1", "-1"]);
                match rng.below(4) {
                    0 => words.extend(["GET", kind, at]),
                    1 => words.extend(["SET", kind, at, rng.pick(INTEGERS)]),
                    2 => words.extend(["INCRBY", kind, at, rng.pick(INTEGERS)]),
                    _ => words.extend(["OVERFLOW", rng.pick(&["WRAP", "SAT", "FAIL"])]),
                }
            }
            words
        }
        3 => vec![
            "BITOP",
            rng.pick(&["AND", "OR", "XOR", "NOT", "NOPE"]),
            rng.pick(KEYS),
            key,
            rng.pick(KEYS),
        ],
        _ => {
            let mut words = vec!["BITCOUNT", key];
            if rng.chance(60) {
                words.extend([rng.pick(INTEGERS), rng.pick(INTEGERS)]);
                if rng.chance(50) {
                    words.push(rng.pick(&["BIT", "BYTE", "BAD"]));
                }
            }
            words
        }
    }
}

/// Geo commands over points a few kilometres to a few thousand apart, with searches
/// whose edges fall between them.
fn geo<'a>(rng: &mut Rng, key: &'a str, other: &'a str, compare: &mut Compare) -> Vec<&'a str> {
    const LONS: &[&str] = &[
        "13.36", "13.37", "15.08", "-0.1", "2.35", "179.99", "-180", "x",
    ];
    const LATS: &[&str] = &[
        "38.11", "38.12", "37.5", "51.5", "48.85", "85.05", "-85.05", "86",
    ];
    const RADII: &[&str] = &["0", "1", "50", "150", "1000", "5000", "-1"];
    const UNITS: &[&str] = &["m", "km", "mi", "FT", "yd"];
    let sort = rng.pick(&["ASC", "DESC", ""]);
    let mut words = match rng.below(7) {
        0 | 1 => {
            let mut words = vec!["GEOADD", key];
            if rng.chance(20) {
                words.push(rng.pick(&["NX", "XX", "CH"]));
            }
            for _ in 0..=rng.below(2) {
                words.extend([rng.pick(LONS), rng.pick(LATS), rng.pick(MEMBERS)]);
            }
            words
        }
        2 => vec![
            "GEODIST",
            key,
            rng.pick(MEMBERS),
            rng.pick(MEMBERS),
            rng.pick(UNITS),
        ],
        3 => vec![
            rng.pick(&["GEOPOS", "GEOHASH"]),
            key,
            rng.pick(MEMBERS),
            rng.pick(MEMBERS),
        ],
        4 => {
            let mut words = vec!["GEOSEARCH", key];
            if rng.chance(50) {
                words.extend(["FROMMEMBER", rng.pick(MEMBERS)]);
            } else {
                words.extend(["FROMLONLAT", rng.pick(LONS), rng.pick(LATS)]);
            }
            if rng.chance(50) {
                words.extend(["BYRADIUS", rng.pick(RADII), rng.pick(UNITS)]);
            } else {
                words.extend(["BYBOX", rng.pick(RADII), rng.pick(RADII), rng.pick(UNITS)]);
            }
            words.extend(["WITHDIST", "WITHCOORD"]);
            words
        }
        5 => {
            let mut words = vec![
                "GEOSEARCHSTORE",
                other,
                key,
                "FROMMEMBER",
                rng.pick(MEMBERS),
            ];
            words.extend(["BYRADIUS", rng.pick(RADII), rng.pick(UNITS)]);
            if rng.chance(50) {
                words.push("STOREDIST");
            }
            words
        }
        _ => {
            let mut words = vec!["GEORADIUS", key, rng.pick(LONS), rng.pick(LATS)];
            words.extend([rng.pick(RADII), rng.pick(UNITS), "WITHDIST", "WITHHASH"]);
            if rng.chance(30) {
                words.extend(["COUNT", rng.pick(&["1", "2", "0"])]);
            }
            words
        }
    };
    if words[0].starts_with("GEOSEARCH") || words[0] == "GEORADIUS" {
        if sort.is_empty() && !words.contains(&"COUNT") {
            *compare = Compare::Unordered;
        } else if !sort.is_empty() {
            words.push(sort);
        }
    }
    words
}

/// HyperLogLog commands, with GET to compare the bytes they leave.
fn hyperloglog<'a>(rng: &mut Rng, key: &'a str, other: &'a str) -> Vec<&'a str> {
    match rng.below(5) {
        0 | 1 => {
            let mut words = vec!["PFADD", key];
            for _ in 0..rng.below(5) {
                words.push(rng.pick(MEMBERS));
            }
            words
        }
        2 => {
            let mut words = vec!["PFCOUNT", key];
            if rng.chance(40) {
                words.push(other);
            }
            words
        }
        3 => vec!["PFMERGE", key, other, rng.pick(KEYS)],
        _ => vec!["GET", key],
    }
}

/// Stream commands with explicit IDs (an automatic one depends on the clock).
fn stream<'a>(rng: &mut Rng, key: &'a str) -> Vec<&'a str> {
    const IDS: &[&str] = &["1-1", "1-2", "2", "2-*", "3-0", "0-0", "5-5", "x", "0-1"];
    const BOUNDS: &[&str] = &["-", "+", "1", "1-2", "(1-1", "(2-0", "3", "x", "(+"];
    match rng.below(10) {
        0 => {
            let mut words = vec!["XADD", key];
            if rng.chance(15) {
                words.push("NOMKSTREAM");
            }
            if rng.chance(25) {
                words.push(rng.pick(&["MAXLEN", "MINID"]));
                if rng.chance(60) {
                    words.push(rng.pick(&["=", "~"]));
                }
                words.push(rng.pick(&["0", "1", "2", "2-0", "x", "-1"]));
            }
            words.push(rng.pick(IDS));
            words.extend(["f", rng.pick(VALUES)]);
            if rng.chance(30) {
                words.extend(["g", rng.pick(VALUES)]);
            }
            words
        }
        1 => vec!["XLEN", key],
        2 | 3 => {
            let name = if rng.chance(50) {
                "XRANGE"
            } else {
                "XREVRANGE"
            };
            let mut words = vec![name, key, rng.pick(BOUNDS), rng.pick(BOUNDS)];
            if rng.chance(30) {
                words.extend(["COUNT", rng.pick(INTEGERS)]);
            }
            words
        }
        4 => vec!["XDEL", key, rng.pick(IDS), rng.pick(IDS)],
        5 => {
            let mut words = vec!["XREAD"];
            if rng.chance(30) {
                words.extend(["COUNT", rng.pick(INTEGERS)]);
            }
            words.extend([
                "STREAMS",
                key,
                rng.pick(KEYS),
                rng.pick(BOUNDS),
                rng.pick(IDS),
            ]);
            words
        }
        7..=8 => {
            let group = rng.pick(&["g", "h"]);
            match rng.below(7) {
                0 => {
                    let mut words = vec![
                        "XGROUP",
                        "CREATE",
                        key,
                        group,
                        rng.pick(&["0", "$", "1-1", "x"]),
                    ];
                    if rng.chance(50) {
                        words.push("MKSTREAM");
                    }
                    words
                }
                1 => {
                    let mut words = vec!["XREADGROUP", "GROUP", group, rng.pick(&["c1", "c2"])];
                    if rng.chance(30) {
                        words.extend(["COUNT", rng.pick(&["1", "2"])]);
                    }
                    if rng.chance(20) {
                        words.push("NOACK");
                    }
                    words.extend(["STREAMS", key, rng.pick(&[">", ">", "0", "1-1", "$"])]);
                    words
                }
                2 if rng.chance(50) => vec!["XINFO", rng.pick(&["STREAM", "GROUPS"]), key],
                2 => vec!["XACK", key, group, rng.pick(IDS), rng.pick(IDS)],
                3 => vec!["XPENDING", key, group],
                4 => vec![
                    "XCLAIM",
                    key,
                    group,
                    rng.pick(&["c1", "c3"]),
                    "0",
                    rng.pick(IDS),
                    rng.pick(&["JUSTID", "FORCE", "1-2"]),
                ],
                5 => vec![
                    "XAUTOCLAIM",
                    key,
                    group,
                    rng.pick(&["c1", "c3"]),
                    "0",
                    rng.pick(&["0", "-", "(1-1"]),
                    "COUNT",
                    rng.pick(&["1", "5", "0"]),
                ],
                _ => vec![
                    "XGROUP",
                    rng.pick(&["SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER"]),
                    key,
                    group,
                    rng.pick(&["c1", "0", "$"]),
                ],
            }
        }
        6 => {
            let mut words = vec!["XSETID", key, rng.pick(IDS)];
            if rng.chance(30) {
                words.extend(["ENTRIESADDED", rng.pick(INTEGERS)]);
            }
            if rng.chance(30) {
                words.extend(["MAXDELETEDID", rng.pick(IDS)]);
            }
            words
        }
        _ => {
            let mut words = vec!["XTRIM", key, rng.pick(&["MAXLEN", "MINID", "BAD"])];
            if rng.chance(50) {
                words.push(rng.pick(&["=", "~"]));
            }
            words.push(rng.pick(&["0", "1", "2", "1-2", "x"]));
            if rng.chance(20) {
                words.extend(["LIMIT", rng.pick(&["0", "5", "-1"])]);
            }
            words
        }
    }
}

/// MULTI, EXEC, DISCARD, WATCH and UNWATCH now and then: the commands drawn after a
/// MULTI are queued until an EXEC or DISCARD comes.
fn transaction<'a>(rng: &mut Rng, key: &'a str) -> Vec<&'a str> {
    match rng.below(5) {
        0 => vec!["MULTI"],
        1 => vec!["EXEC"],
        2 => vec!["DISCARD"],
        3 => vec!["WATCH", key],
        _ => vec!["UNWATCH"],
    }
}

fn string<'a>(rng: &mut Rng, key: &'a str, other: &'a str) -> Vec<&'a str> {
    let value = rng.pick(VALUES);
    let n = rng.pick(INTEGERS);
    match rng.below(17) {
        0 if rng.chance(10) => {
            let mut words = vec!["LCS", key, other];
            if rng.chance(60) {
                words.push(rng.pick(&["LEN", "IDX", "WITHMATCHLEN"]));
            }
            if rng.chance(30) {
                words.extend(["MINMATCHLEN", rng.pick(&["0", "1", "2", "-1"])]);
            }
            words
        }
        0 => {
            let mut words = vec!["SET", key, value];
            if rng.chance(30) {
                words.push(rng.pick(&["NX", "XX", "GET", "KEEPTTL"]));
            }
            if rng.chance(20) {
                words.extend(["EX", "1000"]);
            }
            words
        }
        1 => vec!["GET", key],
        2 => vec!["GETSET", key, value],
        3 => vec!["GETDEL", key],
        4 => vec!["APPEND", key, value],
        5 => vec!["STRLEN", key],
        6 => vec!["INCR", key],
        7 => vec!["INCRBY", key, n],
        8 => vec!["DECRBY", key, n],
        9 => vec!["INCRBYFLOAT", key, rng.pick(FLOATS)],
        10 => vec!["SETRANGE", key, n, value],
        11 => vec!["GETRANGE", key, n, rng.pick(INTEGERS)],
        12 => vec!["MSET", key, value, other, rng.pick(VALUES)],
        13 => vec!["MGET", key, other, "k9"],
        14 => vec!["MSETNX", key, value, other, value],
        15 => vec!["SETNX", key, value],
        _ => vec!["DECR", key],
    }
}

fn generic<'a>(rng: &mut Rng, key: &'a str, other: &'a str, compare: &mut Compare) -> Vec<&'a str> {
    match rng.below(14) {
        0 if rng.chance(5) => vec!["SWAPDB", "0", rng.pick(&["1", "0", "16"])],
        1 if rng.chance(25) => {
            let mut words = vec![rng.pick(&["SORT", "SORT_RO"]), key];
            if rng.chance(40) {
                // Numbers by other keys: missing ones count as 0, ties go by element.
                words.extend(["BY", rng.pick(&["k*", "{x}*"])]);
                if rng.chance(50) {
                    words.extend(["GET", "#", "GET", "k*"]);
                }
            } else if rng.chance(50) {
                words.push("ALPHA");
            }
            if rng.chance(30) {
                words.push("DESC");
            }
            if rng.chance(30) {
                words.extend([
                    "LIMIT",
                    rng.pick(&["0", "1", "-1"]),
                    rng.pick(&["2", "-1", "0"]),
                ]);
            }
            if rng.chance(30) {
                words.extend(["STORE", other]);
            }
            words
        }
        0 => vec!["DEL", key, other],
        1 => vec!["EXISTS", key, other, key],
        2 => vec!["TYPE", key],
        3 => vec!["RENAME", key, other],
        4 => vec!["RENAMENX", key, other],
        5 => {
            let mut words = vec!["COPY", key, other];
            if rng.chance(50) {
                words.push("REPLACE");
            }
            words
        }
        6 => {
            let mut words = vec!["EXPIRE", key, rng.pick(&["1000", "2000", "x", "0"])];
            if rng.chance(40) {
                words.push(rng.pick(&["NX", "XX", "GT", "LT", "BAD"]));
            }
            words
        }
        7 => vec!["PERSIST", key],
        8 => vec!["DBSIZE"],
        9 => {
            *compare = Compare::Unordered;
            vec!["KEYS", rng.pick(&["*", "k*", "k[12]", "?1", "\\{*"])]
        }
        10 => vec!["UNLINK", key],
        11 => vec!["TOUCH", key, other],
        12 => vec!["MOVE", key, rng.pick(&["0", "1", "x"])],
        _ => vec!["OBJECT", "ENCODING", key],
    }
}

fn hash<'a>(rng: &mut Rng, key: &'a str, compare: &mut Compare) -> Vec<&'a str> {
    let field = rng.pick(MEMBERS);
    let value = rng.pick(VALUES);
    match rng.below(13) {
        0 => vec![
            "HSET",
            key,
            field,
            value,
            rng.pick(MEMBERS),
            rng.pick(VALUES),
        ],
        1 => vec!["HSETNX", key, field, value],
        2 => vec!["HGET", key, field],
        3 => vec!["HMGET", key, field, rng.pick(MEMBERS)],
        4 => vec!["HDEL", key, field, rng.pick(MEMBERS)],
        5 => vec!["HLEN", key],
        6 => vec!["HEXISTS", key, field],
        7 => vec!["HINCRBY", key, field, rng.pick(INTEGERS)],
        8 => vec!["HINCRBYFLOAT", key, field, rng.pick(FLOATS)],
        9 => vec!["HSTRLEN", key, field],
        10 => {
            *compare = Compare::UnorderedPairs;
            vec!["HGETALL", key]
        }
        11 => {
            *compare = Compare::Unordered;
            vec!["HKEYS", key]
        }
        _ => {
            *compare = Compare::Unordered;
            vec!["HVALS", key]
        }
    }
}

fn list<'a>(rng: &mut Rng, key: &'a str, other: &'a str) -> Vec<&'a str> {
    let value = rng.pick(MEMBERS);
    let n = rng.pick(INTEGERS);
    let m = rng.pick(INTEGERS);
    let side = rng.pick(&["LEFT", "RIGHT"]);
    let side2 = rng.pick(&["LEFT", "RIGHT"]);
    match rng.below(17) {
        0 => vec!["LPUSH", key, value, rng.pick(MEMBERS)],
        1 => vec!["RPUSH", key, value],
        2 => vec!["LPUSHX", key, value],
        3 => vec!["RPUSHX", key, value],
        4 => {
            let mut words = vec![rng.pick(&["LPOP", "RPOP"]), key];
            if rng.chance(40) {
                words.push(n);
            }
            words
        }
        5 if rng.chance(30) => {
            let mut words = vec!["LMPOP", rng.pick(&["2", "1", "0", "3"]), key, other, side];
            if rng.chance(50) {
                words.extend(["COUNT", rng.pick(INTEGERS)]);
            }
            words
        }
        5 => vec!["LRANGE", key, n, m],
        6 => vec!["LINDEX", key, n],
        7 => vec!["LSET", key, n, value],
        8 => vec![
            "LINSERT",
            key,
            rng.pick(&["BEFORE", "AFTER", "MIDDLE"]),
            rng.pick(MEMBERS),
            value,
        ],
        9 => vec!["LREM", key, n, value],
        10 => vec!["LTRIM", key, n, m],
        11 => vec!["LLEN", key],
        12 => {
            let mut words = vec!["LPOS", key, value];
            if rng.chance(40) {
                words.extend(["RANK", n]);
            }
            if rng.chance(40) {
                words.extend(["COUNT", m]);
            }
            words
        }
        13 => vec!["LMOVE", key, other, side, side2],
        14 => vec!["RPOPLPUSH", key, other],
        15 => vec!["BLPOP", key, other, "0.01"],
        _ => vec!["BLMOVE", key, other, side, side2, "0.01"],
    }
}

fn set<'a>(rng: &mut Rng, key: &'a str, other: &'a str, compare: &mut Compare) -> Vec<&'a str> {
    let member = rng.pick(MEMBERS);
    match rng.below(15) {
        0 => vec!["SADD", key, member, rng.pick(MEMBERS), rng.pick(MEMBERS)],
        1 => vec!["SREM", key, member],
        2 => vec!["SISMEMBER", key, member],
        3 => vec!["SMISMEMBER", key, member, rng.pick(MEMBERS)],
        4 => vec!["SCARD", key],
        5 => {
            *compare = Compare::Unordered;
            vec!["SMEMBERS", key]
        }
        6..=8 => {
            *compare = Compare::Unordered;
            vec![rng.pick(&["SUNION", "SINTER", "SDIFF"]), key, other]
        }
        9 => vec![
            rng.pick(&["SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE"]),
            "k3",
            key,
            other,
        ],
        10 => {
            let mut words = vec!["SINTERCARD", "2", key, other];
            if rng.chance(40) {
                words.extend(["LIMIT", rng.pick(INTEGERS)]);
            }
            words
        }
        11 => vec!["SMOVE", key, other, member],
        12 => vec!["SADD", key, rng.pick(&["1", "2", "3", "100"])],
        13 => vec!["OBJECT", "ENCODING", key],
        _ => vec!["SREM", key, member, rng.pick(MEMBERS)],
    }
}

fn zset<'a>(rng: &mut Rng, key: &'a str, other: &'a str) -> Vec<&'a str> {
    let member = rng.pick(MEMBERS);
    let score = rng.pick(SCORES);
    let min = rng.pick(SCORES);
    let max = rng.pick(SCORES);
    let start = rng.pick(INTEGERS);
    let stop = rng.pick(INTEGERS);
    match rng.below(21) {
        0 | 1 => {
            let mut words = vec!["ZADD", key];
            if rng.chance(30) {
                words.push(rng.pick(&["NX", "XX", "GT", "LT", "CH", "INCR"]));
            }
            words.extend([rng.pick(FLOATS), member]);
            if rng.chance(50) {
                words.extend([rng.pick(&["1", "2", "3"]), rng.pick(MEMBERS)]);
            }
            words
        }
        2 => vec!["ZINCRBY", key, rng.pick(FLOATS), member],
        3 => vec!["ZSCORE", key, member],
        4 => vec!["ZMSCORE", key, member, rng.pick(MEMBERS)],
        5 => vec![rng.pick(&["ZRANK", "ZREVRANK"]), key, member],
        6 => vec!["ZREM", key, member],
        7 => vec!["ZCARD", key],
        8 => vec!["ZCOUNT", key, min, max],
        9 => {
            let mut words = vec!["ZRANGE", key, start, stop];
            if rng.chance(30) {
                words.push("REV");
            }
            if rng.chance(50) {
                words.push("WITHSCORES");
            }
            words
        }
        10 => {
            let mut words = vec!["ZRANGE", key, min, max, "BYSCORE"];
            if rng.chance(30) {
                words.push("REV");
            }
            if rng.chance(30) {
                words.extend(["LIMIT", start, stop]);
            }
            if rng.chance(30) {
                words.push("WITHSCORES");
            }
            words
        }
        11 => vec![
            rng.pick(&["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]),
            key,
            min,
            max,
            "WITHSCORES",
        ],
        // Lexicographic ranges on a sorted set of equal scores only: with different
        // scores Redis leaves their result unspecified.
        12 => vec![
            rng.pick(&["ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT"]),
            LEX_KEY,
            rng.pick(LEX),
            rng.pick(LEX),
        ],
        13 if rng.chance(30) => {
            let side = rng.pick(&["MIN", "MAX", "LEFT"]);
            let mut words = vec!["ZMPOP", rng.pick(&["2", "1", "0", "3"]), key, other, side];
            if rng.chance(50) {
                words.extend(["COUNT", start]);
            }
            words
        }
        13 => {
            let mut words = vec![rng.pick(&["ZPOPMIN", "ZPOPMAX"]), key];
            if rng.chance(50) {
                words.push(start);
            }
            words
        }
        14 => vec!["ZREMRANGEBYRANK", key, start, stop],
        15 => vec!["ZREMRANGEBYSCORE", key, min, max],
        16 => vec!["ZREMRANGEBYLEX", LEX_KEY, rng.pick(LEX), rng.pick(LEX)],
        17 => {
            let command = rng.pick(&[
                "ZUNIONSTORE",
                "ZINTERSTORE",
                "ZDIFFSTORE",
                "ZUNION",
                "ZINTER",
                "ZDIFF",
                "ZINTERCARD",
            ]);
            let mut words = vec![command];
            if command.ends_with("STORE") {
                words.push("k3");
            }
            words.extend(["2", key, other]);
            if command == "ZINTERCARD" {
                if rng.chance(50) {
                    words.extend(["LIMIT", rng.pick(&["0", "1", "-1"])]);
                }
                return words;
            }
            if rng.chance(40) {
                words.extend(["WEIGHTS", rng.pick(FLOATS), "2"]);
            }
            if rng.chance(40) {
                words.extend(["AGGREGATE", rng.pick(&["SUM", "MIN", "MAX", "AVG"])]);
            }
            if !command.ends_with("STORE") && rng.chance(50) {
                words.push("WITHSCORES");
            }
            words
        }
        18 => vec!["ZRANGESTORE", "k3", key, start, stop],
        19 => vec!["ZADD", LEX_KEY, "0", member, "0", rng.pick(MEMBERS)],
        _ => vec!["ZADD", key, score, member],
    }
}
