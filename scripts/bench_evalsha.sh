#!/usr/bin/env bash
# EVALSHA of a one-command script (INCR of a random key) with redis-benchmark: Quiver
# beside valkey-server and redis-server, one server alive at a time, every round.
# Prints one line per server and round: its requests per second.
#
# Usage: scripts/bench_evalsha.sh [ROUNDS]   (default 3)
# Environment: P (pipeline depth, default 16), N (requests per run, default 500000),
#   VALKEY_SERVER (default valkey-server on PATH), REDIS_SERVER (default redis-server),
#   CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver="${CARGO_TARGET_DIR:-$here/../target}/release/quiver"
valkey=${VALKEY_SERVER:-valkey-server}
redis=${REDIS_SERVER:-redis-server}
script="return redis.call('incr', KEYS[1])"
sha=$(printf '%s' "$script" | sha1sum | cut -d' ' -f1)

run() {
    redis-cli -p "$1" script load "$script" >/dev/null
    redis-benchmark -p "$1" -c 50 -P "${P:-16}" -n "${N:-500000}" -r 100000 -q \
        EVALSHA "$sha" 1 'counter:__rand_int__' 2>/dev/null |
        grep -o '[0-9.]* requests per second' | cut -d' ' -f1
}

for _ in $(seq "$rounds"); do
    for server in valkey redis quiver; do
        port=$(free_port)
        start_resp_server "$server" "$port"
        echo "$server $(run "$port")"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
    done
done
