#!/usr/bin/env bash
# Native cache load, Quiver beside redis-server, with `quiver-bench cache`.
#
# Starts `quiver serve` (release build, temporary data directory) and
# `redis-server --save '' --appendonly no` on free loopback ports, then for each op runs
# the same load against quiver:// (TCP), quiver+quic:// (QUIC, certificate pinned) and
# redis:// in alternation, rotating who goes first each round. Prints one JSON line per
# run (to OUT, default /dev/stdout) and a table of medians; stops both servers.
#
# Usage: scripts/bench_native_cache.sh [ROUNDS] [TOTAL] [CONCURRENCY] [PAYLOAD] [OUT]
#   defaults: 3 rounds, 500000 requests, 32 in flight, 64 B values.
# Environment: CARGO_TARGET_DIR (where the release binaries are; default ./target),
#   TARGETS (default "quiver quic redis"), OPS (default "set get-hit get-miss"),
#   EXTRA (more quiver-bench cache flags, e.g. "--connections 2"),
#   BENCH (a quiver-bench binary to use instead of the release build).
set -euo pipefail

rounds=${1:-3}
total=${2:-500000}
concurrency=${3:-32}
payload=${4:-64}
out=${5:-/dev/stdout}
targets=${TARGETS:-quiver quic redis}
ops=${OPS:-set get-hit get-miss}
extra=${EXTRA:-}
bin=${CARGO_TARGET_DIR:-target}/release
bench=${BENCH:-$bin/quiver-bench}
root=$(cd "$(dirname "$0")/.." && pwd)

cd "$root"
nice cargo build --release -q -p quiver-server -p quiver-bench

. "$root/scripts/servers.sh"

native=$(free_port)
quic=$(free_port)
redis=$(free_port)
"$bin/quiver" serve --data-dir "$work/data" --native-addr "127.0.0.1:$native" \
    --quic-addr "127.0.0.1:$quic" --resp-addr "127.0.0.1:$(free_port)" \
    --http-addr "127.0.0.1:$(free_port)" --cache-save '' --log-format json --log-level info \
    2>"$work/quiver.log" &
started $!
redis-server --port "$redis" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no >"$work/redis.log" 2>&1 &
started $!

fingerprint=
for _ in $(seq 100); do
    fingerprint=$(grep -o '"fingerprint":"[0-9a-f]*"' "$work/quiver.log" 2>/dev/null | cut -d'"' -f4 || true)
    if [ -n "$fingerprint" ] && redis-cli -p "$redis" ping >/dev/null 2>&1; then
        break
    fi
    sleep 0.1
done
[ -n "$fingerprint" ] || { echo "quiver did not start: $(cat "$work/quiver.log")" >&2; exit 1; }

url() {
    case $1 in
        quiver) echo "quiver://127.0.0.1:$native" ;;
        quic) echo "quiver+quic://127.0.0.1:$quic?fingerprint=$fingerprint" ;;
        redis) echo "redis://127.0.0.1:$redis" ;;
    esac
}

echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "$(redis-server --version | cut -d' ' -f1-3), quiver $(git rev-parse --short HEAD)" >&2
results="$work/results.jsonl"
read -r -a order <<<"$targets"
for op in $ops; do
    for round in $(seq 0 $((rounds - 1))); do
        for turn in $(seq 0 $((${#order[@]} - 1))); do
            name=${order[$(((turn + round) % ${#order[@]}))]}
            # shellcheck disable=SC2086
            nice "$bench" cache --target "$(url "$name")" --op "$op" \
                --concurrency "$concurrency" --payload "$payload" --total "$total" \
                --json $extra |
                jq -c --arg name "$name" --argjson round "$((round + 1))" \
                    '. + {name: $name, round: $round}' | tee -a "$results" >>"$out"
        done
    done
done

echo "| op | target | ops/s median (min-max) | p50 us | p99 us | p999 us | errors |" >&2
echo "|---|---|---:|---:|---:|---:|---:|" >&2
jq -s -r '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  group_by([.op, .name])[] |
  "| \(.[0].op) | \(.[0].name) | \(map(.ops_per_sec) | median | round) (\(map(.ops_per_sec) | min | round)-\(map(.ops_per_sec) | max | round)) | \(map(.p50_us) | median) | \(map(.p99_us) | median) | \(map(.p999_us) | median) | \(map(.errors) | add) |"
' "$results" >&2
