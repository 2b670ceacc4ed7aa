#!/bin/sh
# top_history.sh: the History view (H) of delayq top against a real redis-server (the
# demo's), in tmux at 80x24. Minute hashes seeded with redis-cli as the scripts write
# them (docs/PROTOCOL.md, "History: per-minute rollups": dq:{Q}:roll:<minute>): healthy
# minutes, a failure bump of two minutes, a recovery; a real `delayq pause` and `resume`
# for the audit log's marks. The view shows the bump in the failed panel, the mark under
# the current minute and its legend, ] and [ switch the span, --ascii draws '#', Esc
# goes back; the header's due backlog comes from the rollups on a wide screen; with
# history_minutes 0 the view says history is off.
. "$(dirname "$0")/lib.sh"
start_demo
q=hist
rc() { redis-cli -p "$port" "$@"; }
"$bin" enqueue -q "$q" --json '{}' >/dev/null || bad "enqueue"
# the server's minute now; the seeded minutes end before it, so no script touches them
now_min=$(($(rc TIME | head -1) / 60))
seed() { # seed MINUTES_AGO FIELD VALUE ...
  m=$((now_min - $1))
  shift
  rc HSET "dq:{$q}:roll:$m" "$@" >/dev/null || bad "HSET roll:$m"
}
seed 7 d 100 s 100 e 100 h4 100 b 5 a 200
seed 6 d 100 s 100 e 100 h4 100 b 6 a 200
seed 5 d 20 s 140 r 40 f 80 h10 140 b 300 a 60000
seed 4 d 15 s 136 r 41 f 80 h10 136 b 420 a 120000
seed 3 d 240 s 240 q 177 h4 240 b 30 a 900
seed 2 d 100 s 100 h4 100 b 4 a 100
"$bin" pause --who alice@ops -q "$q" --for 10m --reason 'history test' >/dev/null || bad "pause"
"$bin" resume --who alice@ops -q "$q" >/dev/null || bad "resume"

# made at 80x24, not resized to it: a resize racing curses' start can go unseen
session top 80 24 "LC_ALL=C.UTF-8 $bin top -q $q --refresh 250ms"
wait_for screen_has "queue $q" || bad "top on the queue"
tm send-keys -t top H
if wait_for screen_has "history of $q: the last 1h, a column = 1m, UTC (rollups kept 24h)"; then
  ok "H opens the History view: the last hour at 1-minute steps"
else bad "History view"; fi
# the failed panel: its scale is the bump's 80, its top row full only in the two minutes
if screen | grep -qE '^ +80│' && screen | grep -qE '^failed ┤ +██ *$'; then
  ok "... the failure bump: two full columns in the failed panel, scaled to 80"
else bad "failure bump"; fi
if screen_has "totals: done 575 failed 160 retried 81 requeued 177"; then
  ok "... the span's totals are the seeded minutes'"
else bad "totals"; fi
# the pause and resume are in the current minute: the last column's letter (p and u in
# one column: +), and both in the legend with who
if screen | grep -qE '^marks +(\+|pu)$' && screen_has "pause alice@ops" &&
  screen_has "resume alice@ops"; then
  ok "... the audit log's pause and resume marked under the minute, named in the legend"
else bad "marks"; fi
tm send-keys -t top ']'
if wait_for screen_has "history of $q: the last 6h, a column = 5m"; then
  ok "] shows 6 hours at 5-minute steps"
else bad "6h span"; fi
tm send-keys -t top '['
wait_for screen_has "the last 1h, a column = 1m" && ok "[ back to the hour" || bad "[ back"
tm send-keys -t top Escape
if wait_for screen_has "queue $q"; then ok "Esc goes back to the main screen"; else bad "Esc"; fi
tm send-keys -t top q
wait_for gone || bad "quit"

# the header's due backlog from the rollups: "30m" on a screen wide enough for it
session top 200 50 "LC_ALL=C.UTF-8 $bin top -q $q --read-only"
# (from the first sampled minute: 7 minutes ago, or 8 if the minute turned meanwhile)
rolled_backlog() { screen | grep -qE 'due backlog [89]m '; }
if wait_for rolled_backlog; then
  ok "the header's due backlog comes from the rollups (from their first sample)"
else bad "header sparkline"; fi
tm send-keys -t top q
wait_for gone || bad "quit wide"

# --ascii: bars of '#', no block characters
session top 80 24 "LC_ALL=C.UTF-8 $bin top -q $q --ascii --read-only"
wait_for screen_has "queue $q" || bad "top --ascii"
tm send-keys -t top H
if wait_for screen_has "history of $q" && screen | grep -qE '^failed \| +## *$' &&
  screen_lacks "█"; then
  ok "--ascii: the bars are '#', no block characters"
else bad "--ascii"; fi
tm send-keys -t top q q
wait_for gone || bad "quit ascii"

# history off (delayq config history_minutes=0): the view says so
"$bin" config -q "$q" history_minutes=0 >/dev/null || bad "config history_minutes=0"
session top 80 24 "LC_ALL=C.UTF-8 $bin top -q $q --read-only"
wait_for screen_has "queue $q" || bad "top, history off"
tm send-keys -t top H
if wait_for screen_has "History is off for this queue" &&
  screen_has "delayq config -q $q history_minutes=1440"; then
  ok "history_minutes 0: the view says history is off and how to turn it on"
else bad "history off"; fi
tm send-keys -t top q q
wait_for gone || bad "quit off"
finish
