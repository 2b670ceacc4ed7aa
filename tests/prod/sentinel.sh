#!/bin/sh
# sentinel.sh: the delayq command through redis-sentinel:// against one master, one
# replica and three sentinels on free loopback ports: enqueue, stats, ls, requeue,
# drop, config and pause name the master "via sentinel"; --min-replicas confirms or
# refuses (exit 1) a write; after a SIGKILL of the master and the sentinels' failover
# the same URL reaches the promoted replica with the data; bad URLs, an unknown master
# and unreachable sentinels get their exit status and a message naming the part.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
. "$here/sentinel_lib.sh"
need redis-cli

sentinel_setup || { bad "five servers up"; finish; exit 1; }
export DELAYQ_URL="$SURL" DELAYQ_QUEUE=sq
dq() { "$bin" "$@"; }

for i in 1 2 3; do dq enqueue --id "t$i" --json "{\"n\":$i}" >/dev/null || bad "enqueue t$i"; done
out=$(dq stats 2>&1)
check "stats names the master via the sentinels" \
  sh -c 'echo "$1" | grep -q "at 127.0.0.1:$2 via sentinel mymaster"' _ "$out" "$master_port"
check "stats counts 3 due" sh -c 'echo "$1" | grep -Eq "^due +3 "' _ "$out"
check "ls due lists the 3 tasks" sh -c '[ "$("$1" ls due | grep -c "t[123]")" = 3 ]' _ "$bin"

# a task that fails for good, requeued and dropped through the sentinel URL
dq enqueue --id bad1 --max-attempts 1 --json '{"x":1}' >/dev/null
dq enqueue --id bad2 --max-attempts 1 --json '{"x":2}' >/dev/null
spawn sh -c 'exec "$1" work -q sq --quiet -- sh -c "exit 1" 2>"$2"' _ "$bin" "$work/work.log"
wpid=$spawned
nfailed() { [ "$(dq ls failed --json 2>/dev/null | grep -c '"id"')" = "$1" ]; }
check "a worker through the sentinels fails the 5 tasks" wait_for 20000 "5 failed" nfailed 5
stop_pid "$wpid"
check "requeue through the sentinel URL" sh -c '"$1" requeue bad1 | grep -q 1' _ "$bin"
check "drop through the sentinel URL" sh -c '"$1" drop bad2 | grep -q 1' _ "$bin"
check "config set through the sentinel URL" sh -c '"$1" config max_attempts=7 | grep -q 7' _ "$bin"
check "pause and resume through the sentinel URL" sh -c '"$1" pause --for 1m >/dev/null &&
  "$1" resume >/dev/null' _ "$bin"

# --min-replicas: one replica confirms; two cannot (exit 1, the write is on the master)
check "--min-replicas 1: enqueue confirmed" sh -c '"$1" enqueue --min-replicas 1 --id mr1 --json 1 >/dev/null' _ "$bin"
out=$(dq enqueue --min-replicas 2 --timeout 300ms --id mr2 --json 2 2>&1)
rc=$?
check "--min-replicas 2 with one replica: exit 1" [ $rc -eq 1 ]
check "... saying it was made on the master but not confirmed on 2 replicas" \
  sh -c 'echo "$1" | grep -q "made on the master at .* but not confirmed on 2 replicas"' _ "$out"
check "... and it is on the master" sh -c '"$1" show mr2 >/dev/null' _ "$bin"
out=$(DELAYQ_MIN_REPLICAS=2 dq requeue --all --timeout 300ms 2>&1)
check "DELAYQ_MIN_REPLICAS=2 refuses an operator action with exit 1" [ $? -eq 1 ]
DELAYQ_MIN_REPLICAS=2 dq enqueue --min-replicas 0 --timeout 300ms --id mr0 --json 3 >/dev/null 2>&1
check "--min-replicas 0 turns off DELAYQ_MIN_REPLICAS=2 for one command (exit 0)" [ $? -eq 0 ]
out=$(DELAYQ_MIN_REPLICAS=two dq stats 2>&1)
check "DELAYQ_MIN_REPLICAS=two: exit 2 naming it" \
  sh -c '[ "$1" -eq 2 ] && echo "$2" | grep -q "DELAYQ_MIN_REPLICAS"' _ $? "$out"
out=$(dq stats --min-replicas 101 2>&1)
check "--min-replicas 101: exit 2" [ $? -eq 2 ]

# failover: SIGKILL the master; the same URL follows the sentinels to the replica
check "the sentinels promote the replica after a SIGKILL" failover_kill
ok_stats() { dq stats 2>/dev/null | grep -q "at 127.0.0.1:$replica_port via sentinel"; }
check "stats reaches the new master through the same URL" wait_for 20000 "new master" ok_stats
check "the confirmed task mr1 survived the failover" sh -c '"$1" show mr1 >/dev/null' _ "$bin"
check "enqueue on the new master" sh -c '"$1" enqueue --id after --json 3 >/dev/null' _ "$bin"

# bad input and unreachable servers
out=$(dq stats --url "redis-sentinel://127.0.0.1:1,/mymaster" 2>&1)
check "an empty sentinel in the list: exit 2 naming it" \
  sh -c '[ "$1" -eq 2 ] && echo "$2" | grep -q "sentinel 2 of the list is empty"' _ $? "$out"
out=$(dq stats --url "redis-sentinel://127.0.0.1:1" 2>&1)
check "no master name: exit 2 naming it" \
  sh -c '[ "$1" -eq 2 ] && echo "$2" | grep -q "master name is missing"' _ $? "$out"
first=$(echo $sentinel_ports | cut -d' ' -f1)
out=$(dq stats --url "redis-sentinel://127.0.0.1:$first/nosuch" 2>&1)
check "an unknown master: exit 3 naming it" \
  sh -c '[ "$1" -eq 3 ] && echo "$2" | grep -q "does not know a master named \"nosuch\""' _ $? "$out"
dead1=$(free_port)
out=$(dq stats --timeout 500ms --url "redis-sentinel://127.0.0.1:$dead1/mymaster" 2>&1)
check "no sentinel reachable: exit 3" \
  sh -c '[ "$1" -eq 3 ] && echo "$2" | grep -q "no sentinel of 1 named the master"' _ $? "$out"
out=$(dq stats --url "redis-sentinel://127.0.0.1:$dead1,127.0.0.1:$first/mymaster" 2>&1)
check "a dead sentinel first: the next one answers" [ $? -eq 0 ]
out=$(DELAYQ_SENTINEL_PASSWORD=nope dq stats 2>&1)
check "DELAYQ_SENTINEL_PASSWORD is sent to the sentinels (these have none: exit 3)" \
  sh -c '[ "$1" -eq 3 ] && echo "$2" | grep -qi "sentinel.*AUTH"' _ $? "$out"
out=$(dq stats --tls-ca /nonexistent 2>&1)
check "--tls-* with redis-sentinel:// (not rediss-): exit 2" [ $? -eq 2 ]
finish
