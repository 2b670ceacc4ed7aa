#!/bin/sh
# roles_matrix.sh: every delayq command that talks to Redis, under each of the four
# roles exactly as docs/SECURITY.md writes them (the test reads the "ACL SETUSER" lines
# from the document), either works (exit 0) or is refused before anything is written:
# exit 1, NOPERM, and the server's digest (every key's DUMP, FUNCTION DUMP, the script
# cache size: tests/prod/digest.py) the same before and after. Three rounds: the lines
# as written on the FCALL path, the same on the EVALSHA path (DELAYQ_SCRIPTS=evalsha),
# and the strict lines of SECURITY.md (producer and worker without +evalsha and
# +script|load) on the FCALL path. Also: the operator imports, and ids never collide
# afterwards (failed tasks 1..6 imported, a new task gets 7); a producer calling the
# worker's functions directly (FCALL) is refused before any write (ack used to drop the
# task from in flight, then be refused its history's LTRIM); with the strict lines a
# producer on a server without the library loads nothing and says what to do.
# (top under each role: tests/prod/roles.sh.)
set -u
. "${DQ_SOURCE_ROOT:?}/tests/eco/lib.sh"
need redis-cli python3
stdin=
last=

redis_start
pw='role-secret-1'
export DELAYQ_PASSWORD=$pw
r() { redis-cli -h 127.0.0.1 -p "$redis_port" --user admin --pass "$pw" --no-auth-warning "$@"; }
url() { echo "redis://delayq-$1@127.0.0.1:$redis_port"; }
redis-cli -h 127.0.0.1 -p "$redis_port" ACL SETUSER admin on ">$pw" '~*' '&*' +@all >/dev/null
r ACL SETUSER default off >/dev/null
digest() { python3 "$src/tests/prod/digest.py" "$redis_port" admin "$pw"; }

grep '^ACL SETUSER ' "$src/docs/SECURITY.md" | sed "s/CHANGE_ME/$pw/" >"$work/acl-doc.txt"
check "SECURITY.md has four ACL SETUSER lines" test "$(wc -l <"$work/acl-doc.txt")" -eq 4
# the strict lines, as SECURITY.md says: the producer's and the worker's without
# +evalsha and +script|load
check "SECURITY.md offers the strict lines" grep -q 'remove `+evalsha +script|load`' "$src/docs/SECURITY.md"
sed -E '/delayq-(producer|worker) /{s/ \+evalsha / /; s/ \+script\|load / /}' "$work/acl-doc.txt" >"$work/acl-strict.txt"
check "strict lines: no producer or worker may evalsha or script|load" \
  not grep -E 'delayq-(producer|worker) .*(\+evalsha |\+script\|load)' "$work/acl-strict.txt"
# users FILE: the four users as FILE has them (reset first: no grant is left over)
users() {
  while IFS= read -r line; do
    out=$(printf '%s\n' "$line" | r 2>&1)
    [ "$out" = OK ] || bad "ACL line refused: $out"
  done <"$1"
}

# ---- the seed: six failed tasks (ids 1..6), exported as the operator would -------------
users "$work/acl-doc.txt"
printf '#!/bin/sh\ncat >/dev/null\necho "boom for task $DELAYQ_TASK_ID" >&2\nexit 1\n' >"$work/fail.sh"
chmod +x "$work/fail.sh"
adm="redis://admin@127.0.0.1:$redis_port"
for i in 1 2 3 4 5 6; do "$bin" enqueue --url "$adm" -q seedq --max-attempts 1 --json "{\"n\":$i}" >/dev/null; done
spawn "$bin" work --url "$adm" -q seedq -- "$work/fail.sh"
seeder=$spawned
six_failed() { [ "$(r ZCARD 'dq:{seedq}:failidx')" -eq 6 ]; }
check "seed: six failed tasks" wait_for 30000 "6 failed" six_failed
stop_pid "$seeder"
"$bin" export --url "$adm" -q seedq failed >"$work/seed.jsonl" 2>/dev/null
check "seed: exported 6 failed tasks, ids 1..6" test "$(grep -c '"id":"[1-6]"' "$work/seed.jsonl")" -eq 6

# fresh: the queue mq as each row finds it: the six failed tasks 1..6, a due task (7) and
# a future one (keep); nothing else (the library and the script cache stay)
fresh() {
  last=
  r FLUSHALL >/dev/null
  "$bin" import --url "$adm" -q mq <"$work/seed.jsonl" >/dev/null 2>&1
  "$bin" enqueue --url "$adm" -q mq --json '{"due":1}' >/dev/null
  "$bin" enqueue --url "$adm" -q mq --id keep --delay 1h --json '{"later":1}' >/dev/null
  [ "$(r ZCARD 'dq:{mq}:failidx')" -eq 6 ] && [ "$(r ZCARD 'dq:{mq}:sched')" -eq 2 ] ||
    bad "fresh: mq seeded (failed $(r ZCARD 'dq:{mq}:failidx'), scheduled $(r ZCARD 'dq:{mq}:sched'))"
}

# level ROLE: viewer 0, producer 1, worker 2, operator 3
level() { case $1 in viewer) echo 0 ;; producer) echo 1 ;; worker) echo 2 ;; operator) echo 3 ;; esac; }
# try TAG ROLE MIN ARGS...: delayq ARGS as ROLE; ROLE at MIN or above must get exit 0,
# below it exit 1 with NOPERM and the digest unchanged
try() {
  tag=$1 role=$2 min=$3 cmd=$4
  shift 4
  refusal=no
  [ "$(level "$role")" -lt "$(level "$min")" ] && refusal=yes
  # a refusal is compared with the digest before it (the one after the last refusal,
  # while nothing has run since)
  [ "$refusal" = yes ] && [ -z "$last" ] && last=$(digest)
  before=$last
  timeout 20 "$bin" "$cmd" --url "$(url "$role")" -q mq "$@" >"$work/out" 2>"$work/err" \
    <"${stdin:-/dev/null}"
  rc=$?
  last=
  [ "$refusal" = yes ] && { after=$(digest); last=$after; }
  if [ "$refusal" = no ]; then
    if [ "$rc" -eq 0 ]; then ok "$tag: $role may $cmd $*"; else
      bad "$tag: $role may $cmd $* (rc $rc: $(head -c 300 "$work/err"))"
    fi
  elif [ "$rc" -eq 1 ] && grep -q NOPERM "$work/err" && [ "$before" = "$after" ]; then
    ok "$tag: $role may not $cmd $* ($(head -c 150 "$work/err"))"
  else
    bad "$tag: $role may not $cmd $* (rc $rc, digest $before -> $after: $(head -c 300 "$work/err"))"
  fi
}
# work_try TAG ROLE: a worker (and the operator) runs the due task; the others are
# refused at once, nothing written
work_try() {
  tag=$1 role=$2
  printf '#!/bin/sh\ncat >/dev/null\nexit 0\n' >"$work/ok.sh"
  chmod +x "$work/ok.sh"
  if [ "$(level "$role")" -ge 2 ]; then
    spawn "$bin" work --url "$(url "$role")" -q mq -- "$work/ok.sh" >"$work/work.log" 2>&1
    wpid=$spawned
    # the due task 7 and the one this row enqueued
    done2() { [ "$(r HGET 'dq:{mq}:stats' 'done')" = 2 ]; }
    if wait_for 20000 "the due tasks done" done2; then ok "$tag: $role may work (ran the due tasks)"; else
      bad "$tag: $role may work: $(tail -3 "$work/work.log")"
    fi
    stop_pid "$wpid"
    last=
  else
    try "$tag" "$role" worker work -- "$work/ok.sh"
  fi
}

# row TAG ROLE: every command as ROLE, on a fresh queue
row() {
  tag=$1 role=$2
  fresh
  for v in "stats" "stats --json" "ls due" "ls future" "ls inflight" "ls failed" "show 1" \
    "export failed" "export due" "errors" "keys" "audit" "workers" "config" "config --json" "queues" \
    "metrics --textfile $work/metrics.prom"; do
    # shellcheck disable=SC2086
    try "$tag" "$role" viewer $v
  done
  try "$tag" "$role" producer enqueue --json '{"new":1}'
  try "$tag" "$role" producer enqueue --id named --delay 1m --json '{"new":2}'
  work_try "$tag" "$role"
  try "$tag" "$role" operator requeue 1
  try "$tag" "$role" operator requeue --json '{"fixed":true}' 2
  try "$tag" "$role" operator drop 3
  try "$tag" "$role" operator drop keep
  try "$tag" "$role" operator requeue --match 'task 4'
  try "$tag" "$role" operator drop --match 'task 5'
  try "$tag" "$role" operator requeue --all
  try "$tag" "$role" operator drop --all-failed
  try "$tag" "$role" operator pause --for 10m --reason matrix
  try "$tag" "$role" operator resume
  try "$tag" "$role" operator config max_attempts=5 failed_retention=1000
  stdin=$work/seed.jsonl
  try "$tag" "$role" operator import
  try "$tag" "$role" operator import --requeue
  stdin=
  try "$tag" "$role" operator queues --forget mq
}

# import as the operator: the seq is raised, so a new task never takes an imported id
import_ids() {
  tag=$1
  r FLUSHALL >/dev/null
  "$bin" import --url "$(url operator)" -q impq <"$work/seed.jsonl" >"$work/out" 2>"$work/err"
  rc=$?
  check "$tag: the operator imports 6 failed tasks (rc $rc: $(cat "$work/err"))" \
    grep -q 'imported 6 tasks into queue impq (0 scheduled, 6 failed)' "$work/out"
  check "$tag: ... and its audit entry" test "$(r XLEN 'dq:{impq}:audit')" -eq 1
  check "$tag: ... the sequence raised to 6" test "$(r GET 'dq:{impq}:seq')" = 6
  id=$("$bin" enqueue --url "$(url producer)" -q impq --json '{"new":1}' 2>"$work/err")
  check "$tag: a new task gets id 7, not an imported one (got '$id')" test "$id" = 7
  "$bin" show --url "$(url viewer)" -q impq 1 >"$work/out" 2>&1
  check "$tag: imported failed task 1 is still there, with its error" grep -q 'boom for task 1' "$work/out"
  "$bin" import --url "$(url operator)" -q impq <"$work/seed.jsonl" >"$work/out" 2>"$work/err"
  check "$tag: importing again adds nothing (skipped 6)" grep -q 'skipped 6 already there' "$work/out"
}

# ---- round 1: the lines as written, FCALL ------------------------------------------
r FUNCTION FLUSH >/dev/null
r SCRIPT FLUSH >/dev/null
for role in operator viewer producer worker; do row fcall "$role"; done
import_ids fcall

# ---- direct calls: a producer calling the worker's functions on a claimed task ------
# (delayq never does, but the credential may FCALL any function of the library: each
# must be refused before it writes; ack used to remove the task from in flight, then
# be refused its history's LTRIM)
as_user() { u=$1; shift; redis-cli -h 127.0.0.1 -p "$redis_port" --user "delayq-$u" --pass "$pw" --no-auth-warning "$@"; }
r FLUSHALL >/dev/null
"$bin" enqueue --url "$adm" -q dq --json '{"direct":1}' >/dev/null
lib=$(r FUNCTION LIST | sed -n 2p)
keys=""
for k in sched ids inflight running failed failidx stats seq config audit wake; do keys="$keys dq:{dq}:$k"; done
# shellcheck disable=SC2086
now=$(r FCALL "${lib}_claim" 11 $keys 1 60000 w 2>/dev/null | head -1)
check "direct: the task is claimed" test "$(r ZCARD 'dq:{dq}:inflight')" -eq 1
# direct refused|works FN ARGS...: refused names the role and the command, with the
# digest unchanged; works (the producer's line allows every command of FN: it touches
# only the eleven keys) answers without an error
direct() {
  want=$1 fn=$2
  shift 2
  before=$(digest)
  # shellcheck disable=SC2086
  out=$(as_user producer FCALL "${lib}_$fn" 11 $keys "$@" 2>&1)
  after=$(digest)
  if [ "$want" = refused ]; then
    if printf '%s' "$out" | grep -q "NOPERM this user may not run a worker ($fn runs " && [ "$before" = "$after" ]; then
      ok "direct: producer FCALL $fn refused before any write ($(printf '%s' "$out" | head -c 120))"
    else bad "direct: producer FCALL $fn ($before -> $after: $out)"; fi
  elif printf '%s' "$out" | grep -qE 'NOPERM|ERR'; then
    bad "direct: producer FCALL $fn works whole: $out"
  else ok "direct: producer FCALL $fn works whole (its line allows all of it): $out"; fi
}
direct refused ack 1 0 "$now"
direct refused fail 1 0 "$now" boom '' w
direct refused retry 1 0 "$now" boom w
direct refused reap 10 w
direct refused claim 1 60000 w
direct refused heartbeat beat w
check "direct: the task is still in flight, claimed once" test "$(r ZCARD 'dq:{dq}:inflight')" -eq 1
direct works extend 60000 1 0 "$now"
direct works release 1 0 "$now"

# ---- round 2: the same lines, EVALSHA (the operator's row first loads each script, as
# a deploy step would; a refusal must not load one either) ----------------------------
r FUNCTION FLUSH >/dev/null
r SCRIPT FLUSH >/dev/null
export DELAYQ_SCRIPTS=evalsha
for role in operator viewer producer worker; do row evalsha "$role"; done
import_ids evalsha
check "evalsha: nothing loaded into the function library" test -z "$(r FUNCTION LIST)"
unset DELAYQ_SCRIPTS

# ---- round 3: the strict lines, FCALL (the operator loads the library) --------------
users "$work/acl-strict.txt"
r FLUSHALL >/dev/null
r FUNCTION FLUSH >/dev/null
r SCRIPT FLUSH >/dev/null
before=$(digest)
"$bin" enqueue --url "$(url producer)" -q mq --json '{"x":1}' >"$work/out" 2>"$work/err"
rc=$?
after=$(digest)
if [ "$rc" -eq 1 ] && grep -q 'is not loaded on .* may not load it (NOPERM); run one command of this delayq version as the operator' "$work/err" &&
  [ "$before" = "$after" ]; then
  ok "strict: a producer on a server without the library loads nothing and says what to do"
else bad "strict: producer without the library (rc $rc, $before -> $after: $(cat "$work/err"))"; fi
for role in operator viewer producer worker; do row strict "$role"; done
import_ids strict
check "strict: the script cache is empty (nothing ran on the EVALSHA path)" \
  test "$(r INFO memory | tr -d '\r' | sed -n 's/^number_of_cached_scripts://p')" -eq 0
finish
