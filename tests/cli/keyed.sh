#!/bin/sh
# keyed.sh MODE: keyed tasks as a user runs them, on the function library (MODE plain)
# or the EVALSHA scripts (evalsha). --unique-for 10s refuses a repeat 2 s after the
# first run finished (exit 0, no task added), also a repeat without --unique-for, and
# accepts one after 10 s; --replace moves a scheduled task's due time and payload (and
# pushes it again: debounce) and is refused with exit 1 for a task in flight or failed;
# delayq reschedule moves a task by caller-chosen and by generated id, wakes an idle
# worker when the new time is now, refuses what is not scheduled, and is audited.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli
redis_start
case "${1:-plain}" in
evalsha) DELAYQ_SCRIPTS=evalsha && export DELAYQ_SCRIPTS ;;
esac
dq() { "$bin" "$@"; }
# due_of Q ID: the due time line of delayq show
due_of() { dq show -q "$1" "$2" 2>/dev/null | sed -n 's/^due  *\([^ ]*\).*/\1/p'; }
zcard() { redis-cli -h 127.0.0.1 -p "$redis_port" zcard "$1"; }

# --- unique-for -----------------------------------------------------------------------
q=uq
check "enqueue --unique-for 10s" dq enqueue -q "$q" --id charge-1 --unique-for 10s --json 1
spawn "$bin" work -q "$q" --name w-uq -- true 2>>"$work/uq.log"
wpid=$spawned
gone() { ! dq show -q "$q" charge-1 >/dev/null 2>&1; }
check "the worker runs it" wait_for 5000 "charge-1 done" gone
t_done=$(mono_ms)
stop_pid "$wpid"
check "the window is kept in Redis" [ "$(zcard "dq:{$q}:uniq")" = 1 ]
while [ $(($(mono_ms) - t_done)) -lt 2000 ]; do sleep 0.05; done
dq enqueue -q "$q" --id charge-1 --unique-for 10s --json 1 >"$work/out.txt" 2>"$work/err.txt"
check "a repeat 2 s after it finished is exit 0" [ $? -eq 0 ]
check "... printing the id" grep -qx charge-1 "$work/out.txt"
check "... saying it is a duplicate of a done task" \
  grep -q "duplicate of a task done within its unique-for window (.* left); not added" "$work/err.txt"
check "... and nothing was added" gone
dq enqueue -q "$q" --id charge-1 --json 1 >/dev/null 2>"$work/err.txt"
check "a repeat without --unique-for is refused too" grep -q "unique-for window" "$work/err.txt"
check "... and not added" gone
while [ $(($(mono_ms) - t_done)) -lt 10100 ]; do sleep 0.05; done
check "after 10 s the id is accepted" sh -c "'$bin' enqueue -q '$q' --id charge-1 --unique-for 10s --json 1 2>'$work/err.txt' >/dev/null"
check "... silently" [ ! -s "$work/err.txt" ]
check "... and added" dq show -q "$q" charge-1
check "--unique-for needs --id (exit 2)" not dq enqueue -q "$q" --unique-for 1s --json 1
dq enqueue -q "$q" --id x --unique-for 8d --json 1 2>"$work/err.txt"
check "a window over 7 days is exit 2, naming the option" grep -q -- "--unique-for" "$work/err.txt"

# --- replace ------------------------------------------------------------------------
q=rq
dq enqueue -q "$q" --id reindex-7 --delay 1h --json '{"v":1}' >/dev/null
d1=$(due_of "$q" reindex-7)
dq enqueue -q "$q" --id reindex-7 --delay 2h --replace --json '{"v":2}' >"$work/out.txt" 2>"$work/err.txt"
check "--replace of a scheduled task is exit 0" [ $? -eq 0 ]
check "... saying it replaced it" grep -q "replaced its payload and due time" "$work/err.txt"
d2=$(due_of "$q" reindex-7)
check "... the due time moved ($d1 -> $d2)" [ -n "$d2" ] && [ "$d2" \> "$d1" ]
check "... and the payload is the new one" sh -c "'$bin' show -q '$q' reindex-7 | grep -q 'v: 2'"
check "... one task, not two" [ "$(zcard "dq:{$q}:sched")" = 1 ]
dq enqueue -q "$q" --id reindex-7 --delay 30m --replace --json '{"v":3}' >/dev/null 2>&1
d3=$(due_of "$q" reindex-7)
check "each call pushes the due time (debounce: $d2 -> $d3)" [ "$d3" \< "$d2" ]
check "--replace of an unknown id adds it" dq enqueue -q "$q" --id new-1 --replace --json 1
check "... scheduled" dq show -q "$q" new-1
check "--replace needs --id (exit 2)" not dq enqueue -q "$q" --replace --json 1
# in flight: a handler that waits until told to finish
cat >"$work/hold.sh" <<SH
#!/bin/sh
touch "$work/running.\$DELAYQ_TASK_ID"
while [ ! -e "$work/release" ]; do sleep 0.05; done
SH
chmod +x "$work/hold.sh"
q=rq2
dq enqueue -q "$q" --id busy-1 --json 1 >/dev/null
spawn "$bin" work -q "$q" --name w-hold -- "$work/hold.sh" 2>>"$work/hold.log"
check "busy-1 is running" wait_for 5000 "busy-1 running" test -e "$work/running.busy-1"
dq enqueue -q "$q" --id busy-1 --replace --json 2 >/dev/null 2>"$work/err.txt"
check "--replace of a task in flight is exit 1" [ $? -eq 1 ]
check "... saying it is in flight" grep -q "busy-1 is in flight; not replaced" "$work/err.txt"
touch "$work/release"
q=rq3
dq enqueue -q "$q" --id bad-1 --max-attempts 1 --json 1 >/dev/null
spawn "$bin" work -q "$q" --name w-fail -- false 2>>"$work/fail.log"
failed() { dq show -q "$q" bad-1 2>/dev/null | grep -q "state  *failed"; }
check "bad-1 failed" wait_for 5000 "bad-1 failed" failed
dq enqueue -q "$q" --id bad-1 --replace --json 2 >/dev/null 2>"$work/err.txt"
check "--replace of a failed task is exit 1" [ $? -eq 1 ]
check "... saying it is failed" grep -q "bad-1 is failed; not replaced" "$work/err.txt"

# --- reschedule ---------------------------------------------------------------------
q=sq
dq enqueue -q "$q" --id remind-42 --delay 1h --json '{"r":42}' >/dev/null
at=$(date -u -d '+3 days' +%Y-%m-%dT08:00:00)
check "reschedule --at by caller-chosen id" \
  sh -c "'$bin' reschedule -q '$q' --at ${at}Z remind-42 | grep -q 'due ${at}.000Z'"
check "... show has the new due time" [ "$(due_of "$q" remind-42)" = "${at}.000Z" ]
check "... and the payload is untouched" sh -c "'$bin' show -q '$q' remind-42 | grep -q 'r: 42'"
gen=$(dq enqueue -q "$q" --delay 1h --json '{"g":1}')
check "reschedule --delay by generated id ($gen)" dq reschedule -q "$q" --delay 2h "$gen"
check "... due in about 2 h" sh -c "'$bin' show -q '$q' '$gen' | grep -q '(in 1h5'"
check "the audit log has both" [ "$(dq audit -q "$q" | grep -c reschedule)" -eq 2 ]
check "no time is exit 2" not dq reschedule -q "$q" remind-42
check "both times is exit 2" not dq reschedule -q "$q" --at 1 --delay 1s remind-42
dq reschedule -q "$q" --delay 1s nobody >/dev/null 2>"$work/err.txt"
check "an unknown id is exit 1" [ $? -eq 1 ]
check "... saying it is not scheduled" grep -q "nobody: it is not scheduled" "$work/err.txt"
dq reschedule -q rq3 --delay 1s bad-1 >/dev/null 2>"$work/err.txt"
check "a failed task is exit 1, saying so" grep -q "bad-1: it is failed" "$work/err.txt"
# an idle worker sleeps until the earliest due time (1 h): moving a task to now wakes it
spawn "$bin" work -q "$q" --name w-idle --max-idle 60s -- true 2>>"$work/idle.log"
check "the idle worker is up" wait_for 5000 "worker registered" \
  sh -c "'$bin' workers -q '$q' 2>/dev/null | grep -q w-idle"
sleep 0.5 # (it has taken its look at the queue and sleeps now)
t0=$(mono_ms)
dq reschedule -q "$q" --delay 0 remind-42 >/dev/null
done42() { ! dq show -q "$q" remind-42 >/dev/null 2>&1; }
if wait_for 3000 "remind-42 run" done42; then
  took=$(($(mono_ms) - t0))
  echo "# reschedule to now: run ${took} ms later by a worker idle until the 1 h task"
  check "rescheduled to now, an idle worker runs it within 1 s" [ "$took" -lt 1000 ]
else bad "the rescheduled task did not run"; fi
finish
