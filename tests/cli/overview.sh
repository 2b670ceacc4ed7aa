#!/bin/sh
# overview.sh: delayq queues, the all-queues overview, against a real Redis: a failing
# queue, a paused one, an idle one and one with nothing at all listed worst first, each
# with its verdict, sparklines (block characters, ASCII outside UTF-8), live workers and
# P; --json with the per-minute counts the scripts kept; --check exit 1 naming the bad
# queue on stderr, 0 once it is not bad, 3 when Redis is not there; --counts and --names.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
redis_start

cat >"$work/fail.sh" <<'SH'
#!/bin/sh
echo "ValueError: card declined" >&2
exit 1
SH
chmod +x "$work/fail.sh"
dq() { "$bin" "$@"; }
# billing: every task fails for good (12 of them: a ratio is judged from 10 outcomes on),
# its worker stays
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do dq enqueue -q billing --json '{"n":1}' >/dev/null; done
# emails: paused with two due
dq enqueue -q emails --json '{"to":"a"}' >/dev/null
dq enqueue -q emails --json '{"to":"b"}' >/dev/null
dq pause -q emails --for 1h --reason "$(printf 'deploy \033[2J')" >/dev/null
# idle: one live worker, nothing to do
dq config -q idle max_attempts=3 >/dev/null
spawn "$bin" work -q idle --name ov-idle -- true 2>>"$work/worker.log"
# before billing's worker starts nothing is bad (billing: no worker registered, a warning)
dq queues --check >"$work/check.out" 2>&1
rc=$?
check "--check exits 0 while no verdict is bad (got $rc)" [ $rc -eq 0 ]
check "--check says so: $(cat "$work/check.out")" grep -q '^ok: 3 queues, none bad (2 warn)$' "$work/check.out"
spawn "$bin" work -q billing --name ov-billing -- "$work/fail.sh" 2>>"$work/worker.log"
failed12() { dq stats -q billing --json | grep -q '"failed":12,'; }
check "billing's 12 tasks failed" wait_for 20000 "12 failed" failed12
live_idle() { dq workers -q idle 2>/dev/null | grep -q ov-idle; }
check "idle's worker registered" wait_for 10000 "idle worker" live_idle

LC_ALL=C.UTF-8 dq queues >"$work/table.txt" 2>&1
check "queues exits 0" [ $? -eq 0 ]
cat "$work/table.txt"
order=$(awk 'NR > 1 { print $2 }' "$work/table.txt" | tr '\n' ' ')
check "worst first: billing, emails, then the ok ones: $order" \
  [ "$order" = "billing emails idle " ]
check "billing is bad, failing, in the words of stats" \
  grep -q '^bad  billing .* failing 100% over 5m00s' "$work/table.txt"
check "emails is warn, P, paused by whom and why (escaped)" \
  grep -q '^warn emails .* P  paused by .*: deploy \\e\[2J' "$work/table.txt"
check "idle is ok with one live worker" grep -qE '^ok   idle .* 1 +all well$' "$work/table.txt"
check "billing's failed sparkline has a full block" grep -q '^bad  billing.*█' "$work/table.txt"
LC_ALL=C dq queues >"$work/ascii.txt"
check "outside UTF-8 the sparklines are ASCII" sh -c \
  "grep -q '^bad  billing.*@' '$work/ascii.txt' && ! grep -q '█' '$work/ascii.txt'"

dq queues --json >"$work/q.json"
check "--json: one object per queue, worst first, with the tallies" python3 - "$work/q.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["queue"] for r in rows] == ["billing", "emails", "idle"], rows
b, e, i = rows
assert b["verdict"]["level"] == "bad" and b["failed"] == 12, b
assert sum(b["failed_per_min"]) == 12 and len(b["failed_per_min"]) == 10, b
assert sum(b["done_per_min"]) == 0, b
assert b["workers"]["live"] == 1 and b["throttled"] is False, b
assert e["paused"] is True and e["due"] == 2 and e["verdict"]["level"] == "warn", e
assert "\x1b[2J" in e["verdict"]["text"], e
assert i["verdict"] == {"level": "ok", "text": "all well"}, i
assert i["workers"]["live"] == 1 and i["paused"] is False, i
PY

dq queues --check >"$work/check.out" 2>"$work/check.err"
rc=$?
check "--check exits 1 with billing bad (got $rc)" [ $rc -eq 1 ]
check "--check names billing on stderr, only it" sh -c \
  "grep -q 'check failed: queue billing: failing 100%' '$work/check.err' &&
   [ \$(wc -l <'$work/check.err') -eq 1 ] && [ ! -s '$work/check.out' ]"
dq queues --check --url "redis://127.0.0.1:$(free_port)" --timeout 500ms >/dev/null 2>&1
rc=$?
check "--check exits 3 when Redis is not there (got $rc)" [ $rc -eq 3 ]

# the library and scripts gone (a restart, a flush): the pipelined calls load them again
redis-cli -h 127.0.0.1 -p "$redis_port" FUNCTION FLUSH >/dev/null
redis-cli -h 127.0.0.1 -p "$redis_port" SCRIPT FLUSH >/dev/null
check "after FUNCTION FLUSH and SCRIPT FLUSH the overview still lists all three" sh -c \
  "[ \$('$bin' queues --names | wc -l) -eq 3 ] && [ \$('$bin' queues | wc -l) -eq 4 ]"
# a key of the wrong type (a foreign write) spoils its own row, not the others
redis-cli -h 127.0.0.1 -p "$redis_port" SET 'dq:{idle}:tally' x >/dev/null
dq queues >"$work/wrong.txt" 2>&1
rc=$?
check "a WRONGTYPE key: exit 0, that row bad and saying why" sh -c \
  "[ $rc -eq 0 ] && grep -q '^bad  idle .* not read: .*WRONGTYPE' '$work/wrong.txt' &&
   grep -q '^bad  billing ' '$work/wrong.txt' && grep -q '^warn emails ' '$work/wrong.txt'"
dq queues --check >/dev/null 2>"$work/wrong.err"
check "--check names the unreadable queue too" grep -q 'queue idle: not read' "$work/wrong.err"
redis-cli -h 127.0.0.1 -p "$redis_port" DEL 'dq:{idle}:tally' >/dev/null

dq queues --counts >"$work/counts.txt"
check "--counts keeps the table by name" sh -c \
  "head -n 1 '$work/counts.txt' | grep -q '^QUEUE  *DUE  *FUTURE  *IN-FLIGHT  *FAILED$' &&
   grep -qE '^billing +0 +0 +0 +12$' '$work/counts.txt'"
check "--names prints bare names, sorted" sh -c \
  "[ \"\$('$bin' queues --names | tr '\n' ' ')\" = 'billing emails idle ' ]"
dq queues --names --counts >/dev/null 2>&1
check "--names with --counts is a usage error" [ $? -eq 2 ]

# the viewer of docs/SECURITY.md after a restart lost the library: it may load nothing,
# and the overview says so once, exit 1, instead of one "not read" row per queue
acl=$(grep -o 'ACL SETUSER delayq-viewer.*' "$src/docs/SECURITY.md" | head -n 1 | sed 's/CHANGE_ME/viewpw/')
# shellcheck disable=SC2086 # the ACL line's words are redis-cli's arguments
redis-cli -h 127.0.0.1 -p "$redis_port" $acl >/dev/null
check "the viewer reads the overview" sh -c \
  "DELAYQ_PASSWORD=viewpw '$bin' queues --url redis://delayq-viewer@127.0.0.1:$redis_port |
   grep -q '^bad  billing '"
redis-cli -h 127.0.0.1 -p "$redis_port" FUNCTION FLUSH >/dev/null
redis-cli -h 127.0.0.1 -p "$redis_port" SCRIPT FLUSH >/dev/null
DELAYQ_PASSWORD=viewpw dq queues --url "redis://delayq-viewer@127.0.0.1:$redis_port" \
  >"$work/viewer.out" 2>"$work/viewer.err"
rc=$?
check "nothing loaded and the viewer may not load it: exit 1 (got $rc), said once" sh -c \
  "[ $rc -eq 1 ] && [ \$(wc -l <'$work/viewer.err') -eq 1 ] &&
   grep -q 'is not loaded on .* this user may not load it' '$work/viewer.err'"
finish
