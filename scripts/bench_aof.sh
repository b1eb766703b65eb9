#!/usr/bin/env bash
# Append-only persistence side by side: Quiver beside valkey-server and redis-server, each
# with `appendonly yes` and the same `appendfsync`, one server alive at a time, every
# round, each on a fresh directory: redis-benchmark -t set -P 16 -c 50 -r 1000000 -d 64.
# Prints one line per fsync mode, server and round: SET requests per second.
#
# Usage: scripts/bench_aof.sh [ROUNDS]   (default 5)
# Environment: N (requests, default 1000000), MODES (default "everysec always"),
#   VALKEY_SERVER (default valkey-server on PATH), REDIS_SERVER (default redis-server),
#   SERVERS (default "valkey redis quiver"), QUIVER (the quiver binary, default the
#   release build), CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-5}
requests=${N:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver=${QUIVER:-${CARGO_TARGET_DIR:-$here/../target}/release/quiver}
valkey=${VALKEY_SERVER:-valkey-server}
redis=${REDIS_SERVER:-redis-server}

for mode in ${MODES:-everysec always}; do
    for round in $(seq "$rounds"); do
        for name in ${SERVERS:-valkey redis quiver}; do
            port=$(free_port)
            dir="$work/$name-$mode-$round"
            mkdir -p "$dir"
            start_resp_server "$name" "$port" "$dir" "$mode"
            rps=$(redis-benchmark -p "$port" -t set -P 16 -c 50 -r 1000000 -d 64 \
                -n "$requests" --csv 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"')
            echo "$mode $name round $round: $rps SET/s"
            kill "$pid" && wait "$pid" 2>/dev/null || true
            rm -rf "$dir"
        done
    done
done
