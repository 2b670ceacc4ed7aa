#!/bin/sh
# secrets.sh: what delayq keeps to itself and what it bounds (docs/SECURITY.md, Threats).
# Handlers of delayq work (a command per task and --persistent) get none of the worker's
# Redis credentials unless --pass-credentials: no DELAYQ_PASSWORD, DELAYQ_SENTINEL_*, and
# DELAYQ_URL without its password. delayq work with no URL at all uses the documented
# default, redis://127.0.0.1:6379 (checked in a network namespace of its own, where that
# port is ours). A private redis-server with an ACL user; deadline waits only
# (tests/eco/lib.sh).
set -u
. "$(dirname "$0")/../eco/lib.sh"
need redis-cli

# ---- delayq work with no URL: redis://127.0.0.1:6379 ---------------------------------
# (this script again, in a network namespace where nothing else can hold the port)
if [ "${1:-}" = default-url ]; then
  ip link set lo up || exit 1
  redis_start 6379
  unset DELAYQ_URL
  "$bin" enqueue -q dflt --json 1 >/dev/null
  spawn "$bin" work -q dflt --max-idle 1s -- sh -c "cat >/dev/null; touch $work/ran" \
    2>"$work/work.log"
  check "work with no URL runs a task from redis://127.0.0.1:6379" \
    wait_for 15000 "the task run" test -e "$work/ran" || cat "$work/work.log"
  finish
  exit
fi
port_free() { # nothing accepts on 127.0.0.1:$1
  python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0)' "$1"
}
if unshare -n true 2>/dev/null; then
  unshare -n "$0" default-url >"$work/default-url.out" 2>&1
  rc=$?
  sed 's/^/  /' "$work/default-url.out"
  check "delayq work with no URL uses the default (in a network namespace)" [ $rc -eq 0 ]
elif port_free 6379; then
  # no namespaces here: the default port is free, so the error names it
  (unset DELAYQ_URL; "$bin" work -q dflt -- true) >"$work/dflt.out" 2>&1
  rc=$?
  refused_there() { [ $rc -eq 3 ] && grep -q "127.0.0.1:6379: connect" "$work/dflt.out"; }
  check "delayq work with no URL connects to 127.0.0.1:6379 (exit 3, nothing listens)" \
    refused_there
else
  bad "delayq work with no URL: no network namespace and 127.0.0.1:6379 is taken"
fi

redis_start
port=$redis_port
r() { redis-cli -h 127.0.0.1 -p "$port" --user wk --pass wk-pw-7731 --no-auth-warning "$@"; }
r ACL SETUSER wk on '>wk-pw-7731' '~*' '&*' +@all >/dev/null
r CONFIG SET requirepass nobody-knows >/dev/null # only wk may connect now
unset DELAYQ_PROFILE DELAYQ_SENTINEL_USER DELAYQ_SENTINEL_PASSWORD DELAYQ_PASSWORD
secret=wk-pw-7731
url="redis://wk:$secret@127.0.0.1:$port"

# ---- handlers get no credentials ------------------------------------------------------

# a handler of each mode writes its DELAYQ_* and MY_* variables to $1
cat >"$work/env_task.sh" <<'SH'
#!/bin/sh
cat >/dev/null
env | grep -E '^(DELAYQ|MY)_' | sort >"$1.tmp"
mv "$1.tmp" "$1"
SH
cat >"$work/env_persist.sh" <<'SH'
#!/bin/sh
env | grep -E '^(DELAYQ|MY)_' | sort >"$1.tmp"
mv "$1.tmp" "$1"
while read -r line; do
  id=$(printf '%s\n' "$line" | sed 's/^{"id":"\([^"]*\)".*/\1/')
  printf '{"id":"%s","result":"done"}\n' "$id"
done
SH
chmod +x "$work/env_task.sh" "$work/env_persist.sh"

# handler_env NAME MODE-FLAGS...: runs a worker with every credential variable set until
# its handler has written $work/NAME.env; the worker is stopped after
handler_env() {
  name=$1
  shift
  rm -f "$work/$name.env"
  DELAYQ_URL=$url "$bin" enqueue -q "$name" --json '{"n":1}' >/dev/null
  DELAYQ_URL=$url DELAYQ_PASSWORD=$secret DELAYQ_SENTINEL_USER=sentinel-admin \
    DELAYQ_SENTINEL_PASSWORD=sentinel-pw-9 MY_SETTING=kept \
    spawn "$bin" work -q "$name" --quiet "$@" 2>"$work/$name.log"
  w=$spawned
  wait_for 15000 "$name: the handler's environment" test -s "$work/$name.env"
  stop_pid "$w"
}
for mode in task persist; do
  flags=
  [ $mode = persist ] && flags=--persistent
  # shellcheck disable=SC2086 # $flags is one word or none
  handler_env "env-$mode" $flags -- "$work/env_$mode.sh" "$work/env-$mode.env"
  e="$work/env-$mode.env"
  check "$mode: the handler ran" test -s "$e"
  check "$mode: no password anywhere in its environment" not grep -q "$secret" "$e"
  check "$mode: no DELAYQ_PASSWORD" not grep -q '^DELAYQ_PASSWORD=' "$e"
  check "$mode: no DELAYQ_SENTINEL_USER / _PASSWORD" not grep -q '^DELAYQ_SENTINEL_' "$e"
  check "$mode: DELAYQ_URL without its password" \
    grep -qx "DELAYQ_URL=redis://wk@127.0.0.1:$port" "$e"
  check "$mode: other variables are kept" grep -qx "MY_SETTING=kept" "$e"
  # shellcheck disable=SC2086
  handler_env "pass-$mode" --pass-credentials $flags -- "$work/env_$mode.sh" "$work/pass-$mode.env"
  e="$work/pass-$mode.env"
  check "$mode --pass-credentials: DELAYQ_PASSWORD is passed" \
    grep -qx "DELAYQ_PASSWORD=$secret" "$e"
  check "$mode --pass-credentials: DELAYQ_URL as it was" grep -qx "DELAYQ_URL=$url" "$e"
  check "$mode --pass-credentials: the sentinel's credentials too" \
    grep -qx "DELAYQ_SENTINEL_PASSWORD=sentinel-pw-9" "$e"
done

# ---- bounded reads: --file and - stop at max_payload + 1 -------------------------------

# peak OUT CMD...: runs CMD (stdout and stderr to OUT, no stdin); sets rc and kb, its peak
# resident memory in KiB (of the largest process it waited for)
peak() {
  set -- $(python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@")
  rc=$1 kb=$2
}
export DELAYQ_URL=$url
over="payload: over max_payload (1048576 bytes) of queue bigq"
peak "$work/big.out" "$bin" enqueue -q bigq --file /dev/zero
check "enqueue --file /dev/zero: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "... saying so: $(cat "$work/big.out")" grep -qF "$over" "$work/big.out"
check "... having read no more than it needs (peak $kb KiB < 64 MiB)" [ "$kb" -lt 65536 ]
peak "$work/big.out" sh -c "head -c 629145600 /dev/zero | \"$bin\" enqueue -q bigq -"
check "600 MB on stdin: exit 2 (got $rc), peak $kb KiB < 64 MiB" \
  test "$rc" -eq 2 -a "$kb" -lt 65536
check "... saying so" grep -qF "$over" "$work/big.out"
head -c 1048576 /dev/zero >"$work/1m"
head -c 1048577 /dev/zero >"$work/1m1"
check "exactly max_payload from a file is taken" "$bin" enqueue -q bigq --file "$work/1m"
"$bin" enqueue -q bigq --file "$work/1m1" >"$work/big.out" 2>&1
rc=$?
check "one byte more is refused (exit $rc)" test "$rc" -eq 2
check "... saying so" grep -qF "$over" "$work/big.out"
"$bin" config -q bigq max_payload=100 >/dev/null
head -c 101 /dev/zero >"$work/101"
"$bin" enqueue -q bigq --file "$work/101" >"$work/big.out" 2>&1
check "the queue's own max_payload is the limit (100)" \
  grep -qF "payload: over max_payload (100 bytes) of queue bigq" "$work/big.out"
# requeue --file: a failed task whose payload is replaced by one read from a file
"$bin" enqueue -q bigf --max-attempts 1 --json '{"n":1}' >/dev/null
spawn "$bin" work -q bigf --quiet -- false
w=$spawned
failed_one() { "$bin" stats -q bigf --json | grep -q '"failed":1'; }
check "a task failed to requeue" wait_for 15000 "the task failed" failed_one
stop_pid "$w"
id=$("$bin" ls failed -q bigf --json | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -n 1)
peak "$work/big.out" "$bin" requeue -q bigf --file /dev/zero "$id"
check "requeue --file /dev/zero: exit 2 (got $rc), peak $kb KiB < 64 MiB" \
  test "$rc" -eq 2 -a "$kb" -lt 65536
check "... saying so: $(cat "$work/big.out")" \
  grep -qF "over 8388608 bytes of JSON text, the most read for a payload within max_payload (1048576 bytes) of queue bigf (nothing changed)" "$work/big.out"
check "... and the task is still failed" failed_one

# ---- honest reports: an action whose outcome is unknown says so ------------------------
# requeue ID --file FIFO reads the task, then blocks reading the FIFO; meanwhile a 3 s
# script makes Redis busy; the new payload is then written, so the requeue's FCALL
# reaches Redis while it is busy and gets no answer within --timeout 500ms. Redis runs it
# after the script: the CLI must say the outcome is unknown, not that nothing changed.
busy_script="local s=redis.call('TIME') local t0=s[1]*1000000+s[2]
repeat local n=redis.call('TIME') until n[1]*1000000+n[2]-t0 > 3000000 return 1"
# redis_busy: Redis takes over 250 ms to answer a PING (a script holds it), within 5 s
redis_busy() {
  python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
end = time.monotonic() + 5
while time.monotonic() < end:
    s.settimeout(None)
    s.sendall(b"PING\r\n")
    s.settimeout(0.25)
    try:
        s.recv(64)
    except socket.timeout:
        sys.exit(0)
    time.sleep(0.02)
sys.exit(1)' "$port"
}
"$bin" enqueue -q unk --max-attempts 1 --json '{"n":1}' >/dev/null
spawn "$bin" work -q unk --quiet -- false
w=$spawned
unk_failed() { "$bin" stats -q unk --json | grep -q '"failed":1'; }
check "a failed task to requeue" wait_for 15000 "the task failed" unk_failed
stop_pid "$w"
id=$("$bin" ls failed -q unk --json | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -n 1)
mkfifo "$work/fifo"
"$bin" requeue -q unk --timeout 500ms --file "$work/fifo" "$id" >"$work/unk.out" 2>&1 &
rq=$!
exec 3>"$work/fifo" # (what runs in the background meanwhile must not hold it: exec 3>&-)
reading_fifo() { grep -q pipe_read "/proc/$rq/wchan"; }
check "requeue read the task and waits for the new payload" \
  wait_for 10000 "requeue reading the fifo" reading_fifo
(
  exec 3>&-
  r EVAL "$busy_script" 0 >/dev/null
) &
busy=$!
check "Redis is busy with a 3 s script" redis_busy
echo '{"fixed":1}' >&3
exec 3>&-
wait $rq
rc=$?
wait $busy
check "the requeue timed out: exit 3 (got $rc)" [ "$rc" -eq 3 ]
check "... and says the outcome is unknown: $(tail -n 1 "$work/unk.out")" \
  grep -qF "outcome unknown: check the audit log (delayq audit -q unk)" "$work/unk.out"
check "... not that nothing changed" not grep -q "nothing changed" "$work/unk.out"
check "... rightly: Redis ran it (audit: replace ok)" \
  sh -c "'$bin' audit -q unk | grep -q 'replace  $id .*-> ok: requeued with the new payload'"
# nothing sent: Redis busy before the command connects, so its AUTH times out: that is
# not an unknown outcome
r EVAL "$busy_script" 0 >/dev/null &
busy=$!
redis_busy
"$bin" requeue -q unk --timeout 500ms "$id" >"$work/unk.out" 2>&1
rc=$?
wait $busy
check "a requeue that never reached Redis: exit 3 (got $rc)" [ "$rc" -eq 3 ]
check "... and no word of an unknown outcome: $(cat "$work/unk.out")" \
  not grep -q "outcome unknown" "$work/unk.out"

# ---- a process that holds a password is not dumpable ---------------------------------
# Observed from another process of the same user: /proc/PID/environ (and mem) of a
# non-dumpable process belong to root and are refused to it. As user nobody (setpriv),
# so that root's rights do not hide the difference; a long-running delayq metrics, whose
# server need not answer; without a password the same command stays dumpable (its files
# are nobody's), which shows the check can fail.
need setpriv
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups" # execs: $! is the command
mkdir -p "$work/nd"
cp "$bin" "$work/nd/delayq" # a copy nobody may run, wherever the build is
chmod 755 "$work" "$work/nd" "$work/nd/delayq"
owner_is() { [ "$(stat -c %u "/proc/$1/environ" 2>/dev/null)" = "$2" ]; }
# (the pid is delayq's, running as nobody, not a shell's: setpriv execs it; and it is
# delayq once it logs, past setpriv, which is not dumpable between its setuid and exec)
is_nobody() { grep -q "^Uid:[[:space:]]*65534[[:space:]]" "/proc/$1/status"; }
serving() { grep -q "serving /metrics" "$work/nd.log"; }
DELAYQ_URL="redis://wk@127.0.0.1:$port" DELAYQ_PASSWORD=$secret \
  spawn $nobody "$work/nd/delayq" metrics --listen 127.0.0.1:0 2>"$work/nd.log"
nd=$spawned
wait_for 10000 "metrics serving" serving
check "metrics with a password runs as nobody" is_nobody "$nd"
check "... and its /proc files are root's (not dumpable)" owner_is "$nd" 0
check "... so another process of its user cannot read its environment" \
  not $nobody cat "/proc/$nd/environ" 2>/dev/null
stop_pid "$nd"
DELAYQ_URL="redis://127.0.0.1:1" \
  spawn $nobody "$work/nd/delayq" metrics --listen 127.0.0.1:0 2>"$work/nd.log"
nd=$spawned
wait_for 10000 "metrics serving" serving
check "metrics without a password stays dumpable (its /proc files are nobody's)" \
  owner_is "$nd" 65534
stop_pid "$nd"

finish
