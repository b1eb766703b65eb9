//! FUNCTION's libraries: the `#!lua name=...` header, loading a library (running its
//! code once so it registers its functions), the registry FCALL looks names up in, and
//! FUNCTION DUMP/RESTORE's payload in Redis's serialized format.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use mlua::{Lua, MultiValue, RegistryKey, Value};

use super::vm::{Vm, error_text};
use quiver_core::cache::rdb;

/// A script's or function's flags (`#!lua flags=...`, `register_function{flags=...}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::resp) struct Flags(u8);

impl Flags {
    pub(in crate::resp) const NO_WRITES: Flags = Flags(1);
    pub(in crate::resp) const ALLOW_OOM: Flags = Flags(1 << 1);
    const ALLOW_STALE: Flags = Flags(1 << 2);
    const NO_CLUSTER: Flags = Flags(1 << 3);
    const ALLOW_CROSS_SLOT: Flags = Flags(1 << 4);

    /// Every flag with its name, in Redis's order.
    const NAMES: [(Flags, &'static str); 5] = [
        (Flags::NO_WRITES, "no-writes"),
        (Flags::ALLOW_OOM, "allow-oom"),
        (Flags::ALLOW_STALE, "allow-stale"),
        (Flags::NO_CLUSTER, "no-cluster"),
        (Flags::ALLOW_CROSS_SLOT, "allow-cross-slot-keys"),
    ];

    pub(in crate::resp) fn has(self, flag: Flags) -> bool {
        self.0 & flag.0 != 0
    }

    fn parse(name: &[u8]) -> Option<Flags> {
        Flags::NAMES
            .iter()
            .find(|(_, n)| n.as_bytes() == name)
            .map(|(flag, _)| *flag)
    }

    /// The names of the flags set.
    pub(in crate::resp) fn names(self) -> impl Iterator<Item = &'static str> {
        Flags::NAMES
            .into_iter()
            .filter(move |(flag, _)| self.has(*flag))
            .map(|(_, name)| name)
    }
}

/// One library as FUNCTION LIST shows it.
#[derive(Clone, Debug)]
pub(in crate::resp) struct Library {
    pub name: String,
    pub code: Bytes,
    /// Name, description and flags of each function, by name.
    pub functions: Vec<(String, Option<Bytes>, Flags)>,
}

/// What FUNCTION RESTORE does with the libraries already there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePolicy {
    /// Deletes them first.
    Flush,
    /// Keeps them; a name in both is an error.
    Append,
    /// Replaces those with the same name.
    Replace,
}

#[derive(Clone)]
struct Registered {
    name: String,
    /// In the Lua registry: a function held in Rust would pin a slot of the VM's
    /// reference stack for its lifetime, and there are 8,000.
    callback: Arc<RegistryKey>,
    flags: Flags,
    description: Option<Bytes>,
}

#[derive(Clone)]
struct Loaded {
    code: Bytes,
    functions: Vec<Registered>,
}

/// The loaded libraries and their functions.
#[derive(Clone, Default)]
pub(super) struct Registry {
    libraries: BTreeMap<String, Loaded>,
    /// Function name, in lower case (names are case-insensitive, as in Redis) → library
    /// name.
    index: BTreeMap<String, String>,
}

const NAME_RULE: &str =
    "can only contain letters, numbers, or underscores(_) and must be at least one character long";

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// A first line's engine and options, and the code with that line commented out.
type Shebang = (Vec<u8>, Vec<Vec<u8>>, Vec<u8>);

/// Splits a `#!<engine> <options>` first line from `code`: the engine, the options, and
/// the code with that line turned into a comment (so line numbers stay). `None` when
/// there is no such line.
fn shebang(code: &[u8]) -> Option<Shebang> {
    let rest = code.strip_prefix(b"#!")?;
    let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
    // The engine is the first word, `#!` included (`#! lua` names none).
    let (engine, options) = match rest[..end].iter().position(|b| *b == b' ') {
        Some(at) => (&rest[..at], &rest[at..end]),
        None => (&rest[..end], &[][..]),
    };
    let engine = engine.to_vec();
    let options = options
        .split(|b| *b == b' ')
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let mut body = code.to_vec();
    body[..2].copy_from_slice(b"--");
    Some((engine, options, body))
}

/// A script's declared flags: `(flags, declared, code to compile)`.
pub(super) fn script_shebang(body: &[u8]) -> Result<(Flags, bool, Vec<u8>), String> {
    let Some((engine, options, code)) = shebang(body) else {
        return Ok((Flags::default(), false, body.to_vec()));
    };
    if memchr::memchr(b'\n', body).is_none() {
        return Err("ERR Invalid script shebang".into());
    }
    // Exactly `#!lua`, as Redis compares it.
    if engine != b"lua" {
        return Err(format!(
            "ERR Unexpected engine in script shebang: #!{}",
            String::from_utf8_lossy(&engine)
        ));
    }
    let mut flags = Flags::default();
    for option in options {
        let Some(list) = option.strip_prefix(b"flags=") else {
            return Err(format!(
                "ERR Unknown lua shebang option: {}",
                String::from_utf8_lossy(&option)
            ));
        };
        for name in list.split(|b| *b == b',').filter(|n| !n.is_empty()) {
            let Some(flag) = Flags::parse(name) else {
                return Err(format!(
                    "ERR Unexpected flag in script shebang: {}",
                    String::from_utf8_lossy(name)
                ));
            };
            flags.0 |= flag.0;
        }
    }
    Ok((flags, true, code))
}

/// A library's name from its header.
fn library_name(code: &[u8]) -> Result<(String, Vec<u8>), String> {
    let Some((engine, options, body)) = shebang(code) else {
        return Err("ERR Missing library metadata".into());
    };
    if memchr::memchr(b'\n', code).is_none() {
        return Err("ERR Invalid library metadata".into());
    }
    let mut name = None;
    for option in options {
        let value = option
            .get(..5)
            .filter(|prefix| prefix.eq_ignore_ascii_case(b"name="))
            .map(|_| &option[5..]);
        match value {
            Some(_) if name.is_some() => {
                return Err(
                    "ERR Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            Some(value) => name = Some(value.to_vec()),
            None => {
                return Err(format!(
                    "ERR Invalid metadata value given: {}",
                    String::from_utf8_lossy(&option)
                ));
            }
        }
    }
    let Some(name) = name else {
        return Err("ERR Library name was not given".into());
    };
    // After the options, as Redis checks them.
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!(
            "ERR Engine '{}' not found",
            String::from_utf8_lossy(&engine)
        ));
    }
    if !valid_name(&name) {
        return Err(format!("ERR Library names {NAME_RULE}"));
    }
    Ok((String::from_utf8_lossy(&name).into_owned(), body))
}

/// One `redis.register_function` call's arguments.
fn registration(lua: &Lua, args: MultiValue) -> mlua::Result<Registered> {
    let fail = |message: &str| Err(mlua::Error::runtime(message.to_owned()));
    let (name, callback, flags, description) = match args.len() {
        2 => (args[0].clone(), args[1].clone(), Value::Nil, Value::Nil),
        1 => {
            let Value::Table(table) = &args[0] else {
                return fail(
                    "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).",
                );
            };
            let mut fields = (Value::Nil, Value::Nil, Value::Nil, Value::Nil);
            for pair in table.pairs::<Value, Value>() {
                let (key, value) = pair?;
                let key = match &key {
                    Value::String(s) => s.as_bytes().to_vec(),
                    _ => Vec::new(),
                };
                match key.as_slice() {
                    b"function_name" => fields.0 = value,
                    b"callback" => fields.1 = value,
                    b"flags" => fields.2 = value,
                    b"description" => fields.3 = value,
                    _ => return fail("unknown argument given to redis.register_function"),
                }
            }
            fields
        }
        _ => return fail("wrong number of arguments to redis.register_function"),
    };
    let positional = args.len() == 2;
    let name = match name {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(n) => n.to_string(),
        Value::Number(n) => n.to_string(),
        _ if positional => {
            return fail("first argument to redis.register_function must be a string");
        }
        _ => return fail("redis.register_function must get a function name argument"),
    };
    let Value::Function(callback) = callback else {
        return fail(if positional {
            "second argument to redis.register_function must be a function"
        } else {
            "redis.register_function must get a callback argument"
        });
    };
    // Redis words a bad function name with its library-name message.
    if !valid_name(name.as_bytes()) {
        return fail(&format!("Library names {NAME_RULE}"));
    }
    let mut parsed = Flags::default();
    match flags {
        Value::Nil => {}
        Value::Table(list) => {
            for flag in list.sequence_values::<Value>() {
                let flag = match flag? {
                    Value::String(s) => Flags::parse(&s.as_bytes()),
                    _ => None,
                };
                match flag {
                    Some(flag) => parsed.0 |= flag.0,
                    None => return fail("unknown flag given"),
                }
            }
        }
        _ => {
            return fail(
                "flags argument to redis.register_function must be a table representing function flags",
            );
        }
    }
    let description = match description {
        Value::Nil => None,
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(n) => Some(Bytes::from(n.to_string())),
        Value::Number(n) => Some(Bytes::from(n.to_string())),
        _ => return fail("description argument given to redis.register_function must be a string"),
    };
    Ok(Registered {
        name,
        callback: Arc::new(lua.create_registry_value(callback)?),
        flags: parsed,
        description,
    })
}

impl Registry {
    pub(super) fn find(&self, name: &[u8]) -> Option<(&RegistryKey, &str, Flags)> {
        let name = std::str::from_utf8(name).ok()?;
        let library = self.index.get(&name.to_ascii_lowercase())?;
        let function = self.libraries[library]
            .functions
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))?;
        Some((&function.callback, &function.name, function.flags))
    }

    pub(super) fn counts(&self) -> (usize, usize) {
        (self.libraries.len(), self.index.len())
    }

    /// The functions that declare `no-writes`, by name in lower case.
    pub(super) fn read_only(&self) -> std::collections::HashSet<String> {
        let functions = self.libraries.values().flat_map(|l| &l.functions);
        functions
            .filter(|f| f.flags.has(Flags::NO_WRITES))
            .map(|f| f.name.to_ascii_lowercase())
            .collect()
    }

    /// Runs a library's code so it registers its functions, without adding it yet;
    /// `exists` refuses a name before the code runs (FUNCTION LOAD without REPLACE).
    fn compile(
        vm: &Vm,
        code: &Bytes,
        exists: impl Fn(&str) -> bool,
    ) -> Result<(String, Loaded), String> {
        let (name, body) = library_name(code)?;
        if exists(&name) {
            return Err(format!("ERR Library '{name}' already exists"));
        }
        let chunk = vm
            .compile(&body, true)
            .map_err(|message| format!("ERR Error compiling function: {message}"))?;
        let registered = RefCell::new(Vec::<Registered>::new());
        // A panic while the code runs (a limit of the Lua bindings) fails this load only.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            vm.lua.scope(|scope| {
                let register = scope.create_function(|lua, args: MultiValue| {
                    let function = registration(lua, args)?;
                    let mut registered = registered.borrow_mut();
                    if registered.iter().any(|f| f.name == function.name) {
                        return Err(mlua::Error::runtime(
                            "Function already exists in the library",
                        ));
                    }
                    registered.push(function);
                    Ok(())
                })?;
                vm.bridge.raw_set("register", register)?;
                vm.bridge.raw_set("loading", true)?;
                chunk.call::<()>(())
            })
        }))
        .unwrap_or_else(|panic| Err(mlua::Error::runtime(super::panic_text(panic.as_ref()))));
        let _ = vm.bridge.raw_set("register", Value::Nil);
        let _ = vm.bridge.raw_set("loading", Value::Nil);
        if let Err(error) = result {
            return Err(format!(
                "ERR Error registering functions: ERR {}",
                error_text(&error)
            ));
        }
        let functions = registered.into_inner();
        if functions.is_empty() {
            return Err("ERR No functions registered".into());
        }
        Ok((
            name,
            Loaded {
                code: code.clone(),
                functions,
            },
        ))
    }

    /// FUNCTION LOAD.
    pub(super) fn load(&mut self, vm: &Vm, code: &Bytes, replace: bool) -> Result<String, String> {
        let exists = |name: &str| !replace && self.libraries.contains_key(name);
        let (name, loaded) = Registry::compile(vm, code, exists)?;
        self.add(name.clone(), loaded)?;
        Ok(name)
    }

    /// Adds a library, replacing one of the same name; fails when one of its functions
    /// belongs to another library.
    fn add(&mut self, name: String, loaded: Loaded) -> Result<(), String> {
        for function in &loaded.functions {
            if let Some(owner) = self.index.get(&function.name.to_ascii_lowercase())
                && *owner != name
            {
                return Err(format!("ERR Function {} already exists", function.name));
            }
        }
        self.remove(&name);
        for function in &loaded.functions {
            self.index
                .insert(function.name.to_ascii_lowercase(), name.clone());
        }
        self.libraries.insert(name, loaded);
        Ok(())
    }

    fn remove(&mut self, name: &str) -> bool {
        let Some(old) = self.libraries.remove(name) else {
            return false;
        };
        for function in old.functions {
            self.index.remove(&function.name.to_ascii_lowercase());
        }
        true
    }

    /// FUNCTION DELETE.
    pub(super) fn delete(&mut self, name: &[u8]) -> Result<(), &'static str> {
        match std::str::from_utf8(name) {
            Ok(name) if self.remove(name) => Ok(()),
            _ => Err("ERR Library not found"),
        }
    }

    pub(super) fn libraries(&self) -> Vec<Library> {
        self.libraries
            .iter()
            .map(|(name, loaded)| Library {
                name: name.clone(),
                code: loaded.code.clone(),
                functions: loaded
                    .functions
                    .iter()
                    .map(|f| (f.name.clone(), f.description.clone(), f.flags))
                    .collect(),
            })
            .collect()
    }

    /// The code of every library loaded.
    pub(super) fn codes(&self) -> impl Iterator<Item = &[u8]> {
        self.libraries.values().map(|loaded| &loaded.code[..])
    }

    /// FUNCTION DUMP: each library's code as an RDB function record, then the RDB
    /// version and the CRC64 of what precedes, as Redis writes a serialized value.
    pub(super) fn dump(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for loaded in self.libraries.values() {
            out.push(RDB_OPCODE_FUNCTION2);
            rdb::write_string(&mut out, &loaded.code);
        }
        seal_payload(&mut out);
        out
    }

    /// FUNCTION RESTORE.
    pub(super) fn restore(
        &mut self,
        vm: &Vm,
        payload: &[u8],
        policy: RestorePolicy,
    ) -> Result<(), String> {
        let codes = parse_dump(payload)?;
        let mut incoming = Vec::with_capacity(codes.len());
        for code in codes {
            incoming.push(Registry::compile(vm, &Bytes::from(code), |_| false)?);
        }
        // Built aside, so a conflict leaves the libraries as they were.
        let mut next = match policy {
            RestorePolicy::Flush => Registry::default(),
            RestorePolicy::Append | RestorePolicy::Replace => self.clone(),
        };
        for (name, loaded) in incoming {
            if policy == RestorePolicy::Append && next.libraries.contains_key(&name) {
                return Err(format!("ERR Library {name} already exists"));
            }
            next.add(name, loaded)?;
        }
        *self = next;
        Ok(())
    }
}

/// RDB's record type for a function library (Redis 7.0: `RDB_OPCODE_FUNCTION2`).
pub(super) const RDB_OPCODE_FUNCTION2: u8 = 245;

/// Closes a serialized payload: the RDB version and the CRC64 of what precedes.
pub(super) fn seal_payload(out: &mut Vec<u8>) {
    out.extend_from_slice(&rdb::RDB_VERSION.to_le_bytes());
    let crc = rdb::crc64(0, out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// The library codes in a FUNCTION DUMP payload, its version and checksum checked.
fn parse_dump(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    const WRONG: &str = "ERR DUMP payload version or checksum are wrong";
    if payload.len() < 10 {
        return Err(WRONG.into());
    }
    if !rdb::dump_payload_check(payload) {
        return Err(WRONG.into());
    }
    let body = &payload[..payload.len() - 10];
    let mut codes = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        if body[pos] != RDB_OPCODE_FUNCTION2 {
            return Err("ERR given type is not a function".into());
        }
        pos += 1;
        let code = rdb::read_string_at(body, &mut pos)
            .map_err(|reason| format!("ERR payload is not a valid function dump ({reason})"))?;
        codes.push(code);
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_payload_is_checked() {
        assert!(parse_dump(b"short").is_err());
        let mut payload = vec![RDB_OPCODE_FUNCTION2, 3, b'a', b'b', b'c'];
        payload.extend_from_slice(&rdb::RDB_VERSION.to_le_bytes());
        let crc = rdb::crc64(0, &payload);
        payload.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(parse_dump(&payload).unwrap(), vec![b"abc".to_vec()]);
        let last = payload.len() - 1;
        payload[last] ^= 1;
        assert!(parse_dump(&payload).is_err());
    }

    #[test]
    fn shebang_flags() {
        let (flags, declared, code) = script_shebang(b"#!lua flags=no-writes\nreturn 1").unwrap();
        assert!(declared && flags.has(Flags::NO_WRITES));
        assert_eq!(code, b"--lua flags=no-writes\nreturn 1");
        assert!(script_shebang(b"#!lua flags=bogus\n").is_err());
        assert!(!script_shebang(b"return 1").unwrap().1);
    }
}
