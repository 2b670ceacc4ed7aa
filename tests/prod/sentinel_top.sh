#!/bin/sh
# sentinel_top.sh: delayq top through redis-sentinel://, in tmux: it shows the queue
# and the master "via sentinel mymaster"; the master is killed with SIGKILL and the
# sentinels promote the replica; the same open inspector then shows the new master's
# address and a task enqueued after the failover, without a restart.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
. "$here/sentinel_lib.sh"
need redis-cli tmux
sock="dqsent$$"
tm() { tmux -L "$sock" -f /dev/null "$@"; }
screen_has() { tm capture-pane -p -t top | grep -qF -- "$1"; }
show_screen() { tm capture-pane -p -t top 2>/dev/null | sed 's/^/# /'; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT

sentinel_setup || { bad "five servers up"; finish; exit 1; }
export DELAYQ_URL="$SURL" DELAYQ_QUEUE=topq
for i in 1 2 3; do "$bin" enqueue --json "{\"n\":$i}" >/dev/null || bad "enqueue $i"; done

tm new-session -d -s top -x 140 -y 30 "$bin top --refresh 250ms; sleep 30"
check "top through the sentinels shows the 3 due tasks" \
  wait_for 15000 "3 due" screen_has "[1] Due (3)" || show_screen
check "top names the master via sentinel mymaster" \
  wait_for 5000 "the endpoint" screen_has "127.0.0.1:$master_port via sentinel mymaster" ||
  show_screen

check "the sentinels promote the replica after a SIGKILL" failover_kill
enq() { "$bin" enqueue --json '{"n":4}' >/dev/null 2>&1; }
check "enqueue on the new master" wait_for 20000 "an enqueue" enq
check "the open top shows the new master's address" \
  wait_for 30000 "the new endpoint" screen_has "127.0.0.1:$replica_port via sentinel mymaster" ||
  show_screen
check "... and the task enqueued after the failover" \
  wait_for 15000 "4 due" screen_has "[1] Due (4)" || show_screen
tm send-keys -t top q
gone() { ! screen_has "[1] Due"; }
check "q quits" wait_for 5000 "top to quit" gone
finish
