#!/bin/sh
# keybulk.sh MODE: bulk actions scoped to a task key (PROTOCOL.md 4.6 and 4.10) on the
# function library (MODE plain) or the EVALSHA scripts (evalsha). Failures of several
# keys (a key that is a prefix of another, an unkeyed task whose payload names the key);
# requeue --key moves exactly that key's failed tasks, drop --key deletes exactly
# another key's, both walking the failed set in bounded steps and audited with the key;
# a key that no failure has is exit 0 and 0; a bad key is exit 2 naming --key.
# drop --key KEY --parked deletes that key's parked tasks (key_concurrency 1, a handler
# that holds its task), with their ids, the key's count and the parked gauge exact.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli
redis_start
case "${1:-plain}" in
evalsha) DELAYQ_SCRIPTS=evalsha && export DELAYQ_SCRIPTS ;;
esac
dq() { "$bin" "$@"; }
rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
q=kb
# state_of ID: the state line of delayq show (empty when the task is gone)
state_of() { dq show -q "$q" "$1" 2>/dev/null | sed -n 's/^state  *\([a-z]*\).*/\1/p'; }
failed_n() { rcli zcard "dq:{$q}:failidx"; }

for id in a1 a2 a3; do dq enqueue -q "$q" --id "$id" --key acme --max-attempts 1 --json 1 >/dev/null; done
for id in g1 g2; do dq enqueue -q "$q" --id "$id" --key globex --max-attempts 1 --json 1 >/dev/null; done
dq enqueue -q "$q" --id p1 --key acme2 --max-attempts 1 --json 1 >/dev/null
dq enqueue -q "$q" --id u1 --max-attempts 1 --json '"acme"' >/dev/null
dq enqueue -q "$q" --max-attempts 1 --json 2 >/dev/null # a generated id, no key
check "8 tasks enqueued" [ "$(rcli zcard "dq:{$q}:sched")" = 8 ]
spawn "$bin" work -q "$q" --name w-kb -- false 2>>"$work/work.log"
wpid=$spawned
eight_failed() { [ "$(failed_n)" = 8 ]; }
check "all 8 fail (max attempts 1)" wait_for 10000 "8 failed" eight_failed
stop_pid "$wpid"
# a scheduled task of the key is not a failure: requeue --key leaves it alone
dq enqueue -q "$q" --id a4 --key acme --delay 1h --json 1 >/dev/null

# --- requeue --key ----------------------------------------------------------------
dq requeue -q "$q" --key acme --delay 1h >"$work/out.txt" 2>"$work/err.txt"
check "requeue --key acme is exit 0" [ $? -eq 0 ]
check "... and requeues 3" grep -qx "requeued 3" "$work/out.txt"
check "... a1 a2 a3 are scheduled" \
  [ "$(state_of a1) $(state_of a2) $(state_of a3)" = "scheduled scheduled scheduled" ]
check "... the prefix key's and the unkeyed ones stay failed" \
  [ "$(state_of p1) $(state_of u1) $(state_of g1)" = "failed failed failed" ]
check "... 5 failures left" [ "$(failed_n)" = 5 ]
check "... 4 scheduled (a1..a4 and nothing else)" [ "$(rcli zcard "dq:{$q}:sched")" = 4 ]
dq audit -q "$q" --json >"$work/audit.json"
check "... one audit entry naming the key" \
  [ "$(grep -c '"action":"requeue-all".*key=acme;.*ok: 3 moved (of 8 in scope), 0 undecodable skipped, finished' "$work/audit.json")" = 1 ]

# --- drop --key --------------------------------------------------------------------
dq drop -q "$q" --key globex >"$work/out.txt" 2>"$work/err.txt"
check "drop --key globex is exit 0" [ $? -eq 0 ]
check "... and drops 2" grep -qx "dropped 2" "$work/out.txt"
check "... g1 and g2 are gone" [ "$(state_of g1)$(state_of g2)" = "" ]
check "... the others stay failed" \
  [ "$(state_of p1) $(state_of u1)" = "failed failed" ]
check "... 3 failures left" [ "$(failed_n)" = 3 ]
check "... the requeued ones are still scheduled" [ "$(rcli zcard "dq:{$q}:sched")" = 4 ]
dq audit -q "$q" --json >"$work/audit.json"
check "... one audit entry naming the key" \
  [ "$(grep -c '"action":"drop-all".*key=globex".*ok: 2 dropped, finished' "$work/audit.json")" = 1 ]
check "... the error groups keep exact counts (3 in all)" \
  [ "$(dq errors -q "$q" --json | grep -o '"count":[0-9]*' | awk -F: '{ n += $2 } END { print n + 0 }')" = 3 ]
dq drop -q "$q" --key nobody >"$work/out.txt" 2>&1
check "drop --key of a key without failures is exit 0" [ $? -eq 0 ]
check "... dropping 0" grep -qx "dropped 0" "$work/out.txt"
dq requeue -q "$q" --key acme2 >"$work/out.txt" 2>&1
check "requeue --key acme2 (exact, not a prefix) requeues 1" grep -qx "requeued 1" "$work/out.txt"
check "... p1" [ "$(state_of p1)" = scheduled ]

# --- drop --key --parked ------------------------------------------------------------
# key_concurrency 1 and a handler that holds its task: one claim of 4 slots takes the
# first "big" task and parks the other five, and takes the "small" one
q=kp
dq config -q "$q" key_concurrency=1 >/dev/null
for i in 0 1 2 3 4 5; do dq enqueue -q "$q" --id "b$i" --key big --json 1 >/dev/null; done
dq enqueue -q "$q" --key big --json 2 >/dev/null # a generated id, parked too
dq enqueue -q "$q" --id s0 --key small --json 1 >/dev/null
cat >"$work/hold.sh" <<SH
#!/bin/sh
touch "$work/running.\$DELAYQ_TASK_ID"
while [ ! -e "$work/release" ]; do sleep 0.05; done
SH
chmod +x "$work/hold.sh"
spawn "$bin" work -q "$q" -c 4 --name w-kp -- "$work/hold.sh" 2>>"$work/work.log"
wpid=$spawned
parked_n() { rcli hget "dq:{$q}:stats" parked; }
six_parked() { [ "$(parked_n)" = 6 ]; }
check "six tasks of big are parked" wait_for 10000 "6 parked" six_parked
check "... b0 and s0 run" wait_for 5000 "b0 and s0 running" \
  sh -c "[ -e '$work/running.b0' ] && [ -e '$work/running.s0' ]"
dq drop -q "$q" --key big --parked >"$work/out.txt" 2>"$work/err.txt"
check "drop --key big --parked is exit 0" [ $? -eq 0 ]
check "... and drops 6" grep -qx "dropped 6 parked" "$work/out.txt"
check "... the parked gauge is 0" [ "$(parked_n)" = 0 ]
check "... big has no parked count left" [ -z "$(rcli zscore "dq:{$q}:kpark" big)" ]
check "... nor parked tasks" [ "$(rcli exists "dq:{$q}:kq:big")" = 0 ]
dq enqueue -q "$q" --id b3 --delay 1h --json 1 >/dev/null 2>"$work/err.txt"
check "... their ids are free again: b3 enqueues anew, not as a duplicate" [ ! -s "$work/err.txt" ]
check "... and is scheduled (a parked task is not in sched)" [ "$(state_of b3)" = scheduled ]
check "... the running b0 and s0 are untouched (in flight)" \
  [ "$(state_of b0) $(state_of s0)" = "in in" ]
dq audit -q "$q" --json >"$work/audit.json"
check "... one audit entry naming the key" \
  [ "$(grep -c '"action":"drop-parked".*parked key=big".*ok: 6 dropped, finished' "$work/audit.json")" = 1 ]
dq drop -q "$q" --match x --parked >/dev/null 2>"$work/err.txt"
check "--parked without --key is exit 2" [ $? -eq 2 ]
check "... saying it needs --key" grep -q -- "--parked needs --key" "$work/err.txt"
touch "$work/release"
stop_pid "$wpid"
q=kb

# --- bad input ---------------------------------------------------------------------
usage() { # usage WHAT PATTERN CMD...: exit 2, the error names PATTERN, nothing changed
  what=$1 pat=$2
  shift 2
  before=$(failed_n)
  "$@" >/dev/null 2>"$work/err.txt"
  rc=$?
  check "$what is exit 2" [ $rc -eq 2 ]
  check "... saying $pat" grep -q -- "$pat" "$work/err.txt"
  check "... and nothing changed" [ "$(failed_n)" = "$before" ]
}
long=$(printf '%065d' 0)
usage "requeue --key ''" "--key: must be 1..64 bytes" dq requeue -q "$q" --key ''
usage "drop --key of 65 bytes" "--key: must be 1..64 bytes (got 65)" dq drop -q "$q" --key "$long"
usage "drop --key with a control byte" "--key: byte 2 is a control character" \
  dq drop -q "$q" --key "$(printf 'a\tb')"
usage "requeue --key with --match" "give one of --group, --match and --key" \
  dq requeue -q "$q" --key acme --match acme
usage "drop --key with --all-failed" "(one of them)" dq drop -q "$q" --key u --all-failed
usage "drop --key with an id" "(one of them)" dq drop -q "$q" --key u u1
finish
