#!/bin/sh
# top_views.sh: delayq top end to end, in tmux, on the live demo queue: the views beyond
# the main screen: the Overview (Q), a switch of queue and Esc back to the Overview, the
# Workers view (W) that refreshes while open, a queue the server does not know, and the
# Overview that opens by itself with two queues and no -q.
. "$(dirname "$0")/lib.sh"
start_demo
main_session "$bin top --refresh 250ms"
wait_for screen_has "[4] Failed (" || bad "top on the demo queue"

# 7b. Q opens the Overview of the server's queues, worst first; Enter switches to the one
# picked, Esc there comes back to the Overview
screen_re() { screen | grep -qE -- "$1"; }
# Enter on queue $1's row (two queues: the first row or the last)
pick() {
  if screen | sed -n 3p | grep -qE "^.(ok|warn|bad) +$1 "; then tm send-keys -t top g Enter
  else tm send-keys -t top G Enter; fi
}
"$bin" enqueue -q other --json '{"n":1}' >/dev/null
tm send-keys -t top Q
if wait_for screen_has "overview: 2 queues on 127.0.0.1:" && screen_re '^\*(ok|warn|bad) +demo ' &&
   screen_re '^ (ok|warn|bad) +other '; then
  ok "Q opens the Overview (demo, shown, and other)"
else bad "queue picker"; fi
pick other
if wait_for screen_has "| queue other (Q: 2 queues)" && wait_for screen_has "[1] Due (1)"; then
  ok "Enter switches to queue other"
else bad "switch queue"; fi
tm send-keys -t top Escape
wait_for screen_re '^\*(ok|warn|bad) +other ' && ok "Esc comes back to the Overview" ||
  bad "Esc back to the Overview"
pick demo
wait_for screen_has "| queue demo (Q: 2 queues)" && ok "and back to demo" || bad "switch back"

# 7c. W shows the worker view; Esc goes back
tm send-keys -t top W
if wait_for screen_has "workers of demo"; then ok "W shows the workers of the queue"
else bad "worker view"; fi
# W refreshes while open: a worker that starts (on the paused queue: it claims nothing)
# shows up, and goes when it exits, with no key pressed
"$bin" pause -q demo --for 2m --reason "W refresh test" >/dev/null
"$bin" work -q demo --quiet --name w-refresh-probe -- true &
probe=$!
if wait_for screen_has "w-refresh-probe"; then
  screen_has "as of each worker's last beat (every 30s)" &&
    ok "W says its counters are as of the last beat, every 30s" || bad "W beat note"
  kill "$probe"; wait "$probe" 2>/dev/null
  wait_for screen_lacks "w-refresh-probe" && ok "W refreshes while open (a worker came and went)" ||
    bad "W refresh: the worker that exited is still shown"
else kill "$probe"; wait "$probe" 2>/dev/null; bad "W refresh: a new worker is not shown"; fi
"$bin" resume -q demo >/dev/null || bad "resume after the W test"
wait_for paused_is false || bad "the W test's pause still in Redis"
tm send-keys -t top Escape
wait_for screen_has "[4] Failed" || bad "back from the worker view"
# the badge goes once the refresh after the resume (up to 5 s apart while nothing
# moves, longer under ASan) has arrived
tm send-keys -t top C-l
wait_for_n 300 screen_lacks " PAUSED " || bad "the W test's pause still shown"

# 8-. a queue the server does not know (a typo) opens, marked: the badge, and a verdict
# that names the close queue instead of "all well"
session top 140 40 "$bin top -q dmeo --refresh 250ms"
if wait_for screen_has " UNKNOWN QUEUE" && screen_has '!! queue "dmeo" is not known on 127.0.0.1:' &&
   screen_has "(did you mean demo?)" && screen_lacks "all well"; then
  ok "top -q dmeo: UNKNOWN QUEUE badge, the verdict says did you mean demo"
else bad "unknown queue in top"; fi
tm send-keys -t top q
wait_for gone || bad "quit from the unknown queue"

# 8a. without -q or $DELAYQ_QUEUE, more than one queue opens the Overview by itself
session top 140 40 "env -u DELAYQ_QUEUE $bin top"
if wait_for screen_has "overview: 2 queues on 127.0.0.1:" && screen_has "demo" && screen_has "other"; then
  # Esc there does not show the unused default queue (it would look healthy): it stays
  screen_has "Enter open  q quit" || bad "the first picker's footer says q quits"
  tm send-keys -t top Escape
  wait_for screen_has "no queue is shown yet" && screen_lacks "| queue default" &&
    ok "Esc in the first picker stays in it" || bad "Esc in the first picker"
  pick demo
  wait_for screen_has "| queue demo (Q: 2 queues)" && ok "two queues and no -q: the Overview opens" ||
    bad "pick from the auto-opened Overview"
else bad "picker did not open for the default queue"; fi
tm send-keys -t top q
wait_for gone || bad "quit after the picker"

finish
