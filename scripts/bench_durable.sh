#!/usr/bin/env bash
# Durable streams and consumer groups: Quiver beside JetStream (nats-server), one server
# alive at a time, the order swapped every round, with the fsync floor of the same disk
# measured in every round.
#
# Loads (256 B payloads):
#   os-async   1 publisher, 8 batches of 64 in flight; Quiver `os` vs JetStream default sync
#   sync-1     1 publisher, 1 message in flight; Quiver `sync` vs JetStream sync_interval: always
#   sync-64    64 publishers, 1 message in flight each; same pair
#   group      4 members, explicit acks, messages stored first; Quiver `os` vs JetStream default
#   catch-up   TOTAL_CATCHUP messages stored, then read from the earliest by one reader
#   latency    1 publisher at 1000 msgs/s, `sync`; Quiver only (against the fsync floor)
# Writes one JSON line per run to OUT (default durable-runs.jsonl) and prints the medians.
#
# Usage: scripts/bench_durable.sh [ROUNDS] [OUT]   (default 5 rounds)
# Environment: CARGO_TARGET_DIR; NATS_SERVER (default nats-server on PATH);
#   TOTAL_CATCHUP (default 1000000).
set -euo pipefail

rounds=${1:-5}
out=${2:-durable-runs.jsonl}
catchup=${TOTAL_CATCHUP:-1000000}
nats_bin=${NATS_SERVER:-nats-server}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${CARGO_TARGET_DIR:-$root/target}/release
bench="$bin/quiver-bench"

nice cargo build --release -q -p quiver-server -p quiver-bench

. "$root/scripts/servers.sh"
: >"$out"

# start_quiver / start_nats SYNC: one server on a free port, its address in $target.
start_quiver() {
    local port
    port=$(free_port)
    rm -rf "$work/quiver"
    "$bin/quiver" serve --data-dir "$work/quiver" --native-addr "127.0.0.1:$port" \
        --quic-addr "127.0.0.1:$(free_port)" --resp-addr "127.0.0.1:$(free_port)" \
        --http-addr "127.0.0.1:$(free_port)" --log-level warn 2>>"$work/quiver.log" &
    server=$!
    started "$server"
    wait_port "$port"
    target="quiver://127.0.0.1:$port"
}

start_nats() {
    local port
    port=$(free_port)
    rm -rf "$work/nats"
    mkdir -p "$work/nats"
    {
        echo "jetstream { store_dir: \"$work/nats\""
        [ "$1" = always ] && echo "  sync_interval: always"
        echo "}"
    } >"$work/nats.conf"
    "$nats_bin" -a 127.0.0.1 -p "$port" -c "$work/nats.conf" >>"$work/nats.log" 2>&1 &
    server=$!
    started "$server"
    wait_port "$port"
    target="nats://127.0.0.1:$port"
}

stop() {
    kill "$server" && wait "$server" 2>/dev/null || true
}

# run LABEL SYSTEM NATS_SYNC -- quiver-bench arguments (without --target)
run() {
    local label=$1 system=$2 sync=$3
    shift 4
    if [ "$system" = quiver ]; then start_quiver; else start_nats "$sync"; fi
    local report
    report=$(nice "$bench" "$@" --target "$target" --json)
    stop
    echo "{\"load\":\"$label\",\"system\":\"$system\",\"round\":$round,\"report\":$report}" >>"$out"
    echo "  $label $system: $report" >&2
}

pair() {
    local label=$1 sync=$2
    shift 3
    if [ $((round % 2)) -eq 0 ]; then
        run "$label" quiver "$sync" -- "$@"
        run "$label" nats "$sync" -- "$@"
    else
        run "$label" nats "$sync" -- "$@"
        run "$label" quiver "$sync" -- "$@"
    fi
}

for round in $(seq 1 "$rounds"); do
    echo "round $round" >&2
    floor=$(nice "$bench" log --fsync-floor --payload 256 --total 2000 --dir "$work" --json)
    echo "{\"load\":\"fsync-floor\",\"system\":\"disk\",\"round\":$round,\"report\":$floor}" >>"$out"
    echo "  fsync floor: $floor" >&2
    pair os-async default -- durable --publishers 1 --in-flight 8 --batch 64 --payload 256 \
        --total 500000 --durability os
    pair sync-1 always -- durable --publishers 1 --in-flight 1 --batch 1 --payload 256 \
        --total 5000 --durability sync
    pair sync-64 always -- durable --publishers 64 --in-flight 1 --batch 1 --payload 256 \
        --total 50000 --durability sync
    pair group default -- group --members 4 --payload 256 --total 200000
    pair catch-up default -- durable --catch-up --payload 256 --total "$catchup" --durability os
    run latency quiver always -- durable --publishers 1 --in-flight 1 --batch 1 --payload 256 \
        --total 5000 --rate 1000 --durability sync
done

python3 - "$out" <<'EOF'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
def med(load, system, key):
    values = [r["report"][key] for r in runs if r["load"] == load and r["system"] == system]
    return statistics.median(values) if values else None
rows = [
    ("fsync-floor", "records_per_sec"), ("fsync-floor", "p50_us"), ("fsync-floor", "p99_us"),
    ("fsync-floor", "over_zeros_records_per_sec"), ("fsync-floor", "over_zeros_p50_us"),
    ("fsync-floor", "over_zeros_p99_us"),
    ("os-async", "published_per_sec"), ("os-async", "delivered_per_sec"), ("os-async", "p99_us"),
    ("sync-1", "published_per_sec"), ("sync-1", "p50_us"), ("sync-1", "p99_us"),
    ("sync-64", "published_per_sec"), ("sync-64", "p99_us"),
    ("group", "acked_per_sec"), ("group", "redelivered"),
    ("catch-up", "delivered_per_sec"), ("catch-up", "payload_bytes_per_sec"),
    ("latency", "p50_us"), ("latency", "p99_us"), ("latency", "delivery_p50_us"),
    ("latency", "delivery_p99_us"),
]
print(f"| load | figure | Quiver | JetStream | Quiver / JetStream |")
print("|---|---|---:|---:|---:|")
for load, key in rows:
    q = med(load, "disk" if load == "fsync-floor" else "quiver", key)
    n = med(load, "nats", key)
    ratio = f"{q / n:.2f}×" if q and n else ""
    fmt = lambda v: "" if v is None else f"{v:,.0f}"
    print(f"| {load} | {key} | {fmt(q)} | {fmt(n)} | {ratio} |")
lost = sum(r["report"].get("lost", 0) for r in runs)
dups = sum(r["report"].get("duplicates", 0) for r in runs)
print(f"\nlost in all runs: {lost}; duplicates in all runs: {dups}")
EOF
