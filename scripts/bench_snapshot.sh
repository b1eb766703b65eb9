#!/usr/bin/env bash
# Cache snapshots side by side: Quiver beside valkey-server and redis-server, one server
# alive at a time, every round. Each server is filled with K keys (D-byte values), then:
#   - GET p99 with redis-benchmark (-c 50 -P 1), first alone, then while background saves
#     run back to back for the whole measurement (a fork for Redis and Valkey, a thread for
#     Quiver);
#   - memory during those saves: the most the server's processes held (proportional set
#     size summed over the server and its fork, sampled every 20 ms) over what it held
#     before;
#   - start-up: SAVE, stop, start on the same file, time until DBSIZE answers K.
# Prints one line per server and round: p99 alone (ms), p99 during saves (ms), memory
# during saves over before, start-up seconds.
#
# Usage: scripts/bench_snapshot.sh [ROUNDS]   (default 3)
# Environment: K (keys, default 1000000), D (value bytes, default 64), N (GET requests
#   per measurement, default 400000), QUIVER (the quiver binary, default the release
#   build), VALKEY_SERVER (default valkey-server on PATH), REDIS_SERVER (default
#   redis-server), SERVERS (default "valkey redis quiver"), CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-3}
keys=${K:-1000000}
requests=${N:-400000}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver=${QUIVER:-${CARGO_TARGET_DIR:-$here/../target}/release/quiver}
valkey=${VALKEY_SERVER:-valkey-server}
redis=${REDIS_SERVER:-redis-server}

# start NAME PORT DIR: the server with its snapshot file in DIR (dump.rdb), no save rules.
start() {
    case $1 in
    valkey | redis)
        local binary=$valkey
        [ "$1" = redis ] && binary=$redis
        "$binary" --port "$2" --save '' --appendonly no --dir "$3" >/dev/null 2>&1 &
        ;;
    quiver)
        "$quiver" serve --data-dir "$3" --resp-addr "127.0.0.1:$2" --cache-save '' \
            --http-addr 127.0.0.1:0 --native-addr 127.0.0.1:0 --quic-addr 127.0.0.1:0 \
            --log-level warn >/dev/null 2>&1 &
        ;;
    esac
    pid=$!
    started "$pid"
}

# Answers once DBSIZE replies with a number (Redis answers LOADING while it loads).
wait_loaded() {
    until [ "$(redis-cli -p "$1" DBSIZE 2>/dev/null)" = "$2" ]; do
        sleep 0.005
    done
}

fill() {
    python3 - "$keys" "${D:-64}" <<'EOF' | redis-cli -p "$1" --pipe >/dev/null
import sys
out = sys.stdout.buffer
value = b"v" * int(sys.argv[2])
for i in range(int(sys.argv[1])):
    key = b"key:%09d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value))
EOF
}

p99() {
    redis-benchmark -p "$1" -c 50 -P 1 -n "$requests" -r "$keys" --csv \
        GET 'key:__rand_int__' 2>/dev/null | tail -1 | cut -d, -f7 | tr -d '"'
}

# Proportional set size of PID and its children, in kB.
pss() {
    local total=0
    for p in "$1" $(pgrep -P "$1" || true); do
        local kb
        kb=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
        total=$((total + ${kb:-0}))
    done
    echo "$total"
}

bgsave_loop() {
    while [ ! -e "$work/stop" ]; do
        redis-cli -p "$1" BGSAVE >/dev/null 2>&1 || true
        while redis-cli -p "$1" INFO persistence 2>/dev/null | grep -q 'rdb_bgsave_in_progress:1'; do
            sleep 0.02
        done
    done
}

watch_memory() {
    local most=0
    while [ ! -e "$work/stop" ]; do
        local now
        now=$(pss "$1")
        [ "$now" -gt "$most" ] && most=$now
        sleep 0.02
    done
    echo "$most" >"$work/most"
}

for _ in $(seq "$rounds"); do
    for server in ${SERVERS:-valkey redis quiver}; do
        port=$(free_port)
        dir="$work/$server"
        rm -rf "$dir"
        mkdir -p "$dir"
        start "$server" "$port" "$dir"
        wait_port "$port"
        fill "$port"
        alone=$(p99 "$port")
        before=$(pss "$pid")
        rm -f "$work/stop"
        bgsave_loop "$port" &
        saver=$!
        watch_memory "$pid" &
        watcher=$!
        during=$(p99 "$port")
        touch "$work/stop"
        wait "$saver" "$watcher"
        memory=$(python3 -c "print(round($(cat "$work/most") / $before, 2))")
        redis-cli -p "$port" SAVE >/dev/null
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        begin=$(date +%s.%N)
        start "$server" "$port" "$dir"
        wait_port "$port"
        wait_loaded "$port" "$keys"
        startup=$(python3 -c "print(round($(date +%s.%N) - $begin, 2))")
        echo "$server p99_alone_ms=$alone p99_during_bgsave_ms=$during memory_during_bgsave=$memory startup_s=$startup"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
    done
done
