#!/bin/sh
# top_sched.sh: the Schedules view (S) and the Done pane (5) of delayq top, in tmux at
# 80x24, on a queue of its own with real schedules and a real worker: what became of a
# schedule's last run (gone while done retention is off, done once it is on), P pauses
# and resumes the selected schedule after y/N (checked with schedule ls and the audit
# log; n changes nothing), Enter shows the last run's task, --read-only refuses P; Done says how to turn retention on,
# then lists the finished tasks, and Enter shows how one ran.
. "$(dirname "$0")/lib.sh"
start_demo
q=sched
"$bin" schedule add -q "$q" tick --every 1s --json '{"t":1}' >/dev/null
"$bin" schedule add -q "$q" nightly --cron '0 3 * * *' --tz Europe/Berlin --json '{}' >/dev/null
wpid=
# run_worker: a worker on the queue, bounded by timeout whatever happens to the script
run_worker() {
  timeout 60 "$bin" work -q "$q" --quiet -- true >"$work/worker.out" 2>&1 &
  wpid=$!
}
stop_worker() {
  [ -n "$wpid" ] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
  wpid=
}
ticked() { "$bin" schedule ls -q "$q" | grep -q "^tick .* tick@"; }
kept() { [ "$("$bin" ls done -q "$q" | grep -c '^tick@')" -ge 2 ]; }
state_of() { "$bin" schedule ls -q "$q" --json | grep "\"name\":\"$1\"" | grep -o '"paused":[a-z]*'; }

# done retention off: the tick's task is run and not kept
run_worker
wait_for ticked || bad "the worker ran a firing of tick"
stop_worker

main_session "$bin top -q $q --refresh 250ms"
tm resize-window -t top -x 80 -y 24
wait_for screen_has "queue $q" || bad "top on the queue"
tm send-keys -t top 5
if wait_for screen_has "delayq config done_retention=1000 keeps the last 1000"; then
  ok "Done with retention off says how to turn it on"
else bad "Done pane, retention off"; fi

tm send-keys -t top S
if wait_for screen_has "schedules of $q: 2 (0 paused)" && screen_has "0 3 * * * Europe/Berlin" &&
  screen_has "every 1s"; then
  ok "S lists the schedules with their specs (zone, every)"
else bad "Schedules view"; fi
tm send-keys -t top j
if wait_for screen_has "gone" && wait_for screen_has "finished tasks are not kept"; then
  ok "tick's last run is gone (not kept), and the view says how to keep it"
else bad "outcome gone"; fi

# retention on: the next firings are kept; the view, read again every 2 s, says done
"$bin" config -q "$q" done_retention=1000 >/dev/null
run_worker
wait_for kept || bad "done tasks are kept"
stop_worker
if wait_for screen_has "done in" && screen_has "on worker"; then
  ok "... with retention on, the last run reads done in T on worker W (refreshed while open)"
else bad "outcome done"; fi

# P, y: pause; the schedule script writes it and its audit entry
tm send-keys -t top P
wait_for screen_has "pause schedule tick (it fires no more until resumed)? y/N" ||
  bad "P asks y/N"
tm send-keys -t top y
paused() { [ "$(state_of tick)" = '"paused":true' ]; }
if wait_for screen_has "paused schedule tick" && wait_for paused &&
  wait_for screen_has "schedules of $q: 2 (1 paused)"; then
  ok "P, y paused tick (schedule ls says so, the view shows it)"
else bad "pause a schedule"; fi
"$bin" audit -q "$q" --limit 1 | grep -q "schedule pause  tick" &&
  ok "... recorded in the audit log" || bad "audit entry of the pause"
# P on a paused one asks to resume; n changes nothing
tm send-keys -t top P
wait_for screen_has "resume schedule tick (from its next time" || bad "P asks to resume"
tm send-keys -t top n
if wait_for screen_has "cancelled" && paused; then ok "n at the question changes nothing"
else bad "n cancels"; fi
tm send-keys -t top P
wait_for screen_has "resume schedule tick" && tm send-keys -t top y
active() { [ "$(state_of tick)" = '"paused":false' ]; }
if wait_for screen_has "resumed schedule tick: next run" && wait_for active; then
  ok "P, y resumed it"
else bad "resume a schedule"; fi
"$bin" audit -q "$q" --limit 1 | grep -q "schedule resume  tick" &&
  ok "... recorded in the audit log" || bad "audit entry of the resume"

# Enter: the last run's task in details; Esc comes back to the view
tm send-keys -t top Enter
if wait_for screen_has "id            tick@" && screen_has "state         done"; then
  tm send-keys -t top Escape
  wait_for screen_has "schedules of $q: 2" && ok "Enter shows tick's last task, Esc comes back" ||
    bad "back to the Schedules view"
else bad "Enter in the Schedules view"; fi

# Done lists the finished tasks; Enter shows how one ran
tm send-keys -t top Escape
wait_for screen_has "5 Done" && tm send-keys -t top 5
if wait_for screen_has "[5] Done (" && screen_has "FINISHED" && screen_has "tick@"; then
  ok "Done lists the finished tasks"
else bad "Done pane"; fi
tm send-keys -t top Enter
if wait_for screen_has "state         done" && screen_has "after" && screen_has "on worker"; then
  ok "Enter on Done shows how the task ran (as delayq show)"
else bad "details of a done task"; fi
tm send-keys -t top q
wait_for screen_has "[5] Done (" && tm send-keys -t top q
wait_for gone || bad "quit"

# --read-only: the view opens, P is refused
session top 80 24 "$bin top -q $q --read-only"
if wait_for screen_has "READ-ONLY"; then
  tm send-keys -t top S
  wait_for screen_has "schedules of $q" && tm send-keys -t top j P
  if wait_for screen_has "read-only: actions are disabled" && active; then
    ok "--read-only refuses P in the Schedules view"
  else bad "read-only refusal"; fi
else bad "read-only badge"; fi
tm send-keys -t top q q
wait_for gone || bad "read-only session quits"
finish
