#!/bin/sh
# since.sh MODE: delayq stats --since against a private redis-server, on the function
# library (MODE plain) or the EVALSHA scripts (evalsha). A scripted incident driven by
# real delayq work processes in the current minute (a healthy run, a handler failing
# until its tasks fail for good, a task expired before it ran, a dropped one, then
# recovery after a bulk requeue) must come back from `stats --since 15m --json` exactly
# as the handlers recorded it; earlier minutes seeded with redis-cli HSET in the
# rollups' format (PROTOCOL.md 13) check the table's rendering, the 5-minute step's
# sums and samples, and a 2-day read in 1440-minute chunks with an hour straddling two
# of them; history_minutes bounds what is read; history off is exit 1 with the way to
# turn it on; bad --since / --step values are exit 2 naming the option and the limit.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli python3
mode=${1:-plain}
case $mode in
evalsha) DELAYQ_SCRIPTS=evalsha && export DELAYQ_SCRIPTS ;;
esac
redis_start
dq() { "$bin" "$@"; }
rc() { redis-cli -p "$redis_port" "$@"; }
q=billing
# (%.0f: mawk's %d stops at 2^31)
srv_ms() { rc TIME | awk 'NR == 1 { s = $1 } NR == 2 { printf "%.0f\n", s * 1000 + int($1 / 1000) }'; }
srv_min() { echo $(($(srv_ms) / 60000)); }
srv_sec() { echo $(($(srv_ms) % 60000 / 1000)); }

# the handler: exits 75 (retry; after the last attempt the task fails) while
# $work/broken exists; logs every run (task, attempt, outcome)
cat >"$work/handler.sh" <<SH
#!/bin/sh
cat >/dev/null
if [ -e "$work/broken" ]; then
  echo "\$DELAYQ_TASK_ID \$DELAYQ_ATTEMPT fail" >>"$work/runs.log"
  echo "ConnectionError: ledger down" >&2
  exit 75
fi
echo "\$DELAYQ_TASK_ID \$DELAYQ_ATTEMPT ok" >>"$work/runs.log"
exit 0
SH
chmod +x "$work/handler.sh"
: >"$work/runs.log"

check "config: retries after 50ms" dq config -q "$q" backoff_base_ms=50 backoff_cap_ms=50 >/dev/null
# the incident fits in one minute of server time when it starts early in one; the
# checks below hold either way (a minute turning splits the counts between two rows)
late() { [ "$(srv_sec)" -lt 35 ]; }
wait_for 30000 "a minute with 25 s left" late || bad "waited for an early second"
m0=$(srv_min)

# a task that expires before any worker claims it (its deadline is 1 ms after due)
dq enqueue -q "$q" --id expires --max-attempts 2 --deadline 1ms --json '{"n":0}' >/dev/null
t_exp=$(mono_ms)
past() { [ $(($(mono_ms) - t_exp)) -ge 20 ]; }
wait_for 1000 "the deadline to pass" past
# a healthy minute's worth: 10 tasks done
for n in 1 2 3 4 5 6 7 8 9 10; do
  dq enqueue -q "$q" --max-attempts 2 --json "{\"n\":$n}" >/dev/null
done
spawn "$bin" work -q "$q" --quiet --concurrency 2 -- "$work/handler.sh" 2>>"$work/work.log"
wpid=$spawned
counter() { dq stats -q "$q" --json | grep -o "\"counters\":{[^}]*" | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }
is() { [ "$(counter "$1")" = "$2" ]; }
check "healthy: 10 done" wait_for 20000 "10 done" is done 10
check "the expired one failed without a run" wait_for 5000 "1 expired" is expired 1
# the handler fails: 6 tasks, each retried once and then failed for good
touch "$work/broken"
for n in 11 12 13 14 15 16; do
  dq enqueue -q "$q" --max-attempts 2 --json "{\"n\":$n}" >/dev/null
done
check "failing: 6 failed after a retry each" wait_for 20000 "6 failed" is failed 6
check "failing: 6 retried" is retried 6
# one scheduled task dropped by an operator
dq enqueue -q "$q" --id later --delay 1h --json '{}' >/dev/null
check "drop the scheduled one" dq drop -q "$q" later >/dev/null
# recovery: the handler works again and the failed set is requeued in bulk
rm -f "$work/broken"
check "bulk requeue" dq requeue -q "$q" --all >/dev/null
check "recovered: 17 done" wait_for 20000 "17 done" is done 17
stop_pid "$wpid"
m1=$(srv_min)
echo "# the incident ran in minutes $m0..$m1"

# what the handlers recorded, and the rollups of minutes m0..m1: equal, exactly
dq stats -q "$q" --since 15m --json >"$work/rows.json"
check "--since 15m --json: exit 0" [ $? -eq 0 ]
check "--since 15m --json: rows equal to what the handlers recorded" python3 - "$work/rows.json" \
  "$work/runs.log" "$m0" "$m1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
runs = [l.split() for l in open(sys.argv[2])]
m0, m1 = int(sys.argv[3]), int(sys.argv[4])
ok = sum(1 for r in runs if r[2] == "ok")
retried = sum(1 for r in runs if r[2] == "fail" and r[1] == "1")
failed_runs = sum(1 for r in runs if r[2] == "fail" and r[1] == "2")
assert (len(runs), ok, retried, failed_runs) == (29, 17, 6, 6), (len(runs), ok, retried, failed_runs)
want = {"enqueued": 18, "started": len(runs), "done": ok, "retried": retried,
        "failed": failed_runs + 1, "expired": 1, "requeued": 7, "dropped": 1, "lost": 0}
assert len(rows) == 15, len(rows)
got = {k: 0 for k in want}
runs_in_hist = 0
for r in rows:
    m = r["at_ms"] // 60000
    assert r["step_ms"] == 60000 and r["at_ms"] % 60000 == 0, r
    inside = m0 <= m <= m1
    for k in want:
        if not inside:
            assert r[k] == 0, (m, k, r[k])
        got[k] += r[k]
    assert len(r["run"]) == 12 and sum(r["run"]) == r["done"] + r["retried"] + r["failed"] - r["expired"], r
    runs_in_hist += sum(r["run"])
    if inside and sum(r["run"]):
        assert r["p50_ms"] is not None and 0 <= r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"], r
    if not inside:
        assert r["backlog"] is None and r["oldest_due_ms"] is None and r["p50_ms"] is None, r
assert got == want, (got, want)
assert runs_in_hist == len(runs), runs_in_hist
# the first call of minute m0 (the expiring task's enqueue) sampled the backlog: itself
first = [r for r in rows if r["at_ms"] // 60000 == m0][0]
assert first["backlog"] == 1 and 0 <= first["oldest_due_ms"] < 1000, first
if m0 == m1:
    print("# one minute: its row holds the whole incident")
PY

# earlier minutes seeded in the rollups' format: 8, 7 and 6 minutes before m0 (5 is
# left empty), then the table's rows, the 5-minute steps and the samples exactly
seed() { key="dq:{$q}:roll:$1"; shift; rc HSET "$key" "$@" >/dev/null; }
s=$((m0 - 8))
seed $s e 120 s 118 d 117 r 1 h4 100 t 7500 b 2 a 15
seed $((s + 1)) e 121 s 60 r 12 f 48 h9 60 t 240000 b 61 a 41000
seed $((s + 2)) e 123456 d 123456 h0 1 h11 5 q 96 l 2 b 0 a 0
hm() { python3 -c "import time; print(time.strftime('%H:%M', time.gmtime($1 * 60)))"; }
dq stats -q "$q" --since 15m >"$work/table.txt"
check "table: exit 0" [ $? -eq 0 ]
sed -n 's/^/# /p' "$work/table.txt"
line() { printf '%-5s %5s %5s %5s %5s %5s %5s %6s %6s %6s %7s %6s\n' "$@"; }
has_line() { grep -qxF "$1" "$work/table.txt" || { echo "# missing: [$1]"; return 1; }; }
check "table: the header says counts per 1m step" grep -q "^queue $q: last 15m, counts per 1m step, to 20..-..-..T..:..:..\....Z$" "$work/table.txt"
check "table: column names" has_line "$(line time enq start done retry fail expir p50 p95 p99 backlog oldest)"
check "table: a healthy minute (p50 75ms, p95 98ms, p99 100ms)" \
  has_line "$(line "$(hm $s)" 120 118 117 1 0 0 75ms 98ms 100ms 2 15ms)"
check "table: a failing minute (runs of 2.5-5 s, backlog growing)" \
  has_line "$(line "$(hm $((s + 1)))" 121 60 0 12 48 0 3.7s 4.8s 4.9s 61 41s)"
check "table: big counts shortened, runs past 10 s" \
  has_line "$(line "$(hm $((s + 2)))" 123k 0 123k 0 0 0 '>10s' '>10s' '>10s' 0 0s)"
check "table: an empty minute is dashes" \
  has_line "$(line "$(hm $((s + 3)))" 0 0 0 0 0 0 - - - - -)"
check "table: the requeued and lost count in the also line" grep -q "^also: requeued 103, dropped 1, leases lost 2$" "$work/table.txt"
check "table: fits 80 columns" awk 'length > 80 { exit 1 }' "$work/table.txt"

dq stats -q "$q" --since 15m --step 5m --json >"$work/steps.json"
check "--step 5m: sums and the latest sample per aligned step" python3 - "$work/steps.json" \
  "$work/rows.json" "$s" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1])]
minutes = {r["at_ms"] // 60000: r for r in (json.loads(l) for l in open(sys.argv[2]))}
s = int(sys.argv[3])
seeded = {s: dict(enqueued=120, started=118, done=117, retried=1, b=2, a=15),
          s + 1: dict(enqueued=121, started=60, retried=12, failed=48, b=61, a=41000),
          s + 2: dict(enqueued=123456, done=123456, requeued=96, lost=2, b=0, a=0)}
keys = ["enqueued", "started", "done", "retried", "failed", "requeued", "lost"]
for st in steps:
    assert st["step_ms"] == 300000 and st["at_ms"] % 300000 == 0, st
    lo = st["at_ms"] // 60000
    ms = range(lo, lo + 5)
    for k in keys:
        want = sum(seeded.get(m, {}).get(k, 0) for m in ms) + \
            sum(minutes[m][k] for m in ms if m in minutes and m not in seeded)
        assert st[k] == want, (lo, k, st[k], want)
    sampled = [m for m in ms if m in seeded or (m in minutes and minutes[m]["backlog"] is not None)]
    if sampled:
        m = max(sampled)
        b = seeded[m]["b"] if m in seeded else minutes[m]["backlog"]
        assert st["backlog"] == b, (lo, st["backlog"], b)
    else:
        assert st["backlog"] is None, st
assert any(st["at_ms"] // 60000 <= s < st["at_ms"] // 60000 + 5 for st in steps)
PY

# 2 days in hour steps: three calls of at most 1440 minutes, the older ones named by
# their last minute; minutes seeded across the boundary of the two newest calls (an
# hour straddling them) and one 2500 minutes back (check() takes $n: not a name here), read only while history_minutes
# keeps it
check "history_minutes=10080" dq config -q "$q" history_minutes=10080 >/dev/null
nm=$(srv_min)
bnd=$((nm - 1440))
for k in 1 2 3 4 5; do seed $((bnd - 3 + k)) e "$k" b "$k" a $((k * 100)); done
seed $((nm - 2500)) e 7 d 7 h1 7 t 49 b 9 a 900
dq stats -q "$q" --since 2d --json >"$work/days.json"
check "--since 2d: exit 0" [ $? -eq 0 ]
dq stats -q "$q" --since 2d >"$work/days.txt"
check "--since 2d: the header says hour steps" grep -q "counts per 1h step" "$work/days.txt"
check "--since 2d: hour rows, the seeded minutes in theirs, the straddling hour merged" \
  python3 - "$work/days.json" "$bnd" "$nm" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
bnd, n = int(sys.argv[2]), int(sys.argv[3])
assert all(r["step_ms"] == 3600000 and r["at_ms"] % 3600000 == 0 for r in rows)
assert 48 <= len(rows) <= 50, len(rows)
by = {r["at_ms"] // 60000: r for r in rows}
seed = {bnd - 3 + k: (k, k, k * 100) for k in range(1, 6)}
seed[n - 2500] = (7, 9, 900)
for h, r in by.items():
    mine = [m for m in seed if h <= m < h + 60]
    if mine:
        assert r["enqueued"] == sum(seed[m][0] for m in mine), (h, r["enqueued"])
        last = max(mine)
        assert (r["backlog"], r["oldest_due_ms"]) == seed[last][1:], (h, r, last)
old = by[(n - 2500) // 60 * 60]
assert old["done"] == 7 and old["run"][1] == 7 and old["run_sum_ms"] == 49, old
assert sum(r["enqueued"] for r in rows) >= 15 + 7 + 18, sum(r["enqueued"] for r in rows)
PY
# other steps over the same 2 days: one a call can take whole (7m), one over a call's
# 1440 (1d: calls of 1440), a prime past it (1447m: calls of 1-minute rows); same sums
tot() { dq stats -q "$q" --since 2d --step "$1" --json | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert all(r["at_ms"] % r["step_ms"] == 0 for r in rows)
print(sum(r["enqueued"] for r in rows), sum(r["done"] for r in rows), sum(sum(r["run"]) for r in rows))'; }
want=$(tot 1h)
for st in 7m 1d 1447m; do
  check "--step $st: the same sums as 1h ($want)" [ "$(tot "$st")" = "$want" ]
done
check "history_minutes=1440" dq config -q "$q" history_minutes=1440 >/dev/null
dq stats -q "$q" --since 2d --json >"$work/day.json"
check "history_minutes 1440: minutes older than a day are not read" python3 - "$work/day.json" "$nm" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
old = [r for r in rows if r["at_ms"] // 60000 == (n - 2500) // 60 * 60][0]
assert old["enqueued"] == 0 and old["backlog"] is None, old
PY
dq stats -q "$q" --since 2d >"$work/day.txt"
check "history_minutes 1440: the table says older steps are empty" \
  grep -qF "(history_minutes keeps 1d: older steps are empty or partial)" "$work/day.txt"

# the script ran read-only on the path this run takes
case $mode in
evalsha) cmd=evalsha_ro ;;
*) cmd=fcall_ro ;;
esac
check "the reads went through $cmd" sh -c "redis-cli -p $redis_port INFO commandstats | grep -q '^cmdstat_$cmd:'"

# history off: exit 1 and the way to turn it on, nothing on stdout
check "history_minutes=0" dq config -q "$q" history_minutes=0 >/dev/null
dq stats -q "$q" --since 5m >"$work/off.out" 2>"$work/off.err"
check "history off: exit 1" [ $? -eq 1 ]
check "history off: says so and how to turn it on" grep -qF \
  "queue $q keeps no history (history_minutes is 0); turn it on with: delayq config -q $q history_minutes=1440" \
  "$work/off.err"
check "history off: nothing on stdout" [ ! -s "$work/off.out" ]
dq stats -q "$q" --since 5m --json >/dev/null 2>&1
check "history off: --json exit 1 too" [ $? -eq 1 ]

# bad values: exit 2 naming the option and the limit
usage() {
  want=$1
  shift
  dq stats -q "$q" "$@" >/dev/null 2>"$work/u.err"
  st=$?
  [ $st -eq 2 ] && grep -qF -- "$want" "$work/u.err" || { echo "# exit $st: $(cat "$work/u.err")"; return 1; }
}
check "--since 8d: over 7d" usage "--since: 8d is not in 1m..7d" --since 8d
check "--since 30s: under 1m" usage "--since: 30s is not in 1m..7d" --since 30s
check "--step 90s: not whole minutes" usage "--step: 90s is not a whole number of minutes (1m..7d)" --since 1h --step 90s
check "--step 0: out of range" usage "--step: 0 is not in 1m..7d" --since 1h --step 0
check "--step without --since" usage "--step needs --since" --step 5m
check "--since with --check" usage "--check and --since exclude each other" --since 5m --check
check "--since without a value" usage "--since" --since
finish
