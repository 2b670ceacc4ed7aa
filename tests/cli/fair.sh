#!/bin/sh
# fair.sh: per-key limits (PROTOCOL.md 4.10) with real delayq work processes.
# 1. key_concurrency 1: no two tasks of one key overlap across four workers of four
#    slots, while tasks of different keys (and unkeyed ones) do run side by side.
# 2. The fairness case: one key with 50 000 due tasks enqueued first, then 100 keys with
#    10 each, key_concurrency 2, four workers of four slots and a near-instant handler
#    (fair_rec): every small-key task starts within 2 s of the last one's enqueue (the
#    first, the 99th percentile and the last start are printed, by the handlers' own
#    clock, which is Redis' on this host), while the big key runs, at most 2 at once;
#    stats shows the parked count. delayq keys names the big key, with its parked count.
# 3. Reap: a worker killed while it holds a keyed task; its lease is reaped, the key's
#    count drops and its parked tasks run, still one at a time.
# Usage: fair.sh FAIR_FILL FAIR_REC [SANITIZE] (tests/cli/fair_fill, the bulk enqueue
# helper; tests/cli/fair_rec, the handler; SANITIZE, meson's b_sanitize: other than
# "none" or empty, the 2 s bar is widened for the sanitizer's slower delayq).
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
fill=${1:?usage: fair.sh FAIR_FILL FAIR_REC [SANITIZE]}
rec=${2:?usage: fair.sh FAIR_FILL FAIR_REC [SANITIZE]}
sanitize=${3:-none}
redis_start
dq() { "$bin" "$@"; }
rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }

# the handler: "S id ms" at its start and "E id ms" at its end (one short append each)
cat >"$work/h.sh" <<'SH'
#!/bin/sh
echo "S $DELAYQ_TASK_ID $(date +%s%3N)" >>"$LOG"
if [ -n "${NAP:-}" ]; then
  sleep "$NAP" &
  echo "$$ $!" >"$LOG.pids" # (the reap case ends an orphaned handler by its pids)
  wait
fi
echo "E $DELAYQ_TASK_ID $(date +%s%3N)" >>"$LOG"
exit 0
SH
chmod +x "$work/h.sh"

# max_overlap LOG PATTERN: the most runs of ids matching PATTERN (awk regex) at once,
# from the handlers' own records (an end before a start of the same ms)
max_overlap() {
  awk -v pat="$2" '$2 ~ pat { print $3, ($1 == "E" ? 0 : 1) }' "$1" | sort -n -k1,1 -k2,2 |
    awk '{ if ($2 == 1) { n++; if (n > m) m = n } else n-- } END { print m + 0 }'
}
done_count() { dq stats -q "$1" --json | sed -n 's/.*"counters":{[^}]*"done":\([0-9]*\).*/\1/p'; }
done_is() { [ "$(done_count "$1")" = "$2" ]; }

# --- 1. key_concurrency 1: no overlap within a key ------------------------------------
q=one
check "config key_concurrency=1" dq config -q "$q" key_concurrency=1
check "config shows it" sh -c "'$bin' config -q '$q' --json | grep -q '\"key_concurrency\":1'"
for k in a b c; do
  for i in 1 2 3 4; do dq enqueue -q "$q" --id "$k-$i" --key "$k" --json 1 >/dev/null; done
done
for i in 1 2 3 4; do dq enqueue -q "$q" --id "free-$i" --json 1 >/dev/null; done
check "show is unchanged for a keyed task" dq show -q "$q" a-1
log1="$work/one.log"
for w in 1 2 3 4; do
  LOG=$log1 NAP=0.3 spawn "$bin" work -q "$q" -c 4 --name "one-$w" --quiet -- "$work/h.sh"
  eval "one_$w=\$spawned"
done
check "all 16 tasks done" wait_for 30000 "16 done" done_is "$q" 16
for k in a b c; do
  check "key $k: never two at once across four workers" [ "$(max_overlap "$log1" "^$k-")" = 1 ]
done
check "different keys and unkeyed tasks ran side by side (4 or more at once)" \
  [ "$(max_overlap "$log1" .)" -ge 4 ]
check "no counts left once all are done" [ "$(rcli HLEN 'dq:{one}:kin')" = 0 ]
for w in 1 2 3 4; do eval "stop_pid \$one_$w"; done

# --- 2. fairness: one key with 50 000 due, 100 keys with 10 ---------------------------
q=fair
check "config key_concurrency=2" dq config -q "$q" key_concurrency=2
check "50 000 tasks of key big" "$fill" "$q" big 50000 big
i=0
while [ $i -lt 100 ]; do
  "$fill" "$q" "k$i" 10 "k$i" || bad "fill k$i"
  i=$((i + 1))
done
# server time (us) just after the last small-key task was enqueued: the bar runs from it
t0=$(rcli TIME | tr '\n' ' ' | awk '{ printf "%s%06d\n", $1, $2 }')
check "stats: 51 000 due" sh -c "'$bin' stats -q '$q' --json | grep -q '\"due\":51000'"
log2="$work/fair.log"
for w in 1 2 3 4; do
  LOG=$log2 spawn "$bin" work -q "$q" -c 4 --name "fair-$w" --quiet -- "$rec"
  eval "fair_$w=\$spawned"
done
small_started() { [ "$(grep -c '^S k' "$log2" 2>/dev/null)" -ge 1000 ]; }
# The issue's bar: 2 s. Where the time goes (PROTOCOL.md 4.10, "Costs"): the claims park
# the big key's 50 000 (1000 a call) before the small keys' tasks, behind them in due
# order, can be claimed; then 1 000 handler starts on 14 free slots. A sanitizer build's
# delayq work is slower per task: its bar is 3x (1.3 s measured under ASan + UBSan on a
# shared 2-core machine, 1.0 to 1.8 s in the normal build); the normal one never widens.
bar=2000
case $sanitize in none | '') ;; *) bar=6000 ;; esac
check "every small-key task starts (deadline 60 s)" wait_for 60000 "1000 small starts" small_started
awk -v t="$t0" '$1 == "S" && $2 ~ /^k/ { print int(($3 - t) / 1000) }' "$log2" | sort -n >"$work/small.ms"
first=$(sed -n 1p "$work/small.ms")
p99=$(sed -n 990p "$work/small.ms")
last=$(sed -n 1000p "$work/small.ms")
echo "# small keys' starts after the last enqueue: first $first ms, p99 $p99 ms, last $last ms" \
  "(bar $bar ms; b_sanitize $sanitize)"
check "p99 of the small keys' starts within $bar ms ($p99)" [ "${p99:-999999}" -le "$bar" ]
check "the last small-key start within $bar ms ($last)" [ "${last:-999999}" -le "$bar" ]
lastus=$(awk '$1 == "S" && $2 ~ /^k/ { print $3 }' "$log2" | sort -n | tail -1)
bigs=$(awk -v t="$lastus" '$1 == "S" && $2 ~ /^big-/ && $3 <= t' "$log2" | wc -l)
echo "# big-key tasks started meanwhile: $bigs of 50 000" \
  "($(awk -v n="$bigs" -v ms="$last" 'BEGIN { printf "%.0f", (ms > 0 ? n * 1000 / ms : 0) }')/s)"
check "the small keys did not wait behind the big key (under 1000 of its 50 000 first)" \
  [ "$bigs" -lt 1000 ]
check "... and the big key ran meanwhile" [ "$bigs" -ge 1 ]
parked=$(dq stats -q "$q" --json | sed -n 's/.*"parked":\([0-9]*\).*/\1/p')
echo "# parked while the big key drains: $parked"
check "stats --json: the big key's backlog is parked" [ "${parked:-0}" -gt 1000 ]
check "stats says parked" sh -c "'$bin' stats -q '$q' | grep -q '^parked '"
# delayq keys: which key is this backlog (parked and in flight exact)
dq keys -q "$q" --json >"$work/keys.json"
check "keys --json: big first" grep -q '"keys":\[{"key":"big","due":[0-9]*,"parked":[1-9][0-9][0-9][0-9]' "$work/keys.json"
inf=$(sed -n 's/.*"key":"big"[^}]*"inflight":\([0-9]*\).*/\1/p' "$work/keys.json")
check "keys --json: big has at most 2 in flight ($inf)" [ "${inf:-9}" -le 2 ]
check "keys: a table with the big key on top" sh -c "'$bin' keys -q '$q' | sed -n 3p | grep -q ' big\$'"
check "keys -n 0 is exit 2" not dq keys -q "$q" -n 0
for w in 1 2 3 4; do eval "stop_pid \$fair_$w"; done
check "the big key never ran more than 2 at once" [ "$(max_overlap "$log2" '^big-')" -le 2 ]
for k in k0 k42 k99; do
  check "key $k never more than 2 at once" [ "$(max_overlap "$log2" "^$k-")" -le 2 ]
done
check "no small-key task left (all 1000 done)" [ "$(grep -c '^E k' "$log2")" = 1000 ]

# --- 3. reap: a killed worker's keyed task ---------------------------------------------
q=reap
check "config key_concurrency=1" dq config -q "$q" key_concurrency=1
for i in 1 2 3; do dq enqueue -q "$q" --id "r-$i" --key r --json 1 >/dev/null; done
log3="$work/reap.log"
LOG=$log3 NAP=30 spawn "$bin" work -q "$q" -c 4 --lease 1s --name doomed --quiet -- "$work/h.sh"
doomed=$spawned
started() { grep -q '^S r-' "$log3" 2>/dev/null; }
check "the doomed worker started one" wait_for 10000 "a start" started
check "only one of key r runs (the others are parked)" [ "$(grep -c '^S r-' "$log3")" = 1 ]
kill -KILL "$doomed"
stop_pid "$doomed" KILL
# its handler is now an orphan: ended by the pids it wrote
for p in $(cat "$log3.pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
: >"$log3.after"
LOG=$log3.after spawn "$bin" work -q "$q" -c 4 --name heir --quiet -- "$work/h.sh"
heir=$spawned
check "after the reap all three are done" wait_for 20000 "3 done" done_is "$q" 3
check "the heir ran them one at a time" [ "$(max_overlap "$log3.after" '^r-')" = 1 ]
check "the reaped one ran again" grep -q '^S r-' "$log3.after"
check "nothing parked, no counts left" \
  sh -c "[ \"\$('$bin' stats -q '$q' --json | sed -n 's/.*\"parked\":\([0-9]*\).*/\1/p')\" = 0 ]"
stop_pid "$heir"

# --- bad input ----------------------------------------------------------------------------
long=$(printf 'k%.0s' $(seq 1 65))
dq enqueue -q bad --key "$long" --json 1 2>"$work/err.txt"
check "a 65-byte key is exit 2" [ $? = 2 ]
check "... naming the field and the limit" grep -q "key: must be 1..64 bytes" "$work/err.txt"
check "key_concurrency over its range is refused" not dq config -q one key_concurrency=1000001
finish
