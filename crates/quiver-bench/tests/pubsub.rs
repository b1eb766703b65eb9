//! `quiver-bench pubsub --matrix` against the in-process server with tiny counts: every
//! cell runs, nothing is lost, and the JSON, Markdown and SVG files are written.

use crate::support::{Server, bench, bench_json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_run_reports_latency_unless_payloads_are_empty() {
    let server = Server::start();
    let url = server.tcp_url();
    for (payload, count_only) in [("64", false), ("0", true)] {
        let report = bench_json(&[
            "pubsub",
            "--target",
            &url,
            "--subscribers",
            "2",
            "--payload",
            payload,
            "--batch",
            "8",
            "--total",
            "200",
            "--warmup",
            "40",
        ])
        .await;
        assert_eq!(report["expected"], 400, "{report}");
        assert_eq!(report["received"], 400, "{report}");
        assert_eq!(report["lost"], 0, "{report}");
        assert_eq!(report["p99_us"].is_null(), count_only, "{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_matrix_writes_every_cell_and_its_files() {
    let server = Server::start();
    let out = tempfile::tempdir().expect("tempdir");
    let args = [
        "pubsub",
        "--matrix",
        "--target",
        &server.tcp_url(),
        "--rounds",
        "1",
        "--total",
        "64",
        "--warmup",
        "8",
        "--out",
        out.path().to_str().expect("a UTF-8 temp path"),
    ];
    let (ok, _, stderr) = bench(args.iter().map(|&a| a.to_owned()).collect()).await;
    assert!(ok, "the matrix failed: {stderr}");
    let json = std::fs::read_to_string(out.path().join("pubsub-matrix.json")).expect("JSON");
    let document: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let runs = document["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 16, "one run per cell");
    for run in runs {
        let result = &run["result"];
        assert_eq!(result["lost"], 0, "{run}");
        assert_eq!(result["received"], result["expected"], "{run}");
        let count_only = run["payload_bytes"] == 0;
        assert_eq!(result["p50_us"].is_null(), count_only, "{run}");
    }
    assert_eq!(document["cells"].as_array().map(Vec::len), Some(16));
    let page = std::fs::read_to_string(out.path().join("pubsub-matrix.md")).expect("Markdown");
    assert_eq!(
        page.lines()
            .filter(|l| l.starts_with("| 1") || l.starts_with("| 10"))
            .count(),
        16,
        "{page}"
    );
    assert!(page.contains("n/a (count only)"), "{page}");
    for fanout in [1, 10] {
        let svg = std::fs::read_to_string(
            out.path()
                .join(format!("pubsub-matrix-fanout-{fanout}.svg")),
        )
        .expect("SVG");
        assert_eq!(svg.matches("<title>").count(), 8, "{svg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_run_takes_one_target() {
    let (ok, _, stderr) = bench(
        [
            "pubsub",
            "--target",
            "quiver://127.0.0.1:1,nats://127.0.0.1:2",
        ]
        .map(str::to_owned)
        .to_vec(),
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("use --matrix to compare several"),
        "{stderr}"
    );
}
