//! Every vector in `tests/vectors/*.vec` (format: `docs/wire-protocol.md` section 10):
//! `ok` vectors decode and re-encode byte for byte; error vectors fail with their code.

use std::fs;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use quiver_wire::{CheckError, ErrorCode, FrameType, check, decode};

enum Expect {
    Ok,
    Incomplete,
    Error(ErrorCode),
}

struct Vector {
    name: String,
    expect: Expect,
    bytes: Vec<u8>,
}

fn parse(path: &Path) -> Vector {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_owned();
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let expect_line = lines
        .next()
        .unwrap_or_else(|| panic!("{name}: no expect line"));
    let expect = match expect_line.strip_prefix("expect:").map(str::trim) {
        Some("ok") => Expect::Ok,
        Some("incomplete") => Expect::Incomplete,
        Some(other) => {
            let code_name = other
                .strip_prefix("error ")
                .unwrap_or_else(|| panic!("{name}: bad expect {other}"));
            Expect::Error(
                ErrorCode::from_name(code_name)
                    .unwrap_or_else(|| panic!("{name}: unknown code {code_name}")),
            )
        }
        None => panic!("{name}: first line must be `expect: ...`, got {expect_line}"),
    };
    let mut bytes = Vec::new();
    for line in lines {
        let hex = line.split('#').next().unwrap_or_default();
        for pair in hex.split_whitespace() {
            bytes.push(
                u8::from_str_radix(pair, 16)
                    .unwrap_or_else(|e| panic!("{name}: bad hex {pair}: {e}")),
            );
        }
    }
    Vector {
        name,
        expect,
        bytes,
    }
}

fn vectors() -> Vec<Vector> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("the vectors folder exists")
        .map(|entry| entry.expect("readable folder entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "vec"))
        .collect();
    paths.sort();
    paths.iter().map(|path| parse(path)).collect()
}

fn outcome(bytes: &[u8]) -> Result<Option<quiver_wire::Frame>, ErrorCode> {
    match check(bytes) {
        Err(CheckError::Incomplete) => Ok(None),
        Err(error) => Err(error.code().expect("only Incomplete has no code")),
        Ok(info) => {
            assert_eq!(
                info.frame_len,
                bytes.len(),
                "a vector holds exactly one frame"
            );
            decode(&info, &Bytes::copy_from_slice(bytes))
                .map(Some)
                .map_err(|e| e.code())
        }
    }
}

#[test]
fn vectors_decode_and_reencode_byte_for_byte() {
    let all = vectors();
    assert!(
        all.len() >= 50,
        "expected the full vector set, found {}",
        all.len()
    );
    let mut covered = std::collections::HashSet::new();
    for vector in &all {
        let name = &vector.name;
        match (&vector.expect, outcome(&vector.bytes)) {
            (Expect::Ok, Ok(Some(frame))) => {
                covered.insert(frame.frame_type());
                let request_id =
                    u32::from_le_bytes(vector.bytes[8..12].try_into().expect("4 bytes"));
                let mut out = BytesMut::new();
                frame
                    .encode(request_id, &mut out)
                    .unwrap_or_else(|e| panic!("{name}: re-encode: {e}"));
                assert_eq!(
                    out.as_ref(),
                    &vector.bytes[..],
                    "{name}: re-encoding differs"
                );
            }
            (Expect::Incomplete, Ok(None)) => {}
            (Expect::Error(expected), Err(code)) => assert_eq!(code, *expected, "{name}"),
            (_, got) => panic!("{name}: unexpected outcome {got:?}"),
        }
    }
    for frame_type in FrameType::ALL {
        assert!(
            covered.contains(frame_type),
            "no ok vector for {frame_type:?}"
        );
    }
}

#[test]
fn error_vectors_never_panic_on_any_prefix() {
    for vector in vectors() {
        for len in 0..vector.bytes.len() {
            let _ = outcome(&vector.bytes[..len]);
        }
    }
}
