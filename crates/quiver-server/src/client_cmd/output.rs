//! Printing for people and for scripts: readable lines by default, JSON with `--json`,
//! every line flushed at once (so `quiver sub | grep` sees messages as they come).

use std::io::{self, Write};

use bytes::Bytes;
use serde_json::{Map, Value, json};

/// Where a command prints.
pub struct Out {
    json: bool,
    stdout: io::Stdout,
}

impl Out {
    pub fn new(json: bool) -> Self {
        Self {
            json,
            stdout: io::stdout(),
        }
    }

    /// Whether output is JSON.
    pub fn json(&self) -> bool {
        self.json
    }

    /// Prints one line (a closed pipe ends the process quietly, as `head` expects).
    pub fn line(&mut self, text: &str) {
        let mut lock = self.stdout.lock();
        if writeln!(lock, "{text}")
            .and_then(|()| lock.flush())
            .is_err()
        {
            std::process::exit(0);
        }
    }

    /// Prints one JSON value on one line.
    pub fn value(&mut self, value: &Value) {
        self.line(&value.to_string());
    }
}

/// Adds the payload to a JSON object: `payload` when it is UTF-8, `payload_base64`
/// otherwise.
pub fn put_payload(object: &mut Map<String, Value>, payload: &Bytes) {
    match std::str::from_utf8(payload) {
        Ok(text) => object.insert("payload".to_owned(), json!(text)),
        Err(_) => object.insert("payload_base64".to_owned(), json!(base64(payload))),
    };
}

/// Headers as a JSON object (values as text when UTF-8, else base64 under `key_base64`).
pub fn headers_json(headers: &[(String, Bytes)]) -> Value {
    let mut object = Map::new();
    for (key, value) in headers {
        match std::str::from_utf8(value) {
            Ok(text) => object.insert(key.clone(), json!(text)),
            Err(_) => object.insert(format!("{key}_base64"), json!(base64(value))),
        };
    }
    Value::Object(object)
}

/// A payload for a person: the text when it is printable UTF-8, escaped bytes otherwise.
pub fn readable(payload: &[u8]) -> String {
    match std::str::from_utf8(payload) {
        Ok(text) if !text.chars().any(|c| c.is_control() && c != '\t') => text.to_owned(),
        _ => payload.escape_ascii().to_string(),
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Bytes for a person: `1.5 MiB`.
pub fn bytes_human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Rows as a table with aligned columns.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.len());
        }
    }
    let render = |cells: Vec<&str>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("{cell:<width$}", width = widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = vec![render(header.to_vec())];
    out.extend(
        rows.iter()
            .map(|row| render(row.iter().map(String::as_str).collect())),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0x00, 0xfe, 0x01]), "/wD+AQ==");
        assert_eq!(readable(b"a\x00b"), "a\\x00b");
        assert_eq!(bytes_human(1536), "1.5 KiB");
        let lines = table(&["A", "BB"], &[vec!["xxx".into(), "y".into()]]);
        assert_eq!(lines, ["A    BB", "xxx  y"]);
    }
}
