# lib.sh: what the tests/tui/top_*.sh scripts share (sourced, not run): a private tmux
# server per session, deadline waits on the screen, ok/bad, the demo queue, cleanup.
# Every expectation is a deadline poll of the screen or of Redis, never a sleep.
set -u
bin=${DELAYQ_BIN:?}
work=$(mktemp -d)
sock="dqtest$$"
# one tmux server per session (session below): a step that failed cannot leave its
# session behind for the next step to type into, and no session is added to a server
# that is exiting or has "window-size manual" set (tmux 3.3a crashes on both)
srv=0
tm() { tmux -L "$sock.$srv" "$@"; }
demo_pid=
cleanup() {
  i=0
  while [ $i -le $srv ]; do tmux -L "$sock.$i" kill-server 2>/dev/null; i=$((i + 1)); done
  [ -n "$demo_pid" ] && kill "$demo_pid" 2>/dev/null && wait "$demo_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; tm capture-pane -p -t top 2>/dev/null | sed 's/^/# /'; }
# the summary line and the script's exit status
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# wait_for_n N CMD...: retries CMD every 50 ms, N times at most
wait_for_n() {
  n=$1
  shift
  i=0
  while [ $i -lt "$n" ]; do
    "$@" && return 0
    i=$((i + 1))
    sleep 0.05
  done
  return 1
}
# wait_for CMD...: up to 10 s (one script alone met 5 s; the top_*.sh scripts run side
# by side, under ASan on 2 cores in CI; a step that needs a shorter bound says so with
# wait_for_n)
wait_for() { wait_for_n 200 "$@"; }
screen() { tm capture-pane -p -t top; }
screen_has() { screen | grep -qF -- "$1"; }
screen_lacks() { ! screen | grep -qF -- "$1"; }
gone() { ! tm has-session -t top 2>/dev/null; }
# session NAME COLS ROWS COMMAND: ends the previous step's tmux server, whatever it
# still runs, and starts the session on a new one (a few tries, each on a new server)
session() {
  tries=0
  while [ $tries -lt 20 ]; do
    tm kill-server 2>/dev/null
    srv=$((srv + 1))
    tm -f /dev/null new-session -d -s "$1" -x "$2" -y "$3" "$4" 2>/dev/null && return 0
    tries=$((tries + 1))
    sleep 0.05
  done
  return 1
}
# main_session COMMAND: session "top" at 140x40 that the script resizes (window-size
# manual, set after the session is up) and where OSC 52 from the app lands in a tmux
# paste buffer
main_session() {
  session top 140 40 "$1" || return 1
  tm set -g window-size manual
  tm set -s set-clipboard on
}

# start_demo: the demo queue of this script (delayq demo --keep --static: a private
# redis-server on a free loopback port, filled through the library); sets url and port
# and points DELAYQ_URL and DELAYQ_QUEUE at it
start_demo() {
  "$bin" demo --keep --static >"$work/demo.out" 2>&1 &
  demo_pid=$!
  wait_for url_ready || { echo "not ok - demo did not start"; cat "$work/demo.out"; exit 1; }
  url=$(grep -o 'redis://127.0.0.1:[0-9]*' "$work/demo.out" | head -1)
  port=${url##*:}
  export DELAYQ_URL="$url" DELAYQ_QUEUE=demo
}
url_ready() { grep -qo 'redis://127.0.0.1:[0-9]*' "$work/demo.out" 2>/dev/null; }
# the first "NAME": number of stats --json (the queue's count, before the counters)
stat() { "$bin" stats --json | grep -o "\"$1\":[0-9-]*" | head -1 | cut -d: -f2; }
# paused_is true|false: what stats --json says of the queue's pause
paused_is() { "$bin" stats --json | grep -qF "\"paused\":$1"; }
