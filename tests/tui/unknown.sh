#!/bin/sh
# unknown.sh: delayq top does not say "(nothing changed)" of an action whose reply never
# came: it re-reads the audit log and says what happened. Under CLIENT PAUSE WRITE the
# requeue's FCALL reaches Redis and is held past top's --timeout (reads, refreshes and
# the audit log included, still answer); top gives up, Redis drops the held command with
# the connection, and the audit log, read again, has no entry for it: top says it did
# not run, and the task is still failed once the pause is over. A private redis-server
# and tmux; deadline waits only (tests/eco/lib.sh).
set -u
. "$(dirname "$0")/../eco/lib.sh"
need redis-cli tmux

redis_start
r() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
q=unknown
"$bin" enqueue -q $q --max-attempts 1 --json '{"n":1}' >/dev/null
spawn "$bin" work -q $q --quiet -- false
w=$spawned
failed_one() { "$bin" stats -q $q --json | grep -q '"failed":1'; }
check "a failed task to requeue" wait_for 15000 "the task failed" failed_one
stop_pid "$w"

tm() { tmux -L "dqunk$$" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT
tm -f /dev/null new-session -d -s top -x 140 -y 30 \
  "$bin top -q $q --timeout 1s; sleep 60"
screen_has() { tm capture-pane -p -t top | grep -qF -- "$1"; }
check "top shows the failed task" wait_for 15000 "the Failed pane" screen_has "[4] Failed (1)"
tm send-keys -t top 4
tm send-keys -t top r
check "r asks first" wait_for 5000 "the confirmation" screen_has "now? y/N"
r CLIENT PAUSE 6000 WRITE >/dev/null
tm send-keys -t top y
if wait_for 15000 "top's verdict" screen_has "the audit log has no entry for it: it did not run"; then
  ok "after no answer in time, top read the audit log: the requeue did not run"
else
  bad "top's status: $(tm capture-pane -p -t top | tail -n 2)"
fi
check "... and it does not claim to know more than that" not screen_has "(nothing changed)"
r CLIENT UNPAUSE >/dev/null
check "... rightly: the task is still failed" failed_one
tm kill-server 2>/dev/null
finish
