#!/usr/bin/env bash
# Pub/sub fan-out over QUIC beside the same load over TCP: one server alive at a time (a
# fresh one for every run), the transports alternating within each round, with
# `quiver-bench pubsub` (1 publisher, batches of 64).
#
# Usage: scripts/bench_quic.sh [ROUNDS] [OUT]   (default 5 rounds, OUT quic-runs.txt)
# Environment: SHAPES (default "1:256 10:256 10:1024 10:4096", subscribers:payload);
#   BUILDS, a list of NAME=DIR of release binaries to compare (default: this tree's
#   release build, built first).
set -euo pipefail

rounds=${1:-5}
out=${2:-quic-runs.txt}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ -z "${BUILDS:-}" ]; then
    nice cargo build --release -q -p quiver-server -p quiver-bench
    BUILDS="this=${CARGO_TARGET_DIR:-$root/target}/release"
fi

. "$root/scripts/servers.sh"
: >"$out"

for round in $(seq 1 "$rounds"); do
    for shape in ${SHAPES:-1:256 10:256 10:1024 10:4096}; do
        subscribers=${shape%%:*}
        payload=${shape##*:}
        total=$((payload >= 4096 ? 200000 : 400000))
        for build in $BUILDS; do
            bin=${build#*=}
            for transport in tcp quic; do
                native=$(free_port)
                quic=$(free_port)
                rm -rf "$work/data"
                "$bin/quiver" serve --data-dir "$work/data" --native-addr "127.0.0.1:$native" \
                    --quic-addr "127.0.0.1:$quic" --resp-addr 127.0.0.1:0 \
                    --http-addr 127.0.0.1:0 --log-level warn 2>>"$work/quiver.log" &
                server=$!
                started "$server"
                wait_port "$native"
                fingerprint=$(openssl x509 -in "$work/data/quic-cert.pem" -outform der |
                    sha256sum | cut -d' ' -f1)
                target="quiver://127.0.0.1:$native"
                if [ "$transport" = quic ]; then
                    target="quiver+quic://127.0.0.1:$quic?fingerprint=$fingerprint"
                fi
                report=$(nice "$bin/quiver-bench" pubsub --target "$target" --publishers 1 \
                    --subscribers "$subscribers" --payload "$payload" --batch 64 \
                    --total "$total" --warmup 20000 --json)
                kill "$server" && wait "$server" 2>/dev/null || true
                line=$(echo "$report" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(int(d["delivered_per_sec"]), "p99", d["p99_us"], "lost", d["lost"])')
                echo "$round fan$subscribers/$payload ${build%%=*} $transport $line" | tee -a "$out"
            done
        done
    done
done

python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, shape, build, transport, rate = line.split()[:5]
    runs[(shape, build, transport)][r] = int(rate)
print("| shape | build | TCP msgs/s | QUIC msgs/s | QUIC / TCP (median of rounds) |")
print("|---|---|---:|---:|---:|")
for shape, build in sorted({(s, b) for s, b, _ in runs}):
    tcp, quic = runs[(shape, build, "tcp")], runs[(shape, build, "quic")]
    ratio = statistics.median(quic[r] / tcp[r] for r in quic if r in tcp)
    print(f"| {shape} | {build} | {statistics.median(tcp.values()):,.0f} "
          f"| {statistics.median(quic.values()):,.0f} | {ratio:.2f} |")
PY
