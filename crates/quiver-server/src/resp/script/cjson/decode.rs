//! `cjson.decode` as lua-cjson decodes: its tokenizer and error texts, `strtod` numbers,
//! and containers filled with a stack of their own (no recursion).

use mlua::{Lua, Table, Value};

use super::number::strtod;
use super::{Config, LUA_STACK_SLOTS, MAX_NESTING, raised};

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

pub(super) fn decode(lua: &Lua, config: &Config, text: &[u8]) -> mlua::Result<Value> {
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
