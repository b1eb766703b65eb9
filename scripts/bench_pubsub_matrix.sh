#!/usr/bin/env bash
# The pub/sub comparison matrix: Quiver beside nats-server, with
# `quiver-bench pubsub --matrix`.
#
# Starts `quiver serve` (release build, temporary data directory) and `nats-server` on
# free loopback ports, runs fan-out {1, 10} x payload {0, 256, 1024, 4096} x batch {1, 64}
# against both (alternating within each cell), writes pubsub-matrix.json, .md and the SVG
# charts to OUT (default docs/benchmarks), and stops both servers.
#
# Usage: scripts/bench_pubsub_matrix.sh [ROUNDS] [TOTAL] [WARMUP] [OUT]
#   defaults: 3 rounds, 200000 measured messages per run, 20000 warm-up.
# Environment: CARGO_TARGET_DIR (where the release binaries are; default ./target),
#   EXTRA (more quiver-bench pubsub flags, e.g. "--quiver-ack none").
set -euo pipefail

rounds=${1:-3}
total=${2:-200000}
warmup=${3:-20000}
out=${4:-docs/benchmarks}
extra=${EXTRA:-}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${CARGO_TARGET_DIR:-target}/release

nice cargo build --release -q -p quiver-server -p quiver-bench

. "$root/scripts/servers.sh"

native=$(free_port)
nats=$(free_port)
"$bin/quiver" serve --data-dir "$work/data" --native-addr "127.0.0.1:$native" \
    --quic-addr "127.0.0.1:$(free_port)" --resp-addr "127.0.0.1:$(free_port)" \
    --http-addr "127.0.0.1:$(free_port)" --log-level warn 2>"$work/quiver.log" &
started $!
nats-server -a 127.0.0.1 -p "$nats" >"$work/nats.log" 2>&1 &
started $!
wait_port "$native"
wait_port "$nats"

note="run by scripts/bench_pubsub_matrix.sh $rounds $total $warmup; $(nats-server --version), quiver $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
# shellcheck disable=SC2086
nice "$bin/quiver-bench" pubsub --matrix \
    --target "quiver://127.0.0.1:$native" --target "nats://127.0.0.1:$nats" \
    --rounds "$rounds" --total "$total" --warmup "$warmup" --out "$out" \
    --note "$note" $extra
