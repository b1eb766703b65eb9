//! The libraries Redis gives scripts beyond Lua's own: `bit` (LuaBitOp's operations on
//! 32-bit integers), `cjson` (in `cjson.rs`) and `cmsgpack` (MessagePack
//! to and from Lua values, as lua-cmsgpack writes it) and `struct` (binary records).

use mlua::{Lua, MultiValue, Table, Value};

/// Installs `bit`, `cjson`, `cmsgpack` and `struct` in `globals`; `cjson`'s settings
/// come back.
pub(super) fn install(lua: &Lua, globals: &Table) -> mlua::Result<super::cjson::Settings> {
    globals.raw_set("bit", bit(lua)?)?;
    let (cjson, settings) = super::cjson::library(lua)?;
    globals.raw_set("cjson", cjson)?;
    globals.raw_set("cmsgpack", cmsgpack(lua)?)?;
    globals.raw_set("struct", structs(lua)?)?;
    Ok(settings)
}

/// A Lua number as LuaBitOp reads it: rounded, then taken modulo 2^32 as a signed value.
fn tobit(value: f64) -> i32 {
    if !value.is_finite() {
        return 0;
    }
    let wrapped = value.round_ties_even().rem_euclid(4_294_967_296.0);
    wrapped as u32 as i32
}

/// Lua's `luaL_argerror`: `bad argument #N to 'name' (why)`, the function named as its
/// caller called it (`?` through `pcall`).
pub(super) fn bad_argument(lua: &Lua, position: usize, why: &str) -> mlua::Error {
    let name = lua
        .inspect_stack(0, |debug| debug.names().name.map(|name| name.into_owned()))
        .flatten();
    let name = name.as_deref().unwrap_or("?");
    mlua::Error::runtime(format!("bad argument #{position} to '{name}' ({why})"))
}

/// Lua's type name of an argument (`no value` when it is missing).
pub(super) fn type_of(value: Option<&Value>) -> &'static str {
    match value {
        None => "no value",
        Some(Value::Nil) => "nil",
        Some(Value::Boolean(_)) => "boolean",
        Some(Value::Integer(_) | Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Table(_)) => "table",
        Some(Value::Function(_)) => "function",
        Some(Value::Thread(_)) => "thread",
        Some(_) => "userdata",
    }
}

/// Lua's `luaL_checknumber`: argument `position` (from 1) as a number, a string that
/// reads as one included.
pub(super) fn check_number(lua: &Lua, args: &[Value], position: usize) -> mlua::Result<f64> {
    let value = args.get(position - 1);
    let number = match value {
        Some(Value::Integer(n)) => Some(*n as f64),
        Some(Value::Number(n)) => Some(*n),
        Some(string @ Value::String(_)) => lua.coerce_number(string.clone())?,
        _ => None,
    };
    number.ok_or_else(|| {
        let why = format!("number expected, got {}", type_of(value));
        bad_argument(lua, position, &why)
    })
}

/// Lua's `luaL_checklstring`: argument `position` (from 1) as a string, a number made
/// one included.
pub(super) fn check_string(
    lua: &Lua,
    args: &[Value],
    position: usize,
) -> mlua::Result<mlua::String> {
    let value = args.get(position - 1);
    let text = match value {
        Some(Value::String(text)) => Some(text.clone()),
        Some(number @ (Value::Integer(_) | Value::Number(_))) => {
            lua.coerce_string(number.clone())?
        }
        _ => None,
    };
    text.ok_or_else(|| {
        let why = format!("string expected, got {}", type_of(value));
        bad_argument(lua, position, &why)
    })
}

/// Lua's `luaL_optinteger`: argument `position` as an integer, `default` when absent.
fn opt_integer(lua: &Lua, args: &[Value], position: usize, default: i64) -> mlua::Result<i64> {
    match args.get(position - 1) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => Ok(check_number(lua, args, position)? as i64),
    }
}

/// Argument `position` as LuaBitOp reads it.
fn bit_arg(lua: &Lua, args: &[Value], position: usize) -> mlua::Result<i32> {
    check_number(lua, args, position).map(tobit)
}

fn bit(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    // Every function reads its arguments as LuaBitOp does (`bit_arg`).
    let function = |f: fn(&Lua, &[Value]) -> mlua::Result<i32>| {
        lua.create_function(move |lua, args: MultiValue| {
            f(lua, &args.into_iter().collect::<Vec<_>>())
        })
    };
    t.raw_set("tobit", function(|lua, a| bit_arg(lua, a, 1))?)?;
    t.raw_set("bnot", function(|lua, a| Ok(!bit_arg(lua, a, 1)?))?)?;
    t.raw_set(
        "bswap",
        function(|lua, a| Ok((bit_arg(lua, a, 1)? as u32).swap_bytes() as i32))?,
    )?;
    let fold = |op: fn(i32, i32) -> i32| {
        lua.create_function(move |lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            // LuaBitOp reads the first, then the others from the last one back.
            let mut acc = bit_arg(lua, &args, 1)?;
            for position in (2..=args.len()).rev() {
                acc = op(acc, bit_arg(lua, &args, position)?);
            }
            Ok(acc)
        })
    };
    t.raw_set("band", fold(|a, b| a & b)?)?;
    t.raw_set("bor", fold(|a, b| a | b)?)?;
    t.raw_set("bxor", fold(|a, b| a ^ b)?)?;
    let shift = |op: fn(i32, u32) -> i32| {
        lua.create_function(move |lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let x = bit_arg(lua, &args, 1)?;
            let n = bit_arg(lua, &args, 2)?;
            Ok(op(x, n as u32 & 31))
        })
    };
    t.raw_set("lshift", shift(|x, n| ((x as u32) << n) as i32)?)?;
    t.raw_set("rshift", shift(|x, n| ((x as u32) >> n) as i32)?)?;
    t.raw_set("arshift", shift(|x, n| x >> n)?)?;
    t.raw_set("rol", shift(|x, n| (x as u32).rotate_left(n) as i32)?)?;
    t.raw_set("ror", shift(|x, n| (x as u32).rotate_right(n) as i32)?)?;
    t.raw_set(
        "tohex",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let x = bit_arg(lua, &args, 1)?;
            let mut n = if args.len() < 2 {
                8
            } else {
                bit_arg(lua, &args, 2)?
            };
            let upper = n < 0;
            if upper {
                n = n.saturating_neg();
            }
            // LuaBitOp's own rule: at most 8 digits, and 0 of them is the empty string.
            let digits = n.clamp(0, 8) as usize;
            if digits == 0 {
                return Ok(String::new());
            }
            let value = x as u32 as u64 & ((1u64 << (4 * digits)) - 1);
            Ok(if upper {
                format!("{value:0digits$X}")
            } else {
                format!("{value:0digits$x}")
            })
        })?,
    )?;
    Ok(t)
}

/// Most values `cmsgpack.unpack` and `struct.unpack` return: each held pins one of the
/// VM's 8,000 references until it is returned, and a value being decoded holds up to two
/// per level of its nesting (at most 1,000 levels).
const MAX_RESULTS: usize = 5_500;

/// Deepest nesting `cmsgpack.unpack` decodes (a guard on the native stack).
const MAX_MSGPACK_DECODE_DEPTH: usize = 1000;

/// Deepest nesting `cmsgpack.pack` descends into (deeper tables are packed as nil).
const MAX_MSGPACK_NESTING: usize = 16;

fn cmsgpack(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, values: MultiValue| {
            if values.is_empty() {
                return Err(mlua::Error::runtime(
                    "bad argument #0 to 'pack' (MessagePack pack needs input.)",
                ));
            }
            let mut out = Vec::new();
            for value in values.iter() {
                msgpack_encode(value, &mut out, 0)?;
            }
            lua.create_string(out)
        })?,
    )?;
    // The arguments are checked in lua-cmsgpack's order: the limit and offset, then the
    // data.
    let unpack = |f: fn(&Lua, &[Value]) -> mlua::Result<MultiValue>| {
        lua.create_function(move |lua, args: MultiValue| {
            f(lua, &args.into_iter().collect::<Vec<_>>())
        })
    };
    t.raw_set(
        "unpack",
        unpack(|lua, args| msgpack_unpack(lua, &check_string(lua, args, 1)?.as_bytes(), 0, 0))?,
    )?;
    t.raw_set(
        "unpack_one",
        unpack(|lua, args| {
            let offset = opt_integer(lua, args, 2, 0)?;
            msgpack_unpack(lua, &check_string(lua, args, 1)?.as_bytes(), 1, offset)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        unpack(|lua, args| {
            let limit = check_number(lua, args, 2)? as i64;
            let offset = opt_integer(lua, args, 3, 0)?;
            msgpack_unpack(lua, &check_string(lua, args, 1)?.as_bytes(), limit, offset)
        })?,
    )?;
    Ok(t)
}

/// lua-cmsgpack's unpacking: up to `limit` values from byte `offset`, preceded by the
/// offset to go on from (-1 at the end); with neither a limit nor an offset, every value
/// and no offset (`unpack`).
fn msgpack_unpack(lua: &Lua, data: &[u8], limit: i64, offset: i64) -> mlua::Result<MultiValue> {
    if offset < 0 || limit < 0 {
        // lua-cmsgpack's text names the input's length as the limit.
        return Err(mlua::Error::runtime(format!(
            "Invalid request to unpack with offset of {offset} and limit of {}.",
            data.len()
        )));
    }
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    if start > data.len() {
        return Err(mlua::Error::runtime(format!(
            "Start offset {offset} greater than input length {}.",
            data.len()
        )));
    }
    let all = limit == 0 && offset == 0;
    let most = if all {
        usize::MAX
    } else {
        usize::try_from(limit).unwrap_or(usize::MAX)
    };
    let mut pos = start;
    let mut values = Vec::new();
    while pos < data.len() && values.len() < most {
        if values.len() >= MAX_RESULTS {
            return Err(mlua::Error::runtime(
                "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)",
            ));
        }
        values.push(msgpack_decode(lua, data, &mut pos, 0)?);
    }
    if !all {
        let next = if pos == data.len() { -1 } else { pos as i64 };
        values.insert(0, Value::Integer(next));
    }
    Ok(MultiValue::from_vec(values))
}

fn msgpack_encode(value: &Value, out: &mut Vec<u8>, depth: usize) -> mlua::Result<()> {
    match value {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => msgpack_integer(*n, out),
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.2e18 => msgpack_integer(*n as i64, out),
        Value::Number(n) => {
            let single = *n as f32;
            if f64::from(single) == *n {
                out.push(0xca);
                put_be(out, u64::from(single.to_bits()), 4);
            } else {
                out.push(0xcb);
                put_be(out, n.to_bits(), 8);
            }
        }
        Value::String(s) => {
            let bytes = s.as_bytes();
            let len = bytes.len();
            if len < 32 {
                out.push(0xa0 | len as u8);
            } else if len <= 0xff {
                out.extend_from_slice(&[0xd9, len as u8]);
            } else if len <= 0xffff {
                out.push(0xda);
                put_be(out, len as u64, 2);
            } else {
                out.push(0xdb);
                put_be(out, len as u64, 4);
            }
            out.extend_from_slice(&bytes);
        }
        Value::Table(table) if depth < MAX_MSGPACK_NESTING => {
            // An array when its keys are exactly 1..n (an empty table is one). The pairs
            // are read twice rather than held: each held value pins a slot of the VM's
            // reference stack, of which there are 8,000.
            let (mut len, mut all_indexes, mut largest) = (0usize, true, 0.0f64);
            table.for_each::<Value, Value>(|key, _| {
                len += 1;
                match key {
                    Value::Integer(i) if i >= 1 => largest = largest.max(i as f64),
                    Value::Number(f) if f.fract() == 0.0 && f >= 1.0 => largest = largest.max(f),
                    _ => all_indexes = false,
                }
                Ok(())
            })?;
            // Distinct indexes, none above n: exactly 1..n.
            let array = all_indexes && largest <= len as f64;
            let header = |out: &mut Vec<u8>, fix: u8, short: u8, long: u8| {
                if len < 16 {
                    out.push(fix | len as u8);
                } else if len <= 0xffff {
                    out.push(short);
                    put_be(out, len as u64, 2);
                } else {
                    out.push(long);
                    put_be(out, len as u64, 4);
                }
            };
            if array {
                header(out, 0x90, 0xdc, 0xdd);
                for i in 1..=len {
                    msgpack_encode(&table.raw_get::<Value>(i)?, out, depth + 1)?;
                }
            } else {
                header(out, 0x80, 0xde, 0xdf);
                table.for_each::<Value, Value>(|key, value| {
                    msgpack_encode(&key, out, depth + 1)?;
                    msgpack_encode(&value, out, depth + 1)
                })?;
            }
        }
        _ => out.push(0xc0),
    }
    Ok(())
}

/// The low `bytes` bytes of `value`, most significant first (MessagePack's order).
fn put_be(out: &mut Vec<u8>, value: u64, bytes: usize) {
    out.extend((0..bytes).rev().map(|i| (value >> (8 * i)) as u8));
}

fn msgpack_integer(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        let n = n as u64;
        if n < 128 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            put_be(out, n, 2);
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            put_be(out, n, 4);
        } else {
            out.push(0xcf);
            put_be(out, n, 8);
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        put_be(out, n as u64, 2);
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        put_be(out, n as u64, 4);
    } else {
        out.push(0xd3);
        put_be(out, n as u64, 8);
    }
}

fn msgpack_decode(lua: &Lua, data: &[u8], pos: &mut usize, depth: usize) -> mlua::Result<Value> {
    let missing = || mlua::Error::runtime("Missing bytes in input.");
    if depth > MAX_MSGPACK_DECODE_DEPTH {
        return Err(mlua::Error::runtime("Bad data format in input."));
    }
    let mut take = |n: usize| -> mlua::Result<&[u8]> {
        let end = pos.checked_add(n).ok_or_else(missing)?;
        let bytes = data.get(*pos..end).ok_or_else(missing)?;
        *pos = end;
        Ok(bytes)
    };
    let be = |bytes: &[u8]| bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    let first = take(1)?[0];
    let (kind, len) = match first {
        0x00..=0x7f => return Ok(Value::Integer(i64::from(first))),
        0xe0..=0xff => return Ok(Value::Integer(i64::from(first as i8))),
        0xc0 => return Ok(Value::Nil),
        0xc2 => return Ok(Value::Boolean(false)),
        0xc3 => return Ok(Value::Boolean(true)),
        0xcc..=0xcf => {
            let n = be(take(1 << (first - 0xcc))?);
            return Ok(match i64::try_from(n) {
                Ok(n) => Value::Integer(n),
                Err(_) => Value::Number(n as f64),
            });
        }
        0xd0..=0xd3 => {
            let bytes = 1usize << (first - 0xd0);
            let raw = be(take(bytes)?);
            let shift = 64 - 8 * bytes as u32;
            return Ok(Value::Integer(((raw << shift) as i64) >> shift));
        }
        0xca => {
            let bits = be(take(4)?) as u32;
            return Ok(Value::Number(f64::from(f32::from_bits(bits))));
        }
        0xcb => return Ok(Value::Number(f64::from_bits(be(take(8)?)))),
        0xa0..=0xbf => (b's', usize::from(first & 0x1f)),
        0xd9 | 0xc4 => (b's', be(take(1)?) as usize),
        0xda | 0xc5 => (b's', be(take(2)?) as usize),
        0xdb | 0xc6 => (b's', be(take(4)?) as usize),
        0x90..=0x9f => (b'a', usize::from(first & 0x0f)),
        0xdc => (b'a', be(take(2)?) as usize),
        0xdd => (b'a', be(take(4)?) as usize),
        0x80..=0x8f => (b'm', usize::from(first & 0x0f)),
        0xde => (b'm', be(take(2)?) as usize),
        0xdf => (b'm', be(take(4)?) as usize),
        _ => return Err(mlua::Error::runtime("Bad data format in input.")),
    };
    match kind {
        b's' => Ok(Value::String(lua.create_string(take(len)?)?)),
        b'a' => {
            // Each element takes at least a byte: a count beyond what is left is truncated input.
            if len > data.len() - *pos {
                return Err(missing());
            }
            let table = lua.create_table_with_capacity(len, 0)?;
            for i in 1..=len {
                table.raw_set(i, msgpack_decode(lua, data, pos, depth + 1)?)?;
            }
            Ok(Value::Table(table))
        }
        _ => {
            if len > (data.len() - *pos) / 2 {
                return Err(missing());
            }
            let table = lua.create_table_with_capacity(0, len)?;
            for _ in 0..len {
                let key = msgpack_decode(lua, data, pos, depth + 1)?;
                let value = msgpack_decode(lua, data, pos, depth + 1)?;
                if !key.is_nil() {
                    table.raw_set(key, value)?;
                }
            }
            Ok(Value::Table(table))
        }
    }
}

/// The `struct` library (pack, unpack and size of binary records, as Roberto
/// Ierusalimschy's struct.c that Redis embeds reads its formats).
fn structs(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            let mut args: Vec<Value> = args.into_iter().collect();
            let format = check_string(lua, &args, 1)?;
            // struct.c pushes a nil after the arguments: the first one missing reads as
            // nil, as it says.
            args.push(Value::Nil);
            let mut position = 1;
            let mut out = Vec::new();
            for item in Format::new(&format.as_bytes(), "pack") {
                let (op, size, align) = item?;
                out.resize(out.len() + padding(out.len(), align), 0);
                match op {
                    Op::Pad => out.push(0),
                    Op::Int { little, .. } => {
                        let n = {
                            position += 1;
                            check_number(lua, &args, position)?
                        };
                        let bits = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                        let bytes =
                            (0..size).map(|i| if i < 8 { (bits >> (8 * i)) as u8 } else { 0 });
                        put_ordered(&mut out, bytes.collect(), little);
                    }
                    Op::Float { little } => {
                        let n = {
                            position += 1;
                            check_number(lua, &args, position)?
                        };
                        let bytes = if size == 4 {
                            (n as f32).to_bits().to_le_bytes().to_vec()
                        } else {
                            n.to_bits().to_le_bytes().to_vec()
                        };
                        put_ordered(&mut out, bytes, little);
                    }
                    Op::Chars => {
                        let text = {
                            position += 1;
                            check_string(lua, &args, position)?.as_bytes().to_vec()
                        };
                        let take = if size == 0 { text.len() } else { size };
                        if text.len() < take {
                            return Err(mlua::Error::runtime(
                                "bad argument to 'pack' (string too short)",
                            ));
                        }
                        out.extend_from_slice(&text[..take]);
                    }
                    Op::ZeroTerminated => {
                        let text = {
                            position += 1;
                            check_string(lua, &args, position)?.as_bytes().to_vec()
                        };
                        if text.contains(&0) {
                            return Err(mlua::Error::runtime(
                                "bad argument to 'pack' (string contains zeros)",
                            ));
                        }
                        out.extend_from_slice(&text);
                        out.push(0);
                    }
                }
            }
            lua.create_string(out)
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let format = check_string(lua, &args, 1)?;
            let data = check_string(lua, &args, 2)?;
            let data = data.as_bytes();
            let start = opt_integer(lua, &args, 3, 1)?;
            if start < 1 {
                return Err(mlua::Error::runtime("bad argument #3 to 'unpack' (offset must be 1 or greater)"));
            }
            let mut pos = usize::try_from(start - 1).unwrap_or(usize::MAX);
            let mut values = Vec::new();
            let short = || mlua::Error::runtime("bad argument #2 to 'unpack' (data string too short)");
            let mut last_integer: Option<f64> = None;
            for item in Format::new(&format.as_bytes(), "unpack") {
                let (op, size, align) = item?;
                let previous = last_integer.take();
                pos += padding(pos, align);
                let field = |pos: usize, size: usize| {
                    pos.checked_add(size)
                        .and_then(|end| data.get(pos..end))
                        .ok_or_else(short)
                };
                if values.len() >= MAX_RESULTS {
                    return Err(mlua::Error::runtime("stack overflow (too many results)"));
                }
                match op {
                    Op::Pad => pos += 1,
                    Op::Int { little, signed } => {
                        let mut bytes = field(pos, size)?.to_vec();
                        if !little {
                            bytes.reverse();
                        }
                        // The 8 lowest bytes, as Redis's library keeps them in a 64-bit
                        // number; its sign bit is at `size * 8 - 1`, a shift that wraps
                        // at 64 as the C shift does on this machine for sizes past 8.
                        let mut raw = bytes.iter().take(8).rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
                        let value = if signed {
                            let mask = u64::MAX.wrapping_shl((size as u32 * 8).wrapping_sub(1));
                            if raw & mask != 0 {
                                raw |= mask;
                            }
                            raw as i64 as f64
                        } else {
                            raw as f64
                        };
                        last_integer = Some(value);
                        values.push(Value::Number(value));
                        pos += size;
                    }
                    Op::Float { little } => {
                        let mut bytes = field(pos, size)?.to_vec();
                        if !little {
                            bytes.reverse();
                        }
                        let raw = bytes.iter().rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
                        let value = if size == 4 { f64::from(f32::from_bits(raw as u32)) } else { f64::from_bits(raw) };
                        values.push(Value::Number(value));
                        pos += size;
                    }
                    Op::Chars => {
                        // `c0` takes its length from the number read just before, which
                        // is not returned.
                        let len = if size == 0 {
                            match previous {
                                Some(n) if n >= 0.0 => {
                                    values.pop();
                                    n as usize
                                }
                                _ => return Err(mlua::Error::runtime("bad argument to 'unpack' (format 'c0' needs a previous size)")),
                            }
                        } else {
                            size
                        };
                        values.push(Value::String(lua.create_string(field(pos, len)?)?));
                        pos += len;
                    }
                    Op::ZeroTerminated => {
                        let rest = data.get(pos..).ok_or_else(short)?;
                        let len = memchr::memchr(0, rest).ok_or_else(|| mlua::Error::runtime("bad argument #2 to 'unpack' (unfinished string in data)"))?;
                        values.push(Value::String(lua.create_string(&rest[..len])?));
                        pos += len + 1;
                    }
                }
            }
            values.push(Value::Integer(pos as i64 + 1));
            Ok(MultiValue::from_vec(values))
        })?,
    )?;
    t.raw_set(
        "size",
        lua.create_function(|lua, args: MultiValue| {
            let format = check_string(lua, &args.into_iter().collect::<Vec<_>>(), 1)?;
            let mut len = 0usize;
            for item in Format::new(&format.as_bytes(), "size") {
                let (op, size, align) = item?;
                len += padding(len, align);
                match op {
                    Op::ZeroTerminated => {
                        return Err(mlua::Error::runtime(
                            "bad argument #1 to 'size' (options 's' has no fixed size)",
                        ));
                    }
                    Op::Chars if size == 0 => {
                        return Err(mlua::Error::runtime(
                            "bad argument #1 to 'size' (options 'c0' has no fixed size)",
                        ));
                    }
                    Op::Pad => len += 1,
                    _ => len += size,
                }
            }
            Ok(len as i64)
        })?,
    )?;
    Ok(t)
}

/// One field of a `struct` format.
#[derive(Clone, Copy)]
enum Op {
    Pad,
    Int {
        little: bool,
        signed: bool,
    },
    Float {
        little: bool,
    },
    /// `cN`: N bytes (`c0`: the whole string, or the length read just before).
    Chars,
    /// `s`: a zero-terminated string.
    ZeroTerminated,
}

/// The fields of a format, each with its size and the alignment it needs.
struct Format<'a> {
    spec: &'a [u8],
    /// The library function reading it, for error messages.
    function: &'static str,
    pos: usize,
    little: bool,
    max_align: usize,
}

impl<'a> Format<'a> {
    fn new(spec: &'a [u8], function: &'static str) -> Format<'a> {
        Format {
            spec,
            function,
            pos: 0,
            little: true,
            max_align: 1,
        }
    }

    /// An error in the format, as `luaL_argerror` words it.
    fn error(&self, reason: String) -> Option<mlua::Result<(Op, usize, usize)>> {
        Some(Err(mlua::Error::runtime(format!(
            "bad argument #1 to '{}' ({reason})",
            self.function
        ))))
    }

    fn number(&mut self, default: usize) -> usize {
        let start = self.pos;
        while self.spec.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.spec[start..self.pos])
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    }
}

impl Iterator for Format<'_> {
    type Item = mlua::Result<(Op, usize, usize)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let c = *self.spec.get(self.pos)?;
            self.pos += 1;
            let little = self.little;
            let (op, size) = match c {
                b' ' => continue,
                b'>' => {
                    self.little = false;
                    continue;
                }
                b'<' | b'=' => {
                    self.little = true;
                    continue;
                }
                b'!' => {
                    let align = self.number(8);
                    if !align.is_power_of_two() {
                        return self.error(format!("alignment {align} is not a power of 2"));
                    }
                    self.max_align = align;
                    continue;
                }
                b'x' => (Op::Pad, 1),
                b'b' | b'B' => (
                    Op::Int {
                        little,
                        signed: c == b'b',
                    },
                    1,
                ),
                b'h' | b'H' => (
                    Op::Int {
                        little,
                        signed: c == b'h',
                    },
                    2,
                ),
                b'l' | b'L' | b'T' => (
                    Op::Int {
                        little,
                        signed: c == b'l',
                    },
                    8,
                ),
                b'i' | b'I' => {
                    let size = self.number(4);
                    if size > MAX_INT_SIZE {
                        // Raised as is, not as a bad argument, as Redis's library does.
                        return Some(Err(mlua::Error::runtime(format!(
                            "integral size {size} is larger than limit of {MAX_INT_SIZE}"
                        ))));
                    }
                    (
                        Op::Int {
                            little,
                            signed: c == b'i',
                        },
                        size,
                    )
                }
                b'f' => (Op::Float { little }, 4),
                b'd' => (Op::Float { little }, 8),
                b'c' => (Op::Chars, self.number(1)),
                b's' => (Op::ZeroTerminated, 0),
                other => {
                    return self.error(format!("invalid format option '{}'", char::from(other)));
                }
            };
            let align = match op {
                Op::Int { .. } | Op::Float { .. } => size.min(self.max_align).max(1),
                _ => 1,
            };
            return Some(Ok((op, size, align)));
        }
    }
}

/// The largest integer Redis's `struct` packs (`i32`): bytes past the eighth are zeros.
const MAX_INT_SIZE: usize = 32;

/// The zeros before an item of alignment `align` at offset `len`, computed as Redis's
/// library computes them, also for an alignment that is not a power of two (an `i3`
/// under `!4`): `(align - (len & (align - 1))) & (align - 1)`.
fn padding(len: usize, align: usize) -> usize {
    let mask = align.max(1) - 1;
    (mask + 1 - (len & mask)) & mask
}

/// Appends little-endian `bytes` in the requested order.
fn put_ordered(out: &mut Vec<u8>, mut bytes: Vec<u8>, little: bool) {
    if !little {
        bytes.reverse();
    }
    out.extend_from_slice(&bytes);
}
