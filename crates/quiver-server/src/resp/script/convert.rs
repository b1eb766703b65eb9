//! Redis's conversions between replies and Lua values: a command's reply becomes what
//! `redis.call` returns, and what a script returns becomes the client's reply, in
//! RESP2 or RESP3 as the Redis documentation lists them.

use bytes::{BufMut, BytesMut};
use mlua::{Lua, Table, Value};
use quiver_resp::Protocol;
use quiver_resp::encode as write;
use quiver_resp::num::{parse_f64, parse_i64};

/// Deepest nesting of tables a script may return (Redis stops at its Lua stack's end).
const MAX_DEPTH: usize = 1000;

/// The Lua value of one reply the server wrote (`reply` holds exactly one).
pub(super) fn reply_to_lua(lua: &Lua, reply: &[u8]) -> mlua::Result<Value> {
    let mut pos = 0;
    parse(lua, reply, &mut pos)
}

fn header<'a>(buf: &'a [u8], pos: &mut usize) -> &'a [u8] {
    let start = *pos;
    let end = memchr::memchr(b'\r', &buf[start..]).map_or(buf.len(), |at| start + at);
    *pos = (end + 2).min(buf.len());
    &buf[start..end]
}

fn count(head: &[u8]) -> usize {
    parse_i64(head)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
}

fn field(lua: &Lua, name: &str, value: impl mlua::IntoLua) -> mlua::Result<Value> {
    let table = lua.create_table_with_capacity(0, 1)?;
    table.raw_set(name, value)?;
    Ok(Value::Table(table))
}

fn parse(lua: &Lua, buf: &[u8], pos: &mut usize) -> mlua::Result<Value> {
    let Some(&kind) = buf.get(*pos) else {
        return Ok(Value::Nil);
    };
    *pos += 1;
    let head = header(buf, pos);
    Ok(match kind {
        b'+' => field(lua, "ok", lua.create_string(head)?)?,
        b'-' => field(lua, "err", lua.create_string(head)?)?,
        b':' => Value::Integer(parse_i64(head).unwrap_or(0)),
        b'$' | b'=' if head == b"-1" => Value::Boolean(false),
        b'$' | b'=' => {
            let len = count(head);
            let end = (*pos + len).min(buf.len());
            let data = &buf[*pos..end];
            *pos = (end + 2).min(buf.len());
            if kind == b'$' {
                Value::String(lua.create_string(data)?)
            } else {
                let (format, text) = data.split_at(data.len().min(4));
                let inner = lua.create_table()?;
                inner.raw_set("format", lua.create_string(&format[..format.len().min(3)])?)?;
                inner.raw_set("string", lua.create_string(text)?)?;
                field(lua, "verbatim_string", inner)?
            }
        }
        b'*' | b'>' if head == b"-1" => Value::Boolean(false),
        b'*' | b'>' => {
            let n = count(head);
            let table = lua.create_table_with_capacity(n, 0)?;
            for i in 1..=n {
                table.raw_set(i, parse(lua, buf, pos)?)?;
            }
            Value::Table(table)
        }
        b'%' => {
            let n = count(head);
            let map = lua.create_table_with_capacity(0, n)?;
            for _ in 0..n {
                let key = parse(lua, buf, pos)?;
                let value = parse(lua, buf, pos)?;
                map.raw_set(key, value)?;
            }
            field(lua, "map", map)?
        }
        b'~' => {
            let n = count(head);
            let set = lua.create_table_with_capacity(0, n)?;
            for _ in 0..n {
                set.raw_set(parse(lua, buf, pos)?, true)?;
            }
            field(lua, "set", set)?
        }
        b'_' => Value::Nil,
        b'#' => Value::Boolean(head == b"t"),
        b',' => field(lua, "double", parse_f64(head).unwrap_or(f64::NAN))?,
        b'(' => field(lua, "big_number", lua.create_string(head)?)?,
        other => {
            return Err(mlua::Error::runtime(format!(
                "unexpected reply type byte {:?}",
                char::from(other)
            )));
        }
    })
}

/// The mark of an error table whose error INFO errorstats has counted (a command's
/// error that `redis.pcall` returned): Redis's name for it, which scripts see.
pub(super) const COUNTED: &str = "ignore_error_stats_update";

/// Whether `value` is an error table marked [`COUNTED`].
pub(super) fn counted(value: &Value) -> bool {
    matches!(value, Value::Table(table)
        if matches!(table.raw_get::<Value>(COUNTED), Ok(Value::Boolean(true))))
}

/// Where a reply is being written, and where its errors that still count begin.
struct Writer<'o> {
    out: &'o mut BytesMut,
    errors: &'o mut Vec<usize>,
    protocol: Protocol,
    script: Protocol,
}

impl Writer<'_> {
    /// An error that INFO errorstats counts.
    fn error(&mut self, text: &[u8]) {
        self.errors.push(self.out.len());
        write_error_text(self.out, text);
    }
}

/// Writes what a script returned as the client's reply, in the client's `protocol`;
/// `errors` gets the offset of each error reply in it that INFO errorstats has yet to
/// count. Booleans follow the script's own protocol (`redis.setresp`), as in Redis:
/// `true` is `1` and `false` null unless the script chose RESP3.
pub(super) fn write_value(
    value: &Value,
    protocol: Protocol,
    script: Protocol,
    out: &mut BytesMut,
    errors: &mut Vec<usize>,
) {
    let mut writer = Writer {
        out,
        errors,
        protocol,
        script,
    };
    if let Err(error) = write_nested(&mut writer, value, 0) {
        writer.error(format!("ERR {error}").as_bytes());
    }
}

fn write_nested(writer: &mut Writer<'_>, value: &Value, depth: usize) -> mlua::Result<()> {
    let (protocol, out) = (writer.protocol, &mut *writer.out);
    match value {
        Value::String(s) => write::write_bulk(out, &s.as_bytes()),
        Value::Integer(n) => write::write_integer(out, *n),
        Value::Number(n) => write::write_integer(out, truncate(*n)),
        Value::Boolean(b) if writer.script == Protocol::Resp3 => {
            write::write_bool(out, protocol, *b)
        }
        Value::Boolean(true) => write::write_integer(out, 1),
        Value::Table(_) if depth >= MAX_DEPTH => writer.error(b"ERR reached lua stack limit"),
        Value::Table(table) => write_table(writer, table, depth)?,
        _ => write::write_null(out, protocol),
    }
    Ok(())
}

fn write_table(writer: &mut Writer<'_>, table: &Table, depth: usize) -> mlua::Result<()> {
    let (protocol, out) = (writer.protocol, &mut *writer.out);
    if let Value::String(err) = table.raw_get::<Value>("err")? {
        if let Value::Boolean(true) = table.raw_get::<Value>(COUNTED)? {
            write_error_text(out, &err.as_bytes());
        } else {
            writer.error(&err.as_bytes());
        }
        return Ok(());
    }
    if let Value::String(ok) = table.raw_get::<Value>("ok")? {
        let text: Vec<u8> = ok
            .as_bytes()
            .iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
            .collect();
        write::write_simple(out, &text);
        return Ok(());
    }
    if let Value::Number(_) | Value::Integer(_) = table.raw_get::<Value>("double")? {
        write::write_double(out, protocol, table.raw_get::<f64>("double")?);
        return Ok(());
    }
    if let Value::String(digits) = table.raw_get::<Value>("big_number")? {
        write::write_big_number(out, protocol, &digits.as_bytes());
        return Ok(());
    }
    // Maps, sets and arrays are read twice (to count, then to write) rather than held:
    // each held value pins a slot of the VM's reference stack, of which there are 8,000.
    if let Value::Table(map) = table.raw_get::<Value>("map")? {
        write::write_map_len(out, protocol, map.pairs::<Value, Value>().count());
        for pair in map.pairs::<Value, Value>() {
            let (key, value) = pair?;
            write_nested(writer, &key, depth + 1)?;
            write_nested(writer, &value, depth + 1)?;
        }
        return Ok(());
    }
    if let Value::Table(set) = table.raw_get::<Value>("set")? {
        write::write_set_len(out, protocol, set.pairs::<Value, Value>().count());
        for pair in set.pairs::<Value, Value>() {
            write_nested(writer, &pair?.0, depth + 1)?;
        }
        return Ok(());
    }
    if let Value::Table(verbatim) = table.raw_get::<Value>("verbatim_string")? {
        let format = verbatim.raw_get::<mlua::String>("format")?;
        let text = verbatim.raw_get::<mlua::String>("string")?;
        let mut tag = [b' '; 3];
        for (slot, byte) in tag.iter_mut().zip(format.as_bytes().iter()) {
            *slot = *byte;
        }
        write::write_verbatim(out, protocol, &tag, &text.as_bytes());
        return Ok(());
    }
    // An array: up to the first nil, as Redis reads it.
    let mut len = 0;
    while !table.raw_get::<Value>(len + 1)?.is_nil() {
        len += 1;
    }
    write::write_array_len(writer.out, len);
    for i in 1..=len {
        write_nested(writer, &table.raw_get::<Value>(i)?, depth + 1)?;
    }
    Ok(())
}

/// A Lua number as Redis makes it an integer reply: C's cast, which on x86-64 turns
/// what does not fit (and NaN) into `i64::MIN`.
fn truncate(n: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// An error reply with `text` as it stands (a script's `{err=...}`), on one line.
pub(super) fn write_error_text(out: &mut BytesMut, text: &[u8]) {
    out.put_u8(b'-');
    out.extend(
        text.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.put_slice(b"\r\n");
}
