#!/bin/sh
# top_throttle.sh: T in delayq top throttles a live queue (rate, concurrency, how long,
# why, then y/N), in tmux, on a queue of its own: the header says "THROTTLED 10/s, 3 in
# flight by WHO: REASON, until hh:mm", stats --json and the audit log agree; T on a
# throttled queue offers to lift it; a rate that is not one is told and changes
# nothing; --read-only refuses T.
. "$(dirname "$0")/lib.sh"
start_demo
q=flow
"$bin" enqueue -q "$q" --json '{"n":1}' >/dev/null
throttled_is() { "$bin" stats -q "$q" --json | grep -qF "\"throttled\":$1"; }
main_session "$bin top -q $q --refresh 250ms --who alice@ops"
wait_for screen_has "queue $q" || bad "top opens the queue"

# a typo in the rate: told, nothing changes
tm send-keys -t top T
wait_for screen_has "throttle queue $q to a rate" || bad "T asks for the rate"
tm send-keys -t top 1 0 / x Enter
if wait_for screen_has "not throttled" && throttled_is false; then
  ok "a rate that is not one is told, nothing changes"
else bad "rate typo"; fi

# T 10/s, 3, 10m, a reason, y
tm send-keys -t top T
wait_for screen_has "throttle queue $q to a rate" || bad "T asks again"
tm send-keys -t top 1 0 / s Enter
wait_for screen_has "at most this many in flight" || bad "T asks for the concurrency"
tm send-keys -t top 3 Enter
wait_for screen_has "for how long" || bad "T asks how long"
tm send-keys -t top 1 0 m Enter
wait_for screen_has "why (" || bad "T asks why"
tm send-keys -t top -l "payments-api recovering"
tm send-keys -t top Enter
if wait_for screen_has "throttle queue $q to 10/s, 3 in flight for 10m: payments-api recovering? y/N"; then
  ok "T confirms first, saying what it will do"
else bad "T confirm"; fi
tm send-keys -t top y
until_hm=$(date -u -d '+10 minutes' +%H:%M)
until_hm2=$(date -u -d '+9 minutes' +%H:%M)
header_ok() {
  screen_has "THROTTLED 10/s, 3 in flight by alice@ops: payments-api recovering, until $until_hm" ||
    screen_has "THROTTLED 10/s, 3 in flight by alice@ops: payments-api recovering, until $until_hm2"
}
if wait_for header_ok && wait_for throttled_is true; then
  ok "T throttles the queue: the header says who, why and until when (and Redis agrees)"
else bad "throttle header"; fi
"$bin" stats -q "$q" --json | grep -qF '"throttle":{"rate_per_min":600,"concurrency":3,' &&
  ok "stats --json has the throttle" || bad "stats --json throttle"
"$bin" audit -q "$q" --limit 1 | grep -q "alice@ops  throttle  rate 10/s concurrency 3 for 600000ms" &&
  ok "the throttle is in the audit log with who" || bad "audit entry"

# T on a throttled queue offers to lift it
tm send-keys -t top T
wait_for screen_has "lift the throttle of queue $q (by alice@ops)? y/N" || bad "T offers to lift"
tm send-keys -t top y
if wait_for throttled_is false && wait_for screen_lacks "THROTTLED"; then
  ok "T y lifts it (header and Redis)"
else bad "lift"; fi
"$bin" audit -q "$q" --limit 1 | grep -q "alice@ops  throttle off" &&
  ok "the lift is in the audit log" || bad "audit entry of the lift"
tm send-keys -t top q
wait_for gone || bad "quit"

# --read-only refuses it
session top 140 40 "$bin top -q $q --read-only"
if wait_for screen_has "READ-ONLY"; then
  tm send-keys -t top T
  if wait_for screen_has "read-only: actions are disabled" && throttled_is false; then
    ok "--read-only refuses T"
  else bad "read-only refusal"; fi
else bad "read-only badge"; fi
tm send-keys -t top q
wait_for gone || bad "read-only session quits"
finish
