#!/bin/sh
# matrix.sh: every URL form (redis://, rediss://, redis-sentinel://, redis-cluster://)
# against its own real servers on 127.0.0.1, each running the whole user-facing set
# through the delayq command: enqueue (plain, --id, a repeated --id), stats (and
# --json), ls, show, queues, workers, config get/set, pause/resume, a worker that
# drains the queue and fails some tasks, export/import, requeue (id and --all), drop
# (id and --all-failed), audit, and delayq top in tmux (header, counts, a requeue by
# keys). Then the viewer and operator of docs/SECURITY.md against the cluster. Each
# result is asserted (exit status and output); every wait is a deadline poll.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
. "$here/sentinel_lib.sh"
need redis-cli openssl tmux python3

sock="dqmatrix$$"
# one tmux server per session (top_session): a session is never added to a server that
# is exiting (tmux 3.3a crashes), and a failed step's session cannot be typed into later
srv=0
tm() { tmux -L "$sock.$srv" "$@"; }
# top_session NAME COMMAND: ends the previous session's server, starts NAME on a new one
top_session() {
  tm kill-server 2>/dev/null
  srv=$((srv + 1))
  tm -f /dev/null new-session -d -s "$1" -x 120 -y 30 "$2"
}
tm_cleanup() {
  i=0
  while [ $i -le $srv ]; do tmux -L "$sock.$i" kill-server 2>/dev/null; i=$((i + 1)); done
}
trap 'tm_cleanup; cleanup' EXIT

# ---- servers ------------------------------------------------------------------------
. "$here/../harness/certs.sh"
make_certs "$work" || { bad "openssl"; cat "$work/openssl.log"; finish; exit 1; }

# (a) plain
plain_port=$(free_port)
node_start plain "$plain_port"
# (b) TLS only
tls_port=$(free_port)
node_start tls 0 --tls-port "$tls_port" --tls-cert-file "$work/server.crt" \
  --tls-key-file "$work/server.key" --tls-ca-cert-file "$work/ca.crt" --tls-auth-clients no
tping() { [ "$(redis-cli --tls --cacert "$work/ca.crt" -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]; }
# (c) master, replica, three sentinels
sentinel_setup || { bad "sentinel set-up"; finish; exit 1; }
# (d) three masters
cports=""
for k in 1 2 3; do
  p=$(free_port)
  node_start "c$k" "$p" --cluster-enabled yes --cluster-node-timeout 2000 \
    --cluster-port "$(free_port)"
  cports="$cports $p"
done
check "plain up" wait_for 5000 plain port_ping "$plain_port"
check "TLS up" wait_for 5000 tls tping "$tls_port"
for p in $cports; do check "cluster node $p up" wait_for 5000 "node $p" port_ping "$p"; done
# shellcheck disable=SC2086
redis-cli --cluster create $(for p in $cports; do printf '127.0.0.1:%s ' "$p"; done) \
  --cluster-yes >"$work/create.log" 2>&1 || { bad "cluster create"; cat "$work/create.log"; }
cluster_ok() {
  for p in $cports; do
    redis-cli -h 127.0.0.1 -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || return 1
  done
}
check "cluster_state:ok on the three masters" wait_for 30000 "cluster ok" cluster_ok
set -- $cports
CURL="redis-cluster://127.0.0.1:$1,127.0.0.1:$2"

# ---- helpers ------------------------------------------------------------------------
printf '#!/bin/sh\ngrep -q fail && exit 1\nexit 0\n' >"$work/handler.sh" # fail = for good
chmod +x "$work/handler.sh"
# dq ARGS...: delayq with the form's settings (DELAYQ_URL, DELAYQ_TLS_CA); out, err, rc
dq() {
  "$bin" "$@" >"$work/out" 2>"$work/err" </dev/null
  rc=$?
}
# is CODE NAME PATTERN ARGS...: delayq ARGS exits CODE and its stdout matches PATTERN
is() {
  code=$1 name=$2 pat=$3
  shift 3
  dq "$@"
  if [ "$rc" -eq "$code" ] && grep -qE -- "$pat" "$work/out"; then ok "$form: $name"; else
    bad "$form: $name (rc $rc, want $code and /$pat/: $(head -c 300 "$work/out") | $(head -c 300 "$work/err"))"
    return 1
  fi
}
# count FIELD: a field of stats --json
count() {
  "$bin" stats -q "$q" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
counts_are() { [ "$(count due)" = "$1" ] && [ "$(count failed)" = "$2" ]; }
screen_has() { tm capture-pane -p -t "$form" | grep -qF -- "$1"; }

# matrix FORM: the whole set on queue mx (DELAYQ_URL and DELAYQ_TLS_CA set by the caller)
matrix() {
  form=$1 q=mx
  export DELAYQ_QUEUE=$q
  is 0 "enqueue prints an id" '^[0-9A-Za-z]' enqueue --json '{"n":1}'
  is 0 "enqueue --id" '^keep-1$' enqueue --id keep-1 --delay 1h --json '{"n":2}'
  dq enqueue --id keep-1 --delay 1h --json '{"n":2}'
  check "$form: a repeated --id is not added (exit 0, said on stderr)" \
    sh -c '[ "$1" -eq 0 ] && grep -q "exists" "$2"' _ "$rc" "$work/err"
  for i in 1 2 3; do dq enqueue --id "f$i" --max-attempts 1 --json '{"fail":true}'; done
  check "$form: three failing tasks enqueued" [ "$rc" -eq 0 ]
  is 0 "stats" '^queue +mx at ' stats
  case $form in
  redis-sentinel) is 0 "stats names the master found" ' at 127.0.0.1:[0-9]+ via sentinel mymaster,' stats ;;
  redis-cluster) is 0 "stats names the node" ' at cluster 127.0.0.1:[0-9]+,127.0.0.1:[0-9]+ \(node 127.0.0.1:[0-9]+\),' stats ;;
  esac
  is 0 "stats --json (4 due, 1 future)" '"due": ?4' stats --json
  check "$form: stats --json future 1" [ "$(count future)" = 1 ]
  is 0 "ls due" '^f1|[[:space:]]f1' ls due
  is 0 "ls future" 'keep-1' ls future
  is 0 "show" 'keep-1' show keep-1
  is 0 "queues --counts lists mx" '^mx[[:space:]]' queues --counts
  check "$form: queues --counts has its header" grep -qE '^QUEUE +DUE +FUTURE +IN-FLIGHT +FAILED' "$work/out"
  is 0 "queues (the overview) has a row for mx" '^(ok|warn|bad) +mx[[:space:]]' queues
  is 0 "config (get)" 'max_attempts' config
  is 0 "config max_attempts=7" '^max_attempts +7$' config max_attempts=7
  is 0 "config --json shows 7" '"max_attempts": ?7' config --json
  is 0 "pause" '^paused queue mx until' pause --for 10m --reason matrix
  is 0 "stats says paused" '^PAUSED .*: matrix$' stats
  is 0 "resume" '^resumed queue mx$' resume
  dq stats
  check "$form: stats no longer paused" not grep -q '^PAUSED' "$work/out"

  "$bin" work -q "$q" --max-idle 200ms -- "$work/handler.sh" >"$work/work.log" 2>&1 &
  wpid=$!
  pids="$pids $wpid"
  check "$form: work drains the queue (1 done, 3 failed)" \
    wait_for 30000 "drained" counts_are 0 3
  is 0 "workers lists the running worker" '^queue mx: 1 workers, 1 live' workers
  stop_pid "$wpid"
  wait "$wpid" 2>/dev/null
  is 0 "ls failed" 'f2' ls failed
  is 0 "show a failed task (its error)" 'exit 1' show f1

  dq export failed
  check "$form: export failed writes 3 lines" test "$rc" -eq 0 -a "$(wc -l <"$work/out")" -eq 3
  cp "$work/out" "$work/export.jsonl"
  is 0 "drop f1" '^dropped 1$' drop f1
  check "$form: 2 failed after drop" [ "$(count failed)" = 2 ]
  "$bin" import <"$work/export.jsonl" >"$work/out" 2>"$work/err"
  check "$form: import (exit 0)" [ $? -eq 0 ] || cat "$work/err"
  check "$form: import brought f1 back (3 failed)" [ "$(count failed)" = 3 ]
  "$bin" export failed 2>/dev/null | sort >"$work/export2.jsonl"
  sort "$work/export.jsonl" | cmp -s - "$work/export2.jsonl"
  check "$form: export after import is the same records" [ $? -eq 0 ]

  # top: header and counts, then r y requeues a failed task
  top_session "$form" \
    "DELAYQ_URL='$DELAYQ_URL' DELAYQ_TLS_CA='${DELAYQ_TLS_CA:-}' $bin top -q $q; sleep 30"
  check "$form: top shows the queue in its header" wait_for 15000 "top header" screen_has "queue mx"
  check "$form: top shows 3 failed" wait_for 10000 "top failed" screen_has "failed 3"
  if [ "$form" = redis-cluster ]; then
    check "$form: top names the cluster node" screen_has "cluster node 127.0.0.1:"
  fi
  tm send-keys -t "$form" 4
  tm send-keys -t "$form" r
  check "$form: top asks before requeue" wait_for 5000 "confirm" screen_has "now? y/N"
  tm send-keys -t "$form" y
  check "$form: top requeued one (2 failed, 1 due)" wait_for 10000 "requeue by keys" counts_are 1 2
  tm send-keys -t "$form" q

  is 0 "requeue f2" '^requeued 1$' requeue f2
  check "$form: f2 due again" [ "$(count failed)" = 1 ]
  is 0 "requeue --all" '^requeued 1$' requeue --all
  check "$form: nothing failed after requeue --all" counts_are 3 0
  is 0 "drop a scheduled task" '^dropped 1$' drop keep-1
  check "$form: future 0 after drop" [ "$(count future)" = 0 ]
  is 0 "audit has the operator actions" ' requeue +f2 +-> ok: 1 moved' audit
  for a in 'requeue-all +failed' 'drop +keep-1' 'drop +f1' 'pause +for 600000ms' 'resume +paused' 'config +max_attempts=7'; do
    check "$form: audit has $a" grep -qE " $a.* -> ok" "$work/out"
  done
  unset DELAYQ_QUEUE
}

export DELAYQ_URL="redis://127.0.0.1:$plain_port"
matrix redis
export DELAYQ_URL="rediss://127.0.0.1:$tls_port" DELAYQ_TLS_CA="$work/ca.crt"
matrix rediss
unset DELAYQ_TLS_CA
export DELAYQ_URL="$SURL"
matrix redis-sentinel
# docs/DEPLOYMENT.md: /MASTER/2 selects db 2; a master the sentinels do not know is exit 3, named
form=redis-sentinel
is 0 "/mymaster/2: enqueue into db 2" '^db2-1$' enqueue --url "$SURL/2" -q mx --id db2-1 --json 1
check "$form: the task is in db 2 of the master" \
  test "$(redis-cli -h 127.0.0.1 -p "$master_port" -n 2 zcard 'dq:{mx}:sched')" = 1
# docs/DEPLOYMENT.md: --min-replicas waits for the replica; more replicas than exist is exit 1, said
is 0 "--min-replicas 1 (the replica confirms)" '^mr-1$' enqueue --min-replicas 1 -q mx --id mr-1 --json 1
dq enqueue --min-replicas 2 --timeout 1s -q mx --id mr-2 --json 1
check "$form: --min-replicas 2 with one replica is exit 1, said" \
  sh -c '[ "$1" -eq 1 ] && grep -q "but not confirmed on 2 replicas (--min-replicas)" "$2"' _ "$rc" "$work/err" ||
  cat "$work/err"
dq stats --url "${SURL%/*}/nosuch"
check "$form: an unknown master name is exit 3, named" \
  sh -c '[ "$1" -eq 3 ] && grep -q "does not know a master named \"nosuch\"" "$2"' _ "$rc" "$work/err" ||
  cat "$work/err"
export DELAYQ_URL="$CURL"
matrix redis-cluster

# ---- roles on the cluster -----------------------------------------------------------
# the viewer and operator lines of docs/SECURITY.md, on every master (ACLs are per node)
grep -E '^ACL SETUSER delayq-(viewer|operator) ' "$src/docs/SECURITY.md" |
  sed 's/CHANGE_ME/role-secret-1/' >"$work/acl.txt"
check "SECURITY.md has the viewer and operator lines" test "$(wc -l <"$work/acl.txt")" -eq 2
for p in $cports; do
  while IFS= read -r line; do
    out=$(printf '%s\n' "$line" | redis-cli -h 127.0.0.1 -p "$p" 2>&1)
    check "node $p: $(echo "$line" | cut -d' ' -f3)" test "$out" = OK
  done <"$work/acl.txt"
done
# a user without cluster|slots is told which grant it lacks, not to check cluster mode
for p in $cports; do
  redis-cli -h 127.0.0.1 -p "$p" ACL SETUSER mx-noslots on '>role-secret-1' '~*' '&*' +@all \
    -cluster\|slots >/dev/null
done
DELAYQ_PASSWORD=role-secret-1 "$bin" stats -q mx \
  --url "redis-cluster://mx-noslots@127.0.0.1:$1" >"$work/out" 2>"$work/err"
check "cluster: a user without cluster|slots is exit 1, naming the grant" \
  sh -c '[ "$1" -eq 1 ] && grep -q "needs +cluster|slots and +asking" "$2"' _ $? "$work/err" ||
  cat "$work/err"
export DELAYQ_PASSWORD=role-secret-1 DELAYQ_QUEUE=mx
form="cluster viewer"
export DELAYQ_URL="redis-cluster://delayq-viewer@127.0.0.1:$1,127.0.0.1:$2"
is 0 "stats" '^queue +mx at ' stats
is 0 "ls due" '[[:alnum:]]' ls due
is 0 "queues --counts" '^mx[[:space:]]' queues --counts
is 0 "queues (the overview)" '^(ok|warn|bad) +mx[[:space:]]' queues
dq enqueue --json '{"n":9}'
check "$form: enqueue refused with NOPERM, exit 1" \
  sh -c '[ "$1" -eq 1 ] && grep -q NOPERM "$2"' _ "$rc" "$work/err" || cat "$work/err"
dq requeue --all
check "$form: requeue refused with NOPERM, exit 1" \
  sh -c '[ "$1" -eq 1 ] && grep -q NOPERM "$2"' _ "$rc" "$work/err" || cat "$work/err"
is 0 "show" '^id +f1' show f1
is 0 "audit" 'requeue' audit
top_session viewer \
  "DELAYQ_URL='$DELAYQ_URL' DELAYQ_PASSWORD=role-secret-1 $bin top -q mx; sleep 30"
form=viewer
check "cluster viewer: top opens read-only by itself" \
  wait_for 15000 "viewer top" screen_has "READ-ONLY"
check "cluster viewer: top shows the queue" screen_has "queue mx"
tm kill-server 2>/dev/null
form="cluster operator"
export DELAYQ_URL="redis-cluster://delayq-operator@127.0.0.1:$1,127.0.0.1:$2"
is 0 "pause" '^paused queue mx' pause --for 1m
is 0 "resume" '^resumed queue mx$' resume
is 0 "drop --all-failed" '^dropped 0$' drop --all-failed
finish
