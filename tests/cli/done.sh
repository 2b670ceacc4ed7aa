#!/bin/sh
# done.sh: done retention as a user runs it. With done_retention 3, delayq work's acks
# keep the last 3 finished tasks: show tells when and how one ran (worker, duration,
# attempt), ls done lists them newest first, the 4th finished task trims the oldest
# (exactly 3 kept), a lowered retention trims at once, an age limit (done_retention_ms)
# hides and then removes what is older, and a queue left at 0 writes no done key at all.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
redis_start
dq() { "$bin" "$@"; }
r() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }

# the handler: retries the first run of charge-123 (exit 75: it finishes on attempt 2)
cat >"$work/flaky.sh" <<SH
#!/bin/sh
if [ "\$DELAYQ_TASK_ID" = charge-123 ] && [ ! -e "$work/tried" ]; then
  touch "$work/tried"
  exit 75
fi
exit 0
SH
chmod +x "$work/flaky.sh"

q=orders
check "config done_retention=3" dq config -q "$q" done_retention=3 backoff_base_ms=1
check "config prints it" sh -c "'$bin' config -q '$q' | grep -q '^done_retention  *3$'"
dq enqueue -q "$q" --id charge-123 --json '{"order":123}' >/dev/null
spawn "$bin" work -q "$q" --name w1 -- "$work/flaky.sh" 2>>"$work/w1.log"
shown() { dq show -q "$q" charge-123 >"$work/show.txt" 2>&1 && grep -q '^state  *done$' "$work/show.txt"; }
if check "show finds the finished task" wait_for 5000 "charge-123 done" shown; then
  cat "$work/show.txt" | sed 's/^/# /'
  check "state done" grep -q '^state  *done$' "$work/show.txt"
  check "show says when and how it ran" \
    grep -Eq '^outcome  *done [0-9T:.-]+Z after [0-9.]+m?s on worker w1 \(attempt 2\)$' \
    "$work/show.txt"
fi
check "show --json has done_ms, duration and worker" \
  sh -c "'$bin' show -q '$q' --json charge-123 | grep -Eq '\"state\":\"done\".*\"done_ms\":[0-9]+.*\"duration_ms\":[0-9]+.*\"worker\":\"w1\"'"
check "... and no payload" not sh -c "'$bin' show -q '$q' --json charge-123 | grep -q payload"
check "ls done lists it" sh -c "'$bin' ls -q '$q' done | grep -Eq '^charge-123 .* ago +2 +after .* on worker w1 \\(attempt 2\\)$'"

# four more: the oldest (charge-123) is trimmed, exactly three are kept
for i in 1 2 3 4; do dq enqueue -q "$q" --id "t$i" --json "$i" >/dev/null; sleep 0.01; done
five_done() { [ "$(r HGET 'dq:{orders}:stats' done)" = 5 ]; }
check "all five finished" wait_for 5000 "five done" five_done
check "exactly 3 done records" [ "$(r HLEN 'dq:{orders}:done')" = 3 ]
check "and 3 in the index" [ "$(r ZCARD 'dq:{orders}:doneidx')" = 3 ]
check "the oldest is gone from show" not dq show -q "$q" charge-123
dq ls -q "$q" done >"$work/ls.txt"
cat "$work/ls.txt" | sed 's/^/# /'
check "ls done: 3 rows and the header" [ "$(wc -l <"$work/ls.txt")" = 4 ]
check "... newest first" sh -c "sed -n '2p' '$work/ls.txt' | grep -q '^t4 '"
check "... the oldest kept is t2" sh -c "sed -n '4p' '$work/ls.txt' | grep -q '^t2 '"

# a lowered retention trims at once
check "config done_retention=1" dq config -q "$q" done_retention=1
check "one done record left" [ "$(r HLEN 'dq:{orders}:done')" = 1 ]
left=$(r ZRANGE 'dq:{orders}:doneidx' 0 -1)
check "... the newest, t4 (got: $left)" [ "$left" = c:t4 ]
check "done_retention=0 is accepted" dq config -q "$q" done_retention=0
check "... and keeps none" [ "$(r EXISTS 'dq:{orders}:done')" = 0 ]

# bad values name the field and the limit
dq config -q "$q" done_retention=10000001 >/dev/null 2>"$work/err.txt"
check "done_retention over the limit fails" [ $? -ne 0 ]
check "... naming the field and range" grep -q "done_retention: .* is not in 0..10000000" "$work/err.txt"
dq export -q "$q" done >/dev/null 2>"$work/err.txt"
check "export done is exit 2" [ $? -eq 2 ]

# the issue's own figure: with done_retention 1000, show tells when and how it ran
q=ledger
check "config done_retention=1000" dq config -q "$q" done_retention=1000
dq enqueue -q "$q" --id charge-1000 --json '{"order":1000}' >/dev/null
spawn "$bin" work -q "$q" --name w4 -- true 2>>"$work/w4.log"
shown1000() { dq show -q "$q" charge-1000 >"$work/show1000.txt" 2>&1 && grep -q '^state  *done$' "$work/show1000.txt"; }
check "done_retention 1000: show finds the finished task" wait_for 5000 "charge-1000 done" shown1000
check "... saying when and how it ran" \
  grep -Eq '^outcome  *done [0-9T:.-]+Z after [0-9.]+m?s on worker w4 \(attempt 1\)$' "$work/show1000.txt"

# an age limit alone (done_retention_ms, server time): ls done and show stop showing a
# record past its age before any write removes it; the next ack removes it exactly
q=aged
check "config done_retention_ms=1s" dq config -q "$q" done_retention_ms=1s
check "config prints it" sh -c "'$bin' config -q '$q' | grep -q '^done_retention_ms 1000 (1s)$'"
dq enqueue -q "$q" --id a1 --json 1 >/dev/null
spawn "$bin" work -q "$q" --name w3 -- true 2>>"$work/w3.log"
listed() { dq ls -q "$q" done | grep -q "^$1 "; }
check "ls done lists a1" wait_for 5000 "a1 in ls done" listed a1
check "show finds a1" dq show -q "$q" a1
unlisted() { ! listed "$1"; }
check "ls done hides a1 once it is past its age" wait_for 5000 "a1 aged" unlisted a1
check "... and so does show (exit 1)" not dq show -q "$q" a1
check "... while the record is still stored (no write since)" \
  [ "$(r ZCARD 'dq:{aged}:doneidx')" = 1 ]
dq enqueue -q "$q" --id a2 --json 2 >/dev/null
check "ls done lists a2" wait_for 5000 "a2 in ls done" listed a2
check "the ack of a2 removed a1: exactly one record" [ "$(r HLEN 'dq:{aged}:done')" = 1 ]
check "... a2's" [ "$(r ZRANGE 'dq:{aged}:doneidx' 0 -1)" = c:a2 ]
dq config -q "$q" done_retention_ms=366d >/dev/null 2>"$work/err.txt"
check "done_retention_ms over the limit fails" [ $? -ne 0 ]
check "... naming the field and range" \
  grep -q "done_retention_ms: .* is not in 0..31536000000" "$work/err.txt"

# the default (0): an ack writes nothing
q=plain
dq enqueue -q "$q" --id p1 --json 1 >/dev/null
spawn "$bin" work -q "$q" --name w2 -- true 2>>"$work/w2.log"
one_done() { [ "$(r HGET 'dq:{plain}:stats' done)" = 1 ]; }
check "the task finished" wait_for 5000 "p1 done" one_done
check "no done key without done_retention" [ "$(r EXISTS 'dq:{plain}:done' 'dq:{plain}:doneidx')" = 0 ]
check "show of a finished task without retention is not found (exit 1)" not dq show -q "$q" p1
check "ls done is empty" [ "$(dq ls -q "$q" done | wc -l)" -le 1 ]
finish
