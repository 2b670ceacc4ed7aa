#!/bin/sh
# top_keys.sh: the Keys view (K) of delayq top, in tmux at 80x24, on queues of their
# own in the demo's redis-server: one row per key with its counts and oldest due age,
# the header saying which counts are exact and which sampled, a key with a bidi override
# (enqueue --key refuses control bytes; unit.view renders an OSC sequence) shown escaped
# so it cannot reorder the row, read again
# every 2 s while open (a new key appears), Esc back; a queue without keyed tasks says
# how keys are given.
. "$(dirname "$0")/lib.sh"
start_demo
q=keyed
enq() { "$bin" enqueue -q "$q" --key "$1" --json '{}' >/dev/null || bad "enqueue --key $1"; }
enq acme
enq acme
enq acme
enq globex
enq "$(printf 'evil\342\200\256gpj.exe')"

main_session "$bin top -q $q --refresh 250ms"
tm resize-window -t top -x 80 -y 24
wait_for screen_has "queue $q" || bad "top on the queue"
tm send-keys -t top K
if wait_for screen_has "keys of $q: 3 with tasks" &&
  screen_has "Exact: PARKED, IN FLIGHT" && screen_has "Sampled: DUE among the oldest 5 of 5"; then
  ok "K opens the Keys view; its header says which counts are exact and which sampled"
else bad "Keys view"; fi
# acme first (most tasks), with its 3 due and an oldest due age
if screen | grep -qE '^ +3 +0 +0 +0  [0-9.]+[a-z0-9.]* ago +acme$'; then
  ok "... one row per key: due, parked, in flight, failed, oldest due age, the key"
else bad "acme's row"; fi
if screen_has 'evil\u{202e}gpj.exe' && screen_lacks "$(printf '\342\200\256')"; then
  ok "... a key with a bidi override is shown escaped, never raw"
else bad "hostile key escaped"; fi

# read again while open: a new key shows up without a key pressed
enq initech
if wait_for screen_has "keys of $q: 4 with tasks" && screen_has "initech"; then
  ok "... refreshed while open (a new key appears)"
else bad "Keys view refresh"; fi
tm send-keys -t top Escape
if wait_for screen_has "[1] Due" || wait_for screen_has "Due ("; then
  ok "Esc goes back to the main screen"
else bad "Esc back"; fi
tm send-keys -t top q
wait_for gone || bad "quit"

# a queue whose tasks have no key
"$bin" enqueue -q plain --json '{}' >/dev/null
session top 80 24 "$bin top -q plain --read-only"
wait_for screen_has "queue plain" || bad "top on plain"
tm send-keys -t top K
if wait_for screen_has "No keyed tasks on this queue" && screen_has "delayq enqueue --key KEY"; then
  ok "with no keyed tasks the view says so and how keys are given (also --read-only)"
else bad "empty Keys view"; fi
tm send-keys -t top q q
wait_for gone || bad "quit plain"
finish
