#!/bin/sh
# oom.sh MODE: a queue filled to Redis's maxmemory (noeviction) drains with delayq alone
# (docs/OPERATIONS.md, "Redis out of memory"). MODE is plain (the function library:
# the allow-oom flag) or evalsha (the scripts' fallback path: lib.lua allow_oom()).
# At maxmemory: enqueue and requeue are refused with the operator's way out (exit 1);
# pause and resume work; `delayq work` claims, acks and fails every task (a third of
# them fail, with a trace); `drop --all-failed` empties both failed sets; memory is
# lower after, and enqueue works again.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli python3
mode=${1:-plain}
redis_start
if [ "$mode" = evalsha ]; then
  DELAYQ_SCRIPTS=evalsha
  export DELAYQ_SCRIPTS
fi
rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
mem() { rcli info memory | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }
q=t-oom-$$
f=t-oom-failed-$$
qstat() { "$bin" stats -q "$1" --json | grep -o "\"$2\":[0-9-]*" | head -1 | cut -d: -f2; }
is() { [ "$(qstat "$1" "$2")" = "$3" ]; }

cat >"$work/h.sh" <<'EOF'
#!/bin/sh
# fails every third task (a stack trace on stderr), completes the others
cat >/dev/null
[ $((DELAYQ_TASK_ID % 3)) -ne 0 ] && exit 0
echo "trace of task $DELAYQ_TASK_ID" >&2
exit 1
EOF
chmod +x "$work/h.sh"

# 10 failed tasks in a queue of their own, before memory runs out
for n in 1 2 3 4 5 6 7 8 9 10; do
  "$bin" enqueue -q "$f" --max-attempts 1 --json "{\"n\":$n}" >/dev/null
done
spawn "$bin" work -q "$f" --quiet -- sh -c 'echo boom >&2; exit 1' 2>>"$work/work.log"
wpid=$spawned
wait_for 20000 "10 failed tasks" is "$f" failed 10 || bad "the failing worker failed 10 tasks"
stop_pid "$wpid"

# maxmemory 2 MB above what is used now; then enqueue 6 KB tasks until Redis refuses
max=$(($(mem used_memory) + 2 * 1024 * 1024))
rcli config set maxmemory "$max" >/dev/null
rcli config set maxmemory-policy noeviction >/dev/null
pl=$(python3 -c 'print("{\"x\":\"" + "a" * 6000 + "\"}")')
cnt=0 rc=0
end=$(($(mono_ms) + 120000))
while [ "$(mono_ms)" -lt "$end" ]; do
  "$bin" enqueue -q "$q" --max-attempts 1 --json "$pl" >/dev/null 2>"$work/enq.err"
  rc=$?
  [ $rc -eq 0 ] || break
  cnt=$((cnt + 1))
done
echo "# enqueued $cnt tasks before maxmemory $max"
check "enqueue at maxmemory: exit 1 (got $rc)" [ "$rc" -eq 1 ]
msg="Redis is out of memory (maxmemory $max): drop or export failed tasks, or raise maxmemory"
check "enqueue at maxmemory says: $msg" grep -qF "$msg" "$work/enq.err" ||
  cat "$work/enq.err" >&2
check "the queue filled up (over 150 tasks)" [ "$cnt" -gt 150 ]
check "due is what was enqueued" is "$q" due "$cnt"
# the limit 256 KiB below what is used, so that what follows surely runs over it (the
# connections' buffers come and go by a few KiB)
used0=$(mem used_memory)
max=$((used0 - 256 * 1024))
rcli config set maxmemory "$max" >/dev/null
msg="Redis is out of memory (maxmemory $max): drop or export failed tasks, or raise maxmemory"
"$bin" enqueue -q "$q" --json "$pl" >/dev/null 2>"$work/enq.err"
check "still refused, exit 1" [ $? -eq 1 ]
check "the message names the new maxmemory" grep -qF "$msg" "$work/enq.err"

"$bin" requeue -q "$f" 1 >"$work/rq.out" 2>"$work/rq.err"
check "requeue at maxmemory: exit 1" [ $? -eq 1 ]
check "requeue at maxmemory says: $msg" grep -qF "$msg" "$work/rq.err" || cat "$work/rq.err" >&2
check "requeue refused: still 10 failed" is "$f" failed 10

"$bin" pause -q "$q" --reason full >/dev/null 2>"$work/pause.err"
check "pause at maxmemory: exit 0" [ $? -eq 0 ] || cat "$work/pause.err" >&2
check "the queue is paused" sh -c "'$bin' stats -q '$q' --json | grep -q '\"paused\":true'"
"$bin" resume -q "$q" >/dev/null 2>"$work/resume.err"
check "resume at maxmemory: exit 0" [ $? -eq 0 ] || cat "$work/resume.err" >&2

# the worker drains the full queue: claims, acks, fails (a third of the tasks)
peak0=$(mem used_memory_peak)
spawn "$bin" work -q "$q" --concurrency 4 --quiet -- "$work/h.sh" 2>>"$work/work.log"
wpid=$spawned
wait_for 60000 "the queue drained (due 0, in flight 0)" sh -c "
  '$bin' stats -q '$q' --json | grep -q '\"due\":0,' &&
  '$bin' stats -q '$q' --json | grep -q '\"inflight\":0,'" ||
  bad "the worker drained the queue"
stop_pid "$wpid"
fails=$((cnt / 3))
check "the worker failed $fails tasks" is "$q" failed "$fails"
check "the worker completed $((cnt - fails)) tasks" is "$q" done "$((cnt - fails))"
check "no refusal in the worker's log" not grep -q "OOM\|out of memory" "$work/work.log" ||
  grep "OOM\|out of memory" "$work/work.log" | head -3 >&2
used1=$(mem used_memory)
peak1=$(mem used_memory_peak)
echo "# used_memory $used0 before the worker, $used1 after;" \
  "peak $peak0 before, $peak1 while it drained"
check "used_memory went down ($used0 -> $used1)" [ "$used1" -lt "$used0" ]

# the failed sets go with drop, at maxmemory or not
"$bin" drop -q "$q" --all-failed >"$work/drop.out" 2>"$work/drop.err"
check "drop --all-failed: exit 0" [ $? -eq 0 ] || cat "$work/drop.err" >&2
check "drop --all-failed: no failed left" is "$q" failed 0
check "below maxmemory again: enqueue works" "$bin" enqueue -q "$q" --json '{}'
# over the limit again, so that the second drop runs at maxmemory too
rcli config set maxmemory "$(($(mem used_memory) - 256 * 1024))" >/dev/null
check "over maxmemory again: enqueue refused" not "$bin" enqueue -q "$q" --json "$pl"
"$bin" drop -q "$f" --all-failed >"$work/drop.out" 2>"$work/drop.err"
check "drop --all-failed at maxmemory: exit 0" [ $? -eq 0 ] || cat "$work/drop.err" >&2
check "drop --all-failed at maxmemory: no failed left" is "$f" failed 0
check "drop printed 10 dropped" grep -q "dropped 10" "$work/drop.out"
# a server that lost the function library at maxmemory (FUNCTION LOAD is refused there,
# SCRIPT LOAD is not): the drainers still run, on the EVALSHA path
rcli function flush >/dev/null
"$bin" pause -q "$q" >/dev/null 2>"$work/pause2.err"
check "no function library, at maxmemory: pause: exit 0" [ $? -eq 0 ] || cat "$work/pause2.err" >&2
"$bin" resume -q "$q" >/dev/null 2>"$work/resume2.err"
check "no function library, at maxmemory: resume: exit 0" [ $? -eq 0 ] ||
  cat "$work/resume2.err" >&2
finish
