# Shared by the benchmark scripts (sourced, not run): a work directory removed on exit,
# free loopback ports, waiting for a listener, starting one of the compared Redis-protocol
# servers, and stopping every server the script started in the background and recorded
# with `started $!`.

work=$(mktemp -d)
server_pids=()

started() {
    server_pids+=("$1")
}

stop_servers() {
    for pid in "${server_pids[@]}"; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    done
    rm -rf "$work"
}
trap stop_servers EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "nothing listens on 127.0.0.1:$1" >&2
    return 1
}

# start_resp_server NAME PORT [DIR APPENDFSYNC]: starts valkey, redis or quiver (binaries
# from $valkey, $redis and $quiver) on PORT, without persistence, or with DIR and
# APPENDFSYNC with the append-only file on in DIR and no snapshot rules; waits for it and
# sets $pid. Quiver also gets the flags in $EXTRA_QUIVER_ARGS; with $SERVER_CPU set, the server
# runs on those CPUs only (taskset).
start_resp_server() {
    local dir=${3:-$work/$1} redis_aof=(--appendonly no) quiver_aof=() on_cpus=()
    if [ -n "${4:-}" ]; then
        redis_aof=(--appendonly yes --appendfsync "$4" --dir "$dir")
        quiver_aof=(--cache-appendonly true --cache-appendfsync "$4")
    fi
    if [ -n "${SERVER_CPU:-}" ]; then
        on_cpus=(taskset -c "$SERVER_CPU")
    fi
    case $1 in
    valkey) "${on_cpus[@]}" "$valkey" --port "$2" --save '' "${redis_aof[@]}" >/dev/null 2>&1 & ;;
    redis) "${on_cpus[@]}" "$redis" --port "$2" --save '' "${redis_aof[@]}" >/dev/null 2>&1 & ;;
    quiver)
        # shellcheck disable=SC2086 # EXTRA_QUIVER_ARGS is a list of flags
        "${on_cpus[@]}" "$quiver" serve --data-dir "$dir" --resp-addr "127.0.0.1:$2" --cache-save '' \
            "${quiver_aof[@]}" ${EXTRA_QUIVER_ARGS:-} \
            --http-addr 127.0.0.1:0 --native-addr 127.0.0.1:0 --quic-addr 127.0.0.1:0 \
            --log-level warn >/dev/null 2>&1 &
        ;;
    esac
    pid=$!
    started "$pid"
    wait_port "$2"
}
