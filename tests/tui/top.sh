#!/bin/sh
# top.sh: delayq top end to end, in tmux, against the live demo queue (delayq demo
# --keep: a private redis-server on a free loopback port, filled through the library).
# Every expectation is a deadline poll of the screen or of Redis, never a sleep.
set -u
bin=${DELAYQ_BIN:?}
work=$(mktemp -d)
sock="dqtest$$"
# one tmux server per session (session below): a step that failed cannot leave its
# session behind for the next step to type into, and no session is added to a server
# that is exiting or has "window-size manual" set (tmux 3.3a crashes on both)
srv=0
tm() { tmux -L "$sock.$srv" "$@"; }
demo_pid=
cleanup() {
  i=0
  while [ $i -le $srv ]; do tmux -L "$sock.$i" kill-server 2>/dev/null; i=$((i + 1)); done
  tmux -L "${sock}f" kill-server 2>/dev/null
  [ -n "$demo_pid" ] && kill "$demo_pid" 2>/dev/null && wait "$demo_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; tm capture-pane -p -t top 2>/dev/null | sed 's/^/# /'; }

# wait_for_n N CMD...: retries CMD every 50 ms, N times at most
wait_for_n() {
  n=$1
  shift
  i=0
  while [ $i -lt "$n" ]; do
    "$@" && return 0
    i=$((i + 1))
    sleep 0.05
  done
  return 1
}
# wait_for CMD...: up to 5 s
wait_for() { wait_for_n 100 "$@"; }
screen() { tm capture-pane -p -t top; }
screen_has() { screen | grep -qF -- "$1"; }
screen_lacks() { ! screen | grep -qF -- "$1"; }
# session NAME COLS ROWS COMMAND: ends the previous step's tmux server, whatever it
# still runs, and starts the session on a new one (a few tries, each on a new server)
session() {
  tries=0
  while [ $tries -lt 20 ]; do
    tm kill-server 2>/dev/null
    srv=$((srv + 1))
    tm -f /dev/null new-session -d -s "$1" -x "$2" -y "$3" "$4" 2>/dev/null && return 0
    tries=$((tries + 1))
    sleep 0.05
  done
  return 1
}

"$bin" demo --keep --static >"$work/demo.out" 2>&1 &
demo_pid=$!
url_ready() { grep -qo 'redis://127.0.0.1:[0-9]*' "$work/demo.out" 2>/dev/null; }
wait_for url_ready || { echo "not ok - demo did not start"; cat "$work/demo.out"; exit 1; }
url=$(grep -o 'redis://127.0.0.1:[0-9]*' "$work/demo.out" | head -1)
export DELAYQ_URL="$url" DELAYQ_QUEUE=demo
# the first "NAME": number of stats --json (the queue's count, before the counters)
stat() { "$bin" stats --json | grep -o "\"$1\":[0-9-]*" | head -1 | cut -d: -f2; }

tm -f /dev/null new-session -d -s top -x 140 -y 40 "$bin top --refresh 250ms"
tm set -g window-size manual
tm set -s set-clipboard on # OSC 52 from the app lands in a tmux paste buffer

# 1. the counters match Redis
failed_n=$(stat failed)
due_n=$(stat due)
if wait_for screen_has "failed $failed_n" && screen_has "[4] Failed ($failed_n)" &&
   screen_has "[1] Due ("; then ok "counters and pane totals match stats ($failed_n failed)"
else bad "counters"; fi

# 2. escape sequences and invalid UTF-8 from Redis are shown escaped
if screen_has 'hostile-escapes' && screen_has '\u001b[2J' && screen_has '\xff' &&
   screen_has "delayq top"; then ok "hostile payload bytes are escaped, screen intact"
else bad "escaping"; fi

# 3. Enter on a failed task shows its stack trace
tm send-keys -t top 4
tm send-keys -t top Enter
has_trace() { screen | grep -qE 'goroutine 1 \[running\]:|java.lang.IllegalStateException|Traceback'; }
if wait_for screen_has "stack trace" && screen_has "reason        error" && has_trace; then
  ok "details show error and stack trace"
else bad "details"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed" || bad "back to the main screen"

# 3b. y in the details of a failed task copies its stack trace (OSC 52)
tm send-keys -t top 4
tm send-keys -t top Enter
wait_for screen_has "stack trace"
tm send-keys -t top y
copied() { tm show-buffer 2>/dev/null | grep -qE 'goroutine|java.lang|Traceback'; }
if wait_for copied; then ok "y copies the stack trace to the clipboard"; else bad "copy"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed"

# 3c. / searches failed tasks on the server; Esc clears it
tm send-keys -t top /
wait_for screen_has "search failed tasks" || bad "search prompt"
tm send-keys -t top -l "card declined"
tm send-keys -t top Enter
if wait_for screen_has 'Failed FILTER: 2 matching "card declined" (searched'; then
  ok "/ finds the 2 failures whose error says card declined"
else bad "search"; fi
tm send-keys -t top Escape
wait_for screen_has "[4] Failed (" && ok "Esc clears the search" || bad "clear search"
tm send-keys -t top 2 /
wait_for screen_has "search this pane" || bad "search prompt on Future"
tm send-keys -t top -l "subscription.renew"
tm send-keys -t top Enter
if wait_for screen_has 'Future FILTER: 12 matching "subscription.renew" (searched'; then
  ok "/ on Future finds the 12 renewals by payload"
else bad "search future"; fi
tm send-keys -t top Escape 4

# 3c2. bracketed paste: a pasted "card declined<newline>W" is search text up to the
# newline; the newline does not submit and the W after it is not a key (workers view)
tm set-buffer -b dqpaste "$(printf 'card declined\nW')"
tm send-keys -t top /
wait_for screen_has "search failed tasks" || bad "search prompt for the paste"
tm paste-buffer -p -b dqpaste -t top
if wait_for screen_has "Esc: cancel): card declined_" && screen_lacks "workers of demo" &&
   screen_lacks "FILTER"; then ok "a pasted newline neither submits nor becomes a key"
else bad "bracketed paste in a prompt"; fi
tm send-keys -t top Escape
tm set-buffer -b dqpaste "W"
tm paste-buffer -p -b dqpaste -t top
if wait_for screen_has "paste ignored" && screen_lacks "workers of demo"; then
  ok "a paste on the main screen is ignored, not run as keys"
else bad "paste on the main screen"; fi

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
# (a tmux server of its own: tmux 3.3a crashes when a session is added to a server
# that has "window-size manual" set)
tf() { tmux -L "${sock}f" "$@"; }
fscreen() { tf capture-pane -p -t fix; }
fhas() { fscreen | grep -qF -- "$1"; }
fdump() { fscreen | sed 's/^/# /'; }
tf -f /dev/null new-session -d -s fix -x 140 -y 40 \
  "env -u VISUAL EDITOR=$work/ed.sh $bin top -q fix --refresh 250ms"
tf send-keys -t fix 4
wait_for fhas "[4] Failed (1)" || bad "fix queue in top"
tf send-keys -t fix Enter
if wait_for fhas "history       2 attempts, oldest first" && fhas "#1 " && fhas "#2 " &&
   fhas "retry after" && fhas "exit 75 (temporary failure): total does not add up"; then
  ok "details show the attempt history as a timeline"
else bad "history timeline"; fdump; fi
tf send-keys -t fix Escape
wait_for fhas "[4] Failed (1)"
touch "$work/ed_fail"
tf send-keys -t fix e
if wait_for fhas "the editor exited with an error: nothing changed" && fhas "[4] Failed (1)"; then
  ok "e: an editor that exits non-zero changes nothing"
else bad "e with a failing editor"; fdump; fi
rm -f "$work/ed_fail"
touch "$work/ed_bad"
tf send-keys -t fix e
if wait_for fhas "not valid JSON, nothing changed"; then ok "e: invalid JSON changes nothing"
else bad "e with invalid JSON"; fdump; fi
rm -f "$work/ed_bad"
tf send-keys -t fix e
if wait_for fhas 'requeue task inv-1 with this payload? y/N' && fhas '-   "total": "12.50"' &&
   fhas '+   "total": "12.5"'; then
  ok "e: after the edit, the confirmation shows what changed"
else bad "e confirmation"; fdump; fi
tf send-keys -t fix y
fixed() {
  "$bin" show -q fix --json inv-1 >"$work/fixed.json" &&
    grep -qF '"state":"scheduled"' "$work/fixed.json" &&
    grep -qF '"payload":{"invoice":1,"total":"12.5"}' "$work/fixed.json"
}
if wait_for fhas "requeued inv-1 with the new payload" && wait_for fixed &&
   grep -qF '"outcome":"retry"' "$work/fixed.json" &&
   "$bin" audit -q fix --limit 1 | grep -q "replace  inv-1 old=sha1:[0-9a-f]* new=sha1:"; then
  ok "y replaced the payload and requeued the task (history kept, audited with both hashes)"
else bad "fix and requeue"; "$bin" show -q fix inv-1 | sed 's/^/# /'; fi
tf send-keys -t fix q
tf kill-server 2>/dev/null
"$bin" queues --forget fix >/dev/null # the picker checks below count the demo's queues

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

# 5b. p runs a future task now
tm send-keys -t top 2
due_before=$(stat due)
tm send-keys -t top p
wait_for screen_has "now? y/N" && tm send-keys -t top y
more_due() { [ "$(stat due)" -gt "$due_before" ]; }
if wait_for screen_has "is due now" && wait_for more_due; then ok "p made a future task due"
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
timeout 60 "$bin" work --quiet --max-idle 1s -- sh -c 'echo "export 42 failed: disk full" >&2; exit 3'
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

# 6. resize to 80x24 and back; the bottom-right cell holds nothing from before (the
# hints end before it: a character in column 80 of the last line is left over)
tm resize-window -t top -x 80 -y 24
if wait_for screen_has " 1 Due " && screen_has "[4] Failed"; then ok "80x24 layout"
else bad "80x24"; fi
corner() { [ -z "$(screen | tail -1 | cut -c80- | tr -d ' ')" ]; }
for size in "40 10" "20 5" "120 40" "80 24"; do
  tm resize-window -t top -x "${size% *}" -y "${size#* }"
done
wait_for screen_has " 1 Due " && wait_for corner && ok "no stale bottom-right cell after resizes" ||
  bad "stale bottom-right cell: [$(screen | tail -1)]"
tm resize-window -t top -x 140 -y 40
if wait_for screen_has "[2] Future ("; then ok "back to 140x40"; else bad "resize back"; fi

# 7. help overlay
tm send-keys -t top '?'
if wait_for screen_has "r            Failed: requeue"; then ok "help lists the keys"; else bad "help"; fi
tm send-keys -t top Escape

# 7b. Q lists the server's queues with their counts; Enter switches to the one picked
"$bin" enqueue -q other --json '{"n":1}' >/dev/null
tm send-keys -t top Q
if wait_for screen_has "queues on 127.0.0.1:" && screen_has " * demo " && screen_has "other"; then
  ok "Q lists the queues (demo and other)"
else bad "queue picker"; fi
tm send-keys -t top G Enter
if wait_for screen_has "| queue other (Q: 2 queues)" && wait_for screen_has "[1] Due (1)"; then
  ok "Enter switches to queue other"
else bad "switch queue"; fi
tm send-keys -t top Q
wait_for screen_has " * other " && tm send-keys -t top g Enter
wait_for screen_has "| queue demo (Q: 2 queues)" && ok "and back to demo" || bad "switch back"

# 7c. W shows the worker view; Esc goes back
paused_is() { "$bin" stats --json | grep -qF "\"paused\":$1"; }
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
# P below must see the queue unpaused: the refresh after the resume (up to 5 s apart
# while nothing moves, longer under ASan) has arrived
tm send-keys -t top C-l
wait_for_n 300 screen_lacks " PAUSED " || bad "the W test's pause still shown"

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

# 8. q quits cleanly
tm send-keys -t top q
gone() { ! tm has-session -t top 2>/dev/null; }
if wait_for gone; then ok "q quits"; else bad "quit"; fi

# 8-. a queue the server does not know (a typo) opens, marked: the badge, and a verdict
# that names the close queue instead of "all well"
session top 140 40 "$bin top -q dmeo --refresh 250ms"
if wait_for screen_has " UNKNOWN QUEUE" && screen_has '!! queue "dmeo" is not known on 127.0.0.1:' &&
   screen_has "(did you mean demo?)" && screen_lacks "all well"; then
  ok "top -q dmeo: UNKNOWN QUEUE badge, the verdict says did you mean demo"
else bad "unknown queue in top"; fi
tm send-keys -t top q
wait_for gone || bad "quit from the unknown queue"

# 8a. without -q or $DELAYQ_QUEUE, the unused default queue opens the picker by itself
session top 140 40 "env -u DELAYQ_QUEUE $bin top"
if wait_for screen_has "queues on 127.0.0.1:" && screen_has "demo" && screen_has "other"; then
  # Esc there does not show the unused default queue (it would look healthy): it stays
  screen_has "Enter open  q quit" || bad "the first picker's footer says q quits"
  tm send-keys -t top Escape
  wait_for screen_has "no queue is shown yet" && screen_lacks "| queue default" &&
    ok "Esc in the first picker stays in it" || bad "Esc in the first picker"
  tm send-keys -t top g Enter
  wait_for screen_has "| queue demo (Q: 2 queues)" && ok "an unused default queue opens the picker" ||
    bad "pick from the auto-opened picker"
else bad "picker did not open for the default queue"; fi
tm send-keys -t top q
wait_for gone || bad "quit after the picker"

# 8b. the TERM variants an engineer arrives with (and a terminal without colours): each
# draws the main screen, answers keys and quits. Entries missing on a machine are skipped.
for term in xterm xterm-256color screen screen-256color tmux-256color vt100; do
  infocmp "$term" >/dev/null 2>&1 || { echo "# TERM=$term: no terminfo entry, skipped"; continue; }
  session top 100 30 "env TERM=$term $bin top"
  if wait_for screen_has "4 Failed " && tm send-keys -t top '?' &&
     wait_for screen_has "r            Failed: requeue" && tm send-keys -t top Escape q &&
     wait_for gone; then ok "TERM=$term: draws, answers keys, quits"
  else bad "TERM=$term"; fi
done

# 8c. NO_COLOR: attributes (bold, reverse) but not one colour; without it, colours
colours() { tm capture-pane -e -p -t top | grep -cE "$(printf '\033')\[([0-9;]*;)?(3[0-7]|4[0-7]|38;5|48;5)[;m]"; }
for nc in 1 0; do
  if [ "$nc" = 1 ]; then session top 140 40 "env NO_COLOR=1 $bin top"
  else session top 140 40 "env -u NO_COLOR $bin top"; fi
  wait_for screen_has "[4] Failed (" || bad "NO_COLOR=$nc start"
  n=$(colours)
  if { [ "$nc" = 1 ] && [ "$n" -eq 0 ]; } || { [ "$nc" = 0 ] && [ "$n" -gt 0 ]; }; then
    ok "NO_COLOR=$nc: $n lines with colour codes"
  else bad "NO_COLOR=$nc: $n lines with colour codes"; fi
  tm send-keys -t top q
  wait_for gone || bad "quit (NO_COLOR=$nc)"
done

# 9. --read-only refuses actions and says so
session top 140 40 "$bin top --read-only"
before=$(stat failed)
if wait_for screen_has "READ-ONLY"; then
  tm send-keys -t top 4
  tm send-keys -t top r
  if wait_for screen_has "read-only: actions are disabled" && [ "$(stat failed)" -eq "$before" ]; then
    ok "--read-only refuses r"
  else bad "read-only refusal"; fi
else bad "read-only badge"; fi
tm send-keys -t top q
wait_for gone || bad "read-only session quits"

# 9b. Redis stalls (CLIENT PAUSE, 8 s) while top waits up to 5 s for each reply: the
# action and the refreshes wait on the Redis thread, the keyboard does not. Drawing the
# help overlay within 2.5 s of the keys is only possible if no key waited for Redis.
session top 140 40 "$bin top --refresh 250ms --timeout 5s"
wait_for screen_has "[4] Failed" || bad "start top for the stall"
port=${url##*:}
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

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
