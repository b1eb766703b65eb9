//! What INFO counts, through a real socket with the `redis` crate: commandstats for
//! commands run directly, inside EXEC and by scripts (calls, rejected and failed calls),
//! errorstats and its bound on error codes, latencystats at the configured percentiles,
//! `latency-tracking` turning the timing off, and the traffic figures of INFO stats. (The error counts of each kind of
//! reply are compared with redis-server's in the differential test.)

use std::collections::HashMap;
use std::io::Read;
use std::time::{Duration, Instant};

use crate::support::{Server, redis_connection};

fn start() -> (tempfile::TempDir, Server) {
    start_with(&[])
}

fn start_with(extra: &[&str]) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(dir.path(), extra);
    (dir, server)
}

fn info(con: &mut redis::Connection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query(con).expect("INFO")
}

/// `field:value` lines of an INFO section.
fn fields(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(field, value)| (field.to_owned(), value.to_owned()))
        .collect()
}

/// A `cmdstat_` line's `key=value` counters.
fn counters(line: &str) -> HashMap<String, String> {
    line.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// calls, rejected_calls and failed_calls of `command` (zeros when it is not listed).
fn calls(con: &mut redis::Connection, command: &str) -> (u64, u64, u64) {
    let stats = fields(&info(con, "commandstats"));
    let Some(line) = stats.get(&format!("cmdstat_{command}")) else {
        return (0, 0, 0);
    };
    let c = counters(line);
    let get = |name: &str| c[name].parse::<u64>().expect("a count");
    (get("calls"), get("rejected_calls"), get("failed_calls"))
}

fn run(con: &mut redis::Connection, words: &[&str]) {
    let _ = redis::cmd(words[0])
        .arg(&words[1..])
        .query::<redis::Value>(con);
}

#[test]
fn commandstats_count_commands_of_transactions_and_scripts() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    run(&mut con, &["SET", "s", "x"]);
    run(&mut con, &["LPUSH", "l", "a"]);
    run(&mut con, &["CONFIG", "RESETSTAT"]);

    run(&mut con, &["GET", "l"]); // failed: WRONGTYPE
    run(&mut con, &["GET"]); // rejected: arity
    run(&mut con, &["CONFIG", "GET"]); // the subcommand's arity
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("GET").arg("s").cmd("GET").arg("l");
    let _ = pipe.query::<redis::Value>(&mut con);
    run(&mut con, &["EVAL", "return redis.call('get', 'l')", "0"]);
    run(&mut con, &["EVAL", "return redis.pcall('get', 's')", "0"]);
    run(&mut con, &["EVAL", "return redis.call('get')", "0"]);
    run(&mut con, &["SCRIPT", "LOAD", "retur"]);
    run(&mut con, &["SET", "a", "b", "c", "d"]); // failed: wrong options
    run(&mut con, &["EVAL", "return 1", "-1"]); // failed: wrong options, not run

    // Directly, twice in EXEC and twice from scripts; one rejected directly and one
    // from a script.
    assert_eq!(calls(&mut con, "get"), (5, 2, 3));
    // Wrong options are the command's failure (it ran), not a refusal, as in Redis.
    assert_eq!(calls(&mut con, "set"), (1, 0, 1));
    assert_eq!(calls(&mut con, "config|get"), (0, 1, 0));
    assert_eq!(calls(&mut con, "exec"), (1, 0, 0));
    // A script call fails when its reply is an error.
    assert_eq!(calls(&mut con, "eval"), (4, 0, 3));
    assert_eq!(calls(&mut con, "script|load"), (1, 0, 1));

    let stats = fields(&info(&mut con, "stats"));
    assert_eq!(stats["total_error_replies"], "9", "{stats:?}");
    let errors = info(&mut con, "errorstats");
    assert!(
        errors.contains("errorstat_ERR:count=6\r\nerrorstat_WRONGTYPE:count=3\r\n"),
        "{errors}"
    );
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut con)
        .unwrap();
    assert_eq!(info(&mut con, "errorstats"), "# Errorstats\r\n");
}

#[test]
fn errorstats_keep_128_codes_then_count_the_rest_together() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    run(&mut con, &["CONFIG", "RESETSTAT"]);
    let mut pipe = redis::pipe();
    for i in 0..140 {
        pipe.cmd("EVAL")
            .arg(format!("return {{err='E{i} failed'}}"))
            .arg(0);
    }
    let _ = pipe.query::<redis::Value>(&mut con);
    let errors = fields(&info(&mut con, "errorstats"));
    assert_eq!(errors.len(), 129, "{errors:?}");
    assert_eq!(errors["errorstat_ERRORSTATS_OVERFLOW"], "count=12");
    // A code seen before the bound is still counted apart.
    run(&mut con, &["EVAL", "return {err='E7 again'}", "0"]);
    let errors = fields(&info(&mut con, "errorstats"));
    assert_eq!(errors["errorstat_E7"], "count=2");
    let stats = fields(&info(&mut con, "stats"));
    assert_eq!(stats["total_error_replies"], "141");
}

#[test]
fn latencystats_follow_the_configured_percentiles_and_tracking() {
    let (_dir, server) = start();
    let mut con = redis_connection(&server);
    for _ in 0..10 {
        run(&mut con, &["SET", "k", "v"]);
    }
    let everything = info(&mut con, "everything");
    assert!(everything.contains("# Latencystats\r\n"), "{everything}");
    let latency = fields(&info(&mut con, "latencystats"));
    let set = &latency["latency_percentiles_usec_set"];
    let values: Vec<f64> = set
        .split(',')
        .map(|pair| {
            let (name, value) = pair.split_once('=').expect("p=value");
            assert!(["p50", "p99", "p99.9"].contains(&name), "{set}");
            assert_eq!(
                value.split_once('.').map(|(_, d)| d.len()),
                Some(3),
                "{set}"
            );
            value.parse().expect("microseconds")
        })
        .collect();
    assert_eq!(values.len(), 3, "{set}");
    assert!(values[0] > 0.0 && values[0] <= values[1] && values[1] <= values[2]);

    run(
        &mut con,
        &[
            "CONFIG",
            "SET",
            "latency-tracking-info-percentiles",
            "0 100",
        ],
    );
    let latency = fields(&info(&mut con, "latencystats"));
    let set = &latency["latency_percentiles_usec_set"];
    assert!(set.starts_with("p0=") && set.contains(",p100="), "{set}");

    // Off: nothing is shown and calls are no longer timed.
    run(&mut con, &["CONFIG", "SET", "latency-tracking", "no"]);
    assert_eq!(info(&mut con, "latencystats"), "# Latencystats\r\n");
    run(&mut con, &["GET", "k"]);
    let histogram: redis::Value = redis::cmd("LATENCY")
        .arg("HISTOGRAM")
        .arg("get")
        .query(&mut con)
        .unwrap();
    assert!(
        matches!(&histogram, redis::Value::Array(a) if a.is_empty()),
        "GET was not timed: {histogram:?}"
    );
    let tracking: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("latency-tracking")
        .query(&mut con)
        .unwrap();
    assert_eq!(tracking, ["latency-tracking", "no"]);
    run(&mut con, &["CONFIG", "SET", "latency-tracking", "yes"]);
    run(&mut con, &["GET", "k"]);
    let latency = fields(&info(&mut con, "latencystats"));
    assert!(
        latency.contains_key("latency_percentiles_usec_get"),
        "{latency:?}"
    );
}

#[test]
fn stats_count_traffic_its_rate_and_refused_connections() {
    let (_dir, server) = start_with(&["--resp-max-connections", "2"]);
    let mut con = redis_connection(&server);
    // Commands for longer than a few samples (one every 100 ms).
    let until = Instant::now() + Duration::from_millis(500);
    let mut sent = 0;
    while Instant::now() < until {
        run(&mut con, &["SET", "k", "v"]);
        sent += 1;
    }
    let stats = fields(&info(&mut con, "stats"));
    let number = |field: &str| stats[field].parse::<f64>().expect(field);
    assert!(number("instantaneous_ops_per_sec") > 0.0, "{stats:?}");
    assert!(number("instantaneous_input_kbps") > 0.0, "{stats:?}");
    assert!(number("instantaneous_output_kbps") > 0.0, "{stats:?}");
    // Each SET is 27 bytes in and `+OK` 5 bytes out.
    assert!(
        number("total_net_input_bytes") >= f64::from(sent * 27),
        "{stats:?}"
    );
    assert!(
        number("total_net_output_bytes") >= f64::from(sent * 5),
        "{stats:?}"
    );
    assert!(
        number("total_reads_processed") >= f64::from(sent),
        "{stats:?}"
    );
    assert!(
        number("total_writes_processed") >= f64::from(sent),
        "{stats:?}"
    );
    assert_eq!(stats["rejected_connections"], "0");

    // A third connection is over the limit of two.
    let _second = std::net::TcpStream::connect(server.resp).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut third = std::net::TcpStream::connect(server.resp).unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut refusal = String::new();
    let _ = third.read_to_string(&mut refusal);
    assert_eq!(refusal, "-ERR max number of clients reached\r\n");
    let stats = fields(&info(&mut con, "stats"));
    assert_eq!(stats["rejected_connections"], "1");
    // Client-side caching's table: one client broadcasting one prefix.
    let _: () = redis::cmd("CLIENT")
        .arg(&["TRACKING", "ON", "BCAST", "PREFIX", "a:"])
        .query(&mut con)
        .unwrap();
    let clients = fields(&info(&mut con, "clients"));
    assert_eq!(clients["tracking_clients"], "1");
    let stats = fields(&info(&mut con, "stats"));
    assert_eq!(stats["tracking_total_prefixes"], "1");
    let memory = fields(&info(&mut con, "memory"));
    assert!(memory["total_system_memory"].parse::<u64>().unwrap() > 0);
    assert!(memory.contains_key("mem_fragmentation_ratio"), "{memory:?}");
}
