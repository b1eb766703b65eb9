//! `quiver-bench cache` against the in-process server: every op completes without
//! errors or wrong answers, over TCP and QUIC, and bad arguments are refused.

use crate::support::{Server, bench, bench_json};

async fn run_ops(url: &str) {
    for op in ["set", "get-hit", "get-miss"] {
        let report = bench_json(&[
            "cache",
            "--target",
            url,
            "--op",
            op,
            "--payload",
            "16",
            "--concurrency",
            "8",
            "--connections",
            "2",
            "--total",
            "400",
            "--warmup",
            "40",
            "--keys",
            "50",
        ])
        .await;
        assert_eq!(report["op"], op, "{report}");
        assert_eq!(report["completed"], 400, "{report}");
        assert_eq!(report["errors"], 0, "{report}");
        assert_eq!(report["wrong_results"], 0, "{report}");
        assert!(
            report["ops_per_sec"].as_f64().is_some_and(|v| v > 0.0),
            "{report}"
        );
        let p50 = report["p50_us"].as_f64().expect("p50");
        let p999 = report["p999_us"].as_f64().expect("p999");
        assert!(p50 > 0.0 && p50 <= p999, "{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_op_completes_over_tcp() {
    let server = Server::start();
    run_ops(&server.tcp_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_op_completes_over_quic() {
    let server = Server::start();
    run_ops(&server.quic_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_it_cannot_reach_or_name_is_an_error() {
    let (ok, _, stderr) = bench(
        ["cache", "--target", "nats://127.0.0.1:1", "--op", "set"]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    assert!(!ok);
    assert!(stderr.contains("unsupported --target"), "{stderr}");
    // Port 1 on loopback: nothing listens there.
    let (ok, _, stderr) = bench(
        ["cache", "--target", "quiver://127.0.0.1:1", "--op", "set"]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("connecting to quiver://127.0.0.1:1"),
        "{stderr}"
    );
}
