#!/bin/sh
# schedule.sh: periodic schedules as a user runs them. A --every 1s schedule run by three
# delayq work processes for 10 s yields 10+-1 tasks, ids NAME@<ms> unique, none twice; a
# schedule missed for 5 s with no worker runs once when a worker comes back (the latest
# missed time, flagged late with the others counted as missed), not five times; the same
# for a cron schedule, whose list of firings the worker tops up; pause,
# resume and rm, their audit entries, and clear errors with exit 2.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
redis_start
dq() { "$bin" "$@"; }

cat >"$work/rec.sh" <<SH
#!/bin/sh
echo "\$DELAYQ_TASK_ID" >>"$work/ran.\$1"
SH
chmod +x "$work/rec.sh"
runs() { dq schedule ls -q "$1" --json | grep "\"name\":\"$2\"" | sed 's/.*"runs":\([0-9]*\).*/\1/'; }
lines() { if [ -f "$work/ran.$1" ]; then wc -l <"$work/ran.$1"; else echo 0; fi; }

# --- three workers, --every 1s, 10 s -------------------------------------------------
q=ticks
for w in 1 2 3; do
  spawn "$bin" work -q "$q" --name "w$w" -- "$work/rec.sh" "$q" 2>>"$work/w.log"
done
registered() { [ "$(dq workers -q "$q" --json 2>/dev/null | grep -o '"name":"w[123]"' | wc -l)" -eq 3 ]; }
wait_for 5000 "three workers registered" registered
check "schedule add --every 1s" dq schedule add -q "$q" tick --every 1s --json '{"t":1}'
sleep 10 # the window the done-when bar names: ten seconds of firings
check "schedule pause" dq schedule pause -q "$q" tick
fired=$(runs "$q" tick)
all_ran() { [ "$(lines "$q")" -ge "$fired" ]; }
check "every firing's task ran" wait_for 5000 "tasks of the firings" all_ran
echo "# --every 1s for 10 s with 3 workers: $fired firings, $(lines "$q") tasks ran"
in_range() { [ "$1" -ge 9 ] && [ "$1" -le 11 ]; }
check "10+-1 firings in 10 s" in_range "$fired"
check "as many tasks ran as fired" [ "$(lines "$q")" -eq "$fired" ]
check "no id ran twice" [ -z "$(sort "$work/ran.$q" | uniq -d)" ]
check "ids are tick@<ms>" not grep -qv '^tick@[0-9]\{13\}$' "$work/ran.$q"
# consecutive firing times are 1000 ms apart: none skipped, none doubled
gaps=$(sed 's/.*@//' "$work/ran.$q" | sort -n | awk 'NR > 1 && $1 - p != 1000 { print } { p = $1 }')
check "firing times 1000 ms apart" [ -z "$gaps" ]
dq schedule ls -q "$q" >"$work/ls.txt"
check "ls shows it paused, with its last task id" grep -q "^tick .*every 1000ms .*paused .*tick@" "$work/ls.txt"
check "paused: nothing more fires" [ "$(runs "$q" tick)" -eq "$fired" ]
check "schedule resume" dq schedule resume -q "$q" tick
more() { [ "$(runs "$q" tick)" -gt "$fired" ]; }
check "resumed: it fires again" wait_for 3000 "a firing after resume" more
check "schedule rm" dq schedule rm -q "$q" tick
check "ls has no schedules" sh -c "'$bin' schedule ls -q '$q' | grep -q 'no schedules'"
check "rm again is exit 1" not dq schedule rm -q "$q" tick
dq schedule rm -q "$q" tick 2>"$work/err.txt"
check "... saying so" grep -q 'no such schedule' "$work/err.txt"
audit=$(dq audit -q "$q")
check "the audit log has add, pause, resume, rm" sh -c "echo '$audit' | grep -q 'schedule add' &&
  echo '$audit' | grep -q 'schedule pause' && echo '$audit' | grep -q 'schedule resume' &&
  echo '$audit' | grep -q 'schedule rm'"

# --- catch-up: 5 s without a worker, then one run, late ------------------------------
q=nightly
check "schedule add --every 1s (no worker yet)" dq schedule add -q "$q" c --every 1s --json 1
t0=$(mono_ms)
sleep 5 # five firings are missed while no worker claims
spawn "$bin" work -q "$q" --name wc -- "$work/rec.sh" "$q" 2>>"$work/wc.log"
first() { [ "$(lines "$q")" -ge 1 ]; }
check "the worker runs the missed schedule" wait_for 3000 "a catch-up run" first
dq schedule ls -q "$q" --json >"$work/c.json"
dq schedule ls -q "$q" >"$work/c.txt"
echo "# catch-up: $(tail -1 "$work/c.txt")"
field() { sed "s/.*\"$1\":\([0-9]*\).*/\1/" "$work/c.json"; }
c_runs=$(field runs)
check "one catch-up run, not five" [ "$c_runs" -le 2 ]
# a second run may follow the catch-up within a second; the record then tells of it
if [ "$c_runs" -eq 1 ]; then
  check "the catch-up counts what it skipped (>= 3 missed)" [ "$(field missed)" -ge 3 ]
  check "ls flags it late" grep -q "(late by [3-9]s, [0-9]* missed)" "$work/c.txt"
fi
ran=$(head -1 "$work/ran.$q" | sed 's/.*@//')
check "the catch-up ran the latest missed time" [ $((t0 + 5000 - ran)) -lt 1500 ]

# --- cron: the list of firings, catch-up and top-up -----------------------------------
# A cron firing cannot be waited for in a test (a minute at least): the schedule's list
# is rewritten in Redis to hold three times just passed, as if no worker had run for 3
# minutes; a worker then runs the latest once, and tops the list up from its heartbeat.
q=cq
check "schedule add --cron every minute" dq schedule add -q "$q" minute --cron '* * * * *' --json 1
now=$(redis-cli -p "$redis_port" EVAL "
  local r = cjson.decode(redis.call('HGET', KEYS[1], ARGV[1]))
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  r.fires = {now - 3000, now - 2000, now - 1000}
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(r))
  redis.call('ZADD', KEYS[2], now - 3000, ARGV[1])
  redis.call('ZADD', KEYS[3], 0, ARGV[1])
  redis.call('ZADD', KEYS[2], 0, '')
  return now" 3 "dq:{$q}:sdefs" "dq:{$q}:snext" "dq:{$q}:slow" minute)
# an idle worker's check (every --max-idle) tells it a list wants a top-up
spawn "$bin" work -q "$q" --name wcron --max-idle 1s -- "$work/rec.sh" "$q" 2>>"$work/wcron.log"
check "the worker runs the cron schedule's missed firing" wait_for 3000 "a cron run" first
check "once, for the latest missed time" [ "$(cat "$work/ran.$q")" = "minute@$((now - 1000))" ]
topped() { dq schedule ls -q "$q" --json | grep -q '"listed":\(9\|1[0-6]\)[,}]'; }
check "the worker topped the list up (more than 8 firings listed)" wait_for 3000 "a top-up" topped
dq schedule ls -q "$q" --json >"$work/c.json"
check "the cron run counts 2 missed" [ "$(field missed)" -eq 2 ]
nx=$(field next_ms)
on_minute() { [ $((nx % 60000)) -eq 0 ] && [ "$nx" -gt "$now" ]; }
check "the next firing is on a whole minute, ahead" on_minute

# --- bad input ---------------------------------------------------------------------
check "no --cron or --every is exit 2" not dq schedule add -q "$q" x --json 1
dq schedule add -q "$q" x --cron '0 24 * * *' --json 1 2>"$work/err.txt"
check "a bad cron is exit 2" [ $? -eq 2 ]
check "... naming the field and range" grep -q 'hour 24 is out of range 0-23' "$work/err.txt"
dq schedule add -q "$q" x --cron '0 1 * * *' --tz Mars/Olympus --json 1 2>"$work/err.txt"
check "an unknown zone is exit 2" [ $? -eq 2 ]
dq schedule add -q "$q" 'bad name' --every 1s --json 1 2>"$work/err.txt"
check "a bad name is exit 2" [ $? -eq 2 ]
check "... naming the rule" grep -q 'schedule name: must be 1..100 bytes' "$work/err.txt"
check "an unknown subcommand is exit 2" not dq schedule frob
check "a cron schedule in a zone is added" dq schedule add -q "$q" berlin --cron '30 2 * * *' \
  --tz Europe/Berlin --json 1
check "ls shows its zone" sh -c "'$bin' schedule ls -q '$q' | grep -q '^berlin .*30 2 \* \* \* Europe/Berlin'"
finish
