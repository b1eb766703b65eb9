//! The libraries Redis gives scripts beyond Lua's own: `bit` (LuaBitOp's operations on
//! 32-bit integers) and `cjson` (JSON to and from Lua values).

use mlua::{Lua, Table, Value, Variadic};

/// Deepest nesting `cjson` encodes or decodes (its default limit).
const MAX_JSON_DEPTH: usize = 1000;

/// Installs `bit` and `cjson` in `globals`.
pub(super) fn install(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    globals.raw_set("bit", bit(lua)?)?;
    globals.raw_set("cjson", cjson(lua)?)?;
    Ok(())
}

/// A Lua number as LuaBitOp reads it: rounded, then taken modulo 2^32 as a signed value.
fn tobit(value: f64) -> i32 {
    if !value.is_finite() {
        return 0;
    }
    let wrapped = value.round_ties_even().rem_euclid(4_294_967_296.0);
    wrapped as u32 as i32
}

fn bit(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("tobit", lua.create_function(|_, x: f64| Ok(tobit(x)))?)?;
    t.raw_set("bnot", lua.create_function(|_, x: f64| Ok(!tobit(x)))?)?;
    let fold = |lua: &Lua, op: fn(i32, i32) -> i32| {
        lua.create_function(move |_, (first, rest): (f64, Variadic<f64>)| {
            Ok(rest.iter().fold(tobit(first), |acc, &x| op(acc, tobit(x))))
        })
    };
    t.raw_set("band", fold(lua, |a, b| a & b)?)?;
    t.raw_set("bor", fold(lua, |a, b| a | b)?)?;
    t.raw_set("bxor", fold(lua, |a, b| a ^ b)?)?;
    let shift = |lua: &Lua, op: fn(i32, u32) -> i32| {
        lua.create_function(move |_, (x, n): (f64, f64)| Ok(op(tobit(x), tobit(n) as u32 & 31)))
    };
    t.raw_set("lshift", shift(lua, |x, n| ((x as u32) << n) as i32)?)?;
    t.raw_set("rshift", shift(lua, |x, n| ((x as u32) >> n) as i32)?)?;
    t.raw_set("arshift", shift(lua, |x, n| x >> n)?)?;
    t.raw_set("rol", shift(lua, |x, n| (x as u32).rotate_left(n) as i32)?)?;
    t.raw_set("ror", shift(lua, |x, n| (x as u32).rotate_right(n) as i32)?)?;
    t.raw_set(
        "bswap",
        lua.create_function(|_, x: f64| Ok((tobit(x) as u32).swap_bytes() as i32))?,
    )?;
    t.raw_set(
        "tohex",
        lua.create_function(|_, (x, n): (f64, Option<f64>)| {
            let mut n = n.map_or(8, tobit);
            let upper = n < 0;
            if upper {
                n = n.saturating_neg();
            }
            let digits = n.clamp(1, 8) as usize;
            let value = tobit(x) as u32 as u64 & ((1u64 << (4 * digits)) - 1);
            Ok(if upper {
                format!("{value:0digits$X}")
            } else {
                format!("{value:0digits$x}")
            })
        })?,
    )?;
    Ok(t)
}

fn cjson(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("null", Value::NULL)?;
    t.raw_set(
        "encode",
        lua.create_function(|lua, value: Value| {
            let mut out = Vec::new();
            encode(lua, &value, &mut out, 0)?;
            lua.create_string(out)
        })?,
    )?;
    t.raw_set(
        "decode",
        lua.create_function(|lua, text: mlua::String| {
            let json: serde_json::Value = serde_json::from_slice(&text.as_bytes())
                .map_err(|error| mlua::Error::runtime(format!("cjson.decode: {error}")))?;
            decode(lua, &json, 0)
        })?,
    )?;
    Ok(t)
}

fn encode(lua: &Lua, value: &Value, out: &mut Vec<u8>, depth: usize) -> mlua::Result<()> {
    match value {
        Value::Nil => out.extend_from_slice(b"null"),
        v if v.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Number(n) if !n.is_finite() => {
            return Err(mlua::Error::runtime(
                "Cannot serialise number: must not be NaN or Inf",
            ));
        }
        Value::Number(_) => {
            let text = lua
                .coerce_string(value.clone())?
                .unwrap_or(lua.create_string("0")?);
            out.extend_from_slice(&text.as_bytes());
        }
        Value::String(s) => encode_string(&s.as_bytes(), out),
        Value::Table(table) => {
            if depth >= MAX_JSON_DEPTH {
                return Err(mlua::Error::runtime(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                )));
            }
            encode_table(lua, table, out, depth)?
        }
        other => {
            return Err(mlua::Error::runtime(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            )));
        }
    }
    Ok(())
}

fn encode_table(lua: &Lua, table: &Table, out: &mut Vec<u8>, depth: usize) -> mlua::Result<()> {
    let pairs: Vec<(Value, Value)> = table.pairs::<Value, Value>().collect::<mlua::Result<_>>()?;
    // An array when every key is a positive integer and the largest is not too far past
    // the count (cjson's "excessively sparse" rule: more than twice the count, above 10).
    let mut max = 0usize;
    let array = !pairs.is_empty()
        && pairs.iter().all(|(key, _)| match key {
            Value::Integer(n) if *n >= 1 => {
                max = max.max(*n as usize);
                true
            }
            Value::Number(n) if *n >= 1.0 && n.fract() == 0.0 => {
                max = max.max(*n as usize);
                true
            }
            _ => false,
        })
        && !(max > 10 && max > pairs.len() * 2);
    if array {
        out.push(b'[');
        for i in 1..=max {
            if i > 1 {
                out.push(b',');
            }
            encode(lua, &table.raw_get::<Value>(i)?, out, depth + 1)?;
        }
        out.push(b']');
        return Ok(());
    }
    out.push(b'{');
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match key {
            Value::String(s) => encode_string(&s.as_bytes(), out),
            Value::Integer(_) | Value::Number(_) => {
                let text = lua
                    .coerce_string(key.clone())?
                    .unwrap_or(lua.create_string("")?);
                encode_string(&text.as_bytes(), out);
            }
            _ => {
                return Err(mlua::Error::runtime(
                    "Cannot serialise table: table key must be a number or string",
                ));
            }
        }
        out.push(b':');
        encode(lua, value, out, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
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

fn decode(lua: &Lua, json: &serde_json::Value, depth: usize) -> mlua::Result<Value> {
    if depth >= MAX_JSON_DEPTH {
        return Err(mlua::Error::runtime(format!(
            "Found too many nested data structures ({}) ",
            depth + 1
        )));
    }
    Ok(match json {
        serde_json::Value::Null => Value::NULL,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::String(lua.create_string(s)?),
        serde_json::Value::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                table.raw_set(i + 1, decode(lua, item, depth + 1)?)?;
            }
            Value::Table(table)
        }
        serde_json::Value::Object(fields) => {
            let table = lua.create_table_with_capacity(0, fields.len())?;
            for (key, item) in fields {
                table.raw_set(lua.create_string(key)?, decode(lua, item, depth + 1)?)?;
            }
            Value::Table(table)
        }
    })
}
