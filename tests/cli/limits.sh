#!/bin/sh
# limits.sh: the queue limits and the live throttle (PROTOCOL.md 8.4) with real
# `delayq work` processes on a private redis-server: the done-when bars of the queue
# limits, four workers of four slots each (-c 4). Each handler records its own start and
# end; every check is a deadline poll, never a sleep-and-hope.
#   rate      rate_limit 20/s (burst: one second's worth, 20): 200 due tasks start over
#             9-11 s, first to last, and no 1 s window holds more than 20 + burst starts.
#             By server time: each handler records DELAYQ_CLAIMED_MS, the server ms of
#             the claim that leased it (what the bucket counts by), beside its own clock
#             (on loopback the server's clock; printed, not a bar: a spawn's jitter is
#             not the limiter's). With a full bucket at the first claim the last of 200
#             is due 180 / 20 = 9.0 s after it; the bucket makes that a floor.
#   conc      concurrency_limit 3, handlers of 500 ms: never more than 3 running at once
#             (from the handlers' start and end records, one clock), all done
#   held      a worker held back by concurrency_limit 1 makes a few calls, not one per
#             10 ms, and starts within 1 s once the slot frees (a wake-up, no polling)
#   throttle  --for expires by itself; it is in the audit log with who and why;
#             stats --json, metrics and the verdict show it; bad input exits 2
# With the argument evalsha, all of it on the scripts' EVALSHA path (each call carries
# the prelude, lib.lua's limits block included). The bars are the same under a sanitizer
# (tests/meson.build runs this script as it is): the rate's floor is the bucket's, and a
# slow worker catches up on the tokens it finds banked (at most the burst), so only a
# worker that cannot start 20 tasks a second would miss the 11 s ceiling.
set -u
if [ "${1:-}" = evalsha ]; then
  DELAYQ_SCRIPTS=evalsha
  export DELAYQ_SCRIPTS
fi
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli python3
redis_start
rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
dq() { "$bin" "$@"; }
log="$work/starts.log"
: >"$log"
# "s <claim's server ms> <ms> <task>" at the start and "e - <ms> <task>" at the end of
# each run (<ms>: the handler's clock); a payload holding "long" runs 3 s, "slow" 500 ms
cat >"$work/handler.sh" <<EOF
#!/bin/sh
p=\$(cat)
echo "s \${DELAYQ_CLAIMED_MS:-none} \$(date +%s%3N) \$DELAYQ_TASK_ID" >>"$log"
case "\$p" in
*long*) sleep 3 ;;
*slow*) sleep 0.5 ;;
esac
echo "e - \$(date +%s%3N) \$DELAYQ_TASK_ID" >>"$log"
EOF
chmod +x "$work/handler.sh"
starts() { grep -c "^s " "$log"; }
ends() { grep -c "^e " "$log"; }
at_least() { [ "$($1)" -ge "$2" ]; }
enqueue_n() { # QUEUE N PAYLOAD
  i=0
  while [ $i -lt "$2" ]; do
    dq enqueue -q "$1" --json "$3" >/dev/null || return 1
    i=$((i + 1))
  done
}
stop_workers() { for p in $1; do stop_pid "$p"; done; }

# ---- config: the fields, their units and their errors --------------------------------
q=r
dq config -q "$q" rate_limit=20/s >/dev/null
check "config rate_limit=20/s is kept a minute and shown as 20/s" \
  sh -c "'$bin' config -q $q | grep -qx 'rate_limit        1200 (20/s)'"
dq config -q "$q" rate_limit=abc >/dev/null 2>"$work/err"
rc=$?
check "config rate_limit=abc exits 2 naming the field" \
  sh -c "[ $rc -eq 2 ] && grep -q 'rate_limit: \"abc\" is not a rate' '$work/err'"
dq config -q "$q" concurrency_limit=2000000 >/dev/null 2>"$work/err"
rc=$?
check "config concurrency_limit past its range exits 2 naming the field and the range" \
  sh -c "[ $rc -eq 2 ] && grep -q 'concurrency_limit: \"2000000\" is not in 0..1000000' '$work/err'"

# ---- rate: 20/s over four workers of four slots --------------------------------------
enqueue_n "$q" 200 '{}' || bad "enqueue 200"
ws=""
for k in 1 2 3 4; do
  spawn "$bin" work -q "$q" -c 4 --name "rate-$k" -- "$work/handler.sh" 2>>"$work/w.log"
  ws="$ws $spawned"
done
# 9 s by the bucket; the deadline leaves room to see a miss of the 11 s bar
check "rate_limit 20/s: all 200 start" wait_for 30000 "200 starts" at_least starts 200
stop_workers "$ws"
claims="$work/claims"
grep "^s " "$log" | cut -d' ' -f2 | sort -n >"$claims"
check "every handler got the claim's server time (DELAYQ_CLAIMED_MS)" \
  sh -c "! grep -qv '^[0-9][0-9]*\$' '$claims'"
span=$(($(tail -1 "$claims") - $(head -1 "$claims")))
check "rate_limit 20/s: 200 starts over 9-11 s by server time ($span ms, first to last)" \
  sh -c "[ $span -ge 9000 ] && [ $span -le 11000 ]"
# the most starts in any 1 s window [t, t + 1000)
most_in_1s() {
  python3 -c '
import sys
t = [int(x) for x in sys.stdin]
j = m = 0
for i in range(len(t)):
    while t[i] - t[j] >= 1000:
        j += 1
    m = max(m, i - j + 1)
print(m)'
}
w1=$(most_in_1s <"$claims")
check "rate_limit 20/s: at most 20 + burst (40) in any 1 s window by server time ($w1)" \
  sh -c "[ $w1 -le 40 ]"
w2=$(grep "^s " "$log" | cut -d' ' -f3 | sort -n | most_in_1s)
late=$(grep "^s " "$log" | awk '{ d = $3 - $2; if (d > m) m = d } END { print m + 0 }')
echo "# by the handlers' own clock: at most $w2 in 1 s; a start at most $late ms after its claim"
limited=$(dq stats -q "$q" --json | sed -n 's/.*"limited":{"rate":\([0-9]*\),.*/\1/p')
check "stats --json counts the claims the rate held back (${limited:-none})" \
  sh -c "[ '${limited:-0}' -gt 0 ]"
dq stats -q "$q" >"$work/stats.txt"
check "stats shows the limit" \
  grep -q '^limits       rate 20/s (burst 20), concurrency off' "$work/stats.txt"
dq metrics -q "$q" --textfile "$work/m.prom" || bad "metrics --textfile"
check "metrics: delayq_limited_total{limit=rate} counts them" \
  grep -q "^delayq_limited_total{queue=\"$q\",limit=\"rate\"} ${limited:-x}\$" "$work/m.prom"
check "metrics: the rate limit as a gauge (20/s)" \
  grep -q "^delayq_queue_rate_limit{queue=\"$q\"} 20.000\$" "$work/m.prom"

# ---- conc: never more than 3 running ---------------------------------------------------
q=c
: >"$log"
dq config -q "$q" concurrency_limit=3 >/dev/null
enqueue_n "$q" 24 '"slow"' || bad "enqueue 24"
ws=""
for k in 1 2 3 4; do
  spawn "$bin" work -q "$q" -c 4 --name "conc-$k" -- "$work/handler.sh" 2>>"$work/w.log"
  ws="$ws $spawned"
done
check "concurrency_limit 3: all 24 tasks run" wait_for 60000 "24 ends" at_least ends 24
stop_workers "$ws"
# a handler records its start after its claim and its end before its ack, so the runs
# it records lie within the leases the limit counts. At an equal ms an end counts
# before a start (sort -k1,1: "e" < "s")
most=$(sort -k3,3n -k1,1 "$log" |
  awk '$1 == "e" { n-- } $1 == "s" { n++; if (n > m) m = n } END { print m + 0 }')
check "concurrency_limit 3: at most 3 ran at once ($most, from the handlers' records)" \
  sh -c "[ $most -le 3 ] && [ $most -ge 2 ]"

# ---- held: a held-back worker sleeps until a slot frees --------------------------------
q=h
: >"$log"
dq config -q "$q" concurrency_limit=1 >/dev/null
dq enqueue -q "$q" --json '"long"' >/dev/null
spawn "$bin" work -q "$q" --concurrency 1 --name hog -- "$work/handler.sh" 2>>"$work/w.log"
hog=$spawned
check "the hog starts the long task" wait_for 10000 "the long task" at_least starts 1
enqueue_n "$q" 3 '{}' || bad "enqueue 3"
spawn "$bin" work -q "$q" --concurrency 4 --max-idle 60s --name held -- "$work/handler.sh" \
  2>>"$work/w.log"
held=$spawned
held_back() { dq stats -q "$q" --json | grep -q '"concurrency_held":true'; }
check "the second worker is held back" wait_for 10000 "a held-back claim" held_back
fcalls() { rcli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),.*/\1/p'; }
c0=$(fcalls)
m0=$(mono_ms)
a_second() { [ "$(mono_ms)" -ge $((m0 + 1000)) ]; }
wait_for 5000 "1 s" a_second
c1=$(fcalls)
m1=$(mono_ms)
calls=$((c1 - c0))
check "held back for $((m1 - m0)) ms, both workers made $calls calls (a few, not one per 10 ms)" \
  sh -c "[ $calls -le 10 ]"
check "nothing else started meanwhile" sh -c "[ \$(grep -c '^s ' '$log') -eq 1 ]"
kill -TERM "$hog" # it finishes the long task, writes its result, and claims no more
long_end() { grep -q "^e " "$log"; }
wait_for 10000 "the long task's end" long_end
t_end=$(grep "^e " "$log" | head -1 | cut -d' ' -f3)
check "once the slot frees, the held worker runs the other 3" \
  wait_for 10000 "4 ends" at_least ends 4
t_next=$(grep "^s " "$log" | sed -n 2p | cut -d' ' -f3)
check "... the next within 1 s of the slot freeing ($((t_next - t_end)) ms; its idle look: 60 s)" \
  sh -c "[ $((t_next - t_end)) -le 1000 ]"
stop_pid "$hog"
stop_pid "$held"

# ---- throttle: --for ends it by itself; audit, stats, metrics, verdict -----------------
q=t
: >"$log"
enqueue_n "$q" 5 '{}' || bad "enqueue 5"
dq throttle -q "$q" --rate 1/m --for 2s --reason "payments-api recovering" --who alice@ops \
  >"$work/th.out" || bad "throttle"
check "throttle says what it did" grep -q "^throttled queue $q to 1/m until " "$work/th.out"
check "the throttle is in the audit log with who and why" \
  sh -c "'$bin' audit -q $q --limit 1 | grep -q 'alice@ops  throttle  rate 1/m for 2000ms until [0-9]*: payments-api recovering  -> ok'"
dq stats -q "$q" --json >"$work/st.json"
check "stats --json: the throttle with who, why and its end" \
  grep -q '"throttled":true,"throttle":{"rate_per_min":1,"concurrency":0,"since_ms":[0-9]*,"until_ms":[0-9]*,"by":"alice@ops","reason":"payments-api recovering"}' "$work/st.json"
check "delayq queues --json: the queue is throttled" \
  sh -c "'$bin' queues --json | grep -q '\"queue\":\"$q\".*\"throttled\":true'"
dq metrics -q "$q" --textfile "$work/m2.prom" || bad "metrics --textfile"
check "metrics: delayq_queue_throttled 1" \
  grep -q "^delayq_queue_throttled{queue=\"$q\"} 1\$" "$work/m2.prom"
spawn "$bin" work -q "$q" --concurrency 4 --max-idle 60s --name thr -- "$work/handler.sh" \
  2>>"$work/w.log"
w=$spawned
wait_for 5000 "a first start" at_least starts 1
rate_held() { dq stats -q "$q" --json | grep -q '"rate_held_ms":[1-9]'; }
wait_for 5000 "a claim the rate held back" rate_held
dq stats -q "$q" >"$work/st.txt"
check "stats: the THROTTLED line" \
  grep -q '^THROTTLED    1/m by alice@ops: payments-api recovering, until [0-9][0-9]:[0-9][0-9]$' "$work/st.txt"
check "the verdict: rate-limited, draining at the throttle's rate" \
  grep -q '^verdict      rate-limited: 4 due, draining at 1/m, ~4m left' "$work/st.txt"
check "while throttled to 1/m only the burst (1) started" sh -c "[ \$(grep -c '^s ' '$log') -eq 1 ]"
not_throttled() { dq stats -q "$q" --json | grep -q '"throttled":false'; }
check "throttle --for 2s ends by itself (stats --json)" wait_for 5000 "its end" not_throttled
check "... and the held worker starts the rest without anyone acting" \
  wait_for 5000 "5 starts" at_least starts 5
stop_pid "$w"
dq throttle -q "$q" --off >"$work/off.out"
check "throttle --off on an ended throttle says so" grep -q "was not throttled" "$work/off.out"
dq throttle -q "$q" --rate 0 >/dev/null 2>"$work/err"
rc=$?
check "throttle --rate 0 exits 2" sh -c "[ $rc -eq 2 ] && grep -q 'use --off' '$work/err'"
dq throttle -q "$q" --off --rate 5 >/dev/null 2>&1
rc=$?
check "throttle --off --rate exits 2" sh -c "[ $rc -eq 2 ]"
r=$(head -c 300 /dev/zero | tr '\0' x)
dq throttle -q "$q" --concurrency 1 --reason "$r" >/dev/null 2>"$work/err"
rc=$?
check "a reason over 200 bytes exits 2 naming the limit" \
  sh -c "[ $rc -eq 2 ] && grep -q 'reason: 300 bytes is over the limit of 200 bytes' '$work/err'"
finish
