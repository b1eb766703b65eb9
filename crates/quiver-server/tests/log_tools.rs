//! `quiver log verify|inspect|dump` against real log directories.

use std::path::Path;
use std::process::{Command, Output};

use quiver_log::{Log, LogConfig};

fn quiver(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .output()
        .expect("run quiver")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_log(dir: &Path, count: usize) {
    let log = Log::open(dir, LogConfig::default()).expect("open log");
    for i in 0..count {
        log.append(format!("record-{i}").as_bytes())
            .expect("append");
    }
    log.close().expect("close");
}

#[test]
fn verify_inspect_and_dump_a_clean_log() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_log(dir.path(), 25);
    let path = dir.path().to_str().expect("utf-8 path");

    let output = quiver(&["log", "verify", path]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report = text(&output.stdout);
    assert!(
        report.starts_with("ok:") && report.contains("25 records"),
        "{report}"
    );

    let output = quiver(&["log", "inspect", path]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(!output.stdout.is_empty());

    let output = quiver(&["log", "dump", path, "--from", "20", "--count", "3"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let lines: Vec<String> = text(&output.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("20 ") && lines[0].ends_with("record-20"),
        "{lines:?}"
    );
    assert!(lines[2].ends_with("record-22"), "{lines:?}");

    // The same as JSON, for scripts.
    let json = |args: &[&str]| -> Vec<serde_json::Value> {
        let output = quiver(args);
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect()
    };
    let verified = json(&["log", "verify", path, "--json"]);
    assert_eq!(verified[0]["records"], 25, "{verified:?}");
    let inspected = json(&["log", "inspect", path, "--json"]);
    assert_eq!(inspected[0]["next_offset"], 25, "{inspected:?}");
    let dumped = json(&[
        "log", "dump", path, "--from", "20", "--count", "2", "--json",
    ]);
    assert_eq!(dumped.len(), 2);
    assert_eq!(
        (&dumped[1]["offset"], &dumped[1]["payload"]),
        (&serde_json::json!(21), &serde_json::json!("record-21"))
    );
}

#[test]
fn verify_names_the_file_and_byte_of_the_first_fault_and_exits_1() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../quiver-log/tests/fixtures/corrupt_interior"
    );
    let output = quiver(&["log", "verify", fixture]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let message = text(&output.stderr);
    assert!(
        message.contains("verify failed") && message.contains("at byte"),
        "{message}"
    );
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("nope");
    for tool in ["dump", "verify"] {
        let output = quiver(&["log", tool, missing.to_str().expect("utf-8")]);
        assert_eq!(output.status.code(), Some(2), "{tool}");
        assert!(
            text(&output.stderr).starts_with("error: "),
            "{}",
            text(&output.stderr)
        );
    }
    // A directory without a segment is no log: not "ok".
    let output = quiver(&["log", "verify", dir.path().to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("no log segment"));
}
