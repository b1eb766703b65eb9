//! `used_memory` against real heap growth. The measurement runs in a child process (this
//! same test binary, running only `rss_child`) so other tests' allocations do not disturb
//! the process's resident set size, read from /proc/self/statm.

use std::process::Command;

use quiver_cache::{CacheConfig, Keyspace, SetOptions};

use crate::T0;

const CHILD_ENV: &str = "QUIVER_CACHE_RSS_KEYS";
/// Linux x86-64 page size; statm counts pages.
const PAGE_BYTES: usize = 4096;
/// Allowed relative gap between `used_memory` and RSS growth.
const TOLERANCE: f64 = 0.15;

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux has /proc/self/statm");
    let resident: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("statm's second field is resident pages");
    resident * PAGE_BYTES
}

#[test]
#[ignore = "runs in a child process started by the used_memory_tracks_rss tests"]
fn rss_child() {
    let Ok(n) = std::env::var(CHILD_ENV) else {
        return;
    };
    let n: usize = n.parse().expect("the parent passes a key count");

    let before = rss_bytes();
    let ks = Keyspace::new(CacheConfig::default()).unwrap();
    let mut db = ks.db(0).unwrap();
    let value = [b'v'; 64];
    let mut key = String::with_capacity(16);
    for i in 0..n {
        use std::fmt::Write;
        key.clear();
        write!(key, "key:{i:012}").unwrap();
        db.set(key.as_bytes(), &value, SetOptions::default(), T0)
            .unwrap();
    }
    let grown = rss_bytes() - before;
    println!("RSS_RESULT {} {}", ks.used_memory(), grown);
}

fn measure(n: usize) -> (f64, f64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "memory::rss_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, n.to_string())
        .output()
        .expect("the test binary can run itself");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.split("RSS_RESULT ").nth(1))
        .unwrap_or_else(|| panic!("child printed no result: {text}"));
    let mut parts = line.split_whitespace().map(|p| p.parse::<f64>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

fn check(n: usize) {
    let (used, grown) = measure(n);
    let gap = (used - grown).abs() / grown;
    println!(
        "{n} keys: used_memory {used} B, RSS growth {grown} B, gap {:.1}%, {:.0} B/key",
        gap * 100.0,
        grown / n as f64
    );
    assert!(
        gap <= TOLERANCE,
        "used_memory {used} vs RSS growth {grown}: {:.1}% apart",
        gap * 100.0
    );
}

#[test]
fn used_memory_tracks_rss_100k_keys() {
    check(100_000);
}

#[test]
#[ignore = "a million keys take a few seconds; run with --ignored"]
fn used_memory_tracks_rss_1m_keys() {
    check(1_000_000);
}
