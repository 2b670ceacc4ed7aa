#!/bin/sh
# roles.sh: the four ACL roles of docs/SECURITY.md, enforced by a real redis-server.
# The users are made from the "ACL SETUSER" lines of that file (so the doc and this test
# cannot drift); each part of delayq runs under the narrowest role that should work and
# must work, and under the next narrower one must be refused with NOPERM naming the
# command, exit 1. The viewer runs every read path; MONITOR records every command it
# sends, which must all be reads. Also: top goes read-only by itself (tmux), the --url
# password is gone from /proc/PID/cmdline of a running worker, and CLIENT LIST names
# every client.
set -u
. "${DQ_SOURCE_ROOT:?}/tests/eco/lib.sh"
need redis-cli tmux python3

redis_start
r() { redis-cli -h 127.0.0.1 -p "$redis_port" --user admin --pass admin-secret --no-auth-warning "$@"; }
url() { echo "redis://delayq-$1@127.0.0.1:$redis_port"; }
export DELAYQ_PASSWORD=role-secret-1

# ---- the users, from the doc ------------------------------------------------------
# this test's own admin; then nothing below may fall back to the default user
redis-cli -h 127.0.0.1 -p "$redis_port" ACL SETUSER admin on '>admin-secret' '~*' '&*' +@all >/dev/null
grep '^ACL SETUSER ' "$src/docs/SECURITY.md" | sed 's/CHANGE_ME/role-secret-1/' >"$work/acl.txt"
check "SECURITY.md has four ACL SETUSER lines" test "$(wc -l <"$work/acl.txt")" -eq 4
while IFS= read -r line; do
  out=$(printf '%s\n' "$line" | r 2>&1)
  check "created: $(echo "$line" | cut -d' ' -f3)" test "$out" = OK
done <"$work/acl.txt"
r ACL SETUSER default off >/dev/null

# dq CMD... as ROLE: runs delayq with ROLE's URL; out, err, rc
as() {
  role=$1
  shift
  cmd=$1
  shift
  "$bin" "$cmd" --url "$(url "$role")" -q emails "$@" >"$work/out" 2>"$work/err" </dev/null
  rc=$?
}
# works ROLE CMD...: exit 0
works() {
  as "$@"
  if [ "$rc" -eq 0 ]; then ok "$1 may $2"; else bad "$1 may $2 (rc $rc: $(cat "$work/err"))"; fi
}
# refused ROLE WORD CMD...: exit 1, NOPERM, naming WORD (the command or role refused)
refused() {
  role=$1 word=$2
  shift 2
  as "$role" "$@"
  if [ "$rc" -eq 1 ] && grep -q NOPERM "$work/err" && grep -qF -- "$word" "$work/err"; then
    ok "$role may not $1 ($(head -c 160 "$work/err"))"
  else
    bad "$role may not $1 (rc $rc: $(cat "$work/err"))"
  fi
}

# ---- producer: enqueue; the viewer may not -----------------------------------------
works producer enqueue --json '{"n":1}'
works producer enqueue --id keep --delay 1h --json '{"n":2}'
works producer enqueue --json '{"n":3}'
refused viewer "'evalsha'" enqueue --json '{"n":4}'
check "nothing half-applied by the viewer's enqueue" test "$(r ZCARD 'dq:{emails}:sched')" -eq 3

# ---- worker: work; the producer may not ---------------------------------------------
printf '#!/bin/sh\ncat >/dev/null\nexit 1\n' >"$work/fail.sh" # every task fails for good
chmod +x "$work/fail.sh"
as producer work -- "$work/fail.sh"
if [ "$rc" -eq 1 ] && grep -q 'NOPERM' "$work/err" && grep -q 'may not run a worker' "$work/err"; then
  ok "producer may not work ($(head -c 160 "$work/err"))"
else
  bad "producer may not work (rc $rc: $(cat "$work/err"))"
fi
check "the producer's refused worker claimed nothing" test "$(r ZCARD 'dq:{emails}:inflight')" -eq 0
"$bin" work --url "redis://delayq-worker:role-secret-1@127.0.0.1:$redis_port" -q emails \
  -- "$work/fail.sh" >"$work/work.log" 2>&1 &
wpid=$!
pids="$pids $wpid"
failed_n() { [ "$(r ZCARD 'dq:{emails}:failidx')" -eq 2 ]; }
check "worker ran both due tasks (they failed as told)" wait_for 20000 "2 failed" failed_n
# the password given in --url is no longer in the running worker's argument list
cmdline() { tr '\0' ' ' <"/proc/$wpid/cmdline"; }
has_url() { cmdline | grep -q "delayq-worker:"; }
wait_for 5000 "worker cmdline" has_url
if cmdline | grep -q role-secret-1; then bad "password wiped from /proc/PID/cmdline: $(cmdline)"; else
  ok "password wiped from /proc/PID/cmdline: $(cmdline | head -c 120)"
fi
check "a warning suggests DELAYQ_PASSWORD or a profile" grep -q 'warning: a password in --url.*DELAYQ_PASSWORD or a profile' "$work/work.log"
named_worker() { r CLIENT LIST | grep -q "name=delayq:work:$(hostname):$wpid "; }
check "CLIENT LIST names the worker delayq:work:HOST:PID" wait_for 5000 "worker name" named_worker

# ---- viewer: every read path; nothing it sends writes --------------------------------
# producers and workers may not load the function library (SECURITY.md: only the
# operator); the deploy step that loads it is one operator command
works operator stats
id=$(r ZRANGE 'dq:{emails}:failidx' 0 0)
stop_pid "$wpid" # from here on only the commands under test talk to Redis
r MONITOR >"$work/monitor.log" 2>&1 &
mpid=$!
pids="$pids $mpid"
sleep_until_monitor() { r CLIENT LIST | grep -q 'cmd=monitor'; }
wait_for 5000 "MONITOR" sleep_until_monitor
works viewer stats
works viewer stats --json
works viewer stats --since 1h
works viewer stats --since 2d --json
works viewer ls due
works viewer ls failed
works viewer show "$id"
works viewer queues
works viewer audit
works viewer workers
works viewer config
"$bin" metrics --url "$(url viewer)" -q emails --textfile "$work/metrics.prom" >"$work/out" 2>"$work/err"
check "viewer may metrics --textfile" grep -q 'delayq_up 1' "$work/metrics.prom"
refused viewer "'evalsha'" requeue "$id"
refused viewer "'evalsha'" drop "$id"
refused viewer "'evalsha'" pause
refused viewer "'evalsha'" throttle --rate 10/s
refused viewer "'evalsha'" config max_attempts=5
refused viewer "'srem'" queues --forget emails
# a queue nothing made is named, with the close one: reads only (EXISTS, SSCAN)
"$bin" stats --url "$(url viewer)" -q emials >"$work/out" 2>"$work/err" </dev/null
rc=$?
if [ "$rc" -eq 1 ] && grep -qF 'queue "emials" is not known on 127.0.0.1:' "$work/err" &&
   grep -qF '(did you mean emails?)' "$work/err"; then
  ok "viewer: stats of an unknown queue is exit 1, naming the close one"
else bad "viewer: stats of an unknown queue (rc $rc: $(cat "$work/err"))"; fi
stop_pid "$mpid"
# reads_only LOG PREFIX NAME: every command that the connections named PREFIX* sent
# (MONITOR hides AUTH but shows each connection's CLIENT SETNAME; nothing else connects
# meanwhile), with the inner commands of the scripts they ran (shown as "lua"), must
# be a read; refused commands never run, so MONITOR does not show them
reads_only() {
  python3 - "$1" "$2" >"$work/viewer_cmds" <<'PY'
import re, sys
lines = []
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'^[\d.]+ \[\d+ ([^\]]+)\] "([^"]*)"(.*)$', line)
    if m:
        lines.append((m.group(1), m.group(2).lower(), m.group(3)))
named = {a for a, c, rest in lines if c == 'client' and ('"' + sys.argv[2]) in rest}
for a, c, rest in lines:
    if a in named or a == 'lua':
        print(c)
PY
  sort -u "$work/viewer_cmds" | tr '\n' ' ' >"$work/viewer_set"
  writes=$(grep -oiwE 'fcall|evalsha|sadd|srem|function|script|xadd|zadd|hset|del|zrem|hdel|hincrby|incrby|publish|spublish' "$work/viewer_set" || true)
  if [ -s "$work/viewer_set" ] && [ -z "$writes" ]; then ok "$3 sent only reads: $(cat "$work/viewer_set")"; else
    bad "$3 sent only reads: $(cat "$work/viewer_set") (writes: $writes)"
  fi
}
reads_only "$work/monitor.log" delayq:cli: "the viewer's commands"

# ---- operator: requeue, drop, pause, resume, config, throttle; the worker may not -----
id2=$(r ZRANGE 'dq:{emails}:failidx' 1 1)
refused worker "operator actions" requeue "$id"
refused worker "operator actions" drop "$id"
refused worker "operator actions" pause --for 1m
refused worker "operator actions" resume
refused worker "operator actions" throttle --concurrency 2 --for 1m
refused worker "operator actions" config max_attempts=5
refused worker "'srem'" queues --forget emails
check "nothing half-applied by the worker's refused actions" test "$(r ZCARD 'dq:{emails}:failidx')" -eq 2
check "... and nothing in the audit log" test "$(r XLEN 'dq:{emails}:audit')" -eq 0
works operator requeue "$id"
works operator drop "$id2"
works operator pause --for 10m --reason roles
works operator resume
works operator config max_attempts=5
works operator throttle --rate 10/s --for 10m --reason roles
works operator throttle --off
check "the operator's actions are in the audit log" test "$(r XLEN 'dq:{emails}:audit')" -eq 7

# ---- the viewer when the library is missing ----------------------------------------
r FUNCTION FLUSH >/dev/null
r SCRIPT FLUSH >/dev/null
as viewer stats
if [ "$rc" -eq 1 ] && grep -q 'is not loaded on .* may not load it (NOPERM); run one command of this delayq version as the operator' "$work/err"; then
  ok "viewer without the library says what to do: $(cat "$work/err")"
else bad "viewer without the library (rc $rc: $(cat "$work/err"))"; fi
check "... and loaded nothing" test -z "$(r FUNCTION LIST)"
works operator stats
works viewer stats

# ---- CLIENT SETNAME: every client is named ----------------------------------------
# one tmux server per inspector session: a new session on a server whose last session
# was just killed can meet that server exiting ("server exited unexpectedly")
tmn=0
tmsock="dqroles$$-$tmn"
tm() { tmux -L "$tmsock" "$@"; }
next_tm() {
  tm kill-server 2>/dev/null
  tmn=$((tmn + 1))
  tmsock="dqroles$$-$tmn"
}
trap 'for k in $(seq 0 "$tmn"); do tmux -L "dqroles$$-$k" kill-server 2>/dev/null; done; cleanup' EXIT
r MONITOR >"$work/monitor2.log" 2>&1 &
mpid=$!
pids="$pids $mpid"
wait_for 5000 "MONITOR" sleep_until_monitor
tm -f /dev/null new-session -d -s top -x 100 -y 30 \
  "DELAYQ_PASSWORD=role-secret-1 $bin top --url $(url viewer) -q emails; sleep 30"
screen_has() { tm capture-pane -p -t top | grep -qF -- "$1"; }
if wait_for 15000 "top read-only" screen_has "read-only: this user may not write to queue emails"; then
  ok "viewer's top is read-only by itself and says why"
else bad "viewer's top is read-only by itself: $(tm capture-pane -p -t top | sed -n '1p;$p')"; fi
check "... with the READ-ONLY badge" screen_has "READ-ONLY"
named_top() { r CLIENT LIST | grep -q "name=delayq:top:[^ ]*@[^ ]* .*user=delayq-viewer"; }
check "CLIENT LIST names top delayq:top:user@host (user delayq-viewer)" wait_for 5000 "top name" named_top
tm send-keys -t top 4
tm send-keys -t top r
if wait_for 5000 "refusal" screen_has "actions are disabled (this user may not write"; then
  ok "requeue in the viewer's top is refused with the reason"
else bad "requeue in the viewer's top is refused: $(tm capture-pane -p -t top | tail -1)"; fi
tm send-keys -t top 4
tm send-keys -t top Enter # the details of a failed task: find
tm send-keys -t top Escape
tm send-keys -t top q
next_tm
stop_pid "$mpid"
reads_only "$work/monitor2.log" delayq:top: "the viewer's top"
tm -f /dev/null new-session -d -s top -x 100 -y 30 \
  "DELAYQ_PASSWORD=role-secret-1 $bin top --url $(url worker) -q emails; sleep 30"
if wait_for 15000 "worker top read-only" screen_has "read-only: this user may not run operator actions"; then
  ok "worker's top is read-only by itself (no operator actions)"
else bad "worker's top is read-only by itself: $(tm capture-pane -p -t top | tail -1)"; fi
next_tm
tm -f /dev/null new-session -d -s top -x 100 -y 30 \
  "DELAYQ_PASSWORD=role-secret-1 $bin top --url $(url operator) -q emails; sleep 30"
check "operator's top opens" wait_for 15000 "operator top" screen_has "queue emails"
if screen_has "READ-ONLY"; then bad "operator's top is not read-only"; else ok "operator's top is not read-only"; fi
next_tm

named_cli() { grep -q '"CLIENT" "SETNAME" "delayq:cli:stats:[^ "]*@[^ "]*"' "$work/monitor.log"; }
check "CLI connections are named delayq:cli:COMMAND:user@host" named_cli
finish
