#!/bin/sh
# handlers_die.sh: a handler's whole process group dies with its worker (PROTOCOL 10.8).
# The handler is a shell that starts a grandchild (`sleep 300 &`) and waits for it, as
# shell wrappers do; PR_SET_PDEATHSIG alone kills the shell and leaves the sleep. For a
# command per task and for --persistent: kill -9 of the worker, the handler timeout,
# and a SIGTERM stop each leave no grandchild (within 2 s), and the guardian process
# (delayq-guard) goes with the worker; kill -9 of the worker's whole process group does
# not take the guardian along. A private redis-server; deadline waits only
# (tests/eco/lib.sh).
set -u
. "$(dirname "$0")/../eco/lib.sh"
need redis-cli ps

# gone PID: no such process, or a zombie (killed, not yet reaped by whoever adopted it)
gone() { dead "$1" || grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }
# pid_in FILE: FILE holds the pid of a live process (the grandchild is running)
pid_in() { [ -s "$1" ] && alive "$(cat "$1")"; }
# guard_of PID: the pid of worker PID's guardian
guard_of() { ps -o pid=,comm= --ppid "$1" | awk '$2 == "delayq-guard" { print $1 }'; }
# guard_gone: the guardian seen beside the worker has ended
guard_gone() { [ -n "$guard" ] && gone "$guard"; }
# The handler: a grandchild in the background, its pid in $1, then wait for it. In
# --persistent mode it reads no task and never answers: it is busy with the first one.
handler='sleep 300 & echo $! > "$1"; wait'

redis_start
prefix=

# start NAME ARGS...: [$prefix] `delayq work -q NAME ARGS... -- sh -c HANDLER sh $work/NAME.pid`
# with one task due; sets worker, guard, grandchild once the grandchild runs
start() {
  name=$1
  shift
  pidfile="$work/$name.pid"
  rm -f "$pidfile"
  "$bin" enqueue -q "$name" --json '{"n":1}' >/dev/null
  spawn $prefix "$bin" work -q "$name" "$@" -- sh -c "$handler" sh "$pidfile" 2>"$work/$name.log"
  worker=$spawned
  grandchild=
  guard=
  if wait_for 15000 "$name: the grandchild running" pid_in "$pidfile"; then
    grandchild=$(cat "$pidfile")
    pids="$pids $grandchild" # cleanup kills one left by a failed check
    guard=$(guard_of "$worker")
  else
    cat "$work/$name.log" >&2
  fi
  [ -n "$grandchild" ]
}

# after_kill9 NAME: kill -9 of the worker; its grandchild and its guardian go within 2 s
after_kill9() {
  kill -KILL "$worker"
  wait "$worker" 2>/dev/null
  check "$1: the grandchild dies with its worker (kill -9)" \
    wait_for 2000 "$1: grandchild $grandchild gone" gone "$grandchild"
  check "$1: the guardian ends with its worker" \
    wait_for 2000 "$1: guardian ${guard:-(none seen)} gone" guard_gone
}

# --- kill -9 of the worker: a command per task, then --persistent ---
if check "per task: the handler starts a grandchild" start k9; then
  check "per task: a guardian runs beside the worker" [ -n "$guard" ]
  after_kill9 "per task"
fi
if check "persistent: the handler starts a grandchild" start p9 --persistent; then
  after_kill9 "persistent"
fi

# --- kill -9 of the worker's whole process group, as a supervisor or a terminal may
# send it: the guardian is in a group of its own and is not taken along. setsid puts
# the worker in a new session and group (it execs in place: the background job is no
# group leader), so the signal reaches it and not this script. ---
if command -v setsid >/dev/null; then
  prefix=setsid
  if check "group kill: the handler starts a grandchild" start g9; then
    kill -KILL "-$worker"
    check "group kill: the worker is killed" wait_for 2000 "group kill: worker gone" gone "$worker"
    wait "$worker" 2>/dev/null
    check "group kill: the grandchild dies with its worker" \
      wait_for 2000 "group kill: grandchild $grandchild gone" gone "$grandchild"
  fi
  prefix=
fi

# --- the handler timeout kills the group, grandchild included; the worker runs on ---
for mode in "" --persistent; do
  label="per task"
  [ -n "$mode" ] && label=persistent
  if check "$label: the handler starts a grandchild (timeout)" start "to${mode:+p}" --timeout 1s --grace 100ms $mode; then
    check "$label: the timeout kills the grandchild" \
      wait_for 4000 "$label: grandchild $grandchild gone after the timeout" gone "$grandchild"
    check "$label: the worker runs on after a timeout" alive "$worker"
    check "$label: the timeout is logged" \
      wait_for 2000 "$label: the timeout logged" grep -q "timed out after 1000 ms" "$work/to${mode:+p}.log"
    stop_pid "$worker"
  fi
done

# --- a SIGTERM stop: the grace period ends, the group is killed, the guardian leaves ---
if check "per task: the handler starts a grandchild (SIGTERM)" start term --grace 200ms; then
  kill -TERM "$worker"
  check "SIGTERM: the worker exits 0" wait_for 5000 "the worker out" dead "$worker"
  wait "$worker"
  check "SIGTERM: exit status 0" [ $? -eq 0 ]
  check "SIGTERM: the grandchild is killed at the end of the grace period" \
    wait_for 2000 "grandchild $grandchild gone" gone "$grandchild"
  check "SIGTERM: the guardian ends with the worker" wait_for 2000 "guardian gone" guard_gone
fi

finish
