#!/usr/bin/env bash
# RESP connection threads: Quiver with `resp.io_threads` auto (the balancer), 1 and 2, and
# with busy polling off, beside valkey-server, one server alive at a time, every round, on
# redis-benchmark's SET and GET at -c 50 -P 1, -c 50 -P 16 and -c 500 -P 128, and on a
# load whose work is in the server: BITCOUNT of one of 100 bitmaps of 256 KiB at -c 50
# -P 1.
# Prints one CSV line per run: cpus,server,clients,pipeline,test,rps,p50_ms,p99_ms.
#
# Usage: scripts/bench_threads.sh [ROUNDS]   (default 5)
# Environment: PINNED=1 runs the server on CPU 0 and the client on CPU 1 (taskset);
#   SHAPES (clients:pipeline:requests for SET and GET, default
#   "50:1:200000 50:16:2000000 500:128:4000000"; empty for BITCOUNT alone), HEAVY_N
#   (BITCOUNT requests, default 100000),
#   SERVERS (default "auto 1 2 nopoll valkey"), VALKEY_SERVER (default valkey-server on
#   PATH), CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver="${CARGO_TARGET_DIR:-$here/../target}/release/quiver"
valkey=${VALKEY_SERVER:-valkey-server}
client=()
cpus=shared
if [ "${PINNED:-}" = 1 ]; then
    export SERVER_CPU=0
    client=(taskset -c 1)
    cpus=pinned
fi
# clients:pipeline:requests
shapes=${SHAPES-50:1:200000 50:16:2000000 500:128:4000000}

for _ in $(seq "$rounds"); do
    for server in ${SERVERS:-auto 1 2 nopoll valkey}; do
        case $server in
        valkey) kind=valkey EXTRA_QUIVER_ARGS= ;;
        nopoll) kind=quiver EXTRA_QUIVER_ARGS="--resp-io-threads auto --resp-busy-poll 0s" ;;
        *) kind=quiver EXTRA_QUIVER_ARGS="--resp-io-threads $server" ;;
        esac
        port=$(free_port)
        start_resp_server "$kind" "$port"
        for shape in $shapes; do
            IFS=: read -r c p n <<<"$shape"
            "${client[@]}" redis-benchmark -p "$port" -t set,get -c "$c" -P "$p" -n "$n" \
                -r 1000000 -d 64 --csv 2>/dev/null | tail -n +2 | tr -d '"' |
                awk -F, -v pre="$cpus,$server,$c,$p" '{ print pre "," $1 "," $2 "," $5 "," $7 }'
        done
        # The names redis-benchmark makes of __rand_int__ with -r 100.
        for key in $(seq 0 99); do
            printf 'SETBIT bitmap:%012d 2097151 1\n' "$key"
        done | redis-cli -p "$port" >/dev/null
        "${client[@]}" redis-benchmark -p "$port" -c 50 -P 1 -n "${HEAVY_N:-100000}" -r 100 \
            --csv bitcount bitmap:__rand_int__ 2>/dev/null | tail -n +2 | tr -d '"' |
            awk -F, -v pre="$cpus,$server,50,1" '{ print pre ",BITCOUNT," $2 "," $5 "," $7 }'
        kill "$pid"
        wait "$pid" 2>/dev/null || true
    done
done
