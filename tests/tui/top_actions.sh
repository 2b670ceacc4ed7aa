#!/bin/sh
# top_actions.sh: delayq top end to end, in tmux, on the live demo queue: the actions,
# each checked in Redis and the audit log: requeue, drop (asked first), marks, run now,
# the audit view, the error groups and the bulk rule on a group, requeue all spread over
# a window, pause and resume, cancel (c), and fix and requeue (e) on a queue of its own.
. "$(dirname "$0")/lib.sh"
start_demo
main_session "$bin top --refresh 250ms"
tm send-keys -t top 4
wait_for screen_has "[4] Failed ($(stat failed))" || bad "the Failed pane of the demo queue"

# 4. r, then y, requeues the selected failed task (checked in Redis)
before=$(stat failed)
tm send-keys -t top r
wait_for screen_has "now? y/N" || bad "requeue asks first"
tm send-keys -t top y
fewer() { [ "$(stat failed)" -lt "$before" ]; }
if wait_for screen_has "requeued" && wait_for fewer; then
  ok "r requeued a failed task ($before -> $(stat failed) failed)"
else bad "requeue"; fi
id=$(screen | sed -n 's/.*requeued \([^:]*\): due now.*/\1/p' | head -1)
if [ -n "$id" ] && "$bin" show "$id" | grep -q "state         scheduled"; then
  ok "task $id is scheduled again"
else bad "requeued task state ($id)"; fi
"$bin" audit --limit 1 | grep -q "requeue  $id  -> ok" && ok "the requeue is in the audit log" ||
  bad "audit entry"

# 5. d asks first; n cancels
before=$(stat failed)
tm send-keys -t top d
if wait_for screen_has "for good? y/N"; then
  tm send-keys -t top n
  wait_for screen_has "cancelled" && [ "$(stat failed)" -eq "$before" ] &&
    ok "d asks, n cancels" || bad "drop cancel"
else bad "drop confirm"; fi

# 5a. space marks two failed tasks; r requeues both at once
tm send-keys -t top 4 g
before=$(stat failed)
tm send-keys -t top Space Space r
if wait_for screen_has "requeue 2 marked tasks now? y/N"; then
  tm send-keys -t top y
  two_fewer() { [ "$(stat failed)" -eq $((before - 2)) ]; }
  if wait_for screen_has "requeued 2 marked tasks" && wait_for two_fewer; then
    ok "space marks, r requeues the marked set"
  else bad "marked requeue"; fi
else bad "marked confirm"; fi

# 5b. p runs a future task now: the task p asks about is due in the future before y and
# due after it. The demo's tasks keep falling due, so a refresh may move the selection
# between p and y: top then says so and does nothing, and the step tries again (3 times).
due_in_future() { "$bin" show "$1" | grep -q '^due .*(in '; }
due_already() { "$bin" show "$1" | grep '^due ' | grep -q 'ago)\|(now)'; }
asked() { screen | sed -n 's/.*run task \([^ ]*\) now? y\/N.*/\1/p' | tail -1; }
ran= tries=0
while [ -z "$ran" ] && [ $tries -lt 3 ]; do
  tries=$((tries + 1))
  tm send-keys -t top 2
  wait_for screen_has "[2] Future (" || break
  tm send-keys -t top p
  wait_for screen_has "now? y/N" || break
  id=$(asked)
  [ -n "$id" ] && due_in_future "$id" || { tm send-keys -t top n; continue; }
  tm send-keys -t top y
  moved() { screen_has "selection moved"; }
  done_or_moved() { screen_has "task $id is due now" || moved; }
  wait_for done_or_moved && ! moved && ran=$id
done
if [ -n "$ran" ] && wait_for due_already "$ran"; then ok "p made future task $ran due"
else bad "run now"; fi

# 5c. L shows the audit log with what was just done
tm send-keys -t top L
if wait_for screen_has "audit log of demo" && screen_has "run-now" && screen_has "requeue"; then
  ok "L shows the audit log"
else bad "audit view"; fi
tm send-keys -t top Escape

# 5c2. E shows the error groups; Enter shows a group in Failed; r and d there ask about
# the whole group (how many, which group); y requeues it (checked in Redis); Esc: all
# again. First a worker whose command fails makes a group: the due tasks fail with it.
failed_before=$(stat failed)
# It stops once the due tasks are tried (none due, none in flight but the demo's own
# leases) and some failed for good, within the 60 s it used to run for: --max-idle caps
# a worker's sleep, it never ends the worker.
inflight_before=$(stat inflight)
"$bin" work --quiet -- sh -c 'echo "export 42 failed: disk full" >&2; exit 3' &
failing=$!
tried() { [ "$(stat due)" -eq 0 ] && [ "$(stat inflight)" -le "$inflight_before" ] &&
  [ "$(stat failed)" -gt "$failed_before" ]; }
wait_for_n 1200 tried
kill "$failing" 2>/dev/null; wait "$failing" 2>/dev/null
[ "$(stat failed)" -gt "$failed_before" ] || bad "a failing worker adds failures"
# the largest group's count now (read again before each check: the due tasks the worker
# left in flight may still fail into it)
largest() { "$bin" errors --json | grep -o '"count":[0-9]*' | head -1 | cut -d: -f2; }
tm send-keys -t top E
if wait_for screen_has "error groups of demo: $(stat failed) failed" && screen_has "SIGNATURE"; then
  ok "E shows the error groups with the failed count"
else bad "errors view"; fi
tm send-keys -t top g Enter
group_shown() { groups_n=$(largest); screen_has '[4] Failed FILTER group ' &&
  screen_has ": $groups_n of $(stat failed) (Esc: all)"; }
if wait_for group_shown; then
  ok "Enter shows the largest group ($groups_n tasks) in Failed, paged on the server"
else bad "group in Failed"; fi
before=$(stat failed)
groups_n=$(largest)
tm send-keys -t top d
if wait_for screen_has "drop $groups_n failed tasks of group" &&
   screen_has "type the queue name demo to confirm"; then
  tm send-keys -t top -l "y"
  tm send-keys -t top Enter
  wait_for screen_has "nothing changed: \"y\" is not the queue's name" &&
    [ "$(stat failed)" -eq "$before" ] &&
    ok "d on a group asks for the queue's name with its count; y changes nothing" ||
    bad "d on a group refuses y"
else bad "d on a group asks"; fi
before=$(stat failed)
groups_n=$(largest)
tm send-keys -t top r
if wait_for screen_has "requeue $groups_n failed tasks of group"; then
  tm send-keys -t top -l demo
  tm send-keys -t top Enter
  group_moved() { [ "$(stat failed)" -eq $((before - groups_n)) ]; }
  if wait_for screen_has "requeued $groups_n failed tasks of group" && wait_for group_moved; then
    ok "r and the queue name requeued the group: its $groups_n tasks ($before -> $(stat failed) failed)"
  else bad "group requeue"; fi
else bad "r on a group asks with the count"; fi
"$bin" audit --limit 1 | grep -q "group=" && ok "one audit entry names the group" ||
  bad "group audit entry"
tm send-keys -t top L
if wait_for screen_has "audit log of demo" && screen_has "failed until 20" &&
   screen_has " ago)" && ! screen | grep -qE '(until|since) [0-9]{13}'; then
  ok "L shows RFC 3339 and relative times, not epoch ms"
else bad "audit times"; fi
# at 80 columns the whole detail shows, wrapped (the group requeue's names the group)
tm resize-window -t top -x 80 -y 24
if wait_for screen_has "group=" && ! screen | grep -q '…$'; then
  ok "L at 80 columns: every entry whole, no line cut"
else bad "L at 80 columns"; fi
tm send-keys -t top Escape
wait_for screen_has " 4 Failed " || bad "back from L at 80 columns"
tm resize-window -t top -x 140 -y 40
wait_for screen_has "[2] Future (" || bad "back to 140x40 after L"
tm send-keys -t top Escape
wait_for screen_has "[4] Failed ($(stat failed))" && ok "Esc shows every failed task again" ||
  bad "Esc after a group"

# 5d. A requeues all failed, spread over a typed window
tm send-keys -t top 4 A
wait_for screen_has "spread over" || bad "A prompt"
tm send-keys -t top 1 0 m Enter
# then y/N for one task, the queue's name for more (the worker above may have left one)
wait_for screen_has "spread over 10m?" || bad "A asks after the spread"
if screen_has "type the queue name demo"; then
  tm send-keys -t top -l demo
  tm send-keys -t top Enter
else tm send-keys -t top y; fi
none_failed() { [ "$(stat failed)" -eq 0 ]; }
if wait_for screen_has "spread over 10m" && wait_for none_failed; then
  ok "A requeued every failed task, spread over 10m"
else bad "requeue all"; fi

# 7d. P pauses the queue (how long, why, y), the header says so; P y resumes it
tm send-keys -t top P
wait_for screen_has "pause queue demo for" || bad "P prompt"
tm send-keys -t top 1 0 m Enter
wait_for screen_has "why (" || bad "P reason prompt"
tm send-keys -t top d e p l o y Enter
wait_for screen_has "? y/N" || bad "P confirm"
tm send-keys -t top y
# (the badge ends the header line, whose trailing blank capture-pane drops)
if wait_for screen_has " PAUSED" && wait_for paused_is true; then
  ok "P 10m deploy y pauses the queue (header and Redis)"
else bad "pause"; fi
tm send-keys -t top P
wait_for screen_has "resume queue demo" || bad "resume confirm"
tm send-keys -t top y
if wait_for paused_is false && wait_for screen_lacks " PAUSED"; then
  ok "P y resumes it (stats --json says \"paused\":false)"
else bad "resume"; fi

# 5e. c cancels the selected running task (asks first): it goes to Failed, audited
tm send-keys -t top 3
if [ "$(stat inflight)" -gt 0 ] && wait_for screen_has "[3] In-flight ("; then
  tm send-keys -t top c
  if wait_for screen_has "(to Failed)? y/N"; then
    id=$(screen | sed -n 's/.*cancel running task \(.*\) (to Failed)? y\/N.*/\1/p' | head -1)
    tm send-keys -t top y
    cancelled() { "$bin" show "$id" 2>/dev/null | grep -q "reason  *cancelled"; }
    if [ -n "$id" ] && wait_for screen_has "cancelled $id" && wait_for cancelled; then
      ok "c, y cancelled running task $id (in Failed, reason cancelled)"
    else bad "cancel from top ($id)"; fi
    "$bin" audit --limit 1 | grep -q "cancel  $id" && ok "the cancel is in the audit log" ||
      bad "cancel audit entry"
  else bad "c asks first"; fi
else bad "no in-flight task in the demo to cancel"; fi

# 3d. attempt history and fix and requeue (e), on a queue of its own: a task retried
# twice until its attempts ran out has a timeline in its details; e opens its payload in
# $EDITOR (a script here: it fails, writes bad JSON, or fixes the total, as flag files say)
"$bin" config -q fix backoff_base_ms=1ms >/dev/null
"$bin" enqueue -q fix --id inv-1 --max-attempts 2 --json '{"invoice":1,"total":"12.50"}' >/dev/null
"$bin" work -q fix --quiet -- sh -c 'echo "total does not add up" >&2; exit 75' 2>/dev/null &
fix_worker=$!
fix_failed() { "$bin" stats -q fix --json | grep -qF '"failed":1,'; }
wait_for fix_failed || bad "the fix task did not fail"
kill "$fix_worker" 2>/dev/null; wait "$fix_worker" 2>/dev/null
{
  echo '#!/bin/sh'
  echo "[ -f '$work/ed_fail' ] && exit 3"
  echo "[ -f '$work/ed_bad' ] && { echo '{\"total\": 12.5' >\"\$1\"; exit 0; }"
  echo "sed 's/\"12.50\"/\"12.5\"/' \"\$1\" >\"\$1.new\" && mv \"\$1.new\" \"\$1\""
} >"$work/ed.sh"
chmod +x "$work/ed.sh"
# (its own session: the main one ends here, nothing after this uses it)
session top 140 40 "env -u VISUAL EDITOR=$work/ed.sh $bin top -q fix --refresh 250ms"
tm send-keys -t top 4
wait_for screen_has "[4] Failed (1)" || bad "fix queue in top"
tm send-keys -t top Enter
if wait_for screen_has "history       2 attempts, oldest first" && screen_has "#1 " && screen_has "#2 " &&
   screen_has "retry after" && screen_has "exit 75 (temporary failure): total does not add up"; then
  ok "details show the attempt history as a timeline"
else bad "history timeline"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed (1)"
touch "$work/ed_fail"
tm send-keys -t top e
if wait_for screen_has "the editor exited with an error: nothing changed" && screen_has "[4] Failed (1)"; then
  ok "e: an editor that exits non-zero changes nothing"
else bad "e with a failing editor"; fi
rm -f "$work/ed_fail"
touch "$work/ed_bad"
tm send-keys -t top e
if wait_for screen_has "not valid JSON, nothing changed"; then ok "e: invalid JSON changes nothing"
else bad "e with invalid JSON"; fi
rm -f "$work/ed_bad"
tm send-keys -t top e
if wait_for screen_has 'requeue task inv-1 with this payload? y/N' && screen_has '-   "total": "12.50"' &&
   screen_has '+   "total": "12.5"'; then
  ok "e: after the edit, the confirmation shows what changed"
else bad "e confirmation"; fi
tm send-keys -t top y
fixed() {
  "$bin" show -q fix --json inv-1 >"$work/fixed.json" &&
    grep -qF '"state":"scheduled"' "$work/fixed.json" &&
    grep -qF '"payload":{"invoice":1,"total":"12.5"}' "$work/fixed.json"
}
if wait_for screen_has "requeued inv-1 with the new payload" && wait_for fixed &&
   grep -qF '"outcome":"retry"' "$work/fixed.json" &&
   "$bin" audit -q fix --limit 1 | grep -q "replace  inv-1 old=sha1:[0-9a-f]* new=sha1:"; then
  ok "y replaced the payload and requeued the task (history kept, audited with both hashes)"
else bad "fix and requeue"; "$bin" show -q fix inv-1 | sed 's/^/# /'; fi
tm send-keys -t top q

finish
