#!/bin/sh
# top_overview.sh: delayq top with five queues and no -q opens the Overview, worst first:
# the one queue with tasks due and no worker is the first row (its words below the rows),
# Enter opens it, Esc comes back; the rows refresh while it is open (a sixth queue shows
# up with no key pressed); outside a UTF-8 locale the sparklines are ASCII. A private
# redis-server and tmux at 80x24; deadline waits only (tests/eco/lib.sh).
set -u
. "$(dirname "$0")/../eco/lib.sh"
need tmux
redis_start
unset DELAYQ_QUEUE
for q in q1 q2 q3 q4; do
  "$bin" enqueue -q $q --json '{"n":1}' >/dev/null
  spawn "$bin" work -q $q --quiet --name "w-$q" -- true
done
"$bin" enqueue -q orphan --json '{"n":1}' >/dev/null
"$bin" enqueue -q orphan --json '{"n":2}' >/dev/null
all_done() {
  for q in q1 q2 q3 q4; do "$bin" stats -q $q --json | grep -q '"due":0,' || return 1; done
}
check "the four workers ran their tasks" wait_for 15000 "tasks done" all_done

# one tmux server per session: tmux 3.3a must not get a session while its server exits
sock="dqov$$"
tm() { tmux -L "$sock" "$@"; }
trap 'tmux -L "dqov$$" kill-server 2>/dev/null; tmux -L "dqov$$.b" kill-server 2>/dev/null; cleanup' EXIT
screen() { tm capture-pane -p -t top; }
screen_has() { screen | grep -qF -- "$1"; }
row3_is() { screen | sed -n 3p | grep -qE -- "$1"; }
tm -f /dev/null new-session -d -s top -x 80 -y 24 "LC_ALL=C.UTF-8 $bin top --refresh 250ms"
check "five queues and no -q: the Overview opens" wait_for 15000 "the Overview" \
  screen_has "overview: 5 queues on 127.0.0.1:$redis_port, worst first"
check "the queue with no worker is the first row" wait_for 5000 "orphan first" \
  row3_is '^ warn orphan +2 '
check "its verdict below the rows" screen_has " orphan: no worker registered while 2 are due"
check "the others are ok, each with its live worker" sh -c \
  "[ \$(tmux -L $sock capture-pane -p -t top | grep -cE '^ ok   q[1-4] .* 1\$') -eq 4 ]"
check "their tasks done this minute show in DONE/min" screen_has "█"
tm send-keys -t top Enter
check "Enter opens orphan" wait_for 10000 "orphan's screen" screen_has "| queue orphan (Q: 5 queues)"
tm send-keys -t top Escape
check "Esc comes back to the Overview, orphan marked as shown" wait_for 10000 "back" \
  row3_is '^\*warn orphan '
"$bin" enqueue -q q5 --json '{"n":1}' >/dev/null
check "the Overview refreshes while open: q5 appears" wait_for 10000 "q5" \
  screen_has "overview: 6 queues on"
tm send-keys -t top q
tm kill-server 2>/dev/null
sock="dqov$$.b"
tm -f /dev/null new-session -d -s top -x 80 -y 24 "LC_ALL=C $bin top"
check "LC_ALL=C: the Overview too" wait_for 15000 "the Overview" screen_has "overview: 6 queues"
check "ASCII sparklines, no block characters" sh -c \
  "tmux -L $sock capture-pane -p -t top | grep -qE '^ ok   q[1-4] .*@' &&
   ! tmux -L $sock capture-pane -p -t top | grep -q '█'"
finish
