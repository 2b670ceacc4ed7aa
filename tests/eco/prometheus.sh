#!/bin/sh
# prometheus.sh: a real Prometheus (private, 127.0.0.1, temp dir, stopped by PID)
# scrapes delayq metrics every second; its HTTP API must return the counts of a queue
# this test filled, a running worker and a pause. The alert rules of docs/OPERATIONS.md (Monitoring) pass promtool check rules, load into that
# Prometheus, and DelayqFailuresGrowing goes pending once tasks fail.
set -u
. "$(dirname "$0")/lib.sh"
need prometheus promtool curl redis-cli python3
redis_start
q=t-prom-$$
f=t-prom-failed-$$
for n in 1 2 3 4; do "$bin" enqueue -q "$q" --json "{\"n\":$n}" >/dev/null; done
t_enq=$(mono_ms)
"$bin" enqueue -q "$q" --delay 10m --json '{}' >/dev/null
"$bin" enqueue -q "$f" --max-attempts 1 --json '{}' >/dev/null

# the rules of docs/OPERATIONS.md, between its markers, so the runbook stays what is tested
sed -n '/<!-- alert rules: begin -->/,/<!-- alert rules: end -->/p' "$src/docs/OPERATIONS.md" |
  sed '1,2d;$d' | sed '$d' >"$work/rules.yml"
check "docs/OPERATIONS.md has the alert rules block" grep -q 'alert: DelayqFailuresGrowing' "$work/rules.yml"
check "promtool check rules accepts the runbook's rules" sh -c "promtool check rules '$work/rules.yml' >/dev/null"

spawn "$bin" metrics --listen 127.0.0.1:0 2>"$work/metrics.log"
mpid=$spawned
port_logged() { grep -q 'port [1-9]' "$work/metrics.log"; }
wait_for 5000 "delayq metrics' port" port_logged || { bad "delayq metrics started"; finish; exit; }
mport=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$work/metrics.log" | head -1)

cat >"$work/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$work/rules.yml"]
scrape_configs:
  - job_name: delayq
    static_configs:
      - targets: ["127.0.0.1:$mport"]
CONF
check "promtool check config" sh -c "promtool check config '$work/prometheus.yml' >/dev/null"

# a port free a moment ago; a lost race shows as an early exit and is retried
ready() { curl -fs "http://127.0.0.1:$pport/-/ready" >/dev/null; }
tries=0
ppid=
while [ $tries -lt 3 ]; do
  pport=$(free_port)
  spawn prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn 2>>"$work/prometheus.log"
  ppid=$spawned
  gone_or_ready() { ready || dead "$ppid"; }
  wait_for 30000 "prometheus to be ready" gone_or_ready
  ready && break
  stop_pid "$ppid"
  ppid=
  tries=$((tries + 1))
done
[ -n "$ppid" ] || { bad "prometheus started"; sed 's/^/# /' "$work/prometheus.log"; finish; exit; }
ok "prometheus ready on 127.0.0.1:$pport"

# query EXPR: the value of the first series of an instant query ("" when none)
query() {
  curl -fs -G --data-urlencode "query=$1" "http://127.0.0.1:$pport/api/v1/query" |
    python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
query_is() { [ "$(query "$1")" = "$2" ]; }
check "the scrape target is up" wait_for 30000 "up == 1" query_is "up{job=\"delayq\"}" 1
check "delayq_up 1" query_is 'delayq_up' 1
check "due 4" wait_for 10000 "due 4" query_is "delayq_tasks{queue=\"$q\",state=\"due\"}" 4
check "future 1" query_is "delayq_tasks{queue=\"$q\",state=\"future\"}" 1
check "enqueued 5" query_is "delayq_events_total{queue=\"$q\",event=\"enqueued\"}" 5
check "two queues in the registry" query_is 'delayq_registry_queues' 2
# 600 s at the enqueue, less the time since (however slow this machine is)
next=$(query "delayq_next_due_seconds{queue=\"$q\"}")
low=$((600 - ($(mono_ms) - t_enq) / 1000 - 1))
check "next due in [$low, 600] s (got $next)" awk -v v="$next" -v l="$low" 'BEGIN { exit !(v >= l && v <= 600) }'

# the pause shows at the next scrapes, and the resume
check "not paused: 0" query_is "delayq_queue_paused{queue=\"$q\"}" 0
"$bin" pause -q "$q" --for 1h >/dev/null
check "paused: 1" wait_for 10000 "paused 1" query_is "delayq_queue_paused{queue=\"$q\"}" 1
"$bin" resume -q "$q" >/dev/null
check "resumed: 0" wait_for 10000 "paused 0" query_is "delayq_queue_paused{queue=\"$q\"}" 0
# and a throttle, its limits as gauges
"$bin" throttle -q "$q" --rate 10/s --concurrency 3 --for 1h >/dev/null
check "throttled: 1" wait_for 10000 "throttled 1" query_is "delayq_queue_throttled{queue=\"$q\"}" 1
check "the throttle's rate: 10/s" query_is "delayq_queue_rate_limit{queue=\"$q\"}" 10
check "the throttle's concurrency: 3" query_is "delayq_queue_concurrency_limit{queue=\"$q\"}" 3
"$bin" throttle -q "$q" --off >/dev/null
check "lifted: 0" wait_for 10000 "throttled 0" query_is "delayq_queue_throttled{queue=\"$q\"}" 0

# a new enqueue shows at the next scrapes
"$bin" enqueue -q "$q" --json '{}' >/dev/null
check "a new task shows: due 5" wait_for 10000 "due 5" query_is "delayq_tasks{queue=\"$q\",state=\"due\"}" 5

rules_ok() {
  curl -fs "http://127.0.0.1:$pport/api/v1/rules" | python3 -c 'import json, sys
rules = [r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
names = {r["name"]: r["health"] for r in rules}
sys.exit(0 if names == {"DelayqOldestDueTooOld": "ok", "DelayqFailuresGrowing": "ok"} else 1)'
}
check "both runbook rules loaded and evaluated without error" wait_for 15000 "rules evaluated" rules_ok

# a task fails for good: the failures alert goes pending for that queue (increase()
# needs a sample from before the failure, which the scrapes above already took)
check "failed counter 0 before" query_is "delayq_events_total{queue=\"$f\",event=\"failed\"}" 0
spawn "$bin" work -q "$f" --quiet -- sh -c 'exit 1' 2>>"$work/work.log"
wpid=$spawned
check "failed counter 1 in Prometheus" wait_for 15000 "failed 1" \
  query_is "delayq_events_total{queue=\"$f\",event=\"failed\"}" 1
check "the worker is live in Prometheus" wait_for 10000 "live 1" \
  query_is "delayq_workers{queue=\"$f\",state=\"live\"}" 1
stop_pid "$wpid"
alert_active() {
  curl -fs "http://127.0.0.1:$pport/api/v1/alerts" | python3 -c 'import json, sys
a = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(x["labels"]["alertname"] == "DelayqFailuresGrowing" and
                  x["labels"].get("queue") == sys.argv[1] for x in a) else 1)' "$f"
}
check "DelayqFailuresGrowing is active for the failing queue" \
  wait_for 15000 "the alert" alert_active
alert_other() {
  curl -fs "http://127.0.0.1:$pport/api/v1/alerts" | python3 -c 'import json, sys
a = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(x["labels"].get("queue") == sys.argv[1] for x in a) else 1)' "$q"
}
check "no alert for the healthy queue" eval '! alert_other'

stop_pid "$ppid"
stop_pid "$mpid"
finish
