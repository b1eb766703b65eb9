//! The real crash test: a child process (this test binary, re-invoked) appends in `sync`
//! mode and reports each acknowledged offset through a pipe; the parent SIGKILLs it at a
//! random moment, reopens the log and checks every acknowledged record.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use quiver_log::{Durability, Log, LogConfig};

const CHILD_ENV: &str = "QUIVER_LOG_CRASH_CHILD_DIR";
/// Rounds of kill and recover; bounded so the test stays within a few seconds.
const ROUNDS: usize = 6;

fn payload(offset: u64) -> Vec<u8> {
    format!(
        "crash-record-{offset}-{}",
        "p".repeat((offset % 200) as usize)
    )
    .into_bytes()
}

fn config() -> LogConfig {
    LogConfig {
        durability: Durability::Sync,
        segment_max_bytes: 64 << 10,
        ..LogConfig::default()
    }
}

/// In the child: append forever, printing each acknowledged offset.
#[test]
fn crash_child_appender() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let log = Log::open(Path::new(&dir), config()).expect("child opens the log");
    let mut out = std::io::stdout().lock();
    loop {
        let expected = log.next_offset();
        let data = payload(expected);
        let offset = log.append(&data).expect("append");
        assert_eq!(offset, expected);
        writeln!(out, "{offset}").expect("pipe");
        out.flush().expect("pipe");
    }
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn sigkill_never_loses_acknowledged_sync_records() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut acked: Option<u64> = None;
    let started = Instant::now();
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash::crash_child_appender",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let kill_after = Duration::from_millis(100 + xorshift(&mut seed) % 250);
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(o) = line.trim().parse::<u64>() {
                    let _ = tx.send(o);
                }
            }
        });
        std::thread::sleep(kill_after);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let round_acked: Vec<u64> = rx.try_iter().collect();
        if let Some(&last) = round_acked.last() {
            acked = Some(last);
        }
        let log = Log::open(dir.path(), config()).unwrap();
        let report = log.recovery_report().clone();
        if let Some(last) = acked {
            assert!(
                log.committed_offset() > last,
                "round {round}: acknowledged offset {last} lost ({report})"
            );
            for r in log.iter(0) {
                let r = r.unwrap();
                assert_eq!(
                    &r.value[..],
                    &payload(r.offset)[..],
                    "round {round}: record {} differs",
                    r.offset
                );
            }
        }
        drop(log);
        assert!(started.elapsed() < Duration::from_secs(30), "bounded");
    }
    assert!(acked.is_some(), "the child acknowledged records");
}
