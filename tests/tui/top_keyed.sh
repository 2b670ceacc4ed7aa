#!/bin/sh
# top_keyed.sh: t in delayq top gives a scheduled task a new time, in tmux, on a queue
# of its own (no worker): a duration from now and an RFC 3339 time, each asked y/N and
# checked with delayq show and the audit log; a typo is told and changes nothing; t on
# Failed says where it works; --read-only refuses it.
. "$(dirname "$0")/lib.sh"
start_demo
q=keyed
"$bin" enqueue -q "$q" --id move-me --delay 1h --json '{"n":1}' >/dev/null
due_of() { "$bin" show -q "$q" move-me | sed -n 's/^due  *\([^ ]*\).*/\1/p'; }
d0=$(due_of)
main_session "$bin top -q $q --refresh 250ms"
tm send-keys -t top 2
wait_for screen_has "move-me" || bad "the Future pane shows the task"

# a duration: 2h from now
tm send-keys -t top t
wait_for screen_has "reschedule move-me to" || bad "t asks for the new time"
tm send-keys -t top 2 h Enter
wait_for screen_has "reschedule task move-me to 2h from now? y/N" || bad "t confirms first"
tm send-keys -t top y
moved() { [ "$(due_of)" \> "$d0" ]; }
if wait_for screen_has "rescheduled move-me: due" && wait_for moved; then
  ok "t 2h moved the task ($d0 -> $(due_of))"
else bad "t with a duration"; fi
"$bin" show -q "$q" move-me | grep -q "(in 1h5" && ok "... to about 2 h from now" ||
  bad "due about 2 h from now"
"$bin" audit -q "$q" --limit 1 | grep -q "reschedule  move-me" &&
  ok "... recorded in the audit log" || bad "audit entry"

# an RFC 3339 time
at=$(date -u -d '+3 days' +%Y-%m-%dT08:00:00Z)
tm send-keys -t top t
wait_for screen_has "reschedule move-me to" || bad "t asks again"
tm send-keys -t top -l "$at"
tm send-keys -t top Enter
wait_for screen_has "? y/N" && tm send-keys -t top y
at_time() { [ "$(due_of)" = "${at%Z}.000Z" ]; }
if wait_for at_time; then ok "t $at moved it there"
else bad "t with an RFC 3339 time (due $(due_of))"; fi

# a typo: told, nothing changes
d1=$(due_of)
tm send-keys -t top t
wait_for screen_has "reschedule move-me to" && tm send-keys -t top x y z Enter
if wait_for screen_has "not rescheduled" && [ "$(due_of)" = "$d1" ]; then
  ok "a time that is neither a duration nor RFC 3339 is told, nothing changes"
else bad "typo"; fi
# n at the question cancels
tm send-keys -t top t
wait_for screen_has "reschedule move-me to" && tm send-keys -t top 5 m Enter
wait_for screen_has "? y/N" && tm send-keys -t top n
if wait_for screen_has "cancelled" && [ "$(due_of)" = "$d1" ]; then ok "n cancels"
else bad "n at the question"; fi
# on Failed it says where it works
tm send-keys -t top 4 t
wait_for screen_has "go to Due (1) or Future (2)" && ok "t on Failed says where it works" ||
  bad "t on Failed"
tm send-keys -t top q
wait_for gone || bad "quit"

# --read-only refuses it
session top 140 40 "$bin top -q $q --read-only"
if wait_for screen_has "READ-ONLY"; then
  tm send-keys -t top 2
  wait_for screen_has "move-me"
  tm send-keys -t top t
  if wait_for screen_has "read-only: actions are disabled" && [ "$(due_of)" = "$d1" ]; then
    ok "--read-only refuses t"
  else bad "read-only refusal"; fi
else bad "read-only badge"; fi
tm send-keys -t top q
wait_for gone || bad "read-only session quits"
finish
