#!/bin/sh
# metrics.sh: delayq metrics against a private redis-server: the exposition passes
# promtool check metrics and holds the queue's real counts, a real worker as live and
# the pause (with and without an end, then resumed), the run-time histogram
# (cumulative buckets, +Inf = _count = the runs settled); --textfile writes
# atomically; the HTTP server answers /metrics, 404 and 405, survives Redis going away
# (delayq_up 0, errors counted, HTTP 200) and coming back, and stops on SIGTERM/SIGINT;
# a partitioned queue is one set of series (the sums) with delayq_queue_partitions.
set -u
. "$(dirname "$0")/lib.sh"
need promtool curl redis-cli python3
redis_start
q=t-metrics-$$
f=t-metrics-failed-$$
i=t-metrics-inflight-$$

# the queue: 3 due, 2 future of which 1 far (default far_future_ms 1h)
t_enq=$(mono_ms)
for n in 1 2 3; do "$bin" enqueue -q "$q" --json "{\"n\":$n}" >/dev/null; done
"$bin" enqueue -q "$q" --delay 30m --json '{}' >/dev/null
"$bin" enqueue -q "$q" --delay 3h --json '{}' >/dev/null
# 2 failed for good, by a worker whose command fails
for n in 1 2; do "$bin" enqueue -q "$f" --max-attempts 1 --json '{}' >/dev/null; done
qstat() { "$bin" stats -q "$1" --json | grep -o "\"$2\":[0-9-]*" | head -1 | cut -d: -f2; }
is() { [ "$(qstat "$1" "$2")" = "$3" ]; }
spawn "$bin" work -q "$f" --quiet -- sh -c "exit 1" 2>>"$work/work.log"
wpid=$spawned
wait_for 10000 "2 failed tasks" is "$f" failed 2 || bad "worker failed the tasks"
stop_pid "$wpid"
# 1 in flight: a worker holds it in a long command while we scrape
"$bin" enqueue -q "$i" --json '{}' >/dev/null
spawn "$bin" work -q "$i" --quiet --grace 100ms -- sleep 60 2>>"$work/work.log"
ipid=$spawned
wait_for 10000 "1 task in flight" is "$i" inflight 1 || bad "worker claimed the task"
live_is() { "$bin" workers -q "$1" --json | grep -q "\"live\":$2,"; }
wait_for 10000 "the worker in the registry" live_is "$i" 1 || bad "worker registered"

# val FILE SERIES: the value of SERIES (name{labels} as printed) in FILE
val() { awk -v s="$2" '$1 == s { print $2; exit }' "$1"; }
has() { [ "$(val "$1" "$2")" = "$3" ]; }

"$bin" metrics --textfile - >"$work/m.txt" 2>"$work/m.err"
check "textfile - exits 0" [ $? -eq 0 ]
check "promtool check metrics accepts the exposition" sh -c "promtool check metrics <'$work/m.txt'"
check "delayq_up 1" has "$work/m.txt" delayq_up 1
check "due 3" has "$work/m.txt" "delayq_tasks{queue=\"$q\",state=\"due\"}" 3
check "future 2" has "$work/m.txt" "delayq_tasks{queue=\"$q\",state=\"future\"}" 2
check "far_future 1" has "$work/m.txt" "delayq_tasks{queue=\"$q\",state=\"far_future\"}" 1
check "failed 2" has "$work/m.txt" "delayq_tasks{queue=\"$f\",state=\"failed\"}" 2
check "inflight 1" has "$work/m.txt" "delayq_tasks{queue=\"$i\",state=\"inflight\"}" 1
check "events enqueued 5" has "$work/m.txt" "delayq_events_total{queue=\"$q\",event=\"enqueued\"}" 5
check "events failed 2" has "$work/m.txt" "delayq_events_total{queue=\"$f\",event=\"failed\"}" 2
check "registry has 3 queues" has "$work/m.txt" delayq_registry_queues 3
check "workers: the running worker is live" has "$work/m.txt" "delayq_workers{queue=\"$i\",state=\"live\"}" 1
check "workers: none lost" has "$work/m.txt" "delayq_workers{queue=\"$i\",state=\"lost\"}" 0
check "workers: the stopped worker left the registry" has "$work/m.txt" "delayq_workers{queue=\"$f\",state=\"live\"}" 0
check "not paused: delayq_queue_paused 0" has "$work/m.txt" "delayq_queue_paused{queue=\"$q\"}" 0
check "not paused: no until sample" sh -c "! grep -q '^delayq_queue_paused_until_seconds{' '$work/m.txt'"
check "no limit: nothing held back" has "$work/m.txt" "delayq_limited_total{queue=\"$q\",limit=\"rate\"}" 0
check "no limit: no rate limit sample" sh -c "! grep -q '^delayq_queue_rate_limit{' '$work/m.txt'"
check "not throttled: delayq_queue_throttled 0" has "$work/m.txt" "delayq_queue_throttled{queue=\"$q\"}" 0
# the run-time histogram (the stats hash's all-time buckets): the two failed runs of $f
# (sh -c "exit 1": well under 10 s), none where no worker settled anything
dur=delayq_task_duration_seconds
check "histogram: _count 2 for the queue whose runs failed" has "$work/m.txt" "${dur}_count{queue=\"$f\"}" 2
check "histogram: le=+Inf is the _count" has "$work/m.txt" "${dur}_bucket{queue=\"$f\",le=\"+Inf\"}" 2
check "histogram: le=10 holds both runs" has "$work/m.txt" "${dur}_bucket{queue=\"$f\",le=\"10\"}" 2
check "histogram: 12 buckets from 0.005 s" sh -c "[ \$(grep -c '^${dur}_bucket{queue=\"$f\",le=' '$work/m.txt') = 12 ] &&
  grep -q '^${dur}_bucket{queue=\"$f\",le=\"0.005\"} ' '$work/m.txt'"
check "histogram: cumulative (never decreasing)" awk -v p="${dur}_bucket{queue=\"$f\"," \
  'index($1, p) == 1 { if ($2 < last) bad = 1; last = $2 } END { exit bad }' "$work/m.txt"
sum=$(val "$work/m.txt" "${dur}_sum{queue=\"$f\"}")
check "histogram: _sum of two short runs in [0, 20) s (got $sum)" \
  awk -v v="$sum" 'BEGIN { exit !(v != "" && v >= 0 && v < 20) }'
check "histogram: no runs where nothing was settled" has "$work/m.txt" "${dur}_count{queue=\"$q\"}" 0
for fam in delayq_up delayq_scrape_errors_total delayq_tasks delayq_oldest_due_seconds \
    delayq_next_due_seconds delayq_events_total delayq_workers delayq_queue_paused \
    delayq_queue_paused_until_seconds delayq_limited_total delayq_queue_rate_limit \
    delayq_queue_concurrency_limit delayq_queue_throttled delayq_task_duration_seconds; do
  check "HELP and TYPE for $fam" sh -c "grep -q '^# HELP $fam ' '$work/m.txt' && grep -q '^# TYPE $fam ' '$work/m.txt'"
done
# the oldest due task waited a little; the next due is about 30 minutes away
# 1800 s at the enqueue, less the time since; the oldest due task waited at most that
el=$((($(mono_ms) - t_enq) / 1000 + 1))
next=$(val "$work/m.txt" "delayq_next_due_seconds{queue=\"$q\"}")
check "next due in [1800 - $el, 1800] s (got $next)" \
  awk -v v="$next" -v e="$el" 'BEGIN { exit !(v >= 1800 - e && v <= 1800) }'
old=$(val "$work/m.txt" "delayq_oldest_due_seconds{queue=\"$q\"}")
check "oldest due in (0, $el] s (got $old)" awk -v v="$old" -v e="$el" 'BEGIN { exit !(v > 0 && v <= e) }'
check "no next due sample for a queue with nothing in the future" \
  sh -c "! grep -qF 'delayq_next_due_seconds{queue=\"$f\"}' '$work/m.txt'"
stop_pid "$ipid"

# the pause: for 1h (the until gauge: its end in Unix seconds), until resumed (no
# until sample), resumed (0)
t0=$(($(date +%s) - 1))
"$bin" pause -q "$q" --for 1h >/dev/null
t1=$(($(date +%s) + 1))
"$bin" metrics --textfile - >"$work/p.txt"
check "paused for 1h: promtool accepts it" sh -c "promtool check metrics <'$work/p.txt'"
check "paused for 1h: delayq_queue_paused 1" has "$work/p.txt" "delayq_queue_paused{queue=\"$q\"}" 1
check "paused for 1h: the other queues 0" has "$work/p.txt" "delayq_queue_paused{queue=\"$f\"}" 0
until=$(val "$work/p.txt" "delayq_queue_paused_until_seconds{queue=\"$q\"}")
check "paused for 1h: until in [$t0 + 3600, $t1 + 3600] (got $until)" \
  awk -v v="$until" -v a="$t0" -v b="$t1" 'BEGIN { exit !(v != "" && v >= a + 3600 && v <= b + 3600) }'
check "paused for 1h: only that queue has an until sample" \
  [ "$(grep -c '^delayq_queue_paused_until_seconds{' "$work/p.txt")" = 1 ]
check "the stopped worker: not live after stopping" has "$work/p.txt" "delayq_workers{queue=\"$i\",state=\"live\"}" 0
"$bin" pause -q "$q" >/dev/null
"$bin" metrics --textfile - >"$work/p.txt"
check "paused until resumed: delayq_queue_paused 1" has "$work/p.txt" "delayq_queue_paused{queue=\"$q\"}" 1
check "paused until resumed: no until sample" sh -c "! grep -q '^delayq_queue_paused_until_seconds{' '$work/p.txt'"
"$bin" resume -q "$q" >/dev/null
"$bin" metrics --textfile - >"$work/p.txt"
check "resumed: delayq_queue_paused 0" has "$work/p.txt" "delayq_queue_paused{queue=\"$q\"}" 0
check "resumed: no until sample" sh -c "! grep -q '^delayq_queue_paused_until_seconds{' '$work/p.txt'"
check "resumed: promtool accepts it" sh -c "promtool check metrics <'$work/p.txt'"

# a partitioned queue (PROTOCOL.md 14): one set of series, the sums over its 4
# partitions, plus delayq_queue_partitions; its partitions are not queues of their own
pq=t-metrics-parts-$$
"$bin" config -q "$pq" partitions=4 >/dev/null
for n in 1 2 3 4 5 6 7 8 9 10; do "$bin" enqueue -q "$pq" --id "p$n" --json '{}' >/dev/null; done
for n in 1 2 3; do "$bin" enqueue -q "$pq" --id "pf$n" --delay 30m --json '{}' >/dev/null; done
"$bin" metrics --textfile - >"$work/pp.txt"
check "partitioned: promtool accepts it" sh -c "promtool check metrics <'$work/pp.txt'"
check "partitioned: due is the sum, 10" has "$work/pp.txt" "delayq_tasks{queue=\"$pq\",state=\"due\"}" 10
check "partitioned: future is the sum, 3" has "$work/pp.txt" "delayq_tasks{queue=\"$pq\",state=\"future\"}" 3
check "partitioned: enqueued is the sum, 13" has "$work/pp.txt" "delayq_events_total{queue=\"$pq\",event=\"enqueued\"}" 13
check "partitioned: delayq_queue_partitions 4" has "$work/pp.txt" "delayq_queue_partitions{queue=\"$pq\"}" 4
check "partitioned: HELP and TYPE for delayq_queue_partitions" \
  sh -c "grep -q '^# HELP delayq_queue_partitions ' '$work/pp.txt' && grep -q '^# TYPE delayq_queue_partitions gauge' '$work/pp.txt'"
check "partitioned: only it has a partitions sample" [ "$(grep -c '^delayq_queue_partitions{' "$work/pp.txt")" = 1 ]
check "partitioned: no series of a partition (Q~i.k)" sh -c "! grep -q '~' '$work/pp.txt'"
check "partitioned: one due series for it" [ "$(grep -c "^delayq_tasks{queue=\"$pq\",state=\"due\"}" "$work/pp.txt")" = 1 ]
check "partitioned: the registry holds it once (4 queues)" has "$work/pp.txt" delayq_registry_queues 4
check "partitioned: delayq queues lists it, not its partitions" \
  sh -c "'$bin' queues | grep -qF '$pq' && ! '$bin' queues | grep -qF '$pq~'"
check "partitioned: delayq queues sums its partitions (due 10)" sh -c "'$bin' queues --json | grep -F '\"queue\":\"$pq\"' | grep -qF '\"due\":10,'"
check "partitioned: delayq queues sums its partitions (future 3)" sh -c "'$bin' queues --json | grep -F '\"queue\":\"$pq\"' | grep -qF '\"future\":3,'"
check "before it: no partitions family" sh -c "! grep -q 'delayq_queue_partitions' '$work/m.txt'"

# -q, repeatable: only those queues
"$bin" metrics -q "$q" --queue="$f" --textfile - >"$work/q.txt"
check "-q twice: two queues" [ "$(grep -c '^delayq_tasks{.*state="due"' "$work/q.txt")" = 2 ]
check "-q: the inflight queue is left out" sh -c "! grep -qF '$i' '$work/q.txt'"
check "-q: no registry gauge" sh -c "! grep -q '^delayq_registry_queues' '$work/q.txt'"
"$bin" metrics -q 'bad name' --textfile - >/dev/null 2>&1
check "-q with an invalid name: exit 2" [ $? -eq 2 ]
"$bin" metrics --bogus >/dev/null 2>&1
check "unknown option: exit 2" [ $? -eq 2 ]
"$bin" metrics --listen nonsense --textfile - >/dev/null 2>&1
"$bin" metrics --listen nonsense >/dev/null 2>&1
check "--listen without a port: exit 2" [ $? -eq 2 ]

# hostile registry entries (a quote, a newline, invalid UTF-8) never break the format
redis-cli -p "$redis_port" sadd dq:queues "$(printf 'x"y\nz\377')" >/dev/null
"$bin" metrics --textfile - >"$work/h.txt"
check "a hostile registry entry: still valid" sh -c "promtool check metrics <'$work/h.txt'"

# --textfile PATH: atomic replace, readable by another user, no temporary file left
mkdir "$work/tf"
echo old >"$work/tf/delayq.prom"
"$bin" metrics --textfile "$work/tf/delayq.prom"
check "textfile: exit 0" [ $? -eq 0 ]
check "textfile: same exposition" sh -c "grep -F 'state=\"due\"' '$work/tf/delayq.prom' | grep -qF '$q'"
check "textfile: mode 644" [ "$(stat -c %a "$work/tf/delayq.prom")" = 644 ]
check "textfile: only the one file left" [ "$(ls "$work/tf" | wc -l)" = 1 ]
"$bin" metrics --textfile "$work/nodir/x.prom" 2>"$work/tf.err"
check "textfile in a missing directory: exit 1 with a message" \
  sh -c "[ $? -eq 1 ] && grep -q 'cannot create' '$work/tf.err'"

# the HTTP server, on a port the kernel picks (logged)
spawn "$bin" metrics --listen 127.0.0.1:0 --cache 0 2>"$work/srv.log"
spid=$spawned
port_logged() { grep -q 'port [1-9]' "$work/srv.log"; }
wait_for 5000 "the server's port in its log" port_logged || { bad "server started"; cat "$work/srv.log"; }
mport=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$work/srv.log" | head -1)
base="http://127.0.0.1:$mport"
code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
check "GET /metrics: 200" [ "$(code "$base/metrics")" = 200 ]
check "GET /metrics: the counts" has "$work/body" "delayq_tasks{queue=\"$q\",state=\"due\"}" 3
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$base/metrics")
check "content type text/plain; version=0.0.4" [ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ]
check "GET /: 200" [ "$(code "$base/")" = 200 ]
check "GET /nope: 404" [ "$(code "$base/nope")" = 404 ]
check "POST /metrics: 405" [ "$(code -X POST "$base/metrics")" = 405 ]

# Redis goes away: still 200, delayq_up 0, the error counter grows at each scrape
redis_stop
check "Redis down: 200" [ "$(code "$base/metrics")" = 200 ]
check "Redis down: delayq_up 0" has "$work/body" delayq_up 0
check "Redis down: still valid" sh -c "promtool check metrics <'$work/body'"
e1=$(val "$work/body" delayq_scrape_errors_total)
code "$base/metrics" >/dev/null
e2=$(val "$work/body" delayq_scrape_errors_total)
check "Redis down: errors counted ($e1 then $e2)" [ "$e1" -ge 1 ] && [ "$e2" -gt "$e1" ]
check "Redis down: no queue samples" sh -c "! grep -q '^delayq_tasks' '$work/body'"
check "Redis down: logged once" [ "$(grep -c 'scrape failed' "$work/srv.log")" = 1 ]
# and comes back on the same port (an empty server: no persistence)
redis_start "$redis_port"
"$bin" enqueue -q "$q" --json '{}' >/dev/null
up_again() { code "$base/metrics" >/dev/null && has "$work/body" delayq_up 1; }
check "Redis back: delayq_up 1 again" wait_for 10000 "delayq_up 1" up_again
check "Redis back: the new count" has "$work/body" "delayq_tasks{queue=\"$q\",state=\"due\"}" 1

# --textfile with Redis down: exit 3, the file says delayq_up 0
redis_stop
"$bin" metrics --textfile "$work/tf/delayq.prom" 2>/dev/null
check "textfile, Redis down: exit 3" [ $? -eq 3 ]
check "textfile, Redis down: delayq_up 0" has "$work/tf/delayq.prom" delayq_up 0

# SIGTERM and SIGINT stop the server with status 0
kill -TERM "$spid"
wait_for 5000 "metrics to exit on SIGTERM" dead "$spid"
wait "$spid"
check "SIGTERM: exit 0" [ $? -eq 0 ]
spawn "$bin" metrics --listen 127.0.0.1:0 2>"$work/srv2.log"
spid=$spawned
port_logged2() { grep -q 'port [1-9]' "$work/srv2.log"; }
wait_for 5000 "the second server" port_logged2
kill -INT "$spid"
wait_for 5000 "metrics to exit on SIGINT" dead "$spid"
wait "$spid"
check "SIGINT: exit 0" [ $? -eq 0 ]
finish
