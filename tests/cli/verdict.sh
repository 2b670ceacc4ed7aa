#!/bin/sh
# verdict.sh: the verdict sees a failing queue. Failures are counted by the scripts per
# minute of server time (the alert_window_ms window), so a queue failing most of its
# tasks well under 1/s is "failing N% over 5m" on every look, `stats --check` exits 1
# for it and names the largest error group, and a healthy queue stays "all well".
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
redis_start

cat >"$work/handler.sh" <<'SH'
#!/bin/sh
grep -q fail && { echo "ValueError: invoice: currency XAF not supported" >&2; exit 1; }
exit 0
SH
chmod +x "$work/handler.sh"
dq() { "$bin" "$@"; }
q=billing
# 6 of 10 fail for good (60%), spaced by their due times
for i in 0 1 2 3 4 5 6 7 8 9; do
  case $i in 0 | 2 | 4 | 6 | 7 | 9) p='{"k":"fail"}' ;; *) p='{"k":"ok"}' ;; esac
  dq enqueue -q "$q" --delay "$((i * 150))ms" --json "$p" >/dev/null
done
dq enqueue -q healthy --json '{"k":"ok"}' >/dev/null
spawn "$bin" work -q "$q" --name v1 -- "$work/handler.sh" 2>>"$work/worker.log"
ran() { dq stats -q "$q" --json | grep -q '"window":{[^}]*"done":4,"failed":6'; }
check "the 10 tasks ran (6 failed)" wait_for 20000 "10 outcomes" ran
# every look says so, not one refresh in two
for k in 1 2 3 4 5; do
  dq stats -q "$q" --check >"$work/check.out" 2>&1
  rc=$?
  if [ $rc -eq 1 ] && grep -q "failing 60% over 5m00s" "$work/check.out"; then
    ok "look $k: stats --check exits 1: $(head -n 1 "$work/check.out")"
  else
    bad "look $k: stats --check exit $rc: $(cat "$work/check.out")"
  fi
  sleep 0.2
done
check "the verdict names the largest error group" \
  grep -q "100% of failed: 'error: exit #: ValueError: invoice: currency XAF not supported'" "$work/check.out"
dq stats -q "$q" --json >"$work/stats.json"
check "stats --json: the window's counts" python3 - "$work/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
assert w["ms"] == 300000 and w["done"] == 4 and w["failed"] == 6, w
assert d["verdict"]["level"] == "bad", d["verdict"]
PY
# thresholds are the queue's: raised past 60%, the same queue passes
check "config alert_fail_pct=70" dq config -q "$q" alert_fail_pct=70 >/dev/null
check "at 70%, 60% failing passes --check" dq stats -q "$q" --check >/dev/null
check "alert_fail_per_min=1 catches the rate" sh -c \
  "'$bin' config -q '$q' alert_fail_per_min=1 >/dev/null && ! '$bin' stats -q '$q' --check >/dev/null"
finish
