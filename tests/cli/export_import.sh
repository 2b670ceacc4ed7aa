#!/bin/bash
# export_import.sh: delayq export and import between two private redis-servers. Failed
# tasks (with errors, traces, binary, unicode and non-UTF-8 payloads and an undecodable
# entry), due and future tasks: export -> import on the second server -> export gives
# byte-identical files; a second import adds nothing; a bad line in the middle refuses
# its chunk (exit 2, line and field named) and leaves the chunks before it; --requeue;
# limits named. Deadline waits only (tests/eco/lib.sh).
set -u
. "$(dirname "$0")/../eco/lib.sh"
need redis-cli python3
dq() { "$bin" "$@"; }
export DELAYQ_QUEUE=jobs

redis_start
a_pid=$redis_pid a_port=$redis_port A=$DELAYQ_URL
pids="$pids $a_pid"
redis_start
B=$DELAYQ_URL
redis_pid_b=$redis_pid

# --- fill server A: 30 tasks due now that fail, an undecodable member, future tasks ---
for i in $(seq 1 20); do
  dq enqueue --url "$A" --json "{\"n\":$i,\"text\":\"Grüße ✓ $i\",\"f\":1.5}" >/dev/null
done
for i in $(seq 1 5); do
  printf '\x00\x01\xff raw %d' "$i" | dq enqueue --url "$A" --id "bin-$i" - >/dev/null
done
for i in $(seq 1 5); do
  dq enqueue --url "$A" --id "ünï-$i" --max-attempts 3 --deadline 1h --json '{"k":[1,2,{"x":null}]}' >/dev/null
done
redis-cli -p "$a_port" zadd 'dq:{jobs}:sched' 0 "not an envelope $(printf '\xc1\xfe')" >/dev/null
printf '#!/bin/sh\nprintf "bad: \\377 %%s\\n" "$DELAYQ_TASK_ID" >&2\necho "  at step(\\"x\\")" >&2\nexit 1\n' >"$work/fail.sh"
chmod +x "$work/fail.sh"
spawn "$bin" work --url "$A" --concurrency 4 -- "$work/fail.sh"
worker=$spawned
failed_n() { [ "$(redis-cli -p "$a_port" zcard 'dq:{jobs}:failidx')" -ge 31 ]; }
check "31 failed on A (30 tasks + 1 undecodable)" wait_for 60000 "31 failed" failed_n
stop_pid "$worker"
for i in $(seq 1 7); do
  dq enqueue --url "$A" --delay 2d --json "{\"later\":$i}" >/dev/null
done
dq enqueue --url "$A" --delay 1d --id "fut-bin" --file /dev/null >/dev/null
printf '\x93\xc4\x02\x00\xff\xa1a\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00' | dq enqueue --url "$A" --delay 3d - >/dev/null
# str8 for a short string and a float32: JSON would read back other bytes
printf '\x92\xd9\x01a\xca\x3f\xc0\x00\x00' | dq enqueue --url "$A" --delay 3d - >/dev/null
for i in $(seq 1 3); do dq enqueue --url "$A" --json "{\"due\":$i}" >/dev/null; done

# --- export A, import into B, export B: byte-identical ---
for v in failed future due; do
  dq export --url "$A" "$v" >"$work/a-$v.jsonl" 2>"$work/a-$v.err"
  check "export $v exits 0" [ $? -eq 0 ]
done
cp "$work"/a-*.jsonl "${DQ_EXPORT_KEEP:-$work}/" 2>/dev/null
check "31 failed records" [ "$(wc -l <"$work/a-failed.jsonl")" -eq 31 ]
check "10 future records" [ "$(wc -l <"$work/a-future.jsonl")" -eq 10 ]
check "msgpack with bin as JSON" grep -q '"payload":\[{"$base64":"AP8="},"a",1.5\]' "$work/a-future.jsonl"
check "3 due records" [ "$(wc -l <"$work/a-due.jsonl")" -eq 3 ]
check "export says how many" grep -q 'exported 31 tasks (failed of queue jobs)' "$work/a-failed.err"
check "an undecodable entry with its raw bytes" grep -q '"undecodable":true,"raw_base64":"' "$work/a-failed.jsonl"
check "binary payloads in payload_b64" grep -q '"id":"bin-1".*"payload_b64":"AAH/IHJhdyAx"' "$work/a-failed.jsonl"
check "msgpack payloads as JSON" grep -q '"payload":{"n":1,"text":"Grüße ✓ 1","f":1.5}' "$work/a-failed.jsonl"
check "attempt histories exported (failed tasks)" grep -q '"history":\[{"attempt":1,"started_ms":' "$work/a-failed.jsonl"
check "errors kept" grep -q '"error":"exit 1:   at step(\\"x\\")"' "$work/a-failed.jsonl"
check "a non-UTF-8 trace kept as \$str_base64" grep -q '"trace":{"$str_base64":"YmFkOiD/IDEK' "$work/a-failed.jsonl"
check "an empty payload" grep -q '"id":"fut-bin".*"payload_b64":""' "$work/a-future.jsonl"
check "a non-canonical msgpack payload in base64" grep -q '"payload_b64":"ktkBYco/wAAA"' "$work/a-future.jsonl"
cat "$work/a-failed.jsonl" "$work/a-future.jsonl" "$work/a-due.jsonl" >"$work/all.jsonl"
dq import --url "$B" <"$work/all.jsonl" >"$work/imp1.out" 2>&1
check "import exits 0" [ $? -eq 0 ]
check "import reports 43" grep -q 'imported 44 tasks into queue jobs (13 scheduled, 31 failed), skipped 0' "$work/imp1.out"
for v in failed future due; do
  dq export --url "$B" "$v" >"$work/b-$v.jsonl" 2>/dev/null
  check "export $v from B is byte-identical" cmp "$work/a-$v.jsonl" "$work/b-$v.jsonl"
done
check "B's sequence is past the imported ids" [ "$(redis-cli -p "$redis_port" get 'dq:{jobs}:seq')" -ge 40 ]
id=$(dq enqueue --url "$B" --json 1)
check "a new task on B gets a new id" [ "$id" -gt 40 ]
dq drop --url "$B" "$id" >/dev/null

# --- import twice: nothing added, every line reported ---
dq import --url "$B" <"$work/all.jsonl" >"$work/imp2.out" 2>&1
check "second import exits 0" [ $? -eq 0 ]
check "second import adds nothing" grep -q 'imported 0 tasks into queue jobs (0 scheduled, 0 failed), skipped 44 already there' "$work/imp2.out"
check "skips named by line" grep -q '^line 1: skipped .*: already failed in queue jobs$' "$work/imp2.out"
check "a scheduled skip" grep -q '^line 44: skipped .*: already scheduled in queue jobs$' "$work/imp2.out"
dq export --url "$B" failed >"$work/b2-failed.jsonl" 2>/dev/null
check "failed set unchanged by the second import" cmp "$work/a-failed.jsonl" "$work/b2-failed.jsonl"

# --- a bad line in the middle of a chunk refuses that chunk only ---
python3 - "$work/all.jsonl" "$work/bad.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read().splitlines()
out = []
for i in range(2500):                         # chunks of 100 lines: 1..100, 101..200, ...
    out.append(json.dumps({"id": "c-%d" % i, "queue": "jobs", "state": "scheduled",
        "custom_id": True, "seq": 100 + i, "attempt": 0, "max_attempts": 25,
        "enqueued_ms": 1, "deadline_ms": None, "last_error": None,
        "payload": {"i": i}, "due_ms": 4102444800000}, separators=(",", ":")))
out[1550] = out[1550].replace('"attempt":0', '"attempt":"zero"')
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
dq import --url "$B" -q other <"$work/bad.jsonl" >"$work/bad.out" 2>"$work/bad.err"
check "bad line: exit 2" [ $? -eq 2 ]
check "bad line named with its field" grep -q 'line 1551: attempt: must be a whole number 0..1000000' "$work/bad.err"
check "its chunk named" grep -q 'lines 1501..1551 not imported' "$work/bad.err"
check "chunks before it stay" [ "$(redis-cli -p "$redis_port" zcard 'dq:{other}:sched')" -eq 1500 ]
check "the report says what went in" grep -q 'imported 1500 tasks into queue other' "$work/bad.out"
# a limit the script checks, in the middle of a chunk: nothing of it is written
dq config --url "$B" -q small max_payload=8 >/dev/null
printf '%s\n' '{"id":"s-1","state":"scheduled","custom_id":true,"seq":1,"attempt":0,"max_attempts":1,"enqueued_ms":1,"deadline_ms":null,"last_error":null,"payload_b64":"AAAA","due_ms":1}' \
  '{"id":"s-2","state":"scheduled","custom_id":true,"seq":2,"attempt":0,"max_attempts":1,"enqueued_ms":1,"deadline_ms":null,"last_error":null,"payload_b64":"AAAAAAAAAAAAAAAA","due_ms":1}' |
  dq import --url "$B" -q small >/dev/null 2>"$work/lim.err"
check "payload limit: exit 2" [ $? -eq 2 ]
check "payload limit named with the line" grep -q 'line 2: payload: 12 bytes is over the limit of 8 bytes (max_payload)' "$work/lim.err"
check "nothing of that chunk written" [ "$(redis-cli -p "$redis_port" zcard 'dq:{small}:sched')" -eq 0 ]
printf '{"id":"x","state":"failed","custom_id":true,"seq":1,"attempt":0,"max_attempts":1,"enqueued_ms":1,"deadline_ms":null,"last_error":null,"payload":1,"due_ms":null,"failed_ms":5,"reason":"error","error":"e","trace":"","failed_by":"w","colour":1}\n' |
  dq import --url "$B" -q small >/dev/null 2>"$work/unk.err"
check "unknown field: exit 2" [ $? -eq 2 ]
check "unknown field named" grep -q 'line 1: unknown field "colour"' "$work/unk.err"
printf '{"id":"n","state":"scheduled"}\000 hidden\n' | dq import --url "$B" -q small >/dev/null 2>"$work/nul.err"
check "a NUL byte in a line: exit 2" [ $? -eq 2 ] && grep -q 'line 1: json: ' "$work/nul.err"
printf 'not json\n' | dq import --url "$B" -q small >/dev/null 2>"$work/nj.err"
check "not JSON: exit 2 with the line" [ $? -eq 2 ] && grep -q 'line 1: json: ' "$work/nj.err"

# --- export while failures arrive ahead of it: every task once, none twice ---
python3 - "$work/many.jsonl" "$work/new.jsonl" <<'PY'
import json, sys
def rec(i, at):
    return json.dumps({"id": "m-%d" % i, "state": "failed", "custom_id": True, "seq": i + 1,
        "attempt": 1, "max_attempts": 25, "enqueued_ms": 1, "deadline_ms": None,
        "last_error": None, "payload": {"i": i}, "due_ms": None, "failed_ms": at,
        "reason": "error", "error": "e", "trace": "", "failed_by": "w"}, separators=(",", ":"))
open(sys.argv[1], "w").write("".join(rec(i, 1000 + i) + "\n" for i in range(3000)))
# newer than all of them: each lands at the front of the newest-first view
open(sys.argv[2], "w").write("".join(rec(10000 + i, 4102444800000 + i) + "\n" for i in range(400)))
PY
dq import --url "$B" -q moving <"$work/many.jsonl" >/dev/null
(while read -r l; do printf '%s\n' "$l" | "$bin" import --url "$B" -q moving >/dev/null; done <"$work/new.jsonl") &
adder=$!
pids="$pids $adder"
for round in 1 2 3; do
  dq export --url "$B" -q moving failed >"$work/moving-$round.jsonl" 2>>"$work/moving.err"
done
stop_pid "$adder"
check "export under arrivals: the 3000 tasks there from the start, each once per export" \
  [ "$(grep -ho '"id":"m-[0-9]*"' "$work"/moving-*.jsonl | grep -vc '"m-1[0-9][0-9][0-9][0-9]"')" -eq 9000 ]
check "export under arrivals: no task twice in one export" \
  sh -c 'for f in "$1"/moving-*.jsonl; do [ -z "$(grep -o "\"id\":\"m-[0-9]*\"" "$f" | sort | uniq -d)" ] || exit 1; done' _ "$work"
grep -h 'read twice' "$work/moving.err" | sed 's/^/# /'

# --- --requeue: failed go to scheduled with attempts reset; undecodable stay failed ---
dq import --url "$B" -q again --requeue <"$work/a-failed.jsonl" >"$work/rq.out" 2>&1
check "requeue import exits 0" [ $? -eq 0 ]
check "requeue import: 30 scheduled, 1 failed" grep -q 'imported 31 tasks into queue again (30 scheduled, 1 failed)' "$work/rq.out"
dq export --url "$B" -q again due >"$work/rq-due.jsonl" 2>/dev/null
check "requeued with attempt 0 and no deadline" [ "$(grep -c '"attempt":0,.*"deadline_ms":null' "$work/rq-due.jsonl")" -eq 30 ]

# --- --match and --limit ---
dq export --url "$A" failed --match 'bin-' >"$work/m.jsonl" 2>/dev/null
check "--match bin- gives the 5 binary tasks" [ "$(wc -l <"$work/m.jsonl")" -eq 5 ]
read -r gid gcount < <(dq errors --url "$A" --json |
  python3 -c 'import json,sys; g=json.load(sys.stdin)["groups"][0]; print(g["group"], g["count"])')
dq export --url "$A" failed --group "$gid" >"$work/g.jsonl" 2>/dev/null
check "--group gives the $gcount tasks of the largest error group" [ "$(wc -l <"$work/g.jsonl")" -eq "${gcount:-x}" ]
dq export --url "$A" due --group "$gid" >/dev/null 2>&1
check "--group on another view: exit 2" [ $? -eq 2 ]
dq export --url "$A" failed --limit 4 >"$work/l.jsonl" 2>/dev/null
check "--limit 4" [ "$(wc -l <"$work/l.jsonl")" -eq 4 ]
dq export --url "$A" nope >/dev/null 2>&1
check "a bad view: exit 2" [ $? -eq 2 ]

# --- in flight: exported with worker and lease, imported as scheduled ---
dq enqueue --url "$A" -q held --json '{"h":1}' >/dev/null
spawn "$bin" work --url "$A" -q held --name w-1 -- sleep 60
holder=$spawned
held() { [ "$(redis-cli -p "$a_port" zcard 'dq:{held}:inflight')" -eq 1 ]; }
check "a task in flight on A" wait_for 20000 "a task in flight" held
dq export --url "$A" -q held inflight >"$work/if.jsonl" 2>/dev/null
stop_pid "$holder" KILL
check "in flight record has the worker and lease" grep -q '"lease_ms":[0-9]*,"claimed_ms":[0-9]*,"worker":"w-1"}' "$work/if.jsonl"
dq import --url "$B" -q held <"$work/if.jsonl" >"$work/if.out" 2>&1
check "in flight imported as scheduled" grep -q 'imported 1 tasks into queue held (1 scheduled, 0 failed; 1 in flight in the file' "$work/if.out"

# --- history (PROTOCOL.md 4.5): imported with its task, checked entry by entry ---
H='"history":[{"attempt":1,"started_ms":10,"duration_ms":5,"worker":"w-1","outcome":"lease expired","error":""},{"attempt":2,"started_ms":20,"duration_ms":7,"worker":"w-2","outcome":"retry","error":{"$str_base64":"YmFkOiD/"}},{"attempt":3,"started_ms":30,"duration_ms":9,"worker":"w-2","outcome":"fail","error":"boom"}]'
rec() { printf '{"id":"%s","state":"failed","custom_id":true,"seq":%s,"attempt":3,"max_attempts":3,"enqueued_ms":1,"deadline_ms":null,"last_error":"x","payload":1,"due_ms":null,"failed_ms":50,"reason":"error","error":"boom","trace":"","failed_by":"w-2",%s}\n' "$1" "$2" "$3"; }
rec h-1 1 "$H" | dq import --url "$B" -q hist >"$work/h.out" 2>&1
check "history import exits 0" [ $? -eq 0 ]
check "history key written with 3 entries" [ "$(redis-cli -p "$redis_port" llen 'dq:{hist}:hist:c:h-1')" -eq 3 ]
dq show --url "$B" -q hist --json h-1 >"$work/h.json" 2>/dev/null
check "show --json reads the imported history" grep -q '"attempt":2,"started_ms":20,"duration_ms":7,"worker":"w-2","outcome":"retry"' "$work/h.json"
rec h-1 1 "$H" | dq import --url "$B" -q hist >/dev/null 2>&1
check "a skipped task's history is not written again" [ "$(redis-cli -p "$redis_port" llen 'dq:{hist}:hist:c:h-1')" -eq 3 ]
long=$(head -c 1025 /dev/zero | tr '\0' e)
{ rec h-2 2 "$H"; rec h-3 3 "\"history\":[{\"attempt\":1,\"started_ms\":1,\"duration_ms\":1,\"worker\":\"w\",\"outcome\":\"fail\",\"error\":\"$long\"}]"; } |
  dq import --url "$B" -q hist >/dev/null 2>"$work/hb.err"
check "a bad history entry: exit 2" [ $? -eq 2 ]
check "the entry, field and limit named" grep -q 'line 2: history\[1\].error: longer than 1024 bytes' "$work/hb.err"
check "nothing of that chunk written" [ "$(redis-cli -p "$redis_port" exists 'dq:{hist}:hist:c:h-2')" -eq 0 ]
rec h-4 4 '"history":[{"attempt":1,"started_ms":1,"duration_ms":1,"worker":"w","outcome":"gone","error":""}]' |
  dq import --url "$B" -q hist >/dev/null 2>"$work/ho.err"
check "a bad outcome named" grep -q 'line 1: history\[1\].outcome: must be' "$work/ho.err"

# --- NUL bytes: a handler's stderr keeps every byte; export and import keep them ---
dq enqueue --url "$A" -q nulq --json '{"n":1}' >/dev/null
printf '#!/bin/sh\nprintf "first line\\000hidden\\nsecond line\\n" >&2\nexit 1\n' >"$work/nul.sh"
chmod +x "$work/nul.sh"
spawn "$bin" work --url "$A" -q nulq -- "$work/nul.sh"
nul_worker=$spawned
nul_failed() { [ "$(redis-cli -p "$a_port" zcard 'dq:{nulq}:failidx')" -eq 1 ]; }
check "the task of the NUL-writing handler failed" wait_for 20000 "1 failed in nulq" nul_failed
stop_pid "$nul_worker"
dq export --url "$A" -q nulq failed >"$work/nul.jsonl" 2>/dev/null
check "a NUL in stderr: the whole trace kept and exported as \\u0000" \
  grep -qF '"trace":"first line\u0000hidden\nsecond line\n"' "$work/nul.jsonl"
dq show --url "$A" -q nulq 1 >"$work/nul.show" 2>&1
check "show escapes the NUL and shows what follows it" grep -qF 'first line\x00hidden' "$work/nul.show"
# every string field a foreign client may write with NULs: import -> export keeps the bytes
printf '%s\n' '{"id":"z-1","state":"failed","custom_id":true,"seq":1,"attempt":1,"max_attempts":1,"enqueued_ms":1,"deadline_ms":null,"last_error":"l\u0000ast","payload":1,"due_ms":null,"failed_ms":5,"reason":"rea\u0000son","error":"e\u0000rr","trace":"t\u0000race","failed_by":"w\u0000ho"}' >"$work/z.jsonl"
dq import --url "$B" -q nulz <"$work/z.jsonl" >/dev/null 2>"$work/z.err"
check "import of fields with NULs exits 0" [ $? -eq 0 ]
dq export --url "$B" -q nulz failed >"$work/z-out.jsonl" 2>/dev/null
for f in '"last_error":"l\u0000ast"' '"reason":"rea\u0000son"' '"error":"e\u0000rr"' \
  '"trace":"t\u0000race"' '"failed_by":"w\u0000ho"'; do
  check "export keeps $f" grep -qF "$f" "$work/z-out.jsonl"
done
dq ls --url "$B" -q nulz failed >"$work/z.ls" 2>&1
check "ls shows the NUL escaped and what follows it" grep -qF 'rea\x00son: e\x00rr' "$work/z.ls"
dq errors --url "$B" -q nulz >"$work/z.errors" 2>&1
check "errors shows the signature with the NUL escaped" grep -qF 'e\x00rr' "$work/z.errors"
dq errors --url "$B" -q nulz --json >"$work/z.errors.json" 2>&1
check "errors --json keeps the sample error's NUL" grep -qF '"sample_error":"e\u0000rr"' "$work/z.errors.json"

redis_stop
finish
