#!/usr/bin/env bash
# The HTTP gateway beside nginx, one server alive at a time, `wrk -t2 -c100` for DURATION
# per shape and round:
#   nginx   GET /          `return 200` inline, access log off, 2 workers (the limit)
#   quiver  GET /health
#   quiver  POST /v1/streams/bench/http/pub/messages   256-byte body, admission control on
#   quiver  GET /v1/cache/0/k64                        a 64-byte value
# Prints one line per shape and round: requests per second and p99 latency.
#
# Usage: scripts/bench_http.sh [ROUNDS]   (default 5)
# Environment: DURATION (default 10s), NGINX (default nginx), CARGO_TARGET_DIR.
set -euo pipefail

rounds=${1:-5}
duration=${DURATION:-10s}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/servers.sh"
quiver="${CARGO_TARGET_DIR:-$here/../target}/release/quiver"
nginx=${NGINX:-nginx}

head -c 256 /dev/zero | tr '\0' 'x' > "$work/body256"
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
local f = io.open("$work/body256", "rb"); wrk.body = f:read("*a"); f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
LUA

# run NAME URL [SCRIPT]: one wrk run, one line.
run() {
    local name=$1 url=$2 script=${3:-}
    local out
    if [ -n "$script" ]; then
        out=$(wrk -t2 -c100 -d"$duration" --latency -s "$script" "$url")
    else
        out=$(wrk -t2 -c100 -d"$duration" --latency "$url")
    fi
    local rps p99 errors
    rps=$(awk '/Requests\/sec/ {print $2}' <<< "$out")
    p99=$(awk '$1 == "99%" {print $2}' <<< "$out")
    errors=$(awk '/Non-2xx/ {print $NF}' <<< "$out")
    echo "$name round $round: $rps req/s, p99 $p99${errors:+, non-2xx $errors}"
}

for round in $(seq "$rounds"); do
    port=$(free_port)
    mkdir -p "$work/nginx"
    cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  server { listen 127.0.0.1:$port; location / { return 200 "ok"; } }
}
CONF
    "$nginx" -c "$work/nginx/nginx.conf" -p "$work/nginx" &
    started $!
    nginx_pid=$!
    wait_port "$port"
    run "nginx return-200" "http://127.0.0.1:$port/"
    kill "$nginx_pid" && wait "$nginx_pid" 2>/dev/null || true

    port=$(free_port)
    rm -rf "$work/quiver"
    "$quiver" serve --data-dir "$work/quiver" --http-addr "127.0.0.1:$port" \
        --resp-addr 127.0.0.1:0 --native-addr 127.0.0.1:0 --quic-addr 127.0.0.1:0 \
        --cache-save '' --log-level warn 2> "$work/quiver.log" &
    started $!
    quiver_pid=$!
    wait_port "$port"
    head -c 64 /dev/zero | tr '\0' 'v' \
        | curl -sf -X PUT --data-binary @- "http://127.0.0.1:$port/v1/cache/0/k64" > /dev/null
    run "quiver /health" "http://127.0.0.1:$port/health"
    run "quiver publish-256B" "http://127.0.0.1:$port/v1/streams/bench/http/pub/messages" "$work/post.lua"
    run "quiver cache-get-64B" "http://127.0.0.1:$port/v1/cache/0/k64"
    kill "$quiver_pid" && wait "$quiver_pid" 2>/dev/null || true
done
