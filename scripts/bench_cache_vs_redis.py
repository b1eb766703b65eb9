#!/usr/bin/env python3
"""Side-by-side RESP benchmark: Quiver vs redis-server with redis-benchmark.

Starts `redis-server --save '' --appendonly no` and `quiver serve --cache-save ''` on free
loopback ports, then runs the same redis-benchmark command against each in
alternation (Q R, then R Q, and so on: each round swaps who goes first),
after one warm-up round each, and prints a Markdown
table with the median ops/s, p50 and p99 of each and the median of the
per-round ratios Quiver/Redis. Also reports each server's resident memory after
loading 1 M keys with 64 B values when --memory is given.

Usage:
  scripts/bench_cache_vs_redis.py [--quiver PATH] [--rounds N] [--requests N]
      [--tests set,get,...] [--matrix "50:1:100000,50:16,500:128"] [--memory]
      [--baseline PATH]

With --baseline, the other side is that Quiver binary instead of redis-server: a
before/after comparison of two builds, in the same alternation.

Each matrix cell is CLIENTS:PIPELINE[:REQUESTS]; REQUESTS defaults to --requests.
"""

import argparse
import csv
import io
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} never opened")


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def run_benchmark(port, test, clients, pipeline, requests, data_size, keyspace):
    cmd = [
        "redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
        "-P", str(pipeline), "-n", str(requests), "-d", str(data_size),
        "-r", str(keyspace), "-t", test, "--csv",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    rows = list(csv.reader(io.StringIO(out)))
    header, data = rows[0], rows[1]
    row = dict(zip(header, data))
    return float(row["rps"]), float(row["p50_latency_ms"]), float(row["p99_latency_ms"])


def start_quiver(binary, port, data):
    return subprocess.Popen(
        [binary, "serve", "--data-dir", data, "--resp-addr", f"127.0.0.1:{port}",
         "--http-addr", "127.0.0.1:0", "--native-addr", "127.0.0.1:0",
         "--quic-addr", "127.0.0.1:0", "--cache-save", "", "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_servers(quiver, work, baseline=None):
    """Quiver as "quiver"; redis-server, or the baseline Quiver binary, as "redis"."""
    rport, qport = free_port(), free_port()
    if baseline:
        redis = start_quiver(baseline, rport, os.path.join(work, "baseline-data"))
    else:
        redis = subprocess.Popen(
            ["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--dir", work],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    q = start_quiver(quiver, qport, os.path.join(work, "quiver-data"))
    wait_port(rport, redis)
    wait_port(qport, q)
    return {"quiver": (q, qport), "redis": (redis, rport)}


def stop(servers):
    for proc, _ in servers.values():
        proc.send_signal(signal.SIGTERM)
    for proc, _ in servers.values():
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def memory_for_million_keys(servers):
    rows = []
    payload = "x" * 64
    for name in ("quiver", "redis"):
        proc, port = servers[name]
        before = rss_bytes(proc.pid)
        pipe = "".join(
            f"*3\r\n$3\r\nSET\r\n${len(f'key:{i:012d}')}\r\nkey:{i:012d}\r\n$64\r\n{payload}\r\n"
            for i in range(1_000_000))
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=pipe.encode(),
                       capture_output=True, check=True, timeout=600)
        time.sleep(1)
        after = rss_bytes(proc.pid)
        rows.append((name, before, after))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quiver", default="target/release/quiver")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=500_000)
    parser.add_argument("--tests", default="set,get,incr,lpush,rpop,sadd,hset,zadd,mset")
    parser.add_argument("--matrix", default="50:1,50:16,500:128")
    parser.add_argument("--data-size", type=int, default=64)
    parser.add_argument("--keyspace", type=int, default=1_000_000)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--baseline", help="another Quiver binary to compare with, instead of redis-server")
    args = parser.parse_args()
    for tool in ("redis-server", "redis-benchmark", "redis-cli"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: apt-get install -y redis-server redis-tools")

    work = tempfile.mkdtemp(prefix="quiver-bench-")
    servers = start_servers(args.quiver, work, args.baseline)
    other = "Baseline" if args.baseline else "Redis"
    try:
        # Memory first, on empty servers; then both are flushed for the load runs.
        memory = memory_for_million_keys(servers) if args.memory else []
        for _, port in servers.values():
            subprocess.run(["redis-cli", "-p", str(port), "flushall"], capture_output=True, check=True)
        print(f"machine: {os.cpu_count()} cpus; "
              f"{subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.strip()}")
        if args.baseline:
            print(f"baseline: {args.baseline}")
        print(f"command: redis-benchmark -c C -P P -n N -d {args.data_size} "
              f"-r {args.keyspace} -t TEST --csv; {args.rounds} rounds, Quiver and {other} alternating, "
              f"each round swapping who goes first\n")
        print(f"| test | -c | -P | Quiver ops/s | {other} ops/s | ratio (median of rounds) | "
              f"Quiver p50/p99 ms | {other} p50/p99 ms |")
        print("|---|---|---|---|---|---|---|---|")
        for cell in filter(None, args.matrix.split(",")):
            fields = [int(x) for x in cell.split(":")]
            clients, pipeline = fields[0], fields[1]
            requests = fields[2] if len(fields) > 2 else args.requests
            for test in args.tests.split(","):
                results = {"quiver": [], "redis": []}
                for name in ("quiver", "redis"):  # warm-up
                    run_benchmark(servers[name][1], test, clients, pipeline,
                                  max(requests // 5, 1000), args.data_size, args.keyspace)
                ratios = []
                for round_ in range(args.rounds):
                    # Each round swaps who goes first, so a drift of the
                    # machine's speed does not favour one side.
                    order = ("quiver", "redis") if round_ % 2 == 0 else ("redis", "quiver")
                    for name in order:
                        results[name].append(run_benchmark(
                            servers[name][1], test, clients, pipeline, requests,
                            args.data_size, args.keyspace))
                    ratios.append(results["quiver"][-1][0] / results["redis"][-1][0])
                med = {name: [statistics.median(col) for col in zip(*rows)]
                       for name, rows in results.items()}
                print(f"| {test} | {clients} | {pipeline} | {med['quiver'][0]:,.0f} | "
                      f"{med['redis'][0]:,.0f} | {statistics.median(ratios):.2f} "
                      f"({min(ratios):.2f}-{max(ratios):.2f}) | "
                      f"{med['quiver'][1]:.3f} / {med['quiver'][2]:.3f} | "
                      f"{med['redis'][1]:.3f} / {med['redis'][2]:.3f} |", flush=True)
        if memory:
            print("\n| server | RSS before | RSS after 1 M keys x 64 B | growth |")
            print("|---|---|---|---|")
            for name, before, after in memory:
                print(f"| {name} | {before / 2**20:.1f} MiB | {after / 2**20:.1f} MiB | "
                      f"{(after - before) / 2**20:.1f} MiB |")
    finally:
        stop(servers)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
