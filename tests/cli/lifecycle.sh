#!/bin/sh
# lifecycle.sh: a task's time limit and cancel, as a user runs them. A task enqueued with
# --time-limit 1s whose command sleeps 60 s (under a shell wrapper) is stopped, with its
# whole process group, and retried within 2 s; show, export and import keep the limit.
# delayq cancel stops a running command within 2 s and the task is in failed with the
# reason (or gone, with --drop); what is not running gets a clear exit 1.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
redis_start
dq() { "$bin" "$@"; }

# the handler: records its own child's pid, then waits on a long sleep
cat >"$work/slow.sh" <<SH
#!/bin/sh
sleep 60 &
echo \$! >"$work/pid.\$DELAYQ_TASK_ID"
wait
SH
chmod +x "$work/slow.sh"

# --- time limit --------------------------------------------------------------------
q=limits
check "enqueue --time-limit 1s" dq enqueue -q "$q" --id slow-1 --time-limit 1s --json '{"n":1}'
dq config -q "$q" backoff_base_ms=600000 >/dev/null # the retry waits, to be looked at
check "show says the time limit" sh -c "'$bin' show -q '$q' slow-1 | grep -q 'time limit  *1s'"
t0=$(mono_ms)
spawn "$bin" work -q "$q" --name lim -- "$work/slow.sh" 2>>"$work/lim.log"
retried() { dq show -q "$q" slow-1 2>/dev/null | grep -q "timed out after 1000 ms"; }
if wait_for 5000 "the limited task retried" retried; then
  took=$(($(mono_ms) - t0))
  echo "# --time-limit 1s: retried ${took} ms after the worker started"
  check "retried within 2.5 s of the worker's start (a 1 s limit)" [ "$took" -lt 2500 ]
else bad "the limited task was not retried"; fi
child=$(cat "$work/pid.slow-1" 2>/dev/null)
gone() { ! kill -0 "$child" 2>/dev/null || grep -q '^State:.*Z' "/proc/$child/status" 2>/dev/null; }
check "no process of the command is left (its backgrounded sleep too)" wait_for 3000 "child gone" gone
dq export -q "$q" future >"$work/export.jsonl" 2>/dev/null
check "export carries time_limit_ms" grep -q '"time_limit_ms":1000' "$work/export.jsonl"
check "import keeps it" sh -c "'$bin' import -q limits2 <'$work/export.jsonl' >/dev/null"
check "the imported task has its limit" sh -c "'$bin' show -q limits2 slow-1 | grep -q 'time limit  *1s'"
check "a limit over 7 days is exit 2" not dq enqueue -q "$q" --time-limit 8d --json 1
dq enqueue -q "$q" --time-limit 8d --json 1 2>"$work/err.txt"
check "... naming the option and the limit" grep -q -- "--time-limit: 8d is not in 1ms..7d" "$work/err.txt"

# the queue's default time limit: into tasks enqueued without one, at enqueue
check "config time_limit_ms=2s" dq config -q "$q" time_limit_ms=2s
dq enqueue -q "$q" --id dflt --delay 1h --json 1 >/dev/null
dq enqueue -q "$q" --id own --delay 1h --time-limit 5s --json 1 >/dev/null
check "a task without its own gets the queue's (2s)" sh -c "'$bin' show -q '$q' dflt | grep -q 'time limit  *2s'"
check "a task with its own keeps it (5s)" sh -c "'$bin' show -q '$q' own | grep -q 'time limit  *5s'"
check "config --json shows it" sh -c "'$bin' config -q '$q' --json | grep -q '\"time_limit_ms\":2000'"
check "config time_limit_ms=0: none again" dq config -q "$q" time_limit_ms=0
dq enqueue -q "$q" --id none --delay 1h --json 1 >/dev/null
check "a task enqueued after that has none" not sh -c "'$bin' show -q '$q' none | grep -q 'time limit'"
check "the one enqueued before keeps its 2s" sh -c "'$bin' show -q '$q' dflt | grep -q 'time limit  *2s'"
check "time_limit_ms=8d is exit 2" not dq config -q "$q" time_limit_ms=8d

# --- cancel -------------------------------------------------------------------------
q=billing
dq enqueue -q "$q" --id charge-1 --json '{"order":1}' >/dev/null
dq enqueue -q "$q" --id charge-2 --json '{"order":2}' >/dev/null
dq enqueue -q "$q" --id later --delay 1h --json '{"order":3}' >/dev/null
spawn "$bin" work -q "$q" --name w-cancel --concurrency 2 -- "$work/slow.sh" 2>>"$work/cancel.log"
both_running() { [ -s "$work/pid.charge-1" ] && [ -s "$work/pid.charge-2" ]; }
check "both tasks running" wait_for 5000 "both running" both_running
c1=$(cat "$work/pid.charge-1")
t0=$(mono_ms)
dq cancel -q "$q" --who alice@ops charge-1 >"$work/cancel.out" 2>&1
check "cancel exits 0" [ $? -eq 0 ]
check "cancel says where it ran" grep -q "cancelled charge-1 (attempt 1, was running on w-cancel)" "$work/cancel.out"
child=$c1
if wait_for 2000 "the cancelled command gone" gone; then
  echo "# cancel: the command's process group gone $(($(mono_ms) - t0)) ms after the call"
  ok "the cancelled command is stopped within 2 s"
else bad "the cancelled command still runs"; fi
dq show -q "$q" charge-1 >"$work/show.txt"
check "the cancelled task is failed, reason cancelled" grep -q "reason  *cancelled" "$work/show.txt"
check "... saying who" grep -q "cancelled by alice@ops" "$work/show.txt"
c2=$(cat "$work/pid.charge-2")
check "cancel --drop exits 0" dq cancel -q "$q" --drop charge-2
child=$c2
check "the dropped task's command is stopped too" wait_for 2000 "second command gone" gone
check "the dropped task is gone" not dq show -q "$q" charge-2
dq cancel -q "$q" later >/dev/null 2>"$work/err.txt"
check "a scheduled task is exit 1" [ $? -eq 1 ]
check "... and the message says to drop it" grep -q "scheduled (drop it to cancel it)" "$work/err.txt"
dq cancel -q "$q" charge-1 >/dev/null 2>"$work/err.txt"
check "a failed task is exit 1" [ $? -eq 1 ]
check "... saying it is failed" grep -q "it is failed" "$work/err.txt"
check "no id is exit 2" not dq cancel -q "$q"
check "the audit log has both cancels" sh -c "'$bin' audit -q '$q' | grep -c cancel | grep -q 2"
check "the worker still runs" alive "$spawned"
finish
