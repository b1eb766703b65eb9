#!/usr/bin/env bash
# Plain GET and SET against Quiver with no script and with 1,000 scripts in the EVAL
# cache, with redis-benchmark: one server alive at a time, a fresh one per measurement,
# the order of the two alternating between rounds. Prints one line per round, shape and
# command: its requests per second.
#
# Usage: scripts/bench_scripts_loaded.sh [ROUNDS]   (default 5)
# Environment: P (pipeline depth, default 16), N (requests per run, default 1000000),
#   CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver="${CARGO_TARGET_DIR:-$here/../target}/release/quiver"

measure() {
    local scripts=$1 round=$2 port
    port=$(free_port)
    start_resp_server quiver "$port"
    if [ "$scripts" -gt 0 ]; then
        for i in $(seq "$scripts"); do
            echo "SCRIPT LOAD \"return redis.call('get', KEYS[1]) or $i\""
        done | redis-cli -p "$port" >/dev/null
        [ "$(redis-cli -p "$port" info memory | grep -c '^number_of_cached_scripts:1000')" = 1 ]
    fi
    for command in set get; do
        rate=$(redis-benchmark -p "$port" -c 50 -P "${P:-16}" -n "${N:-1000000}" -r 1000000 \
            -d 64 -q -t "$command" 2>/dev/null | grep -o '[0-9.]* requests per second' |
            cut -d' ' -f1)
        echo "round $round scripts $scripts $command $rate"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

for round in $(seq "$rounds"); do
    if [ $((round % 2)) = 1 ]; then
        measure 0 "$round"
        measure 1000 "$round"
    else
        measure 1000 "$round"
        measure 0 "$round"
    fi
done
