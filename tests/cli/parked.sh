#!/bin/sh
# parked.sh: what a user sees of a parked task (per-key limits, PROTOCOL.md 4.10: a due
# keyed task held back in dq:{Q}:kq:<key> while its key is at key_concurrency), with a
# real delayq work process holding the key's one slot. show finds a parked task by a
# caller-chosen id and by a generated one and says which key holds it back (--json too);
# ls due says how many are parked and ls parked lists them; export due carries them and
# import into another server brings them back (due again, so a claim parks them anew);
# requeue ID and reschedule ID of one are exit 1 saying where it is; drop ID of one
# deletes it (its ids entry, kpark and the parked gauge exact) and it never runs. A
# generated id deep in the parked tasks is found over the walk's steps.
set -u
here=$(dirname "$0")
. "$here/../eco/lib.sh"
need redis-cli python3
redis_start
A=$DELAYQ_URL a_port=$redis_port
pids="$pids $redis_pid"
redis_start
B=$DELAYQ_URL b_port=$redis_port
dq() { "$bin" "$@"; }
ra() { redis-cli -p "$a_port" "$@"; }
q=pk
log="$work/runs.log"
: >"$log"
# the handler: "S id" at its start; it holds its slot until the file go exists (60 s at
# most: a bounded wait on a condition)
cat >"$work/h.sh" <<EOF
#!/bin/sh
echo "S \$DELAYQ_TASK_ID" >>"$log"
i=0
while [ ! -f "\${GO:-$work/go}" ] && [ \$i -lt 3000 ]; do sleep 0.02; i=\$((i + 1)); done
EOF
chmod +x "$work/h.sh"
export DELAYQ_URL="$A"

check "config key_concurrency=1" dq config -q "$q" key_concurrency=1
for i in 1 2 3 4; do
  dq enqueue -q "$q" --id "p-$i" --key acme --json "{\"n\":$i}" >/dev/null || bad "enqueue p-$i"
done
g1=$(dq enqueue -q "$q" --key acme --json '"g1"')
g2=$(dq enqueue -q "$q" --key acme --json '"g2"')
case "$g1$g2" in *[!0-9]*|'') bad "generated ids: '$g1' '$g2'" ;; esac
dq enqueue -q "$q" --id free-1 --json '"free"' >/dev/null
spawn "$bin" work -q "$q" -c 4 --name holder --quiet -- "$work/h.sh"
holder=$spawned
parked_n() { ra hget "dq:{$q}:stats" parked; }
parked_is() { [ "$(parked_n)" = "$1" ]; }
check "p-1 runs and the other 5 of key acme are parked" wait_for 10000 "5 parked" parked_is 5
check "... the unkeyed task runs beside it" \
  wait_for 10000 "free-1 started" grep -q '^S free-1$' "$log"
check "only p-1 of key acme started" sh -c "[ \$(grep -c '^S p-\\|^S $g1\$\\|^S $g2\$' '$log') -eq 1 ]"

# --- show: a caller-chosen id and a generated one -------------------------------------
dq show -q "$q" p-3 >"$work/show.txt" 2>"$work/err.txt"
rc=$?
sed 's/^/# /' "$work/show.txt" "$work/err.txt"
check "show of a parked caller-chosen id is exit 0" [ $rc -eq 0 ]
check "... saying which key holds it back, at what limit" \
  grep -q '^state  *parked: key acme at its limit of 1 in flight$' "$work/show.txt"
check "... with its key and its payload" \
  sh -c "grep -q '^key  *acme\$' '$work/show.txt' && grep -q '^  n: 3\$' '$work/show.txt'"
dq show -q "$q" --json p-3 >"$work/show.json"
check "show --json: state parked, the key, its in flight and the limit" \
  grep -q '"state":"parked".*"key":"acme","key_inflight":1,"key_concurrency":1' "$work/show.json"
dq show -q "$q" "$g2" >"$work/show2.txt" 2>&1
check "show of a parked generated id finds it too" \
  grep -q '^state  *parked: key acme at its limit of 1 in flight$' "$work/show2.txt"
check "show of an id nowhere is still exit 1" not dq show -q "$q" p-9

# --- ls: due says how many are parked; parked lists them -------------------------------
dq ls -q "$q" due >"$work/due.txt"
sed 's/^/# /' "$work/due.txt"
check "ls due: and 5 parked, and where to look" \
  grep -q '^(and 5 parked: due, held back while their key is at key_concurrency; delayq ls parked, delayq keys)$' "$work/due.txt"
dq ls -q "$q" parked >"$work/parked.txt"
sed 's/^/# /' "$work/parked.txt"
check "ls parked: the 5, each with its key" [ "$(grep -c '\[key acme\]' "$work/parked.txt")" = 5 ]
check "ls parked: p-2 first (due order within the key)" sh -c "sed -n 2p '$work/parked.txt' | grep -q '^p-2 '"
check "ls parked --offset 4: the last one alone" \
  sh -c "'$bin' ls -q '$q' parked --offset 4 --json | grep -c '\"state\":\"parked\"' | grep -qx 1"

# --- export and import: parked tasks travel --------------------------------------------
dq export -q "$q" due >"$work/due.jsonl" 2>"$work/export.err"
sed 's/^/# /' "$work/export.err"
check "export due writes the 5 parked tasks" [ "$(wc -l <"$work/due.jsonl")" = 5 ]
check "... as scheduled records import knows, their key in extensions_b64" \
  sh -c "[ \$(grep -c '\"state\":\"scheduled\".*\"extensions_b64\"' '$work/due.jsonl') = 5 ]"
check "... and says so" grep -q 'exported 5 tasks (due of queue pk, 5 of them parked)' "$work/export.err"
check "import into B" sh -c "'$bin' import --url '$B' -q '$q' <'$work/due.jsonl' >/dev/null"
check "B holds them as due tasks" \
  sh -c "'$bin' stats --url '$B' -q '$q' --json | grep -q '\"due\":5'"
dq show --url "$B" -q "$q" p-3 >"$work/b.txt"
check "show on B: p-3 scheduled, its key kept" \
  sh -c "grep -q '^state  *scheduled\$' '$work/b.txt' && grep -q '^key  *acme\$' '$work/b.txt'"

# --- requeue and drop by id --------------------------------------------------------------
dq requeue -q "$q" p-2 >/dev/null 2>"$work/rq.txt"
rc=$?
sed 's/^/# /' "$work/rq.txt"
check "requeue of a parked task is exit 1" [ $rc -eq 1 ]
check "... saying where it is and why" \
  grep -q 'task p-2 is not failed: it is parked, due and held back while its key acme is at its limit of 1 in flight (key_concurrency); it runs when the key has room (nothing changed)' "$work/rq.txt"
dq reschedule -q "$q" p-4 --delay 1h >/dev/null 2>"$work/rs.txt"
rc=$?
check "reschedule of a parked task is exit 1, saying where it is" \
  sh -c "[ $rc -eq 1 ] && grep -q 'task p-4 is not scheduled: it is parked, due and held back while its key acme is at its limit of 1 in flight' '$work/rs.txt'"
check "... and it is still parked" [ "$(ra zcard "dq:{$q}:kq:acme")" = 5 ]
check "drop p-3 (parked) is exit 0" dq drop -q "$q" p-3
check "drop of a parked generated id" dq drop -q "$q" "$g1"
check "the parked gauge is 3" parked_is 3
check "kpark counts 3 for acme" [ "$(ra zscore "dq:{$q}:kpark" acme)" = 3 ]
check "kq holds 3" [ "$(ra zcard "dq:{$q}:kq:acme")" = 3 ]
check "p-3's ids entry is gone" [ "$(ra hexists "dq:{$q}:ids" p-3)" = 0 ]
check "show p-3 is exit 1 now" not dq show -q "$q" p-3
check "the audit log has the drop" \
  sh -c "'$bin' audit -q '$q' --limit 5 | grep -q 'drop.*-> ok: 1 dropped'"

# --- a generated id deep in the parked tasks: find's walk goes on over its steps ----------
# 1500 generated-id tasks of key big (imported: an export record each, seq 10..1509) and
# 3 of key small; with both keys' one slot held, all but 2 are parked, small's first in
# kpark (fewer). Seq 1409 is past the first step of 1000 members looked at.
q2=deep
check "config key_concurrency=1 ($q2)" dq config -q "$q2" key_concurrency=1
dq enqueue -q tmpl --key big --json '"b"' >/dev/null
dq export -q tmpl due >"$work/tmpl.jsonl" 2>/dev/null
python3 - "$work/tmpl.jsonl" "$work/deep.jsonl" <<'PY'
import json, sys
t = json.loads(open(sys.argv[1]).read())
with open(sys.argv[2], 'w') as f:
    for s in range(10, 1510):
        t['seq'], t['id'] = s, str(s)
        f.write(json.dumps(t, separators=(',', ':')) + '\n')
PY
check "import 1500 keyed tasks with generated ids" \
  sh -c "'$bin' import -q '$q2' <'$work/deep.jsonl' >/dev/null"
for i in 1 2 3; do dq enqueue -q "$q2" --key small --json '"s"' >/dev/null; done
GO=$work/go2 spawn "$bin" work -q "$q2" -c 4 --name deep --quiet -- "$work/h.sh"
deep=$spawned
parked_q2() { [ "$(ra hget "dq:{$q2}:stats" parked)" = 1501 ]; }
check "1501 parked (one of each key runs)" wait_for 20000 "1501 parked" parked_q2
dq show -q "$q2" 1409 >"$work/deep.txt" 2>&1
check "show 1409: found parked past the walk's first step" \
  grep -q '^state  *parked: key big at its limit of 1 in flight$' "$work/deep.txt"
check "show --json 1409: its seq" \
  sh -c "'$bin' show -q '$q2' --json 1409 | grep -q '\"id\":\"1409\",\"state\":\"parked\",\"custom_id\":false,\"seq\":1409,'"
check "ls parked --offset 1500: the last of big" \
  sh -c "'$bin' ls -q '$q2' parked --offset 1500 | sed -n 2p | grep -q '^1509 .*\[key big\]'"
touch "$work/go2"
stop_pid "$deep"

# --- the key frees: the rest run, the dropped ones never ---------------------------------
touch "$work/go"
done_n() { ra hget "dq:{$q}:stats" done; }
check "p-1, free-1 and the 3 still parked all run" wait_for 20000 "5 done" sh -c "[ \"\$(redis-cli -p $a_port hget 'dq:{$q}:stats' done)\" = 5 ]"
check "p-3 never ran" not grep -q '^S p-3$' "$log"
check "the dropped generated one never ran" not grep -q "^S $g1\$" "$log"
check "nothing parked is left" parked_is 0
stop_pid "$holder"
finish
