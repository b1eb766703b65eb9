//! `cjson`, as Redis embeds lua-cjson: `encode` and `decode` with lua-cjson's rules and
//! error texts (its tokenizer, its `strtod` numbers, `Expected value but found T_END at
//! character 1`), and its settings functions (`encode_sparse_array`, `encode_max_depth`,
//! `decode_max_depth`, `encode_number_precision`, `encode_keep_buffer`,
//! `encode_invalid_numbers`, `decode_invalid_numbers`), which last until SCRIPT FLUSH;
//! `cjson.new()` makes another with settings of its own.

use std::sync::{Arc, Mutex, PoisonError};

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value};

use super::libs::{bad_argument, check_number, check_string, type_of};

mod decode;
mod number;

use decode::decode;
use number::format_g;

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
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    // Another `cjson` with settings of its own.
    t.raw_set(
        "new",
        lua.create_function(|lua, ()| library(lua).map(|(table, _)| table))?,
    )?;
    let s = settings.clone();
    t.raw_set(
        "encode",
        lua.create_function(move |lua, args: MultiValue| {
            let value = only_argument(lua, args)?;
            let mut out = Vec::new();
            encode(lua, &s.get(), &value, &mut out)?;
            lua.create_string(out)
        })?,
    )?;
    let s = settings.clone();
    t.raw_set(
        "decode",
        lua.create_function(move |lua, args: MultiValue| {
            let text = check_string(lua, &[only_argument(lua, args)?], 1)?;
            decode(lua, &s.get(), &text.as_bytes())
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

/// The one argument `encode` and `decode` take, or lua-cjson's error.
fn only_argument(lua: &Lua, args: MultiValue) -> mlua::Result<Value> {
    let [value] = <[Value; 1]>::try_from(args.into_iter().collect::<Vec<_>>())
        .map_err(|_| bad_argument(lua, 1, "expected 1 argument"))?;
    Ok(value)
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
}
