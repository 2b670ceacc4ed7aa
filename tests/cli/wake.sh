#!/bin/sh
# wake.sh MODE: an idle `delayq work --max-idle 60s` starts a task within 1 s on every
# path that makes a task due sooner (PROTOCOL.md 5.1, wake-ups): enqueue, a retry due
# now, requeue by id, requeue --all, --group and --match, import --requeue, resume and
# reap. MODE is plain (the function library, FCALL), evalsha (the scripts' fallback
# path) or cluster (three masters; the queue's wake channel is sharded pub/sub on its
# slot's node). Each path waits until the worker has been idle for a while first, so
# only a wake-up (not its 60 s idle look) can start the task in time.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
. "$here/../prod/sentinel_lib.sh"
need redis-cli python3
mode=${1:-plain}
server=${DQ_REDIS_SERVER:-redis-server}

case "$mode" in
plain) redis_start ;;
evalsha)
  redis_start
  DELAYQ_SCRIPTS=evalsha
  export DELAYQ_SCRIPTS
  ;;
cluster)
  cports=""
  for k in 1 2 3; do
    # the bus port (port + 10000) must be free and below 65536: --cluster-port names it
    p=$(free_port)
    node_start "c$k" "$p" --cluster-enabled yes --cluster-node-timeout 2000 \
      --cluster-port "$(free_port)"
    cports="$cports $p"
  done
  for p in $cports; do check "cluster node $p up" wait_for 5000 "node $p" port_ping "$p"; done
  # shellcheck disable=SC2086
  redis-cli --cluster create $(for p in $cports; do printf '127.0.0.1:%s ' "$p"; done) \
    --cluster-yes >"$work/create.log" 2>&1 || { bad "cluster create"; cat "$work/create.log"; }
  cluster_ok() {
    for p in $cports; do
      redis-cli -h 127.0.0.1 -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' ||
        return 1
    done
  }
  check "cluster_state:ok" wait_for 30000 "cluster ok" cluster_ok || { finish; exit 1; }
  set -- $cports
  DELAYQ_URL="redis-cluster://127.0.0.1:$1,127.0.0.1:$2"
  export DELAYQ_URL
  ;;
*) echo "usage: wake.sh plain|evalsha|cluster" >&2; exit 2 ;;
esac

q=wake
log="$work/started.log"
: >"$log"
# The handler logs "<id> <start ms>"; a payload holding "fail" fails for good, "retry"
# asks for a retry on its first attempt, "hang" outlives its lease.
cat >"$work/handler.sh" <<EOF
#!/bin/sh
p=\$(cat)
echo "\$DELAYQ_TASK_ID \$(date +%s%3N)" >>"$log"
case "\$p" in
*fail*) echo "boom-\$DELAYQ_TASK_ID" >&2; exit 1 ;;
*retry*) [ "\$DELAYQ_ATTEMPT" = 1 ] && exit 75; exit 0 ;;
*hang*) exec sleep 300 ;;
esac
exit 0
EOF
chmod +x "$work/handler.sh"

dq() { "$bin" "$@"; }
starts() { grep -c "^$1 " "$log"; }
# started ID N: the task ID has been started N times
started() { [ "$(starts "$1")" -ge "$2" ]; }
last_start() { grep "^$1 " "$log" | tail -n 1 | cut -d' ' -f2; }
workers_live() { dq workers -q "$q" 2>/dev/null | grep -q ' live '; }

# A backoff of 1 ms: a retry is due at once, so "retry due now" is measurable.
check "config backoff_base_ms=1ms" dq config -q "$q" backoff_base_ms=1ms >/dev/null
spawn "$bin" work -q "$q" --name wake-w1 --max-idle 60s --lease 2s -- "$work/handler.sh" 2>>"$work/worker.log"
worker=$spawned
check "the worker registers" wait_for 10000 "a live worker" workers_live

# idle: nothing has started for a while, so the worker sleeps on its 60 s idle look
settle() {
  end=$(($(mono_ms) + 400))
  n=$(wc -l <"$log")
  while [ "$(mono_ms)" -lt "$end" ]; do
    sleep 0.05
    [ "$(wc -l <"$log")" = "$n" ] || { end=$(($(mono_ms) + 400)); n=$(wc -l <"$log"); }
  done
}
# within NAME ID N T0: the task ID is started the Nth time within 1 s of T0 (ms)
within() {
  w_name=$1 w_id=$2 w_n=$3 w_t0=$4
  if ! wait_for 3000 "task $w_id started $w_n times" started "$w_id" "$w_n"; then
    bad "$mode: $w_name: task $w_id never started (worker log below)"
    tail -n 20 "$work/worker.log" 2>/dev/null
    return 1
  fi
  lat=$(($(last_start "$w_id") - w_t0))
  if [ "$lat" -le 1000 ]; then
    ok "$mode: $w_name: an idle worker started the task in $lat ms"
  else
    bad "$mode: $w_name: an idle worker started the task after $lat ms (over 1 s)"
  fi
}

# enqueue
settle
t0=$(mono_ms)
id=$(dq enqueue -q "$q" --json '{"k":"ok"}')
within "enqueue" "$id" 1 "$t0"

# a retry due now (the worker settles the first attempt and runs the retry)
settle
t0=$(mono_ms)
id=$(dq enqueue -q "$q" --json '{"k":"retry"}')
wait_for 3000 "first attempt of $id" started "$id" 1
t1=$(last_start "$id")
within "retry due now" "$id" 2 "$t1"

# requeue by id: the task failed for good first
settle
id=$(dq enqueue -q "$q" --json '{"k":"fail"}')
wait_for 3000 "task $id failed" sh -c "'$bin' show -q '$q' '$id' | grep -q failed"
settle
t0=$(mono_ms)
check "$mode: requeue $id" dq requeue -q "$q" "$id" >/dev/null
within "requeue ID" "$id" 2 "$t0"

# the bulk paths: each requeues failed tasks into an idle worker's queue
fail_one() {
  fid=$(dq enqueue -q "$q" --json "{\"k\":\"fail-$1\"}")
  wait_for 3000 "task $fid failed" sh -c "'$bin' show -q '$q' '$fid' | grep -q failed"
}

fail_one all
settle
t0=$(mono_ms)
want=$(($(starts "$fid") + 1))
check "$mode: requeue --all" dq requeue -q "$q" --all >/dev/null
within "requeue --all" "$fid" "$want" "$t0"

fail_one group
settle
gid=$(dq errors -q "$q" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next(g["group"] for g in d["groups"] if g["sample_id"] == sys.argv[1]))' "$fid")
t0=$(mono_ms)
want=$(($(starts "$fid") + 1))
check "$mode: requeue --group $gid" dq requeue -q "$q" --group "$gid" >/dev/null
within "requeue --group" "$fid" "$want" "$t0"

fail_one match
settle
t0=$(mono_ms)
want=$(($(starts "$fid") + 1))
check "$mode: requeue --match boom-$fid" dq requeue -q "$q" --match "boom-$fid" >/dev/null
within "requeue --match" "$fid" "$want" "$t0"

# import --requeue: the failed set exported, dropped, and imported again
fail_one import
settle
dq export failed -q "$q" >"$work/failed.jsonl"
check "$mode: drop --all-failed" dq drop -q "$q" --all-failed >/dev/null
t0=$(mono_ms)
want=$(($(starts "$fid") + 1))
check "$mode: import --requeue" dq import -q "$q" --requeue <"$work/failed.jsonl" >/dev/null
within "import --requeue" "$fid" "$want" "$t0"

# resume: a task enqueued while paused starts when the pause ends
settle
check "$mode: pause" dq pause -q "$q" --reason wake-test >/dev/null
id=$(dq enqueue -q "$q" --json '{"k":"ok"}')
settle
if started "$id" 1; then bad "$mode: a paused queue ran task $id"; fi
t0=$(mono_ms)
check "$mode: resume" dq resume -q "$q" >/dev/null
within "resume" "$id" 1 "$t0"

# reap: another worker's task outlives its lease when that worker is killed (-9); an
# idle worker started after the claim learns the lease's end from its first reap and
# takes the task when the lease ends
stop_pid "$worker" TERM
spawn "$bin" work -q "$q" --name wake-w2 --max-idle 60s --lease 1s -- "$work/handler.sh" 2>>"$work/worker.log"
w2=$spawned
id=$(dq enqueue -q "$q" --json '{"k":"hang"}')
wait_for 5000 "hang task $id started" started "$id" 1
spawn "$bin" work -q "$q" --name wake-w3 --max-idle 60s --grace 1s -- "$work/handler.sh" 2>>"$work/worker.log"
worker=$spawned
wait_for 5000 "wake-w3 live" sh -c "'$bin' workers -q '$q' | grep -q 'wake-w3.* live'"
settle
kill -KILL "$w2"
# w2 renewed its 1 s lease while the task ran: it ends at most 1 s after the kill
within "reap after kill -9 (from the lease's end)" "$id" 2 "$(($(mono_ms) + 1000))"

stop_pid "$worker" TERM
finish
