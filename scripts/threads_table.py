#!/usr/bin/env python3
"""Reads the CSV lines of scripts/bench_threads.sh on stdin and prints a Markdown table:
for each CPU set-up, shape and test, the median requests per second (and p99 in ms) of
each server, and each Quiver setting's median per-round ratio to the first server named in
--against (default valkey)."""
import argparse
import statistics
import sys
from collections import defaultdict

parser = argparse.ArgumentParser()
parser.add_argument("--against", default="valkey")
args = parser.parse_args()

runs = defaultdict(list)  # (cpus, clients, pipeline, test, server) -> [(rps, p99)]
servers = []
for line in sys.stdin:
    cpus, server, clients, pipeline, test, rps, _p50, p99 = line.strip().split(",")
    runs[(cpus, int(clients), int(pipeline), test, server)].append((float(rps), float(p99)))
    if server not in servers:
        servers.append(server)

shapes = sorted({key[:4] for key in runs}, key=lambda k: (k[0], k[2], k[3]))
ours = [s for s in servers if s != args.against]
print("| CPUs | shape | test | " + " | ".join(servers) + " | "
      + " | ".join(f"{s} / {args.against}" for s in ours) + " |")
print("|---" * (3 + len(servers) + len(ours)) + "|")
for shape in shapes:
    cells = []
    for server in servers:
        got = runs.get(shape + (server,), [])
        if got:
            cells.append(f"{statistics.median(r for r, _ in got) / 1000:,.0f} k "
                         f"(p99 {statistics.median(p for _, p in got):.2f})")
        else:
            cells.append("–")
    base = runs.get(shape + (args.against,), [])
    for server in ours:
        got = runs.get(shape + (server,), [])
        ratios = [r / b for (r, _), (b, _) in zip(got, base)]
        cells.append(f"{statistics.median(ratios):.2f}" if ratios else "–")
    cpus, clients, pipeline, test = shape
    print(f"| {cpus} | -c {clients} -P {pipeline} | {test} | " + " | ".join(cells) + " |")
