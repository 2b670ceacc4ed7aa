#!/bin/sh
# top_outage.sh: delayq top end to end, in tmux, on the live demo queue, when Redis
# misbehaves: a stall (keys still answer), a disconnect (a banner, keys, q), and the
# terminal closing under the live demo (SIGHUP).
. "$(dirname "$0")/lib.sh"
start_demo

# 9b. Redis stalls (CLIENT PAUSE, 8 s) while top waits up to 5 s for each reply: the
# action and the refreshes wait on the Redis thread, the keyboard does not. Drawing the
# help overlay within 2.5 s of the keys is only possible if no key waited for Redis.
session top 140 40 "$bin top --refresh 250ms --timeout 5s"
wait_for screen_has "[4] Failed" || bad "start top for the stall"
redis-cli -p "$port" client pause 8000 all >/dev/null
paused() { ! timeout 0.3 redis-cli -p "$port" ping >/dev/null 2>&1; }
unpaused() { timeout 1 redis-cli -p "$port" ping >/dev/null 2>&1; }
if paused; then
  tm send-keys -t top L
  tm send-keys -t top '?'
  if wait_for_n 50 screen_has "r            Failed: requeue" && paused; then
    ok "keys answer while Redis stalls (help drawn within 2.5 s, during the pause)"
  else bad "keys during a stall"; fi
  wait_for_n 200 unpaused || bad "Redis still paused after 10 s"
  # the audit log asked for during the stall arrives once Redis answers, over the help
  # (the title, not the help text, which also says "the audit log of")
  wait_for screen_has "audit log of demo, newest first" || bad "the audit log asked for during the stall"
  tm send-keys -t top Escape 4
  if wait_for screen_has "[4] Failed (" && wait_for screen_lacks "DISCONNECTED"; then
    ok "recovers after the stall"
  else bad "after the stall"; fi
else bad "CLIENT PAUSE did not stall Redis"; fi
tm send-keys -t top q
wait_for gone || bad "quit after the stall"

# 10. Redis goes away: a banner, keys still work, q still quits
session top 140 40 "$bin top --refresh 250ms"
# the first refresh arrived (the panes are drawn, "(loading)", before it: under ASan a
# shutdown before it left no banner to keep)
wait_for screen_has "[4] Failed" && wait_for screen_lacks "(loading)" || bad "restart top"
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
if wait_for screen_has "DISCONNECTED" && screen_has "retrying in"; then
  tm send-keys -t top 2
  if wait_for screen_has "[2] Future"; then ok "disconnected banner; keys still answer"
  else bad "keys while disconnected"; fi
else bad "disconnected banner"; fi
tm send-keys -t top q
if wait_for gone; then ok "q quits while disconnected"; else bad "quit while disconnected"; fi

# 11. closing the terminal (SIGHUP) under the live demo: everything it started stops
# (its own tmux server, as every session here)
session hup 100 30 "$bin demo -q hupdemo"
hup_up() { tm capture-pane -p -t hup 2>/dev/null | grep -qF "queue hupdemo"; }
if wait_for hup_up; then
  pane_pid=$(tm list-panes -t hup -F '#{pane_pid}')
  tm kill-server
  demo_gone() { ! kill -0 "$pane_pid" 2>/dev/null; }
  if wait_for demo_gone; then ok "demo exits when its terminal closes"
  else bad "demo after SIGHUP"; kill -9 "$pane_pid" 2>/dev/null; fi
else bad "live demo start"; fi

finish
