//! `cjson`, as Redis embeds lua-cjson: `encode` and `decode` with lua-cjson's rules and
//! error texts (its tokenizer, its `strtod` numbers, `Expected value but found T_END at
//! character 1`), and its settings functions (`encode_sparse_array`, `encode_max_depth`,
//! `decode_max_depth`, `encode_number_precision`, `encode_keep_buffer`,
//! `encode_invalid_numbers`, `decode_invalid_numbers`), which last until SCRIPT FLUSH.

use std::sync::{Arc, Mutex, PoisonError};

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value};

use super::libs::{bad_argument, check_number, type_of};

/// lua-cjson's settings, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Config {
    sparse_convert: bool,
    sparse_ratio: i64,
    sparse_safe: i64,
    encode_max_depth: i64,
    decode_max_depth: i64,
    number_precision: i64,
    keep_buffer: bool,
    /// 0 refuses NaN and infinities, 1 writes them (`nan`, `inf`), 2 writes `null`.
    encode_invalid: i64,
    decode_invalid: bool,
}

const DEFAULTS: Config = Config {
    sparse_convert: false,
    sparse_ratio: 2,
    sparse_safe: 10,
    encode_max_depth: 1000,
    decode_max_depth: 1000,
    number_precision: 14,
    keep_buffer: true,
    encode_invalid: 0,
    decode_invalid: true,
};

/// The settings of one VM's `cjson`, shared by its functions; [`Settings::reset`] puts
/// lua-cjson's defaults back (SCRIPT FLUSH makes a new VM in Redis).
#[derive(Debug, Clone)]
pub(super) struct Settings(Arc<Mutex<Config>>);

impl Settings {
    fn get(&self) -> Config {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update<T>(&self, change: impl FnOnce(&mut Config) -> T) -> T {
        change(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub(super) fn reset(&self) {
        self.update(|config| *config = DEFAULTS);
    }
}

fn raised(text: String) -> mlua::Error {
    mlua::Error::runtime(text)
}

/// The `cjson` table, and its settings.
pub(super) fn library(lua: &Lua) -> mlua::Result<(Table, Settings)> {
    let settings = Settings(Arc::new(Mutex::new(DEFAULTS)));
    let t = lua.create_table()?;
    t.raw_set("null", Value::NULL)?;
    let s = settings.clone();
    t.raw_set(
        "encode",
        lua.create_function(move |lua, args: MultiValue| {
            let [value] = <[Value; 1]>::try_from(args.into_iter().collect::<Vec<_>>())
                .map_err(|_| bad_argument(lua, 1, "expected 1 argument"))?;
            let mut out = Vec::new();
            encode(lua, &s.get(), &value, &mut out)?;
            lua.create_string(out)
        })?,
    )?;
    let s = settings.clone();
    t.raw_set(
        "decode",
        lua.create_function(move |lua, args: MultiValue| {
            let [value] = <[Value; 1]>::try_from(args.into_iter().collect::<Vec<_>>())
                .map_err(|_| bad_argument(lua, 1, "expected 1 argument"))?;
            let text = match &value {
                Value::String(text) => text.as_bytes().to_vec(),
                Value::Integer(_) | Value::Number(_) => lua
                    .coerce_string(value.clone())?
                    .map(|s| s.as_bytes().to_vec())
                    .unwrap_or_default(),
                other => {
                    let got = format!("string expected, got {}", type_of(Some(other)));
                    return Err(bad_argument(lua, 1, &got));
                }
            };
            decode(lua, &s.get(), &text)
        })?,
    )?;
    // The settings functions: each takes at most so many arguments, sets what it is
    // given, and answers the settings as they are then.
    const INT_MAX: i64 = i32::MAX as i64;
    setting(lua, &t, &settings, "encode_sparse_array", 3, |lua, c, a| {
        let convert = bool_option(lua, a, 0, &mut c.sparse_convert);
        let ratio = integer_option(lua, a, 1, (0, INT_MAX), &mut c.sparse_ratio);
        let safe = integer_option(lua, a, 2, (0, INT_MAX), &mut c.sparse_safe);
        (convert?, ratio?, safe?).into_lua_multi(lua)
    })?;
    setting(lua, &t, &settings, "encode_max_depth", 1, |lua, c, a| {
        integer_option(lua, a, 0, (1, INT_MAX), &mut c.encode_max_depth)?.into_lua_multi(lua)
    })?;
    setting(lua, &t, &settings, "decode_max_depth", 1, |lua, c, a| {
        integer_option(lua, a, 0, (1, INT_MAX), &mut c.decode_max_depth)?.into_lua_multi(lua)
    })?;
    setting(
        lua,
        &t,
        &settings,
        "encode_number_precision",
        1,
        |lua, c, a| {
            integer_option(lua, a, 0, (1, 14), &mut c.number_precision)?.into_lua_multi(lua)
        },
    )?;
    setting(lua, &t, &settings, "encode_keep_buffer", 1, |lua, c, a| {
        bool_option(lua, a, 0, &mut c.keep_buffer)?.into_lua_multi(lua)
    })?;
    setting(
        lua,
        &t,
        &settings,
        "decode_invalid_numbers",
        1,
        |lua, c, a| bool_option(lua, a, 0, &mut c.decode_invalid)?.into_lua_multi(lua),
    )?;
    setting(
        lua,
        &t,
        &settings,
        "encode_invalid_numbers",
        1,
        |lua, c, a| {
            if let Some(value) = a.first().filter(|v| !v.is_nil()) {
                c.encode_invalid = match value {
                    Value::Boolean(on) => i64::from(*on),
                    other => choice(lua, other, 1, &["off", "on", "null"])?,
                };
            }
            match c.encode_invalid {
                0 => false.into_lua_multi(lua),
                1 => true.into_lua_multi(lua),
                _ => "null".into_lua_multi(lua),
            }
        },
    )?;
    Ok((t, settings))
}

/// A settings function of `cjson`: `apply` gets the settings and at most `most`
/// arguments.
fn setting(
    lua: &Lua,
    cjson: &Table,
    settings: &Settings,
    name: &'static str,
    most: usize,
    apply: fn(&Lua, &mut Config, &[Value]) -> mlua::Result<MultiValue>,
) -> mlua::Result<()> {
    let settings = settings.clone();
    let function = lua.create_function(move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        if args.len() > most {
            let why = "found too many arguments";
            return Err(bad_argument(lua, most + 1, why));
        }
        settings.update(|config| apply(lua, config, &args))
    })?;
    cjson.raw_set(name, function)
}

/// An `off`/`on` setting (or a boolean) at `index`, if given; the setting after it.
fn bool_option(lua: &Lua, args: &[Value], index: usize, setting: &mut bool) -> mlua::Result<bool> {
    if let Some(value) = args.get(index).filter(|v| !v.is_nil()) {
        *setting = match value {
            Value::Boolean(on) => *on,
            other => choice(lua, other, index + 1, &["off", "on"])? == 1,
        };
    }
    Ok(*setting)
}

/// Which of `names` the argument at `position` is (`luaL_checkoption`).
fn choice(lua: &Lua, value: &Value, position: usize, names: &[&str]) -> mlua::Result<i64> {
    let text = match value {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(n) => n.to_string(),
        Value::Number(n) => format_g(*n, 14),
        other => {
            let got = format!("string expected, got {}", type_of(Some(other)));
            return Err(bad_argument(lua, position, &got));
        }
    };
    names
        .iter()
        .position(|option| *option == text)
        .map(|at| at as i64)
        .ok_or_else(|| bad_argument(lua, position, &format!("invalid option '{text}'")))
}

/// An integer setting within `min..=max` at `index`, if given; the setting after it.
/// (Redis's lua-cjson names argument #1 in its range error, whichever it was.)
fn integer_option(
    lua: &Lua,
    args: &[Value],
    index: usize,
    (min, max): (i64, i64),
    setting: &mut i64,
) -> mlua::Result<i64> {
    if args.get(index).is_some_and(|v| !v.is_nil()) {
        let value = check_number(lua, args, index + 1)? as i64;
        if !(min..=max).contains(&value) {
            let why = format!("expected integer between {min} and {max}");
            return Err(bad_argument(lua, 1, &why));
        }
        *setting = value;
    }
    Ok(*setting)
}

/// C's `%.{precision}g` (every NaN as `nan`, as lua-cjson writes it).
pub(super) fn format_g(value: f64, precision: i64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    let precision = precision.clamp(1, 17) as usize;
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').expect("an exponent");
    let exponent: i64 = exponent.parse().expect("a number");
    if exponent < -4 || exponent >= precision as i64 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i64 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// Slots of the Lua stack a C function may use (Lua 5.1's `LUAI_MAXCSTACK`): lua-cjson
/// stops nesting where its `lua_checkstack` fails, beyond any `*_max_depth` set higher.
const LUA_STACK_SLOTS: i64 = 8000;

/// Deepest nesting encoded or decoded whatever the settings: each level holds one or two
/// references to Lua tables, and the VM has 8,000 (Redis stops at 3,999 to 7,998 levels,
/// where its Lua stack ends).
const MAX_NESTING: i64 = 3000;

/// A table being written: an array by index up to its largest key, or an object by its
/// keys, listed in a Lua table (values held in Rust would each pin a slot of the VM's
/// reference stack, of which there are 8,000).
enum Open {
    Array {
        table: Table,
        next: i64,
        max: i64,
    },
    Object {
        table: Table,
        keys: Table,
        next: i64,
        len: i64,
    },
}

impl Open {
    /// The Lua stack slots lua-cjson holds while it writes one of this table's values.
    fn slots(&self) -> i64 {
        match self {
            Open::Array { .. } => 1,
            Open::Object { .. } => 2,
        }
    }
}

/// Writes `value` as JSON; tables are walked with a stack of their own, not by recursion,
/// so no nesting a script can build exhausts the thread's stack.
fn encode(lua: &Lua, config: &Config, value: &Value, out: &mut Vec<u8>) -> mlua::Result<()> {
    let mut open: Vec<Open> = Vec::new();
    // The function's argument holds a slot.
    let mut slots = 1i64;
    let mut next = Some(value.clone());
    loop {
        if let Some(value) = next.take() {
            match value {
                Value::Table(table) => {
                    let depth = open.len() as i64 + 1;
                    if depth > config.encode_max_depth.min(MAX_NESTING)
                        || slots + 3 > LUA_STACK_SLOTS
                    {
                        return Err(raised(format!(
                            "Cannot serialise, excessive nesting ({depth})"
                        )));
                    }
                    let opened = open_table(lua, config, table)?;
                    out.push(if matches!(opened, Open::Array { .. }) {
                        b'['
                    } else {
                        b'{'
                    });
                    slots += opened.slots();
                    open.push(opened);
                }
                other => encode_scalar(config, &other, out)?,
            }
        }
        let Some(top) = open.last_mut() else {
            return Ok(());
        };
        match top {
            Open::Array {
                table,
                next: at,
                max,
            } if *at <= *max => {
                if *at > 1 {
                    out.push(b',');
                }
                next = Some(table.raw_get::<Value>(*at)?);
                *at += 1;
            }
            Open::Object {
                table,
                keys,
                next: at,
                len,
            } if *at <= *len => {
                if *at > 1 {
                    out.push(b',');
                }
                let key = keys.raw_get::<Value>(*at)?;
                encode_key(config, &key, out)?;
                out.push(b':');
                next = Some(table.raw_get::<Value>(key)?);
                *at += 1;
            }
            done => {
                out.push(if matches!(done, Open::Array { .. }) {
                    b']'
                } else {
                    b'}'
                });
                slots -= done.slots();
                open.pop();
            }
        }
    }
}

fn encode_scalar(config: &Config, value: &Value, out: &mut Vec<u8>) -> mlua::Result<()> {
    match value {
        Value::Nil => out.extend_from_slice(b"null"),
        v if v.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => encode_number(config, *n as f64, out)?,
        Value::Number(n) => encode_number(config, *n, out)?,
        Value::String(s) => encode_string(&s.as_bytes(), out),
        other => {
            return Err(raised(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            )));
        }
    }
    Ok(())
}

fn encode_number(config: &Config, n: f64, out: &mut Vec<u8>) -> mlua::Result<()> {
    if !n.is_finite() {
        match config.encode_invalid {
            0 => {
                return Err(raised(
                    "Cannot serialise number: must not be NaN or Inf".to_owned(),
                ));
            }
            2 => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {}
        }
    }
    out.extend_from_slice(format_g(n, config.number_precision).as_bytes());
    Ok(())
}

/// An object's key: a string, or a number written as a string.
fn encode_key(config: &Config, key: &Value, out: &mut Vec<u8>) -> mlua::Result<()> {
    let number = match key {
        Value::String(s) => {
            encode_string(&s.as_bytes(), out);
            return Ok(());
        }
        Value::Integer(n) => *n as f64,
        Value::Number(n) => *n,
        other => {
            return Err(raised(format!(
                "Cannot serialise {}: table key must be a number or string",
                other.type_name()
            )));
        }
    };
    out.push(b'"');
    encode_number(config, number, out)?;
    out.push(b'"');
    Ok(())
}

/// How `table` is written: an array when every key is a positive integer; an
/// excessively sparse one (largest key above `ratio` times the count and above `safe`)
/// is refused, or written as an object when `encode_sparse_array` converts it.
fn open_table(lua: &Lua, config: &Config, table: Table) -> mlua::Result<Open> {
    let (mut items, mut max, mut array) = (0i64, 0i64, true);
    table.for_each::<Value, Value>(|key, _| {
        items += 1;
        match key {
            Value::Integer(n) if n >= 1 => max = max.max(n),
            Value::Number(n) if n >= 1.0 && n.fract() == 0.0 => max = max.max(n as i64),
            _ => array = false,
        }
        Ok(())
    })?;
    // lua-cjson counts in a C int: a larger key makes no array (and none is padded with
    // billions of nulls).
    array &= items > 0 && max <= i64::from(i32::MAX);
    if array
        && config.sparse_ratio > 0
        && max > items.saturating_mul(config.sparse_ratio)
        && max > config.sparse_safe
    {
        if !config.sparse_convert {
            return Err(raised(
                "Cannot serialise table: excessively sparse array".to_owned(),
            ));
        }
        array = false;
    }
    if array {
        return Ok(Open::Array {
            table,
            next: 1,
            max,
        });
    }
    let keys = lua.create_table_with_capacity(usize::try_from(items).unwrap_or(0), 0)?;
    let mut len = 0i64;
    table.for_each::<Value, Value>(|key, _| {
        len += 1;
        keys.raw_set(len, key)
    })?;
    Ok(Open::Object {
        table,
        keys,
        next: 1,
        len,
    })
}

/// A JSON string as cjson writes it (it escapes `/` too).
fn encode_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..0x20 | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// A token of lua-cjson's tokenizer: its kind and where it starts.
#[derive(Debug)]
enum Token {
    ObjectBegin,
    ObjectEnd,
    ArrayBegin,
    ArrayEnd,
    String(Vec<u8>),
    Number(f64),
    Boolean(bool),
    Null,
    Colon,
    Comma,
    End,
    /// What was wrong (`invalid token`, `invalid number`, `unexpected end of string`…).
    Error(&'static str),
}

impl Token {
    /// The name lua-cjson's errors give it.
    fn name(&self) -> &'static str {
        match self {
            Token::ObjectBegin => "T_OBJ_BEGIN",
            Token::ObjectEnd => "T_OBJ_END",
            Token::ArrayBegin => "T_ARR_BEGIN",
            Token::ArrayEnd => "T_ARR_END",
            Token::String(_) => "T_STRING",
            Token::Number(_) => "T_NUMBER",
            Token::Boolean(_) => "T_BOOLEAN",
            Token::Null => "T_NULL",
            Token::Colon => "T_COLON",
            Token::Comma => "T_COMMA",
            Token::End => "T_END",
            Token::Error(what) => what,
        }
    }
}

/// lua-cjson's decoder over `data` (a C string to it: a zero byte ends the input).
struct Parser<'a> {
    data: &'a [u8],
    pos: usize,
    config: Config,
}

fn decode(lua: &Lua, config: &Config, text: &[u8]) -> mlua::Result<Value> {
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(raised(
            "JSON parser does not support UTF-16 or UTF-32".to_owned(),
        ));
    }
    let mut parser = Parser {
        data: text,
        pos: 0,
        config: *config,
    };
    let (token, at) = parser.next();
    let value = parser.value(lua, token, at)?;
    let (token, at) = parser.next();
    if !matches!(token, Token::End) {
        return Err(Parser::expected("the end", &token, at));
    }
    Ok(value)
}

impl Parser<'_> {
    fn byte(&self, at: usize) -> u8 {
        self.data.get(at).copied().unwrap_or(0)
    }

    fn expected(what: &str, token: &Token, at: usize) -> mlua::Error {
        raised(format!(
            "Expected {what} but found {} at character {}",
            token.name(),
            at + 1
        ))
    }

    /// The next token and where it starts (for an error: where it was found).
    fn next(&mut self) -> (Token, usize) {
        while matches!(self.byte(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let at = self.pos;
        let single = match self.byte(at) {
            0 => return (Token::End, at),
            b'{' => Some(Token::ObjectBegin),
            b'}' => Some(Token::ObjectEnd),
            b'[' => Some(Token::ArrayBegin),
            b']' => Some(Token::ArrayEnd),
            b':' => Some(Token::Colon),
            b',' => Some(Token::Comma),
            _ => None,
        };
        if let Some(token) = single {
            self.pos += 1;
            return (token, at);
        }
        let rest = &self.data[at..];
        match self.byte(at) {
            b'"' => return self.string(),
            b'-' | b'0'..=b'9' => {
                if !self.config.decode_invalid && self.invalid_number() {
                    return (Token::Error("invalid number"), at);
                }
                return self.number();
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => {}
            _ => return (Token::Error("invalid token"), at),
        }
        for (word, token) in [
            (&b"true"[..], Token::Boolean(true)),
            (b"false", Token::Boolean(false)),
            (b"null", Token::Null),
        ] {
            if rest.starts_with(word) {
                self.pos += word.len();
                return (token, at);
            }
        }
        if self.config.decode_invalid && self.invalid_number() {
            return self.number();
        }
        (Token::Error("invalid token"), at)
    }

    /// Numbers JSON does not allow (a leading `+` or zero, hexadecimal, inf, nan).
    fn invalid_number(&self) -> bool {
        let mut p = self.pos;
        match self.byte(p) {
            b'+' => return true,
            b'-' => p += 1,
            _ => {}
        }
        if self.byte(p) == b'0' {
            let next = self.byte(p + 1);
            return next | 0x20 == b'x' || next.is_ascii_digit();
        }
        if self.byte(p) <= b'9' {
            return false;
        }
        let word = &self.data[p.min(self.data.len())..];
        let starts = |w: &[u8]| word.len() >= 3 && word[..3].eq_ignore_ascii_case(w);
        starts(b"inf") || starts(b"nan")
    }

    fn number(&mut self) -> (Token, usize) {
        let at = self.pos;
        match strtod(&self.data[at..]) {
            Some((value, used)) => {
                self.pos += used;
                (Token::Number(value), at)
            }
            None => (Token::Error("invalid number"), at),
        }
    }

    fn string(&mut self) -> (Token, usize) {
        let start = self.pos;
        self.pos += 1;
        let mut text = Vec::new();
        loop {
            let c = self.byte(self.pos);
            match c {
                b'"' => break,
                0 => return (Token::Error("unexpected end of string"), self.pos),
                b'\\' => {
                    let escaped = match self.byte(self.pos + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            if !self.unicode_escape(&mut text) {
                                return (Token::Error("invalid unicode escape code"), self.pos);
                            }
                            continue;
                        }
                        _ => return (Token::Error("invalid escape code"), self.pos),
                    };
                    text.push(escaped);
                    self.pos += 2;
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        (Token::String(text), start)
    }

    /// `\uXXXX` (a surrogate pair as two), appended as UTF-8; false when invalid.
    fn unicode_escape(&mut self, text: &mut Vec<u8>) -> bool {
        let hex4 = |at: usize| -> Option<u32> {
            let digits = self.data.get(at..at + 4)?;
            let text = std::str::from_utf8(digits).ok()?;
            if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            u32::from_str_radix(text, 16).ok()
        };
        let Some(mut code) = hex4(self.pos + 2) else {
            return false;
        };
        let mut used = 6;
        if code & 0xF800 == 0xD800 {
            if code & 0x400 != 0
                || self.byte(self.pos + 6) != b'\\'
                || self.byte(self.pos + 7) != b'u'
            {
                return false;
            }
            let Some(low) = hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            used = 12;
        }
        // Encoded by hand: lua-cjson writes a lone surrogate's three bytes too.
        match code {
            0..0x80 => text.push(code as u8),
            0x80..0x800 => text.extend([0xC0 | (code >> 6) as u8, 0x80 | (code & 0x3F) as u8]),
            0x800..0x10000 => text.extend([
                0xE0 | (code >> 12) as u8,
                0x80 | ((code >> 6) & 0x3F) as u8,
                0x80 | (code & 0x3F) as u8,
            ]),
            _ => text.extend([
                0xF0 | (code >> 18) as u8,
                0x80 | ((code >> 12) & 0x3F) as u8,
                0x80 | ((code >> 6) & 0x3F) as u8,
                0x80 | (code & 0x3F) as u8,
            ]),
        }
        self.pos += used;
        true
    }

    /// The value that starts with `token` (at `at`): containers are filled with a stack
    /// of their own, not by recursion, so no nesting exhausts the thread's stack.
    fn value(&mut self, lua: &Lua, token: Token, at: usize) -> mlua::Result<Value> {
        // Open containers: an array's table and next index, or an object's table and the
        // key its next value goes to.
        enum Open {
            Array(Table, i64),
            Object(Table, Vec<u8>),
        }
        let mut open: Vec<Open> = Vec::new();
        // The Lua stack slots lua-cjson would hold: the argument, then a table per open
        // array and a table and a key per open object.
        let mut slots = 1i64;
        let (mut token, mut at) = (token, at);
        loop {
            let mut value = match token {
                Token::String(text) => Value::String(lua.create_string(text)?),
                Token::Number(n) => Value::Number(n),
                Token::Boolean(b) => Value::Boolean(b),
                Token::Null => Value::NULL,
                Token::ObjectBegin | Token::ArrayBegin => {
                    let object = matches!(token, Token::ObjectBegin);
                    let depth = open.len() as i64 + 1;
                    let needed = if object { 3 } else { 2 };
                    if depth > self.config.decode_max_depth.min(MAX_NESTING)
                        || slots + needed > LUA_STACK_SLOTS
                    {
                        return Err(raised(format!(
                            "Found too many nested data structures ({depth}) at character {}",
                            self.pos
                        )));
                    }
                    let table = lua.create_table()?;
                    let (first, first_at) = self.next();
                    match first {
                        Token::ObjectEnd if object => Value::Table(table),
                        Token::ArrayEnd if !object => Value::Table(table),
                        first if object => {
                            let key = self.key(first, first_at)?;
                            open.push(Open::Object(table, key));
                            slots += 2;
                            (token, at) = self.next();
                            continue;
                        }
                        first => {
                            open.push(Open::Array(table, 1));
                            slots += 1;
                            (token, at) = (first, first_at);
                            continue;
                        }
                    }
                }
                other => return Err(Self::expected("value", &other, at)),
            };
            // Into its container; a container that ends goes into the one around it.
            loop {
                let Some(container) = open.last_mut() else {
                    return Ok(value);
                };
                let (after, after_at) = self.next();
                match container {
                    Open::Array(table, index) => {
                        table.raw_set(*index, value)?;
                        *index += 1;
                        match after {
                            Token::ArrayEnd => {}
                            Token::Comma => {
                                (token, at) = self.next();
                                break;
                            }
                            other => {
                                return Err(Self::expected("comma or array end", &other, after_at));
                            }
                        }
                    }
                    Open::Object(table, key) => {
                        table.raw_set(lua.create_string(&*key)?, value)?;
                        match after {
                            Token::ObjectEnd => {}
                            Token::Comma => {
                                let (next, next_at) = self.next();
                                *key = self.key(next, next_at)?;
                                (token, at) = self.next();
                                break;
                            }
                            other => {
                                return Err(Self::expected(
                                    "comma or object end",
                                    &other,
                                    after_at,
                                ));
                            }
                        }
                    }
                }
                let ended = open.pop().expect("a container is open");
                value = match ended {
                    Open::Array(table, _) => {
                        slots -= 1;
                        Value::Table(table)
                    }
                    Open::Object(table, _) => {
                        slots -= 2;
                        Value::Table(table)
                    }
                };
            }
        }
    }

    /// An object's key (`token`, at `at`), then its colon.
    fn key(&mut self, token: Token, at: usize) -> mlua::Result<Vec<u8>> {
        let Token::String(key) = token else {
            return Err(Self::expected("object key string", &token, at));
        };
        let (colon, colon_at) = self.next();
        if !matches!(colon, Token::Colon) {
            return Err(Self::expected("colon", &colon, colon_at));
        }
        Ok(key)
    }
}

/// C's `strtod` at the start of `text`: the number and the bytes it used, or `None`
/// when no number starts there (decimal and hexadecimal forms, `inf`, `infinity`,
/// `nan` and `nan(…)`, each with a sign).
fn strtod(text: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let negative = match at(0) {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let sign = |v: f64| if negative { -v } else { v };
    let word = |w: &[u8]| text.len() >= i + w.len() && text[i..i + w.len()].eq_ignore_ascii_case(w);
    if word(b"infinity") {
        return Some((sign(f64::INFINITY), i + 8));
    }
    if word(b"inf") {
        return Some((sign(f64::INFINITY), i + 3));
    }
    if word(b"nan") {
        let mut end = i + 3;
        if at(end) == b'(' {
            let close = (end + 1..text.len())
                .find(|&j| !(text[j].is_ascii_alphanumeric() || text[j] == b'_'));
            if let Some(close) = close.filter(|&j| text[j] == b')') {
                end = close + 1;
            }
        }
        return Some((sign(f64::NAN), end));
    }
    if at(i) == b'0' && at(i + 1) | 0x20 == b'x' {
        if let Some((value, used)) = hex_float(&text[i + 2..]) {
            return Some((sign(value), i + 2 + used));
        }
        // Just "0": the x is not part of the number.
        return Some((sign(0.0), i + 1));
    }
    let start = i;
    let digits = |mut j: usize| {
        while at(j).is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut end = digits(i);
    let mut mantissa = end > start;
    if at(end) == b'.' {
        let after = digits(end + 1);
        mantissa |= after > end + 1;
        end = after;
    }
    if !mantissa {
        return None;
    }
    if at(end) | 0x20 == b'e' {
        let mut j = end + 1;
        if matches!(at(j), b'+' | b'-') {
            j += 1;
        }
        let after = digits(j);
        if after > j {
            end = after;
        }
    }
    let mut literal = std::str::from_utf8(&text[start..end]).ok()?.to_owned();
    if literal.starts_with('.') {
        literal.insert(0, '0');
    }
    let value: f64 = literal
        .replace(".e", ".0e")
        .replace(".E", ".0E")
        .parse()
        .ok()?;
    Some((sign(value), end))
}

/// A hexadecimal floating-point number after `0x`: its value and the bytes used.
fn hex_float(text: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let (mut value, mut i, mut any, mut scale) = (0.0f64, 0, false, 0i32);
    while let Some(d) = (at(i) as char).to_digit(16) {
        value = value * 16.0 + f64::from(d);
        (i, any) = (i + 1, true);
    }
    if at(i) == b'.' {
        i += 1;
        while let Some(d) = (at(i) as char).to_digit(16) {
            value = value * 16.0 + f64::from(d);
            (i, any, scale) = (i + 1, true, scale - 4);
        }
    }
    if !any {
        return None;
    }
    if at(i) | 0x20 == b'p' {
        let mut j = i + 1;
        let negative = at(j) == b'-';
        if matches!(at(j), b'+' | b'-') {
            j += 1;
        }
        let start = j;
        let mut exponent = 0i32;
        while at(j).is_ascii_digit() {
            exponent = exponent
                .saturating_mul(10)
                .saturating_add(i32::from(at(j) - b'0'));
            j += 1;
        }
        if j > start {
            scale = scale.saturating_add(if negative { -exponent } else { exponent });
            i = j;
        }
    }
    Some((value * 2f64.powi(scale), i))
}

/// `cjson.decode` of `text`, then `cjson.encode` of what it gave, in a Lua state of
/// their own with lua-cjson's default settings: the JSON written, or the error raised.
/// (The fuzz target `cjson_decode` drives it: it must answer or fail, never panic.)
pub fn round_trip(text: &[u8]) -> Result<Vec<u8>, String> {
    let lua = Lua::new_with(mlua::StdLib::NONE, mlua::LuaOptions::default())
        .map_err(|error| error.to_string())?;
    let config = DEFAULTS;
    let value = decode(&lua, &config, text).map_err(|error| error.to_string())?;
    let mut out = Vec::new();
    encode(&lua, &config, &value, &mut out).map_err(|error| error.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_c_prints_them() {
        for (value, precision, text) in [
            (1.0 / 3.0, 14, "0.33333333333333"),
            (1e15, 14, "1e+15"),
            (123456.0, 3, "1.23e+05"),
            (123456.0, 14, "123456"),
            (0.0001, 14, "0.0001"),
            (0.00001, 14, "1e-05"),
            (-0.0, 14, "-0"),
            (1e300, 14, "1e+300"),
            (2f64.powi(53), 14, "9.007199254741e+15"),
            (0.5, 1, "0.5"),
            (99.5, 2, "1e+02"),
        ] {
            assert_eq!(format_g(value, precision), text, "{value} at {precision}");
        }
    }

    #[test]
    fn what_decode_reads_encode_writes_back() {
        assert_eq!(
            round_trip(br#" {"a" : [1, 2.5, "x\/y", true, null]} "#).unwrap(),
            br#"{"a":[1,2.5,"x\/y",true,null]}"#
        );
        assert_eq!(
            round_trip(b"[1,").unwrap_err(),
            "runtime error: Expected value but found T_END at character 4"
        );
        let deep = "[".repeat(1001);
        assert!(
            round_trip(deep.as_bytes())
                .unwrap_err()
                .contains("(1001) at character 1001")
        );
    }

    #[test]
    fn strtod_reads_what_c_reads() {
        for (text, value, used) in [
            ("01", 1.0, 2),
            ("1.5e3,", 1500.0, 5),
            ("-2.", -2.0, 3),
            (".5", 0.5, 2),
            ("1e", 1.0, 1),
            ("0x10", 16.0, 4),
            ("0x1p4", 16.0, 5),
            ("0x", 0.0, 1),
            ("+7", 7.0, 2),
            ("-Infinity", f64::NEG_INFINITY, 9),
            ("inf]", f64::INFINITY, 3),
        ] {
            assert_eq!(strtod(text.as_bytes()), Some((value, used)), "{text}");
        }
        let (nan, used) = strtod(b"nan(123)x").unwrap();
        assert!(nan.is_nan() && used == 8);
        assert_eq!(strtod(b"-"), None);
        assert_eq!(strtod(b"."), None);
        assert_eq!(strtod(b"e5"), None);
    }
}
