#!/bin/sh
# keyed_show.sh: what show and export say of keyed tasks, as a user runs them. show of a
# task enqueued with --unique-for 10s --time-limit 5s says both (and --json has them);
# once it finished and is gone, show says until when its id is refused (exit 1), not a
# bare "not found", and so it does of a finished task kept by done retention; export and import between two servers restore v2 envelopes byte
# for byte: tl and uf, and an extension key this version does not know (kept as
# extensions_b64); a record whose extensions_b64 contradicts its readable members is
# refused, naming the field.
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
q=keyed

# --- show of a scheduled keyed task ---
check "enqueue --unique-for 10s --time-limit 5s" \
  dq enqueue --url "$A" -q "$q" --id k1 --unique-for 10s --time-limit 5s --delay 1h --json '{"a":1}'
dq show --url "$A" -q "$q" k1 >"$work/show.txt"
sed 's/^/# /' "$work/show.txt"
check "show: unique for 10s after it finishes" \
  grep -q '^unique for  *10s after it finishes (its id is refused)$' "$work/show.txt"
check "show: time limit 5s" grep -q '^time limit  *5s$' "$work/show.txt"
check "show --json has unique_for_ms and time_limit_ms" \
  sh -c "'$bin' show --url '$A' -q '$q' --json k1 | grep -q '\"time_limit_ms\":5000,\"unique_for_ms\":10000'"

# --- export/import: v2 envelopes byte for byte ---
# a v2 envelope with tl, uf and a key "zz" no reader knows (a later writer's), due in 2 h
python3 - "$work/ext.bin" <<'PY'
import struct, sys
payload = b'\x81\xa1b\x02'
env = (b'\x9a\x02' + b'\xcf' + struct.pack('>Q', 900) + b'\xa5ext-1' + b'\x00' +
       b'\xcf' + struct.pack('>Q', 1795943040000) + b'\x03' + b'\xc0' +
       b'\xc4' + bytes([len(payload)]) + payload + b'\xc0' +
       b'\x83' + b'\xa2tl' + b'\xcd\x13\x88' + b'\xa2uf' + b'\xcd\x27\x10' + b'\xa2zz' + b'\xa5later')
open(sys.argv[1], 'wb').write(env)
PY
due=$(( $(date +%s) * 1000 + 7200000 ))
redis-cli -p "$a_port" -x zadd "dq:{$q}:sched" "$due" <"$work/ext.bin" >/dev/null
redis-cli -p "$a_port" hset "dq:{$q}:ids" ext-1 "$due:900" >/dev/null
check "export future from A" sh -c "'$bin' export --url '$A' -q '$q' future >'$work/a.jsonl'"
sed 's/^/# /' "$work/a.jsonl"
check "the unknown key travels as extensions_b64" \
  grep -q '"id":"ext-1".*"time_limit_ms":5000,"unique_for_ms":10000,"extensions_b64":"g6J0bM0TiKJ1Zs0nEKJ6eqVsYXRlcg=="' "$work/a.jsonl"
check "k1 (tl and uf only) needs no extensions_b64" \
  sh -c "grep '\"id\":\"k1\"' '$work/a.jsonl' | grep -v -q extensions_b64"
check "import into B" sh -c "'$bin' import --url '$B' -q '$q' <'$work/a.jsonl' >/dev/null"
redis-cli -p "$a_port" zrange "dq:{$q}:sched" 0 -1 >"$work/a.members"
redis-cli -p "$b_port" zrange "dq:{$q}:sched" 0 -1 >"$work/b.members"
check "B holds the same 2 members" [ "$(redis-cli -p "$b_port" zcard "dq:{$q}:sched")" = 2 ]
check "... byte for byte (v2 envelopes restored exactly)" cmp "$work/a.members" "$work/b.members"
check "show on B: unique for 10s" \
  sh -c "'$bin' show --url '$B' -q '$q' ext-1 | grep -q '^unique for  *10s after it finishes'"
# a record that says one thing and carries another
sed 's/"unique_for_ms":10000,"extensions_b64"/"unique_for_ms":9000,"extensions_b64"/' \
  "$work/a.jsonl" >"$work/bad.jsonl"
dq import --url "$B" -q other <"$work/bad.jsonl" >/dev/null 2>"$work/err.txt"
check "a contradicting extensions_b64 is exit 2" [ $? -eq 2 ]
check "... naming the field" grep -q 'extensions_b64: holds time limit 5000 and unique-for 10000 ms' "$work/err.txt"

# --- show of a finished task whose unique-for window is open ---
q=gone
dq enqueue --url "$A" -q "$q" --id u1 --unique-for 1m --json 1 >/dev/null
spawn "$bin" work --url "$A" -q "$q" --name w1 -- true 2>>"$work/w1.log"
finished() { [ "$(redis-cli -p "$a_port" hget "dq:{$q}:stats" done)" = 1 ]; }
check "u1 finished" wait_for 5000 "u1 done" finished
dq show --url "$A" -q "$q" u1 >/dev/null 2>"$work/err.txt"
check "show of it is exit 1" [ $? -eq 1 ]
sed 's/^/# /' "$work/err.txt"
check "... saying until when the id is refused" \
  grep -Eq 'not found in queue gone; it finished within its unique-for window: the id is refused until [0-9T:.-]+Z \([0-9.ms]+ left\)' "$work/err.txt"
dq show --url "$A" -q "$q" nobody >/dev/null 2>"$work/err.txt"
check "an id without a window is a plain not found" \
  sh -c "grep -q 'task nobody: not found in queue gone\$' '$work/err.txt'"

# --- a finished task kept by done retention, its window open: show says until when ---
q=kept
dq config --url "$A" -q "$q" done_retention=10 >/dev/null
dq enqueue --url "$A" -q "$q" --id u2 --unique-for 1m --json 2 >/dev/null
spawn "$bin" work --url "$A" -q "$q" --name w2 -- true 2>>"$work/w2.log"
done_shown() { dq show --url "$A" -q "$q" u2 >"$work/done.txt" 2>&1 && grep -q '^state  *done$' "$work/done.txt"; }
check "u2 finished and is kept" wait_for 5000 "u2 done" done_shown
sed 's/^/# /' "$work/done.txt"
check "show of the done task says until when its id is refused" \
  grep -Eq '^unique until  *[0-9T:.-]+Z \(in [0-9.ms]+\)$' "$work/done.txt"
check "... and --json has unique_until_ms" \
  sh -c "'$bin' show --url '$A' -q '$q' --json u2 | grep -q '\"unique_until_ms\":[0-9]'"
finish
