#!/usr/bin/env bash
# SETBIT, BITCOUNT, PFADD and PFCOUNT with redis-benchmark: Quiver beside valkey-server
# and redis-server, one server alive at a time, every round. Prints one line per server,
# command and round: its requests per second. SETBIT sets a bit of a random key
# (redis-benchmark's random numbers are zero-padded, which no server takes as an offset);
# BITCOUNT counts a 1 KiB bitmap; PFADD adds random elements to one HyperLogLog, which
# PFCOUNT then counts, alone and with a second dense one (the count of their union), and
# PFMERGE merges with that second one into a third.
#
# Usage: scripts/bench_bits_hll.sh [ROUNDS]   (default 3)
# Environment: P (pipeline depth, default 16), N (requests per run, default 2000000),
#   R (random range: bit offsets and elements, default 100000), VALKEY_SERVER (default
#   valkey-server on PATH), REDIS_SERVER (default redis-server), CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver="${CARGO_TARGET_DIR:-$here/../target}/release/quiver"
valkey=${VALKEY_SERVER:-valkey-server}
redis=${REDIS_SERVER:-redis-server}

bench() {
    local port=$1
    shift
    redis-benchmark -p "$port" -c 50 -P "${P:-16}" -n "${N:-2000000}" -r "${R:-100000}" -q \
        "$@" 2>/dev/null | grep -o '[0-9.]* requests per second' | cut -d' ' -f1
}

for _ in $(seq "$rounds"); do
    for server in valkey redis quiver; do
        port=$(free_port)
        start_resp_server "$server" "$port"
        echo "$server SETBIT $(bench "$port" SETBIT 'bits:__rand_int__' 7 1)"
        for offset in 1 100 1000 5000 8191; do
            redis-cli -p "$port" SETBIT bitmap "$offset" 1 >/dev/null
        done
        echo "$server BITCOUNT $(bench "$port" BITCOUNT bitmap)"
        echo "$server PFADD $(bench "$port" PFADD hll __rand_int__)"
        echo "$server PFCOUNT $(bench "$port" PFCOUNT hll)"
        # shellcheck disable=SC2046 # one argument per element
        redis-cli -p "$port" PFADD hll2 $(seq 1 20000) >/dev/null
        echo "$server PFCOUNT2 $(N=$((${N:-2000000} / 10)) bench "$port" PFCOUNT hll hll2)"
        echo "$server PFMERGE $(N=$((${N:-2000000} / 10)) bench "$port" PFMERGE merged hll hll2)"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
    done
done
