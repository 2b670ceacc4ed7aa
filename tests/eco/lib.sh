# lib.sh: what the ecosystem tests share (sourced, POSIX sh). A private redis-server on
# a free loopback port, started without daemonizing so its PID is ours, stopped by PID
# with a deadline; every wait polls a named condition up to a deadline, never a sleep.
bin=${DELAYQ_BIN:?}
src=${DQ_SOURCE_ROOT:?}
build=${DQ_BUILD_ROOT:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/dq-eco.XXXXXX")
passed=0
failed=0
pids=""
redis_pid=""
redis_port=""
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; }
# check NAME CMD...: ok/bad from CMD's status
check() { n=$1; shift; if "$@"; then ok "$n"; else bad "$n"; return 1; fi; }
finish() {
  echo "# $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# need TOOL...: a missing tool fails the test (exit 77, meson SKIP, only when the
# developer set DQ_TEST_ALLOW_SKIP=1), like a missing redis-server
need() {
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 && continue
    echo "# $t not found (see .ci/deps)" >&2
    [ "${DQ_TEST_ALLOW_SKIP:-}" = 1 ] && exit 77
    exit 1
  done
}

mono_ms() { date +%s%3N; }
# wait_for MS WHAT CMD...: runs CMD every 20 ms until it succeeds or MS pass
wait_for() {
  limit=$1 what=$2
  shift 2
  end=$(($(mono_ms) + limit))
  while :; do
    "$@" && return 0
    [ "$(mono_ms)" -ge "$end" ] && { echo "# wait_for: timed out after $limit ms waiting for $what" >&2; return 1; }
    sleep 0.02
  done
}

# free_port: a port the kernel had free a moment ago (callers retry on a lost race)
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# not CMD...: succeeds when CMD fails (works for shell functions too)
not() { ! "$@"; }
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
# stop_pid PID [SIGNAL]: signal (TERM), up to 5 s to exit, then SIGKILL; reaps it
stop_pid() {
  [ -n "$1" ] || return 0
  kill -"${2:-TERM}" "$1" 2>/dev/null
  wait_for 5000 "pid $1 to exit" dead "$1" || kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}

redis_ping() { [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" = PONG ]; }
# redis_start [PORT]: a private server (a new free port unless PORT); sets redis_pid,
# redis_port, DELAYQ_URL. A lost port race is retried on a new port.
redis_start() {
  server=${DQ_REDIS_SERVER:-redis-server}
  if ! command -v "$server" >/dev/null 2>&1; then
    echo "# redis-server not found" >&2
    [ "${DQ_TEST_ALLOW_SKIP:-}" = 1 ] && exit 77
    exit 1
  fi
  mkdir -p "$work/redis"
  tries=0
  while [ $tries -lt 5 ]; do
    redis_port=${1:-$(free_port)}
    "$server" --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" --save '' \
      --appendonly no --daemonize no --logfile "$work/redis/redis.log" &
    redis_pid=$!
    if wait_for 5000 "redis-server on port $redis_port" redis_ping; then
      DELAYQ_URL="redis://127.0.0.1:$redis_port"
      export DELAYQ_URL
      return 0
    fi
    stop_pid "$redis_pid" KILL
    redis_pid=
    [ -n "${1:-}" ] && break
    tries=$((tries + 1))
  done
  echo "# could not start redis-server" >&2
  exit 1
}
redis_stop() { stop_pid "$redis_pid"; redis_pid=; }

# spawn CMD...: runs CMD in the background; remembered for cleanup; sets spawned
spawn() {
  "$@" &
  spawned=$!
  pids="$pids $spawned"
}
cleanup() {
  for p in $pids; do alive "$p" && stop_pid "$p" KILL; done
  [ -n "$redis_pid" ] && stop_pid "$redis_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
