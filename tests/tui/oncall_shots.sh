#!/bin/sh
# oncall_shots.sh: makes screenshots/oncall-*.png from real runs of the on-call
# scenarios in docs/OPERATIONS.md, each on its own queue of one private demo server, at
# 80x24: nobody consuming (a worker killed), a handler that hangs, a downstream outage
# (the handler exits 75), a queue paused by someone else, and expired leases after a
# worker was killed holding tasks. Usage: tests/tui/oncall_shots.sh [BUILD_DIR]
# Needs tmux, python3-pil and fonts-dejavu-core (Debian packages). A picture maker, not a
# test: the waits are bounded and it stops everything it started.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build}/src/delayq
out=$root/screenshots
work=$(mktemp -d)
sock="dqoncall$$"
tm() { tmux -L "$sock" "$@"; }
pids=
cleanup() {
  tm kill-server 2>/dev/null || true
  for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$bin" demo --keep >"$work/demo.out" 2>&1 &
pids="$pids $!"
i=0
until grep -qo 'redis://127.0.0.1:[0-9]*' "$work/demo.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 100 ] || { echo "demo did not start" >&2; exit 1; }; sleep 0.05
done
export DELAYQ_URL=$(grep -o 'redis://127.0.0.1:[0-9]*' "$work/demo.out" | head -1)
export TERM=xterm-256color

# until CMD...: runs CMD every 100 ms until it succeeds (20 s at most)
until_ok() {
  i=0
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 200 ] || { echo "timed out: $*" >&2; exit 1; }; sleep 0.1
  done
}
registered() { "$bin" workers -q "$1" --json | grep -q '"live":[1-9]'; }
stats_has() { "$bin" stats -q "$1" --json | grep -q "$2"; }
# work Q ARGS... -- CMD: a background worker on Q, remembered for the cleanup
work() {
  q=$1; shift
  "$bin" work -q "$q" --quiet "$@" >>"$work/work.log" 2>&1 &
  last=$!
  pids="$pids $last"
}
# shot NAME QUEUE TEXT [KEYS]: delayq top on QUEUE at 80x24 until TEXT shows, then a PNG
shot() {
  tm -f /dev/null new-session -d -s "$1" -x 80 -y 24 "$bin top -q $2"
  [ -n "${4:-}" ] && tm send-keys -t "$1" "$4"
  i=0
  until tm capture-pane -p -t "$1" | grep -qF -- "$3"; do
    i=$((i + 1)); [ $i -lt 200 ] || { echo "timed out waiting for: $3" >&2; exit 1; }; sleep 0.1
  done
  sleep 1 # let the rates settle: this is a picture, not a test
  tm capture-pane -p -e -t "$1" >"$work/$1.txt"
  /usr/bin/python3 "$root/tests/tui/render.py" "$work/$1.txt" "$out/oncall-$1.png" 80
  tm send-keys -t "$1" q
  echo "screenshots/oncall-$1.png"
}

# 1. nobody consuming: the only worker was killed; 40 tasks wait
"$bin" config -q payments worker_lost_ms=1s >/dev/null
work payments -- true
until_ok registered payments
kill -9 "$last"
for n in $(seq 40); do "$bin" enqueue -q payments --json "{\"charge\":$n}" >/dev/null; done
shot noworker payments "no live worker"

# 2. a handler hangs: its task runs on, its lease kept renewed
"$bin" config -q invoices alert_running_ms=2s >/dev/null 2>&1 || true
work invoices --lease 10s -- sleep 600
"$bin" enqueue -q invoices --json '{"invoice":42}' >/dev/null
until_ok stats_has invoices '"inflight":1'
shot hung invoices "hung handler" 3

# 3. a downstream outage: the handler exits 75, tasks wait for their retry
"$bin" config -q webhooks backoff_base_ms=20s >/dev/null
work webhooks -- sh -c 'echo "upstream 503 from payments-api" >&2; exit 75'
for n in 1 2 3 4 5; do "$bin" enqueue -q webhooks --json "{\"hook\":$n}" >/dev/null; done
until_ok stats_has webhooks '"retried":5'
shot outage webhooks "last error" 2

# 4. paused by someone else
"$bin" pause -q demo --for 20m --reason "deploy rollback" --who alice@ops >/dev/null
shot paused demo "paused by alice@ops"

# 5. a worker killed holding tasks: its leases ran out
"$bin" config -q emails worker_lost_ms=1s >/dev/null
work emails --lease 2s --concurrency 3 -- sleep 600
for n in 1 2 3; do "$bin" enqueue -q emails --json "{\"to\":\"user$n@example.com\"}" >/dev/null; done
until_ok stats_has emails '"inflight":3'
kill -9 "$last"
shot expired emails "expired" 3
